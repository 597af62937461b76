/* bench_detcoll.c: times every forced path of libdetcoll per size with
 * virtual ranks on one GPU (device 0), eager and CUDA-graph mode, and
 * writes a table:  op dtype world mode path bytes median_us p10_us p90_us GB/s
 *
 * Timing. Eager: events around each rank's call on its own stream; one host
 * thread issues all ranks' calls, so a call's time includes waiting for the
 * later ranks to be launched (as real ranks wait for their slowest peer).
 * Graph: each rank captures its OWN stream into its own graph of K calls
 * (one graph forking all ranks costs ~9 us of scheduling per call); a
 * repetition launches every rank's graph between events (K shrinks above
 * 64 MiB / K bytes, down to 1); time per call =
 * max over ranks of event time / K. Median, p10 and p90 over >= 100
 * repetitions, after warm-up. The first rows ("floor empty_kernel") time a
 * zero-length dc_delay launched the same way: what W ranks on one GPU cost
 * before any barrier or data movement.
 *
 * Bytes counted (GB/s column): bytes the path's kernels read plus write in
 * device memory, summed over ranks, per second; n = bytes per rank:
 *   all_gather      W * (2n + 2Wn)     stage n->frame, read W frames, write W chunks
 *   all_reduce 1-shot / single-block  W * (W + 3) n   stage 2n, read W n, write n
 *   all_reduce 2-shot W * 5n            stage 2n, fold n, write 2n/W, gather 2(W-1)n/W
 *   all_reduce push   W * (3 + 6(W-1)) n  read input twice, per peer push, poll
 *                                        and clear 2n of lines, write n
 *   reduce_scatter  W * (3n + n/W)      stage 2n, read W slices n/W, write n/W
 * On one GPU every byte goes through the same HBM, so this compares with
 * the device copy rate (printed first, also read plus written). */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detcoll.h"

