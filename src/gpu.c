/* gpu.c: the gpu backend: measures libdetcoll, and NCCL beside it, on real
 * devices, per DESIGN.md's measurement method.
 *
 * Ranks run on a launcher (launch.h): pinned threads of this process, or one
 * process each under mpirun. Everything a rank does runs on its own host
 * thread, on its own non-blocking stream; the engine's thread only creates
 * in-process detcoll groups (dc_comm_create_local wants every rank at once)
 * and hands work to the ranks.
 *
 * A measure() call, on every rank of the configurations' world:
 *   1. communicators for that world, created on first use and cached:
 *      detcoll (staging for max_bytes per rank), a second detcoll comm with
 *      every buffer registered as a window (detcoll_reg: dc_register_local
 *      from the engine's thread, or dc_register_ipc on each rank), NCCL, and
 *      NCCL with every buffer registered as a symmetric window (nccl_symm);
 *      windows cover whole allocations, calls pass base + offset;
 *   2. inputs: two seeded sets (A, B) of the dtype, generated on the device
 *      (fold.h's streams, gpu_fold.cu) and kept until a reduction of
 *      another dtype comes (all_gather copies whatever
 *      bytes are there); trial t reads set t % 2, so a path that reads
 *      stale data, or skips writing, gives the other set's answer;
 *   3. graph mode: per configuration and set, a graph of graph_calls calls
 *      captured on the rank's own stream (cached);
 *   4. warm-up trials (first call of a configuration only), then the trials:
 *      each runs every configuration once, in a seeded order that the next
 *      trial reverses (gpu_trial_order: detcoll and NCCL take turns to go
 *      first); each run is CPU barrier -> [skew delay] ->
 *      event A -> call or graph -> event B -> CPU barrier -> wait for B;
 *   5. after its run in the last trial, each configuration's output is
 *      checked whole on every rank against the reference fold (fold.h, run
 *      on the GPU by gpu_fold.cu): bitwise for detcoll, within a tolerance
 *      for NCCL; guard bytes included;
 *   6. every rank's samples go to every process (launcher allgather), so
 *      the engine's decisions are the same everywhere.
 *
 * Failures inside a rank are sticky (gpu_rank.err, with a tune_error naming
 * the call): the rank skips its GPU work but keeps every barrier and
 * allgather, so its peers never wait on a rank that gave up; the failure
 * travels with the samples and every process returns it. A detcoll peer
 * waiting inside a kernel for the failed rank is freed by the watchdog. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "config.h"
#include "fold.h"
#include "launch.h"
#include "topo.h"

#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>

#include "detcoll.h"
#include "gpu_fold.h"
#endif
#ifdef HAVE_NCCL
#include <nccl.h>
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
#define GPU_HAVE_SYMM 1
#endif
#endif
#ifdef HAVE_MPI
#include <mpi.h>
#endif

static const char no_gpu_hint[] =
    "to rehearse the whole pipeline without a GPU, run: ./tune --backend sim --gpus 8";

#ifdef HAVE_CUDA

/* Fault injection for the tests: the rank that skips its first eager detcoll
 * call in a world of two or more, once per process, so that its peers'
 * watchdogs fire as when CUDA holds a rank's kernel back (gpu_retry_watchdog). */
TUNE_PARAM(MissingRank, "MISSING_RANK", -1, -1, 1023);

enum {
  GPU_GUARD = 64,       /* poisoned bytes before and after every output */
  GPU_PATTERN = 0xA5,   /* the poison */
  GPU_MAX_OFFSET = 256, /* largest in/out offset, bytes */
  GPU_MAX_NC = 8,       /* configurations measured together */
  GPU_GRAPHS = 8,       /* captured configurations kept per rank */
  GPU_BUSID = 32,
};

/* NCCL's reduction order is not ours: relative tolerance per dtype, scaled
 * by the world size, against the sum of the terms' magnitudes. */
static const double gpu_nccl_tol[DC_DTYPE_COUNT] = {
    [DC_DTYPE_BF16] = 1e-2, [DC_DTYPE_FP16] = 1e-2, [DC_DTYPE_FP32] = 1e-5};

typedef enum { GPU_DETCOLL, GPU_DETCOLL_REG, GPU_NCCL, GPU_NCCL_SYMM, GPU_IMPL_COUNT } gpu_impl;
static const char *const gpu_impl_names[GPU_IMPL_COUNT] = {"detcoll", "detcoll_reg", "nccl",
                                                           "nccl_symm"};

/* libdetcoll, on plain or on registered buffers. */
static int gpu_is_dc(gpu_impl impl) { return impl == GPU_DETCOLL || impl == GPU_DETCOLL_REG; }

/* The buffers a window is registered on (detcoll_reg, nccl_symm): inputs
 * A, B, output. */
enum { GPU_WIN_COUNT = 3 };

/* One configuration of a measure() call, with its call's sizes. */
typedef struct {
  const tune_cfg *c;
  gpu_impl impl;
  int prev;     /* detcoll_prev, detcoll_reg_prev: auto dispatch from the previous table */
  size_t count; /* the call's count: all_gather bytes, all_reduce count, reduce_scatter recvcount */
  size_t out_bytes; /* one rank's output */
  size_t out_esize; /* all_gather 1 (bytes), else the dtype size */
} gpu_plan;

/* A captured configuration: one graph per input set. */
typedef struct {
  int used;
  gpu_impl impl;
  int prev;     /* captured under the previous table */
  tune_cfg key; /* impl pointer unused: impl and prev above */
  cudaGraphExec_t exec[2];
  uint64_t last_use;
} gpu_graph;

typedef struct {
  int rank, device;
  char busid[GPU_BUSID];
  cudaStream_t stream;
  cudaEvent_t ev_a, ev_b;
  char *in[2], *out;        /* inputs A/B and the output with its guards */
  int nccl_mem;             /* the buffers came from ncclMemAlloc */
  uint64_t *d_delay;        /* the skew kernel's measured delay */
  unsigned long long *d_check; /* the output check's counts */
  int loaded;               /* dtype of the inputs on the device; -1 none */
  dc_comm dc[2][DC_MAX_WORLD]; /* [registered][world - 1] */
  int dc_prev[2][DC_MAX_WORLD]; /* the comm holds the previous table, not the current one */
#ifdef HAVE_NCCL
  ncclComm_t nccl[2][DC_MAX_WORLD]; /* [symm][world - 1] */
#ifdef GPU_HAVE_SYMM
  ncclWindow_t win[DC_MAX_WORLD][GPU_WIN_COUNT];
#endif
#endif
  gpu_graph graphs[GPU_GRAPHS];
  uint64_t clock;
  int skip_once;   /* fault injection: skip the next eligible call (TUNE_MISSING_RANK) */
  tune_result err; /* sticky: the first failure of the current job */
} gpu_rank;

typedef struct {
  tune_backend base;
  const tune_launcher_ops *lops;
  tune_launcher *launch;
  tune_topo *topo;
  int ranks, first_local, nlocal;
  int ndev;                            /* CUDA devices this process sees */
  char busid[DC_MAX_WORLD][GPU_BUSID]; /* every rank's GPU */
  gpu_rank *local;                     /* [nlocal] */
  uint64_t seed;
  uint64_t max_bytes;
  int graph_calls;
  size_t in_cap, out_cap;
  int data_dtype; /* the dtype the inputs hold; decided alike in every process */
  int symm;       /* every rank can run nccl_symm */
  int virtual_ranks;
  dc_threshold_row *table; /* auto dispatch's, once set_table gave one; NULL: the default */
  size_t ntable;
  dc_threshold_row *prev; /* the previous table (detcoll_prev, detcoll_reg_prev); NULL: none */
  size_t nprev;
  tune_machine mach;
} gpu_backend;

/* One measure() call as the ranks see it. Rank blocks are int64 words:
 * [status, chosen[nc], wrong[nc], elapsed[nc][trials], delay[nc][trials]]. */
typedef struct {
  gpu_backend *b;
  gpu_plan plan[GPU_MAX_NC];
  int nc, world, first_trial, trials, warmup;
  dc_mode mode;
  size_t words;
  int64_t **send, **recv; /* [nlocal]: this rank's block; every rank's blocks */
} gpu_job;

/* ---- sticky failures ------------------------------------------------------ */

static int gpu_fail(gpu_rank *rs, tune_result r, const char *call, const char *why) {
  if (rs->err == tune_ok) {
    tune_error("rank %d (GPU %d): %s: %s", rs->rank, rs->device, call, why);
    rs->err = r;
  }
  return 0;
}

