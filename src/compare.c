/* compare.c: `tune compare`, a regression gate of one database against a
 * baseline that states the run-to-run drift between them (issue 18), and
 * `tune compare-headers`, how far two thresholds headers agree (issue 14).
 * They read databases through db/'s typed readers (compare_read.h) and take
 * their options from the option spec (opts.h).
 * Measure floor, beside the report. */
#include "compare.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "compare_gp.h"
#include "compare_read.h"
#include "headers.h"
#include "opts.h"
#include "report.h"
#include "stats.h"
#include "store.h"
#include "tune.h"

extern char **environ;

/* ---- shared ---------------------------------------------------------------- */

/* A database to read: an existing file (not a folder), opened read-only. */
static tune_result open_db(const char *cmd, const char *opt, const char *path, tune_store **st) {
  struct stat sb;
  if (stat(path, &sb) != 0) {
    tune_usage_error(cmd, "%s: %s: %s", opt, path, strerror(errno));
    return tune_err_arg;
  }
  if (S_ISDIR(sb.st_mode)) {
    tune_usage_error(cmd, "%s: %s is a folder, not a database", opt, path);
    return tune_err_arg;
  }
  if (tune_store_open(path, 1, st) != tune_ok) {
    tune_error("%s %s: %s cannot be read as a tune database", cmd, opt, path);
    return tune_err_db;
  }
  return tune_ok;
}

/* dir/name into out; tune_err_arg (with a message) if it does not fit. */
static tune_result join_path(char *out, size_t len, const char *dir, const char *name) {
  int n = snprintf(out, len, "%s/%s", dir, name);
  if (n < 0 || (size_t)n >= len) {
    tune_error("compare: the path %s/%s is too long", dir, name);
    return tune_err_arg;
  }
  return tune_ok;
}

/* What makes two databases incomparable (summaries sa of pa, sb of pb), said
 * before anything is judged; with force only warned of. */
static tune_result summaries_match(const char *cmd, const char *pa, const tune_cmp_summary *sa,
                                   const char *pb, const tune_cmp_summary *sb, int force) {
  static const struct {
    const char *what;
    size_t off;
  } must_match[] = {{"backend", offsetof(tune_cmp_summary, backends)},
                    {"GPU model", offsetof(tune_cmp_summary, models)},
                    {"world sizes", offsetof(tune_cmp_summary, worlds)}};
  for (size_t k = 0; k < sizeof(must_match) / sizeof(must_match[0]); k++) {
    const char *x = (const char *)sa + must_match[k].off, *y = (const char *)sb + must_match[k].off;
    if (strcmp(x, y) == 0) continue;
    if (force) {
      fprintf(stderr, "tune %s: %s differ (%s: %s, %s: %s); compared anyway (--force)\n", cmd,
              must_match[k].what, pa, x, pb, y);
      continue;
    }
    tune_error(
        "%s: %s differ: %s has %s, %s has %s; %s (give --force to compare anyway)", cmd,
        must_match[k].what, pa, x, pb, y,
        k == 0 ? "a sim model says nothing about a GPU" : "the latencies are not comparable");
    return tune_err_arg;
  }
  return tune_ok;
}

/* ---- compare-headers --------------------------------------------------------- */

typedef struct {
  tune_sweep_reader *rd;
  double tolerance; /* ratio, e.g. 1.03 */
  int failed;
} agree_db;

/* The median latency of path at bytes for row's key in the sweeps of the
 * database, interpolated log-log between the sizes measured; < 0 if it was
 * not measured around bytes. */
static double measured_at(agree_db *c, const dc_threshold_row *row, dc_path path, uint64_t bytes) {
  double lo[2], hi[2];
  if (c->failed) return -1; /* said once */
  if (tune_sweep_around(c->rd, row, path, bytes, lo, hi) != tune_ok) {
    c->failed = 1;
    return -1;
  }
  if (lo[0] < 0 || hi[0] < 0) return -1;
  if (hi[0] == lo[0]) return lo[1];
  double t = log((double)bytes / lo[0]) / log(hi[0] / lo[0]);
  return exp(log(lo[1]) + t * (log(hi[1]) - log(lo[1])));
}

static int agree_within(void *ctx, const dc_threshold_row *row, dc_path a, dc_path b,
                        uint64_t bytes) {
  agree_db *c = ctx;
  double ta = measured_at(c, row, a, bytes), tb = measured_at(c, row, b, bytes);
  if (ta <= 0 || tb <= 0) return -1;
  double r = ta > tb ? ta / tb : tb / ta;
  return r <= c->tolerance;
}

/* Both jobs' sweeps at a differing point (--db A's, --db-b B's): a tie
 * (the two paths within the tolerance in both), a swing (each job's sweeps
 * favour its own header's path by more than the tolerance in one of them),
 * or other (a header chose a path its own sweeps have slower). */
typedef struct {
  agree_db *a, *b;
  long tie, swing, other, unknown;
  double largest; /* of the swings: A's ratio over B's */
} agree_two;

static int agree_sort(void *ctx, const dc_threshold_row *row, dc_path pa, dc_path pb, uint64_t bytes) {
  agree_two *c = ctx;
  double a1 = measured_at(c->a, row, pa, bytes), a2 = measured_at(c->a, row, pb, bytes);
  double b1 = measured_at(c->b, row, pa, bytes), b2 = measured_at(c->b, row, pb, bytes);
  if (a1 <= 0 || a2 <= 0 || b1 <= 0 || b2 <= 0) {
    c->unknown++;
    return -1;
  }
  /* > 1: A's path is the faster in that job's sweeps. */
  double ra = a2 / a1, rb = b2 / b1, tol = c->a->tolerance;
  if (fmax(ra, 1 / ra) <= tol && fmax(rb, 1 / rb) <= tol) {
    c->tie++;
  } else if (ra > 1 && rb < 1) {
    c->swing++;
    c->largest = fmax(c->largest, ra / rb);
  } else {
    c->other++;
  }
  return 0;
}

