/* bench_store.c: how fast the store takes samples. Inserts 1,000,000 sample
 * rows (1000 configs x 125 trials x 8 ranks, one transaction per config,
 * through tune_store_put_config) into a fresh database in $TMPDIR (or /tmp)
 * and prints rows, seconds and rows per second, and the time close takes
 * apart. A benchmark, not a test: the target is under 1 s on a 2-core
 * machine. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store.h"

enum { BENCH_CONFIGS = 1000, BENCH_TRIALS = 125, BENCH_WORLD = 8 };

int main(void) {
  static const char *const suffixes[] = {"", "-wal", "-shm"};
  const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char path[4096];
  tune_store *st = NULL;
  int64_t run_id, *elapsed = NULL, *delay = NULL;
  int status = 1;
  tune_rng rng;
  snprintf(path, sizeof(path), "%s/bench_store.%ld.sqlite", dir, (long)getpid());
  elapsed = malloc(sizeof(*elapsed) * BENCH_TRIALS * BENCH_WORLD);
  delay = malloc(sizeof(*delay) * BENCH_TRIALS * BENCH_WORLD);
  if (elapsed == NULL || delay == NULL) goto exit;
  if (tune_store_open(path, 0, &st) != tune_ok) goto exit;
  const tune_run_info info = {"bench", "bench-host",  "none", 1,      0,      "single_gpu",
                              "none",  "none",        "none", "none", "none", "sim",
                              "none",  "bench_store", "none", 1,      0,      NULL};
  if (tune_store_run_begin(st, &info, &run_id) != tune_ok) goto exit;
  tune_rng_seed(&rng, 20261129);
  int64_t t0 = tune_now_ns();
  for (int c = 0; c < BENCH_CONFIGS; c++) {
    /* Fresh values per config, as a sweep would have; not timed apart. */
    for (int i = 0; i < BENCH_TRIALS * BENCH_WORLD; i++) {
      elapsed[i] = 5000 + (int64_t)(tune_rng_next(&rng) % 20000);
      delay[i] = (int64_t)(tune_rng_next(&rng) % 1000);
    }
    tune_config_row cfg = {run_id,
                           "detcoll",
                           DC_OP_ALL_REDUCE,
                           DC_PATH_ONE_SHOT,
                           DC_PATH_ONE_SHOT,
                           DC_DTYPE_BF16,
                           BENCH_WORLD,
                           (uint64_t)1024 * (uint64_t)(c + 1),
                           0,
                           0,
                           DC_ALIGN_16,
                           DC_MODE_EAGER,
                           0,
                           -1,
                           BENCH_TRIALS,
                           10,
                           0,
                           1e4,
                           9e3,
                           2e4};
    if (tune_store_put_config(st, &cfg, elapsed, delay, NULL) != tune_ok) goto exit;
  }
  double sec = (double)(tune_now_ns() - t0) * 1e-9;
  /* Closing checkpoints the WAL into the file: shown apart, as a sweep pays
   * it once at the end, not per config. */
  int64_t t1 = tune_now_ns();
  tune_store_close(st);
  st = NULL;
  double close_sec = (double)(tune_now_ns() - t1) * 1e-9;
  long rows = (long)BENCH_CONFIGS * BENCH_TRIALS * BENCH_WORLD;
  printf("rows %ld  seconds %.3f  rows/s %.0f  (%d configs, one transaction each; close %.3f s)\n",
         rows, sec, (double)rows / sec, BENCH_CONFIGS, close_sec);
  status = 0;
exit:
  tune_store_close(st);
  for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
    char name[4200];
    snprintf(name, sizeof(name), "%s%s", path, suffixes[i]);
    unlink(name);
  }
  free(elapsed);
  free(delay);
  return status;
}