static int gpu_cuda_ok(gpu_rank *rs, cudaError_t e, const char *call) {
  return e == cudaSuccess ? 1 : gpu_fail(rs, tune_err_cuda, call, cudaGetErrorString(e));
}

static int gpu_dc_ok(gpu_rank *rs, dc_comm comm, dc_result r, const char *call) {
  if (r == dc_ok) return 1;
  char why[512];
  const char *detail = comm ? dc_comm_last_error(comm) : "";
  snprintf(why, sizeof(why), "%s%s%s", dc_result_str(r), *detail ? ": " : "", detail);
  return gpu_fail(rs, tune_err_detcoll, call, why);
}

#define GPU_CUDA(rs, call) gpu_cuda_ok((rs), (call), #call)
#define GPU_DC(rs, comm, call) gpu_dc_ok((rs), (comm), (call), #call)

#ifdef HAVE_NCCL
static int gpu_nccl_ok(gpu_rank *rs, ncclResult_t r, const char *call) {
  return r == ncclSuccess ? 1 : gpu_fail(rs, tune_err_nccl, call, ncclGetErrorString(r));
}
#define GPU_NCCL(rs, call) gpu_nccl_ok((rs), (call), #call)
#endif

/* ---- configurations ------------------------------------------------------- */

/* The impl named s (a *_prev name: its detcoll impl, *prev set), or -1. */
static int gpu_impl_parse(const char *s, int *prev) {
  const tune_impl *im = tune_impl_find(s);
  *prev = im && im->previous;
  if (*prev) return im->registered ? GPU_DETCOLL_REG : GPU_DETCOLL;
  for (int i = 0; i < GPU_IMPL_COUNT; i++)
    if (s && strcmp(s, gpu_impl_names[i]) == 0) return i;
  return -1;
}

#ifdef HAVE_NCCL
/* 1 if ranks 0 .. world-1 are each on their own GPU. */
static int gpu_distinct(const gpu_backend *b, int world) {
  for (int i = 0; i < world; i++)
    for (int k = 0; k < i; k++)
      if (strcmp(b->busid[i], b->busid[k]) == 0) return 0;
  return 1;
}
#endif

/* Why c cannot be measured here (a message), or NULL. */
static const char *gpu_unsupported(const gpu_backend *b, const tune_cfg *c) {
  int prev, impl = gpu_impl_parse(c->impl, &prev);
  if (impl < 0) return "unknown impl (detcoll, detcoll_reg, nccl or nccl_symm)";
  if (prev && b->prev == NULL) return "no previous threshold table was given (set_table)";
  if ((unsigned)c->op >= DC_OP_COUNT || (unsigned)c->dtype >= DC_DTYPE_COUNT ||
      (unsigned)c->mode >= DC_MODE_COUNT)
    return "bad op, dtype or mode";
  if (c->world < 1 || c->world > b->ranks) return "world larger than the ranks running";
  if (c->in_offset < 0 || c->out_offset < 0 || c->in_offset >= GPU_MAX_OFFSET ||
      c->out_offset >= GPU_MAX_OFFSET)
    return "offset out of range (0..255)";
  size_t es = dc_dtype_size(c->dtype);
  if (c->op != DC_OP_ALL_GATHER && ((size_t)c->in_offset % es || (size_t)c->out_offset % es))
    return "reductions need offsets that are multiples of the element size";
  if (c->skew_rank < -2 || c->skew_rank >= c->world) return "skew rank out of range";
  if (gpu_is_dc((gpu_impl)impl)) {
    const char *why = tune_cfg_path_unsupported(c);
    if (why) return why;
    return c->world <= DC_MAX_WORLD ? NULL : "world larger than DC_MAX_WORLD";
  }
  if (c->path != DC_PATH_AUTO) return "NCCL has no forced paths";
#ifdef HAVE_NCCL
  if (!gpu_distinct(b, c->world))
    return "NCCL needs every rank on its own GPU (virtual ranks: world 1 only)";
  if (impl == GPU_NCCL_SYMM && !b->symm) return "this NCCL has no symmetric windows (NCCL 2.27+)";
  return NULL;
#else
  return "this tune was built without NCCL";
#endif
}

static int gpu_supports(tune_backend *be, const tune_cfg *c) {
  return gpu_unsupported((const gpu_backend *)be, c) == NULL;
}

/* The call's sizes; a message and tune_err_arg for sizes the op cannot take. */
static tune_result gpu_plan_cfg(const gpu_backend *b, const tune_cfg *c, gpu_plan *p) {
  const char *why = gpu_unsupported(b, c);
  if (why != NULL) {
    tune_error("gpu backend: cannot measure %s %s %s world %d: %s", c->impl ? c->impl : "(null)",
               dc_op_name(c->op) ? dc_op_name(c->op) : "?",
               dc_path_name(c->path) ? dc_path_name(c->path) : "?", c->world, why);
    return tune_err_arg;
  }
  size_t es = dc_dtype_size(c->dtype), w = (size_t)c->world;
  p->c = c;
  p->impl = (gpu_impl)gpu_impl_parse(c->impl, &p->prev);
  if (c->bytes == 0 || c->bytes > b->max_bytes) {
    tune_error("gpu backend: %" PRIu64 " bytes per rank is outside 1 .. max_bytes %" PRIu64,
               c->bytes, b->max_bytes);
    return tune_err_arg;
  }
  int bad = c->op == DC_OP_ALL_REDUCE       ? c->bytes % es != 0
            : c->op == DC_OP_REDUCE_SCATTER ? c->bytes % (es * w) != 0
                                            : 0;
  if (bad) {
    tune_error("gpu backend: %s of %s: %" PRIu64 " bytes per rank is not a whole number of %s",
               dc_op_name(c->op), dc_dtype_name(c->dtype), c->bytes,
               c->op == DC_OP_ALL_REDUCE ? "elements" : "elements per rank");
    return tune_err_arg;
  }
  p->out_esize = c->op == DC_OP_ALL_GATHER ? 1 : es;
  p->count = c->op == DC_OP_ALL_GATHER   ? c->bytes
             : c->op == DC_OP_ALL_REDUCE ? c->bytes / es
                                         : c->bytes / es / w;
  p->out_bytes = c->op == DC_OP_ALL_GATHER ? c->bytes * w : p->count * es;
  return tune_ok;
}

/* The rank delayed in this trial, or -1. skew_rank -2 draws one per trial
 * from the seed, the same on every rank and for every configuration of the
 * trial. */
static int gpu_skewed_rank(const gpu_backend *b, const tune_cfg *c, int trial) {
  if (c->skew_ns <= 0 || c->skew_rank == -1) return -1;
  if (c->skew_rank >= 0) return c->skew_rank;
  tune_rng rng;
  tune_rng_seed(&rng, b->seed ^ ((uint64_t)c->op << 56) ^ ((uint64_t)c->dtype << 48) ^
                          (c->bytes << 8) ^ (uint64_t)(uint32_t)trial);
  return (int)(tune_rng_next(&rng) % (uint64_t)c->world);
}

/* ---- rank setup ------------------------------------------------------------- */

static gpu_rank *gpu_local(gpu_backend *b, int rank) { return &b->local[rank - b->first_local]; }

/* Device buffers: from ncclMemAlloc where symmetric windows may be
 * registered on them, else cudaMalloc. */
static void gpu_alloc(gpu_backend *b, gpu_rank *rs) {
  size_t caps[GPU_WIN_COUNT] = {b->in_cap, b->in_cap, b->out_cap};
  char **bufs[GPU_WIN_COUNT] = {&rs->in[0], &rs->in[1], &rs->out};
#ifdef GPU_HAVE_SYMM
  int v = 0;
  rs->nccl_mem = ncclGetVersion(&v) == ncclSuccess && v >= NCCL_VERSION(2, 27, 0);
#endif
  for (int i = 0; i < GPU_WIN_COUNT && rs->err == tune_ok; i++) {
#ifdef HAVE_NCCL
    if (rs->nccl_mem) {
      GPU_NCCL(rs, ncclMemAlloc((void **)bufs[i], caps[i]));
      continue;
    }
#endif
    GPU_CUDA(rs, cudaMalloc((void **)bufs[i], caps[i]));
  }
}

/* What every rank tells the others at open. */
typedef struct {
  char busid[GPU_BUSID];
  int32_t symm, status;
} gpu_hello;

