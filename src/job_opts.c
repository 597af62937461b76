/* job_opts.c: the options of the measuring commands (run, verify) as
 * rows of the option spec, their handlers, and the checks that need every
 * option (job_opts.h). */
#include "job_opts.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress.h"
#include "tune.h"

TUNE_PARAM(Trials, "TRIALS", 20, TUNE_TRIALS_MIN, TUNE_TRIALS_MAX);
TUNE_PARAM(MaxTrials, "MAX_TRIALS", 160, TUNE_TRIALS_MIN, TUNE_TRIALS_MAX);
TUNE_PARAM(Warmup, "WARMUP", 5, 0, TUNE_WARMUP_MAX);
TUNE_PARAM(Seed, "SEED", 1, 0, INT64_MAX);

/* Where p's value came from, for a message: "--trials 5", "TUNE_TRIALS=5"
 * or "the default 20". */
static const char *param_origin(const tune_param *p, const char *opt, char *buf, size_t len) {
  char env[40];
  snprintf(env, sizeof(env), "TUNE_%.32s", p->env);
  if (p->state == 2)
    snprintf(buf, len, "%s %" PRId64, opt, p->value);
  else if (getenv(env) != NULL)
    snprintf(buf, len, "%s=%s", env, getenv(env));
  else
    snprintf(buf, len, "the default %" PRId64, p->value);
  return buf;
}

/* Parse "a,b,c" with parse() into *mask; a usage error naming opt and the
 * first unknown or repeated name, an empty item, or an empty list. The list
 * is read in place, whatever its length. */
static int parse_mask(const char *cmd, const char *opt, const char *list,
                      int (*parse)(const char *), const char *what, unsigned *mask) {
  char tok[64];
  *mask = 0;
  if (tune_check_list_items(cmd, opt, list) != 0) return TUNE_EXIT_USAGE;
  for (const char *p = list; *p;) {
    size_t w = strcspn(p, ","); /* > 0: no empty items */
    snprintf(tok, sizeof(tok), "%.*s", (int)w, p);
    int v = w < sizeof(tok) ? parse(tok) : -1;
    if (v < 0) return tune_usage_error(cmd, "%s: unknown %s '%.*s'", opt, what, (int)w, p);
    if (*mask >> v & 1) return tune_usage_error(cmd, "%s: %s '%s' is given twice", opt, what, tok);
    *mask |= 1u << v;
    p += w + (p[w] == ',');
  }
  if (*mask == 0) return tune_usage_error(cmd, "%s: the list is empty", opt);
  return 0;
}

/* Parse "2,4,8" into at most cap distinct ints in [lo, hi] (*n of them); a
 * usage error naming opt and what is wrong (tune_check_list_items too). */
static int parse_ints(const char *cmd, const char *opt, const char *list, int *out, int cap,
                      int64_t lo, int64_t hi, int *n) {
  char tok[32];
  *n = 0;
  if (tune_check_list_items(cmd, opt, list) != 0) return TUNE_EXIT_USAGE;
  for (const char *p = list; *p;) {
    size_t w = strcspn(p, ","); /* > 0: no empty items */
    int64_t v;
    snprintf(tok, sizeof(tok), "%.*s", (int)w, p);
    if (w >= sizeof(tok) || tune_parse_int(tok, lo, hi, &v) != tune_ok)
      return tune_usage_error(cmd, "%s: '%.*s' is not a number in %" PRId64 "..%" PRId64, opt, (int)w, p,
                              lo, hi);
    for (int i = 0; i < *n; i++)
      if (out[i] == v) return tune_usage_error(cmd, "%s: %" PRId64 " is given twice", opt, v);
    if (*n == cap) return tune_usage_error(cmd, "%s: more than %d values", opt, cap);
    out[(*n)++] = (int)v;
    p += w + (p[w] == ',');
  }
  if (*n == 0) return tune_usage_error(cmd, "%s: the list is empty", opt);
  return 0;
}

/* A path option given as '' would be opened as the current folder or fail
 * late; refuse it with the others. */
static int check_path(const char *cmd, const char *opt, const char *path) {
  return path != NULL && *path == '\0' ? tune_usage_error(cmd, "%s: the path is empty", opt) : 0;
}

