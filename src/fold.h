/* fold.h: the reference side of every correctness check -- exact bf16/fp16
 * <-> fp32 conversions (round to nearest even, subnormals, inf, nan), the
 * determinism contract's fold of one element in rank order, seeded inputs
 * that any process can recompute element by element, and the check of one
 * output element against them.
 *
 * Everything here but the key and the host fill (fold.c) is inline and,
 * under nvcc, host and device code: libdetcoll's GPU tests, which link
 * libdetcoll alone, share the conversions through tests/gpu_common.h, and
 * the gpu backend fills inputs and checks outputs on the GPU with the very
 * code the CPU tests check (gpu_fold.cu). */
#ifndef TUNE_FOLD_H
#define TUNE_FOLD_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dc_table.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define TUNE_HD __host__ __device__
#else
#define TUNE_HD
#endif

static inline TUNE_HD uint32_t tune_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static inline TUNE_HD float tune_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static inline TUNE_HD float tune_bf16_to_f32(uint16_t h) {
  return tune_bits_f32((uint32_t)h << 16);
}

/* Round to nearest even; a NaN stays a (quiet) NaN. */
static inline TUNE_HD uint16_t tune_f32_to_bf16(float f) {
  uint32_t x = tune_f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static inline TUNE_HD float tune_fp16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    float v = ldexpf((float)m, -24);
    return sign ? -v : v;
  }
  if (e == 31) return tune_bits_f32(sign | 0x7f800000u | (m << 13));
  return tune_bits_f32(sign | ((e - 15 + 127) << 23) | (m << 13));
}

/* Round to nearest even, with fp16 subnormals; >= 65520 becomes inf. */
static inline TUNE_HD uint16_t tune_f32_to_fp16(float f) {
  uint32_t x = tune_f32_bits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  int e;
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);
  e = (int)(ax >> 23) - 127;
  if (e >= -14) {
    uint32_t mant = ax & 0x7fffffu, h = ((uint32_t)(e + 15) << 10) | (mant >> 13),
             rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
  }
  if (e < -25) return (uint16_t)sign;
  {
    uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    int shift = -(e + 1);
    uint32_t h = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) h++;
    return (uint16_t)(sign | h);
  }
}

/* Element i of a dtype array, widened to fp32 exactly. */
static inline TUNE_HD float tune_elem_up(dc_dtype t, const void *p, size_t i) {
  if (t == DC_DTYPE_FP32) return ((const float *)p)[i];
  if (t == DC_DTYPE_BF16) return tune_bf16_to_f32(((const uint16_t *)p)[i]);
  return tune_fp16_to_f32(((const uint16_t *)p)[i]);
}

/* Store v as element i of a dtype array, rounded once. */
static inline TUNE_HD void tune_elem_down(dc_dtype t, void *p, size_t i, float v) {
  if (t == DC_DTYPE_FP32)
    ((float *)p)[i] = v;
  else if (t == DC_DTYPE_BF16)
    ((uint16_t *)p)[i] = tune_f32_to_bf16(v);
  else
    ((uint16_t *)p)[i] = tune_f32_to_fp16(v);
}

static inline TUNE_HD int tune_elem_is_nan(dc_dtype t, const void *p, size_t i) {
  if (t == DC_DTYPE_FP32) return isnan(((const float *)p)[i]);
  uint16_t h = ((const uint16_t *)p)[i];
  return t == DC_DTYPE_BF16 ? (h & 0x7fffu) > 0x7f80u : (h & 0x7fffu) > 0x7c00u;
}

/* The determinism contract for one element: acc = x[0]; acc = acc + x[1];
 * ... in rank order, fp32 round-to-nearest adds (volatile keeps the compiler
 * from reassociating or keeping excess precision). in[p] is rank p's input
 * array; returns the fp32 sum, which the caller rounds once to the dtype. */
static inline TUNE_HD float tune_fold_rank_order(dc_dtype t, const void *const *in, int world,
                                                 size_t i) {
  volatile float acc = tune_elem_up(t, in[0], i);
  for (int p = 1; p < world; p++) acc = acc + tune_elem_up(t, in[p], i);
  return acc;
}

/* ---- seeded inputs and output checks ------------------------------------ */

/* Most ranks a check folds. */
#define TUNE_FOLD_MAX_WORLD 8

/* The key of one input stream: a rank's input set under a seed (fold.c). */
uint64_t tune_fold_key(uint64_t seed, dc_dtype t, int rank, int set);

