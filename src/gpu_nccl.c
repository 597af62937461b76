/* gpu_nccl.c: NCCL as the gpu backend measures it beside libdetcoll, on
 * plain buffers (nccl) and with every buffer registered as a symmetric
 * window (nccl_symm, NCCL 2.27+): communicators (rank 0's unique id through
 * the launcher), calls, asynchronous errors, and the output check's
 * tolerance (NCCL's reduction order is not ours). */
#include <string.h>

#include "gpu_impl.h"

#ifdef HAVE_NCCL
/* Relative tolerance per dtype, scaled by the world size, against the sum
 * of the terms' magnitudes. */
static const double gpu_nccl_tol[DC_DTYPE_COUNT] = {
    [DC_DTYPE_BF16] = 1e-2, [DC_DTYPE_FP16] = 1e-2, [DC_DTYPE_FP32] = 1e-5};

static const ncclDataType_t gpu_nccl_types[DC_DTYPE_COUNT] = {
    [DC_DTYPE_BF16] = ncclBfloat16, [DC_DTYPE_FP16] = ncclFloat16, [DC_DTYPE_FP32] = ncclFloat32};

static int nccl_symm(const gpu_impl_ops *ops) { return ops == &gpu_impl_nccl_symm; }

/* 1 if ranks 0 .. world-1 are each on their own GPU. */
static int gpu_distinct(const gpu_backend *b, int world) {
  for (int i = 0; i < world; i++)
    for (int k = 0; k < i; k++)
      if (strcmp(b->busid[i], b->busid[k]) == 0) return 0;
  return 1;
}

static const char *nccl_unsupported_any(const gpu_backend *b, const tune_cfg *c, int symm) {
  if (c->path != DC_PATH_AUTO) return "NCCL has no forced paths";
  if (!gpu_distinct(b, c->world)) return "NCCL needs every rank on its own GPU (virtual ranks: world 1 only)";
  if (symm && !b->symm)
    return b->lops->single_process ? "this NCCL has no symmetric windows (NCCL 2.27+)"
                                   : "NCCL symmetric windows need ncclMemAlloc buffers, and across processes the "
                                     "buffers are cudaMalloc'd for detcoll_reg's IPC windows";
  return NULL;
}

static const char *nccl_unsupported(const gpu_backend *b, const tune_cfg *c) {
  return nccl_unsupported_any(b, c, 0);
}
static const char *nccl_symm_unsupported(const gpu_backend *b, const tune_cfg *c) {
  return nccl_unsupported_any(b, c, 1);
}

/* NCCL communicator `symm` of the world, created on first use: rank 0's
 * unique id goes to the others through the launcher (a failed id fails
 * every rank alike); symm also registers every buffer as a symmetric window.
 * Collective over the world. */
static void nccl_comm(gpu_backend *b, gpu_rank *rs, int world, int symm) {
  if (rs->nccl[symm][world - 1] != NULL) return;
  struct {
    ncclUniqueId id;
    int32_t ok;
  } me, all[DC_MAX_WORLD];
  memset(&me, 0, sizeof(me));
  me.ok = rs->err == tune_ok && (rs->rank != 0 || GPU_NCCL(rs, ncclGetUniqueId(&me.id)));
  if (b->lops->allgather(b->launch, world, rs->rank, &me, all, sizeof(me)) != tune_ok) {
    gpu_fail(rs, tune_err_internal, "allgather of the NCCL id", "launcher failed");
    return;
  }
  for (int p = 0; p < world; p++)
    if (!all[p].ok) {
      gpu_fail(rs, tune_err_nccl, "NCCL setup", "a peer failed first");
      return;
    }
  ncclComm_t comm = NULL;
  if (!GPU_NCCL(rs, ncclCommInitRank(&comm, world, all[0].id, rs->rank))) return;
  rs->nccl[symm][world - 1] = comm;
#ifdef GPU_HAVE_SYMM
  char *bufs[GPU_WIN_COUNT] = {rs->in[0], rs->in[1], rs->out};
  size_t caps[GPU_WIN_COUNT] = {b->in_cap, b->in_cap, b->out_cap};
  for (int i = 0; symm && i < GPU_WIN_COUNT; i++)
    if (!GPU_NCCL(rs, ncclCommWindowRegister(comm, bufs[i], caps[i], &rs->win[world - 1][i],
                                             NCCL_WIN_COLL_SYMMETRIC)))
      return;
#endif
  TUNE_INFO(TUNE_BACKEND, "rank %d: NCCL%s communicator for world %d created", rs->rank,
            symm ? " (symmetric)" : "", world);
}