static const char *compare_headers_usage =
    "usage: tune compare-headers A.h B.h [--db FILE [--db-b FILE [--force]]] [--tolerance T]\n"
    "       [options]\n"
    "\n"
    "How far two thresholds headers agree: at every point of a 1/8-octave grid\n"
    "(1 KiB .. 256 MiB per rank) of every row both hold, whether they choose the\n"
    "same path. With --db, each point where they differ is judged on the sweeps\n"
    "in that database: are the two paths within the tolerance of each other\n"
    "there? With --db-b too (--db: A's job, --db-b: B's), each such point is\n"
    "also sorted by both jobs' sweeps: a tie (within the tolerance in both), a\n"
    "swing (each job's sweeps favour its own header's path: the two jobs\n"
    "measured the same two paths apart) or other; both databases' sweeps must be\n"
    "of one backend, GPU model and world sizes (else --force). Rows of the unmeasured\n"
    "default table (sm 0) are left out unless --all-rows. Reads only.\n"
    "\n";

typedef struct {
  const char *db, *db_b;
  double tolerance, require;
  int force;
  tune_agree_opts agree;
} headers_args;

/* --require PCT: a percentage in 0..100 ("90" or "90%"). */
static int opt_require(void *out, const tune_opt *o, const char *v, int seen, int argc,
                       char **argv) {
  (void)o, (void)seen, (void)argc, (void)argv;
  char *end;
  errno = 0;
  double x = tune_strtod(v, &end);
  if (errno || end == v || (*end != '\0' && strcmp(end, "%") != 0) || !(x >= 0 && x <= 100))
    return tune_usage_error("compare-headers", "--require: '%s' is not a percentage in 0..100", v);
  ((headers_args *)out)->require = x;
  return 0;
}

static const tune_opt compare_headers_spec[] = {
    TUNE_OPT_STRING_ROW("db", NULL, "FILE", headers_args, db,
                        "a tune database holding the sweeps behind the headers"),
    TUNE_OPT_STRING_ROW("db-b", NULL, "FILE", headers_args, db_b,
                        "with --db (A's job), B's job's database: sort each\n"
                        "differing point by both jobs' sweeps"),
    TUNE_OPT_FLAG_ROW("force", headers_args, force,
                      "with --db-b: sort by sweeps of another backend, GPU\n"
                      "model or world sizes than --db's"),
    TUNE_OPT_TOLERANCE_ROW(headers_args, tolerance, "3%, 0.03 or 1.03 (default 3%)"),
    TUNE_OPT_SIZE_ROW("min-bytes", headers_args, agree.min_bytes, "first point (default 1K)"),
    TUNE_OPT_SIZE_ROW("max-bytes", headers_args, agree.max_bytes, "last point (default 256M)"),
    TUNE_OPT_INT_ROW("steps", NULL, "N", headers_args, agree.steps, 1, 64,
                     "points per octave (default 8)"),
    TUNE_OPT_FLAG_ROW("all-rows", headers_args, agree.all_rows, "compare the sm 0 rows too"),
    TUNE_OPT_CALL_ROW("require", NULL, "PCT", opt_require,
                      "exit 1 when fewer than PCT % of the points agree, or\n"
                      "(with --db) a differing point is not within the tolerance\n"
                      "or has no data there (an error exits 2)"),
};

/* The agreement's summary lines, then each differing row (tune_headers_agree). */
static tune_result headers_print(const headers_args *a, const char *pa, const char *pb,
                                 const tune_agreement *ag, const agree_two *two) {
  char lo[32], hi[32];
  printf("compare-headers: %s vs %s\n", pa, pb);
  printf("rows compared: %ld (only in A: %ld, only in B: %ld)%s\n", ag->rows, ag->only_a,
         ag->only_b, a->agree.all_rows ? "" : "; sm 0 rows (the unmeasured default) left out");
  printf("points: %ld (%d per octave, %s..%s per row)\n", ag->points, a->agree.steps,
         tune_format_size(a->agree.min_bytes, lo, sizeof(lo)),
         tune_format_size(a->agree.max_bytes, hi, sizeof(hi)));
  if (ag->points)
    printf("agreement: %ld of %ld points choose the same path (%.2f%%)\n", ag->same, ag->points,
           100.0 * (double)ag->same / (double)ag->points);
  else
    printf("agreement: none to judge: the headers have no row in common\n");
  if (a->db)
    printf(
        "differing: %ld points; both paths within %.3f of each other in the measured data at %ld, "
        "not at %ld, "
        "no data at %ld\n",
        ag->points - ag->same, 1.0 + a->tolerance, ag->within, ag->apart, ag->unknown);
  else
    printf("differing: %ld points (give --db to judge them on the measured data)\n",
           ag->points - ag->same);
  if (two) {
    printf("on both jobs' sweeps: ties (within %.3f in both) at %ld, swings (each job's sweeps favour its own"
           " header's path) at %ld",
           1.0 + a->tolerance, two->tie, two->swing);
    if (two->swing) printf(" (the two jobs' ratios up to %.3f apart)", two->largest);
    printf(", other at %ld, no data at %ld\n", two->other, two->unknown);
  }
  return tune_ok;
}

/* The sweeps of st (option opt, file path) summarized into *s; refused
 * where it holds none, since they are what differing points are judged on. */
static tune_result sweeps_of(const char *opt, const char *path, tune_store *st,
                             tune_cmp_summary *s) {
  TUNE_CHECK(tune_sweep_summary(st, path, s));
  if (s->worlds[0]) return tune_ok;
  tune_error(
      "compare-headers: %s %s holds no sweep measurements (a main job's sweeps are what "
      "differing points are judged on)",
      opt, path);
  return tune_err_arg;
}

/* Load both headers, judge them (on the database's sweeps with --db) and
 * print the agreement into *ag. */
