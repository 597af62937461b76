/* mpi_backend_main.c: run by tests/mpi_backend.sh under `mpirun -np 2`: the
 * gpu backend with the mpi launcher (one rank per process; on a one-GPU
 * machine both processes share GPU 0). Every process measures; rank 0
 * prints TAP. Each process checks what it received -- every rank's samples
 * -- and exits 1 on any failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "config.h"
#include "tap.h"

enum { WORLD = 2, TRIALS = 4, WARMUP = 2 };

int main(void) {
  tune_backend_opts o = {
      .gpus = WORLD, .seed = 7, .launcher = "mpi", .max_bytes = 1u << 20, .graph_calls = 4};
  tune_backend *be = NULL;
  tune_result r = tune_backend_gpu.open(&o, &be);
  if (r != tune_ok) {
    printf("Bail out! open with the mpi launcher: %s\n", tune_result_str(r));
    return 1;
  }
  int rank = be->ops->rank(be);
  if (rank != 0 && freopen("/dev/null", "w", stdout) == NULL) return 1;
  tune_machine m;
  be->ops->describe(be, &m);
  tap_diag("%s x%d sm%d %s nccl %s mpi %s launcher %s", m.gpu_model, m.gpu_count, m.sm,
           dc_topo_name(m.topo), m.nccl, m.mpi, m.launcher);
  tap_ok(strcmp(m.launcher, "mpi") == 0 && strncmp(m.mpi, "Open MPI", 8) == 0,
         "describe: launcher mpi, %s", m.mpi);
  tap_ok(rank >= 0 && rank < WORLD, "rank %d of %d", rank, WORLD);

  static const struct {
    const char *impl;
    dc_op op;
    dc_path path;
    dc_dtype dtype;
    int world;
    uint64_t bytes;
    int offset;
    dc_mode mode;
  } cases[] = {
      {"detcoll", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_BF16, 2, 65536, 0, DC_MODE_EAGER},
      {"detcoll", DC_OP_ALL_GATHER, DC_PATH_AUTO, DC_DTYPE_FP32, 2, 12288, 4, DC_MODE_GRAPH},
      {"detcoll", DC_OP_REDUCE_SCATTER, DC_PATH_SINGLE_BLOCK, DC_DTYPE_FP32, 2, 8192, 0,
       DC_MODE_EAGER},
      {"detcoll", DC_OP_ALL_REDUCE, DC_PATH_TWO_SHOT, DC_DTYPE_BF16, 2, 1u << 20, 0, DC_MODE_GRAPH},
      {"detcoll", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_BF16, 1, 4096, 0, DC_MODE_EAGER},
  };
  int64_t el[2][TRIALS * WORLD], de[2][TRIALS * WORLD];
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    tune_cfg c[2];
    int nc = 1;
    c[0] = (tune_cfg){cases[k].impl,
                      cases[k].op,
                      cases[k].path,
                      cases[k].dtype,
                      cases[k].world,
                      cases[k].bytes,
                      cases[k].offset,
                      cases[k].offset,
                      cases[k].mode,
                      0,
                      -1};
#ifdef HAVE_NCCL
    /* world 1: NCCL beside detcoll (two processes share one GPU here). */
    if (cases[k].world == 1) {
      c[1] = c[0];
      c[1].impl = "nccl";
      nc = 2;
    }
#endif
    tune_samples s[2];
    for (int i = 0; i < nc; i++) s[i] = (tune_samples){el[i], de[i], 0, DC_PATH_AUTO};
    r = be->ops->measure(be, c, nc, 0, TRIALS, WARMUP, s);
    int ok = r == tune_ok;
    for (int i = 0; ok && i < nc; i++) {
      ok = s[i].wrong_elems == 0 &&
           (strcmp(c[i].impl, "detcoll") != 0 || s[i].chosen_path != DC_PATH_AUTO);
      for (int t = 0; ok && t < TRIALS * c[i].world; t++) ok = s[i].elapsed_ns[t] > 0;
    }
    tap_ok(ok, "%s%s %s %s world %d %llu bytes %s: every rank's samples, exact (%s)", c[0].impl,
           nc > 1 ? " + nccl" : "", dc_op_name(c[0].op), dc_path_name(c[0].path), c[0].world,
           (unsigned long long)c[0].bytes, dc_mode_name(c[0].mode), tune_result_str(r));
  }
  be->ops->close(be);
  return tap_done();
}
