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

static int parse_double(const char *s, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v >= lo && v <= hi)) return -1;
  *out = v;
  return 0;
}

static const char *run_help =
    "usage: tune [run] --gpus N [options]\n"
    "\n"
    "The main job: measure libdetcoll with the current thresholds (before), sweep\n"
    "every forced kernel path and find the crossover sizes, write the thresholds\n"
    "header, measure again with it (after), and write the report.\n"
    "\n"
    "  --gpus N            ranks (GPUs) to use; world sizes are 2, 4, 8 up to N\n"
    "  --backend gpu|sim   measure the GPUs (default) or rehearse on the sim model\n"
    "  --launcher L        threads (default: one process, a thread per rank) or mpi\n"
    "                      (mpirun -np N tune ... --launcher mpi: a process per rank)\n"
    "  --virtual-ranks     put every rank on GPU 0 (development on one GPU)\n"
    "  --graph-calls K     collectives captured per CUDA graph in graph mode (default 10)\n"
    "  --resume[=RUN]      continue the unfinished main job of these options (give the\n"
    "                      same options again); with RUN, the job that run belongs to\n"
    "                      (its before, sweep or after run), refused if it has\n"
    "                      finished or was started with other options\n"
    "  --tune-skew-us D    also find crossovers with rank 0 delayed by D us\n"
    "  --db FILE           SQLite database (default tune-results/tune.db)\n"
    "  --header FILE       where to write the thresholds header (default: the source\n"
    "                      tree's kernels/thresholds.h, installed and compiled in at\n"
    "                      the end of the job; for sim and for an installed tune,\n"
    "                      beside the database); the after pass measures it without\n"
    "                      a rebuild, as DC_THRESHOLDS_FILE=FILE would\n"
    "  --allow-sim         let a sim run install kernels/thresholds.h\n"
    "  --report-dir DIR    report folder (default: <db folder>/report); also --out\n"
    "  --no-report         skip the report\n"
    "  --ops LIST          all_gather,all_reduce,reduce_scatter (default all); also --op\n"
    "  --dtypes LIST       bf16,fp16,fp32 (default bf16,fp32); also --dtype\n"
    "  --modes LIST        eager,graph (default both); also --mode\n"
    "  --worlds LIST       world sizes (default 2,4,8 up to --gpus)\n"
    "  --offsets LIST      buffer offsets in bytes, in = out (default 0,4)\n"
    "  --no-reg            leave registered buffers out: each 16-aligned offset is\n"
    "                      otherwise measured again with its buffers registered\n"
    "                      (detcoll_reg: the direct and copy_engine paths, reg16 rows)\n"
    "  --min-bytes SIZE    smallest bytes per rank (default 1K)\n"
    "  --max-bytes SIZE    largest bytes per rank (default 256M)\n"
    "  --grid-factor F     coarse grid ratio (default 2)\n"
    "  --resolution R      bisection stops at hi <= lo*(1+R) (default 0.0625)\n"
    "  --confidence C      confidence of the median-difference CI (default 0.95)\n"
    "  --trials N          trials per configuration (default 20; env TUNE_TRIALS)\n"
    "  --max-trials N      trials cap when a CI straddles zero (default 160)\n"
    "  --warmup N          warm-up calls (default 5; env TUNE_WARMUP)\n"
    "  --seed N            seed of data, noise and bootstrap (default 1; env TUNE_SEED)\n"
    "  -h, --help          this text\n"
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
} run_args;

/* The main job's numeric options (sizes, ratios, counts); 0, a usage error,
 * or -1 when c is none of them. */