#define BENCH_CUDA(call)                                                                        \
  do {                                                                                          \
    cudaError_t e_ = (call);                                                                    \
    if (e_ != cudaSuccess) {                                                                    \
      fprintf(stderr, "bench_detcoll: %s: %s\n", #call, cudaGetErrorString(e_));               \
      exit(1);                                                                                  \
    }                                                                                           \
  } while (0)

#define BENCH_DC(call, comm)                                                                                  \
  do {                                                                                                        \
    dc_result r_ = (call);                                                                                    \
    if (r_ != dc_ok) {                                                                                        \
      fprintf(stderr, "bench_detcoll: %s: %s: %s\n", #call, dc_result_str(r_), dc_comm_last_error(comm)); \
      exit(1);                                                                                                \
    }                                                                                                         \
  } while (0)

typedef struct {
  int world, iters, graph_calls, warmup, threads, max_blocks;
  int op; /* -1: all */
  dc_dtype dtype;
  int eager, graph;
  size_t sizes[64];
  int nsizes;
  FILE *out;
} bench_opts;

typedef struct {
  int world;
  dc_comm comm[DC_MAX_WORLD];
  cudaStream_t st[DC_MAX_WORLD];
  cudaEvent_t a[DC_MAX_WORLD], b[DC_MAX_WORLD];
  char *in[DC_MAX_WORLD], *out[DC_MAX_WORLD];
  uint64_t *delay_ns[DC_MAX_WORLD]; /* dc_delay's measured delay (floor rows) */
} bench_group;

static size_t parse_size(const char *s) {
  char *end;
  double v = strtod(s, &end);
  if (*end == 'K' || *end == 'k') v *= 1024;
  if (*end == 'M' || *end == 'm') v *= 1024 * 1024;
  if (*end == 'G' || *end == 'g') v *= 1024.0 * 1024 * 1024;
  return (size_t)v;
}

static void usage(void) {
  fprintf(stderr,
          "usage: bench_detcoll [--world W] [--op all_gather|all_reduce|reduce_scatter] [--dtype bf16|fp16|fp32]\n"
          "                     [--sizes 1K,64K,...] [--iters N>=100] [--mode eager|graph|both] [--graph-calls K]\n"
          "                     [--threads 512|1024] [--max-blocks B] [--out FILE]\n");
  exit(2);
}

static void parse(int argc, char **argv, bench_opts *o) {
  memset(o, 0, sizeof(*o));
  o->world = 8;
  o->iters = 100;
  o->graph_calls = 20;
  o->warmup = 10;
  o->op = -1;
  o->dtype = DC_DTYPE_BF16;
  o->eager = o->graph = 1;
  o->out = stdout;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) usage();
    i++;
    if (!strcmp(a, "--world")) o->world = atoi(v);
    else if (!strcmp(a, "--op")) { if ((o->op = dc_op_parse(v)) < 0) usage(); }
    else if (!strcmp(a, "--dtype")) { int d = dc_dtype_parse(v); if (d < 0) usage(); o->dtype = (dc_dtype)d; }
    else if (!strcmp(a, "--iters")) o->iters = atoi(v);
    else if (!strcmp(a, "--graph-calls")) o->graph_calls = atoi(v);
    else if (!strcmp(a, "--threads")) o->threads = atoi(v);
    else if (!strcmp(a, "--max-blocks")) o->max_blocks = atoi(v);
    else if (!strcmp(a, "--mode")) {
      o->eager = !strcmp(v, "eager") || !strcmp(v, "both");
      o->graph = !strcmp(v, "graph") || !strcmp(v, "both");
      if (!o->eager && !o->graph) usage();
    } else if (!strcmp(a, "--sizes")) {
      char *dup = strdup(v), *save = NULL;
      for (char *t = strtok_r(dup, ",", &save); t && o->nsizes < 64; t = strtok_r(NULL, ",", &save))
        o->sizes[o->nsizes++] = parse_size(t);
      free(dup);
    } else if (!strcmp(a, "--out")) {
      if (!(o->out = fopen(v, "w"))) { perror(v); exit(1); }
    } else usage();
  }
  if (o->world < 1 || o->world > DC_MAX_WORLD || o->iters < 100 || o->graph_calls < 1) usage();
  if (o->nsizes == 0)
    for (size_t s = 1024; s <= ((size_t)256 << 20); s *= 4) o->sizes[o->nsizes++] = s;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

/* Bytes moved per call, all ranks together (see the top comment). */
static double moved_bytes(dc_op op, dc_path path, int w, double n) {
  if (op == DC_OP_ALL_GATHER) return w * (2 * n + 2 * w * n);
  if (op == DC_OP_REDUCE_SCATTER) return w * (3 * n + n / w);
  if (path == DC_PATH_TWO_SHOT) return w * 5 * n;
  if (path == DC_PATH_PUSH) return w * (3 + 6 * (w - 1)) * n;
  return (double)w * (w + 3) * n;
}

/* API count for bytes per rank (0 if the size does not fit the dtype). */
static size_t api_count(dc_op op, dc_dtype dt, int w, size_t bytes) {
  size_t es = dc_dtype_size(dt);
  if (op == DC_OP_ALL_GATHER) return bytes;
  if (op == DC_OP_ALL_REDUCE) return bytes / es;
  return bytes / es / (size_t)w;
}

/* BENCH_FLOOR: a zero-length dc_delay per rank and call -- an almost empty
 * kernel launched exactly like a collective, so its row is the launch and
 * scheduling floor of W ranks sharing one GPU, with no barrier and no data. */
#define BENCH_FLOOR DC_OP_COUNT

static dc_result issue(bench_group *g, int r, dc_op op, dc_dtype dt, dc_path path, size_t count) {
  if ((int)op == BENCH_FLOOR) return dc_delay(g->st[r], 0, g->delay_ns[r]);
  if (op == DC_OP_ALL_GATHER) return dc_all_gather(g->comm[r], g->in[r], g->out[r], count, path, g->st[r]);
  if (op == DC_OP_ALL_REDUCE) return dc_all_reduce(g->comm[r], g->in[r], g->out[r], count, dt, path, g->st[r]);
  return dc_reduce_scatter(g->comm[r], g->in[r], g->out[r], count, dt, path, g->st[r]);
}

/* Max over ranks of event time, in us. */
static double max_elapsed(bench_group *g) {
  double m = 0;
  for (int r = 0; r < g->world; r++) {
    float ms = 0;
    BENCH_CUDA(cudaEventSynchronize(g->b[r]));
    BENCH_CUDA(cudaEventElapsedTime(&ms, g->a[r], g->b[r]));
    if (ms * 1e3 > m) m = ms * 1e3;
  }
  return m;
}

static void check_status(bench_group *g) {
  for (int r = 0; r < g->world; r++) {
    int missing = -1;
    if (dc_comm_status(g->comm[r], &missing) != dc_ok) {
      fprintf(stderr, "bench_detcoll: watchdog fired on rank %d (rank %d missing)\n", r, missing);
      exit(1);
    }
  }
}

static void run_one(bench_opts *o, bench_group *g, dc_op op, dc_path path, size_t bytes, int graph) {
  const size_t count = api_count(op, o->dtype, g->world, bytes);
  double *t = (double *)malloc(sizeof(double) * (size_t)o->iters);
  cudaGraphExec_t exec[DC_MAX_WORLD];
  /* Graphs of K calls, fewer for big messages (K x time stays bounded). */
  const size_t kcap = ((size_t)64 << 20) / (bytes ? bytes : 1);
  const int k = !graph ? 1 : kcap < 1 ? 1 : kcap < (size_t)o->graph_calls ? (int)kcap : o->graph_calls;
  if (!t) exit(1);
  if (graph) {
    for (int r = 0; r < g->world; r++) {
      cudaGraph_t gr;
      BENCH_CUDA(cudaStreamBeginCapture(g->st[r], cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < k; i++) BENCH_DC(issue(g, r, op, o->dtype, path, count), g->comm[r]);
      BENCH_CUDA(cudaStreamEndCapture(g->st[r], &gr));
      BENCH_CUDA(cudaGraphInstantiate(&exec[r], gr, 0));
      BENCH_CUDA(cudaGraphDestroy(gr));
    }
  }
  for (int it = -o->warmup; it < o->iters; it++) {
    for (int r = 0; r < g->world; r++) {
      BENCH_CUDA(cudaEventRecord(g->a[r], g->st[r]));
      if (graph)
        BENCH_CUDA(cudaGraphLaunch(exec[r], g->st[r]));
      else
        BENCH_DC(issue(g, r, op, o->dtype, path, count), g->comm[r]);
      BENCH_CUDA(cudaEventRecord(g->b[r], g->st[r]));
    }
    {
      double us = max_elapsed(g) / k;
      if (it >= 0) t[it] = us;
    }
  }
  check_status(g);
  if (graph)
    for (int r = 0; r < g->world; r++) BENCH_CUDA(cudaGraphExecDestroy(exec[r]));
  qsort(t, (size_t)o->iters, sizeof(double), cmp_double);
  {
    double med = t[o->iters / 2], p10 = t[o->iters / 10], p90 = t[(o->iters * 9) / 10];
    const int floor = (int)op == BENCH_FLOOR;
    fprintf(o->out, "%-14s %-5s %5d %-5s %-12s %12zu %10.2f %10.2f %10.2f %9.1f\n",
            floor ? "floor" : dc_op_name(op),
            floor || op == DC_OP_ALL_GATHER ? "bytes" : dc_dtype_name(o->dtype), g->world,
            graph ? "graph" : "eager", floor ? "empty_kernel" : dc_path_name(path), bytes, med, p10, p90,
            floor ? 0.0 : moved_bytes(op, path, g->world, (double)bytes) / (med * 1e3));
    fflush(o->out);
  }
  free(t);
}

/* Device-to-device copy rate (read + written), the bandwidth reference. */
static double copy_rate(void) {
  const size_t n = (size_t)1 << 30;
  char *a, *b;
  cudaEvent_t e0, e1;
  float ms = 0;
  BENCH_CUDA(cudaMalloc((void **)&a, n));
  BENCH_CUDA(cudaMalloc((void **)&b, n));
  BENCH_CUDA(cudaEventCreate(&e0));
  BENCH_CUDA(cudaEventCreate(&e1));
  BENCH_CUDA(cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice));
  BENCH_CUDA(cudaEventRecord(e0, 0));
  for (int i = 0; i < 10; i++) BENCH_CUDA(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, 0));
  BENCH_CUDA(cudaEventRecord(e1, 0));
  BENCH_CUDA(cudaEventSynchronize(e1));
  BENCH_CUDA(cudaEventElapsedTime(&ms, e0, e1));
  BENCH_CUDA(cudaFree(a));
  BENCH_CUDA(cudaFree(b));
  BENCH_CUDA(cudaEventDestroy(e0));
  BENCH_CUDA(cudaEventDestroy(e1));
  return 10.0 * 2.0 * (double)n / (ms * 1e6);
}

