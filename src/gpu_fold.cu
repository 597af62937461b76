/* gpu_fold.cu: fold.h's input streams and output check, run on the GPU so
 * that every element of every output is checked at device speed, with no
 * copy to the host (see gpu_fold.h). */
#include "gpu_fold.h"

namespace {

const int fold_threads = 256;

/* Enough blocks to fill the GPU a few times over; grid-stride loops do
 * the rest. */
unsigned fold_blocks(size_t items) {
  size_t b = (items + fold_threads - 1) / fold_threads;
  return b < 1 ? 1u : b > 4096 ? 4096u : (unsigned)b;
}

__global__ void fold_fill_kernel(dc_dtype t, uint64_t key, void *dst, size_t count) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
       i += (size_t)gridDim.x * blockDim.x) {
    uint32_t e = tune_fold_elem(t, key, i);
    if (t == DC_DTYPE_FP32)
      static_cast<uint32_t *>(dst)[i] = e;
    else
      static_cast<uint16_t *>(dst)[i] = (uint16_t)e;
  }
}

/* Items [0, head) are the leading guard, [head, head + n) the elements,
 * then `tail` trailing guard bytes. Counts go to global memory only where a
 * thread found something, so a right output costs no atomics. */
__global__ void fold_check_kernel(tune_fold_ref ref, const unsigned char *base, size_t head,
                                  size_t n, size_t esize, size_t tail, unsigned char poison,
                                  unsigned long long *counts) {
  unsigned long long guard = 0, wrong = 0, first = ~0ull;
  const size_t total = head + n + tail;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
       i += (size_t)gridDim.x * blockDim.x) {
    if (i < head) {
      guard += base[i] != poison;
    } else if (i < head + n) {
      size_t j = i - head;
      if (!tune_fold_elem_ok(&ref, j, base + head + j * esize)) {
        wrong++;
        if (j < first) first = j;
      }
    } else {
      guard += base[head + n * esize + (i - head - n)] != poison;
    }
  }
  if (guard) atomicAdd(&counts[0], guard);
  if (wrong) {
    atomicAdd(&counts[1], wrong);
    atomicMin(&counts[2], first);
  }
}

}  // namespace

extern "C" cudaError_t tune_gpu_fill(dc_dtype t, uint64_t key, void *dst, size_t count,
                                     cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  fold_fill_kernel<<<fold_blocks(count), fold_threads, 0, stream>>>(t, key, dst, count);
  return cudaGetLastError();
}

extern "C" cudaError_t tune_gpu_check(const tune_fold_ref *ref, const void *base, size_t head,
                                      size_t n, size_t esize, size_t tail, unsigned char poison,
                                      unsigned long long *d_counts, cudaStream_t stream,
                                      tune_gpu_check_counts *out) {
  unsigned long long h[TUNE_GPU_CHECK_WORDS] = {0, 0, ~0ull};
  cudaError_t e = cudaMemcpyAsync(d_counts, h, sizeof(h), cudaMemcpyHostToDevice, stream);
  if (e != cudaSuccess) return e;
  fold_check_kernel<<<fold_blocks(head + n + tail), fold_threads, 0, stream>>>(
      *ref, static_cast<const unsigned char *>(base), head, n, esize, tail, poison, d_counts);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  if ((e = cudaMemcpyAsync(h, d_counts, sizeof(h), cudaMemcpyDeviceToHost, stream)) != cudaSuccess)
    return e;
  if ((e = cudaStreamSynchronize(stream)) != cudaSuccess) return e;
  out->guard = h[0];
  out->wrong = h[1];
  out->first = h[2];
  return cudaSuccess;
}

extern "C" cudaError_t tune_gpu_fold_preload(void) {
  cudaFuncAttributes attr;
  cudaError_t e = cudaFuncGetAttributes(&attr, (const void *)fold_fill_kernel);
  return e != cudaSuccess ? e : cudaFuncGetAttributes(&attr, (const void *)fold_check_kernel);
}
