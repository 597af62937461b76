/* test_job_opts.c: the default world sizes of a job (job_opts.h): 2, 4, 8
 * up to its ranks, and the ranks themselves; and a job given neither --gpus
 * nor --worlds taking, once its backend has counted the ranks, the worlds
 * --gpus N would have given it (on 6 GPUs found, `tune` measured worlds 2
 * and 4 and dropped 8, where `tune --gpus 6` measures 2, 4 and 6). The
 * engine and verify call tune_job_resolve_worlds after describe: only a
 * GPU reaches it (the sim needs --gpus). */
#include <stdio.h>
#include <string.h>

#include "job_opts.h"
#include "tap.h"

/* "2,4,6" of worlds[0..n). */
static const char *list(const int *worlds, int n, char *buf, size_t len) {
  size_t k = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && k < len; i++) k += (size_t)snprintf(buf + k, len - k, "%s%d", i ? "," : "", worlds[i]);
  return buf;
}

/* A job as the command line leaves it: --gpus gpus, --worlds given or not. */
static tune_job parsed(int gpus, int worlds_given) {
  tune_job job;
  memset(&job, 0, sizeof(job));
  job.gpus = gpus;
  job.worlds_default = !worlds_given;
  job.nworlds = worlds_given ? 1 : tune_job_default_worlds(gpus, job.worlds);
  if (worlds_given) job.worlds[0] = 2;
  return job;
}

int main(void) {
  static const struct {
    int n;
    const char *want;
  } defaults[] = {{0, "2,4,8"}, {1, "1"},     {2, "2"},     {3, "2,3"},     {4, "2,4"},
                  {5, "2,4,5"}, {6, "2,4,6"}, {7, "2,4,7"}, {8, "2,4,8"}, {16, "2,4,8"}};
  char got[64];
  int w[TUNE_MAX_WORLDS];
  for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
    int n = tune_job_default_worlds(defaults[i].n, w);
    tap_ok(strcmp(list(w, n, got, sizeof(got)), defaults[i].want) == 0, "default worlds of %d ranks: %s (got %s)",
           defaults[i].n, defaults[i].want, got);
  }
  for (int n = 1; n <= 8; n++) {
    tune_job job = parsed(0, 0), given = parsed(n, 0);
    int changed = tune_job_resolve_worlds(&job, n);
    tap_ok(changed == (n != 8) && job.nworlds == given.nworlds &&
               memcmp(job.worlds, given.worlds, (size_t)given.nworlds * sizeof(int)) == 0,
           "no --gpus, %d ranks found: the worlds of --gpus %d (%s), changed %d", n, n,
           list(job.worlds, job.nworlds, got, sizeof(got)), changed);
  }
  tune_job job = parsed(6, 0);
  tap_ok(!tune_job_resolve_worlds(&job, 8) && strcmp(list(job.worlds, job.nworlds, got, sizeof(got)), "2,4,6") == 0,
         "--gpus 6 keeps its worlds (%s)", got);
  job = parsed(0, 1);
  tap_ok(!tune_job_resolve_worlds(&job, 6) && strcmp(list(job.worlds, job.nworlds, got, sizeof(got)), "2") == 0,
         "--worlds keeps exactly its worlds (%s)", got);
  job = parsed(0, 0);
  tap_ok(!tune_job_resolve_worlds(&job, 0) && job.nworlds == 3, "no ranks counted: nothing changes");
  return tap_done();
}