int main(int argc, char **argv) {
  bench_opts o;
  bench_group g;
  dc_config cfg;
  dc_comm_info info;
  size_t maxb = 0;
  int dev[DC_MAX_WORLD] = {0}, ndev = 0;
  parse(argc, argv, &o);
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
    fprintf(stderr, "bench_detcoll: no CUDA GPU\n");
    return 77;
  }
  for (int i = 0; i < o.nsizes; i++) maxb = o.sizes[i] > maxb ? o.sizes[i] : maxb;
  memset(&cfg, 0, sizeof(cfg));
  cfg.staging_bytes = maxb;
  cfg.threads = o.threads;
  cfg.max_blocks = o.max_blocks;
  memset(&g, 0, sizeof(g));
  g.world = o.world;
  BENCH_CUDA(cudaSetDevice(0));
  fprintf(o.out, "# device copy rate: %.1f GB/s (read + written)\n", copy_rate());
  BENCH_DC(dc_comm_create_local(o.world, dev, &cfg, g.comm), NULL);
  BENCH_DC(dc_comm_get_info(g.comm[0], &info), g.comm[0]);
  fprintf(o.out, "# world %d virtual ranks on device 0 (sm %d), max_blocks %d, threads %d, thresholds: %s\n", o.world,
          info.sm, info.max_blocks, info.threads, dc_builtin_thresholds_provenance);
  for (int r = 0; r < o.world; r++) {
    BENCH_CUDA(cudaStreamCreateWithFlags(&g.st[r], cudaStreamNonBlocking));
    BENCH_CUDA(cudaEventCreate(&g.a[r]));
    BENCH_CUDA(cudaEventCreate(&g.b[r]));
    BENCH_CUDA(cudaMalloc((void **)&g.in[r], maxb));
    BENCH_CUDA(cudaMalloc((void **)&g.out[r], maxb * (size_t)o.world));
    BENCH_CUDA(cudaMemset(g.in[r], 0x3c, maxb)); /* finite nonzero bf16/fp16/fp32 patterns */
    BENCH_CUDA(cudaMalloc((void **)&g.delay_ns[r], sizeof(uint64_t)));
  }
  BENCH_CUDA(cudaDeviceSynchronize());
  fprintf(o.out, "# %-12s %-5s %5s %-5s %-12s %12s %10s %10s %10s %9s\n", "op", "dtype", "world", "mode", "path",
          "bytes", "median_us", "p10_us", "p90_us", "GB/s");
  for (int m = 0; m < 2; m++)
    if ((m == 0 && o.eager) || (m == 1 && o.graph)) run_one(&o, &g, (dc_op)BENCH_FLOOR, DC_PATH_AUTO, 0, m);
  for (int op = 0; op < DC_OP_COUNT; op++) {
    dc_path paths[DC_PATH_COUNT];
    int np;
    if (o.op >= 0 && op != o.op) continue;
    np = dc_op_paths((dc_op)op, paths);
    for (int m = 0; m < 2; m++) {
      if ((m == 0 && !o.eager) || (m == 1 && !o.graph)) continue;
      for (int pi = 0; pi < np; pi++)
        for (int si = 0; si < o.nsizes; si++) {
          if (api_count((dc_op)op, o.dtype, o.world, o.sizes[si]) == 0) continue;
          if (dc_path_needs_reg((dc_op)op, paths[pi])) continue;
          /* a single block at hundreds of MiB takes seconds per call */
          if (paths[pi] == DC_PATH_SINGLE_BLOCK && o.sizes[si] > ((size_t)4 << 20)) continue;
          if (o.sizes[si] > dc_path_max_bytes((dc_op)op, paths[pi])) continue; /* refused: over the path's limit */
          run_one(&o, &g, (dc_op)op, paths[pi], o.sizes[si], m);
        }
    }
  }
  for (int r = 0; r < o.world; r++) {
    BENCH_CUDA(cudaStreamSynchronize(g.st[r]));
    BENCH_CUDA(cudaStreamDestroy(g.st[r]));
    BENCH_CUDA(cudaEventDestroy(g.a[r]));
    BENCH_CUDA(cudaEventDestroy(g.b[r]));
    BENCH_CUDA(cudaFree(g.in[r]));
    BENCH_CUDA(cudaFree(g.out[r]));
    BENCH_CUDA(cudaFree(g.delay_ns[r]));
    BENCH_DC(dc_comm_destroy(g.comm[r]), NULL);
  }
  if (o.out != stdout) fclose(o.out);
  return 0;
}