static tune_result headers_run(const headers_args *a, const char *pa, const char *pb,
                               tune_agreement *ag) {
  dc_threshold_row *ra = NULL, *rb = NULL;
  size_t na = 0, nb = 0;
  tune_store *st = NULL, *st_b = NULL;
  tune_cmp_summary sa = {0}, sb = {0};
  agree_db adb = {.tolerance = 1.0 + a->tolerance}, bdb = adb;
  agree_two two = {.a = &adb, .b = &bdb};
  tune_agreement listed;
  /* The lines of the rows that differ, held until the summary is out. */
  char *rows = NULL;
  size_t rows_len = 0;
  FILE *detail = NULL;
  tune_result r = tune_header_load(pa, &ra, &na);
  if (r == tune_ok) r = tune_header_load(pb, &rb, &nb);
  if (r == tune_ok && a->db) r = open_db("compare-headers", "--db", a->db, &st);
  if (r == tune_ok && a->db_b) r = open_db("compare-headers", "--db-b", a->db_b, &st_b);
  if (r == tune_ok && st) r = sweeps_of("--db", a->db, st, &sa);
  if (r == tune_ok && st_b) r = sweeps_of("--db-b", a->db_b, st_b, &sb);
  if (r == tune_ok && st_b)
    r = summaries_match("compare-headers", a->db, &sa, a->db_b, &sb, a->force);
  if (r == tune_ok && st) r = tune_sweep_reader_open(st, &adb.rd);
  if (r == tune_ok && st_b) r = tune_sweep_reader_open(st_b, &bdb.rd);
  if (r == tune_ok && (detail = open_memstream(&rows, &rows_len)) == NULL) r = tune_err_system;
  if (r == tune_ok)
    r = tune_headers_agree(ra, na, rb, nb, &a->agree, st ? agree_within : NULL, &adb, detail, ag);
  if (detail && fclose(detail) != 0 && r == tune_ok) r = tune_err_system;
  if (r == tune_ok && st_b) r = tune_headers_agree(ra, na, rb, nb, &a->agree, agree_sort, &two, NULL, &listed);
  if (r == tune_ok && (adb.failed || bdb.failed)) r = tune_err_db;
  if (r == tune_ok) r = headers_print(a, pa, pb, ag, st_b ? &two : NULL);
  if (r == tune_ok) fputs(rows, stdout);
  free(rows);
  tune_sweep_reader_close(adb.rd);
  tune_sweep_reader_close(bdb.rd);
  tune_store_close(st);
  tune_store_close(st_b);
  free(ra);
  free(rb);
  return r;
}

/* --require's verdict on ag: 1 (each failure said) or 0. With --db, a
 * differing point counts against the gate unless the database shows its
 * two paths within the tolerance: one it holds no data for is not judged. */
static int headers_gate(const headers_args *a, const tune_agreement *ag) {
  const char *me = "tune compare-headers";
  if (ag->points == 0) {
    fprintf(stderr, "%s: the headers share no row to compare (--require)\n", me);
    return 1;
  }
  int fail = 0;
  double pct = 100.0 * (double)ag->same / (double)ag->points;
  if (pct < a->require) {
    fprintf(stderr, "%s: %.2f%% of the points agree, below the required %g%%\n", me, pct,
            a->require);
    fail = 1;
  }
  if (a->db && ag->apart) {
    fprintf(stderr, "%s: %ld differing points are not within %.3f in %s (--require)\n", me,
            ag->apart, 1.0 + a->tolerance, a->db);
    fail = 1;
  }
  if (a->db && ag->unknown) {
    fprintf(stderr, "%s: %ld differing points have no data in %s to judge them on (--require)\n",
            me, ag->unknown, a->db);
    fail = 1;
  }
  return fail;
}

int tune_cmd_compare_headers(int argc, char **argv) {
  const char *cmd = "compare-headers";
  headers_args a = {.tolerance = TUNE_REGRET_TOLERANCE, .require = -1, .agree = {1024, 256ull << 20, 8, 0}};
  int rc, helped;
  rc = tune_opts_parse(cmd, compare_headers_spec,
                       sizeof(compare_headers_spec) / sizeof(compare_headers_spec[0]), argc, argv,
                       &a, 0, compare_headers_usage, NULL, 20, &helped);
  if (rc != 0 || helped) return rc;
  if (argc - optind != 2) return tune_usage_error(cmd, "give two headers, A.h and B.h");
  if (a.db_b && !a.db) return tune_usage_error(cmd, "--db-b needs --db: A's job's database beside B's");
  if (a.force && !a.db_b) return tune_usage_error(cmd, "--force is for --db-b only");
  if (a.agree.min_bytes > a.agree.max_bytes)
    return tune_usage_error(cmd, "--min-bytes is larger than --max-bytes");
  tune_agreement ag;
  tune_result r = headers_run(&a, argv[optind], argv[optind + 1], &ag);
  if (r == tune_ok) r = tune_stdout_flush();
  rc = tune_gate_exit_status(r);
  if (r == tune_ok && a.require >= 0) rc = headers_gate(&a, &ag);
  return rc;
}

/* ---- compare ----------------------------------------------------------------- */

/* A paired cell's verdict. */
typedef struct {
  const tune_cmp_cell *c;
  double base_ns, new_ns, diff, lo, hi;
  int verdict; /* 1 regression, -1 improvement, 0 neither */
} cmp_pair;

/* One side of the comparison: a database, its run (0: the newest of each
 * kind), its cells and what its runs hold. */
typedef struct {
  const char *path, *opt;
  tune_store *st;
  tune_cmp_reader *rd;
  int64_t run;
  tune_cmp_cell *cells;
  size_t n;
  tune_cmp_summary sum;
} cmp_side;