static tune_result gpu_rank_open(void *ctx, int rank) {
  gpu_backend *b = ctx;
  gpu_rank *rs = gpu_local(b, rank);
  gpu_hello me = {{0}, 0, 0}, all[DC_MAX_WORLD];
  if (GPU_CUDA(rs, cudaSetDevice(rs->device)) &&
      GPU_CUDA(rs, cudaDeviceGetPCIBusId(rs->busid, GPU_BUSID, rs->device))) {
    tune_topo_pin_thread(b->topo, rs->busid, rank);
    if (GPU_CUDA(rs, cudaEventCreate(&rs->ev_a)) && GPU_CUDA(rs, cudaEventCreate(&rs->ev_b)) &&
        GPU_CUDA(rs, cudaMalloc((void **)&rs->d_delay, sizeof(uint64_t))) &&
        GPU_CUDA(rs,
                 cudaMalloc((void **)&rs->d_check, TUNE_GPU_CHECK_WORDS * sizeof(*rs->d_check))) &&
        GPU_CUDA(rs, tune_gpu_fold_preload()))
      gpu_alloc(b, rs);
  }
  memcpy(me.busid, rs->busid, GPU_BUSID);
  me.symm = rs->nccl_mem;
  me.status = rs->err;
  tune_result r = b->lops->allgather(b->launch, b->ranks, rank, &me, all, sizeof(me));
  if (r != tune_ok) return r;
  if (rank == b->first_local) {
    b->symm = 1;
    for (int p = 0; p < b->ranks; p++) {
      memcpy(b->busid[p], all[p].busid, GPU_BUSID);
      b->busid[p][GPU_BUSID - 1] = '\0';
      b->symm &= all[p].symm != 0;
    }
  }
  for (int p = 0; p < b->ranks; p++)
    if (all[p].status != tune_ok) return (tune_result)all[p].status;
  return tune_ok;
}

/* ---- communicators -------------------------------------------------------- */

typedef struct {
  gpu_backend *b;
  int world, rank;
} gpu_exchange_ctx;

/* dc_comm_create_ipc's exchange: the launcher's allgather among the world. */
static int gpu_exchange(const void *send, void *recv, size_t bytes, void *ctx) {
  gpu_exchange_ctx *x = ctx;
  return x->b->lops->allgather(x->b->launch, x->world, x->rank, send, recv, bytes) != tune_ok;
}

static dc_config gpu_dc_config(const gpu_backend *b) {
  dc_config cfg = {0};
  cfg.staging_bytes = (size_t)((b->max_bytes + 4095) / 4096 * 4096);
  return cfg;
}

/* In-process groups are created by the engine's thread, every rank at once;
 * reg: a second group whose windows are every rank's buffers. */
static tune_result gpu_local_dc_comms(gpu_backend *b, int world, int reg) {
  if (b->local[0].dc[reg][world - 1] != NULL) return tune_ok;
  int devs[DC_MAX_WORLD] = {0};
  dc_comm comms[DC_MAX_WORLD];
  for (int r = 0; r < world; r++) devs[r] = b->local[r].device;
  dc_config cfg = gpu_dc_config(b);
  dc_result res = dc_comm_create_local(world, devs, &cfg, comms);
  if (res != dc_ok) {
    tune_error("dc_comm_create_local (world %d): %s (set DC_DEBUG=1 for details)", world,
               dc_result_str(res));
    return tune_err_detcoll;
  }
  for (int i = 0; reg && i < GPU_WIN_COUNT && res == dc_ok; i++) {
    void *ptrs[DC_MAX_WORLD];
    for (int r = 0; r < world; r++) ptrs[r] = i < 2 ? b->local[r].in[i] : b->local[r].out;
    res = dc_register_local(world, comms, ptrs, i < 2 ? b->in_cap : b->out_cap);
    if (res != dc_ok)
      tune_error("dc_register_local (world %d, buffer %d): %s: %s", world, i, dc_result_str(res),
                 dc_comm_last_error(comms[0]));
  }
  if (res != dc_ok) {
    for (int r = 0; r < world; r++) dc_comm_destroy(comms[r]);
    return tune_err_detcoll;
  }
  for (int r = 0; r < world && res == dc_ok && b->table; r++) {
    res = dc_comm_set_table(comms[r], b->table, b->ntable);
    if (res != dc_ok) tune_error("dc_comm_set_table: %s", dc_comm_last_error(comms[r]));
  }
  if (res != dc_ok) {
    for (int r = 0; r < world; r++) dc_comm_destroy(comms[r]);
    return tune_err_detcoll;
  }
  for (int r = 0; r < world; r++) {
    b->local[r].dc[reg][world - 1] = comms[r];
    b->local[r].dc_prev[reg][world - 1] = 0;
  }
  TUNE_INFO(TUNE_BACKEND, "detcoll%s communicators for world %d created",
            reg ? " (registered)" : "", world);
  return tune_ok;
}

/* Across processes every rank creates its own, collectively, and (reg)
 * registers its buffers with it, collectively too. */
static void gpu_ipc_dc_comm(gpu_backend *b, gpu_rank *rs, int world, int reg) {
  if (rs->dc[reg][world - 1] != NULL) return;
  gpu_exchange_ctx x = {b, world, rs->rank};
  dc_config cfg = gpu_dc_config(b);
  dc_comm comm = NULL;
  if (!GPU_DC(rs, NULL,
              dc_comm_create_ipc(rs->rank, world, rs->device, &cfg, gpu_exchange, &x, &comm)))
    return;
  rs->dc[reg][world - 1] = comm;
  rs->dc_prev[reg][world - 1] = 0;
  if (b->table && !GPU_DC(rs, comm, dc_comm_set_table(comm, b->table, b->ntable))) return;
  char *bufs[GPU_WIN_COUNT] = {rs->in[0], rs->in[1], rs->out};
  size_t caps[GPU_WIN_COUNT] = {b->in_cap, b->in_cap, b->out_cap};
  for (int i = 0; reg && i < GPU_WIN_COUNT; i++)
    if (!GPU_DC(rs, comm, dc_register_ipc(comm, bufs[i], caps[i], gpu_exchange, &x))) return;
}

#ifdef HAVE_NCCL
/* NCCL communicator `symm` of the world, created on first use: rank 0's
 * unique id goes to the others through the launcher (a failed id fails
 * every rank alike); symm also registers every buffer as a symmetric window.
 * Collective over the world. */