int tune_job_opt_mask(void *out, const tune_opt *o, const char *v, int seen, int argc,
                      char **argv) {
  (void)seen, (void)argc, (void)argv;
  tune_job_args *a = out;
  tune_job *job = &a->job;
  char opt[32];
  snprintf(opt, sizeof(opt), "--%s", o->name);
  if (strcmp(o->name, "ops") == 0) return parse_mask(a->cmd, opt, v, dc_op_parse, "op", &job->ops);
  if (strcmp(o->name, "dtypes") == 0)
    return parse_mask(a->cmd, opt, v, dc_dtype_parse, "dtype", &job->dtypes);
  return parse_mask(a->cmd, opt, v, dc_mode_parse, "mode", &job->modes);
}

int tune_job_opt_offsets(void *out, const tune_opt *o, const char *v, int seen, int argc,
                         char **argv) {
  (void)o, (void)seen, (void)argc, (void)argv;
  tune_job_args *a = out;
  tune_job *job = &a->job;
  return parse_ints(a->cmd, "--offsets", v, job->offsets, TUNE_MAX_OFFSETS, 0, TUNE_MAX_OFFSET,
                    &job->noffsets);
}

/* --trials, --max-trials, --warmup, --seed: params (command line >
 * environment > default), their ranges the params'. */
int tune_job_opt_param(void *out, const tune_opt *o, const char *v, int seen, int argc,
                       char **argv) {
  (void)seen, (void)argc, (void)argv;
  tune_job_args *a = out;
  tune_param *p = strcmp(o->name, "trials") == 0       ? &tune_param_Trials
                  : strcmp(o->name, "max-trials") == 0 ? &tune_param_MaxTrials
                  : strcmp(o->name, "warmup") == 0     ? &tune_param_Warmup
                                                       : &tune_param_Seed;
  if (tune_param_set_str(p, v) == tune_ok) return 0;
  return tune_usage_error(a->cmd, "--%s: '%s' is not a number in %" PRId64 "..%" PRId64, o->name, v,
                          p->lo, p->hi);
}

int tune_job_opt_resume(void *out, const tune_opt *o, const char *v, int seen, int argc,
                        char **argv) {
  (void)o, (void)seen, (void)argc, (void)argv;
  tune_job_args *a = out;
  tune_job *job = &a->job;
  job->resume = 1;
  if (v && tune_parse_int(v, 1, INT64_MAX, &job->resume_run) != tune_ok)
    return tune_usage_error(a->cmd, "--resume: '%s' is not a run id", v);
  return 0;
}

int tune_job_opt_skew_us(void *out, const tune_opt *o, const char *v, int seen, int argc,
                         char **argv) {
  (void)seen, (void)argc, (void)argv;
  tune_job_args *a = out;
  int64_t us;
  if (tune_parse_int(v, o->lo, o->hi, &us) != tune_ok)
    return tune_usage_error(a->cmd, "--tune-skew-us: '%s' is not a number of us in 0..10000000", v);
  a->job.tune_skew_ns = us * 1000;
  return 0;
}

void tune_job_args_init(tune_job_args *a, const char *cmd) {
  *a = (tune_job_args){.cmd = cmd,
                       .tolerance = TUNE_REGRET_TOLERANCE,
                       .job = {
                           .backend = "gpu",
                           .launcher = "threads",
                           /* as nccl-tests (20 iterations per graph) and bench_detcoll */
                           .graph_calls = 20,
                           .db_path = "tune-results/tune.db",
                           .ops = (1u << DC_OP_COUNT) - 1,
                           .dtypes = 1u << DC_DTYPE_BF16 | 1u << DC_DTYPE_FP32,
                           .modes = (1u << DC_MODE_COUNT) - 1,
                           .offsets = {0, 4},
                           .noffsets = 2,
                           .min_bytes = 1024,
                           .max_bytes = 256ull << 20,
                           .grid_factor = 2,
                           .resolution = 0.0625,
                           .confidence = 0.95,
                       }};
}

int tune_job_default_worlds(int n, int *worlds) {
  int k = 0;
  for (int w = 2; w <= 8 && (n == 0 || w <= n); w *= 2) worlds[k++] = w;
  if (n > 0 && n <= DC_MAX_WORLD && (k == 0 || worlds[k - 1] != n)) worlds[k++] = n;
  return k;
}

