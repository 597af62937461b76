/* main.c: the tune command line. Subcommands are rows of a table; each
 * parses its own options with getopt_long, answers --help, and exits 2 on a
 * usage error with a message naming the bad argument. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "compare.h"
#include "config.h"
#include "emit.h"
#include "engine.h"
#include "fleet.h"
#include "fleet_report.h"
#include "job_opts.h"
#include "opts.h"
#include "replay.h"
#include "report.h"
#include "skew.h"
#include "store.h"
#include "tune.h"
#include "verify.h"

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

static const tune_opt run_spec[] = {
    TUNE_JOB_ROWS_MACHINE,
    TUNE_JOB_ROW_LAUNCHER,
    TUNE_JOB_ROWS_DEVICE,
    {.name = "resume",
     .kind = TUNE_OPT_CALL,
     .arg = "[=RUN]",
     .optional = 1,
     .call = tune_job_opt_resume,
     .help = "continue the unfinished main job of these options (give the\n"
             "same options again); with RUN, the job that run belongs to\n"
             "(its before, sweep or after run), refused if it has\n"
             "finished or was started with other options"},
    {.name = "tune-skew-us",
     .kind = TUNE_OPT_CALL,
     .arg = "D",
     .lo = 0,
     .hi = 10000000,
     .call = tune_job_opt_skew_us,
     .help = "also find crossovers with rank 0 delayed by D us"},
    TUNE_JOB_ROW_DB,
    TUNE_OPT_STRING_ROW("header", NULL, "FILE", tune_job_args, job.header_path,
                        "where to write the thresholds header (default: the source\n"
                        "tree's kernels/thresholds.h, installed and compiled in at\n"
                        "the end of the job; for sim and for an installed tune,\n"
                        "beside the database); the after pass measures it without\n"
                        "a rebuild, as DC_THRESHOLDS_FILE=FILE would"),
    TUNE_OPT_FLAG_ROW("allow-sim", tune_job_args, job.allow_sim, "let a sim run install kernels/thresholds.h"),
    TUNE_OPT_STRING_ROW("report-dir", "out", "DIR", tune_job_args, job.report_dir,
                        "report folder (default: <db folder>/report); also --out"),
    TUNE_OPT_FLAG_ROW("no-report", tune_job_args, job.no_report, "skip the report"),
    TUNE_JOB_ROWS_GROUPS,
    TUNE_OPT_FLAG_ROW("no-incumbent", tune_job_args, job.no_incumbent,
                      "sweep from scratch: by default a path of the table the job\n"
                      "begins with (DC_THRESHOLDS_FILE's, else the one compiled in)\n"
                      "is kept unless another is decidedly faster by over 3%"),
    TUNE_JOB_ROWS_SIZES,
    TUNE_OPT_DOUBLE_ROW("resolution", "R", tune_job_args, job.resolution, 0.001, 1,
                        "bisection stops at hi <= lo*(1+R) (default 0.0625)"),
    TUNE_JOB_ROW_CONFIDENCE,
    TUNE_JOB_ROWS_TRIALS("trials cap when a CI straddles zero (default 160; env\n"
                         "TUNE_MAX_TRIALS; 4 times that for an after-pass size\n"
                         "whose regret is undecided)"),
};


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

static int cmd_run(int argc, char **argv) {
  tune_job_args a;
  tune_job_args_init(&a, "run");
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
  if ((rc = tune_job_args_check(&a)) != 0) return rc;
  char *cmdline = tune_join_args(NULL, argc, argv), program[PATH_MAX];
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
    "Exits 3 when a node is an outlier, returned wrong results, failed, timed\n"
    "out (--node-timeout), dropped out or differs in hardware. --launcher is\n"
    "mpi here: each node's ranks are its processes (with one process per node,\n"
    "--map-by ppr:1:node, its threads).\n"
    "\n";

/* The help of spec's option name (of n) becomes help (NULL: taken, not
 * listed). */
static void spec_help(tune_opt *spec, int n, const char *name, const char *help) {
  for (int i = 0; i < n; i++)
    if (!strcmp(spec[i].name, name)) spec[i].help = help;
}

/* The options names[] (NULL-terminated) of spec: taken, not listed. */
static void spec_unlist(tune_opt *spec, int n, const char *const *names) {
  for (; *names; names++) spec_help(spec, n, *names, NULL);
}

