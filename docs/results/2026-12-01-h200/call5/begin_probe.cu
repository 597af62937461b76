// begin_probe.cu: cost of the per-call seq advance (dc_begin) by grid size:
// acq_rel atomic on a done counter (today), relaxed atomic, per-block words.
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
struct ctrl { unsigned long long seq; unsigned done; unsigned pad; unsigned long long bseq[128]; };
__device__ unsigned long long sink;
template <int MODE>
__global__ void k(ctrl *c) {
  __shared__ unsigned long long s;
  if (threadIdx.x == 0) {
    if (MODE == 2) {
      unsigned long long v;
      asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(&c->bseq[blockIdx.x]) : "memory");
      s = v;
    } else {
      unsigned long long v;
      asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(&c->seq) : "memory");
      if (gridDim.x == 1) { c->seq = v + 1; }
      else {
        unsigned old;
        if (MODE == 0) asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(&c->done) : "memory");
        else asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(&c->done) : "memory");
        if (old == gridDim.x - 1) { c->done = 0; c->seq = v + 1; }
      }
      s = v;
    }
  }
  __syncthreads();
  if (MODE == 2) for (unsigned b = blockIdx.x * blockDim.x + threadIdx.x; b < 128; b += gridDim.x * blockDim.x) {}
  if (MODE == 2 && threadIdx.x < 128) { for (unsigned b = blockIdx.x + threadIdx.x * gridDim.x; b < 128 && threadIdx.x * gridDim.x + blockIdx.x < 128; b += 1 << 30) c->bseq[b] = s + 1; }
  if (threadIdx.x == 0 && s == 0xffffffffffffull) sink = s;
}
int main() {
  ctrl *c; CK(cudaMalloc(&c, sizeof(ctrl))); CK(cudaMemset(c, 0, sizeof(ctrl)));
  cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  const int N = 100;
  for (int mode = 0; mode < 3; mode++) for (int g : {1, 2, 4, 16, 128}) {
    cudaGraph_t gr; cudaGraphExec_t ex;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < N; i++) {
      if (mode == 0) k<0><<<g, 512, 0, st>>>(c); else if (mode == 1) k<1><<<g, 512, 0, st>>>(c); else k<2><<<g, 512, 0, st>>>(c);
    }
    CK(cudaStreamEndCapture(st, &gr)); CK(cudaGraphInstantiate(&ex, gr, 0));
    float best = 1e9;
    for (int r = 0; r < 20; r++) {
      CK(cudaEventRecord(a, st)); CK(cudaGraphLaunch(ex, st)); CK(cudaEventRecord(b, st)); CK(cudaEventSynchronize(b));
      float ms; CK(cudaEventElapsedTime(&ms, a, b)); if (ms < best) best = ms;
    }
    printf("mode %s grid %3d: %.3f us per kernel\n", mode == 0 ? "acq_rel" : mode == 1 ? "relaxed" : "perblock", g, best * 1000 / N);
    cudaGraphExecDestroy(ex); cudaGraphDestroy(gr);
  }
  return 0;
}