static uint64_t cmp_hash(const char *s, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static void print_pair(FILE *f, const cmp_pair *p) {
  const tune_cmp_cell *c = p->c;
  char b[32];
  printf("  %-6s %-11s %-14s %-12s %-4s %2d %6s %2" PRId64 "/%-2" PRId64 " %-5s %6" PRId64
         " %11.2f %11.2f %6.3f  [%+.2f, %+.2f]\n",
         c->kind, c->impl, c->op, c->path, c->dtype, c->world,
         tune_format_size((uint64_t)c->bytes, b, sizeof(b)), c->in_off, c->out_off, c->mode,
         c->skew_ns / 1000, p->base_ns / 1e3, p->new_ns / 1e3, p->new_ns / p->base_ns, p->lo / 1e3,
         p->hi / 1e3);
  (void)f;
}

static int cmp_key_pair(const void *a, const void *b) {
  return strcmp(((const cmp_pair *)a)->c->key, ((const cmp_pair *)b)->c->key);
}

static int cmp_by_ratio_desc(const void *a, const void *b) {
  const cmp_pair *x = a, *y = b;
  double rx = x->new_ns / x->base_ns, ry = y->new_ns / y->base_ns;
  return rx < ry ? 1 : rx > ry ? -1 : strcmp(x->c->key, y->c->key);
}

/* gnuplot -d -c compare.gp BASE TITLE SERIES TOL in dir; 0 when it drew
 * BASE.png. */
static tune_result cmp_gnuplot(const char *gnuplot, const char *dir, const char *base,
                               const char *title, const char *series, const char *tol) {
  char png[PATH_MAX];
  char name[128];
  snprintf(name, sizeof(name), "%s.png", base);
  TUNE_CHECK(join_path(png, sizeof(png), dir, name));
  TUNE_CHECK(tune_remove_old("compare", png));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  /* Opened by the child, after the chdir below: a name in dir. */
  posix_spawn_file_actions_addopen(&fa, 1, "compare-gnuplot.log", O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  char *argv[] = {(char *)gnuplot, "-d",           "-c",        "compare.gp", (char *)base,
                  (char *)title,   (char *)series, (char *)tol, NULL};
  /* gnuplot reads and writes relative names: run it in the folder. */
  char cwd[PATH_MAX];
  pid_t pid;
  int status = 0;
  if (getcwd(cwd, sizeof(cwd)) == NULL || chdir(dir) != 0) {
    posix_spawn_file_actions_destroy(&fa);
    tune_error("compare: cannot enter %s: %s", dir, strerror(errno));
    return tune_err_system;
  }
  int rc = posix_spawn(&pid, gnuplot, &fa, NULL, argv, environ);
  int back = chdir(cwd);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0 || back != 0) {
    tune_error("compare: running %s: %s", gnuplot, strerror(rc ? rc : errno));
    return tune_err_system;
  }
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return tune_err_system;
  struct stat sb;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || stat(png, &sb) != 0 || sb.st_size == 0) {
    tune_error("compare: gnuplot failed drawing %s; its messages are in %s/compare-gnuplot.log", base, dir);
    return tune_err_system;
  }
  return tune_ok;
}

/* dir/name into out, refused (tune_check_output) where it is either
 * database or a file SQLite keeps beside one. */
static tune_result cmp_out_path(char *out, size_t len, const char *dir, const char *name,
                                const char *const dbs[2]) {
  TUNE_CHECK(join_path(out, len, dir, name));
  return tune_check_output2("--out", out, dbs[0], dbs[1]);
}

/* 1 if p is the first pair of its figure (one per op and world), with the
 * figure's base name; done marks the figures met. */
static int cmp_figure(const cmp_pair *p, int done[DC_OP_COUNT][64], char *base, size_t len) {
  int op = dc_op_parse(p->c->op), w = p->c->world;
  if (op < 0 || w < 1 || w >= 64 || done[op][w]) return 0;
  done[op][w] = 1;
  snprintf(base, len, "compare_%s_w%d", p->c->op, w);
  return 1;
}

/* Every file the plots write, or have gnuplot write (its log, each
 * figure's data, PNG and SVG), checked before anything is printed or
 * written: a link there to either database must not become a figure. */
static tune_result cmp_check_outputs(const cmp_pair *p, size_t np, const char *dir,
                                     const char *const dbs[2]) {
  static const char *const fixed[] = {"compare.gp", "compare-gnuplot.log"},
                           *const exts[] = {".dat", ".png", ".svg"};
  char path[PATH_MAX], base[96], name[128];
  int done[DC_OP_COUNT][64] = {{0}};
  for (size_t k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++)
    TUNE_CHECK(cmp_out_path(path, sizeof(path), dir, fixed[k], dbs));
  for (size_t i = 0; i < np; i++) {
    if (!cmp_figure(&p[i], done, base, sizeof(base))) continue;
    for (size_t k = 0; k < sizeof(exts) / sizeof(exts[0]); k++) {
      snprintf(name, sizeof(name), "%s%s", base, exts[k]);
      TUNE_CHECK(cmp_out_path(path, sizeof(path), dir, name, dbs));
    }
  }
  return tune_ok;
}

/* The ratio plots, one per op and world, into dir (cmp_check_outputs has
 * checked every name). */
static tune_result cmp_plots(const cmp_pair *p, size_t np, const char *dir, double tol,
                             const char *const dbs[2]) {
  char gnuplot[PATH_MAX], path[PATH_MAX], tols[32];
  if (tune_report_find_gnuplot(gnuplot, sizeof(gnuplot)) != tune_ok) {
    TUNE_WARN(TUNE_REPORT, "gnuplot not found: no compare plots");
    fprintf(stderr, "tune compare: gnuplot not found; the ratio plots are left out\n");
    return tune_ok;
  }
  TUNE_CHECK(cmp_out_path(path, sizeof(path), dir, "compare.gp", dbs));
  tune_output o;
  TUNE_CHECK(tune_output_open(path, &o));
  fputs(tune_gp_compare, o.f);
  TUNE_CHECK(tune_output_close(&o, tune_ok)); /* which reports a failed write */
  snprintf(tols, sizeof(tols), "%.6g", tol);
  int done[DC_OP_COUNT][64] = {{0}};
  for (size_t i = 0; i < np; i++) {
    char base[96], title[160], series[1024] = "", dat[128];
    if (!cmp_figure(&p[i], done, base, sizeof(base))) continue;
    int w = p[i].c->world;
    snprintf(title, sizeof(title), "%s, world %d: new / baseline median", p[i].c->op, w);
    snprintf(dat, sizeof(dat), "%s.dat", base);
    TUNE_CHECK(cmp_out_path(path, sizeof(path), dir, dat, dbs));
    TUNE_CHECK(tune_output_open(path, &o));
    /* One block per impl:path, in the order first met (pairs are sorted by
     * key, so by impl and path). */
    char names[32][64];
    int nn = 0;
    for (size_t k = i; k < np; k++) {
      const tune_cmp_cell *c = p[k].c;
      if (strcmp(c->op, p[i].c->op) != 0 || c->world != w) continue;
      char nm[64];
      snprintf(nm, sizeof(nm), "%s:%s", c->impl, c->path);
      int j = 0;
      while (j < nn && strcmp(names[j], nm) != 0) j++;
      if (j == nn && nn < 32) snprintf(names[nn++], sizeof(names[0]), "%s", nm);
    }
    for (int j = 0; j < nn; j++) {
      fprintf(o.f, "# %s\n", names[j]);
      for (size_t k = i; k < np; k++) {
        const tune_cmp_cell *c = p[k].c;
        char nm[64];
        snprintf(nm, sizeof(nm), "%s:%s", c->impl, c->path);
        if (strcmp(c->op, p[i].c->op) == 0 && c->world == w && strcmp(nm, names[j]) == 0)
          fprintf(o.f, "%" PRId64 " %.6f\n", c->bytes, p[k].new_ns / p[k].base_ns);
      }
      fprintf(o.f, "\n\n");
      size_t len = strlen(series);
      snprintf(series + len, sizeof(series) - len, "%s%s", j ? " " : "", names[j]);
    }
    TUNE_CHECK(tune_output_close(&o, tune_ok));
    TUNE_CHECK(cmp_gnuplot(gnuplot, dir, base, title, series, tols));
  }
  return tune_ok;
}