static void gpu_nccl_comm(gpu_backend *b, gpu_rank *rs, int world, int symm) {
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

static const ncclDataType_t gpu_nccl_types[DC_DTYPE_COUNT] = {
    [DC_DTYPE_BF16] = ncclBfloat16, [DC_DTYPE_FP16] = ncclFloat16, [DC_DTYPE_FP32] = ncclFloat32};
#endif

/* ---- inputs ----------------------------------------------------------------- */

/* Both input sets of the backend's data dtype on this rank's device,
 * generated there. */
static void gpu_load_inputs(gpu_backend *b, gpu_rank *rs) {
  dc_dtype t = (dc_dtype)b->data_dtype;
  if (rs->loaded == b->data_dtype) return;
  for (int set = 0; set < 2 && rs->err == tune_ok; set++)
    GPU_CUDA(rs, tune_gpu_fill(t, tune_fold_key(b->seed, t, rs->rank, set), rs->in[set],
                               b->in_cap / dc_dtype_size(t), rs->stream));
  if (rs->err == tune_ok) rs->loaded = b->data_dtype;
}

/* ---- calls and graphs ------------------------------------------------------- */

/* Auto dispatch of p reads the table its impl asks for: the comm takes the
 * previous or the current table where it holds the other one (a checked
 * copy, outside any timed region), and looks the call's row up at once
 * (dc_query_path), so the timed call finds it cached like any other. The
 * after pass alternates the two tables' configurations within each trial. */
static int gpu_use_table(gpu_backend *b, gpu_rank *rs, const gpu_plan *p) {
  const tune_cfg *c = p->c;
  const int reg = p->impl == GPU_DETCOLL_REG, w = c->world - 1;
  dc_path chosen;
  if (!gpu_is_dc(p->impl) || c->path != DC_PATH_AUTO || rs->dc_prev[reg][w] == p->prev) return 1;
  dc_comm comm = rs->dc[reg][w];
  if (!GPU_DC(
          rs, comm,
          dc_comm_set_table(comm, p->prev ? b->prev : b->table, p->prev ? b->nprev : b->ntable)))
    return 0;
  rs->dc_prev[reg][w] = p->prev;
  return GPU_DC(rs, comm,
                dc_query_path(comm, c->op, c->dtype, rs->in[0] + c->in_offset,
                              rs->out + GPU_GUARD + c->out_offset, c->bytes, c->mode, &chosen));
}

/* One call of p on this rank's stream (eager, or into a capture). */
static int gpu_issue(gpu_rank *rs, const gpu_plan *p, int set) {
  const tune_cfg *c = p->c;
  const char *send = rs->in[set] + c->in_offset;
  char *recv = rs->out + GPU_GUARD + c->out_offset;
  if (gpu_is_dc(p->impl)) {
    dc_comm comm = rs->dc[p->impl == GPU_DETCOLL_REG][c->world - 1];
    if (c->op == DC_OP_ALL_GATHER)
      return GPU_DC(rs, comm, dc_all_gather(comm, send, recv, p->count, c->path, rs->stream));
    if (c->op == DC_OP_ALL_REDUCE)
      return GPU_DC(rs, comm,
                    dc_all_reduce(comm, send, recv, p->count, c->dtype, c->path, rs->stream));
    return GPU_DC(rs, comm,
                  dc_reduce_scatter(comm, send, recv, p->count, c->dtype, c->path, rs->stream));
  }
#ifdef HAVE_NCCL
  ncclComm_t comm = rs->nccl[p->impl == GPU_NCCL_SYMM][c->world - 1];
  ncclDataType_t t = gpu_nccl_types[c->dtype];
  if (c->op == DC_OP_ALL_GATHER)
    return GPU_NCCL(rs, ncclAllGather(send, recv, p->count, ncclUint8, comm, rs->stream));
  if (c->op == DC_OP_ALL_REDUCE)
    return GPU_NCCL(rs, ncclAllReduce(send, recv, p->count, t, ncclSum, comm, rs->stream));
  return GPU_NCCL(rs, ncclReduceScatter(send, recv, p->count, t, ncclSum, comm, rs->stream));
#else
  return gpu_fail(rs, tune_err_internal, "gpu_issue", "NCCL is not built in");
#endif
}

static int gpu_same_graph(const gpu_graph *g, const gpu_plan *p) {
  const tune_cfg *a = &g->key, *c = p->c;
  return g->used && g->impl == p->impl && g->prev == p->prev && a->op == c->op &&
         a->path == c->path && a->dtype == c->dtype && a->world == c->world &&
         a->bytes == c->bytes && a->in_offset == c->in_offset && a->out_offset == c->out_offset;
}

static void gpu_graph_drop(gpu_graph *g) {
  for (int s = 0; s < 2; s++)
    if (g->exec[s]) cudaGraphExecDestroy(g->exec[s]);
  memset(g, 0, sizeof(*g));
}

/* Calls per graph for messages of `bytes` per rank: graph_calls, fewer for
 * large messages (at most GPU_GRAPH_BYTES per rank in one graph), whose
 * launch cost is amortized anyway and whose trials would otherwise take
 * seconds. */
#define GPU_GRAPH_BYTES ((uint64_t)64 << 20)
static int gpu_graph_calls(const gpu_backend *b, uint64_t bytes) {
  uint64_t cap = bytes ? GPU_GRAPH_BYTES / bytes : (uint64_t)b->graph_calls;
  return cap < 1 ? 1 : cap < (uint64_t)b->graph_calls ? (int)cap : b->graph_calls;
}

/* gpu_graph_calls() calls of p on input set `set`, captured on this rank's
 * own stream, instantiated and uploaded. */
static cudaGraphExec_t gpu_capture(gpu_backend *b, gpu_rank *rs, const gpu_plan *p, int set) {
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  if (!GPU_CUDA(rs, cudaStreamBeginCapture(rs->stream, cudaStreamCaptureModeThreadLocal)))
    return NULL;
  for (int k = 0, n = gpu_graph_calls(b, p->c->bytes); k < n && gpu_issue(rs, p, set); k++) continue;
  /* The capture ends whatever happened, so the stream stays usable. */
  if (GPU_CUDA(rs, cudaStreamEndCapture(rs->stream, &graph)) && rs->err == tune_ok &&
      GPU_CUDA(rs, cudaGraphInstantiate(&exec, graph, 0)) &&
      !GPU_CUDA(rs, cudaGraphUpload(exec, rs->stream))) {
    cudaGraphExecDestroy(exec);
    exec = NULL;
  }
  if (graph) cudaGraphDestroy(graph);
  return exec;
}

/* The cached graphs of p (captured on first use; the least recently used
 * entry makes room). */
static gpu_graph *gpu_graph_get(gpu_backend *b, gpu_rank *rs, const gpu_plan *p) {
  gpu_graph *g = NULL, *oldest = &rs->graphs[0];
  for (int i = 0; i < GPU_GRAPHS && g == NULL; i++) {
    if (gpu_same_graph(&rs->graphs[i], p)) g = &rs->graphs[i];
    if (rs->graphs[i].last_use < oldest->last_use) oldest = &rs->graphs[i];
  }
  if (g == NULL) {
    g = oldest;
    gpu_graph_drop(g);
    for (int s = 0; s < 2; s++)
      if ((g->exec[s] = gpu_capture(b, rs, p, s)) == NULL) {
        gpu_graph_drop(g);
        return NULL;
      }
    g->used = 1;
    g->impl = p->impl;
    g->prev = p->prev;
    g->key = *p->c;
    g->key.impl = NULL;
    TUNE_TRACE(TUNE_BACKEND, "rank %d: captured %s %s %s %" PRIu64 " bytes (%d calls per graph)",
               rs->rank, p->c->impl, dc_op_name(p->c->op), dc_path_name(p->c->path), p->c->bytes,
               gpu_graph_calls(b, p->c->bytes));
  }
  g->last_use = ++rs->clock;
  return g;
}

/* ---- checks ------------------------------------------------------------------ */

/* Watchdog and asynchronous errors after a run. host_ns: this rank's host
 * times of the run, from leaving the first CPU barrier to the end of its
 * launches and to leaving the second barrier. */
static void gpu_status(gpu_rank *rs, const gpu_plan *p, const int64_t host_ns[2]) {
  if (gpu_is_dc(p->impl)) {
    dc_comm comm = rs->dc[p->impl == GPU_DETCOLL_REG][p->c->world - 1];
    dc_result r = dc_comm_status(comm, NULL);
    if (r == dc_err_timeout) {
      char why[512];
      snprintf(why, sizeof(why), "%s path %s, %" PRIu64 " bytes: %s; host: launched after %.1f us, "
               "second barrier left after %.1f us", dc_mode_name(p->c->mode), dc_path_name(p->c->path),
               p->c->bytes, dc_comm_last_error(comm), host_ns[0] / 1e3, host_ns[1] / 1e3);
      gpu_fail(rs, tune_err_detcoll, dc_op_name(p->c->op), why);
    } else {
      GPU_DC(rs, comm, r);
    }
    return;
  }
#ifdef HAVE_NCCL
  ncclResult_t async = ncclSuccess;
  if (GPU_NCCL(rs,
               ncclCommGetAsyncError(rs->nccl[p->impl == GPU_NCCL_SYMM][p->c->world - 1], &async)))
    GPU_NCCL(rs, async);
#endif
}

/* Wrong elements (and touched guard bytes) of this rank's output of p,
 * computed by input set `set`: every element, on the GPU. */
static uint64_t gpu_check(gpu_backend *b, gpu_rank *rs, const gpu_plan *p, int set) {
  const tune_cfg *c = p->c;
  size_t es = p->out_esize;
  tune_fold_ref ref = {
      .op = c->op,
      .dtype = c->op == DC_OP_ALL_GATHER ? (dc_dtype)b->data_dtype : c->dtype,
      .world = c->world,
      .rank = rs->rank,
      .in_first = c->op == DC_OP_ALL_GATHER ? (size_t)c->in_offset : (size_t)c->in_offset / es,
      .chunk = p->count,
      .tol = gpu_is_dc(p->impl) ? 0 : gpu_nccl_tol[c->dtype] * c->world,
  };
  tune_gpu_check_counts n;
  for (int q = 0; q < c->world; q++) ref.keys[q] = tune_fold_key(b->seed, ref.dtype, q, set);
  if (!GPU_CUDA(rs,
                tune_gpu_check(&ref, rs->out, GPU_GUARD + (size_t)c->out_offset, p->out_bytes / es,
                               es, GPU_GUARD, GPU_PATTERN, rs->d_check, rs->stream, &n)))
    return 0;
  if (n.guard) TUNE_INFO(TUNE_BACKEND, "rank %d: %llu guard bytes touched", rs->rank, n.guard);
  if (n.wrong)
    TUNE_INFO(TUNE_BACKEND, "rank %d: %s %s: %llu output elements wrong, the first at %llu",
              rs->rank, c->impl, dc_op_name(c->op), n.wrong, n.first);
  return n.guard + n.wrong;
}

/* ---- the measurement ---------------------------------------------------------- */

enum { GPU_W_STATUS = 0, GPU_W_CHOSEN = 1 };

static int64_t *gpu_w_wrong(const gpu_job *j, int64_t *blk) { return blk + GPU_W_CHOSEN + j->nc; }
static int64_t *gpu_w_elapsed(const gpu_job *j, int64_t *blk, int i) {
  return blk + GPU_W_CHOSEN + 2 * j->nc + (size_t)i * j->trials;
}
static int64_t *gpu_w_delay(const gpu_job *j, int64_t *blk, int i) {
  return blk + GPU_W_CHOSEN + 2 * j->nc + (size_t)(j->nc + i) * j->trials;
}

/* One run of configuration i: barrier, [delay], A, call, B, barrier, wait
 * for B. trial < 0: a warm-up trial (not stored). last: the measure call's
 * last run of i, whose output is checked. */
static void gpu_run(gpu_job *j, gpu_rank *rs, gpu_graph **graphs, int i, int trial, int set,
                    int last, int64_t *blk) {
  gpu_backend *b = j->b;
  const gpu_plan *p = &j->plan[i];
  const tune_cfg *c = p->c;
  /* The checked run writes into fresh poison. */
  if (last && rs->err == tune_ok &&
      GPU_CUDA(rs,
               cudaMemsetAsync(rs->out, GPU_PATTERN,
                               2 * GPU_GUARD + (size_t)c->out_offset + p->out_bytes, rs->stream)))
    GPU_CUDA(rs, cudaStreamSynchronize(rs->stream));
  if (rs->err == tune_ok && j->mode == DC_MODE_EAGER) gpu_use_table(b, rs, p);
  if (b->lops->barrier(b->launch, j->world, rs->rank) != tune_ok)
    gpu_fail(rs, tune_err_internal, "CPU barrier", "launcher failed");
  const int64_t t0 = tune_now_ns();
  int64_t host_ns[2];
  int delayed = rs->err == tune_ok && gpu_skewed_rank(b, c, trial) == rs->rank;
  int missing = rs->skip_once && p->impl == GPU_DETCOLL && j->world > 1 && j->mode == DC_MODE_EAGER;
  if (missing) rs->skip_once = 0;
  float ms = 0;
  uint64_t delay = 0;
  int launched = rs->err == tune_ok &&
                 (!delayed || GPU_DC(rs, NULL, dc_delay(rs->stream, (uint64_t)c->skew_ns, rs->d_delay))) &&
                 GPU_CUDA(rs, cudaEventRecord(rs->ev_a, rs->stream)) &&
                 (j->mode == DC_MODE_GRAPH ? GPU_CUDA(rs, cudaGraphLaunch(graphs[i]->exec[set], rs->stream))
                                           : missing || gpu_issue(rs, p, set)) &&
                 GPU_CUDA(rs, cudaEventRecord(rs->ev_b, rs->stream));
  host_ns[0] = tune_now_ns() - t0;
  /* Every rank submits its call before any rank blocks on its GPU, the order
   * of the one-thread GPU tests, so no rank's launch competes with peers
   * spinning in cudaEventSynchronize; host_ns says how long the submitting
   * took when a watchdog fires. Every rank of the world reaches this
   * barrier, failed ones too. */
  if (b->lops->barrier(b->launch, j->world, rs->rank) != tune_ok)
    gpu_fail(rs, tune_err_internal, "CPU barrier", "launcher failed");
  host_ns[1] = tune_now_ns() - t0;
  if (!launched || !GPU_CUDA(rs, cudaEventSynchronize(rs->ev_b))) return;
  gpu_status(rs, p, host_ns);
  if (!GPU_CUDA(rs, cudaEventElapsedTime(&ms, rs->ev_a, rs->ev_b))) return;
  if (delayed &&
      !GPU_CUDA(rs, cudaMemcpy(&delay, rs->d_delay, sizeof(delay), cudaMemcpyDeviceToHost)))
    return;
  if (trial < 0) return;
  int t = trial - j->first_trial;
  gpu_w_elapsed(j, blk, i)[t] =
      llround((double)ms * 1e6 / (j->mode == DC_MODE_GRAPH ? gpu_graph_calls(b, c->bytes) : 1));
  gpu_w_delay(j, blk, i)[t] = (int64_t)delay;
  TUNE_TRACE(TUNE_BACKEND, "run trial %d config %d %s rank %d set %d: %" PRId64 " ns", trial, i,
             c->impl, rs->rank, set, gpu_w_elapsed(j, blk, i)[t]);
  if (last) gpu_w_wrong(j, blk)[i] += (int64_t)gpu_check(b, rs, p, set);
}

/* Communicators, inputs and graphs of the job on this rank: collective
 * parts first, in the same order on every rank. */
static void gpu_prepare(gpu_job *j, gpu_rank *rs, gpu_graph **graphs, int64_t *blk) {
  gpu_backend *b = j->b;
  int need[GPU_IMPL_COUNT] = {0};
  for (int i = 0; i < j->nc; i++) need[j->plan[i].impl] = 1;
  for (int reg = 0; reg < 2 && !b->lops->single_process; reg++)
    if (need[reg ? GPU_DETCOLL_REG : GPU_DETCOLL]) gpu_ipc_dc_comm(b, rs, j->world, reg);
#ifdef HAVE_NCCL
  for (int symm = 0; symm < 2; symm++)
    if (need[symm ? GPU_NCCL_SYMM : GPU_NCCL]) gpu_nccl_comm(b, rs, j->world, symm);
#endif
  gpu_load_inputs(b, rs);
  for (int i = 0; i < j->nc && rs->err == tune_ok; i++) {
    const gpu_plan *p = &j->plan[i];
    blk[GPU_W_CHOSEN + i] = p->c->path;
    if (!gpu_use_table(b, rs, p)) break;
    if (gpu_is_dc(p->impl) && p->c->path == DC_PATH_AUTO) {
      dc_path chosen = DC_PATH_AUTO;
      dc_comm comm = rs->dc[p->impl == GPU_DETCOLL_REG][j->world - 1];
      GPU_DC(rs, comm,
             dc_query_path(comm, p->c->op, p->c->dtype, rs->in[0] + p->c->in_offset,
                           rs->out + GPU_GUARD + p->c->out_offset, p->c->bytes, j->mode, &chosen));
      blk[GPU_W_CHOSEN + i] = chosen;
    }
    if (j->mode == DC_MODE_GRAPH) graphs[i] = gpu_graph_get(b, rs, p);
  }
}

/* The order of the job's configurations in `trial`. Trials come in pairs
 * (2m, 2m + 1): the even one runs a seeded shuffle, the odd one the same
 * reversed, so every configuration takes every place equally often within
 * a pair, and no place keeps one configuration for a whole call (fixed
 * orders showed same-kernel pairs apart by over 10%, a different one each
 * call, in eager mode). Where detcoll (either) and NCCL (either) are
 * measured together, detcoll goes first in even trials and NCCL in odd ones. The order depends
 * only on the seed, the job and the trial, so it is the same on every rank
 * and however the trials are split into calls. Returns the trial's parity,
 * which is also its input set. */
static int gpu_trial_order(const gpu_job *j, int trial, int *order) {
  const tune_cfg *c = j->plan[0].c;
  int odd = (trial % 2 + 2) % 2, pair = (trial - odd) / 2, nc = j->nc;
  tune_rng rng;
  tune_rng_seed(&rng, j->b->seed ^ ((uint64_t)c->op << 56) ^ ((uint64_t)c->mode << 52) ^
                          ((uint64_t)c->world << 44) ^ (c->bytes << 4) ^
                          ((uint64_t)(uint32_t)pair << 32));
  for (int i = 0; i < nc; i++) order[i] = i;
  for (int i = nc - 1; i > 0; i--) {
    int k = (int)(tune_rng_next(&rng) % (uint64_t)(i + 1)), t = order[i];
    order[i] = order[k];
    order[k] = t;
  }
  for (int i = 0; i < nc; i++) {
    int dc = gpu_is_dc(j->plan[order[i]].impl);
    int *end = dc ? &order[0] : &order[nc - 1];
    if (gpu_is_dc(j->plan[*end].impl) == dc) continue;
    int t = *end;
    *end = order[i];
    order[i] = t;
  }
  for (int i = 0; odd && i < nc / 2; i++) {
    int t = order[i];
    order[i] = order[nc - 1 - i];
    order[nc - 1 - i] = t;
  }
  return odd;
}

static tune_result gpu_rank_measure(void *ctx, int rank) {
  gpu_job *j = ctx;
  gpu_backend *b = j->b;
  gpu_rank *rs = gpu_local(b, rank);
  int me = rank - b->first_local;
  int64_t *blk = j->send[me];
  gpu_graph *graphs[GPU_MAX_NC] = {NULL};
  memset(blk, 0, j->words * sizeof(*blk));
  rs->err = tune_ok;
  if (rank < j->world) {
    GPU_CUDA(rs, cudaSetDevice(rs->device));
    gpu_prepare(j, rs, graphs, blk);
    int warm = j->first_trial == 0 ? j->warmup : 0, total = warm + j->trials;
    for (int t = 0; t < total; t++) {
      int trial = t < warm ? t - warm : j->first_trial + t - warm, order[GPU_MAX_NC];
      int set = gpu_trial_order(j, trial, order);
      for (int k = 0; k < j->nc; k++)
        gpu_run(j, rs, graphs, order[k], trial, set, t == total - 1, blk);
    }
  }
  blk[GPU_W_STATUS] = rs->err;
  if (b->lops->allgather(b->launch, b->ranks, rank, blk, j->recv[me], j->words * sizeof(*blk)) !=
      tune_ok)
    return rs->err != tune_ok ? rs->err : tune_err_internal;
  return rs->err;
}

/* ---- backend ops ------------------------------------------------------------ */

/* After a failed measure() of world `world`: 1 if the failure was a detcoll
 * watchdog timeout under virtual ranks, in which case the world's
 * communicators and the graphs that use them are replaced, ready for one
 * more attempt. Virtual ranks rest on CUDA running every rank's kernel at
 * once, which CUDA does not promise (seen: a rank's kernel held back for
 * the whole 5 s timeout although every rank launched within 0.1 ms); ranks
 * on GPUs of their own do not, and are never retried. */
static int gpu_retry_watchdog(gpu_backend *b, int world) {
  int timeouts = 0, made[2] = {0, 0};
  if (!b->virtual_ranks || !b->lops->single_process) return 0;
  for (int reg = 0; reg < 2; reg++) {
    made[reg] = b->local[0].dc[reg][world - 1] != NULL;
    for (int r = 0; r < world && made[reg]; r++)
      timeouts += dc_comm_status(b->local[r].dc[reg][world - 1], NULL) == dc_err_timeout;
  }
  if (timeouts == 0) return 0;
  TUNE_WARN(TUNE_BACKEND,
            "world %d: watchdog timeout with virtual ranks (CUDA held a rank's kernel back); measuring "
            "again once on fresh communicators",
            world);
  for (int r = 0; r < world; r++) {
    gpu_rank *rs = &b->local[r];
    for (int i = 0; i < GPU_GRAPHS; i++)
      if (rs->graphs[i].used && gpu_is_dc(rs->graphs[i].impl) && rs->graphs[i].key.world == world)
        gpu_graph_drop(&rs->graphs[i]);
    for (int reg = 0; reg < 2; reg++) {
      dc_comm_destroy(rs->dc[reg][world - 1]);
      rs->dc[reg][world - 1] = NULL;
    }
  }
  for (int reg = 0; reg < 2; reg++)
    if (made[reg] && gpu_local_dc_comms(b, world, reg) != tune_ok) return 0;
  return 1;
}

static tune_result gpu_measure(tune_backend *be, const tune_cfg *c, int nc, int first_trial,
                               int trials, int warmup, tune_samples *s) {
  gpu_backend *b = (gpu_backend *)be;
  gpu_job j = {.b = b, .nc = nc, .first_trial = first_trial, .trials = trials, .warmup = warmup};
  tune_result res = tune_ok;
  if (nc < 1 || nc > GPU_MAX_NC || trials < 1 || warmup < 0 || first_trial < 0) {
    tune_error(
        "gpu backend: %d configurations of %d trials (1..%d configurations, at least one trial)",
        nc, trials, GPU_MAX_NC);
    return tune_err_arg;
  }
  for (int i = 0; i < nc; i++) {
    TUNE_CHECK(gpu_plan_cfg(b, &c[i], &j.plan[i]));
    if (c[i].op != c[0].op || c[i].dtype != c[0].dtype || c[i].world != c[0].world ||
        c[i].bytes != c[0].bytes || c[i].mode != c[0].mode) {
      tune_error(
          "gpu backend: configurations measured together must share op, dtype, world, bytes and "
          "mode");
      return tune_err_arg;
    }
  }
  j.world = c[0].world;
  j.mode = c[0].mode;
  /* all_gather copies bytes of any dtype: it keeps whatever is loaded. */
  if (c[0].op != DC_OP_ALL_GATHER || b->data_dtype < 0) b->data_dtype = c[0].dtype;
  if (b->lops->single_process)
    for (int i = 0; i < nc; i++)
      if (gpu_is_dc(j.plan[i].impl))
        TUNE_CHECK(gpu_local_dc_comms(b, j.world, j.plan[i].impl == GPU_DETCOLL_REG));
  j.words = GPU_W_CHOSEN + 2 * (size_t)nc + 2 * (size_t)nc * (size_t)trials;
  j.send = calloc((size_t)b->nlocal, sizeof(*j.send));
  j.recv = calloc((size_t)b->nlocal, sizeof(*j.recv));
  if (j.send == NULL || j.recv == NULL) {
    res = tune_err_system;
    goto out;
  }
  for (int l = 0; l < b->nlocal; l++) {
    j.send[l] = malloc(j.words * sizeof(int64_t));
    j.recv[l] = malloc(j.words * sizeof(int64_t) * (size_t)b->ranks);
    if (j.send[l] == NULL || j.recv[l] == NULL) {
      res = tune_err_system;
      goto out;
    }
  }
  for (int attempt = 0;; attempt++) {
    res = b->lops->run(b->launch, gpu_rank_measure, &j);
    /* Every process has every rank's block; a peer's failure is ours too
     * (the peer printed why). */
    for (int r = 0; r < b->ranks && res == tune_ok; r++)
      if (j.recv[0][(size_t)r * j.words + GPU_W_STATUS] != tune_ok)
        res = (tune_result)j.recv[0][(size_t)r * j.words + GPU_W_STATUS];
    if (res == tune_ok || attempt > 0 || !gpu_retry_watchdog(b, j.world)) break;
  }
  if (res != tune_ok) goto out;
  const int64_t *all = j.recv[0];
  for (int i = 0; i < nc; i++) {
    s[i].wrong_elems = 0;
    s[i].chosen_path = (dc_path)all[GPU_W_CHOSEN + i];
    for (int r = 0; r < j.world; r++) {
      int64_t *blk = (int64_t *)all + (size_t)r * j.words;
      s[i].wrong_elems += (uint64_t)gpu_w_wrong(&j, blk)[i];
      for (int t = 0; t < trials; t++) {
        s[i].elapsed_ns[(size_t)t * j.world + r] = gpu_w_elapsed(&j, blk, i)[t];
        s[i].delay_ns[(size_t)t * j.world + r] = gpu_w_delay(&j, blk, i)[t];
      }
    }
  }
out:
  for (int l = 0; l < b->nlocal && j.send && j.recv; l++) {
    free(j.send[l]);
    free(j.recv[l]);
  }
  free(j.send);
  free(j.recv);
  return res;
}

/* Teardown of one rank: wait for its work, then (after every rank got
 * here) free what only it uses. In-process detcoll groups are destroyed
 * afterwards by the engine's thread. */
static tune_result gpu_rank_close(void *ctx, int rank) {
  gpu_backend *b = ctx;
  gpu_rank *rs = gpu_local(b, rank);
  rs->err = tune_ok;
  if (rs->stream && GPU_CUDA(rs, cudaSetDevice(rs->device)))
    GPU_CUDA(rs, cudaStreamSynchronize(rs->stream));
  b->lops->barrier(b->launch, b->ranks, rank);
  for (int i = 0; i < GPU_GRAPHS; i++) gpu_graph_drop(&rs->graphs[i]);
  for (int w = 0; w < DC_MAX_WORLD; w++) {
#ifdef HAVE_NCCL
    for (int symm = 0; symm < 2; symm++) {
      if (rs->nccl[symm][w] == NULL) continue;
#ifdef GPU_HAVE_SYMM
      for (int k = 0; symm && k < GPU_WIN_COUNT; k++)
        if (rs->win[w][k]) GPU_NCCL(rs, ncclCommWindowDeregister(rs->nccl[symm][w], rs->win[w][k]));
#endif
      GPU_NCCL(rs, ncclCommDestroy(rs->nccl[symm][w]));
    }
#endif
    /* Peers' mappings of this rank's windows close with them. */
    char *bufs[GPU_WIN_COUNT] = {rs->in[0], rs->in[1], rs->out};
    for (int k = 0; !b->lops->single_process && rs->dc[1][w] && k < GPU_WIN_COUNT; k++)
      GPU_DC(rs, rs->dc[1][w], dc_deregister(rs->dc[1][w], bufs[k]));
    for (int reg = 0; reg < 2; reg++)
      if (!b->lops->single_process && rs->dc[reg][w])
        GPU_DC(rs, rs->dc[reg][w], dc_comm_destroy(rs->dc[reg][w]));
  }
  char **bufs[GPU_WIN_COUNT] = {&rs->in[0], &rs->in[1], &rs->out};
  for (int i = 0; i < GPU_WIN_COUNT; i++) {
    if (*bufs[i] == NULL) continue;
#ifdef HAVE_NCCL
    if (rs->nccl_mem) {
      GPU_NCCL(rs, ncclMemFree(*bufs[i]));
      continue;
    }
#endif
    GPU_CUDA(rs, cudaFree(*bufs[i]));
  }
  if (rs->d_delay) GPU_CUDA(rs, cudaFree(rs->d_delay));
  if (rs->d_check) GPU_CUDA(rs, cudaFree(rs->d_check));
  if (rs->ev_a) GPU_CUDA(rs, cudaEventDestroy(rs->ev_a));
  if (rs->ev_b) GPU_CUDA(rs, cudaEventDestroy(rs->ev_b));
  if (rs->stream) GPU_CUDA(rs, cudaStreamDestroy(rs->stream));
  return rs->err;
}

static void gpu_close(tune_backend *be) {
  gpu_backend *b = (gpu_backend *)be;
  if (b == NULL) return;
  if (b->launch) {
    if (b->local) b->lops->run(b->launch, gpu_rank_close, b);
    for (int l = 0; b->local && b->lops->single_process && l < b->nlocal; l++)
      for (int w = 0; w < DC_MAX_WORLD; w++)
        for (int reg = 0; reg < 2; reg++)
          if (b->local[l].dc[reg][w]) dc_comm_destroy(b->local[l].dc[reg][w]);
    b->lops->close(b->launch);
  }
  tune_topo_close(b->topo);
  free(b->table);
  free(b->prev);
  free(b->local);
  free(b);
}

/* "13.0" from 13000. */
static void gpu_version(char *buf, size_t n, int v) {
  snprintf(buf, n, "%d.%d", v / 1000, v % 1000 / 10);
}

/* The machine as the engine records it: this process's first GPU names the
 * model; gpu_count counts distinct GPUs under the ranks. topo: one GPU (or
 * virtual ranks) is single_gpu; otherwise peer access between the first two
 * GPUs means nvlink and its absence pcie -- without NVML, CUDA has no direct
 * "is this NVLink" query, and detcoll needs peer access anyway. */
static void gpu_describe_machine(gpu_backend *b) {
  tune_machine *m = &b->mach;
  struct cudaDeviceProp prop;
  int v = 0, distinct = 0, dev[2] = {-1, -1};
  memset(m, 0, sizeof(*m));
  if (cudaGetDeviceProperties(&prop, b->local[0].device) == cudaSuccess) {
    snprintf(m->gpu_model, sizeof(m->gpu_model), "%.*s", (int)sizeof(m->gpu_model) - 1, prop.name);
    m->sm = prop.major * 10 + prop.minor;
  }
  for (int r = 0; r < b->ranks; r++) {
    int seen = 0;
    for (int q = 0; q < r; q++) seen |= strcmp(b->busid[q], b->busid[r]) == 0;
    if (!seen && distinct < 2 &&
        cudaDeviceGetByPCIBusId(&dev[distinct], b->busid[r]) != cudaSuccess)
      dev[distinct] = -1;
    distinct += !seen;
  }
  m->gpu_count = distinct;
  m->topo = DC_TOPO_SINGLE_GPU;
  if (distinct > 1) {
    int access = 0;
    m->topo = dev[0] >= 0 && dev[1] >= 0 &&
                      cudaDeviceGetP2PAttribute(&access, cudaDevP2PAttrAccessSupported, dev[0],
                                                dev[1]) == cudaSuccess &&
                      access
                  ? DC_TOPO_NVLINK
                  : DC_TOPO_PCIE;
  }
  snprintf(m->driver, sizeof(m->driver), "unknown");
  if (cudaDriverGetVersion(&v) == cudaSuccess) gpu_version(m->driver, sizeof(m->driver), v);
  snprintf(m->cuda, sizeof(m->cuda), "unknown");
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) gpu_version(m->cuda, sizeof(m->cuda), v);
  snprintf(m->nccl, sizeof(m->nccl), "none");
#ifdef HAVE_NCCL
  if (ncclGetVersion(&v) == ncclSuccess) {
    if (v >= 10000)
      snprintf(m->nccl, sizeof(m->nccl), "%d.%d.%d", v / 10000, v % 10000 / 100, v % 100);
    else
      snprintf(m->nccl, sizeof(m->nccl), "%d.%d.%d", v / 1000, v % 1000 / 100, v % 100);
  }
#endif
  snprintf(m->mpi, sizeof(m->mpi), "none");
#ifdef HAVE_MPI
  if (!b->lops->single_process) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(lib, &len) == MPI_SUCCESS) {
      lib[strcspn(lib, ",\n")] = '\0';
      snprintf(m->mpi, sizeof(m->mpi), "%.*s", (int)sizeof(m->mpi) - 1, lib);
    }
  }
