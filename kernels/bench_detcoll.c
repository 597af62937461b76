/* bench_detcoll.c: the performance harness of libdetcoll, usable on its own
 * like nccl-tests: times detcoll (auto dispatch and every forced path) beside
 * NCCL and NCCL with symmetric windows, in the same process and the same
 * trials, eager and CUDA-graph mode, checks every row's output, and prints
 * one table row per (op, size, implementation, path, mode).
 *
 *   bench_detcoll --world 2 --op all_reduce --sizes 1K,64K,1M,256M --p2p
 *   bench_detcoll -b 8 -e 128M -f 2 -g 8 --op all_reduce   # as all_reduce_perf
 *
 * Ranks. One GPU per rank (devices 0..W-1) when the machine has at least W
 * GPUs, else W virtual ranks on device 0 (each its own stream; detcoll only:
 * NCCL needs a GPU per rank, so its rows are left out and the header says
 * so). One host thread drives every rank.
 *
 * Rows. detcoll: `auto` (the threshold table) and every forced path of the
 * op on unregistered buffers; `auto_reg` and the paths that need registered
 * windows (dc_path_needs_reg) on a second detcoll group with the same
 * buffers registered (dc_register_local; registration is per comm). The
 * path column of auto rows names the path the table picked (dc_query_path).
 * nccl: ncclCommInitAll, per-rank calls inside ncclGroupStart/End. nccl_symm
 * (NCCL >= 2.27): a second NCCL comm with the buffers registered as
 * NCCL_WIN_COLL_SYMMETRIC windows. Every row uses the same buffers, one input
 * and one output per rank: from ncclMemAlloc when nccl_symm runs, else
 * cudaMalloc. With --offset B every call's send and recv start B bytes into
 * them (tune's buffer offsets; windows still cover whole allocations), and
 * the paths that need 16-byte aligned windows are left out unless B is a
 * multiple of 16.
 *
 * Columns, as nccl-tests defines them, with W ranks:
 *   size   bytes: all_gather the whole output (W chunks), reduce_scatter the
 *          whole input (W slices), all_reduce the buffer. --sizes gives this
 *          size; each rank's chunk or slice is rounded down to 16 bytes.
 *   count  elements of the call: all_gather per rank (sendcount),
 *          reduce_scatter per rank (recvcount), all_reduce the buffer.
 *   time   median over --iters trials of the slowest rank's time per call.
 *   algbw  size / time.
 *   busbw  algbw * 2(W-1)/W for all_reduce, algbw * (W-1)/W for all_gather
 *          and reduce_scatter: bytes through each GPU's link per second.
 *   %ce    busbw / the copy engines' both-ways peer rate per direction
 *          (--p2p), else "-".
 *   #wrong wrong elements of the last output of every rank (N/A: --check 0).
 *
 * Timing. A trial runs every row once, in an order that reverses from one
 * trial to the next (so each implementation goes first in turn). A row's run
 * records event A on every rank's stream, issues the call on every rank
 * (eager) or launches every rank's graph, records event B on every stream,
 * and waits; its time is the max over ranks of B - A (CUDA clocks are never
 * compared across GPUs). Graph mode: every rank's stream is captured at once
 * (as NCCL needs in one thread) into one graph per rank of K calls (K =
 * --graph-calls, fewer above 64 MiB / K), time per call = event time / K.
 * Warm-up trials first; median, p10 and p90 over the trials. The header's
 * launch floor is a zero-length dc_delay per rank launched the same way.
 *
 * Checking. Inputs are src/fold.h's seeded streams (finite, nonzero, mixed
 * sign), rank r's stream r, uploaded once; every size reads their prefixes.
 * Before the checked call the outputs are set to NaN (all bytes 0xff), so a
 * row that writes nothing is wrong. Every element of every rank's output is
 * compared with a host reference: all_gather bytes exactly; reductions
 * against the rank-order fold (fold.h), bitwise for detcoll, for NCCL within
 * |got - fold| <= tol * W * sum |x_p| (its order is not ours). The
 * reductions' reference is folded once for the longest input: an all_reduce
 * of count c takes its first c elements, rank r of a reduce_scatter its
 * slice r. Exit status 1 on any wrong element, 2 on bad options, 77 without
 * a GPU.
 *
 * --p2p: devices 0 and 1 (two GPUs needed, else skipped): copy engine
 * (cudaMemcpyPeerAsync), an SM kernel (bench_pull.cu) pulling from the peer
 * and pushing into it, one way and both ways at once, GB/s per direction, event timed over 10 copies after a
 * warm-up; and the local device-to-device copy rate (bytes copied). */
#include <cuda_runtime_api.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_opts.h"
#include "config.h"
#include "detcoll.h"
#include "fold.h"

/* bench_opts.c is built without CUDA (its test runs on any machine), so it
 * carries the library's limits as its own constants. */
_Static_assert(BENCH_MAX_WORLD == DC_MAX_WORLD, "bench_opts.h: BENCH_MAX_WORLD");
_Static_assert(BENCH_MAX_BLOCKS == DC_MAX_BLOCKS, "bench_opts.h: BENCH_MAX_BLOCKS");

#ifdef HAVE_NCCL
#include <nccl.h>
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
#define BENCH_HAVE_SYMM 1
#endif
#endif

/* The SM copy kernel (bench_pull.cu). */
cudaError_t bench_pull(void *dst, const void *src, size_t bytes, int blocks, int threads,
                       cudaStream_t stream);

/* A bench stops at the first failed call, with the call in the message: its
 * resources go with the process, and a peer kernel left waiting is bounded
 * by the watchdog. */