static int run_number_option(int c, const char *arg, run_args *a) {
  int64_t v;
  switch (c) {
    case 1:
    case 2: {
      uint64_t b;
      if (tune_parse_size(arg, &b) != tune_ok || b == 0 || b > (64ull << 30))
        return tune_usage_error("run", "--%s: '%s' is not a size in 1..64G", c == 1 ? "min-bytes" : "max-bytes",
                           arg);
      *(c == 1 ? &a->job.min_bytes : &a->job.max_bytes) = b;
      break;
    }
    case 3:
      if (parse_double(arg, 1.1, 64, &a->job.grid_factor))
        return tune_usage_error("run", "--grid-factor: '%s' is not a number in 1.1..64", arg);
      break;
    case 4:
      if (parse_double(arg, 0.001, 1, &a->job.resolution))
        return tune_usage_error("run", "--resolution: '%s' is not a number in 0.001..1", arg);
      break;
    case 5:
      if (parse_double(arg, 0.5, 0.9999, &a->job.confidence))
        return tune_usage_error("run", "--confidence: '%s' is not a number in 0.5..0.9999", arg);
      break;
    case 6:
    case 7:
    case 8:
    case 9: {
      static const struct {
        const char *name;
        tune_param *param;
      } p[] = {{"trials", &tune_param_Trials},
               {"max-trials", &tune_param_MaxTrials},
               {"warmup", &tune_param_Warmup},
               {"seed", &tune_param_Seed}};
      if (tune_param_set_str(p[c - 6].param, arg) != tune_ok)
        return tune_usage_error("run", "--%s: '%s' is not a number in %" PRId64 "..%" PRId64,
                                p[c - 6].name, arg, p[c - 6].param->lo, p[c - 6].param->hi);
      break;
    }
    case 10:
      if (tune_parse_int(arg, 1, 1000, &v) != tune_ok)
        return tune_usage_error("run", "--graph-calls: '%s' is not a number in 1..1000", arg);
      a->job.graph_calls = (int)v;
      break;
    case 13:
      if (tune_parse_int(arg, 0, 10000000, &v) != tune_ok)
        return tune_usage_error("run", "--tune-skew-us: '%s' is not a number of us in 0..10000000", arg);
      a->job.tune_skew_ns = v * 1000;
      break;
    default: return -1;
  }
  return 0;
}

/* One option of the main job; 0, a usage error, or -1 for one it has not. */
static int run_option(int c, const char *arg, run_args *a) {
  int rc;
  switch (c) {
    case 'g':
      if (tune_parse_int(arg, 1, 1024, &a->gpus) != tune_ok)
        return tune_usage_error("run", "--gpus: '%s' is not a number in 1..1024", arg);
      break;
    case 'b':
      if (strcmp(arg, "gpu") != 0 && strcmp(arg, "sim") != 0)
        return tune_usage_error("run", "--backend: '%s' is not gpu or sim", arg);
      a->job.backend = arg;
      break;
    case 'd': a->job.db_path = arg; break;
    case 'H': a->job.header_path = arg; break;
    case 'A': a->job.allow_sim = 1; break;
    case 'R': a->job.report_dir = arg; break;
    case 'N': a->job.no_report = 1; break;
    case 'o':
      if ((rc = parse_mask("--ops", arg, dc_op_parse, "op", &a->job.ops)) != 0) return rc;
      break;
    case 't':
      if ((rc = parse_mask("--dtypes", arg, dc_dtype_parse, "dtype", &a->job.dtypes)) != 0)
        return rc;
      break;
    case 'm':
      if ((rc = parse_mask("--modes", arg, dc_mode_parse, "mode", &a->job.modes)) != 0) return rc;
      break;
    case 'w': a->worlds = arg; break;
    case 'O':
      if ((rc = parse_ints("--offsets", arg, a->job.offsets, TUNE_MAX_OFFSETS, 0, 4096,
                           &a->job.noffsets)) != 0)
        return rc;
      break;
    case 'L':
      if (strcmp(arg, "threads") != 0 && strcmp(arg, "mpi") != 0)
        return tune_usage_error("run", "--launcher: '%s' is not threads or mpi", arg);
      a->job.launcher = arg;
      break;
    case 'V': a->job.virtual_ranks = 1; break;
    case 11:
      a->job.resume = 1;
      if (arg && tune_parse_int(arg, 1, INT64_MAX, &a->job.resume_run) != tune_ok)
        return tune_usage_error("run", "--resume: '%s' is not a run id", arg);
      break;
    case 14: a->job.no_reg = 1; break;
    default: return run_number_option(c, arg, a);
  }
  return 0;
}

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

