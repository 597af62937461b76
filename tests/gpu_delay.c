/* gpu_delay.c: the skew kernel. For delays of 10 us .. 5 ms, the delay it
 * measured on %globaltimer is at least the request and within 1% of it, and
 * CUDA events around it agree (within 1% plus launch overhead). It also
 * works inside a captured graph. */
#include "gpu_common.h"

int main(void) {
  static const uint64_t ns[] = {10000, 50000, 100000, 1000000, 5000000};
  cudaStream_t st;
  cudaEvent_t a, b;
  uint64_t *d_meas, meas = 0;
  gt_require_gpu();
  GT_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  GT_CUDA(cudaEventCreate(&a));
  GT_CUDA(cudaEventCreate(&b));
  GT_CUDA(cudaMalloc((void **)&d_meas, sizeof(uint64_t)));
  GT_DC(dc_delay(st, 1000, d_meas)); /* warm-up: module load */
  GT_CUDA(cudaStreamSynchronize(st));
  for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
    float ms = 0;
    double ev;
    GT_CUDA(cudaEventRecord(a, st));
    GT_DC(dc_delay(st, ns[i], d_meas));
    GT_CUDA(cudaEventRecord(b, st));
    GT_CUDA(cudaStreamSynchronize(st));
    GT_CUDA(cudaEventElapsedTime(&ms, a, b));
    GT_CUDA(cudaMemcpy(&meas, d_meas, sizeof(meas), cudaMemcpyDeviceToHost));
    ev = ms * 1e6;
    tap_ok(meas >= ns[i] && (double)meas <= (double)ns[i] * 1.01, "delay %llu ns: measured %llu ns",
           (unsigned long long)ns[i], (unsigned long long)meas);
    tap_ok(ev >= 0.99 * (double)meas && ev <= 1.01 * (double)meas + 20000.0, "delay %llu ns: events saw %.0f ns",
           (unsigned long long)ns[i], ev);
  }
  {
    cudaGraph_t g;
    cudaGraphExec_t ge;
    meas = 0;
    GT_CUDA(cudaMemset(d_meas, 0, sizeof(uint64_t)));
    GT_CUDA(cudaDeviceSynchronize());
    GT_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    GT_DC(dc_delay(st, 30000, d_meas));
    GT_CUDA(cudaStreamEndCapture(st, &g));
    GT_CUDA(cudaGraphInstantiate(&ge, g, 0));
    GT_CUDA(cudaGraphLaunch(ge, st));
    GT_CUDA(cudaStreamSynchronize(st));
    GT_CUDA(cudaMemcpy(&meas, d_meas, sizeof(meas), cudaMemcpyDeviceToHost));
    tap_ok(meas >= 30000 && meas <= 30300, "delay in a graph: measured %llu ns for 30000", (unsigned long long)meas);
    GT_CUDA(cudaGraphExecDestroy(ge));
    GT_CUDA(cudaGraphDestroy(g));
  }
  GT_CUDA(cudaFree(d_meas));
  GT_CUDA(cudaEventDestroy(a));
  GT_CUDA(cudaEventDestroy(b));
  GT_CUDA(cudaStreamDestroy(st));
  return tap_done();
}