/* --gpus of tune fleet and tune merge. */
static const char *const fleet_gpus_help =
    "ranks of each node (required); world sizes are 2, 4, 8 up to N,\n"
    "and N up to 8 (libdetcoll's largest world)";

/* The checks tune fleet and tune merge share. */
static int fleet_check(tune_job_args *a, int merge) {
  if (!merge && strcmp(a->job.launcher, "mpi") != 0)
    return tune_usage_error(
        a->cmd,
        "--launcher %s: a fleet runs each node's ranks as its MPI processes (one process per "
        "node: its threads)",
        a->job.launcher);
  if (a->job.resume_run)
    return tune_usage_error(
        a->cmd,
        "--resume=RUN: a fleet resumes its newest unfinished run of these options (--resume)");
  if (a->job.header_path)
    return tune_usage_error(a->cmd,
                            "--header: a fleet writes each node's header beside its database, and "
                            "the consensus beside --db");
  if (a->gpus == 0) return tune_usage_error(a->cmd, "--gpus is required: the ranks of each node");
  /* The report comes last, after every node's job: its folder is checked
   * first. */
  if (a->job.report_dir && !a->job.no_report &&
      (tune_check_output("--report-dir", a->job.report_dir, a->job.db_path) != tune_ok ||
       tune_check_writable("--report-dir", a->job.report_dir, 1) != tune_ok ||
       tune_fleet_report_check(a->job.report_dir, a->job.db_path) != tune_ok))
    return TUNE_EXIT_USAGE;
  return tune_job_args_check(a);
}

