/* gpu_common.h: helpers shared by the GPU tests of libdetcoll -- skip when
 * there is no GPU, seeded data (never zeros), element access through the
 * exact bf16/fp16 <-> fp32 conversions and the CPU reference fold in rank
 * order that src/fold.h shares with the gpu backend, and "cases": one
 * collective call with its per-rank buffers surrounded by guard bytes,
 * issued on every rank's stream (eagerly or while capturing) and checked bit
 * for bit. A world runs in two layouts: virtual ranks all on device 0, and
 * one rank per GPU (devices 0..world-1) where the machine has that many.
 * Buffers may be registered windows (dc_register_local) for the paths that
 * need them, and a case may run in place.
 *
 * Virtual ranks are driven from this one host thread: each rank's call goes
 * to its own non-blocking stream, and a kernel only waits for the peers'
 * kernels of the same call, which are launched right after it. */
#ifndef GPU_COMMON_H
#define GPU_COMMON_H

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "detcoll.h"
#include "fold.h"
#include "tap.h"

/* Bytes checked before and after every output. */
#define GT_GUARD 64
#define GT_PATTERN 0xA5

#define GT_CUDA(call)                                                                           \
  do {                                                                                          \
    cudaError_t e_ = (call);                                                                    \
    if (e_ != cudaSuccess) {                                                                    \
      printf("Bail out! %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      exit(1);                                                                                  \
    }                                                                                           \
  } while (0)

#define GT_DC(call)                                                                       \
  do {                                                                                    \
    dc_result r_ = (call);                                                                \
    if (r_ != dc_ok) {                                                                    \
      printf("Bail out! %s:%d: %s: %s\n", __FILE__, __LINE__, #call, dc_result_str(r_)); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

/* Number of GPUs, or exit 77 when there is none. */
static inline int gt_require_gpu(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) tap_skip_all("no CUDA GPU");
  return n;
}

/* A TAP skip line for one part of a test ("ok N # skip why"). */
static inline void gt_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void gt_skip(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("ok %d # skip ", ++tap_count);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
}

/* ---- layouts: where a world's ranks live --------------------------------- */

typedef enum {
  GT_VIRTUAL = 0, /* every rank on device 0 */
  GT_DISTINCT,    /* rank r on device r */
  GT_LAYOUT_COUNT
} gt_layout;

static inline const char *gt_layout_name(gt_layout l) {
  return l == GT_DISTINCT ? "distinct GPUs" : "virtual ranks";
}

static inline int gt_device_count(void) {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

/* dev[0..world-1] for layout. Returns 1, or 0 after a TAP skip line when the
 * machine has fewer than world GPUs for GT_DISTINCT. */
static inline int gt_layout_devices(gt_layout layout, int world, int *dev) {
  const int n = gt_device_count();
  if (layout == GT_DISTINCT && n < world) {
    gt_skip("world %d on distinct GPUs: %d GPU%s here", world, n, n == 1 ? "" : "s");
    return 0;
  }
  for (int r = 0; r < world; r++) dev[r] = layout == GT_DISTINCT ? r : 0;
  return 1;
}

/* The best layout for world: distinct GPUs 0..world-1 when there are that
 * many, else virtual ranks on device 0. Returns the layout it chose. */
static inline gt_layout gt_world_devices(int world, int *dev) {
  const gt_layout l = gt_device_count() >= world ? GT_DISTINCT : GT_VIRTUAL;
  for (int r = 0; r < world; r++) dev[r] = l == GT_DISTINCT ? r : 0;
  return l;
}

/* The worlds the GPU tests sweep on a machine of n GPUs: 2, 4, 8 and, when
 * it is none of those, n (so a 3- or 6-GPU machine runs one rank per GPU on
 * all of them), else 3: the kernels built for any world (dc_world_class 3,
 * the world read at run time, what `tune --gpus 3, 5, 6 or 7` measures) run
 * on every machine, on virtual ranks where the GPUs are fewer. Returns how
 * many (4). */
static inline int gt_worlds(int n, int *worlds) {
  int k = 0;
  worlds[k++] = 2;
  worlds[k++] = 4;
  worlds[k++] = 8;
  worlds[k++] = n > 2 && n < DC_MAX_WORLD && n != 4 ? n : 3;
  return k;
}

static inline double gt_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- seeded random numbers (splitmix64) ---------------------------------- */
static inline uint64_t gt_rand(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
/* Uniform in [lo, hi]. */
static inline uint64_t gt_range(uint64_t *s, uint64_t lo, uint64_t hi) { return lo + gt_rand(s) % (hi - lo + 1); }

/* ---- element access: the exact conversions live in src/fold.h ------------ */
static inline float gt_up(dc_dtype t, const void *p, size_t i) { return tune_elem_up(t, p, i); }
static inline void gt_down(dc_dtype t, void *p, size_t i, float v) { tune_elem_down(t, p, i, v); }
static inline int gt_is_nan(dc_dtype t, const void *p, size_t i) { return tune_elem_is_nan(t, p, i); }

/* Random data: reductions get nonzero finite values of mixed sign and
 * magnitude (so rounding matters); specials != 0 mixes in +-0, +-inf,
 * subnormals, large values and (specials == 2) NaN. all_gather gets bytes. */
static inline void gt_fill(dc_op op, dc_dtype t, void *buf, size_t count, uint64_t seed, int specials) {
  uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
  if (op == DC_OP_ALL_GATHER) {
    unsigned char *b = (unsigned char *)buf;
    for (size_t i = 0; i < count; i++) b[i] = (unsigned char)(gt_rand(&s) >> 56);
    return;
  }
  for (size_t i = 0; i < count; i++) {
    uint64_t r = gt_rand(&s);
    float v = ldexpf((float)((r >> 40) | 1) / 16777216.0f, (int)((r >> 8) & 15) - 7);
    if (r & 1) v = -v;
    if (specials) {
      static const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, 1e8f, -1e8f, 1.0f, 3.0e38f, -3.0e38f,
                                 1e-40f, -1e-40f, 6e-8f, -6e-8f, 65504.0f, 1e-45f};
      int k = (int)((r >> 4) % 20);
      if (k < (int)(sizeof(sp) / sizeof(sp[0]))) v = sp[k];
      if (specials == 2 && ((r >> 20) % 97) == 0) v = NAN;
    }
    gt_down(t, buf, i, v);
  }
}

/* ---- cases ------------------------------------------------------------------ */

typedef struct {
  int world;
  int distinct; /* 1 when no two ranks share a device */
  dc_comm comm[DC_MAX_WORLD];
  cudaStream_t st[DC_MAX_WORLD];
  int dev[DC_MAX_WORLD];
} gt_group;

/* world ranks on devices dev[] (NULL: all on device 0). */
static inline void gt_group_init(gt_group *g, int world, const int *dev, const dc_config *cfg) {
  memset(g, 0, sizeof(*g));
  g->world = world;
  g->distinct = 1;
  for (int r = 0; r < world; r++) {
    g->dev[r] = dev ? dev[r] : 0;
    for (int p = 0; p < r; p++) g->distinct &= g->dev[p] != g->dev[r];
  }
  GT_DC(dc_comm_create_local(world, g->dev, cfg, g->comm));
  for (int r = 0; r < world; r++) {
    GT_CUDA(cudaSetDevice(g->dev[r]));
    GT_CUDA(cudaStreamCreateWithFlags(&g->st[r], cudaStreamNonBlocking));
  }
  GT_CUDA(cudaSetDevice(g->dev[0]));
}

static inline void gt_group_sync(gt_group *g) {
  for (int r = 0; r < g->world; r++) GT_CUDA(cudaStreamSynchronize(g->st[r]));
}

static inline void gt_group_free(gt_group *g) {
  gt_group_sync(g);
  for (int r = 0; r < g->world; r++) {
    GT_CUDA(cudaSetDevice(g->dev[r]));
    GT_CUDA(cudaStreamDestroy(g->st[r]));
    GT_DC(dc_comm_destroy(g->comm[r]));
  }
  GT_CUDA(cudaSetDevice(g->dev[0]));
}

static inline const char *gt_group_layout(const gt_group *g) {
  return gt_layout_name(g->distinct && g->world > 1 ? GT_DISTINCT : GT_VIRTUAL);
}

/* Register bufs[r] (bytes each, one cudaMalloc per rank) as one window of
 * every rank; exits on failure. */
static inline void gt_register(gt_group *g, char *const *bufs, size_t bytes) {
  void *p[DC_MAX_WORLD];
  for (int r = 0; r < g->world; r++) p[r] = bufs[r];
  GT_DC(dc_register_local(g->world, g->comm, p, bytes));
}

static inline void gt_deregister(gt_group *g, char *const *bufs) {
  for (int r = 0; r < g->world; r++) GT_DC(dc_deregister(g->comm[r], bufs[r]));
}

/* The byte count a path that needs registration accepts near bytes: a
 * nonzero multiple of 16. */
static inline size_t gt_round16(size_t bytes) { return bytes < 16 ? 16 : (bytes + 15) / 16 * 16; }

/* One collective call and its buffers. count: all_gather bytes per rank,
 * all_reduce count, reduce_scatter recvcount. Offsets in bytes. */
typedef struct {
  dc_op op;
  dc_dtype dtype;
  dc_path path;
  size_t count, in_off, out_off;
  int specials, owned;
  int inplace; /* set before gt_case_fill: the input lies in the output buffer (see gt_case_send) */
  int reg;     /* the buffers are registered windows */
  size_t odd_off; /* set before gt_case_fill, pool cases only (<= 16): odd ranks' send and recv
                     sit this many bytes further (ranks at different alignments) */
  size_t in_bytes, out_bytes, esize;
  size_t in_cap, out_cap; /* the buffers' sizes */
  gt_group *g;
  char *d_in[DC_MAX_WORLD], *d_out[DC_MAX_WORLD]; /* allocations */
  unsigned char *h_in[DC_MAX_WORLD], *h_out;       /* host inputs, download area */
  unsigned char *ref;                               /* reference of the full result (all ranks) */
} gt_case;

static inline void gt_case_sizes(gt_case *c) {
  int w = c->g->world;
  c->esize = c->op == DC_OP_ALL_GATHER ? 1 : dc_dtype_size(c->dtype);
  c->in_bytes = c->op == DC_OP_REDUCE_SCATTER ? (size_t)w * c->count * c->esize : c->count * c->esize;
  c->out_bytes = c->op == DC_OP_ALL_GATHER ? (size_t)w * c->count : c->count * c->esize;
}

/* Rank r's offsets of send and recv in its buffers (bytes). */
static inline size_t gt_in_off(const gt_case *c, int r) { return c->in_off + (size_t)(r & 1) * c->odd_off; }
static inline size_t gt_out_off(const gt_case *c, int r) { return c->out_off + (size_t)(r & 1) * c->odd_off; }

/* Bytes of the checked area of every rank's output buffer between the
 * guards: the result, or for an in-place reduce_scatter the whole input
 * (whose other slices must keep their values). */
static inline size_t gt_case_area(const gt_case *c) {
  return c->inplace && c->op == DC_OP_REDUCE_SCATTER ? c->in_bytes : c->out_bytes;
}

/* Buffers reused by many cases (sized for the largest). */
typedef struct {
  gt_group *g;
  int reg;                /* both buffers are registered windows (gt_pool_register) */
  int carved;             /* the device buffers are a part of another pool's (gt_pool_carve) */
  size_t in_cap, out_cap; /* bytes, offsets and guards included */
  size_t in_used, out_used; /* bytes given to carved pools */
  char *d_in[DC_MAX_WORLD], *d_out[DC_MAX_WORLD];
  unsigned char *h_in[DC_MAX_WORLD], *h_out, *ref;
} gt_pool;

static inline void gt_pool_init(gt_pool *pl, gt_group *g, size_t max_in, size_t max_out) {
  memset(pl, 0, sizeof(*pl));
  pl->g = g;
  pl->in_cap = max_in + 64;
  pl->out_cap = max_out + 64 + 2 * GT_GUARD;
  for (int r = 0; r < g->world; r++) {
    GT_CUDA(cudaSetDevice(g->dev[r]));
    GT_CUDA(cudaMalloc((void **)&pl->d_in[r], pl->in_cap));
    GT_CUDA(cudaMalloc((void **)&pl->d_out[r], pl->out_cap));
    if (!(pl->h_in[r] = (unsigned char *)malloc(pl->in_cap))) exit(1);
  }
  GT_CUDA(cudaSetDevice(g->dev[0]));
  pl->h_out = (unsigned char *)malloc(pl->out_cap);
  pl->ref = (unsigned char *)malloc((size_t)g->world * pl->out_cap);
  if (!pl->h_out || !pl->ref) exit(1);
}

/* Register the pool's input and output buffers as two windows. */
static inline void gt_pool_register(gt_pool *pl) {
  gt_register(pl->g, pl->d_in, pl->in_cap);
  gt_register(pl->g, pl->d_out, pl->out_cap);
  pl->reg = 1;
}

/* A pool whose device buffers are the next unused bytes of parent's (so
 * inside parent's windows when it is registered: many cases, two windows)
 * and whose host buffers are its own. Free it with gt_pool_free before its
 * parent. */
static inline void gt_pool_carve(gt_pool *pl, gt_pool *parent, size_t max_in, size_t max_out) {
  const size_t in_cap = (max_in + 64 + 255) / 256 * 256, out_cap = (max_out + 64 + 2 * GT_GUARD + 255) / 256 * 256;
  gt_group *g = parent->g;
  if (parent->in_used + in_cap > parent->in_cap || parent->out_used + out_cap > parent->out_cap) {
    printf("Bail out! gt_pool_carve: parent pool too small\n");
    exit(1);
  }
  memset(pl, 0, sizeof(*pl));
  pl->g = g;
  pl->reg = parent->reg;
  pl->carved = 1;
  pl->in_cap = in_cap;
  pl->out_cap = out_cap;
  for (int r = 0; r < g->world; r++) {
    pl->d_in[r] = parent->d_in[r] + parent->in_used;
    pl->d_out[r] = parent->d_out[r] + parent->out_used;
    if (!(pl->h_in[r] = (unsigned char *)malloc(in_cap))) exit(1);
  }
  parent->in_used += in_cap;
  parent->out_used += out_cap;
  pl->h_out = (unsigned char *)malloc(out_cap);
  pl->ref = (unsigned char *)malloc((size_t)g->world * out_cap);
  if (!pl->h_out || !pl->ref) exit(1);
}

static inline void gt_pool_free(gt_pool *pl) {
  if (pl->reg && !pl->carved) {
    gt_deregister(pl->g, pl->d_in);
    gt_deregister(pl->g, pl->d_out);
  }
  for (int r = 0; r < pl->g->world; r++) {
    if (!pl->carved) {
      GT_CUDA(cudaFree(pl->d_in[r]));
      GT_CUDA(cudaFree(pl->d_out[r]));
    }
    free(pl->h_in[r]);
  }
  free(pl->h_out);
  free(pl->ref);
}

/* A case on its own buffers (pool NULL; free with gt_case_free; register
 * them with gt_case_register) or on a pool's (must fit; registered if the
 * pool is). An in-place case sets c->inplace afterwards; an in-place
 * reduce_scatter needs room for its whole input in the output buffer. */
static inline void gt_case_init(gt_case *c, gt_group *g, gt_pool *pool, dc_op op, dc_dtype dtype, dc_path path,
                                size_t count, size_t in_off, size_t out_off) {
  gt_pool own;
  memset(c, 0, sizeof(*c));
  c->g = g;
  c->op = op;
  c->dtype = dtype;
  c->path = path;
  c->count = count;
  c->in_off = in_off;
  c->out_off = out_off;
  gt_case_sizes(c);
  if (!pool) {
    gt_pool_init(&own, g, c->in_bytes + in_off,
                 (c->in_bytes > c->out_bytes ? c->in_bytes : c->out_bytes) + out_off);
    c->owned = 1;
    pool = &own;
  } else if (c->in_bytes + in_off + 64 > pool->in_cap || c->out_bytes + out_off + 64 + 2 * GT_GUARD > pool->out_cap) {
    printf("Bail out! case larger than its pool\n");
    exit(1);
  }
  c->reg = pool->reg;
  c->in_cap = pool->in_cap;
  c->out_cap = pool->out_cap;
  for (int r = 0; r < g->world; r++) {
    c->d_in[r] = pool->d_in[r];
    c->d_out[r] = pool->d_out[r];
    c->h_in[r] = pool->h_in[r];
  }
  c->h_out = pool->h_out;
  c->ref = pool->ref;
}

/* Register an owned case's buffers (two windows per rank). */
static inline void gt_case_register(gt_case *c) {
  if (!c->owned || c->reg) {
    printf("Bail out! gt_case_register: not an owned unregistered case\n");
    exit(1);
  }
  gt_register(c->g, c->d_in, c->in_cap);
  gt_register(c->g, c->d_out, c->out_cap);
  c->reg = 1;
}

static inline void gt_case_free(gt_case *c) {
  if (!c->owned) return;
  if (c->reg) {
    gt_deregister(c->g, c->d_in);
    gt_deregister(c->g, c->d_out);
  }
  for (int r = 0; r < c->g->world; r++) {
    GT_CUDA(cudaFree(c->d_in[r]));
    GT_CUDA(cudaFree(c->d_out[r]));
    free(c->h_in[r]);
  }
  free(c->h_out);
  free(c->ref);
}

/* In place (the forms detcoll.h allows): all_reduce send == recv;
 * all_gather send = recv + rank * bytes; reduce_scatter recv = send + rank
 * * recvcount, with send in the output buffer (so its guards are checked). */
static inline void *gt_case_recv(gt_case *c, int r) {
  char *area = c->d_out[r] + GT_GUARD + gt_out_off(c, r);
  if (c->inplace && c->op == DC_OP_REDUCE_SCATTER) return area + (size_t)r * c->out_bytes;
  return area;
}
static inline void *gt_case_send(gt_case *c, int r) {
  if (!c->inplace) return c->d_in[r] + gt_in_off(c, r);
  if (c->op == DC_OP_ALL_GATHER) return (char *)gt_case_recv(c, r) + (size_t)r * c->count;
  return c->d_out[r] + GT_GUARD + gt_out_off(c, r);
}

/* Reference results of every rank into c->ref (rank r at r * out_bytes). */
static inline void gt_case_reference(gt_case *c) {
  const int w = c->g->world;
  if (c->op == DC_OP_ALL_GATHER) {
    for (int p = 0; p < w; p++) memcpy(c->ref + (size_t)p * c->count, c->h_in[p], c->count);
    for (int r = 1; r < w; r++) memcpy(c->ref + (size_t)r * c->out_bytes, c->ref, c->out_bytes);
    return;
  }
  for (int r = 0; r < w; r++) {
    const size_t base = c->op == DC_OP_REDUCE_SCATTER ? (size_t)r * c->count : 0;
    void *out = c->ref + (size_t)r * c->out_bytes;
    if (c->op == DC_OP_ALL_REDUCE && r > 0) {
      memcpy(out, c->ref, c->out_bytes);
      continue;
    }
    const void *in[DC_MAX_WORLD];
    for (int p = 0; p < w; p++) in[p] = c->h_in[p];
    for (size_t i = 0; i < c->count; i++)
      gt_down(c->dtype, out, i, tune_fold_rank_order(c->dtype, in, w, base + i));
  }
}

/* Fresh inputs from seed, outputs filled with the guard pattern, reference. */
static inline void gt_case_fill(gt_case *c, uint64_t seed) {
  if (gt_case_area(c) + c->out_off + c->odd_off + 2 * GT_GUARD > c->out_cap ||
      c->in_bytes + c->in_off + c->odd_off > c->in_cap) {
    printf("Bail out! case larger than its buffers\n");
    exit(1);
  }
  for (int r = 0; r < c->g->world; r++) {
    gt_fill(c->op, c->dtype, c->h_in[r], c->in_bytes / c->esize, seed * 131 + (uint64_t)r, c->specials);
    GT_CUDA(cudaSetDevice(c->g->dev[r]));
    GT_CUDA(cudaMemset(c->d_out[r], GT_PATTERN, gt_case_area(c) + c->out_off + c->odd_off + 2 * GT_GUARD));
    GT_CUDA(cudaMemcpy(gt_case_send(c, r), c->h_in[r], c->in_bytes, cudaMemcpyHostToDevice));
  }
  /* cudaMemset runs on the legacy stream; rank streams are non-blocking. */
  for (int r = 0; r < c->g->world; r++) {
    GT_CUDA(cudaSetDevice(c->g->dev[r]));
    GT_CUDA(cudaDeviceSynchronize());
  }
  GT_CUDA(cudaSetDevice(c->g->dev[0]));
  gt_case_reference(c);
}

/* Issue rank r's call on its stream (eager or into a capture). */
static inline dc_result gt_case_issue(gt_case *c, int r) {
  dc_comm comm = c->g->comm[r];
  cudaStream_t st = c->g->st[r];
  if (c->op == DC_OP_ALL_GATHER) return dc_all_gather(comm, gt_case_send(c, r), gt_case_recv(c, r), c->count, c->path, st);
  if (c->op == DC_OP_ALL_REDUCE)
    return dc_all_reduce(comm, gt_case_send(c, r), gt_case_recv(c, r), c->count, c->dtype, c->path, st);
  return dc_reduce_scatter(comm, gt_case_send(c, r), gt_case_recv(c, r), c->count, c->dtype, c->path, st);
}

static inline void gt_case_name(const gt_case *c, char *buf, size_t n) {
  snprintf(buf, n, "%s %s %s%s%s world %d (%s) count %zu offs (%zu,%zu)", dc_op_name(c->op),
           c->op == DC_OP_ALL_GATHER ? "bytes" : dc_dtype_name(c->dtype), dc_path_name(c->path),
           c->reg ? " registered" : "", c->inplace ? " in-place" : "", c->g->world,
           gt_group_layout(c->g), c->count, c->in_off, c->out_off);
  if (c->odd_off) {
    const size_t len = strlen(buf);
    snprintf(buf + len, n - len, ", odd ranks +%zu", c->odd_off);
  }
}

/* Download every rank's output with guards and compare with the reference:
 * bitwise, except a NaN reference needs a NaN. Returns the number of wrong
 * bytes/elements plus touched guard bytes; prints the first few. */
static inline size_t gt_case_check(gt_case *c) {
  size_t bad = 0;
  char name[200];
  gt_case_name(c, name, sizeof(name));
  for (int r = 0; r < c->g->world; r++) {
    const size_t area = gt_case_area(c), off = gt_out_off(c, r);
    const size_t total = area + c->out_off + c->odd_off + 2 * GT_GUARD;
    const size_t res = (size_t)((unsigned char *)gt_case_recv(c, r) - (unsigned char *)c->d_out[r]);
    const unsigned char *got = c->h_out + res;
    const unsigned char *want = c->ref + (size_t)r * c->out_bytes;
    int shown = 0;
    size_t guard = 0, kept = 0;
    GT_CUDA(cudaSetDevice(c->g->dev[r]));
    GT_CUDA(cudaMemcpy(c->h_out, c->d_out[r], total, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < GT_GUARD + off; i++) guard += c->h_out[i] != GT_PATTERN;
    for (size_t i = GT_GUARD + off + area; i < total; i++)
      guard += c->h_out[i] != GT_PATTERN;
    if (guard) tap_diag("%s: rank %d: %zu guard bytes touched", name, r, guard);
    bad += guard;
    /* In-place reduce_scatter: the other ranks' slices are inputs, kept. */
    for (size_t i = 0; i < area; i++) {
      const size_t at = GT_GUARD + off + i;
      if (at >= res && at < res + c->out_bytes) continue;
      kept += c->h_out[at] != c->h_in[r][i];
    }
    if (kept) tap_diag("%s: rank %d: %zu input bytes outside its slice changed", name, r, kept);
    bad += kept;
    if (c->op == DC_OP_ALL_GATHER) {
      for (size_t i = 0; i < c->out_bytes; i++)
        if (got[i] != want[i]) {
          if (shown++ < 3) tap_diag("%s: rank %d byte %zu got %02x want %02x", name, r, i, got[i], want[i]);
          bad++;
        }
      continue;
    }
    for (size_t i = 0; i < c->count; i++) {
      int ok = gt_is_nan(c->dtype, want, i) ? gt_is_nan(c->dtype, got, i)
                                            : memcmp(got + i * c->esize, want + i * c->esize, c->esize) == 0;
      if (!ok) {
        if (shown++ < 3)
          tap_diag("%s: rank %d element %zu got %.9g want %.9g", name, r, i, (double)gt_up(c->dtype, got, i),
                   (double)gt_up(c->dtype, want, i));
        bad++;
      }
    }
  }
  GT_CUDA(cudaSetDevice(c->g->dev[0]));
  return bad;
}

/* Every rank's output buffer (area and guards) still all guard pattern? */
static inline int gt_case_untouched(gt_case *c) {
  for (int r = 0; r < c->g->world; r++) {
    const size_t total = gt_case_area(c) + c->out_off + c->odd_off + 2 * GT_GUARD;
    GT_CUDA(cudaSetDevice(c->g->dev[r]));
    GT_CUDA(cudaMemcpy(c->h_out, c->d_out[r], total, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < total; i++)
      if (c->h_out[i] != GT_PATTERN) {
        GT_CUDA(cudaSetDevice(c->g->dev[0]));
        return 0;
      }
  }
  GT_CUDA(cudaSetDevice(c->g->dev[0]));
  return 1;
}

/* Every rank's watchdog status must be clean. Returns 0 if so. */
static inline int gt_group_status(gt_group *g) {
  int bad = 0;
  for (int r = 0; r < g->world; r++) {
    int missing = -1;
    dc_result s = dc_comm_status(g->comm[r], &missing);
    if (s != dc_ok) {
      tap_diag("rank %d status %s (missing rank %d)", r, dc_result_str(s), missing);
      bad++;
    }
  }
  return bad;
}

/* Issue on every rank eagerly, wait, check. Returns wrong count (or a large
 * number if a call or the watchdog failed). */
static inline size_t gt_case_run(gt_case *c, uint64_t seed) {
  gt_case_fill(c, seed);
  for (int r = 0; r < c->g->world; r++) {
    dc_result res = gt_case_issue(c, r);
    if (res != dc_ok) {
      tap_diag("issue on rank %d: %s: %s", r, dc_result_str(res), dc_comm_last_error(c->g->comm[r]));
      gt_group_sync(c->g);
      return (size_t)1 << 40;
    }
  }
  gt_group_sync(c->g);
  if (gt_group_status(c->g)) return (size_t)1 << 40;
  return gt_case_check(c);
}

/* A call that must be refused: issue on every rank, each must return want
 * (and, for dc_err_arg, a message), then the output buffers must be
 * untouched (a not in-place case: its output was never written) and the
 * watchdogs clean -- nothing was launched. Returns the number of failures. */
static inline size_t gt_case_refused(gt_case *c, uint64_t seed, dc_result want) {
  size_t bad = 0;
  char name[200];
  gt_case_name(c, name, sizeof(name));
  gt_case_fill(c, seed);
  for (int r = 0; r < c->g->world; r++) {
    dc_result res = gt_case_issue(c, r);
    if (res != want || (want != dc_ok && dc_comm_last_error(c->g->comm[r])[0] == '\0')) {
      tap_diag("%s: rank %d returned %s (%s), want %s with a message", name, r, dc_result_str(res),
               dc_comm_last_error(c->g->comm[r]), dc_result_str(want));
      bad++;
    }
  }
  gt_group_sync(c->g);
  if (!c->inplace && !gt_case_untouched(c)) {
    tap_diag("%s: a refused call wrote output bytes", name);
    bad++;
  }
  bad += (size_t)gt_group_status(c->g);
  return bad;
}

/* count (all_gather bytes, all_reduce count, reduce_scatter recvcount)
 * clipped so that the bytes per rank stay within path's own size limit
 * (dc_path_max_bytes: the push path takes small messages only). */
static inline size_t gt_count_fit(dc_op op, dc_dtype dt, dc_path path, size_t count, int world) {
  const size_t es = op == DC_OP_ALL_GATHER ? 1 : dc_dtype_size(dt);
  const size_t unit = op == DC_OP_REDUCE_SCATTER ? es * (size_t)world : es;
  const uint64_t max = dc_path_max_bytes(op, path);
  return (uint64_t)count * unit > max ? (size_t)(max / unit) : count;
}

/* Counts for the sizes the tests sweep: all_gather bytes and all_reduce
 * counts as given; reduce_scatter keeps each rank's input near the size. */
static inline size_t gt_count_for(dc_op op, size_t size, int world) {
  if (op == DC_OP_REDUCE_SCATTER && size > 4096) return size / (size_t)world;
  return size;
}

/* count rounded up so that the bytes of one rank's result (all_gather:
 * bytes per rank; reduce_scatter: one slice) are a nonzero multiple of 16, as
 * the paths that need registration require. */
static inline size_t gt_count_reg(dc_op op, dc_dtype dt, size_t count) {
  const size_t es = op == DC_OP_ALL_GATHER ? 1 : dc_dtype_size(dt);
  return gt_round16(count * es) / es;
}

#endif /* GPU_COMMON_H */
