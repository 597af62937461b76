/* gpu.c: the gpu backend: measures libdetcoll, and NCCL beside it, on real
 * devices, per DESIGN.md's measurement method. This file holds the trial
 * loop; what is measured are ops tables (gpu_impl.h), one file each:
 * gpu_detcoll.c (detcoll, detcoll_reg, detcoll_prev, detcoll_reg_prev) and
 * gpu_nccl.c (nccl, nccl_symm).
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
#include "gpu_fold.h"
#include "gpu_impl.h"
#endif
#ifdef HAVE_MPI
#include <mpi.h>
#endif

/* No GPU to measure (why): say so, and how to rehearse the same command on
 * the sim model. */
static tune_result no_gpu(const tune_backend_opts *o, const char *why) {
  tune_error("no CUDA device found (%s); to rehearse without a GPU, give the same command "
             "--backend sim (the main job: ./tune --backend sim --gpus %d)",
             why, o->gpus > 0 ? o->gpus : 8);
  return tune_err_cuda;
}

#ifdef HAVE_CUDA

/* Fault injection for the tests: the rank that skips its first eager detcoll
 * call in a world of two or more, once per process, so that its peers'
 * watchdogs fire as when CUDA holds a rank's kernel back (gpu_retry_watchdog). */
TUNE_PARAM(MissingRank, "MISSING_RANK", -1, -1, 1023);

/* ---- sticky failures ------------------------------------------------------ */

int gpu_fail(gpu_rank *rs, tune_result r, const char *call, const char *why) {
  if (rs->err == tune_ok) {
    tune_error("rank %d (GPU %d): %s: %s", rs->rank, rs->device, call, why);
    rs->err = r;
  }
  return 0;
}

int gpu_cuda_ok(gpu_rank *rs, cudaError_t e, const char *call) {
  return e == cudaSuccess ? 1 : gpu_fail(rs, tune_err_cuda, call, cudaGetErrorString(e));
}

int gpu_dc_ok(gpu_rank *rs, dc_comm comm, dc_result r, const char *call) {
  if (r == dc_ok) return 1;
  char why[512];
  const char *detail = comm ? dc_comm_last_error(comm) : "";
  snprintf(why, sizeof(why), "%s%s%s", dc_result_str(r), *detail ? ": " : "", detail);
  return gpu_fail(rs, tune_err_detcoll, call, why);
}


#ifdef HAVE_NCCL
int gpu_nccl_ok(gpu_rank *rs, ncclResult_t r, const char *call) {
  return r == ncclSuccess ? 1 : gpu_fail(rs, tune_err_nccl, call, ncclGetErrorString(r));
}
#endif

/* ---- configurations ------------------------------------------------------- */

/* The implementations measured, in the order their communicators are made
 * (the same on every rank). */
static const gpu_impl_ops *const gpu_impls[] = {&gpu_impl_detcoll,      &gpu_impl_detcoll_reg,
                                                &gpu_impl_detcoll_prev, &gpu_impl_detcoll_reg_prev,
                                                &gpu_impl_nccl,         &gpu_impl_nccl_symm};
enum { GPU_IMPL_COUNT = sizeof(gpu_impls) / sizeof(gpu_impls[0]) };

static const gpu_impl_ops *gpu_impl_find(const char *name) {
  for (int i = 0; name && i < GPU_IMPL_COUNT; i++)
    if (strcmp(name, gpu_impls[i]->name) == 0) return gpu_impls[i];
  return NULL;
}

