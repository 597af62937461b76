/* main.c: the tune command line. Subcommands are rows of a table; each
 * parses its own options with getopt_long, answers --help, and exits 2 on a
 * usage error with a message naming the bad argument. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "compare.h"
#include "config.h"
#include "engine.h"
#include "report.h"
#include "skew.h"
#include "store.h"
#include "tune.h"
#include "verify.h"

TUNE_PARAM(Trials, "TRIALS", 20, 3, 100000);
TUNE_PARAM(MaxTrials, "MAX_TRIALS", 160, 3, 1000000);
TUNE_PARAM(Warmup, "WARMUP", 5, 0, 100000);
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
    "  --after-of RUN      only the after pass of the job whose before run is RUN\n"
    "  --tune-skew-us D    also find crossovers with rank 0 delayed by D us\n"
    "  --db FILE           SQLite database (default tune-results/tune.db)\n"
    "  --header FILE       where to write the thresholds header (default:\n"
    "                      kernels/thresholds.h; for sim, beside the database)\n"
    "  --allow-sim         let a sim run install kernels/thresholds.h\n"
    "  --report-dir DIR    report folder (default: <db folder>/report)\n"
    "  --no-report         skip the report\n"
    "  --ops LIST          all_gather,all_reduce,reduce_scatter (default all)\n"
    "  --dtypes LIST       bf16,fp16,fp32 (default bf16,fp32)\n"
    "  --modes LIST        eager,graph (default both)\n"
    "  --worlds LIST       world sizes (default 2,4,8 up to --gpus)\n"
    "  --offsets LIST      buffer offsets in bytes, in = out (default 0,4)\n"
    "  --no-reg            leave registered buffers out: each 16-aligned offset is\n"
    "                      otherwise measured again with its buffers registered\n"
    "                      (detcoll_reg: the direct and copy_engine paths, reg16 rows)\n"
    "  --no-incumbent      sweep from scratch: by default a path of the table compiled\n"
    "                      in is kept unless another is decidedly faster by over 3%\n"
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

/* The whole command line, for re-running the after pass in the rebuilt tune. */
static int main_argc;
static char **main_argv;