#endif
  snprintf(m->launcher, sizeof(m->launcher), "%s", b->lops->name);
}

/* Ranks and the launcher from the options; messages for the user. */
static tune_result gpu_start(const tune_backend_opts *o, gpu_backend *b) {
  const char *name = o->launcher ? o->launcher : "threads";
  b->lops = tune_launcher_find(name);
  if (b->lops == NULL) {
    if (strcmp(name, "mpi") == 0)
      tune_error(
          "--launcher mpi: this tune was built without MPI (Open MPI was not found by configure)");
    else
      tune_error("unknown launcher '%s' (use threads or mpi)", name);
    return tune_err_arg;
  }
  int ranks = o->gpus;
  if (b->lops->single_process) {
    if (ranks == 0) ranks = b->ndev < DC_MAX_WORLD ? b->ndev : DC_MAX_WORLD;
    if (ranks > b->ndev && !o->virtual_ranks) {
      tune_error(
          "--gpus %d asks for more GPUs than the %d found; add --virtual-ranks to run %d ranks on "
          "GPU 0",
          ranks, b->ndev, ranks);
      return tune_err_arg;
    }
  }
  if (ranks > DC_MAX_WORLD) {
    tune_error("--gpus %d: at most %d ranks (libdetcoll's DC_MAX_WORLD)", ranks, DC_MAX_WORLD);
    return tune_err_arg;
  }
  TUNE_CHECK(b->lops->open(ranks, &b->launch));
  b->ranks = b->lops->ranks(b->launch);
  b->first_local = b->lops->first_local(b->launch);
  b->nlocal = b->lops->local_count(b->launch);
  if (b->ranks > DC_MAX_WORLD) {
    tune_error("%d processes: at most %d ranks (libdetcoll's DC_MAX_WORLD)", b->ranks,
               DC_MAX_WORLD);
    return tune_err_arg;
  }
  b->local = calloc((size_t)b->nlocal, sizeof(*b->local));
  if (b->local == NULL) return tune_err_system;
  /* mpi: the device is the node-local rank modulo the GPUs, so more
   * processes than GPUs share them (virtual ranks across processes). */
  int node = b->lops->node_rank(b->launch);
  if (!b->lops->single_process && node >= b->ndev && !o->virtual_ranks)
    TUNE_WARN(TUNE_LAUNCH, "rank %d: more processes than the %d GPUs on this node: GPUs are shared",
              b->first_local, b->ndev);
  for (int l = 0; l < b->nlocal; l++) {
    gpu_rank *rs = &b->local[l];
    rs->rank = b->first_local + l;
    rs->device = o->virtual_ranks ? 0 : b->lops->single_process ? rs->rank : (node + l) % b->ndev;
    rs->loaded = -1;
    rs->skip_once = rs->rank == tune_param_get(&tune_param_MissingRank);
  }
  return tune_ok;
}

