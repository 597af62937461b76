/* fold.c: seeded input streams that any process can recompute element by
 * element, and the check of one output element against the CPU fold of
 * them (see fold.h). */
#include "fold.h"

static uint64_t fold_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t tune_fold_key(uint64_t seed, dc_dtype t, int rank, int set) {
  return fold_mix(fold_mix(seed ^ 0x5DEECE66Dull) + ((uint64_t)t << 32) +
                  ((uint64_t)(unsigned)rank << 8) + (uint64_t)(unsigned)set);
}

/* The value is built from its bits: sign, an exponent in [-6, 3] and 23
 * random mantissa bits, so it is exact in fp32 before its one rounding. */
uint32_t tune_fold_elem(dc_dtype t, uint64_t key, size_t i) {
  uint64_t h = fold_mix(key + 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1));
  uint32_t bits = (uint32_t)(h & 1u) << 31 | (uint32_t)(127 - 6 + (int)((h >> 8) % 10)) << 23 |
                  (uint32_t)(h >> 41);
  if (t == DC_DTYPE_FP32) return bits;
  return t == DC_DTYPE_BF16 ? tune_f32_to_bf16(tune_bits_f32(bits))
                            : tune_f32_to_fp16(tune_bits_f32(bits));
}

void tune_fold_fill(dc_dtype t, uint64_t key, size_t first, size_t count, void *out) {
  if (t == DC_DTYPE_FP32) {
    uint32_t *o = out;
    for (size_t i = 0; i < count; i++) o[i] = tune_fold_elem(t, key, first + i);
  } else {
    uint16_t *o = out;
    for (size_t i = 0; i < count; i++) o[i] = (uint16_t)tune_fold_elem(t, key, first + i);
  }
}

static float fold_up(dc_dtype t, uint32_t e) {
  if (t == DC_DTYPE_FP32) return tune_bits_f32(e);
  return t == DC_DTYPE_BF16 ? tune_bf16_to_f32((uint16_t)e) : tune_fp16_to_f32((uint16_t)e);
}

int tune_fold_elem_ok(const tune_fold_ref *r, size_t j, const void *got) {
  size_t es = dc_dtype_size(r->dtype);
  if (r->op == DC_OP_ALL_GATHER) {
    size_t b = r->in_first + j % r->chunk;
    uint32_t e = tune_fold_elem(r->dtype, r->keys[j / r->chunk], b / es);
    return *(const unsigned char *)got == (unsigned char)(e >> (8 * (b % es)));
  }
  size_t idx = r->in_first + j + (r->op == DC_OP_REDUCE_SCATTER ? (size_t)r->rank * r->chunk : 0);
  volatile float acc = fold_up(r->dtype, tune_fold_elem(r->dtype, r->keys[0], idx));
  float sum_abs = fabsf(acc);
  for (int p = 1; p < r->world; p++) {
    float x = fold_up(r->dtype, tune_fold_elem(r->dtype, r->keys[p], idx));
    acc = acc + x;
    sum_abs += fabsf(x);
  }
  if (r->tol == 0) {
    unsigned char want[4];
    tune_elem_down(r->dtype, want, 0, acc);
    return memcmp(got, want, es) == 0;
  }
  /* Written so that a NaN result fails. */
  return fabs((double)tune_elem_up(r->dtype, got, 0) - (double)acc) <= r->tol * (double)sum_abs;
}
