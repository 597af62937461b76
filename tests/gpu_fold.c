/* gpu_fold.c: the gpu backend's fill and check on the GPU (gpu_fold.cu)
 * against fold.h's host code. The fill equals tune_fold_fill bit for bit.
 * For every op and dtype, worlds 1, 3 and 8 and two offsets, an output built
 * on the host (inputs from tune_fold_fill, the rank-order fold of the
 * determinism contract) passes the check; then seeded random elements (the
 * first and last among them) are spoilt in their lowest bit and two guard
 * bytes touched, and the check must count exactly those, name the first,
 * and agree with the host check element by element; NCCL's tolerance lets
 * the last-bit changes pass and fails a large error. One output of 3M
 * elements exercises the grid-stride loop. Skips (77) without a GPU. */
#include "gpu_common.h"
#include "gpu_fold.h"
#include "tune.h"

enum { SPOIL = 9 };

static unsigned long long *d_counts;
static unsigned char *d_buf;
static size_t d_cap;

static void fill_matches(void) {
  const size_t n = ((size_t)1 << 20) + 3;
  for (int t = 0; t < DC_DTYPE_COUNT; t++) {
    size_t es = dc_dtype_size((dc_dtype)t);
    unsigned char *want = malloc(n * es), *got = malloc(n * es);
    uint64_t key = tune_fold_key(11, (dc_dtype)t, 2, 1);
    if (want == NULL || got == NULL) exit(1);
    tune_fold_fill((dc_dtype)t, key, 0, n, want);
    GT_CUDA(tune_gpu_fill((dc_dtype)t, key, d_buf, n, NULL));
    GT_CUDA(cudaMemcpy(got, d_buf, n * es, cudaMemcpyDeviceToHost));
    tap_ok(memcmp(want, got, n * es) == 0, "%s: the GPU fill equals the host fill (%zu elements)",
           dc_dtype_name((dc_dtype)t), n);
    free(want);
    free(got);
  }
}

/* A right output of rank `rank` for ref (inputs of `len` elements per
 * rank), built from host-filled inputs and the rank-order fold. */
static void build(const tune_fold_ref *ref, size_t n, size_t len, unsigned char *out) {
  size_t es = dc_dtype_size(ref->dtype);
  void *in[TUNE_FOLD_MAX_WORLD];
  for (int p = 0; p < ref->world; p++) {
    if ((in[p] = malloc(len * es)) == NULL) exit(1);
    tune_fold_fill(ref->dtype, ref->keys[p], 0, len, in[p]);
  }
  if (ref->op == DC_OP_ALL_GATHER) {
    for (size_t j = 0; j < n; j++)
      out[j] = ((const unsigned char *)in[j / ref->chunk])[ref->in_first + j % ref->chunk];
  } else {
    size_t first =
        ref->in_first + (ref->op == DC_OP_REDUCE_SCATTER ? (size_t)ref->rank * ref->chunk : 0);
    for (size_t j = 0; j < n; j++)
      tune_elem_down(
          ref->dtype, out, j,
          tune_fold_rank_order(ref->dtype, (const void *const *)in, ref->world, first + j));
  }
  for (int p = 0; p < ref->world; p++) free(in[p]);
}

/* Checks on the GPU whatever the host buffer holds. */
static tune_gpu_check_counts gpu_check(const tune_fold_ref *ref, const unsigned char *host,
                                       size_t head, size_t n, size_t es) {
  tune_gpu_check_counts c;
  GT_CUDA(cudaMemcpy(d_buf, host, head + n * es + GT_GUARD, cudaMemcpyHostToDevice));
  GT_CUDA(tune_gpu_check(ref, d_buf, head, n, es, GT_GUARD, GT_PATTERN, d_counts, NULL, &c));
  return c;
}

static size_t host_wrong(const tune_fold_ref *ref, const unsigned char *out, size_t n, size_t es) {
  size_t bad = 0;
  for (size_t j = 0; j < n; j++) bad += !tune_fold_elem_ok(ref, j, out + j * es);
  return bad;
}

