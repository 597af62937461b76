/* fold.c: the host-only parts of the seeded input streams (see fold.h). */
#include "fold.h"

uint64_t tune_fold_key(uint64_t seed, dc_dtype t, int rank, int set) {
  return tune_fold_mix(tune_fold_mix(seed ^ 0x5DEECE66Dull) + ((uint64_t)t << 32) +
                       ((uint64_t)(unsigned)rank << 8) + (uint64_t)(unsigned)set);
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