static const char *compare_usage =
    "usage: tune compare --db NEW.db --baseline OLD.db [--tolerance 5%] [options]\n"
    "\n"
    "A regression gate: pair the configurations of two databases (impl, op, path,\n"
    "dtype, world, bytes, offsets, mode, skew; and the kind of run: the before,\n"
    "sweep and after runs of each side's newest main job whose after run\n"
    "finished, and its newest finished run of each other kind), take the bootstrap\n"
    "CI of the difference of the medians (slowest rank per trial) from the stored\n"
    "samples, and list the regressions and improvements: CI excluding zero and\n"
    "the median moved by more than the tolerance; and every configuration of the\n"
    "new database with wrong results. Exits 1 on any regression or wrong result,\n"
    "2 on an error.\n"
    "Where both jobs began with the same thresholds table (stored with their before\n"
    "runs), states the run-to-run drift: that table's auto dispatch, new/baseline\n"
    "per size, per op and mode, for the before passes and the after passes'\n"
    "previous-table trials -- how much of a regression is noise; else says why not.\n"
    "Draws new/baseline ratio per size, per op and world, into the output folder.\n"
    "Refuses sim against GPU, different GPU models or world sizes, unless --force.\n"
    "Both databases are only read.\n"
    "\n";

/* The run-to-run drift of one kind of run (before, after) between the two
 * sides: auto dispatch with the table both jobs began with, new / baseline
 * per size, by op and mode (issue 18), or why there is no figure. */
typedef struct {
  char op[24], mode[8];
  size_t sizes;
  double median, mean_abs, largest; /* of new / baseline - 1 */
  const tune_cmp_prev *worst;       /* the new side's measurement furthest from 1 */
} drift_group;

typedef struct {
  const char *kind;
  int shown;      /* either side compares a run of this kind */
  char why[256];  /* non-empty: no figure, and why */
  uint64_t table; /* the table both jobs began with */
  drift_group *g;
  size_t ng;
} drift_kind;

typedef struct {
  cmp_side side[2];
  const char *out_dir;
  double tol, conf;
  int64_t seed;
  int json, no_plot, force;
  /* the result */
  cmp_pair *pairs;
  size_t np, only_new, only_base, no_samples;
  size_t base_wrong; /* left out: wrong results in the baseline only */
  long nreg, nimp;
  tune_cmp_cell *wrong; /* the new side's configurations with wrong results */
  size_t nwrong;
  char dir[PATH_MAX];
  tune_cmp_prev *prev[2]; /* each side's measurements of its previous table */
  size_t nprev[2];
  drift_kind drift[2]; /* before, after */
} compare_args;

static const tune_opt compare_spec[] = {
    TUNE_OPT_STRING_ROW("db", NULL, "FILE", compare_args, side[0].path,
                        "the new database (required)"),
    TUNE_OPT_STRING_ROW("baseline", NULL, "FILE", compare_args, side[1].path,
                        "the baseline database (required)"),
    TUNE_OPT_TOLERANCE_ROW(compare_args, tol, "5%, 0.05 or 1.05 (default 5%)"),
    TUNE_OPT_INT_ROW("run", NULL, "N", compare_args, side[0].run, 1, INT64_MAX,
                     "compare only run N of the new database ..."),
    TUNE_OPT_INT_ROW("baseline-run", NULL, "M", compare_args, side[1].run, 1, INT64_MAX,
                     "... against run M of the baseline (give both)"),
    TUNE_OPT_DOUBLE_ROW("confidence", "C", compare_args, conf, 0.5, 0.9999,
                        "confidence of the median-difference CI (default 0.95)"),
    TUNE_OPT_INT_ROW("seed", NULL, "N", compare_args, seed, 0, INT64_MAX,
                     "seed of the bootstrap (default 1)"),
    TUNE_OPT_FLAG_ROW("json", compare_args, json,
                      "the whole comparison as JSON on stdout instead of the table"),
    TUNE_OPT_STRING_ROW("out", NULL, "DIR", compare_args, out_dir,
                        "folder of the plots (default: <new db folder>/report)"),
    TUNE_OPT_FLAG_ROW("no-plot", compare_args, no_plot, "no plots"),
    TUNE_OPT_FLAG_ROW("force", compare_args, force,
                      "compare sim with GPU, other GPU models or world sizes"),
};

/* The new side's configurations with wrong results into a->wrong: each
 * fails the gate, as in verify. Pairing leaves them out, and the
 * baseline's too (their times are not of a right result). */
static tune_result cmp_collect_wrong(compare_args *a) {
  const cmp_side *s = &a->side[0];
  size_t cap = 0;
  for (size_t k = 0; k < s->n; k++) {
    if (s->cells[k].wrong == 0) continue;
    TUNE_CHECK(tune_grow((void **)&a->wrong, &cap, a->nwrong, sizeof(*a->wrong), 16));
    a->wrong[a->nwrong++] = s->cells[k];
  }
  return tune_ok;
}

/* Open both databases and read their cells and summaries. */
static tune_result compare_load(compare_args *a) {
  for (int i = 0; i < 2; i++) {
    cmp_side *s = &a->side[i];
    TUNE_CHECK(open_db("compare", s->opt, s->path, &s->st));
    TUNE_CHECK(tune_cmp_reader_open(s->st, s->path, s->run, &s->rd));
    TUNE_CHECK(tune_cmp_read_cells(s->rd, s->run == 0, &s->cells, &s->n));
    if (s->n == 0) {
      tune_error("compare: %s %s holds no configurations%s", s->opt, s->path,
                 s->run ? " in that run"
                        : " of a finished run (a main job counts once its after run finished; "
                          "--run N compares any one run)");
      return tune_err_arg;
    }
    TUNE_CHECK(tune_cmp_read_summary(s->rd, &s->sum));
  }
  return cmp_collect_wrong(a);
}