/* tune fleet: the main job's options, and --node-timeout. */
static int cmd_fleet(int argc, char **argv) {
  enum { nrun = sizeof(run_spec) / sizeof(run_spec[0]) };
  tune_opt spec[nrun + 1];
  memcpy(spec, run_spec, sizeof(run_spec));
  spec[nrun] =
      (tune_opt)TUNE_OPT_INT_ROW("node-timeout", NULL, "S", tune_job_args, node_timeout, 0, 30 * 86400,
                                 "a node not done S seconds after the start is recorded as\n"
                                 "timed out and the fleet concludes without it (default 0: wait)");
  spec_help(spec, nrun, "launcher", "mpi, the only one here (see above)");
  spec_help(spec, nrun, "resume",
            "continue the unfinished fleet run of these options (give the\n"
            "same options again; =RUN is not taken here)");
  /* Taken but not listed: --header is refused (fleet_check), and a
   * fleet installs nothing for --allow-sim to allow. */
  spec_unlist(spec, nrun, (const char *const[]){"header", "allow-sim", NULL});
  spec_help(spec, nrun, "gpus", fleet_gpus_help);
  tune_job_args a;
  tune_job_args_init(&a, "fleet");
  a.job.launcher = "mpi";
  int rc, helped;
  rc = tune_opts_parse("fleet", spec, nrun + 1, argc, argv, &a, 0, fleet_usage, run_outro, 22,
                       &helped);
  if (rc != 0 || helped) return rc;
  if (optind < argc) return tune_usage_error("fleet", "unexpected argument '%s'", argv[optind]);
  if ((rc = fleet_check(&a, 0)) != 0) return rc;
#ifdef HAVE_MPI
  char *cmdline = tune_join_args(NULL, argc, argv);
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
    "nodes ran --launcher mpi, the default here, or threads with one process per\n"
    "node and more than one GPU, as a plain tune run does): the\n"
    "consensus header, each node's regret, the outlier nodes and the report,\n"
    "as tune fleet writes them. Exits 3 as tune fleet does. A merge that fails\n"
    "or is stopped removes what it wrote (its fleet run, header and report; --db\n"
    "itself where it made it): run it again.\n"
    "\n";

static int cmd_merge(int argc, char **argv) {
  enum { nrun = sizeof(run_spec) / sizeof(run_spec[0]) };
  tune_opt spec[nrun];
  memcpy(spec, run_spec, sizeof(run_spec));
  spec_help(spec, nrun, "launcher",
            "how the nodes ran their jobs: mpi (default here: under tune\n"
            "fleet) or threads (a plain tune run, one process per node)");
  /* Taken but not listed: --resume and --header are refused, and a merge
   * installs nothing for --allow-sim to allow. */
  spec_unlist(spec, nrun, (const char *const[]){"resume", "header", "allow-sim", NULL});
  spec_help(spec, nrun, "gpus", fleet_gpus_help);
  tune_job_args a;
  tune_job_args_init(&a, "merge");
  a.job.launcher = "mpi";
  int rc, helped;
  rc = tune_opts_parse("merge", spec, nrun, argc, argv, &a, 0, merge_usage, run_outro, 22,
                       &helped);
  if (rc != 0 || helped) return rc;
  if (optind >= argc) return tune_usage_error("merge", "no node database given");
  if (a.job.resume)
    return tune_usage_error("merge", "--resume: a merge is not resumed, run it again");
  if ((rc = fleet_check(&a, 1)) != 0) return rc;
  for (int i = optind; i < argc; i++) {
    struct stat sb;
    if (stat(argv[i], &sb) != 0)
      return tune_usage_error("merge", "%s: %s", argv[i], strerror(errno));
    if (!S_ISREG(sb.st_mode)) return tune_usage_error("merge", "%s: not a database file", argv[i]);
    if (tune_same_file(argv[i], a.job.db_path))
      return tune_usage_error("merge", "%s is --db itself", argv[i]);
    if (sb.st_size == 0)
      return tune_usage_error("merge", "%s is empty: it holds no node's job", argv[i]);
    /* A node is named after the file, less .db: two names cut to one would
     * pass for one node. */
    const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
    size_t len = strlen(base);
    if (len > 3 && strcmp(base + len - 3, ".db") == 0) len -= 3;
    if (len >= sizeof(((tune_fleet_node *)0)->name))
      return tune_usage_error("merge", "%s: a node is named after its file, and this name is %zu bytes (at most %zu)",
                              argv[i], len, sizeof(((tune_fleet_node *)0)->name) - 1);
    if (tune_store_check_attachable(argv[i]) != tune_ok) return TUNE_EXIT_USAGE;
    for (int j = optind; j < i; j++)
      if (tune_same_file(argv[i], argv[j]))
        return tune_usage_error("merge", "%s and %s are one database", argv[j], argv[i]);
  }
  char *cmdline = tune_join_args(NULL, argc, argv);
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

static const char *replay_usage =
    "usage: tune replay --db FILE --gpus N [the job's options] [--run RUN] [--header OUT]\n"
    "\n"
    "The crossover search of a main job run again over the sweep samples its\n"
    "database holds, with this tune's rules: the table they choose from the same\n"
    "measurements, without a GPU. Give the job's options as it was run (the\n"
    "newest finished job of those options is replayed, or the job of --run). Each\n"
    "search keeps the paths of the job's previous table, as its database holds it\n"
    "(one of an older tune holds none: then the table compiled in when it swept\n"
    "must be this tune's, unless --no-incumbent); --incumbent FILE stands FILE's\n"
    "table in for it: the table the job would have written had it begun with it.\n"
    "Trials the database lacks (other rules ask for other sizes) are stood in for\n"
    "and counted. The table goes to --header (default: standard output) as tune\n"
    "table writes it, for compare-headers or DC_THRESHOLDS_FILE. Reads only. The\n"
    "job's --allow-sim, --no-report and --report-dir are taken and mean nothing\n"
    "here, so that its command line pastes in whole.\n"
    "\n";

static int cmd_replay(int argc, char **argv) {
  enum { nrun = sizeof(run_spec) / sizeof(run_spec[0]) };
  tune_opt spec[nrun + 2];
  memcpy(spec, run_spec, sizeof(run_spec));
  spec[nrun] =
      (tune_opt)TUNE_OPT_INT_ROW("run", NULL, "RUN", tune_job_args, run, 1, INT64_MAX,
                                 "replay the job of this run (its before, sweep or after run)");
  spec[nrun + 1] = (tune_opt)TUNE_OPT_STRING_ROW(
      "incumbent", NULL, "FILE", tune_job_args, incumbent,
      "a table file standing in for the job's previous table");
  /* The job's options that say where its outputs go are taken (a job's
   * command line pastes in whole) but not listed; --resume is refused. */
  spec_help(spec, nrun, "header", "where the table goes (default: standard output)");
  spec_unlist(spec, nrun, (const char *const[]){"allow-sim", "no-report", "report-dir", "resume", NULL});
  tune_job_args a;
  tune_job_args_init(&a, "replay");
  int rc, helped;
  rc = tune_opts_parse("replay", spec, nrun + 2, argc, argv, &a, 0, replay_usage, run_outro, 22,
                       &helped);
  if (rc != 0 || helped) return rc;
  if (optind < argc) return tune_usage_error("replay", "unexpected argument '%s'", argv[optind]);
  if (a.job.resume)
    return tune_usage_error("replay", "--resume: a replay measures nothing to resume");
  if (a.incumbent && a.job.no_incumbent)
    return tune_usage_error("replay", "--incumbent and --no-incumbent: give one of them");
  if ((rc = tune_job_args_check(&a)) != 0) return rc;
  if ((rc = check_db("replay", a.job.db_path)) != 0) return rc;
  return tune_exit_status(tune_replay(&a.job, a.run, a.incumbent, a.job.header_path ? a.job.header_path : "-"));
}

static const char *report_usage =
    "usage: tune report --db FILE [--before RUN --after RUN] [--out DIR]\n"
    "\n"
    "Draw the latency report from a tune database: latency against bytes per\n"
    "rank per world size (before, after, NCCL), crossover plots, and report.md.\n"
    "Without --before/--after: the newest after run and its own job's before run\n"
    "and sweep (the newest before run where no after run is there).\n"
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
  return tune_exit_status(tune_stdout_flush());
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
                        "pairs, skew_summaries, skew_fits; and in a fleet database\n"
                        "fleet_nodes, fleet_cells, fleet_consensus, fleet_regret,\n"
                        "fleet_outliers, fleet_samples (any table the database holds)"),
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
  if (out != NULL && *out == '\0') return tune_usage_error("export", "--out: the path is empty");
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
  if (r == tune_ok && !to_stdout) r = tune_check_writable("--out", out, 0);
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
    {"verify", tune_cmd_verify,
     "check a threshold table (the compiled-in one or a file's) on this machine"},
    {"compare", tune_cmd_compare, "regression gate: a database against a baseline database"},
    {"compare-headers", tune_cmd_compare_headers, "how far two thresholds headers agree"},
    {"fleet", cmd_fleet,
     "under mpirun: the main job on every node, a consensus header, outlier nodes"},
    {"merge", cmd_merge, "one fleet run from node databases copied together"},
    {"replay", cmd_replay, "a job's crossover search again over its database's samples"},
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
  tune_opts_help(stdout, run_usage, run_spec, sizeof(run_spec) / sizeof(run_spec[0]), 22, run_outro);
}

