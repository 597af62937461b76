/* test_fold.c: the CPU side of the gpu backend's correctness checks (fold.h):
 * exact conversions at their rounding edges, seeded inputs (finite, nonzero,
 * in range, reproducible), and the element check -- bitwise for detcoll,
 * within a tolerance for NCCL -- catching a wrong element. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fold.h"
#include "tap.h"

static void conversions(void) {
  tap_ok(tune_f32_to_bf16(1.0f) == 0x3f80 && tune_bf16_to_f32(0x3f80) == 1.0f, "bf16 of 1");
  /* 1 + 2^-8 is halfway between two bf16 values: ties to even (down). */
  tap_ok(tune_f32_to_bf16(1.00390625f) == 0x3f80 && tune_f32_to_bf16(1.01171875f) == 0x3f82,
         "bf16 rounds half to even");
  tap_ok(tune_f32_to_fp16(65504.0f) == 0x7bff && tune_f32_to_fp16(65520.0f) == 0x7c00,
         "fp16 max and overflow");
  tap_ok(tune_f32_to_fp16(ldexpf(1, -24)) == 0x0001 && tune_fp16_to_f32(0x0001) == ldexpf(1, -24),
         "fp16 smallest subnormal");
  tap_ok(tune_elem_is_nan(DC_DTYPE_BF16, (uint16_t[]){tune_f32_to_bf16(NAN)}, 0),
         "bf16 NaN stays NaN");
  int bad = 0;
  for (uint32_t h = 0; h < 0x10000; h++) {
    uint16_t v = (uint16_t)h;
    if ((v & 0x7c00) == 0x7c00) continue; /* inf / nan */
    bad += tune_f32_to_fp16(tune_fp16_to_f32(v)) != v;
  }
  tap_ok(bad == 0, "every finite fp16 survives a round trip through fp32");
}

static void inputs(void) {
  int bad = 0;
  for (int t = 0; t < DC_DTYPE_COUNT; t++) {
    uint64_t key = tune_fold_key(5, (dc_dtype)t, 3, 1);
    unsigned char buf[4 * 1000];
    tune_fold_fill((dc_dtype)t, key, 77, 1000, buf);
    for (size_t i = 0; i < 1000; i++) {
      float v = tune_elem_up((dc_dtype)t, buf, i);
      bad += !(fabsf(v) >= 0x1p-6f && fabsf(v) <= 16.0f);
      bad += tune_fold_elem((dc_dtype)t, key, 77 + i) !=
             (t == DC_DTYPE_FP32 ? ((uint32_t *)buf)[i] : ((uint16_t *)buf)[i]);
    }
  }
  tap_ok(bad == 0,
         "seeded inputs: nonzero, finite, in +-[2^-6, 16], the same element by element or filled");
  tap_ok(tune_fold_key(5, DC_DTYPE_BF16, 0, 0) != tune_fold_key(5, DC_DTYPE_BF16, 0, 1) &&
             tune_fold_key(5, DC_DTYPE_BF16, 0, 0) != tune_fold_key(5, DC_DTYPE_BF16, 1, 0),
         "each rank and set has its own stream");
}

/* The reference of rank r's all_reduce / reduce_scatter element, built here
 * the way the determinism contract says. */
static void checks(void) {
  /* Each rank's input: the reduced chunks start at element 3 (in_first). */
  enum { W = 4, N = 64, E = W * N + 3 };
  static const dc_dtype dts[] = {DC_DTYPE_BF16, DC_DTYPE_FP32};
  for (int d = 0; d < 2; d++) {
    dc_dtype t = dts[d];
    size_t es = dc_dtype_size(t);
    unsigned char in[W][E * 4], out[N * 4];
    const void *ptr[W];
    tune_fold_ref ref = {
        .op = DC_OP_REDUCE_SCATTER, .dtype = t, .world = W, .rank = 2, .in_first = 3, .chunk = N};
    for (int p = 0; p < W; p++) {
      ref.keys[p] = tune_fold_key(9, t, p, 0);
      tune_fold_fill(t, ref.keys[p], 0, E, in[p]);
      ptr[p] = in[p];
    }
    for (size_t j = 0; j < N; j++)
      tune_elem_down(t, out, j, tune_fold_rank_order(t, ptr, W, 3 + 2 * N + j));
    int right = 0;
    for (size_t j = 0; j < N; j++) right += tune_fold_elem_ok(&ref, j, out + j * es);
    tap_ok(right == N, "%s reduce_scatter: the rank-order fold passes bitwise", dc_dtype_name(t));
    unsigned char wrong[4];
    memcpy(wrong, out + 5 * es, es);
    wrong[0] ^= 1;
    tap_ok(!tune_fold_elem_ok(&ref, 5, wrong), "%s: one flipped low bit fails the bitwise check",
           dc_dtype_name(t));
    ref.tol = (t == DC_DTYPE_FP32 ? 1e-5 : 1e-2) * W;
    tap_ok(tune_fold_elem_ok(&ref, 5, wrong), "%s: the same element passes NCCL's tolerance",
           dc_dtype_name(t));
    tune_elem_down(t, wrong, 0, tune_elem_up(t, out, 5) + 100.0f);
    tap_ok(!tune_fold_elem_ok(&ref, 5, wrong),
           "%s: off by 100 (more than the tolerance of any sum of 4 inputs) fails NCCL's tolerance",
           dc_dtype_name(t));
    tune_elem_down(t, wrong, 0, NAN);
    tap_ok(!tune_fold_elem_ok(&ref, 5, wrong), "%s: NaN fails NCCL's tolerance", dc_dtype_name(t));
  }
  /* all_gather: bytes of the streams, rank by rank, from byte in_first. */
  tune_fold_ref ag = {.op = DC_OP_ALL_GATHER,
                      .dtype = DC_DTYPE_FP16,
                      .world = 2,
                      .rank = 1,
                      .in_first = 3,
                      .chunk = 10};
  unsigned char src[2][16], got[20];
  for (int p = 0; p < 2; p++) {
    ag.keys[p] = tune_fold_key(1, DC_DTYPE_FP16, p, 1);
    tune_fold_fill(DC_DTYPE_FP16, ag.keys[p], 0, 8, src[p]);
    memcpy(got + 10 * p, src[p] + 3, 10);
  }
  int right = 0;
  for (size_t j = 0; j < 20; j++) right += tune_fold_elem_ok(&ag, j, got + j);
  got[13] ^= 0x80;
  tap_ok(right == 20 && !tune_fold_elem_ok(&ag, 13, got + 13),
         "all_gather at an odd byte offset: bytes checked");
}

int main(void) {
  conversions();
  inputs();
  checks();
  return tap_done();
}