/* The plots' folder: --out, else <new db folder>/report; writable, and
 * neither database. */
static tune_result compare_dir(compare_args *a) {
  if (a->out_dir == NULL) {
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s", a->side[0].path);
    char *slash = strrchr(tmp, '/');
    if (slash) *slash = '\0';
    TUNE_CHECK(join_path(a->dir, sizeof(a->dir), slash ? (tmp[0] ? tmp : "/") : ".", "report"));
  } else
    snprintf(a->dir, sizeof(a->dir), "%s", a->out_dir);
  TUNE_CHECK(tune_check_writable("--out", a->dir, 1));
  return tune_check_output2("--out", a->dir, a->side[0].path, a->side[1].path);
}

/* Judge the cells c (new) and b (baseline) of one key into a->pairs. */
static tune_result compare_cell(compare_args *a, const tune_cmp_cell *c, const tune_cmp_cell *b) {
  double *xn = NULL, *xb = NULL;
  size_t nn = 0, nb = 0;
  cmp_pair *p = &a->pairs[a->np];
  tune_result r = tune_cmp_read_slowest(a->side[0].rd, c->config_id, &xn, &nn);
  if (r == tune_ok) r = tune_cmp_read_slowest(a->side[1].rd, b->config_id, &xb, &nb);
  if (r == tune_ok && nn > 0 && nb > 0) {
    p->c = c;
    p->new_ns = tune_median(xn, nn);
    p->base_ns = tune_median(xb, nb);
    r = tune_ci_median_diff(xb, nb, xn, nn, a->conf, cmp_hash(c->key, (uint64_t)a->seed), &p->diff,
                            &p->lo, &p->hi);
  }
  free(xn);
  free(xb);
  if (r != tune_ok) return r;
  if (nn == 0 || nb == 0) {
    a->no_samples++;
    return tune_ok;
  }
  p->verdict = p->lo > 0 && p->diff > a->tol * p->base_ns    ? 1
               : p->hi < 0 && -p->diff > a->tol * p->base_ns ? -1
                                                             : 0;
  a->nreg += p->verdict > 0;
  a->nimp += p->verdict < 0;
  a->np++;
  return tune_ok;
}

/* Pair the two sides' sorted cells by key and judge each pair. */
static tune_result compare_pairs(compare_args *a) {
  const cmp_side *s0 = &a->side[0], *s1 = &a->side[1];
  a->pairs = malloc((s0->n < s1->n ? s0->n : s1->n) * sizeof(*a->pairs) + 1);
  if (a->pairs == NULL) return tune_err_system;
  for (size_t i = 0, j = 0; i < s0->n || j < s1->n;) {
    int k = i == s0->n ? 1 : j == s1->n ? -1 : strcmp(s0->cells[i].key, s1->cells[j].key);
    if (k < 0) {
      a->only_new++, i++;
    } else if (k > 0) {
      a->only_base++, j++;
    } else if (s0->cells[i].wrong || s1->cells[j].wrong) {
      a->base_wrong += s0->cells[i].wrong == 0;
      i++, j++;
    } else {
      TUNE_CHECK(compare_cell(a, &s0->cells[i++], &s1->cells[j++]));
    }
  }
  if (a->np > 0 || a->nwrong > 0) return tune_ok;
  if (a->no_samples || a->base_wrong)
    tune_error(
        "compare: of the configurations %s and %s share, %zu have no samples stored in one "
        "or both and %zu wrong results in the baseline; none is left to compare",
        s0->path, s1->path, a->no_samples, a->base_wrong);
  else
    tune_error("compare: no configuration of %s is in %s (other sizes, ops or runs?)", s0->path,
               s1->path);
  return tune_err_arg;
}

/* ---- run-to-run drift ------------------------------------------------------ */

/* prev[0..n) of side i of one kind: [*lo, *hi) (they are sorted by key,
 * which starts with the kind). */
static void drift_range(const compare_args *a, int i, const char *kind, size_t *lo, size_t *hi) {
  *lo = 0;
  while (*lo < a->nprev[i] && strcmp(a->prev[i][*lo].kind, kind) != 0) (*lo)++;
  *hi = *lo;
  while (*hi < a->nprev[i] && strcmp(a->prev[i][*hi].kind, kind) == 0) (*hi)++;
}

/* d's groups from the measurements both sides hold, new / baseline. */
static tune_result drift_groups(compare_args *a, drift_kind *d, size_t lo0, size_t hi0, size_t lo1,
                                size_t hi1) {
  size_t cap = hi0 - lo0 + 1, n = 0;
  double *r = malloc(cap * sizeof(*r));
  const tune_cmp_prev **at = malloc(cap * sizeof(*at));
  d->g = malloc(cap * sizeof(*d->g));
  if (r == NULL || at == NULL || d->g == NULL) {
    free(r);
    free(at);
    return tune_err_system;
  }
  for (size_t i = lo0, j = lo1; i < hi0 && j < hi1;) {
    int k = strcmp(a->prev[0][i].key, a->prev[1][j].key);
    if (k == 0) {
      at[n] = &a->prev[0][i];
      r[n++] = a->prev[0][i++].median_ns / a->prev[1][j++].median_ns;
    } else if (k < 0)
      i++;
    else
      j++;
  }
  for (size_t i = 0; i < n;) {
    drift_group *g = &d->g[d->ng++];
    size_t e = i, worst = i;
    double mean = 0;
    while (e < n && strcmp(at[e]->op, at[i]->op) == 0 && strcmp(at[e]->mode, at[i]->mode) == 0) {
      mean += fabs(r[e] - 1);
      if (fabs(r[e] - 1) > fabs(r[worst] - 1)) worst = e;
      e++;
    }
    snprintf(g->op, sizeof(g->op), "%s", at[i]->op);
    snprintf(g->mode, sizeof(g->mode), "%s", at[i]->mode);
    g->sizes = e - i;
    g->median = tune_median(r + i, e - i) - 1;
    g->mean_abs = mean / (double)(e - i);
    g->largest = r[worst] - 1;
    g->worst = at[worst];
    i = e;
  }
  if (n == 0) snprintf(d->why, sizeof(d->why), "no size is measured on both sides");
  free(r);
  free(at);
  return tune_ok;
}

