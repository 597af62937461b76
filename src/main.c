/* main.c: the tune command line. Subcommands are rows of a table; each
 * parses its own options with getopt_long, answers --help, and exits 2 on a
 * usage error with a message naming the bad argument. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "emit.h"
#include "engine.h"
#include "fleet.h"
#include "opts.h"
#include "report.h"
#include "skew.h"
#include "store.h"
#include "tune.h"

TUNE_PARAM(Trials, "TRIALS", 20, TUNE_TRIALS_MIN, TUNE_TRIALS_MAX);
TUNE_PARAM(MaxTrials, "MAX_TRIALS", 160, TUNE_TRIALS_MIN, TUNE_TRIALS_MAX);
TUNE_PARAM(Warmup, "WARMUP", 5, 0, TUNE_WARMUP_MAX);
TUNE_PARAM(Seed, "SEED", 1, 0, INT64_MAX);

/* Join argv into one line for the runs table. */
static char *join_args(int argc, char **argv) {
  size_t n = 1;
  for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
  char *s = malloc(n);
  if (s == NULL) return NULL;
  s[0] = '\0';
  for (int i = 0; i < argc; i++) {
    if (i) strcat(s, " ");
    strcat(s, argv[i]);
  }
  return s;
}

/* Parse "a,b,c" with parse() into *mask; a usage error naming opt and the
 * first unknown or repeated name, or an empty list. The list is read in
 * place, whatever its length. */
static int parse_mask(const char *opt, const char *list, int (*parse)(const char *),
                      const char *what, unsigned *mask) {
  char tok[64];
  *mask = 0;
  for (const char *p = list; *p;) {
    size_t w = strcspn(p, ",");
    if (w > 0) {
      snprintf(tok, sizeof(tok), "%.*s", (int)w, p);
      int v = w < sizeof(tok) ? parse(tok) : -1;
      if (v < 0) return tune_usage_error("run", "%s: unknown %s '%.*s'", opt, what, (int)w, p);
      if (*mask >> v & 1)
        return tune_usage_error("run", "%s: %s '%s' is given twice", opt, what, tok);
      *mask |= 1u << v;
    }
    p += w + (p[w] == ',');
  }
  if (*mask == 0) return tune_usage_error("run", "%s: the list is empty", opt);
  return 0;
}

/* Parse "2,4,8" into at most cap distinct ints in [lo, hi] (*n of them); a
 * usage error naming opt and what is wrong. */
static int parse_ints(const char *opt, const char *list, int *out, int cap, int64_t lo, int64_t hi,
                      int *n) {
  char tok[32];
  *n = 0;
  for (const char *p = list; *p;) {
    size_t w = strcspn(p, ",");
    int64_t v;
    if (w > 0) {
      snprintf(tok, sizeof(tok), "%.*s", (int)w, p);
      if (w >= sizeof(tok) || tune_parse_int(tok, lo, hi, &v) != tune_ok)
        return tune_usage_error("run", "%s: '%.*s' is not a number in %" PRId64 "..%" PRId64, opt,
                                (int)w, p, lo, hi);
      for (int i = 0; i < *n; i++)
        if (out[i] == v) return tune_usage_error("run", "%s: %" PRId64 " is given twice", opt, v);
      if (*n == cap) return tune_usage_error("run", "%s: more than %d values", opt, cap);
      out[(*n)++] = (int)v;
    }
    p += w + (p[w] == ',');
  }
  if (*n == 0) return tune_usage_error("run", "%s: the list is empty", opt);
  return 0;
}

/* A path option given as '' would be opened as the current folder or fail
 * late; refuse it with the others. */
static int check_path(const char *opt, const char *path) {
  return path != NULL && *path == '\0' ? tune_usage_error("run", "%s: the path is empty", opt) : 0;
}

static const char *run_usage =
    "usage: tune [run] --gpus N [options]\n"
    "\n"
    "The main job: measure libdetcoll with the current thresholds (before), sweep\n"
    "every forced kernel path and find the crossover sizes, write the thresholds\n"
    "header, measure again with it (after), and write the report.\n"
    "\n";

static const char *run_outro =
    "\n"
    "SIZE takes K, M, G, KiB, MiB, GiB (binary). Logging: TUNE_DEBUG=WARN|INFO|TRACE.\n";

/* The whole command line, for the --resume hint of an interrupted job. */
static int main_argc;
static char **main_argv;

/* Whether this tune runs from the build tree it was built in (src/tune, or
 * libtune's wrapped src/.libs/tune), not installed somewhere else. */
