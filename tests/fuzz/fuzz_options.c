/* fuzz_options.c: libFuzzer target for the option parsers: the input, split
 * at NUL bytes, is the argument list of `tune run` (main.c, with the job
 * itself replaced by a check of what the parser accepted) or, with a first
 * byte that is odd, of `tune skew` (tune_skew_parse). Bad input must give a
 * usage error, never a crash, and an accepted job must be in range. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "skew.h"

int tune_main(int argc, char **argv);

enum { FUZZ_MAX_ARGS = 64 };

/* What cmd_run may hand the engine, whatever the command line. */
tune_result fuzz_job_run(const tune_job *job) {
  int bad = job->min_bytes == 0 || job->min_bytes > job->max_bytes || job->nworlds < 1 ||
            job->nworlds > TUNE_MAX_WORLDS || job->noffsets < 1 ||
            job->noffsets > TUNE_MAX_OFFSETS || job->ops == 0 || job->dtypes == 0 ||
            job->modes == 0 || job->ops >> DC_OP_COUNT != 0 || job->dtypes >> DC_DTYPE_COUNT != 0 ||
            job->modes >> DC_MODE_COUNT != 0 || job->trials > job->max_trials || job->gpus < 0;
  for (int i = 0; i < job->nworlds && !bad; i++)
    bad = job->worlds[i] < 1 || (job->gpus > 0 && job->worlds[i] > job->gpus);
  for (int i = 0; i < job->noffsets && !bad; i++)
    bad = job->offsets[i] < 0 || job->offsets[i] > 4096;
  if (bad) {
    fprintf(stderr, "fuzz_options: the parser accepted a job out of range: %s\n",
            job->command_line);
    abort();
  }
  return tune_ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  int skew = data[0] & 1;
  char *buf = malloc(size);
  if (buf == NULL) return 0;
  memcpy(buf, data + 1, size - 1);
  buf[size - 1] = '\0';
  char *argv[FUZZ_MAX_ARGS + 3];
  int argc = 0;
  argv[argc++] = "tune";
  argv[argc++] = skew ? "skew" : "run";
  for (size_t i = 0; i < size - 1 && argc < FUZZ_MAX_ARGS + 2; i += strlen(buf + i) + 1)
    argv[argc++] = buf + i;
  argv[argc] = NULL;
  if (skew) {
    tune_skew_opts o;
    tune_skew_parse(argc - 1, argv + 1, &o);
  } else {
    tune_main(argc, argv);
  }
  free(buf);
  return 0;
}