/* The ranks' streams, created first and in rank order by one thread. CUDA
 * spreads a context's streams over CUDA_DEVICE_MAX_CONNECTIONS hardware
 * queues in creation order; work of two streams on one queue can wait for
 * each other (an event after a rank's spinning kernel holds up the kernel of
 * the rank behind it), so virtual ranks want a queue each: their streams are
 * the context's first ones, consecutive, and gpu_open asks for 32 queues. */
static tune_result gpu_rank_streams(gpu_backend *b) {
  for (int l = 0; l < b->nlocal; l++) {
    gpu_rank *rs = &b->local[l];
    cudaError_t e = cudaSetDevice(rs->device);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&rs->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
      tune_error("rank %d (GPU %d): creating its stream: %s", rs->rank, rs->device, cudaGetErrorString(e));
      return tune_err_cuda;
    }
  }
  return tune_ok;
}

static tune_result gpu_open(const tune_backend_opts *o, tune_backend **out) {
  int ndev = 0;
  /* NVLink SHARP (NVLS) needs multicast objects this project must not
   * create; a user's explicit setting wins. */
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  /* Virtual ranks: a hardware queue per rank stream (gpu_rank_streams);
   * read when the context is created, so set before any CUDA call. */
  if (o->virtual_ranks) setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    tune_error("no CUDA device found (%s); %s",
               e != cudaSuccess ? cudaGetErrorString(e) : "0 devices", no_gpu_hint);
    return tune_err_cuda;
  }
  if (o->max_bytes == 0 || o->graph_calls < 1) {
    tune_error("gpu backend: max_bytes and graph_calls must be positive");
    return tune_err_arg;
  }
  gpu_backend *b = calloc(1, sizeof(*b));
  if (b == NULL) return tune_err_system;
  b->base.ops = &tune_backend_gpu;
  b->ndev = ndev;
  b->seed = o->seed;
  b->max_bytes = o->max_bytes;
  b->graph_calls = o->graph_calls;
  b->virtual_ranks = o->virtual_ranks;
  b->data_dtype = -1;
  tune_result res;
  TUNE_CHECK_GOTO(gpu_start(o, b), res, fail);
  b->in_cap = (size_t)((o->max_bytes + GPU_MAX_OFFSET + 4095) / 4096 * 4096);
  b->out_cap =
      (size_t)((2 * GPU_GUARD + GPU_MAX_OFFSET + (uint64_t)b->ranks * o->max_bytes + 4095) / 4096 *
               4096);
  TUNE_CHECK_GOTO(tune_topo_open(&b->topo), res, fail);
  TUNE_CHECK_GOTO(gpu_rank_streams(b), res, fail);
  TUNE_CHECK_GOTO(b->lops->run(b->launch, gpu_rank_open, b), res, fail);
  gpu_describe_machine(b);
  TUNE_INFO(TUNE_BACKEND, "gpu backend: %d ranks on %d %s GPU(s), sm %d, %s, launcher %s", b->ranks,
            b->mach.gpu_count, b->mach.gpu_model, b->mach.sm, dc_topo_name(b->mach.topo),
            b->mach.launcher);
  *out = &b->base;
  return tune_ok;