static inline TUNE_HD uint64_t tune_fold_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* dc_dtype_size, for device code too. */
static inline TUNE_HD size_t tune_fold_esize(dc_dtype t) { return t == DC_DTYPE_FP32 ? 4 : 2; }

/* Element i of stream key, as the dtype's encoding in the low bits (fp32:
 * its bits; bf16/fp16: 16 bits). Values are finite and nonzero, of mixed
 * sign and magnitude (+-[2^-6, 2^4)), so every rounding of the fold shows;
 * a sum of 8 fits fp16. Counter-based: any element is computed alone, so
 * every process can rebuild every rank's input where it checks. The value
 * is built from its bits: sign, an exponent in [-6, 3] and 23 random
 * mantissa bits, so it is exact in fp32 before its one rounding. */
static inline TUNE_HD uint32_t tune_fold_elem(dc_dtype t, uint64_t key, size_t i) {
  uint64_t h = tune_fold_mix(key + 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1));
  uint32_t bits = (uint32_t)(h & 1u) << 31 | (uint32_t)(127 - 6 + (int)((h >> 8) % 10)) << 23 |
                  (uint32_t)(h >> 41);
  if (t == DC_DTYPE_FP32) return bits;
  return t == DC_DTYPE_BF16 ? tune_f32_to_bf16(tune_bits_f32(bits))
                            : tune_f32_to_fp16(tune_bits_f32(bits));
}

/* Elements first .. first + count - 1 of stream key into out (dtype array;
 * fold.c). */
void tune_fold_fill(dc_dtype t, uint64_t key, size_t first, size_t count, void *out);

/* What one rank's output of one call should be. The inputs of rank p are
 * stream keys[p], starting at element in_first (all_gather: at byte
 * in_first of the streams' encoding). chunk: all_gather bytes per rank;
 * reduce_scatter recvcount (rank r's slice starts at r * chunk). tol: 0
 * compares bits (detcoll); else |got - want| <= tol * sum |x_p| (NCCL, whose
 * order is not ours). */
typedef struct {
  dc_op op;
  dc_dtype dtype; /* of the streams (for all_gather, the bytes' source) */
  int world;
  int rank;
  uint64_t keys[TUNE_FOLD_MAX_WORLD];
  size_t in_first;
  size_t chunk;
  double tol;
} tune_fold_ref;

static inline TUNE_HD float tune_fold_up(dc_dtype t, uint32_t e) {
  if (t == DC_DTYPE_FP32) return tune_bits_f32(e);
  return t == DC_DTYPE_BF16 ? tune_bf16_to_f32((uint16_t)e) : tune_fp16_to_f32((uint16_t)e);
}

/* 1 if output element j (all_gather: byte j) is right; got points at it. */
static inline TUNE_HD int tune_fold_elem_ok(const tune_fold_ref *r, size_t j, const void *got) {
  size_t es = tune_fold_esize(r->dtype);
  if (r->op == DC_OP_ALL_GATHER) {
    size_t b = r->in_first + j % r->chunk;
    uint32_t e = tune_fold_elem(r->dtype, r->keys[j / r->chunk], b / es);
    return *(const unsigned char *)got == (unsigned char)(e >> (8 * (b % es)));
  }
  size_t idx = r->in_first + j + (r->op == DC_OP_REDUCE_SCATTER ? (size_t)r->rank * r->chunk : 0);
  volatile float acc = tune_fold_up(r->dtype, tune_fold_elem(r->dtype, r->keys[0], idx));
  float sum_abs = fabsf(acc);
  for (int p = 1; p < r->world; p++) {
    float x = tune_fold_up(r->dtype, tune_fold_elem(r->dtype, r->keys[p], idx));
    acc = acc + x;
    sum_abs += fabsf(x);
  }
  if (r->tol == 0) {
    uint32_t want = r->dtype == DC_DTYPE_FP32   ? tune_f32_bits(acc)
                    : r->dtype == DC_DTYPE_BF16 ? tune_f32_to_bf16(acc)
                                                : tune_f32_to_fp16(acc),
             have = 0;
    memcpy(&have, got, es); /* the low bytes on a little-endian host, as GPUs are */
    return want == have;
  }
  /* Written so that a NaN result fails. */
  return fabs((double)tune_elem_up(r->dtype, got, 0) - (double)acc) <= r->tol * (double)sum_abs;
}

#ifdef __cplusplus
}
#endif
#endif /* TUNE_FOLD_H */