static int cmd_run(int argc, char **argv) {
  static const struct option opts[] = {
      {"gpus", required_argument, 0, 'g'},      {"backend", required_argument, 0, 'b'},
      {"db", required_argument, 0, 'd'},        {"header", required_argument, 0, 'H'},
      {"allow-sim", no_argument, 0, 'A'},       {"report-dir", required_argument, 0, 'R'},
      {"no-report", no_argument, 0, 'N'},       {"ops", required_argument, 0, 'o'},
      {"dtypes", required_argument, 0, 't'},    {"modes", required_argument, 0, 'm'},
      {"worlds", required_argument, 0, 'w'},    {"offsets", required_argument, 0, 'O'},
      {"min-bytes", required_argument, 0, 1},   {"max-bytes", required_argument, 0, 2},
      {"grid-factor", required_argument, 0, 3}, {"resolution", required_argument, 0, 4},
      {"confidence", required_argument, 0, 5},  {"trials", required_argument, 0, 6},
      {"max-trials", required_argument, 0, 7},  {"warmup", required_argument, 0, 8},
      {"seed", required_argument, 0, 9},        {"help", no_argument, 0, 'h'},
      {"launcher", required_argument, 0, 'L'},  {"virtual-ranks", no_argument, 0, 'V'},
      {"graph-calls", required_argument, 0, 10}, {"resume", optional_argument, 0, 11},
      {"after-of", required_argument, 0, 12},   {"tune-skew-us", required_argument, 0, 13},
      {"no-reg", no_argument, 0, 14},           {"no-incumbent", no_argument, 0, 15},
      {0, 0, 0, 0}};
  tune_job job = {
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
  };
  const char *worlds = NULL;
  int64_t v;
  int c, rc;
  int64_t gpus = 0;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'g':
        if (tune_parse_int(optarg, 1, 1024, &gpus) != tune_ok)
          return tune_usage_error("run", "--gpus: '%s' is not a number in 1..1024", optarg);
        break;
      case 'b':
        if (strcmp(optarg, "gpu") != 0 && strcmp(optarg, "sim") != 0)
          return tune_usage_error("run", "--backend: '%s' is not gpu or sim", optarg);
        job.backend = optarg;
        break;
      case 'd': job.db_path = optarg; break;
      case 'H': job.header_path = optarg; break;
      case 'A': job.allow_sim = 1; break;
      case 'R': job.report_dir = optarg; break;
      case 'N': job.no_report = 1; break;
      case 'o':
        if ((rc = parse_mask("--ops", optarg, dc_op_parse, "op", &job.ops)) != 0) return rc;
        break;
      case 't':
        if ((rc = parse_mask("--dtypes", optarg, dc_dtype_parse, "dtype", &job.dtypes)) != 0)
          return rc;
        break;
      case 'm':
        if ((rc = parse_mask("--modes", optarg, dc_mode_parse, "mode", &job.modes)) != 0) return rc;
        break;
      case 'w': worlds = optarg; break;
      case 'O':
        if ((rc = parse_ints("--offsets", optarg, job.offsets, TUNE_MAX_OFFSETS, 0, 4096,
                             &job.noffsets)) != 0)
          return rc;
        break;
      case 1:
      case 2: {
        uint64_t b;
        if (tune_parse_size(optarg, &b) != tune_ok || b == 0 || b > (64ull << 30))
          return tune_usage_error("run", "--%s: '%s' is not a size in 1..64G", c == 1 ? "min-bytes" : "max-bytes",
                             optarg);
        *(c == 1 ? &job.min_bytes : &job.max_bytes) = b;
        break;
      }
      case 3:
        if (parse_double(optarg, 1.1, 64, &job.grid_factor))
          return tune_usage_error("run", "--grid-factor: '%s' is not a number in 1.1..64", optarg);
        break;
      case 4:
        if (parse_double(optarg, 0.001, 1, &job.resolution))
          return tune_usage_error("run", "--resolution: '%s' is not a number in 0.001..1", optarg);
        break;
      case 5:
        if (parse_double(optarg, 0.5, 0.9999, &job.confidence))
          return tune_usage_error("run", "--confidence: '%s' is not a number in 0.5..0.9999", optarg);
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
        if (tune_param_set_str(p[c - 6].param, optarg) != tune_ok)
          return tune_usage_error("run", "--%s: '%s' is not a number in %" PRId64 "..%" PRId64,
                                  p[c - 6].name, optarg, p[c - 6].param->lo, p[c - 6].param->hi);
        break;
      }
      case 'L':
        if (strcmp(optarg, "threads") != 0 && strcmp(optarg, "mpi") != 0)
          return tune_usage_error("run", "--launcher: '%s' is not threads or mpi", optarg);
        job.launcher = optarg;
        break;
      case 'V': job.virtual_ranks = 1; break;
      case 10:
        if (tune_parse_int(optarg, 1, 1000, &v) != tune_ok)
          return tune_usage_error("run", "--graph-calls: '%s' is not a number in 1..1000", optarg);
        job.graph_calls = (int)v;
        break;
      case 11:
        job.resume = 1;
        if (optarg && tune_parse_int(optarg, 1, INT64_MAX, &job.resume_run) != tune_ok)
          return tune_usage_error("run", "--resume: '%s' is not a run id", optarg);
        break;
      case 12:
        if (tune_parse_int(optarg, 1, INT64_MAX, &job.after_of) != tune_ok)
          return tune_usage_error("run", "--after-of: '%s' is not a run id", optarg);
        break;
      case 13:
        if (tune_parse_int(optarg, 0, 10000000, &v) != tune_ok)
          return tune_usage_error("run", "--tune-skew-us: '%s' is not a number of us in 0..10000000", optarg);
        job.tune_skew_ns = v * 1000;
        break;
      case 14: job.no_reg = 1; break;
      case 15: job.no_incumbent = 1; break;
      case 'h': fputs(run_help, stdout); return 0;
      case ':': return tune_usage_error("run", "%s needs a value", argv[optind - 1]);
      default: return tune_usage_error("run", "unknown option '%s'", argv[optind - 1]);
    }
  }
  /* getopt takes an optional value only when attached: "--resume 3" leaves "3". */
  if (optind < argc && job.resume && !job.resume_run &&
      tune_parse_int(argv[optind], 1, INT64_MAX, &v) == tune_ok)
    return tune_usage_error("run",
                            "unexpected argument '%s' (a run to resume is given as --resume=%s)",
                            argv[optind], argv[optind]);
  if (optind < argc) return tune_usage_error("run", "unexpected argument '%s'", argv[optind]);
  if (job.resume && job.after_of) return tune_usage_error("run", "--resume and --after-of exclude each other");
  if (job.min_bytes > job.max_bytes) return tune_usage_error("run", "--min-bytes is larger than --max-bytes");
  if ((rc = check_path("--db", job.db_path)) != 0 ||
      (rc = check_path("--header", job.header_path)) != 0 ||
      (rc = check_path("--report-dir", job.report_dir)) != 0)
    return rc;
  /* The database keys crossovers and header rows by alignment class (16-byte
   * aligned or not), so two offsets of one class would collide there. */
  for (int i = 0; i < job.noffsets; i++)
    for (int k = 0; k < i; k++)
      if ((job.offsets[i] % 16 == 0) == (job.offsets[k] % 16 == 0))
        return tune_usage_error(
            "run",
            "--offsets: %d and %d are both %s16-byte aligned; give at most one offset of each"
            " alignment class (one a multiple of 16, one not)",
            job.offsets[k], job.offsets[i], job.offsets[i] % 16 ? "not " : "");
  if (tune_param_load(&tune_param_Trials) != tune_ok ||
      tune_param_load(&tune_param_MaxTrials) != tune_ok ||
      tune_param_load(&tune_param_Warmup) != tune_ok ||
      tune_param_load(&tune_param_Seed) != tune_ok)
    return TUNE_EXIT_USAGE;
  job.trials = (int)tune_param_get(&tune_param_Trials);
  job.max_trials = (int)tune_param_get(&tune_param_MaxTrials);
  job.warmup = (int)tune_param_get(&tune_param_Warmup);
  job.seed = (uint64_t)tune_param_get(&tune_param_Seed);
  if (job.max_trials < job.trials) return tune_usage_error("run", "--max-trials is smaller than --trials");
  if (gpus == 0) {
    if (strcmp(job.backend, "sim") == 0) return tune_usage_error("run", "--gpus is required with --backend sim");
    gpus = 0; /* the gpu backend uses every device it finds */
  }
  job.gpus = (int)gpus;
  if (worlds) {
    if ((rc = parse_ints("--worlds", worlds, job.worlds, TUNE_MAX_WORLDS, 1, 1024, &job.nworlds)) !=
        0)
      return rc;
    for (int i = 0; i < job.nworlds; i++)
      if (gpus && job.worlds[i] > gpus)
        return tune_usage_error("run", "--worlds: %d is more than --gpus %" PRId64, job.worlds[i], gpus);
  } else {
    for (int w = 2; w <= 8 && (gpus == 0 || w <= gpus); w *= 2) job.worlds[job.nworlds++] = w;
    if (job.nworlds == 0) job.worlds[job.nworlds++] = 1;
  }
  char *cmdline = join_args(argc, argv);
  const char *srcdir = getenv("TUNE_SRCDIR"), *builddir = getenv("TUNE_BUILD_DIR");
  job.srcdir = srcdir && *srcdir ? srcdir : TUNE_ABS_SRCDIR;
  job.build_dir = builddir && *builddir ? builddir : TUNE_ABS_BUILDDIR;
  job.argc = main_argc;
  job.argv = main_argv;
  job.command_line = cmdline ? cmdline : "?";
  tune_result r = tune_job_run(&job);
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
    {"verify", tune_cmd_verify, "check the thresholds compiled in against this machine"},
    {"compare", tune_cmd_compare, "regression gate: a database against a baseline database"},
    {"compare-headers", tune_cmd_compare_headers, "how far two thresholds headers agree"},
};

/* The top-level help: the commands, then the options of the main job, which
 * runs without a command; each command's own help lists the rest. The man
 * page (tune.1) is generated from this text and --version's. */
static void main_help(void) {
  printf("usage: tune [COMMAND] [options]\n\nCommands:\n");
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    printf("  %-16s %s\n", commands[i].name, commands[i].summary);
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