static int main_in_build_tree(void) {
  char exe[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return 0;
  exe[n] = '\0';
  snprintf(a, sizeof(a), "%s/src", TUNE_ABS_BUILDDIR);
  snprintf(b, sizeof(b), "%s/src/.libs", TUNE_ABS_BUILDDIR);
  char *dir = dirname(exe);
  return tune_same_file(dir, a) || tune_same_file(dir, b);
}

/* The source tree whose kernels/thresholds.h a job installs, and the build
 * tree rebuilt against it. Only a tune run from its build tree has them
 * (TUNE_SRCDIR and TUNE_BUILD_DIR, as ./tune sets them, override); it
 * rebuilds only the build tree that compiles that source tree's header.
 * An installed tune has neither: it never writes into a source checkout. */
static void main_trees(tune_job *job) {
  const char *srcdir = getenv("TUNE_SRCDIR"), *builddir = getenv("TUNE_BUILD_DIR");
  if (!main_in_build_tree()) {
    job->srcdir = job->build_dir = NULL;
    return;
  }
  job->srcdir = srcdir && *srcdir ? srcdir : TUNE_ABS_SRCDIR;
  job->build_dir = builddir && *builddir ? builddir : TUNE_ABS_BUILDDIR;
  if (!tune_same_file(job->srcdir, TUNE_ABS_SRCDIR) || !tune_same_file(job->build_dir, TUNE_ABS_BUILDDIR))
    job->build_dir = NULL;
}

/* The main job's options as parsed, before the checks that need them all. */
typedef struct {
  tune_job job;
  const char *worlds;
  int64_t gpus;
  int node_timeout; /* tune fleet */
} run_args;

static int opt_mask(void *out, const tune_opt *o, const char *v, int seen, int argc, char **argv) {
  (void)seen, (void)argc, (void)argv;
  tune_job *job = &((run_args *)out)->job;
  char opt[32];
  snprintf(opt, sizeof(opt), "--%s", o->name);
  if (strcmp(o->name, "ops") == 0) return parse_mask(opt, v, dc_op_parse, "op", &job->ops);
  if (strcmp(o->name, "dtypes") == 0) return parse_mask(opt, v, dc_dtype_parse, "dtype", &job->dtypes);
  return parse_mask(opt, v, dc_mode_parse, "mode", &job->modes);
}

static int opt_offsets(void *out, const tune_opt *o, const char *v, int seen, int argc, char **argv) {
  (void)o, (void)seen, (void)argc, (void)argv;
  tune_job *job = &((run_args *)out)->job;
  return parse_ints("--offsets", v, job->offsets, TUNE_MAX_OFFSETS, 0, 4096, &job->noffsets);
}

static int opt_bytes(void *out, const tune_opt *o, const char *v, int seen, int argc, char **argv) {
  (void)seen, (void)argc, (void)argv;
  tune_job *job = &((run_args *)out)->job;
  uint64_t b;
  if (tune_parse_size(v, &b) != tune_ok || b == 0 || b > (64ull << 30))
    return tune_usage_error("run", "--%s: '%s' is not a size in 1..64G", o->name, v);
  *(strcmp(o->name, "min-bytes") == 0 ? &job->min_bytes : &job->max_bytes) = b;
  return 0;
}

/* --trials, --max-trials, --warmup, --seed: params (command line >
 * environment > default), their ranges the params'. */
static int opt_param(void *out, const tune_opt *o, const char *v, int seen, int argc, char **argv) {
  (void)out, (void)seen, (void)argc, (void)argv;
  tune_param *p = strcmp(o->name, "trials") == 0       ? &tune_param_Trials
                  : strcmp(o->name, "max-trials") == 0 ? &tune_param_MaxTrials
                  : strcmp(o->name, "warmup") == 0     ? &tune_param_Warmup
                                                       : &tune_param_Seed;
  if (tune_param_set_str(p, v) == tune_ok) return 0;
  return tune_usage_error("run", "--%s: '%s' is not a number in %" PRId64 "..%" PRId64, o->name, v, p->lo, p->hi);
}

static int opt_resume(void *out, const tune_opt *o, const char *v, int seen, int argc, char **argv) {
  (void)o, (void)seen, (void)argc, (void)argv;
  tune_job *job = &((run_args *)out)->job;
  job->resume = 1;
  if (v && tune_parse_int(v, 1, INT64_MAX, &job->resume_run) != tune_ok)
    return tune_usage_error("run", "--resume: '%s' is not a run id", v);
  return 0;
}

static int opt_skew_us(void *out, const tune_opt *o, const char *v, int seen, int argc, char **argv) {
  (void)seen, (void)argc, (void)argv;
  int64_t us;
  if (tune_parse_int(v, o->lo, o->hi, &us) != tune_ok)
    return tune_usage_error("run", "--tune-skew-us: '%s' is not a number of us in 0..10000000", v);
  ((run_args *)out)->job.tune_skew_ns = us * 1000;
  return 0;
}

static const tune_opt run_spec[] = {
    TUNE_OPT_INT_ROW("gpus", NULL, "N", run_args, gpus, 1, 1024,
                     "ranks (GPUs) to use; world sizes are 2, 4, 8 up to N"),
    TUNE_OPT_CHOICE_ROW("backend", "gpu|sim", run_args, job.backend, "gpu|sim",
                        "measure the GPUs (default) or rehearse on the sim model"),
    TUNE_OPT_CHOICE_ROW("launcher", "L", run_args, job.launcher, "threads|mpi",
                        "threads (default: one process, a thread per rank) or mpi\n"
                        "(mpirun -np N tune ... --launcher mpi: a process per rank)"),
    TUNE_OPT_FLAG_ROW("virtual-ranks", run_args, job.virtual_ranks,
                      "put every rank on GPU 0 (development on one GPU)"),
    TUNE_OPT_INT_ROW("graph-calls", NULL, "K", run_args, job.graph_calls, 1, 1000,
                     "collectives captured per CUDA graph in graph mode (default 10)"),
    {.name = "resume",
     .kind = TUNE_OPT_CALL,
     .arg = "[=RUN]",
     .optional = 1,
     .call = opt_resume,
     .help = "continue the unfinished main job of these options (give the\n"
             "same options again); with RUN, the job that run belongs to\n"
             "(its before, sweep or after run), refused if it has\n"
             "finished or was started with other options"},
    {.name = "tune-skew-us",
     .kind = TUNE_OPT_CALL,
     .arg = "D",
     .lo = 0,
     .hi = 10000000,
     .call = opt_skew_us,
     .help = "also find crossovers with rank 0 delayed by D us"},
    TUNE_OPT_STRING_ROW("db", NULL, "FILE", run_args, job.db_path, "SQLite database (default tune-results/tune.db)"),
    TUNE_OPT_STRING_ROW("header", NULL, "FILE", run_args, job.header_path,
                        "where to write the thresholds header (default: the source\n"
                        "tree's kernels/thresholds.h, installed and compiled in at\n"
                        "the end of the job; for sim and for an installed tune,\n"
                        "beside the database); the after pass measures it without\n"
                        "a rebuild, as DC_THRESHOLDS_FILE=FILE would"),
    TUNE_OPT_FLAG_ROW("allow-sim", run_args, job.allow_sim, "let a sim run install kernels/thresholds.h"),
    TUNE_OPT_STRING_ROW("report-dir", "out", "DIR", run_args, job.report_dir,
                        "report folder (default: <db folder>/report); also --out"),
    TUNE_OPT_FLAG_ROW("no-report", run_args, job.no_report, "skip the report"),
    TUNE_OPT_CALL_ROW("ops", "op", "LIST", opt_mask,
                      "all_gather,all_reduce,reduce_scatter (default all); also --op"),
    TUNE_OPT_CALL_ROW("dtypes", "dtype", "LIST", opt_mask, "bf16,fp16,fp32 (default bf16,fp32); also --dtype"),
    TUNE_OPT_CALL_ROW("modes", "mode", "LIST", opt_mask, "eager,graph (default both); also --mode"),
    TUNE_OPT_STRING_ROW("worlds", NULL, "LIST", run_args, worlds, "world sizes (default 2,4,8 up to --gpus)"),
    TUNE_OPT_CALL_ROW("offsets", NULL, "LIST", opt_offsets, "buffer offsets in bytes, in = out (default 0,4)"),
    TUNE_OPT_FLAG_ROW("no-reg", run_args, job.no_reg,
                      "leave registered buffers out: each 16-aligned offset is\n"
                      "otherwise measured again with its buffers registered\n"
                      "(detcoll_reg: the direct and copy_engine paths, reg16 rows)"),
    TUNE_OPT_CALL_ROW("min-bytes", NULL, "SIZE", opt_bytes, "smallest bytes per rank (default 1K)"),
    TUNE_OPT_CALL_ROW("max-bytes", NULL, "SIZE", opt_bytes, "largest bytes per rank (default 256M)"),
    TUNE_OPT_DOUBLE_ROW("grid-factor", "F", run_args, job.grid_factor, 1.1, 64, "coarse grid ratio (default 2)"),
    TUNE_OPT_DOUBLE_ROW("resolution", "R", run_args, job.resolution, 0.001, 1,
                        "bisection stops at hi <= lo*(1+R) (default 0.0625)"),
    TUNE_OPT_DOUBLE_ROW("confidence", "C", run_args, job.confidence, 0.5, 0.9999,
                        "confidence of the median-difference CI (default 0.95)"),
    TUNE_OPT_CALL_ROW("trials", NULL, "N", opt_param, "trials per configuration (default 20; env TUNE_TRIALS)"),
    TUNE_OPT_CALL_ROW("max-trials", NULL, "N", opt_param, "trials cap when a CI straddles zero (default 160)"),
    TUNE_OPT_CALL_ROW("warmup", NULL, "N", opt_param, "warm-up calls (default 5; env TUNE_WARMUP)"),
    TUNE_OPT_CALL_ROW("seed", NULL, "N", opt_param, "seed of data, noise and bootstrap (default 1; env TUNE_SEED)"),
};

/* The checks that need every option: ranges between options, offsets of
 * distinct alignment classes, the numeric params (command line >
 * environment > default), --gpus, and the world sizes. */
static int run_check(run_args *a) {
  tune_job *job = &a->job;
  int rc;
  if (job->min_bytes > job->max_bytes) return tune_usage_error("run", "--min-bytes is larger than --max-bytes");
  if ((rc = check_path("--db", job->db_path)) != 0 || (rc = check_path("--header", job->header_path)) != 0 ||
      (rc = check_path("--report-dir", job->report_dir)) != 0)
    return rc;
  /* The database keys crossovers and header rows by alignment class (16-byte
   * aligned or not), so two offsets of one class would collide there. */
  for (int i = 0; i < job->noffsets; i++)
    for (int k = 0; k < i; k++)
      if ((job->offsets[i] % 16 == 0) == (job->offsets[k] % 16 == 0))
        return tune_usage_error(
            "run",
            "--offsets: %d and %d are both %s16-byte aligned; give at most one offset of each"
            " alignment class (one a multiple of 16, one not)",
            job->offsets[k], job->offsets[i], job->offsets[i] % 16 ? "not " : "");
  if (tune_param_load(&tune_param_Trials) != tune_ok || tune_param_load(&tune_param_MaxTrials) != tune_ok ||
      tune_param_load(&tune_param_Warmup) != tune_ok || tune_param_load(&tune_param_Seed) != tune_ok)
    return TUNE_EXIT_USAGE;
  job->trials = (int)tune_param_get(&tune_param_Trials);
  job->max_trials = (int)tune_param_get(&tune_param_MaxTrials);
  job->warmup = (int)tune_param_get(&tune_param_Warmup);
  job->seed = (uint64_t)tune_param_get(&tune_param_Seed);
  if (job->max_trials < job->trials) return tune_usage_error("run", "--max-trials is smaller than --trials");
  /* Without --gpus the gpu backend uses every device it finds. */
  if (a->gpus == 0 && strcmp(job->backend, "sim") == 0)
    return tune_usage_error("run", "--gpus is required with --backend sim");
  job->gpus = (int)a->gpus;
  if (a->worlds == NULL) {
    for (int w = 2; w <= 8 && (a->gpus == 0 || w <= a->gpus); w *= 2) job->worlds[job->nworlds++] = w;
    if (job->nworlds == 0) job->worlds[job->nworlds++] = 1;
    return 0;
  }
  if ((rc = parse_ints("--worlds", a->worlds, job->worlds, TUNE_MAX_WORLDS, 1, 1024, &job->nworlds)) != 0)
    return rc;
  for (int i = 0; i < job->nworlds; i++)
    if (a->gpus && job->worlds[i] > a->gpus)
      return tune_usage_error("run", "--worlds: %d is more than --gpus %" PRId64, job->worlds[i], a->gpus);
  return 0;
}

/* The program for the --resume hint: argv[0], except under libtool's
 * wrapper of an uninstalled tune, whose argv[0] is the real program in
 * .libs/ that runs only with the wrapper's library path: the wrapper then. */
static const char *main_program(const char *argv0, char *buf, size_t len) {
  const char *slash = strrchr(argv0, '/');
  if (slash == NULL || slash - argv0 < 6 || strncmp(slash - 6, "/.libs", 6) != 0) return argv0;
  const char *base = strncmp(slash + 1, "lt-", 3) == 0 ? slash + 4 : slash + 1;
  snprintf(buf, len, "%.*s/%s", (int)(slash - 6 - argv0), argv0, base);
  return access(buf, X_OK) == 0 ? buf : argv0;
}

static run_args run_defaults(const char *launcher);

static int cmd_run(int argc, char **argv) {
  run_args a = run_defaults("threads");
  int64_t v;
  int rc, helped;
  rc = tune_opts_parse("run", run_spec, sizeof(run_spec) / sizeof(run_spec[0]), argc, argv, &a, 0, run_usage,
                       run_outro, 22, &helped);
  if (rc != 0 || helped) return rc;
  /* getopt takes an optional value only when attached: "--resume 3" leaves "3". */
  if (optind < argc && a.job.resume && !a.job.resume_run &&
      tune_parse_int(argv[optind], 1, INT64_MAX, &v) == tune_ok)
    return tune_usage_error("run",
                            "unexpected argument '%s' (a run to resume is given as --resume=%s)",
                            argv[optind], argv[optind]);
  if (optind < argc) return tune_usage_error("run", "unexpected argument '%s'", argv[optind]);
  if ((rc = run_check(&a)) != 0) return rc;
  char *cmdline = join_args(argc, argv), program[PATH_MAX];
  main_trees(&a.job);
  a.job.argc = main_argc;
  a.job.argv = main_argv;
  main_argv[0] = (char *)main_program(main_argv[0], program, sizeof(program));
  a.job.command_line = cmdline ? cmdline : "?";
  tune_result r = tune_job_run(&a.job);
  free(cmdline);
  return tune_exit_status(r);
}

static const char *fleet_usage =
    "usage: mpirun -np NODESxN --map-by ppr:N:node tune fleet --gpus N [options]\n"
    "\n"
    "The main job on every node of a cluster at once: processes are grouped by\n"
    "node (TUNE_FLEET_NODE_SIZE=K, for tests, groups ranks by rank / K), each node\n"
    "runs before, sweep, header and after on its own GPUs, into its own database\n"
    "beside --db (DB-nodes/fleet-ID/); world rank 0 then merges them into --db,\n"
    "writes the consensus header and the report, and flags the outlier nodes.\n"
    "Exits 3 when a node is an outlier, failed, dropped out or differs in\n"
    "hardware. --launcher is mpi here: each node's ranks are its processes.\n"
    "\n";

/* The main job's defaults, with launcher (a fleet's nodes: mpi). */
static run_args run_defaults(const char *launcher) {
  run_args a = {.job = {
                    .backend = "gpu",
                    .launcher = launcher,
                    .graph_calls = 10,
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
  return a;
}

/* The checks tune fleet and tune merge share. */
static int fleet_check(run_args *a, int merge) {
  if (!merge && strcmp(a->job.launcher, "mpi") != 0)
    return tune_usage_error(
        "fleet", "--launcher %s: a fleet runs each node's ranks as MPI processes", a->job.launcher);
  if (a->job.resume_run)
    return tune_usage_error(
        "fleet",
        "--resume=RUN: a fleet resumes its newest unfinished run of these options (--resume)");
  if (a->job.header_path)
    return tune_usage_error("fleet",
                            "--header: a fleet writes each node's header beside its database, and "
                            "the consensus beside --db");
  if (a->gpus == 0) return tune_usage_error("fleet", "--gpus is required: the ranks of each node");
  return run_check(a);
}

/* tune fleet: the main job's options, and --node-timeout. */
static int cmd_fleet(int argc, char **argv) {
  enum { nrun = sizeof(run_spec) / sizeof(run_spec[0]) };
  tune_opt spec[nrun + 1];
  memcpy(spec, run_spec, sizeof(run_spec));
  spec[nrun] =
      (tune_opt)TUNE_OPT_INT_ROW("node-timeout", NULL, "S", run_args, node_timeout, 0, 30 * 86400,
                                 "a node not done S seconds after the start is recorded as\n"
                                 "timed out and the fleet concludes without it (default 0: wait)");
  run_args a = run_defaults("mpi");
  int rc, helped;
  rc = tune_opts_parse("fleet", spec, nrun + 1, argc, argv, &a, 0, fleet_usage, run_outro, 22,
                       &helped);
  if (rc != 0 || helped) return rc;
  if (optind < argc) return tune_usage_error("fleet", "unexpected argument '%s'", argv[optind]);
  if ((rc = fleet_check(&a, 0)) != 0) return rc;
#ifdef HAVE_MPI
  char *cmdline = join_args(argc, argv);
  a.job.argc = main_argc;
  a.job.argv = main_argv;
  a.job.command_line = cmdline ? cmdline : "?";
  tune_fleet_opts fo = {&a.job, a.node_timeout};
  int code = tune_fleet_run(&fo);
  free(cmdline);
  return code;
#else
  tune_error("tune fleet: this tune was built without MPI");
  return 1;
#endif
}

static const char *merge_usage =
    "usage: tune merge --db FLEET.db --gpus N [the fleet's options] NODE.db...\n"
    "\n"
    "One fleet run from node databases copied from nodes that share no file\n"
    "system (each node's newest finished main job of these options; a fleet's\n"
    "nodes ran --launcher mpi, the default here, a plain tune run threads): the\n"
    "consensus header, each node's regret, the outlier nodes and the report,\n"
    "as tune fleet writes them. Exits 3 as tune fleet does.\n"
    "\n";

static int cmd_merge(int argc, char **argv) {
  run_args a = run_defaults("mpi");
  int rc, helped;
  rc = tune_opts_parse("merge", run_spec, sizeof(run_spec) / sizeof(run_spec[0]), argc, argv, &a, 0,
                       merge_usage, run_outro, 22, &helped);
  if (rc != 0 || helped) return rc;
  if (optind >= argc) return tune_usage_error("merge", "no node database given");
  if (a.job.resume)
    return tune_usage_error("merge", "--resume: a merge is not resumed, run it again");
  if ((rc = fleet_check(&a, 1)) != 0) return rc;
  for (int i = optind; i < argc; i++) {
    struct stat sb;
    if (stat(argv[i], &sb) != 0 || !S_ISREG(sb.st_mode))
      return tune_usage_error("merge", "%s: not a database file", argv[i]);
    if (tune_same_file(argv[i], a.job.db_path))
      return tune_usage_error("merge", "%s is --db itself", argv[i]);
  }
  char *cmdline = join_args(argc, argv);
  a.job.command_line = cmdline ? cmdline : "?";
  int not_uniform = 0;
  tune_result r = tune_fleet_merge(&a.job, argv + optind, argc - optind, &not_uniform);
  free(cmdline);
  return r == tune_ok && not_uniform ? TUNE_FLEET_EXIT_NOT_UNIFORM : tune_exit_status(r);
}

/* A database to read must be a file: SQLite answers a folder with "disk
 * I/O error". */
static int check_db(const char *cmd, const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return tune_usage_error(cmd, "--db: %s: %s", path, strerror(errno));
  if (S_ISDIR(st.st_mode))
    return tune_usage_error(cmd, "--db: %s is a folder, not a database", path);
  return 0;
}

static const char *report_usage =
    "usage: tune report --db FILE [--before RUN --after RUN] [--out DIR]\n"
    "\n"
    "Draw the latency report from a tune database: latency against bytes per\n"
    "rank per world size (before, after, NCCL), crossover plots, and report.md.\n"
    "Without --before/--after the latest before and after runs are paired.\n"
    "\n";

/* --before, --after: a run id into the int64_t at the row's offset. */
static int opt_run_id(void *out, const tune_opt *o, const char *v, int seen, int argc, char **argv) {
  (void)seen, (void)argc, (void)argv;
  if (tune_parse_int(v, 1, INT64_MAX, (int64_t *)((char *)out + o->offset)) == tune_ok) return 0;
  return tune_usage_error("report", "--%s: '%s' is not a run id", o->name, v);
}

static const tune_opt report_spec[] = {
    TUNE_OPT_STRING_ROW("db", NULL, "FILE", tune_report_opts, db_path, "the database (required)"),
    {.name = "before",
     .kind = TUNE_OPT_CALL,
     .arg = "RUN",
     .offset = offsetof(tune_report_opts, before_run),
     .call = opt_run_id,
     .help = "run id of the before pass"},
    {.name = "after",
     .kind = TUNE_OPT_CALL,
     .arg = "RUN",
     .offset = offsetof(tune_report_opts, after_run),
     .call = opt_run_id,
     .help = "run id of the after pass"},
    TUNE_OPT_STRING_ROW("out", "report-dir", "DIR", tune_report_opts, out_dir,
                        "output folder (default: <db folder>/report); also --report-dir"),
};

static int cmd_report(int argc, char **argv) {
  tune_report_opts o = {NULL, 0, 0, NULL};
  int rc, helped;
  rc = tune_opts_parse("report", report_spec, sizeof(report_spec) / sizeof(report_spec[0]), argc, argv, &o, 0,
                       report_usage, "", 17, &helped);
  if (rc != 0 || helped) return rc;
  if (optind < argc) return tune_usage_error("report", "unexpected argument '%s'", argv[optind]);
  if (o.db_path == NULL) return tune_usage_error("report", "--db FILE is required");
  if ((o.before_run == 0) != (o.after_run == 0))
    return tune_usage_error("report", "--before and --after go together");
  if ((rc = check_db("report", o.db_path)) != 0) return rc;
  return tune_exit_status(tune_report_run(&o));
}

static const char *table_usage =
    "usage: tune table [--file FILE] [--hash]\n"
    "\n"
    "Print a threshold table, checked, one row a line, sorted: the table compiled\n"
    "into this tune (and the libdetcoll built with it), or FILE's. FILE is a\n"
    "thresholds header as tune writes it, or its rows alone: what libdetcoll\n"
    "reads from the file DC_THRESHOLDS_FILE names, instead of its compiled-in\n"
    "table, and dc_comm_set_table takes at run time.\n"
    "\n";

typedef struct {
  const char *file;
  int hash;
} table_args;

static const tune_opt table_spec[] = {
    TUNE_OPT_STRING_ROW("file", NULL, "FILE", table_args, file, "the table of FILE instead of the compiled-in one"),
    TUNE_OPT_FLAG_ROW("hash", table_args, hash,
                      "only the table's content hash (the same for the same rows in\n"
                      "any order); the after pass stores it with its run"),
};

static int cmd_table(int argc, char **argv) {
  table_args t = {NULL, 0};
  int rc, helped;
  rc = tune_opts_parse("table", table_spec, sizeof(table_spec) / sizeof(table_spec[0]), argc, argv, &t, 0,
                       table_usage, "", 17, &helped);
  if (rc != 0 || helped) return rc;
  const char *file = t.file;
  int hash = t.hash;
  if (optind < argc) return tune_usage_error("table", "unexpected argument '%s'", argv[optind]);
  dc_threshold_row *rows;
  size_t n;
  char why[512];
  if (file != NULL && dc_table_read_file(file, &rows, &n, why, sizeof(why)) != 0)
    return tune_usage_error("table", "--file %s", why);
  if (file == NULL) {
    n = dc_builtin_thresholds_count;
    if ((rows = malloc(n * sizeof(*rows))) == NULL) return tune_exit_status(tune_err_system);
    memcpy(rows, dc_builtin_thresholds, n * sizeof(*rows));
  }
  if (hash)
    printf("%016" PRIx64 "\n", dc_table_hash(rows, n));
  else
    tune_emit_rows(stdout, rows, n);
  free(rows);
  return fflush(stdout) == 0 ? 0 : tune_exit_status(tune_err_system);
}

static const char *export_usage =
    "usage: tune export --db FILE --format json [--table NAME] [--out FILE]\n"
    "       tune export --db FILE --format csv --table NAME [--out FILE]\n"
    "\n"
    "Write tables of a tune database as JSON (every table unless --table) or one\n"
    "table as CSV. Text that is not valid UTF-8 is written with U+FFFD in JSON.\n"
    "\n";

typedef struct {
  const char *db, *format, *table, *out;
} export_args;

static const tune_opt export_spec[] = {
    TUNE_OPT_STRING_ROW("db", NULL, "FILE", export_args, db, "the database (required)"),
    TUNE_OPT_CHOICE_ROW("format", "F", export_args, format, "csv|json", "csv or json (required)"),
    TUNE_OPT_STRING_ROW("table", NULL, "NAME", export_args, table,
                        "runs, configs, samples, crossovers, headers, header_rows, regret,\n"
                        "skew_summaries, skew_fits"),
    TUNE_OPT_STRING_ROW("out", NULL, "FILE", export_args, out,
                        "write there instead of standard output ('-'); a regular file\n"
                        "(or a link to one) is replaced whole, a device or FIFO is\n"
                        "written in place; never the database itself"),
};

static int cmd_export(int argc, char **argv) {
  export_args x = {NULL, NULL, NULL, NULL};
  int c, helped;
  c = tune_opts_parse("export", export_spec, sizeof(export_spec) / sizeof(export_spec[0]), argc, argv, &x, 0,
                      export_usage, "", 18, &helped);
  if (c != 0 || helped) return c;
  const char *db = x.db, *format = x.format, *table = x.table, *out = x.out;
  if (optind < argc) return tune_usage_error("export", "unexpected argument '%s'", argv[optind]);
  if (db == NULL) return tune_usage_error("export", "--db FILE is required");
  if (format == NULL) return tune_usage_error("export", "--format csv|json is required");
  if ((c = check_db("export", db)) != 0) return c;
  /* Refused rather than written as one file per table: --out names one
   * file, and its checks (never the database, links followed, replaced
   * whole) stay those of one file. */
  if (strcmp(format, "csv") == 0 && table == NULL)
    return tune_usage_error("export",
                            "--format csv writes one table: give --table NAME (runs, configs, "
                            "samples, ...), once per table, or use --format json for all of them");
  /* Without --out (or with "-") the output is whatever the shell opened as
   * standard output, which may be the database too ('>> base.db'). */
  int to_stdout = out == NULL || strcmp(out, "-") == 0;
  tune_result r = tune_check_output(to_stdout ? "standard output" : "--out",
                                    to_stdout ? "/dev/stdout" : out, db);
  if (r != tune_ok) return tune_exit_status(r);
  tune_store *st = NULL;
  r = tune_store_open(db, 1, &st);
  if (r != tune_ok) return 1;
  tune_output o;
  r = tune_output_open(to_stdout ? "-" : out, &o);
  if (r == tune_ok) r = tune_output_close(&o, tune_store_export(st, table, format, o.f));
  tune_store_close(st);
  return tune_exit_status(r);
}

typedef int command_fn(int argc, char **argv);

static const struct {
  const char *name;
  command_fn *run;
  const char *summary;
} commands[] = {
    {"run", cmd_run, "the main job: before, sweep, thresholds header, after, report"},
    {"report", cmd_report, "draw the gnuplot report from a database"},
    {"export", cmd_export, "write database tables as CSV or JSON"},
    {"skew", tune_cmd_skew, "calibrate collective time against injected rank skew"},
    {"table", cmd_table, "print or check a threshold table: the compiled-in one or a file's"},
    {"fleet", cmd_fleet,
     "under mpirun: the main job on every node, a consensus header, outlier nodes"},
    {"merge", cmd_merge, "one fleet run from node databases copied together"},
};

/* The top-level help: the commands, then the options of the main job, which
 * runs without a command; each command's own help lists the rest. The man
 * page (tune.1) is generated from this text and --version's. */
static void main_help(void) {
  printf("usage: tune [COMMAND] [options]\n\nCommands:\n");
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    printf("  %-8s %s\n", commands[i].name, commands[i].summary);
  printf(
      "\nWithout a command, tune runs the main job ('tune --gpus 8' is 'tune run --gpus 8').\n"
      "On a machine without a GPU, rehearse it on the sim model: tune --backend sim --gpus 8\n"
      "'tune help COMMAND' or 'tune COMMAND --help' lists the options of each command;\n"
      "those of the main job follow.\n\n"
      "  -V, --version       print the version and licence\n\n");
  tune_opts_help(stdout, run_usage, run_spec, sizeof(run_spec) / sizeof(run_spec[0]), 22, run_outro);
}

/* GNU --version: name and version, copyright, licence, warranty. */
static void main_version(void) {
  printf(
      "tune (detcoll) %s\n"
      "Copyright (C) 2026 the detcoll authors.\n"
      "License BSD-3-Clause: <https://opensource.org/licenses/BSD-3-Clause>.\n"
      "This is free software: you are free to change and redistribute it.\n"
      "There is NO WARRANTY, to the extent permitted by law.\n",
      PACKAGE_VERSION);
}

/* The row of commands[] named name, or NULL. */
static command_fn *command_named(const char *name) {
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    if (strcmp(name, commands[i].name) == 0) return commands[i].run;
  return NULL;
}

int main(int argc, char **argv) {
  main_argc = argc;
  main_argv = argv;
  if (argc >= 2 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)) {
    main_version();
    return 0;
  }
  /* 'tune help COMMAND' is 'tune COMMAND --help'. */
  if (argc >= 3 && strcmp(argv[1], "help") == 0) {
    command_fn *run = command_named(argv[2]);
    if (run == NULL) {
      fprintf(stderr, "tune help: unknown command '%s' (see 'tune --help')\n", argv[2]);
      return TUNE_EXIT_USAGE;
    }
    if (argc > 3) {
      fprintf(stderr, "tune help: unexpected argument '%s'\n", argv[3]);
      return TUNE_EXIT_USAGE;
    }
    char help_opt[] = "--help", *help_argv[] = {argv[2], help_opt, NULL};
    return run(2, help_argv);
  }
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0)) {
    main_help();
    return 0;
  }
  if (argc >= 2 && argv[1][0] != '-') {
    command_fn *run = command_named(argv[1]);
    if (run != NULL) return run(argc - 1, argv + 1);
    fprintf(stderr, "tune: unknown command '%s' (see 'tune --help')\n", argv[1]);
    return TUNE_EXIT_USAGE;
  }
  return cmd_run(argc, argv);
}
