/* gpu_fold.h: the gpu backend's input fill and output check on the GPU,
 * with fold.h's reference code (gpu_fold.cu). */
#ifndef TUNE_GPU_FOLD_H
#define TUNE_GPU_FOLD_H

#include <cuda_runtime_api.h>

#include "fold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a check found: guard bytes not equal to the poison, wrong output
 * elements, and the first wrong element (valid when wrong > 0). */
typedef struct {
  unsigned long long guard, wrong, first;
} tune_gpu_check_counts;

/* Words of device memory a check needs for its counts. */
#define TUNE_GPU_CHECK_WORDS 3

/* Elements 0 .. count - 1 of stream key into dst (a dtype array), on stream. */
cudaError_t tune_gpu_fill(dc_dtype t, uint64_t key, void *dst, size_t count, cudaStream_t stream);

/* Checks one rank's output: `head` guard bytes at base, then n elements of
 * esize bytes against ref (tune_fold_elem_ok, element by element), then
 * `tail` guard bytes; guard bytes must still hold `poison`. d_counts:
 * TUNE_GPU_CHECK_WORDS device words. Waits for the stream; *out is set
 * when cudaSuccess is returned. */
cudaError_t tune_gpu_check(const tune_fold_ref *ref, const void *base, size_t head, size_t n,
                           size_t esize, size_t tail, unsigned char poison,
                           unsigned long long *d_counts, cudaStream_t stream,
                           tune_gpu_check_counts *out);

/* Loads both kernels on the current device now: under CUDA lazy loading a
 * first launch would otherwise wait for running kernels, e.g. peers
 * spinning in a collective. */
cudaError_t tune_gpu_fold_preload(void);

#ifdef __cplusplus
}
#endif
#endif /* TUNE_GPU_FOLD_H */