#define BENCH_CUDA(call)                                                         \
  do {                                                                           \
    cudaError_t e_ = (call);                                                     \
    if (e_ != cudaSuccess) {                                                     \
      fprintf(stderr, "bench_detcoll: %s: %s\n", #call, cudaGetErrorString(e_)); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

#define BENCH_DC(call, comm)                                                   \
  do {                                                                         \
    dc_result r_ = (call);                                                     \
    if (r_ != dc_ok) {                                                         \
      fprintf(stderr, "bench_detcoll: %s: %s: %s\n", #call, dc_result_str(r_), \
              (comm) ? dc_comm_last_error(comm) : "");                         \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#ifdef HAVE_NCCL
#define BENCH_NCCL(call)                                                         \
  do {                                                                           \
    ncclResult_t n_ = (call);                                                    \
    if (n_ != ncclSuccess) {                                                     \
      fprintf(stderr, "bench_detcoll: %s: %s\n", #call, ncclGetErrorString(n_)); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)
#endif

enum {
  BENCH_MAX_VARIANTS = 2 * DC_PATH_COUNT + 2,
  BENCH_SEED = 20250901,
  BENCH_P2P_REPS = 10,
  BENCH_PULL_THREADS = 512,
};

/* NCCL's tolerance per dtype, times the world size (as the gpu backend). */
static const double bench_nccl_tol[DC_DTYPE_COUNT] = {
    [DC_DTYPE_BF16] = 1e-2, [DC_DTYPE_FP16] = 1e-2, [DC_DTYPE_FP32] = 1e-5};

/* ---- collectives: one descriptor each, nccl-tests style --------------------- */

typedef struct bench_coll bench_coll;

/* One call of a collective at one size, per rank. */
typedef struct {
  const bench_coll *coll;
  dc_dtype dtype;
  size_t size;      /* nccl-tests' size (top comment) */
  size_t count;     /* elements of the call (top comment) */
  size_t in_bytes;  /* each rank's input */
  size_t out_bytes; /* each rank's output */
} bench_call;

typedef struct bench_run bench_run;

struct bench_coll {
  dc_op op;
  const char *redop;
  int in_chunk, out_chunk; /* a rank's input (output) is size / W */
  double bus;              /* busbw = algbw * bus * (W - 1) / W */
  dc_result (*dc)(dc_comm comm, const void *send, void *recv, const bench_call *k, dc_path path,
                  cudaStream_t stream);
  /* wrong elements of rank's output got; tol 0: bitwise */
  size_t (*check)(const bench_run *R, const bench_call *k, int rank, const unsigned char *got,
                  double tol);
};

static dc_result bench_ag(dc_comm c, const void *s, void *r, const bench_call *k, dc_path p,
                          cudaStream_t st) {
  return dc_all_gather(c, s, r, k->in_bytes, p, st);
}
static dc_result bench_ar(dc_comm c, const void *s, void *r, const bench_call *k, dc_path p,
                          cudaStream_t st) {
  return dc_all_reduce(c, s, r, k->count, k->dtype, p, st);
}
static dc_result bench_rs(dc_comm c, const void *s, void *r, const bench_call *k, dc_path p,
                          cudaStream_t st) {
  return dc_reduce_scatter(c, s, r, k->count, k->dtype, p, st);
}

static size_t check_gather(const bench_run *R, const bench_call *k, int rank,
                           const unsigned char *got, double tol);
static size_t check_reduce(const bench_run *R, const bench_call *k, int rank,
                           const unsigned char *got, double tol);

static const bench_coll bench_colls[DC_OP_COUNT] = {
    /* op, redop, in_chunk, out_chunk, bus factor, detcoll call, check */
    [DC_OP_ALL_GATHER] = {DC_OP_ALL_GATHER, "none", 1, 0, 1.0, bench_ag, check_gather},
    [DC_OP_ALL_REDUCE] = {DC_OP_ALL_REDUCE, "sum", 0, 0, 2.0, bench_ar, check_reduce},
    [DC_OP_REDUCE_SCATTER] = {DC_OP_REDUCE_SCATTER, "sum", 0, 1, 1.0, bench_rs, check_reduce},
};

/* The call of coll at nccl-tests size `size`: each rank's chunk (all_gather)
 * or slice (reduce_scatter) or buffer (all_reduce) rounded down to 16 bytes.
 * 0 if nothing is left. */
static int bench_call_init(const bench_coll *c, dc_dtype t, int w, size_t size, bench_call *k) {
  const int split = c->in_chunk || c->out_chunk;
  size_t chunk = split ? size / (size_t)w : size;
  chunk -= chunk % 16;
  if (chunk == 0) return 0;
  k->coll = c;
  k->dtype = t;
  k->size = split ? chunk * (size_t)w : chunk;
  k->count = chunk / dc_dtype_size(t);
  k->in_bytes = c->in_chunk ? chunk : k->size;
  k->out_bytes = c->out_chunk ? chunk : k->size;
  return 1;
}

/* ---- the run: ranks, buffers, communicators, reference ---------------------- */

struct bench_run {
  int world, virtual_ranks, ndev;
  int dev[DC_MAX_WORLD];
  cudaStream_t st[DC_MAX_WORLD];
  cudaEvent_t a[DC_MAX_WORLD], b[DC_MAX_WORLD];
  unsigned char *in[DC_MAX_WORLD], *out[DC_MAX_WORLD]; /* device: the calls' send and recv */
  unsigned char *in_mem[DC_MAX_WORLD], *out_mem[DC_MAX_WORLD]; /* allocations: --offset before */
  size_t in_cap, out_cap; /* bytes from in and out */
  int have[BENCH_IMPL_COUNT];  /* implementation measured */
  int have_reg;                /* the registered detcoll group exists */
  int nccl_mem;                /* buffers from ncclMemAlloc */
  dc_comm dc[2][DC_MAX_WORLD]; /* [registered] */
#ifdef HAVE_NCCL
  ncclComm_t nccl[2][DC_MAX_WORLD]; /* [symmetric] */
#ifdef BENCH_HAVE_SYMM
  ncclWindow_t win[DC_MAX_WORLD][2]; /* in, out */
#endif
#endif
  unsigned char *hin[DC_MAX_WORLD]; /* host copies of the inputs */
  unsigned char *want;              /* rank-order fold of element i over the ranks' inputs */
  unsigned char *got;               /* one rank's output, downloaded */
  double ce_rate;                   /* --p2p: copy engine both ways, per direction; 0: none */
};

/* One row: an implementation on one group with one path. */
typedef struct {
  bench_impl_id impl;
  int group; /* detcoll: the registered group; nccl: the symmetric comm */
  dc_path path;
  char label[40];
  cudaGraphExec_t exec[DC_MAX_WORLD];
  double *t;
  size_t wrong;
} bench_variant;

/* all_gather: chunk p of the output is rank p's input, byte for byte
 * (compared per element of the dtype). */
static size_t check_gather(const bench_run *R, const bench_call *k, int rank,
                           const unsigned char *got, double tol) {
  const size_t es = dc_dtype_size(k->dtype), n = k->in_bytes;
  size_t wrong = 0;
  (void)rank;
  (void)tol;
  for (int p = 0; p < R->world; p++) {
    const unsigned char *g = got + (size_t)p * n, *w = R->hin[p];
    if (!memcmp(g, w, n)) continue;
    for (size_t j = 0; j < n; j += es) wrong += memcmp(g + j, w + j, es) != 0;
  }
  return wrong;
}

/* Reductions: element j of rank's output is the fold of element base + j
 * (reduce_scatter: base = rank * count): bitwise, or within tol of the
 * fp32 fold (tune_fold_elem_ok's rule) where the bits differ. */
static size_t check_reduce(const bench_run *R, const bench_call *k, int rank,
                           const unsigned char *got, double tol) {
  const size_t es = dc_dtype_size(k->dtype),
               base = k->coll->out_chunk ? (size_t)rank * k->count : 0;
  const unsigned char *w = R->want + base * es;
  const void *in[DC_MAX_WORLD];
  size_t wrong = 0;
  if (!memcmp(got, w, k->count * es)) return 0;
  for (int p = 0; p < R->world; p++) in[p] = R->hin[p];
  for (size_t j = 0; j < k->count; j++) {
    if (!memcmp(got + j * es, w + j * es, es)) continue;
    if (tol > 0) {
      const float acc = tune_fold_rank_order(k->dtype, in, R->world, base + j);
      float sum_abs = 0;
      for (int p = 0; p < R->world; p++) sum_abs += fabsf(tune_elem_up(k->dtype, in[p], base + j));
      if (fabs((double)tune_elem_up(k->dtype, got, j) - (double)acc) <= tol * (double)sum_abs)
        continue;
    }
    wrong++;
  }
  return wrong;
}

static void set_dev(int d) { BENCH_CUDA(cudaSetDevice(d)); }

/* ---- implementations: issue one call on every rank ------------------------- */

static void detcoll_issue(bench_run *R, const bench_variant *v, const bench_call *k) {
  for (int r = 0; r < R->world; r++) {
    dc_comm c = R->dc[v->group][r];
    set_dev(R->dev[r]);
    BENCH_DC(k->coll->dc(c, R->in[r], R->out[r], k, v->path, R->st[r]), c);
  }
}

static void floor_issue(bench_run *R, const bench_variant *v, const bench_call *k) {
  (void)v;
  (void)k;
  for (int r = 0; r < R->world; r++) {
    set_dev(R->dev[r]);
    BENCH_DC(dc_delay(R->st[r], 0, NULL), NULL);
  }
}

#ifdef HAVE_NCCL
static const ncclDataType_t bench_nccl_types[DC_DTYPE_COUNT] = {
    [DC_DTYPE_BF16] = ncclBfloat16, [DC_DTYPE_FP16] = ncclFloat16, [DC_DTYPE_FP32] = ncclFloat32};

static void nccl_issue(bench_run *R, const bench_variant *v, const bench_call *k) {
  const ncclDataType_t t = bench_nccl_types[k->dtype];
  BENCH_NCCL(ncclGroupStart());
  for (int r = 0; r < R->world; r++) {
    ncclComm_t c = R->nccl[v->group][r];
    if (k->coll->op == DC_OP_ALL_GATHER)
      BENCH_NCCL(ncclAllGather(R->in[r], R->out[r], k->count, t, c, R->st[r]));
    else if (k->coll->op == DC_OP_ALL_REDUCE)
      BENCH_NCCL(ncclAllReduce(R->in[r], R->out[r], k->count, t, ncclSum, c, R->st[r]));
    else
      BENCH_NCCL(ncclReduceScatter(R->in[r], R->out[r], k->count, t, ncclSum, c, R->st[r]));
  }
  BENCH_NCCL(ncclGroupEnd());
}
#define BENCH_NCCL_ISSUE nccl_issue
#else
#define BENCH_NCCL_ISSUE NULL
#endif

typedef struct {
  const char *name;
  int exact; /* checked bitwise; else within bench_nccl_tol */
  void (*issue)(bench_run *R, const bench_variant *v, const bench_call *k);
} bench_impl;

static const bench_impl bench_impls[BENCH_IMPL_COUNT] = {
    [BENCH_DETCOLL] = {"detcoll", 1, detcoll_issue},
    [BENCH_NCCL] = {"nccl", 0, BENCH_NCCL_ISSUE},
    [BENCH_NCCL_SYMM] = {"nccl_symm", 0, BENCH_NCCL_ISSUE},
    [BENCH_FLOOR] = {"floor", 1, floor_issue},
};

/* ---- the driver --------------------------------------------------------------- */

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static void sync_all(bench_run *R) {
  for (int r = 0; r < R->world; r++) BENCH_CUDA(cudaStreamSynchronize(R->st[r]));
}

/* One run of v (eager: one call; graph: every rank's graph): max over
 * ranks of B - A, in us. */
static double time_one(bench_run *R, const bench_variant *v, const bench_call *k, int graph) {
  double m = 0;
  for (int r = 0; r < R->world; r++) {
    set_dev(R->dev[r]);
    BENCH_CUDA(cudaEventRecord(R->a[r], R->st[r]));
  }
  if (graph)
    for (int r = 0; r < R->world; r++) {
      set_dev(R->dev[r]);
      BENCH_CUDA(cudaGraphLaunch(v->exec[r], R->st[r]));
    }
  else
    bench_impls[v->impl].issue(R, v, k);
  for (int r = 0; r < R->world; r++) {
    set_dev(R->dev[r]);
    BENCH_CUDA(cudaEventRecord(R->b[r], R->st[r]));
  }
  for (int r = 0; r < R->world; r++) {
    float ms = 0;
    BENCH_CUDA(cudaEventSynchronize(R->b[r]));
    BENCH_CUDA(cudaEventElapsedTime(&ms, R->a[r], R->b[r]));
    if (ms * 1e3 > m) m = ms * 1e3;
  }
  return m;
}

/* Capture calls calls of v on every rank's stream at once, one graph each. */
static void capture(bench_run *R, bench_variant *v, const bench_call *k, int calls) {
  for (int r = 0; r < R->world; r++) {
    set_dev(R->dev[r]);
    BENCH_CUDA(cudaStreamBeginCapture(R->st[r], cudaStreamCaptureModeThreadLocal));
  }
  for (int i = 0; i < calls; i++) bench_impls[v->impl].issue(R, v, k);
  /* Instantiation is refused while any stream of this thread captures. */
  cudaGraph_t g[DC_MAX_WORLD];
  for (int r = 0; r < R->world; r++) {
    set_dev(R->dev[r]);
    BENCH_CUDA(cudaStreamEndCapture(R->st[r], &g[r]));
  }
  for (int r = 0; r < R->world; r++) {
    set_dev(R->dev[r]);
    BENCH_CUDA(cudaGraphInstantiate(&v->exec[r], g[r], 0));
    BENCH_CUDA(cudaGraphDestroy(g[r]));
  }
}

/* Watchdogs and NCCL's asynchronous errors, after a measurement. */
static void health(bench_run *R) {
  for (int g = 0; g < 1 + R->have_reg; g++)
    for (int r = 0; R->have[BENCH_DETCOLL] && r < R->world; r++) {
      int missing = -1;
      if (dc_comm_status(R->dc[g][r], &missing) != dc_ok) {
        fprintf(stderr,
                "bench_detcoll: detcoll watchdog fired on rank %d (rank %d never arrived)\n", r,
                missing);
        exit(1);
      }
    }
#ifdef HAVE_NCCL
  for (int s = 0; s < 2; s++)
    for (int r = 0; R->have[BENCH_NCCL + s] && r < R->world; r++) {
      ncclResult_t async = ncclSuccess;
      BENCH_NCCL(ncclCommGetAsyncError(R->nccl[s][r], &async));
      BENCH_NCCL(async);
    }
#endif
}

/* Poison every output, run v once more and count its wrong elements. */
static size_t check_variant(bench_run *R, const bench_variant *v, const bench_call *k, int graph) {
  const double tol = bench_impls[v->impl].exact ? 0 : bench_nccl_tol[k->dtype] * R->world;
  size_t wrong = 0;
  for (int r = 0; r < R->world; r++) {
    set_dev(R->dev[r]);
    BENCH_CUDA(cudaMemsetAsync(R->out[r], 0xff, k->out_bytes, R->st[r]));
  }
  time_one(R, v, k, graph);
  health(R);
  for (int r = 0; r < R->world; r++) {
    set_dev(R->dev[r]);
    BENCH_CUDA(cudaMemcpy(R->got, R->out[r], k->out_bytes, cudaMemcpyDeviceToHost));
    wrong += k->coll->check(R, k, r, R->got, tol);
  }
  return wrong;
}

/* Measure v[0..nv) side by side at call k (NULL: the launch floor): before
 * a capture one eager call each (NCCL connects lazily, and must not while
 * capturing); warm-up trials, then iters trials, each running every variant
 * once, forward on even trials and backward on odd ones; then, if check,
 * the checked call. Fills v[i].t (sorted) and v[i].wrong. */
static void measure(const bench_opts *o, bench_run *R, bench_variant *v, int nv,
                    const bench_call *k, int graph) {
  int calls = 1;
  if (graph) {
    const size_t kcap = ((size_t)64 << 20) / (k && k->size ? k->size : 1);
    calls = kcap < 1 ? 1 : kcap < (size_t)o->graph_calls ? (int)kcap : o->graph_calls;
    for (int i = 0; i < nv; i++) bench_impls[v[i].impl].issue(R, &v[i], k);
    sync_all(R);
    for (int i = 0; i < nv; i++) capture(R, &v[i], k, calls);
  }
  for (int it = -o->warmup; it < o->iters; it++)
    for (int j = 0; j < nv; j++) {
      bench_variant *x = &v[(it & 1) ? nv - 1 - j : j];
      const double us = time_one(R, x, k, graph) / calls;
      if (it >= 0) x->t[it] = us;
    }
  health(R);
  for (int i = 0; i < nv; i++) {
    v[i].wrong = o->check && k ? check_variant(R, &v[i], k, graph) : 0;
    qsort(v[i].t, (size_t)o->iters, sizeof(double), cmp_double);
    if (graph)
      for (int r = 0; r < R->world; r++) BENCH_CUDA(cudaGraphExecDestroy(v[i].exec[r]));
  }
}

/* Whether detcoll's row of path p (DC_PATH_AUTO: auto, or with reg
 * auto_reg) in group reg runs at call k: asked for, its group there
 * (have_reg), and k within the path's limits. */
static int detcoll_row(const bench_opts *o, int have_reg, const bench_call *k, dc_path p, int reg) {
  const dc_op op = k->coll->op;
  const unsigned bit = p == DC_PATH_AUTO && reg ? 1u << BENCH_AUTO_REG : 1u << p;
  if (!(o->paths & bit) || (reg && !have_reg)) return 0;
  if (p != DC_PATH_AUTO && dc_path_needs_reg(op, p) != reg) return 0;
  if (k->in_bytes > dc_path_max_bytes(op, p)) return 0; /* refused: over the path's limit */
  /* a single block at hundreds of MiB takes seconds per call */
  return !(p == DC_PATH_SINGLE_BLOCK && k->in_bytes > ((size_t)4 << 20));
}

/* op's paths behind DC_PATH_AUTO into paths; returns how many. */
static int detcoll_paths(dc_op op, dc_path *paths) {
  paths[0] = DC_PATH_AUTO;
  return 1 + dc_op_paths(op, paths + 1);
}

/* The rows of op at call k: detcoll auto and forced paths (unregistered
 * group), auto_reg and the registration paths (registered group), nccl,
 * nccl_symm. Returns how many. */
static int variants(const bench_opts *o, bench_run *R, const bench_call *k, int graph,
                    bench_variant *v) {
  const dc_op op = k->coll->op;
  dc_path paths[DC_PATH_COUNT + 1];
  int np = R->have[BENCH_DETCOLL] ? detcoll_paths(op, paths) : 0, nv = 0;
  for (int reg = 0; reg < 2; reg++)
    for (int i = 0; i < np; i++) {
      const dc_path p = paths[i];
      if (!detcoll_row(o, R->have_reg, k, p, reg)) continue;
      memset(&v[nv], 0, sizeof(v[nv]));
      v[nv].impl = BENCH_DETCOLL;
      v[nv].group = reg;
      v[nv].path = p;
      if (p == DC_PATH_AUTO) {
        dc_path picked = DC_PATH_AUTO;
        dc_comm c = R->dc[reg][0];
        BENCH_DC(dc_query_path(c, op, k->dtype, R->in[0], R->out[0], k->in_bytes,
                               graph ? DC_MODE_GRAPH : DC_MODE_EAGER, &picked),
                 c);
        snprintf(v[nv].label, sizeof(v[nv].label), "%s=%s", reg ? "auto_reg" : "auto",
                 dc_path_name(picked));
      } else {
        snprintf(v[nv].label, sizeof(v[nv].label), "%s", dc_path_name(p));
      }
      nv++;
    }
  for (int s = 0; s < 2; s++)
    if (R->have[BENCH_NCCL + s]) {
      memset(&v[nv], 0, sizeof(v[nv]));
      v[nv].impl = BENCH_NCCL + s;
      v[nv].group = s;
      snprintf(v[nv].label, sizeof(v[nv].label), "-");
      nv++;
    }
  return nv;
}

static void print_row(FILE *f, const bench_opts *o, const bench_run *R, const bench_call *k,
                      const bench_variant *v, int graph) {
  const double med = v->t[o->iters / 2], p10 = v->t[o->iters / 10], p90 = v->t[(o->iters * 9) / 10];
  const double algbw = (double)k->size / (med * 1e3);
  const double busbw = algbw * k->coll->bus * (R->world - 1) / R->world;
  char ce[16] = "-", wrong[24] = "N/A";
  if (R->ce_rate > 0) snprintf(ce, sizeof(ce), "%.0f", 100 * busbw / R->ce_rate);
  if (o->check) snprintf(wrong, sizeof(wrong), "%zu", v->wrong);
  fprintf(f, "%-14s %12zu %11zu %5s %5s %-9s %-5s %-22s %9.2f %9.2f %9.2f %8.2f %8.2f %5s %7s\n",
          dc_op_name(k->coll->op), k->size, k->count, dc_dtype_name(k->dtype), k->coll->redop,
          bench_impls[v->impl].name, graph ? "graph" : "eager", v->label, med, p10, p90, algbw,
          busbw, ce, wrong);
  fflush(f);
}

/* ---- --p2p ------------------------------------------------------------------------ */

typedef enum { P2P_CE, P2P_SM, P2P_SM_PUSH, P2P_LOCAL } p2p_kind;

typedef struct {
  size_t bytes;
  unsigned char *src[2], *dst[2]; /* [device] */
  cudaStream_t st[2];
  cudaEvent_t e0[2], e1[2];
  int blocks[2];
} p2p_ctx;

/* The device whose stream issues (and times) a copy of `kind` into device
 * d: the source for an SM push, else d itself. */
static int p2p_issuer(p2p_kind kind, int d) { return kind == P2P_SM_PUSH ? 1 - d : d; }

/* Copies into device d: from the other device (CE, SM pull by d's SMs, SM
 * push by the other device's SMs), or within d (local); one way: d = 1
 * only; both ways: both devices at once. GB/s per direction, the mean of
 * the directions timed. */
static double p2p_rate(p2p_ctx *c, p2p_kind kind, int both) {
  double sum = 0;
  const int first = both ? 0 : 1;
  for (int pass = 0; pass < 2; pass++) { /* the first pass warms up */
    const int reps = pass ? BENCH_P2P_REPS : 1;
    for (int d = first; d < 2; d++) {
      const int s = kind == P2P_LOCAL ? d : 1 - d;
      const int l = p2p_issuer(kind, d);
      set_dev(l);
      BENCH_CUDA(cudaEventRecord(c->e0[l], c->st[l]));
      for (int i = 0; i < reps; i++) {
        if (kind == P2P_CE)
          BENCH_CUDA(cudaMemcpyPeerAsync(c->dst[d], d, c->src[s], s, c->bytes, c->st[d]));
        else if (kind == P2P_SM || kind == P2P_SM_PUSH)
          BENCH_CUDA(bench_pull(c->dst[d], c->src[s], c->bytes, c->blocks[l], BENCH_PULL_THREADS,
                                c->st[l]));
        else
          BENCH_CUDA(
              cudaMemcpyAsync(c->dst[d], c->src[d], c->bytes, cudaMemcpyDeviceToDevice, c->st[d]));
      }
      BENCH_CUDA(cudaEventRecord(c->e1[l], c->st[l]));
    }
    sum = 0;
    for (int d = first; d < 2; d++) {
      const int l = p2p_issuer(kind, d);
      float ms = 0;
      BENCH_CUDA(cudaEventSynchronize(c->e1[l]));
      BENCH_CUDA(cudaEventElapsedTime(&ms, c->e0[l], c->e1[l]));
      sum += (double)reps * (double)c->bytes / (ms * 1e6);
    }
  }
  return sum / (2 - first);
}

static void enable_peer(int from, int to) {
  cudaError_t e;
  set_dev(from);
  e = cudaDeviceEnablePeerAccess(to, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError(); /* not sticky, but would be the next launch's "last error" */
    return;
  }
  BENCH_CUDA(e);
}

/* Peer copy rates of devices 0 and 1; sets R->ce_rate. */
static void p2p(FILE *f, const bench_opts *o, bench_run *R) {
  p2p_ctx c;
  int can01 = 0, can10 = 0;
  double ce1, ce2, sm1, sm2, pu1, pu2, loc;
  if (R->ndev < 2) {
    fprintf(f, "# p2p: skipped (needs 2 GPUs, this machine has %d)\n", R->ndev);
    return;
  }
  BENCH_CUDA(cudaDeviceCanAccessPeer(&can01, 0, 1));
  BENCH_CUDA(cudaDeviceCanAccessPeer(&can10, 1, 0));
  if (!can01 || !can10) {
    fprintf(f, "# p2p: skipped (devices 0 and 1 have no peer access)\n");
    return;
  }
  enable_peer(0, 1);
  enable_peer(1, 0);
  memset(&c, 0, sizeof(c));
  c.bytes = o->p2p_bytes;
  for (int d = 0; d < 2; d++) {
    int sms = 0;
    set_dev(d);
    BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
    c.blocks[d] = 4 * sms;
    BENCH_CUDA(cudaMalloc((void **)&c.src[d], c.bytes));
    BENCH_CUDA(cudaMalloc((void **)&c.dst[d], c.bytes));
    BENCH_CUDA(cudaMemset(c.src[d], 0x3c, c.bytes));
    BENCH_CUDA(cudaStreamCreateWithFlags(&c.st[d], cudaStreamNonBlocking));
    BENCH_CUDA(cudaEventCreate(&c.e0[d]));
    BENCH_CUDA(cudaEventCreate(&c.e1[d]));
  }
  BENCH_CUDA(cudaDeviceSynchronize());
  ce1 = p2p_rate(&c, P2P_CE, 0);
  ce2 = p2p_rate(&c, P2P_CE, 1);
  sm1 = p2p_rate(&c, P2P_SM, 0);
  sm2 = p2p_rate(&c, P2P_SM, 1);
  pu1 = p2p_rate(&c, P2P_SM_PUSH, 0);
  pu2 = p2p_rate(&c, P2P_SM_PUSH, 1);
  loc = p2p_rate(&c, P2P_LOCAL, 0);
  fprintf(
      f,
      "# p2p: devices 0 and 1, %zu bytes per copy, GB/s per direction (%d copies, event timed)\n",
      c.bytes, BENCH_P2P_REPS);
  fprintf(f, "#   copy engine (cudaMemcpyPeerAsync)  one way %8.1f  both ways %8.1f\n", ce1, ce2);
  fprintf(f, "#   sm pull (%d blocks x %d, 16 B)   one way %8.1f  both ways %8.1f\n", c.blocks[1],
          BENCH_PULL_THREADS, sm1, sm2);
  fprintf(f, "#   sm push (%d blocks x %d, 16 B)   one way %8.1f  both ways %8.1f\n", c.blocks[0],
          BENCH_PULL_THREADS, pu1, pu2);
  fprintf(f, "#   local device copy (device 1)      %8.1f GB/s copied (%.1f read + written)\n", loc,
          2 * loc);
  R->ce_rate = ce2;
  for (int d = 0; d < 2; d++) {
    set_dev(d);
    BENCH_CUDA(cudaFree(c.src[d]));
    BENCH_CUDA(cudaFree(c.dst[d]));
    BENCH_CUDA(cudaStreamDestroy(c.st[d]));
    BENCH_CUDA(cudaEventDestroy(c.e0[d]));
    BENCH_CUDA(cudaEventDestroy(c.e1[d]));
  }
}

/* ---- setup and teardown ----------------------------------------------------------- */

static int op_selected(const bench_opts *o, int op) { return o->op < 0 || o->op == op; }

/* Buffer capacities over every selected call; 0 if no call fits. */
static void capacities(const bench_opts *o, bench_run *R) {
  for (int op = 0; op < DC_OP_COUNT; op++)
    for (int i = 0; op_selected(o, op) && i < o->nsizes; i++) {
      bench_call k;
      if (!bench_call_init(&bench_colls[op], o->dtype, R->world, o->sizes[i], &k)) continue;
      if (k.in_bytes > R->in_cap) R->in_cap = k.in_bytes;
      if (k.out_bytes > R->out_cap) R->out_cap = k.out_bytes;
    }
}

/* Whether any row would be measured: nccl (an NCCL implementation that
 * runs), or a detcoll row at some selected op, size and group (the
 * registered one only at offsets of whole 16 bytes). */
static int rows_planned(const bench_opts *o, int nccl) {
  const int have_reg = o->offset % 16 == 0;
  if (nccl) return 1;
  if (!(o->impls & (1u << BENCH_DETCOLL))) return 0;
  for (int op = 0; op < DC_OP_COUNT; op++)
    for (int i = 0; op_selected(o, op) && i < o->nsizes; i++) {
      bench_call k;
      dc_path paths[DC_PATH_COUNT + 1];
      if (!bench_call_init(&bench_colls[op], o->dtype, o->world, o->sizes[i], &k)) continue;
      for (int j = 0, np = detcoll_paths((dc_op)op, paths); j < np; j++)
        for (int reg = 0; reg < 2; reg++)
          if (detcoll_row(o, have_reg, &k, paths[j], reg)) return 1;
    }
  return 0;
}

/* No row to measure: said, exit 2 (before any is measured). */
static void nothing_to_measure(const bench_opts *o) {
  fprintf(stderr,
          "bench_detcoll: nothing to measure: no path of --paths runs for the ops and sizes given "
          "(%s; registered paths need an --offset of whole 16 bytes), and no NCCL runs (not asked "
          "for, not built in, or virtual ranks)\n",
          o->op < 0 ? "every op" : dc_op_name((dc_op)o->op));
  exit(2);
}

/* The sizes of a selected op that make no call (under 16 bytes a rank). */
static void sizes_left_out(FILE *f, const bench_opts *o) {
  for (int op = 0; op < DC_OP_COUNT; op++)
    for (int i = 0; op_selected(o, op) && i < o->nsizes; i++) {
      bench_call k;
      if (!bench_call_init(&bench_colls[op], o->dtype, o->world, o->sizes[i], &k))
        fprintf(f, "# %s %zu bytes: left out (under 16 bytes a rank at world %d)\n",
                dc_op_name((dc_op)op), o->sizes[i], o->world);
    }
}

/* Every device's share of the calls' buffers fits in its free memory:
 * said before anything is allocated or measured. */
static void check_memory(const bench_opts *o, const bench_run *R) {
  const int ranks = R->virtual_ranks ? R->world : 1;
  const double need = (double)ranks * (double)(R->in_cap + R->out_cap + 2 * (size_t)o->offset);
  for (int r = 0; r < (R->virtual_ranks ? 1 : R->world); r++) {
    size_t free_b = 0, total = 0;
    BENCH_CUDA(cudaSetDevice(R->dev[r]));
    BENCH_CUDA(cudaMemGetInfo(&free_b, &total));
    if (need > (double)free_b) {
      fprintf(stderr,
              "bench_detcoll: the largest size needs %.0f MiB of buffers on device %d, which has "
              "%.0f MiB free: give smaller sizes\n",
              need / 1048576, R->dev[r], (double)free_b / 1048576);
      exit(2);
    }
  }
}

/* Which implementations run, and why not (printed). */
static void choose_impls(FILE *f, const bench_opts *o, bench_run *R) {
  R->have[BENCH_DETCOLL] = (o->impls >> BENCH_DETCOLL) & 1;
  R->have_reg =
      R->have[BENCH_DETCOLL] &&
      (o->paths & ((1u << BENCH_AUTO_REG) | (1u << DC_PATH_DIRECT) | (1u << DC_PATH_COPY_ENGINE)));
  /* Registered windows serve 16-byte aligned calls only (dc_reg_windows). */
  if (R->have_reg && o->offset % 16) {
    fprintf(
        f,
        "# detcoll auto_reg, direct, copy_engine: left out (--offset %d is not a multiple of 16)\n",
        o->offset);
    R->have_reg = 0;
  }
  for (int s = 0; s < 2; s++) {
    const char *name = bench_impls[BENCH_NCCL + s].name, *why = NULL;
    if (!((o->impls >> (BENCH_NCCL + s)) & 1)) continue;
#ifndef HAVE_NCCL
    why = "built without NCCL";
#else
    int v = 0;
    BENCH_NCCL(ncclGetVersion(&v));
    if (R->virtual_ranks) why = "virtual ranks: NCCL needs one GPU per rank";
#ifndef BENCH_HAVE_SYMM
    else if (s)
      why = "built against NCCL < 2.27 (no symmetric windows)";
#endif
    else if (s && v < NCCL_VERSION(2, 27, 0))
      why = "NCCL < 2.27 at run time (no symmetric windows)";
    if (!why) fprintf(f, "# %s: NCCL %d.%d.%d\n", name, v / 10000, v / 100 % 100, v % 100);
#endif
    if (why) fprintf(f, "# %s: left out (%s)\n", name, why);
    R->have[BENCH_NCCL + s] = why == NULL;
  }
  R->nccl_mem = R->have[BENCH_NCCL_SYMM];
}

/* Seeded host inputs (stream r for rank r, in_cap bytes each), uploaded;
 * the reductions' reference folded once over them. */
static void inputs(const bench_opts *o, bench_run *R) {
  const size_t es = dc_dtype_size(o->dtype), n = R->in_cap / es;
  const void *in[DC_MAX_WORLD];
  for (int r = 0; r < R->world; r++) {
    if (!(R->hin[r] = malloc(R->in_cap))) {
      fprintf(stderr, "bench_detcoll: out of host memory (%zu bytes)\n", R->in_cap);
      exit(1);
    }
    tune_fold_fill(o->dtype, tune_fold_key(BENCH_SEED, o->dtype, r, 0), 0, n, R->hin[r]);
    set_dev(R->dev[r]);
    BENCH_CUDA(cudaMemcpy(R->in[r], R->hin[r], R->in_cap, cudaMemcpyHostToDevice));
    in[r] = R->hin[r];
  }
  if (!o->check) return;
  if (!(R->got = malloc(R->out_cap))) {
    fprintf(stderr, "bench_detcoll: out of host memory (%zu bytes)\n", R->out_cap);
    exit(1);
  }
  if (!op_selected(o, DC_OP_ALL_REDUCE) && !op_selected(o, DC_OP_REDUCE_SCATTER)) return;
  if (!(R->want = malloc(R->in_cap))) {
    fprintf(stderr, "bench_detcoll: out of host memory (%zu bytes)\n", R->in_cap);
    exit(1);
  }
  for (size_t i = 0; i < n; i++)
    tune_elem_down(o->dtype, R->want, i, tune_fold_rank_order(o->dtype, in, R->world, i));
}

static void alloc_buffer(const bench_run *R, unsigned char **p, size_t bytes) {
#ifdef HAVE_NCCL
  if (R->nccl_mem) {
    BENCH_NCCL(ncclMemAlloc((void **)p, bytes));
    return;
  }
#endif
  (void)R;
  BENCH_CUDA(cudaMalloc((void **)p, bytes));
}

static void setup(const bench_opts *o, bench_run *R) {
  dc_config cfg;
  memset(&cfg, 0, sizeof(cfg));
  cfg.staging_bytes = R->in_cap;
  cfg.threads = o->threads;
  cfg.max_blocks = o->max_blocks;
  /* whole allocations: --offset bytes, then in_cap (out_cap) */
  const size_t in_alloc = R->in_cap + (size_t)o->offset;
  const size_t out_alloc = R->out_cap + (size_t)o->offset;
  for (int r = 0; r < R->world; r++) {
    set_dev(R->dev[r]);
    BENCH_CUDA(cudaStreamCreateWithFlags(&R->st[r], cudaStreamNonBlocking));
    BENCH_CUDA(cudaEventCreate(&R->a[r]));
    BENCH_CUDA(cudaEventCreate(&R->b[r]));
    alloc_buffer(R, &R->in_mem[r], in_alloc);
    alloc_buffer(R, &R->out_mem[r], out_alloc);
    R->in[r] = R->in_mem[r] + o->offset;
    R->out[r] = R->out_mem[r] + o->offset;
  }
  /* the floor rows use detcoll's delay kernel, and a comm loads its kernels */
  BENCH_DC(dc_comm_create_local(R->world, R->dev, &cfg, R->dc[0]), NULL);
  if (R->have_reg) {
    void *ins[DC_MAX_WORLD], *outs[DC_MAX_WORLD];
    for (int r = 0; r < R->world; r++) ins[r] = R->in_mem[r], outs[r] = R->out_mem[r];
    BENCH_DC(dc_comm_create_local(R->world, R->dev, &cfg, R->dc[1]), NULL);
    BENCH_DC(dc_register_local(R->world, R->dc[1], ins, in_alloc), R->dc[1][0]);
    BENCH_DC(dc_register_local(R->world, R->dc[1], outs, out_alloc), R->dc[1][0]);
  }
#ifdef HAVE_NCCL
  for (int s = 0; s < 2; s++)
    if (R->have[BENCH_NCCL + s]) BENCH_NCCL(ncclCommInitAll(R->nccl[s], R->world, R->dev));
#ifdef BENCH_HAVE_SYMM
  if (R->have[BENCH_NCCL_SYMM]) {
    /* collective: in one thread, every rank's registration in one group */
    BENCH_NCCL(ncclGroupStart());
    for (int r = 0; r < R->world; r++) {
      BENCH_NCCL(ncclCommWindowRegister(R->nccl[1][r], R->in_mem[r], in_alloc, &R->win[r][0],
                                        NCCL_WIN_COLL_SYMMETRIC));
      BENCH_NCCL(ncclCommWindowRegister(R->nccl[1][r], R->out_mem[r], out_alloc, &R->win[r][1],
                                        NCCL_WIN_COLL_SYMMETRIC));
    }
    BENCH_NCCL(ncclGroupEnd());
  }
#endif
#endif
  inputs(o, R);
  for (int r = 0; r < R->world; r++) {
    set_dev(R->dev[r]);
    BENCH_CUDA(cudaDeviceSynchronize());
  }
}

static void teardown(bench_run *R) {
  sync_all(R);
#ifdef HAVE_NCCL
#ifdef BENCH_HAVE_SYMM
  if (R->have[BENCH_NCCL_SYMM]) {
    BENCH_NCCL(ncclGroupStart());
    for (int r = 0; r < R->world; r++)
      for (int i = 0; i < 2; i++) BENCH_NCCL(ncclCommWindowDeregister(R->nccl[1][r], R->win[r][i]));
    BENCH_NCCL(ncclGroupEnd());
  }
#endif
  for (int s = 0; s < 2; s++)
    for (int r = 0; R->have[BENCH_NCCL + s] && r < R->world; r++)
      BENCH_NCCL(ncclCommDestroy(R->nccl[s][r]));
#endif
  for (int r = 0; r < R->world; r++) {
    if (R->have_reg) {
      BENCH_DC(dc_deregister(R->dc[1][r], R->in_mem[r]), R->dc[1][r]);
      BENCH_DC(dc_deregister(R->dc[1][r], R->out_mem[r]), R->dc[1][r]);
      BENCH_DC(dc_comm_destroy(R->dc[1][r]), NULL);
    }
    BENCH_DC(dc_comm_destroy(R->dc[0][r]), NULL);
    set_dev(R->dev[r]);
    BENCH_CUDA(cudaStreamDestroy(R->st[r]));
    BENCH_CUDA(cudaEventDestroy(R->a[r]));
    BENCH_CUDA(cudaEventDestroy(R->b[r]));
#ifdef HAVE_NCCL
    if (R->nccl_mem) {
      BENCH_NCCL(ncclMemFree(R->in_mem[r]));
      BENCH_NCCL(ncclMemFree(R->out_mem[r]));
      continue;
    }
#endif
    BENCH_CUDA(cudaFree(R->in_mem[r]));
    BENCH_CUDA(cudaFree(R->out_mem[r]));
  }
  for (int r = 0; r < R->world; r++) free(R->hin[r]);
  free(R->want);
  free(R->got);
}

/* Which ranks run where. */
static void ranks_header(FILE *f, const bench_run *R) {
  if (R->virtual_ranks)
    fprintf(f, "# ranks: %d virtual ranks on device 0 (the machine has %d GPU(s), fewer than %d)\n",
            R->world, R->ndev, R->world);
  else
    fprintf(f, "# ranks: %d, one GPU per rank (devices 0..%d)\n", R->world, R->world - 1);
  for (int r = 0; r < R->world && (r == 0 || !R->virtual_ranks); r++) {
    struct cudaDeviceProp p;
    BENCH_CUDA(cudaGetDeviceProperties(&p, R->dev[r]));
    fprintf(f, "#   device %d: %s, sm %d%d, %d SMs, pci %04x:%02x:%02x\n", R->dev[r], p.name,
            p.major, p.minor, p.multiProcessorCount, p.pciDomainID, p.pciBusID, p.pciDeviceID);
  }
}

static void detcoll_header(FILE *f, const bench_opts *o, bench_run *R) {
  dc_comm_info info;
  BENCH_DC(dc_comm_get_info(R->dc[0][0], &info), R->dc[0][0]);
  fprintf(
      f, "# detcoll: topo %s, max_blocks %d, threads %d, staging %zu bytes, registered group: %s, pdl %s\n",
      dc_topo_name(info.topo), info.max_blocks, info.threads, info.staging_bytes,
      R->have_reg ? "yes" : "no", info.pdl ? "on" : "off");
  fprintf(f, "# thresholds: %s\n", dc_builtin_thresholds_provenance);
  fprintf(f, "# dtype %s, offset %d, iters %d (+%d warm-up), graph calls %d, check %s, seed %d\n",
          dc_dtype_name(o->dtype), o->offset, o->iters, o->warmup, o->graph_calls,
          o->check ? "on" : "off", BENCH_SEED);
}

/* The launch floor: a zero-length dc_delay per rank, timed like a row. */
static void launch_floor(FILE *f, const bench_opts *o, bench_run *R) {
  bench_variant v;
  double med[2] = {0, 0};
  memset(&v, 0, sizeof(v));
  v.impl = BENCH_FLOOR;
  if (!(v.t = malloc(sizeof(double) * (size_t)o->iters))) exit(1);
  for (int m = 0; m < 2; m++)
    if ((m == 0 && o->eager) || (m == 1 && o->graph)) {
      measure(o, R, &v, 1, NULL, m);
      med[m] = v.t[o->iters / 2];
    }
  fprintf(f,
          "# launch floor (zero-length dc_delay on every rank, no data): eager %.2f us, graph %.2f "
          "us per call\n",
          med[0], med[1]);
  free(v.t);
}

int main(int argc, char **argv) {
  bench_opts o;
  bench_run R;
  FILE *f = stdout;
  cudaError_t err;
  int any_wrong = 0;
  bench_parse(argc, argv, &o);
  memset(&R, 0, sizeof(R));
  R.world = o.world;
  capacities(&o, &R);
  if (R.in_cap == 0) {
    fprintf(stderr, "bench_detcoll: no size fits: every chunk rounds down to 0 bytes\n");
    return 2;
  }
  /* Judged before a GPU is touched (NCCL as asked for, if built in), again
   * once the ranks are known (NCCL needs a GPU each), and last once
   * choose_impls knows NCCL's version (symmetric windows). */
#ifdef HAVE_NCCL
  const int nccl_asked = (o.impls & ~(1u << BENCH_DETCOLL)) != 0;
#else
  const int nccl_asked = 0;
#endif
  if (!rows_planned(&o, nccl_asked)) nothing_to_measure(&o);
  if ((err = cudaGetDeviceCount(&R.ndev)) != cudaSuccess || R.ndev < 1) {
    fprintf(stderr, "bench_detcoll: no CUDA GPU (%s)\n",
            err != cudaSuccess ? cudaGetErrorString(err) : "no devices");
    return 77;
  }
  R.virtual_ranks = R.ndev < R.world;
  for (int r = 0; r < R.world; r++) R.dev[r] = R.virtual_ranks ? 0 : r;
  check_memory(&o, &R);
  if (!rows_planned(&o, nccl_asked && !R.virtual_ranks)) nothing_to_measure(&o);
  if (o.out_path && !(f = fopen(o.out_path, "w"))) {
    fprintf(stderr, "bench_detcoll: --out %s: %s\n", o.out_path, strerror(errno));
    return 2;
  }
  ranks_header(f, &R);
  sizes_left_out(f, &o);
  if (o.p2p) p2p(f, &o, &R);
  choose_impls(f, &o, &R);
  if (!rows_planned(&o, R.have[BENCH_NCCL] || R.have[BENCH_NCCL_SYMM])) nothing_to_measure(&o);
  setup(&o, &R);
  detcoll_header(f, &o, &R);
  launch_floor(f, &o, &R);
  fprintf(f, "# %-12s %12s %11s %5s %5s %-9s %-5s %-22s %9s %9s %9s %8s %8s %5s %7s\n", "op",
          "size(B)", "count", "type", "redop", "impl", "mode", "path", "time(us)", "p10(us)",
          "p90(us)", "algbw", "busbw", "%ce", "#wrong");
  for (int op = 0; op < DC_OP_COUNT; op++)
    for (int m = 0; op_selected(&o, op) && m < 2; m++) {
      if ((m == 0 && !o.eager) || (m == 1 && !o.graph)) continue;
      for (int si = 0; si < o.nsizes; si++) {
        bench_variant v[BENCH_MAX_VARIANTS];
        bench_call k;
        int nv;
        if (!bench_call_init(&bench_colls[op], o.dtype, R.world, o.sizes[si], &k)) continue;
        nv = variants(&o, &R, &k, m, v);
        for (int i = 0; i < nv; i++)
          if (!(v[i].t = malloc(sizeof(double) * (size_t)o.iters))) exit(1);
        measure(&o, &R, v, nv, &k, m);
        for (int i = 0; i < nv; i++) {
          print_row(f, &o, &R, &k, &v[i], m);
          any_wrong |= v[i].wrong != 0;
          free(v[i].t);
        }
      }
    }
  teardown(&R);
  if (any_wrong) fprintf(stderr, "bench_detcoll: wrong elements (see #wrong)\n");
  if (f != stdout) fclose(f);
  return any_wrong ? 1 : 0;
}