fail:
  gpu_close(&b->base);
  return res;
}

static void gpu_describe(tune_backend *be, tune_machine *m) { *m = ((gpu_backend *)be)->mach; }

static int gpu_process_rank(tune_backend *be) {
  gpu_backend *b = (gpu_backend *)be;
  return b->lops->process_rank(b->launch);
}

/* set_table's work on each rank. */
typedef struct {
  gpu_backend *b;
  tune_table_slot slot;
} gpu_table_ctx;

/* On a rank's own thread: its comms take the current table, and its
 * captured graphs of auto dispatch from the table that changed, which
 * froze that table's paths, are dropped (forced paths keep theirs). */
static tune_result gpu_rank_set_table(void *ctx, int rank) {
  gpu_table_ctx *x = ctx;
  gpu_backend *b = x->b;
  gpu_rank *rs = gpu_local(b, rank);
  for (int reg = 0; reg < 2; reg++)
    for (int w = 0; w < DC_MAX_WORLD; w++) {
      if (rs->dc[reg][w] && !GPU_DC(rs, rs->dc[reg][w], dc_comm_set_table(rs->dc[reg][w], b->table, b->ntable)))
        return rs->err;
      rs->dc_prev[reg][w] = 0;
    }
  for (int i = 0; i < GPU_GRAPHS; i++)
    if (rs->graphs[i].used && gpu_is_dc(rs->graphs[i].impl) &&
        rs->graphs[i].key.path == DC_PATH_AUTO &&
        rs->graphs[i].prev == (x->slot == TUNE_TABLE_PREVIOUS))
      gpu_graph_drop(&rs->graphs[i]);
  return tune_ok;
}