/* Why c cannot be measured here (a message), or NULL. */
static const char *gpu_unsupported(const gpu_backend *b, const tune_cfg *c) {
  const gpu_impl_ops *ops = gpu_impl_find(c->impl);
  if (ops == NULL)
    return "unknown impl (detcoll, detcoll_reg, detcoll_prev, detcoll_reg_prev, nccl or nccl_symm)";
  if ((unsigned)c->op >= DC_OP_COUNT || (unsigned)c->dtype >= DC_DTYPE_COUNT ||
      (unsigned)c->mode >= DC_MODE_COUNT)
    return "bad op, dtype or mode";
  if (c->world < 1 || c->world > b->ranks) return "world larger than the ranks running";
  const char *why = tune_cfg_offsets_unsupported(c);
  if (why != NULL) return why;
  if (c->skew_rank < -2 || c->skew_rank >= c->world) return "skew rank out of range";
  return ops->unsupported(b, c);
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
  p->ops = gpu_impl_find(c->impl);
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


/* Device buffers: from ncclMemAlloc where symmetric windows may be
 * registered on them, else cudaMalloc. Across processes (--launcher mpi)
 * always cudaMalloc: detcoll_reg's windows travel by cudaIpcGetMemHandle,
 * which takes cudaMalloc memory only, not ncclMemAlloc's cuMem mappings;
 * nccl_symm is left out there (nccl_unsupported_any says why). */
static void gpu_alloc(gpu_backend *b, gpu_rank *rs) {
  size_t caps[GPU_WIN_COUNT] = {b->in_cap, b->in_cap, b->out_cap};
  char **bufs[GPU_WIN_COUNT] = {&rs->in[0], &rs->in[1], &rs->out};
#ifdef GPU_HAVE_SYMM
  int v = 0;
  rs->nccl_mem = b->lops->single_process && ncclGetVersion(&v) == ncclSuccess && v >= NCCL_VERSION(2, 27, 0);
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
        GPU_CUDA(rs, tune_gpu_fold_preload())) {
      if (b->fits == tune_ok)
        gpu_alloc(b, rs);
      else
        rs->err = b->fits;
    }
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

static int gpu_same_graph(const gpu_graph *g, const gpu_plan *p) {
  const tune_cfg *a = &g->key, *c = p->c;
  return g->used && g->ops == p->ops && a->op == c->op && a->path == c->path &&
         a->dtype == c->dtype && a->world == c->world && a->bytes == c->bytes &&
         a->in_offset == c->in_offset && a->out_offset == c->out_offset;
}

void gpu_graph_drop(gpu_graph *g) {
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
  for (int k = 0, n = gpu_graph_calls(b, p->c->bytes); k < n && p->ops->issue(rs, p, set); k++) continue;
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
    g->ops = p->ops;
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
      .tol = p->ops->tolerance(c),
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
  if (b->lops->barrier(b->launch, j->world, rs->rank) != tune_ok)
    gpu_fail(rs, tune_err_internal, "CPU barrier", "launcher failed");
  const int64_t t0 = tune_now_ns();
  int64_t host_ns[2];
  int delayed = rs->err == tune_ok && gpu_skewed_rank(b, c, trial) == rs->rank;
  int missing = rs->skip_once && p->ops == &gpu_impl_detcoll && j->world > 1 && j->mode == DC_MODE_EAGER;
  if (missing) rs->skip_once = 0;
  float ms = 0;
  uint64_t delay = 0;
  int launched = rs->err == tune_ok &&
                 (!delayed || GPU_DC(rs, NULL, dc_delay(rs->stream, (uint64_t)c->skew_ns, rs->d_delay))) &&
                 GPU_CUDA(rs, cudaEventRecord(rs->ev_a, rs->stream)) &&
                 (j->mode == DC_MODE_GRAPH ? GPU_CUDA(rs, cudaGraphLaunch(graphs[i]->exec[set], rs->stream))
                                           : missing || p->ops->issue(rs, p, set)) &&
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
  p->ops->status(rs, p, host_ns);
  if (!GPU_CUDA(rs, cudaEventElapsedTime(&ms, rs->ev_a, rs->ev_b))) return;
  if (delayed &&
      !GPU_CUDA(rs, cudaMemcpy(&delay, rs->d_delay, sizeof(delay), cudaMemcpyDeviceToHost)))
    return;
  if (trial < 0) return;
  int t = trial - j->first_trial;
  gpu_w_elapsed(j, blk, i)[t] =
      llround((double)ms * 1e6 / (j->mode == DC_MODE_GRAPH ? gpu_graph_calls(b, c->bytes) : 1));
  gpu_w_delay(j, blk, i)[t] = (int64_t)delay;
  TUNE_TRACE(TUNE_BACKEND, "run trial %d config %d %s %s rank %d set %d: %" PRId64 " ns", trial, i,
             c->impl, dc_path_name(c->path), rs->rank, set, gpu_w_elapsed(j, blk, i)[t]);
  if (last) gpu_w_wrong(j, blk)[i] += (int64_t)gpu_check(b, rs, p, set);
}

/* Communicators, inputs and graphs of the job on this rank: collective
 * parts first, in the same order on every rank. */
static void gpu_prepare(gpu_job *j, gpu_rank *rs, gpu_graph **graphs, int64_t *blk) {
  gpu_backend *b = j->b;
  for (int k = 0; k < GPU_IMPL_COUNT; k++)
    for (int i = 0; i < j->nc; i++)
      if (j->plan[i].ops == gpu_impls[k]) {
        gpu_impls[k]->connect(b, rs, j->world);
        break;
      }
  gpu_load_inputs(b, rs);
  for (int i = 0; i < j->nc && rs->err == tune_ok; i++) {
    const gpu_plan *p = &j->plan[i];
    blk[GPU_W_CHOSEN + i] = p->ops->chosen(rs, p, j->mode);
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
    int dc = j->plan[order[i]].ops->detcoll;
    int *end = dc ? &order[0] : &order[nc - 1];
    if (j->plan[*end].ops->detcoll == dc) continue;
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
      if (j.plan[i].ops->connect_local) TUNE_CHECK(j.plan[i].ops->connect_local(b, j.world));
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
    /* A detcoll watchdog timeout under virtual ranks gets one more try on
     * fresh communicators (gpu_detcoll_retry_watchdog). */
    if (res == tune_ok || attempt > 0 || !gpu_detcoll_retry_watchdog(b, j.world)) break;
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
 * here) free what only it uses: each impl's communicators (in reverse
 * order of their making), the buffers. In-process detcoll groups are
 * destroyed afterwards by the engine's thread. */
static tune_result gpu_rank_close(void *ctx, int rank) {
  gpu_backend *b = ctx;
  gpu_rank *rs = gpu_local(b, rank);
  rs->err = tune_ok;
  if (rs->stream && GPU_CUDA(rs, cudaSetDevice(rs->device)))
    GPU_CUDA(rs, cudaStreamSynchronize(rs->stream));
  b->lops->barrier(b->launch, b->ranks, rank);
  for (int i = 0; i < GPU_GRAPHS; i++) gpu_graph_drop(&rs->graphs[i]);
  for (int k = GPU_IMPL_COUNT - 1; k >= 0; k--) gpu_impls[k]->disconnect(b, rs);
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
    gpu_detcoll_destroy_local(b);
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
 * model; gpu_count counts distinct GPUs under the ranks; topo is the one
 * libdetcoll's comms of all the ranks find (dc_topology over their GPUs),
 * so that the rows a job writes are the rows its comms look up. */
static void gpu_describe_machine(gpu_backend *b) {
  tune_machine *m = &b->mach;
  struct cudaDeviceProp prop;
  int v = 0, distinct = 0;
  const char *bus_ids[DC_MAX_WORLD] = {0};
  dc_topo topo = DC_TOPO_NVLINK;
  memset(m, 0, sizeof(*m));
  if (cudaGetDeviceProperties(&prop, b->local[0].device) == cudaSuccess) {
    snprintf(m->gpu_model, sizeof(m->gpu_model), "%.*s", (int)sizeof(m->gpu_model) - 1, prop.name);
    m->sm = prop.major * 10 + prop.minor;
  }
  for (int r = 0; r < b->ranks; r++) {
    int seen = 0;
    for (int q = 0; q < r; q++) seen |= strcmp(b->busid[q], b->busid[r]) == 0;
    distinct += !seen;
    bus_ids[r] = b->busid[r];
  }
  m->gpu_count = distinct;
  m->ranks = b->ranks;
  /* It refuses only bad arguments (no rank, a NULL id): NVLink, as for a
   * GPU it cannot see. */
  m->topo = dc_topology(b->ranks, bus_ids, &topo) == dc_ok ? topo : DC_TOPO_NVLINK;
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
  /* mpi: the device is the node-local rank modulo the GPUs this process
   * sees, so more processes than GPUs share them (gpu_open warns). */
  int node = b->lops->node_rank(b->launch);
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

/* Before any rank allocates: whether the buffers of this process's ranks
 * (two inputs of in_cap and an output of out_cap each) fit in the free
 * memory of each GPU they use, so that a --max-bytes too large for the GPU
 * is refused by name instead of by a failed allocation (ncclMemAlloc's
 * "unhandled cuda error"). The comms a job makes later (libdetcoll's
 * staging, NCCL's) are not counted: how many depends on the job. Every
 * rank then acts on the answer in gpu_rank_open, whose exchange tells the
 * other processes (returning here would leave them waiting there). */
static tune_result gpu_check_memory(const gpu_backend *b) {
  const uint64_t per_rank = 2 * (uint64_t)b->in_cap + b->out_cap;
  for (int l = 0; l < b->nlocal; l++) {
    const int dev = b->local[l].device;
    int n = 0, seen = 0;
    size_t avail = 0, total = 0;
    for (int k = 0; k < b->nlocal; k++) {
      seen |= k < l && b->local[k].device == dev;
      n += b->local[k].device == dev;
    }
    if (seen) continue;
    cudaError_t e = cudaSetDevice(dev);
    if (e == cudaSuccess) e = cudaMemGetInfo(&avail, &total);
    if (e != cudaSuccess) {
      tune_error("GPU %d: cudaMemGetInfo: %s", dev, cudaGetErrorString(e));
      return tune_err_cuda;
    }
    if ((uint64_t)n * per_rank > avail) {
      char mb[32];
      tune_error("GPU %d has %.1f GiB free; the buffers of its %d rank%s at --max-bytes %s need %.1f GiB (per "
                 "rank two inputs of --max-bytes and an output of %d times that): lower --max-bytes",
                 dev, avail / 1073741824.0, n, n == 1 ? "" : "s", tune_format_size(b->max_bytes, mb, sizeof(mb)),
                 (double)n * per_rank / 1073741824.0, b->ranks);
      return tune_err_arg;
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
    return no_gpu(o, e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
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
  TUNE_CHECK_GOTO(gpu_detcoll_check(b), res, fail);
  TUNE_CHECK_GOTO(gpu_start(o, b), res, fail);
  b->in_cap = (size_t)((o->max_bytes + GPU_MAX_OFFSET + 4095) / 4096 * 4096);
  b->out_cap =
      (size_t)((2 * GPU_GUARD + GPU_MAX_OFFSET + (uint64_t)b->ranks * o->max_bytes + 4095) / 4096 *
               4096);
  TUNE_CHECK_GOTO(tune_topo_open(&b->topo), res, fail);
  TUNE_CHECK_GOTO(gpu_rank_streams(b), res, fail);
  b->fits = gpu_check_memory(b);
  TUNE_CHECK_GOTO(b->lops->run(b->launch, gpu_rank_open, b), res, fail);
  gpu_describe_machine(b);
  /* By the ranks' bus ids, not by the GPUs this process sees: with one GPU
   * per process (CUDA_VISIBLE_DEVICES) every process sees one. */
  if (!o->virtual_ranks && b->mach.gpu_count < b->ranks && b->lops->process_rank(b->launch) == 0)
    TUNE_WARN(TUNE_LAUNCH, "%d ranks on %d GPUs: more processes than GPUs on a node, GPUs are shared",
              b->ranks, b->mach.gpu_count);
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

/* Process 0's table to every process, checked there (launch_table.c: a
 * bad table is refused before anything measures it), and by libdetcoll on
 * every comm that takes it, now and on comms created later: detcoll's and
 * detcoll_reg's the current table, detcoll_prev's and detcoll_reg_prev's
 * (comms of their own, gpu_detcoll.c) the previous one. */
static tune_result gpu_set_table(tune_backend *be, tune_table_slot slot,
                                 const dc_threshold_row *rows, size_t nrows) {
  gpu_backend *b = (gpu_backend *)be;
  dc_threshold_row *copy;
  size_t n;
  TUNE_CHECK(tune_launcher_share_table(b->launch, slot, rows, nrows, &copy, &n));
  dc_threshold_row **t = slot == TUNE_TABLE_PREVIOUS ? &b->prev : &b->table;
  free(*t);
  *t = copy;
  *(slot == TUNE_TABLE_PREVIOUS ? &b->nprev : &b->ntable) = n;
  gpu_table_ctx x = {b, slot};
  return b->lops->run(b->launch, gpu_detcoll_set_table, &x);
}

static dc_path gpu_auto_path(tune_backend *be, const tune_cfg *c) {
  gpu_backend *b = (gpu_backend *)be;
  const tune_impl *im = tune_impl_find(c->impl);
  const dc_threshold_row *rows = im && im->previous ? b->prev : b->table;
  if (im == NULL || !im->detcoll || rows == NULL) return DC_PATH_AUTO;
  return tune_table_auto_path(rows, im->previous ? b->nprev : b->ntable, b->mach.sm, b->mach.topo,
                              c);
}

/* Process 0's bytes to every process of the launcher (--resume under mpi). */
static tune_result gpu_share(tune_backend *be, void *buf, size_t bytes) {
  return tune_launcher_share_bytes(((gpu_backend *)be)->launch, buf, bytes);
}

/* Whether every process was given the same job (tune_launcher_agree). */
static tune_result gpu_agree(tune_backend *be, const void *mine, void *theirs, size_t bytes, int *differs) {
  return tune_launcher_agree(((gpu_backend *)be)->launch, mine, theirs, bytes, differs);
}

#else /* !HAVE_CUDA: the backend exists so that asking for it says why not. */

static tune_result gpu_open(const tune_backend_opts *o, tune_backend **out) {
  (void)out;
  return no_gpu(o, "this tune was built without the CUDA toolkit");
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

static tune_result gpu_share(tune_backend *be, void *buf, size_t bytes) {
  (void)be;
  (void)buf;
  (void)bytes;
  return tune_err_internal;
}

static tune_result gpu_agree(tune_backend *be, const void *mine, void *theirs, size_t bytes, int *differs) {
  (void)be;
  (void)mine;
  (void)theirs;
  (void)bytes;
  *differs = -1;
  return tune_err_internal;
}

#endif /* HAVE_CUDA */

const tune_backend_ops tune_backend_gpu = {
    "gpu",         gpu_open,      gpu_describe, gpu_process_rank, gpu_supports,
    gpu_set_table, gpu_auto_path, gpu_measure,  gpu_close,        gpu_share,
    gpu_agree,
};