/* GNU --version: name and version, copyright, licence, warranty. A
 * TUNE_GIT_REV left set (./tune no longer sets it) is shown as what runs
 * will record, beside the build's own. */
static void main_version(void) {
  const char *rev = tune_git_rev(), *built = tune_build_git_rev();
  printf("tune (detcoll) %s\ngit revision %s", PACKAGE_VERSION, rev);
  if (strcmp(rev, built) != 0) printf(" (TUNE_GIT_REV; built from %s)", built);
  printf(
      "\n"
      "Copyright (C) 2026 the detcoll authors.\n"
      "License BSD-3-Clause: <https://opensource.org/licenses/BSD-3-Clause>.\n"
      "This is free software: you are free to change and redistribute it.\n"
      "There is NO WARRANTY, to the extent permitted by law.\n");
}

/* The row of commands[] named name, or NULL. */
static command_fn *command_named(const char *name) {
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    if (strcmp(name, commands[i].name) == 0) return commands[i].run;
  return NULL;
}

static int main_command(int argc, char **argv) {
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

/* SIGPIPE is caught, not ignored (an ignored signal stays ignored in the
 * programs tune runs): a reader of standard output that goes away (| head)
 * makes writes fail with EPIPE instead of killing a job mid-run, and the
 * job goes on to its end; the exit status then says its output is lost. */
static void main_sigpipe(int sig) { (void)sig; }

int main(int argc, char **argv) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = main_sigpipe;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPIPE, &sa, NULL);
  main_argc = argc;
  main_argv = argv;
  int code = main_command(argc, argv);
  errno = 0;
  int flush = fflush(stdout), e = errno;
  /* A command that failed said why already (an export to a closed pipe). */
  if (code == 0 && (flush != 0 || ferror(stdout))) {
    fprintf(stderr, "tune: writing standard output failed (%s): what it shows is incomplete\n",
            flush != 0 ? strerror(e) : "an earlier write");
    code = 1;
  }
  return code;
}