static void one(dc_op op, dc_dtype t, int world, int rank, size_t count, size_t off,
                tune_rng *rng) {
  tune_fold_ref ref = {
      .op = op, .dtype = t, .world = world, .rank = rank, .chunk = count, .tol = 0};
  size_t es = op == DC_OP_ALL_GATHER ? 1 : dc_dtype_size(t);
  size_t n = op == DC_OP_ALL_GATHER       ? count * (size_t)world
             : op == DC_OP_REDUCE_SCATTER ? count / (size_t)world
                                          : count;
  size_t len = op == DC_OP_ALL_GATHER ? (off + count) / dc_dtype_size(t) + 1 : off + count;
  size_t head = GT_GUARD + off * es, total = head + n * es + GT_GUARD;
  if (op == DC_OP_REDUCE_SCATTER) ref.chunk = n;
  ref.in_first = off;
  for (int p = 0; p < world; p++) ref.keys[p] = tune_fold_key(3, t, p, 1);
  unsigned char *h = malloc(total);
  if (h == NULL || total > d_cap) exit(1);
  memset(h, GT_PATTERN, total);
  build(&ref, n, len, h + head);
  tune_gpu_check_counts c = gpu_check(&ref, h, head, n, es);
  char what[128];
  snprintf(what, sizeof(what), "%s %s world %d rank %d, %zu elements, offset %zu", dc_op_name(op),
           dc_dtype_name(t), world, rank, n, off);
  tap_ok(c.guard == 0 && c.wrong == 0 && host_wrong(&ref, h + head, n, es) == 0,
         "%s: a right output passes", what);

  /* Spoil distinct elements: the first, the last, and seeded others. */
  size_t pos[SPOIL], k = 0, lowest = n;
  for (size_t tries = 0; k < SPOIL && k < n && tries < 1000; tries++) {
    size_t j = k == 0 ? 0 : k == 1 ? n - 1 : (size_t)(tune_rng_next(rng) % n), dup = 0;
    for (size_t i = 0; i < k; i++) dup |= pos[i] == j;
    if (dup) continue;
    pos[k++] = j;
    h[head + j * es] ^= 1;
    if (j < lowest) lowest = j;
  }
  h[head - 1] ^= 0xFF;
  h[head + n * es + GT_GUARD - 1] ^= 0xFF;
  c = gpu_check(&ref, h, head, n, es);
  tap_ok(
      c.guard == 2 && c.wrong == k && c.first == lowest && host_wrong(&ref, h + head, n, es) == k,
      "%s: %zu spoilt elements and 2 guard bytes found (GPU %llu, first %llu, guard %llu)", what, k,
      c.wrong, c.first, c.guard);

  if (op != DC_OP_ALL_GATHER) {
    ref.tol = (t == DC_DTYPE_FP32 ? 1e-5 : 1e-2) * world;
    c = gpu_check(&ref, h, head, n, es);
    /* Far beyond any sum of world inputs of magnitude below 16. */
    tune_elem_down(t, h + head, n - 1, 30000.0f);
    tune_gpu_check_counts c2 = gpu_check(&ref, h, head, n, es);
    tap_ok(c.wrong == 0 && c2.wrong == 1 && c2.first == n - 1,
           "%s: the tolerance passes last-bit changes (%llu wrong) and fails a large error (%llu "
           "wrong)",
           what, c.wrong, c2.wrong);
  }
  free(h);
}

int main(void) {
  gt_require_gpu();
  d_cap = ((size_t)3 << 20) * 4 + 4 * GT_GUARD + 4096;
  GT_CUDA(cudaMalloc((void **)&d_buf, d_cap));
  GT_CUDA(cudaMalloc((void **)&d_counts, TUNE_GPU_CHECK_WORDS * sizeof(*d_counts)));
  GT_CUDA(tune_gpu_fold_preload());
  fill_matches();
  tune_rng rng;
  tune_rng_seed(&rng, 20261129);
  static const int worlds[] = {1, 3, 8};
  for (int op = 0; op < DC_OP_COUNT; op++)
    for (int t = 0; t < DC_DTYPE_COUNT; t++)
      for (int w = 0; w < 3; w++)
        for (size_t off = 0; off < 6; off += 5)
          one((dc_op)op, (dc_dtype)t, worlds[w], worlds[w] - 1, 1000 * (size_t)worlds[w], off,
              &rng);
  one(DC_OP_ALL_REDUCE, DC_DTYPE_BF16, 2, 1, (size_t)3 << 20, 0, &rng);
  cudaFree(d_buf);
  cudaFree(d_counts);
  printf("1..%d\n", tap_count);
  return tap_failed ? 1 : 0;
}
