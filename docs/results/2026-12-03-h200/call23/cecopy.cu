// cecopy: the copy engine's rate on one GPU (cudaMemcpyAsync device to device) as a function of
// src offset, dst offset and size, each varied alone; and split copies (a 4096-multiple body plus a tail).
// Usage: cecopy  -> lines "src_off dst_off bytes split median_us GB/s(read+write)"
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static char *S, *D;
static cudaStream_t st;
static cudaEvent_t e0, e1;

// split: 0 one copy; 1 body (largest 4096 multiple) + tail on the same stream;
// 2 head to align dst to 4096, body, tail.
static void issue(size_t so, size_t dof, size_t n, int split) {
  if (split == 0) { CK(cudaMemcpyAsync(D + dof, S + so, n, cudaMemcpyDeviceToDevice, st)); return; }
  size_t head = 0;
  if (split == 2) head = (4096 - (dof & 4095)) & 4095;
  if (head > n) head = n;
  if (head) CK(cudaMemcpyAsync(D + dof, S + so, head, cudaMemcpyDeviceToDevice, st));
  size_t body = (n - head) / 4096 * 4096, tail = n - head - body;
  if (body) CK(cudaMemcpyAsync(D + dof + head, S + so + head, body, cudaMemcpyDeviceToDevice, st));
  if (tail) CK(cudaMemcpyAsync(D + dof + head + body, S + so + head + body, tail, cudaMemcpyDeviceToDevice, st));
}

static void run(size_t so, size_t dof, size_t n, int split) {
  std::vector<float> t;
  for (int i = 0; i < 3; i++) issue(so, dof, n, split);
  CK(cudaStreamSynchronize(st));
  for (int r = 0; r < 25; r++) {
    float ms;
    CK(cudaEventRecord(e0, st));
    issue(so, dof, n, split);
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms * 1000);
  }
  std::sort(t.begin(), t.end());
  double us = t[t.size() / 2];
  printf("%6zu %6zu %10zu %d %9.1f %7.0f\n", so, dof, n, split, us, 2.0 * n / us / 1e3);
  fflush(stdout);
}

// k copies at once, each on its own stream forked from st and joined back (the CE path's shape), each of n
// bytes from S + i * n' to D + i * n + dof (n' = n rounded up to 4096), eager or captured once into a graph.
static void conc(int k, size_t n, size_t dof, int graph) {
  static cudaStream_t ss[4];
  static cudaEvent_t fork, join[4];
  if (!ss[0]) {
    for (int i = 0; i < 4; i++) { CK(cudaStreamCreateWithFlags(&ss[i], cudaStreamNonBlocking)); CK(cudaEventCreateWithFlags(&join[i], cudaEventDisableTiming)); }
    CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  }
  const size_t stride = (n + 4095) / 4096 * 4096 + 8192;
  auto body = [&]() {
    CK(cudaEventRecord(fork, st));
    for (int i = 0; i < k; i++) {
      CK(cudaStreamWaitEvent(ss[i], fork, 0));
      CK(cudaMemcpyAsync(D + i * stride + dof, S + i * stride, n, cudaMemcpyDeviceToDevice, ss[i]));
      CK(cudaEventRecord(join[i], ss[i]));
      CK(cudaStreamWaitEvent(st, join[i], 0));
    }
  };
  cudaGraphExec_t ge = NULL;
  if (graph) {
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    body();
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphDestroy(g));
  }
  std::vector<float> t;
  for (int r = 0; r < 28; r++) {
    float ms;
    CK(cudaEventRecord(e0, st));
    if (graph) CK(cudaGraphLaunch(ge, st)); else body();
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (r >= 3) t.push_back(ms * 1000);
  }
  if (ge) CK(cudaGraphExecDestroy(ge));
  std::sort(t.begin(), t.end());
  double us = t[t.size() / 2];
  printf("conc k=%d %s dst_off %5zu bytes %10zu  %8.1f us %6.0f GB/s\n", k, graph ? "graph" : "eager", dof, n, us, 2.0 * k * n / us / 1e3);
  fflush(stdout);
}

int main(int argc, char **argv) {
  const size_t M = (size_t)1 << 27;
  CK(cudaSetDevice(0));
  const size_t A = argc > 1 ? 4 * M + (1 << 20) : M + (1 << 20);
  CK(cudaMalloc(&S, A));
  CK(cudaMalloc(&D, A));
  CK(cudaMemset(S, 7, A));
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  if (argc > 1) { // cecopy conc
    for (int graph = 0; graph < 2; graph++)
      for (int k = 1; k <= 4; k *= 2) {
        conc(k, M, 0, graph);
        conc(k, M + 16, 0, graph);
        conc(k, M, 16, graph);
        conc(k, M, 256, graph);
      }
    return 0;
  }
  printf("# src_off dst_off bytes split median_us GB/s(read+write)\n");
  // size alone
  size_t adds[] = {0, 16, 256, 512, 1024, 2048, 4096, 4096 + 16};
  for (size_t a : adds) run(0, 0, M + a, 0);
  run(0, 0, M - 16, 0);
  // both offsets together, size 2^27
  size_t offs[] = {16, 64, 128, 256, 512, 1024, 2048, 4096};
  for (size_t o : offs) run(o, o, M, 0);
  // dst offset alone, then src offset alone
  for (size_t o : offs) run(0, o, M, 0);
  for (size_t o : offs) run(o, 0, M, 0);
  // split copies where one copy was slow
  run(0, 0, M + 16, 1);
  run(0, 0, M + 512, 1);
  run(0, 16, M, 2);
  run(0, 512, M, 2);
  run(16, 16, M, 2);
  run(64, 64, M, 2);
  return 0;
}
