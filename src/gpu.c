/* gpu.c: the gpu backend: measures libdetcoll (and NCCL) on real devices.
 * Opening it first makes sure there is a CUDA device at all, so that
 * `tune --gpus 8` on a machine without one says so at once and points to the
 * sim rehearsal. */
#include <stdio.h>
#include <stdlib.h>

#include "backend.h"
#include "config.h"

#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static const char no_gpu_hint[] =
    "to rehearse the whole pipeline without a GPU, run: ./tune --backend sim --gpus 8";

/* Number of CUDA devices; on failure a message and tune_err_cuda. */
static tune_result gpu_count(int *n) {
#ifdef HAVE_CUDA
  cudaError_t e = cudaGetDeviceCount(n);
  if (e != cudaSuccess || *n == 0) {
    tune_error("no CUDA device found (%s); %s", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices",
               no_gpu_hint);
    return tune_err_cuda;
  }
  return tune_ok;
#else
  *n = 0;
  tune_error("no CUDA device found (this tune was built without the CUDA toolkit); %s", no_gpu_hint);
  return tune_err_cuda;
#endif
}

static tune_result gpu_open(int gpus, uint64_t seed, tune_backend **out) {
  int n;
  (void)seed;
  (void)out;
  TUNE_CHECK(gpu_count(&n));
  if (gpus > n) {
    tune_error("--gpus %d asks for more GPUs than the %d found", gpus, n);
    return tune_err_arg;
  }
  tune_error("found %d CUDA device(s), but GPU measurement is not built into this tune yet; %s", n,
             no_gpu_hint);
  return tune_err_internal;
}

static void gpu_describe(tune_backend *b, tune_machine *m) {
  (void)b;
  (void)m;
}

static void gpu_set_table(tune_backend *b, const dc_threshold_row *rows, size_t nrows) {
  (void)b;
  (void)rows;
  (void)nrows;
}

static tune_result gpu_measure(tune_backend *b, const tune_cfg *c, int first_trial, int trials, int warmup,
                               tune_samples *s) {
  (void)b;
  (void)first_trial;
  (void)c;
  (void)trials;
  (void)warmup;
  (void)s;
  return tune_err_internal;
}

static void gpu_close(tune_backend *b) { free(b); }

const tune_backend_ops tune_backend_gpu = {
    "gpu", gpu_open, gpu_describe, gpu_set_table, gpu_measure, gpu_close,
};
