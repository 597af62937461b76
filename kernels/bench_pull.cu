/* bench_pull.cu: the SM copy kernel of bench_detcoll --p2p. Not part of
 * libdetcoll: with src a peer's pointer it measures how fast one GPU's SMs
 * pull from another (16-byte loads, four in flight per thread before its
 * stores, a grid-stride loop over many blocks), with dst a peer's pointer
 * how fast they push into it; with both on one device it is a plain device
 * copy. */
#include <cuda_runtime.h>

#include <stddef.h>

__global__ void bench_pull_kernel(int4 *__restrict__ dst, const int4 *__restrict__ src, size_t n) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const int4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

/* Enqueue on stream (of the current device, which owns dst) a copy of bytes
 * (a multiple of 16, both pointers 16-byte aligned) from src to dst.
 * Returns the launch's error. */
extern "C" cudaError_t bench_pull(void *dst, const void *src, size_t bytes, int blocks, int threads,
                                  cudaStream_t stream) {
  bench_pull_kernel<<<blocks, threads, 0, stream>>>((int4 *)dst, (const int4 *)src, bytes / 16);
  return cudaGetLastError();
}
