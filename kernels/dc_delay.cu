/* dc_delay.cu: the skew kernel. It spins on %globaltimer (wall-clock
 * nanoseconds, independent of the SM clock, unlike clock64() at a rated
 * frequency) and stores the delay it actually produced. It is loaded when a
 * communicator is created: under CUDA lazy loading, its first launch would
 * otherwise wait for running kernels, i.e. for ranks spinning on the very
 * rank it delays. */
#include "dc_device.cuh"

__global__ void dc_delay_kernel(uint64_t ns, unsigned long long *measured) {
  const uint64_t t0 = dc_globaltimer();
  uint64_t t;
  do {
    t = dc_globaltimer();
  } while (t - t0 < ns);
  if (measured) *measured = t - t0;
}

cudaError_t dc_delay_preload(void) {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, (const void *)dc_delay_kernel);
}

extern "C" dc_result dc_delay(cudaStream_t stream, uint64_t ns, uint64_t *d_measured_ns) {
  int dev = 0, cur = 0;
  enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
  if (cudaGetDevice(&cur) != cudaSuccess || cudaStreamIsCapturing(stream, &cap) != cudaSuccess) return dc_err_cuda;
  /* cudaStreamGetDevice is refused while capturing: launch on the current
   * device then (a stream of another device makes the launch fail). */
  dev = cur;
  if (cap == cudaStreamCaptureStatusNone && cudaStreamGetDevice(stream, &dev) != cudaSuccess) return dc_err_cuda;
  if (dev != cur && cudaSetDevice(dev) != cudaSuccess) return dc_err_device;
  unsigned long long *m = reinterpret_cast<unsigned long long *>(d_measured_ns);
  void *args[] = {&ns, &m};
  cudaError_t e = cudaLaunchKernel((const void *)dc_delay_kernel, dim3(1), dim3(1), args, 0, stream);
  if (dev != cur) cudaSetDevice(cur);
  return e == cudaSuccess ? dc_ok : dc_err_cuda;
}