static void nccl_connect(gpu_backend *b, gpu_rank *rs, int world) { nccl_comm(b, rs, world, 0); }
static void nccl_symm_connect(gpu_backend *b, gpu_rank *rs, int world) { nccl_comm(b, rs, world, 1); }

static int nccl_issue(gpu_rank *rs, const gpu_plan *p, int set) {
  const tune_cfg *c = p->c;
  const char *send = rs->in[set] + c->in_offset;
  char *recv = rs->out + GPU_GUARD + c->out_offset;
  ncclComm_t comm = rs->nccl[nccl_symm(p->ops)][c->world - 1];
  ncclDataType_t t = gpu_nccl_types[c->dtype];
  if (c->op == DC_OP_ALL_GATHER)
    return GPU_NCCL(rs, ncclAllGather(send, recv, p->count, ncclUint8, comm, rs->stream));
  if (c->op == DC_OP_ALL_REDUCE)
    return GPU_NCCL(rs, ncclAllReduce(send, recv, p->count, t, ncclSum, comm, rs->stream));
  return GPU_NCCL(rs, ncclReduceScatter(send, recv, p->count, t, ncclSum, comm, rs->stream));
}

static void nccl_status(gpu_rank *rs, const gpu_plan *p, const int64_t host_ns[2]) {
  (void)host_ns;
  ncclResult_t async = ncclSuccess;
  if (GPU_NCCL(rs, ncclCommGetAsyncError(rs->nccl[nccl_symm(p->ops)][p->c->world - 1], &async)))
    GPU_NCCL(rs, async);
}

static double nccl_tolerance(const tune_cfg *c) { return gpu_nccl_tol[c->dtype] * c->world; }

static void nccl_disconnect_any(gpu_rank *rs, int symm) {
  for (int w = 0; w < DC_MAX_WORLD; w++) {
    if (rs->nccl[symm][w] == NULL) continue;
#ifdef GPU_HAVE_SYMM
    for (int k = 0; symm && k < GPU_WIN_COUNT; k++)
      if (rs->win[w][k]) GPU_NCCL(rs, ncclCommWindowDeregister(rs->nccl[symm][w], rs->win[w][k]));
#endif
    GPU_NCCL(rs, ncclCommDestroy(rs->nccl[symm][w]));
  }
}

static void nccl_disconnect(gpu_backend *b, gpu_rank *rs) {
  (void)b;
  nccl_disconnect_any(rs, 0);
}
static void nccl_symm_disconnect(gpu_backend *b, gpu_rank *rs) {
  (void)b;
  nccl_disconnect_any(rs, 1);
}

#else /* !HAVE_NCCL: the rows exist, and say why they cannot run. */

static const char *nccl_unsupported(const gpu_backend *b, const tune_cfg *c) {
  (void)b, (void)c;
  return "this tune was built without NCCL";
}
#define nccl_symm_unsupported nccl_unsupported
static void nccl_connect(gpu_backend *b, gpu_rank *rs, int world) { (void)b, (void)rs, (void)world; }
#define nccl_symm_connect nccl_connect
static int nccl_issue(gpu_rank *rs, const gpu_plan *p, int set) {
  (void)p, (void)set;
  return gpu_fail(rs, tune_err_internal, "gpu_issue", "NCCL is not built in");
}
static void nccl_status(gpu_rank *rs, const gpu_plan *p, const int64_t host_ns[2]) {
  (void)rs, (void)p, (void)host_ns;
}
static double nccl_tolerance(const tune_cfg *c) {
  (void)c;
  return 0;
}
static void nccl_disconnect(gpu_backend *b, gpu_rank *rs) { (void)b, (void)rs; }
#define nccl_symm_disconnect nccl_disconnect
#endif

/* NCCL takes no path of ours. */
static dc_path nccl_chosen(gpu_rank *rs, const gpu_plan *p, dc_mode mode) {
  (void)rs, (void)p, (void)mode;
  return DC_PATH_AUTO;
}

const gpu_impl_ops gpu_impl_nccl = {
    .name = "nccl",
    .unsupported = nccl_unsupported,
    .connect = nccl_connect,
    .issue = nccl_issue,
    .status = nccl_status,
    .chosen = nccl_chosen,
    .tolerance = nccl_tolerance,
    .disconnect = nccl_disconnect,
};

const gpu_impl_ops gpu_impl_nccl_symm = {
    .name = "nccl_symm",
    .unsupported = nccl_symm_unsupported,
    .connect = nccl_symm_connect,
    .issue = nccl_issue,
    .status = nccl_status,
    .chosen = nccl_chosen,
    .tolerance = nccl_tolerance,
    .disconnect = nccl_symm_disconnect,
};