int tune_job_resolve_worlds(tune_job *job, int n) {
  int w[TUNE_MAX_WORLDS], k;
  if (job->gpus != 0 || !job->worlds_default || n < 1) return 0;
  k = tune_job_default_worlds(n, w);
  if (k == job->nworlds && memcmp(w, job->worlds, (size_t)k * sizeof(int)) == 0) return 0;
  memcpy(job->worlds, w, (size_t)k * sizeof(int));
  job->nworlds = k;
  return 1;
}

/* The checks that need every option: ranges between options, offsets of
 * distinct alignment classes, the numeric params (command line >
 * environment > default), --gpus, and the world sizes. */
int tune_job_args_check(tune_job_args *a) {
  tune_job *job = &a->job;
  int rc;
  if (job->min_bytes > job->max_bytes)
    return tune_usage_error(a->cmd, "--min-bytes is larger than --max-bytes");
  /* mpirun starts every process with the whole command line: under the
   * threads launcher each would run the whole job on every GPU (and all but
   * one find the database in use). */
  const char *np = getenv("OMPI_COMM_WORLD_SIZE");
  if (np && atoi(np) > 1 && strcmp(job->launcher, "threads") == 0 && strcmp(a->cmd, "replay") != 0)
    return tune_usage_error(a->cmd,
                            "this is one of %s processes mpirun started, and --launcher is threads, "
                            "under which one process drives every GPU: give --launcher mpi (one "
                            "process per rank), or run tune without mpirun",
                            np);
  if ((rc = check_path(a->cmd, "--db", job->db_path)) != 0 ||
      (rc = check_path(a->cmd, "--header", job->header_path)) != 0 ||
      (rc = check_path(a->cmd, "--report-dir", job->report_dir)) != 0)
    return rc;
  if (job->no_report && job->report_dir)
    return tune_usage_error(a->cmd, "--no-report and --report-dir contradict each other: give one");
  /* The database keys crossovers and header rows by alignment class (16-byte
   * aligned or not), so two offsets of one class would collide there. */
  for (int i = 0; i < job->noffsets; i++)
    for (int k = 0; k < i; k++)
      if ((job->offsets[i] % 16 == 0) == (job->offsets[k] % 16 == 0))
        return tune_usage_error(
            a->cmd,
            "--offsets: %d and %d are both %s16-byte aligned; give at most one offset of each"
            " alignment class (one a multiple of 16, one not)",
            job->offsets[k], job->offsets[i], job->offsets[i] % 16 ? "not " : "");
  if (tune_param_load(&tune_param_Trials) != tune_ok ||
      tune_param_load(&tune_param_MaxTrials) != tune_ok ||
      tune_param_load(&tune_param_Warmup) != tune_ok ||
      tune_param_load(&tune_param_Seed) != tune_ok ||
      tune_param_load(&tune_param_ProgressSeconds) != tune_ok)
    return TUNE_EXIT_USAGE;
  job->trials = (int)tune_param_get(&tune_param_Trials);
  job->max_trials = (int)tune_param_get(&tune_param_MaxTrials);
  job->warmup = (int)tune_param_get(&tune_param_Warmup);
  job->seed = (uint64_t)tune_param_get(&tune_param_Seed);
  if (job->max_trials < job->trials) {
    char mt[96], t[96];
    return tune_usage_error(a->cmd, "--max-trials is smaller than --trials (%s, %s)",
                            param_origin(&tune_param_MaxTrials, "--max-trials", mt, sizeof(mt)),
                            param_origin(&tune_param_Trials, "--trials", t, sizeof(t)));
  }
  /* Without --gpus the gpu backend uses every device it finds. */
  if (a->gpus == 0 && strcmp(job->backend, "sim") == 0)
    return tune_usage_error(a->cmd, "--gpus is required with --backend sim");
  job->gpus = (int)a->gpus;
  job->worlds_default = a->worlds == NULL;
  if (job->worlds_default) {
    job->nworlds = tune_job_default_worlds(job->gpus, job->worlds);
    return 0;
  }
  if ((rc = parse_ints(a->cmd, "--worlds", a->worlds, job->worlds, TUNE_MAX_WORLDS, 1, DC_MAX_WORLD,
                       &job->nworlds)) != 0)
    return rc;
  for (int i = 0; i < job->nworlds; i++)
    if (a->gpus && job->worlds[i] > a->gpus)
      return tune_usage_error(a->cmd, "--worlds: %d is more than --gpus %" PRId64, job->worlds[i],
                              a->gpus);
  return 0;
}