static int cmd_run(int argc, char **argv) {
  static const struct option opts[] = {
      {"gpus", required_argument, 0, 'g'},      {"backend", required_argument, 0, 'b'},
      {"db", required_argument, 0, 'd'},        {"header", required_argument, 0, 'H'},
      {"allow-sim", no_argument, 0, 'A'},       {"report-dir", required_argument, 0, 'R'},
      {"no-report", no_argument, 0, 'N'},       {"ops", required_argument, 0, 'o'},
      {"dtypes", required_argument, 0, 't'},    {"modes", required_argument, 0, 'm'},
      {"op", required_argument, 0, 'o'},        {"dtype", required_argument, 0, 't'},
      {"mode", required_argument, 0, 'm'},      {"out", required_argument, 0, 'R'},
      {"worlds", required_argument, 0, 'w'},    {"offsets", required_argument, 0, 'O'},
      {"min-bytes", required_argument, 0, 1},   {"max-bytes", required_argument, 0, 2},
      {"grid-factor", required_argument, 0, 3}, {"resolution", required_argument, 0, 4},
      {"confidence", required_argument, 0, 5},  {"trials", required_argument, 0, 6},
      {"max-trials", required_argument, 0, 7},  {"warmup", required_argument, 0, 8},
      {"seed", required_argument, 0, 9},        {"help", no_argument, 0, 'h'},
      {"launcher", required_argument, 0, 'L'},  {"virtual-ranks", no_argument, 0, 'V'},
      {"graph-calls", required_argument, 0, 10}, {"resume", optional_argument, 0, 11},
      {"tune-skew-us", required_argument, 0, 13},
      {"no-reg", no_argument, 0, 14},           {0, 0, 0, 0}};
  run_args a = {.job = {
      .backend = "gpu",
      .launcher = "threads",
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
  int64_t v;
  int c, rc;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'h': fputs(run_help, stdout); return 0;
      case ':': return tune_usage_error("run", "%s needs a value", argv[optind - 1]);
      case '?': return tune_usage_error("run", "unknown option '%s'", argv[optind - 1]);
      default:
        if ((rc = run_option(c, optarg, &a)) < 0) return tune_usage_error("run", "unknown option '%s'", argv[optind - 1]);
        if (rc != 0) return rc;
    }
  }
  /* getopt takes an optional value only when attached: "--resume 3" leaves "3". */
  if (optind < argc && a.job.resume && !a.job.resume_run &&
      tune_parse_int(argv[optind], 1, INT64_MAX, &v) == tune_ok)
    return tune_usage_error("run",
                            "unexpected argument '%s' (a run to resume is given as --resume=%s)",
                            argv[optind], argv[optind]);
  if (optind < argc) return tune_usage_error("run", "unexpected argument '%s'", argv[optind]);
  if ((rc = run_check(&a)) != 0) return rc;
  char *cmdline = join_args(argc, argv);
  main_trees(&a.job);
  a.job.argc = main_argc;
  a.job.argv = main_argv;
  a.job.command_line = cmdline ? cmdline : "?";
  tune_result r = tune_job_run(&a.job);
  free(cmdline);
  return tune_exit_status(r);
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

static const char *report_help =
    "usage: tune report --db FILE [--before RUN --after RUN] [--out DIR]\n"
    "\n"
    "Draw the latency report from a tune database: latency against bytes per\n"
    "rank per world size (before, after, NCCL), crossover plots, and report.md.\n"
    "Without --before/--after the latest before and after runs are paired.\n"
    "\n"
    "  --db FILE      the database (required)\n"
    "  --before RUN   run id of the before pass\n"
    "  --after RUN    run id of the after pass\n"
    "  --out DIR      output folder (default: <db folder>/report)\n"
    "  -h, --help     this text\n";

static int cmd_report(int argc, char **argv) {
  static const struct option opts[] = {{"db", required_argument, 0, 'd'},     {"before", required_argument, 0, 'b'},
                                       {"after", required_argument, 0, 'a'},  {"out", required_argument, 0, 'o'},
                                       {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
  tune_report_opts o = {NULL, 0, 0, NULL};
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'd': o.db_path = optarg; break;
      case 'b':
      case 'a':
        if (tune_parse_int(optarg, 1, INT64_MAX, c == 'b' ? &o.before_run : &o.after_run) != tune_ok)
          return tune_usage_error("report", "--%s: '%s' is not a run id", c == 'b' ? "before" : "after", optarg);
        break;
      case 'o': o.out_dir = optarg; break;
      case 'h': fputs(report_help, stdout); return 0;
      case ':': return tune_usage_error("report", "%s needs a value", argv[optind - 1]);
      default: return tune_usage_error("report", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) return tune_usage_error("report", "unexpected argument '%s'", argv[optind]);
  if (o.db_path == NULL) return tune_usage_error("report", "--db FILE is required");
  if ((o.before_run == 0) != (o.after_run == 0))
    return tune_usage_error("report", "--before and --after go together");
  if ((c = check_db("report", o.db_path)) != 0) return c;
  tune_result r = tune_report_run(&o);
  return tune_exit_status(r);
}

static const char *table_help =
    "usage: tune table [--file FILE] [--hash]\n"
    "\n"
    "Print a threshold table, checked, one row a line, sorted: the table compiled\n"
    "into this tune (and the libdetcoll built with it), or FILE's. FILE is a\n"
    "thresholds header as tune writes it, or its rows alone: what libdetcoll\n"
    "reads from the file DC_THRESHOLDS_FILE names, instead of its compiled-in\n"
    "table, and dc_comm_set_table takes at run time.\n"
    "\n"
    "  --file FILE    the table of FILE instead of the compiled-in one\n"
    "  --hash         only the table's content hash (the same for the same rows in\n"
    "                 any order); the after pass stores it with its run\n"
    "  -h, --help     this text\n";

static int cmd_table(int argc, char **argv) {
  static const struct option opts[] = {{"file", required_argument, 0, 'f'},
                                       {"hash", no_argument, 0, 'H'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  const char *file = NULL;
  int c, hash = 0;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'f': file = optarg; break;
      case 'H': hash = 1; break;
      case 'h': fputs(table_help, stdout); return 0;
      case ':': return tune_usage_error("table", "%s needs a value", argv[optind - 1]);
      default: return tune_usage_error("table", "unknown option '%s'", argv[optind - 1]);
    }
  }
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

static const char *export_help =
    "usage: tune export --db FILE --format json [--table NAME] [--out FILE]\n"
    "       tune export --db FILE --format csv --table NAME [--out FILE]\n"
    "\n"
    "Write tables of a tune database as JSON (every table unless --table) or one\n"
    "table as CSV. Text that is not valid UTF-8 is written with U+FFFD in JSON.\n"
    "\n"
    "  --db FILE       the database (required)\n"
    "  --format F      csv or json (required)\n"
    "  --table NAME    runs, configs, samples, crossovers, headers, header_rows, regret,\n"
    "                  skew_summaries, skew_fits\n"
    "  --out FILE      write there instead of standard output ('-'); a regular file\n"
    "                  (or a link to one) is replaced whole, a device or FIFO is\n"
    "                  written in place; never the database itself\n"
    "  -h, --help      this text\n";

static int cmd_export(int argc, char **argv) {
  static const struct option opts[] = {{"db", required_argument, 0, 'd'},    {"format", required_argument, 0, 'f'},
                                       {"table", required_argument, 0, 't'}, {"out", required_argument, 0, 'o'},
                                       {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
  const char *db = NULL, *format = NULL, *table = NULL, *out = NULL;
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'd': db = optarg; break;
      case 'f':
        if (strcmp(optarg, "csv") != 0 && strcmp(optarg, "json") != 0)
          return tune_usage_error("export", "--format: '%s' is not csv or json", optarg);
        format = optarg;
        break;
      case 't': table = optarg; break;
      case 'o': out = optarg; break;
      case 'h': fputs(export_help, stdout); return 0;
      case ':': return tune_usage_error("export", "%s needs a value", argv[optind - 1]);
      default: return tune_usage_error("export", "unknown option '%s'", argv[optind - 1]);
    }
  }
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
  fputs(run_help, stdout);
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