/* Each kind's drift, where both sides' jobs began with the same table. */
static tune_result compare_drift(compare_args *a) {
  static const char *const kinds[2] = {"before", "after"};
  static const char *const side_name[2] = {"new", "baseline"};
  for (int i = 0; i < 2; i++)
    TUNE_CHECK(tune_cmp_read_previous(a->side[i].rd, &a->prev[i], &a->nprev[i]));
  for (int k = 0; k < 2; k++) {
    drift_kind *d = &a->drift[k];
    size_t lo[2], hi[2];
    uint64_t hash[2] = {0, 0};
    int has[2] = {0, 0};
    d->kind = kinds[k];
    for (int i = 0; i < 2; i++) drift_range(a, i, d->kind, &lo[i], &hi[i]);
    d->shown = hi[0] > lo[0] || hi[1] > lo[1];
    if (!d->shown) continue;
    for (int i = 0; i < 2 && d->why[0] == '\0'; i++) {
      if (hi[i] == lo[i]) {
        snprintf(d->why, sizeof(d->why), "the %s side has no %s pass of libdetcoll's auto dispatch",
                 side_name[i], d->kind);
        break;
      }
      TUNE_CHECK(tune_cmp_previous_hash(a->side[i].rd, a->prev[i][lo[i]].job, &hash[i], &has[i]));
      if (!has[i])
        snprintf(d->why, sizeof(d->why),
                 "the %s job (before run %" PRId64
                 ") stored no table it began with "
                 "(a database older than schema 5)",
                 side_name[i], a->prev[i][lo[i]].job);
    }
    if (d->why[0] == '\0' && hash[0] != hash[1])
      snprintf(d->why, sizeof(d->why),
               "the jobs began with different tables (new %016" PRIx64 ", baseline %016" PRIx64
               "): their difference is not drift",
               hash[0], hash[1]);
    d->table = hash[0];
    if (d->why[0] == '\0') TUNE_CHECK(drift_groups(a, d, lo[0], hi[0], lo[1], hi[1]));
  }
  return tune_ok;
}

static void drift_table(const compare_args *a) {
  for (int k = 0; k < 2; k++) {
    const drift_kind *d = &a->drift[k];
    if (!d->shown) continue;
    if (d->why[0]) {
      printf("run-to-run drift (%s runs): no figure: %s\n", d->kind, d->why);
      continue;
    }
    printf("run-to-run drift (%s runs): both jobs began with table %016" PRIx64
           "; its auto dispatch, new / baseline per size (how much of a difference is noise):\n",
           d->kind, d->table);
    for (size_t i = 0; i < d->ng; i++) {
      const drift_group *g = &d->g[i];
      char at[32];
      tune_format_size((uint64_t)g->worst->bytes, at, sizeof(at));
      printf(
          "  %-14s %-5s median %+.1f%%, mean |drift| %.1f%%, largest %+.1f%% (%s %s world %d, "
          "%s); %zu sizes\n",
          g->op, g->mode, 100 * g->median, 100 * g->mean_abs, 100 * g->largest, g->worst->dtype,
          g->worst->align, g->worst->world, at, g->sizes);
    }
  }
}

static void drift_json(const compare_args *a) {
  printf(", \"drift\": [");
  int first = 1;
  for (int k = 0; k < 2; k++) {
    const drift_kind *d = &a->drift[k];
    if (!d->shown) continue;
    printf("%s\n {\"kind\": \"%s\", ", first ? "" : ",", d->kind);
    first = 0;
    if (d->why[0]) {
      printf("\"table\": null, \"reason\": ");
      tune_json_string(stdout, d->why);
      printf(", \"groups\": []}");
      continue;
    }
    printf("\"table\": \"%016" PRIx64 "\", \"reason\": null, \"groups\": [", d->table);
    for (size_t i = 0; i < d->ng; i++) {
      const drift_group *g = &d->g[i];
      printf("%s{\"op\": ", i ? ", " : "");
      tune_json_string(stdout, g->op);
      printf(", \"mode\": ");
      tune_json_string(stdout, g->mode);
      printf(
          ", \"sizes\": %zu, \"median_ratio\": %.6f, \"mean_abs_drift\": %.6f, "
          "\"largest_ratio\": %.6f}",
          g->sizes, 1 + g->median, g->mean_abs, 1 + g->largest);
    }
    printf("]}");
  }
  printf("\n]");
}

/* A cell's key fields, opening its JSON object. */
static void json_cell_key(const tune_cmp_cell *c) {
  printf(" {\"kind\": ");
  tune_json_string(stdout, c->kind);
  printf(", \"impl\": ");
  tune_json_string(stdout, c->impl);
  printf(", \"op\": ");
  tune_json_string(stdout, c->op);
  printf(", \"path\": ");
  tune_json_string(stdout, c->path);
  printf(", \"dtype\": ");
  tune_json_string(stdout, c->dtype);
  printf(", \"world\": %d, \"bytes\": %" PRId64 ", \"in_offset\": %" PRId64
         ", \"out_offset\": %" PRId64 ", \"mode\": ",
         c->world, c->bytes, c->in_off, c->out_off);
  tune_json_string(stdout, c->mode);
  printf(", \"skew_ns\": %" PRId64 ", \"skew_rank\": %d", c->skew_ns, c->skew_rank);
}

static void json_cell(const cmp_pair *p) {
  json_cell_key(p->c);
  printf(", \"baseline_ns\": %.1f, \"new_ns\": %.1f,"
         " \"diff_ns\": %.1f, \"ci_lo_ns\": %.1f, \"ci_hi_ns\": %.1f, \"verdict\": \"%s\"}",
         p->base_ns, p->new_ns, p->diff, p->lo, p->hi,
         p->verdict > 0   ? "regression"
         : p->verdict < 0 ? "improvement"
                          : "same");
}