/* Process 0's table to every process (launch_table.c), checked here
 * (dc_table_check: a bad table is refused before anything measures it) and
 * by libdetcoll on every comm that takes it: the current table now and on
 * comms created later, the previous one whenever a call of detcoll_prev or
 * detcoll_reg_prev switches a comm to it (gpu_use_table). */
static tune_result gpu_set_table(tune_backend *be, tune_table_slot slot,
                                 const dc_threshold_row *rows, size_t nrows) {
  gpu_backend *b = (gpu_backend *)be;
  dc_threshold_row *copy;
  size_t n;
  char why[256];
  if ((unsigned)slot >= TUNE_TABLE_COUNT) return tune_err_internal;
  TUNE_CHECK(tune_launcher_share_table(b->lops->single_process ? NULL : b->launch, rows, nrows, &copy, &n));
  if (copy && dc_table_check(copy, n, why, sizeof(why)) != 0) {
    tune_error("the %s threshold table for auto dispatch: %s",
               slot == TUNE_TABLE_PREVIOUS ? "previous" : "current", why);
    free(copy);
    return tune_err_arg;
  }
  dc_threshold_row **t = slot == TUNE_TABLE_PREVIOUS ? &b->prev : &b->table;
  free(*t);
  *t = copy;
  *(slot == TUNE_TABLE_PREVIOUS ? &b->nprev : &b->ntable) = n;
  gpu_table_ctx x = {b, slot};
  return b->lops->run(b->launch, gpu_rank_set_table, &x);
}

static dc_path gpu_auto_path(tune_backend *be, const tune_cfg *c) {
  gpu_backend *b = (gpu_backend *)be;
  int prev, impl = gpu_impl_parse(c->impl, &prev);
  const dc_threshold_row *rows = prev ? b->prev : b->table;
  if (impl < 0 || !gpu_is_dc((gpu_impl)impl) || rows == NULL) return DC_PATH_AUTO;
  return tune_table_auto_path(rows, prev ? b->nprev : b->ntable, b->mach.sm, b->mach.topo, c);
}

#else /* !HAVE_CUDA: the backend exists so that asking for it says why not. */

static tune_result gpu_open(const tune_backend_opts *o, tune_backend **out) {
  (void)o;
  (void)out;
  tune_error("no CUDA device found (this tune was built without the CUDA toolkit); %s",
             no_gpu_hint);
  return tune_err_cuda;
}

static void gpu_describe(tune_backend *be, tune_machine *m) {
  (void)be;
  memset(m, 0, sizeof(*m));
}

static int gpu_process_rank(tune_backend *be) {
  (void)be;
  return 0;
}

static int gpu_supports(tune_backend *be, const tune_cfg *c) {
  (void)be;
  (void)c;
  return 0;
}

static tune_result gpu_set_table(tune_backend *be, tune_table_slot slot,
                                 const dc_threshold_row *rows, size_t nrows) {
  (void)be;
  (void)slot;
  (void)rows;
  (void)nrows;
  return tune_err_internal;
}

static dc_path gpu_auto_path(tune_backend *be, const tune_cfg *c) {
  (void)be;
  (void)c;
  return DC_PATH_AUTO;
}

static tune_result gpu_measure(tune_backend *be, const tune_cfg *c, int nc, int first_trial,
                               int trials, int warmup, tune_samples *s) {
  (void)be;
  (void)c;
  (void)nc;
  (void)first_trial;
  (void)trials;
  (void)warmup;
  (void)s;
  return tune_err_internal;
}

static void gpu_close(tune_backend *be) { (void)be; }

#endif /* HAVE_CUDA */

const tune_backend_ops tune_backend_gpu = {
    "gpu",         gpu_open,      gpu_describe, gpu_process_rank, gpu_supports,
    gpu_set_table, gpu_auto_path, gpu_measure,  gpu_close,
};