static void compare_json(const compare_args *a) {
  printf("{\"new\": ");
  tune_json_string(stdout, a->side[0].path);
  printf(", \"baseline\": ");
  tune_json_string(stdout, a->side[1].path);
  printf(
      ", \"tolerance\": %.6g, \"confidence\": %.6g, \"paired\": %zu, \"only_new\": %zu, "
      "\"only_baseline\": %zu,"
      " \"without_samples\": %zu, \"baseline_wrong\": %zu, \"regressions\": %ld,"
      " \"improvements\": %ld, \"wrong_results\": %zu",
      a->tol, a->conf, a->np, a->only_new, a->only_base, a->no_samples, a->base_wrong, a->nreg,
      a->nimp, a->nwrong);
  drift_json(a);
  printf(", \"wrong\": [");
  for (size_t i = 0; i < a->nwrong; i++) {
    printf("%s\n", i ? "," : "");
    json_cell_key(&a->wrong[i]);
    printf(", \"wrong_elems\": %" PRId64 "}", a->wrong[i].wrong);
  }
  printf("%s]", a->nwrong ? "\n" : "");
  printf(", \"cells\": [");
  for (size_t i = 0; i < a->np; i++) {
    printf("%s\n", i ? "," : "");
    json_cell(&a->pairs[i]);
  }
  printf("\n]}\n");
}

static void compare_table(compare_args *a) {
  printf("tune compare: %s (runs: %s) against baseline %s (runs: %s)\n", a->side[0].path,
         a->side[0].sum.runs, a->side[1].path, a->side[1].sum.runs);
  printf(
      "paired configurations: %zu (only in new: %zu, only in baseline: %zu); tolerance %.3g%%, CI "
      "%.3g%%\n",
      a->np, a->only_new, a->only_base, 100 * a->tol, 100 * a->conf);
  if (a->no_samples) printf("left out: %zu configurations without stored samples\n", a->no_samples);
  if (a->base_wrong)
    printf("left out: %zu configurations with wrong results in the baseline\n", a->base_wrong);
  printf("regressions: %ld, improvements: %ld\n", a->nreg, a->nimp);
  if (a->nwrong) printf("wrong results in new: %zu configurations\n", a->nwrong);
  drift_table(a);
  for (size_t i = 0; i < a->nwrong; i++) {
    const tune_cmp_cell *c = &a->wrong[i];
    char b[32];
    if (i == 0) printf("\nwrong results (new, elements that failed the check; a regression):\n");
    printf("  %-6s %-11s %-14s %-12s %-4s %2d %6s %2" PRId64 "/%-2" PRId64 " %-5s %6" PRId64
           "  %" PRId64 " wrong\n",
           c->kind, c->impl, c->op, c->path, c->dtype, c->world,
           tune_format_size((uint64_t)c->bytes, b, sizeof(b)), c->in_off, c->out_off, c->mode,
           c->skew_ns / 1000, c->wrong);
  }
  if (a->np > 1) qsort(a->pairs, a->np, sizeof(*a->pairs), cmp_by_ratio_desc);
  for (int v = 1; v >= -1; v -= 2) {
    if ((v > 0 ? a->nreg : a->nimp) == 0) continue;
    printf("\n%s (new %s by more than %.3g%%, CI of the difference excluding zero):\n",
           v > 0 ? "regressions" : "improvements", v > 0 ? "slower" : "faster", 100 * a->tol);
    printf("  %-6s %-11s %-14s %-12s %-4s %2s %6s %5s %-5s %6s %11s %11s %6s  %s\n", "run", "impl",
           "op", "path", "type", "w", "bytes", "offs", "mode", "skewus", "base us", "new us",
           "ratio", "CI of new-base (us)");
    for (size_t i = 0; i < a->np; i++) {
      const cmp_pair *p = &a->pairs[v > 0 ? i : a->np - 1 - i];
      if (p->verdict == v) print_pair(stdout, p);
    }
  }
}

/* Check, compare, print and draw. */
static tune_result compare_run(compare_args *a) {
  TUNE_CHECK(compare_load(a));
  TUNE_CHECK(summaries_match("compare", a->side[0].path, &a->side[0].sum, a->side[1].path,
                             &a->side[1].sum, a->force));
  if (!a->no_plot) TUNE_CHECK(compare_dir(a));
  TUNE_CHECK(compare_pairs(a));
  TUNE_CHECK(compare_drift(a));
  const char *const dbs[2] = {a->side[0].path, a->side[1].path};
  if (!a->no_plot) TUNE_CHECK(cmp_check_outputs(a->pairs, a->np, a->dir, dbs));
  if (a->json)
    compare_json(a);
  else
    compare_table(a);
  if (a->no_plot) return tune_ok;
  if (a->np > 1) qsort(a->pairs, a->np, sizeof(*a->pairs), cmp_key_pair);
  TUNE_CHECK(tune_make_dirs("--out", a->dir, a->dir));
  TUNE_CHECK(cmp_plots(a->pairs, a->np, a->dir, a->tol, dbs));
  if (!a->json) printf("\nplots: %s/compare_<op>_w<world>.png\n", a->dir);
  return tune_ok;
}

int tune_cmd_compare(int argc, char **argv) {
  const char *cmd = "compare";
  compare_args a = {
      .side = {{.opt = "--db"}, {.opt = "--baseline"}}, .tol = 0.05, .conf = 0.95, .seed = 1};
  int rc, helped;
  rc = tune_opts_parse(cmd, compare_spec, sizeof(compare_spec) / sizeof(compare_spec[0]), argc,
                       argv, &a, 0, compare_usage, NULL, 23, &helped);
  if (rc != 0 || helped) return rc;
  if (optind < argc) return tune_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
  if (a.side[0].path == NULL || a.side[1].path == NULL)
    return tune_usage_error(cmd, "--db NEW.db and --baseline OLD.db are required");
  if ((a.side[0].run == 0) != (a.side[1].run == 0))
    return tune_usage_error(cmd, "--run and --baseline-run go together");
  if (a.out_dir != NULL && *a.out_dir == '\0')
    return tune_usage_error(cmd, "--out: the path is empty");
  tune_result r = compare_run(&a);
  if (r == tune_ok) r = tune_stdout_flush();
  for (int i = 0; i < 2; i++) {
    tune_cmp_reader_close(a.side[i].rd);
    tune_store_close(a.side[i].st);
    free(a.side[i].cells);
    free(a.prev[i]);
    free(a.drift[i].g);
  }
  free(a.pairs);
  free(a.wrong);
  if (r != tune_ok) return tune_gate_exit_status(r);
  return a.nreg > 0 || a.nwrong > 0 ? 1 : 0;
}
