/* compare.c: `tune compare` -- a regression gate of one database against a
 * baseline database, cell by cell with bootstrap CIs of the median
 * difference -- and `tune compare-headers` -- how far two thresholds
 * headers agree (issue 14). Both only read: databases are opened read-only
 * and nothing is written beside them but the plots of compare. */
#include "compare.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stddef.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "headers.h"
#include "report.h"
#include "stats.h"
#include "store.h"
#include "compare_gp.h"

extern char **environ;

/* ---- shared ---------------------------------------------------------------- */

tune_result tune_parse_tolerance(const char *s, double *frac) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || !isfinite(v)) return tune_err_arg;
  if (strcmp(end, "%") == 0)
    v /= 100.0;
  else if (*end != '\0')
    return tune_err_arg;
  else if (v > 1.0)
    v -= 1.0; /* a ratio: 1.05 */
  if (!(v > 0.0 && v < 1.0)) return tune_err_arg;
  *frac = v;
  return tune_ok;
}

int tune_opt_size(const char *cmd, const char *opt, const char *arg, uint64_t *out) {
  uint64_t b;
  if (tune_parse_size(arg, &b) != tune_ok || b == 0 || b > (64ull << 30))
    return tune_usage_error(cmd, "%s: '%s' is not a size in 1..64G", opt, arg);
  *out = b;
  return 0;
}

int tune_opt_tolerance(const char *cmd, const char *opt, const char *arg, double *frac) {
  if (tune_parse_tolerance(arg, frac) == tune_ok) return 0;
  return tune_usage_error(cmd, "%s: '%s' is not 3%%, 0.03 or 1.03 (between 0 and 100%%)", opt, arg);
}

int tune_opt_confidence(const char *cmd, const char *opt, const char *arg, double *out) {
  char *end;
  errno = 0;
  double v = strtod(arg, &end);
  if (errno || end == arg || *end || !(v >= 0.5 && v <= 0.9999))
    return tune_usage_error(cmd, "%s: '%s' is not a number in 0.5..0.9999", opt, arg);
  *out = v;
  return 0;
}

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

static int sql_fail(sqlite3 *db, const char *what) {
  tune_error("%s: %s", what, sqlite3_errmsg(db));
  return 1;
}

/* ---- compare-headers --------------------------------------------------------- */

typedef struct {
  sqlite3 *db;
  sqlite3_stmt *q;
  double tolerance; /* ratio, e.g. 1.03 */
  int failed;
} agree_db;

/* The median latency of path at bytes for row's key in the sweeps of the
 * database, interpolated log-log between the sizes measured; < 0 if it was
 * not measured around bytes. */
static double measured_at(agree_db *c, const dc_threshold_row *row, dc_path path, uint64_t bytes) {
  sqlite3_stmt *q = c->q;
  sqlite3_reset(q);
  sqlite3_clear_bindings(q);
  if (sqlite3_bind_text(q, 1, dc_op_name(row->op), -1, SQLITE_STATIC) != SQLITE_OK ||
      sqlite3_bind_text(q, 2, dc_path_name(path), -1, SQLITE_STATIC) != SQLITE_OK ||
      sqlite3_bind_text(q, 3, dc_dtype_name(row->dtype), -1, SQLITE_STATIC) != SQLITE_OK ||
      sqlite3_bind_int(q, 4, row->world) != SQLITE_OK ||
      sqlite3_bind_text(q, 5, dc_align_name(row->align), -1, SQLITE_STATIC) != SQLITE_OK ||
      sqlite3_bind_text(q, 6, dc_mode_name(row->mode), -1, SQLITE_STATIC) != SQLITE_OK ||
      sqlite3_bind_int64(q, 7, row->skew_ns) != SQLITE_OK) {
    c->failed = sql_fail(c->db, "compare-headers: query");
    return -1;
  }
  double lo_b = -1, lo_v = 0, hi_b = -1, hi_v = 0;
  int rc;
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    double b = (double)sqlite3_column_int64(q, 0), v = sqlite3_column_double(q, 1);
    if (!(v > 0)) continue;
    if (b <= (double)bytes) lo_b = b, lo_v = v;
    if (b >= (double)bytes && hi_b < 0) hi_b = b, hi_v = v;
  }
  if (rc != SQLITE_DONE) {
    c->failed = sql_fail(c->db, "compare-headers: query");
    return -1;
  }
  if (lo_b < 0 || hi_b < 0) return -1;
  if (hi_b == lo_b) return lo_v;
  double t = log((double)bytes / lo_b) / log(hi_b / lo_b);
  return exp(log(lo_v) + t * (log(hi_v) - log(lo_v)));
}

static int agree_within(void *ctx, const dc_threshold_row *row, dc_path a, dc_path b,
                        uint64_t bytes) {
  agree_db *c = ctx;
  double ta = measured_at(c, row, a, bytes), tb = measured_at(c, row, b, bytes);
  if (ta <= 0 || tb <= 0) return -1;
  double r = ta > tb ? ta / tb : tb / ta;
  return r <= c->tolerance;
}

static const char *compare_headers_help =
    "usage: tune compare-headers A.h B.h [--db FILE] [--tolerance T] [options]\n"
    "\n"
    "How far two thresholds headers agree: at every point of a 1/8-octave grid\n"
    "(1 KiB .. 256 MiB per rank) of every row both hold, whether they choose the\n"
    "same path. With --db, each point where they differ is judged on the sweeps\n"
    "in that database: are the two paths within the tolerance of each other\n"
    "there? Rows of the unmeasured default table (sm 0) are left out unless\n"
    "--all-rows. Reads only.\n"
    "\n"
    "  --db FILE         a tune database holding the sweeps behind the headers\n"
    "  --tolerance T     3%, 0.03 or 1.03 (default 3%)\n"
    "  --min-bytes SIZE  first point (default 1K)\n"
    "  --max-bytes SIZE  last point (default 256M)\n"
    "  --steps N         points per octave (default 8)\n"
    "  --all-rows        compare the sm 0 rows too\n"
    "  --require PCT     exit 1 when fewer than PCT % of the points agree, or\n"
    "                    (with --db) a differing point is not within the tolerance\n"
    "  -h, --help        this text\n";

int tune_cmd_compare_headers(int argc, char **argv) {
  static const struct option opts[] = {{"db", required_argument, 0, 'd'},
                                       {"tolerance", required_argument, 0, 't'},
                                       {"min-bytes", required_argument, 0, 1},
                                       {"max-bytes", required_argument, 0, 2},
                                       {"steps", required_argument, 0, 3},
                                       {"all-rows", no_argument, 0, 4},
                                       {"require", required_argument, 0, 5},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  const char *cmd = "compare-headers", *dbpath = NULL;
  tune_agree_opts o = {1024, 256ull << 20, 8, 0};
  double tol = 0.03, require = -1;
  int64_t v;
  int c, rc;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'd':
        dbpath = optarg;
        break;
      case 't':
        if ((rc = tune_opt_tolerance(cmd, "--tolerance", optarg, &tol)) != 0) return rc;
        break;
      case 1:
      case 2:
        if ((rc = tune_opt_size(cmd, c == 1 ? "--min-bytes" : "--max-bytes", optarg,
                                c == 1 ? &o.min_bytes : &o.max_bytes)) != 0)
          return rc;
        break;
      case 3:
        if (tune_parse_int(optarg, 1, 64, &v) != tune_ok)
          return tune_usage_error(cmd, "--steps: '%s' is not a number in 1..64", optarg);
        o.steps = (int)v;
        break;
      case 4:
        o.all_rows = 1;
        break;
      case 5: {
        char *end;
        errno = 0;
        require = strtod(optarg, &end);
        if (errno || end == optarg || (*end != '\0' && strcmp(end, "%") != 0) ||
            !(require >= 0 && require <= 100))
          return tune_usage_error(cmd, "--require: '%s' is not a percentage in 0..100", optarg);
        break;
      }
      case 'h':
        fputs(compare_headers_help, stdout);
        return 0;
      case ':':
        return tune_usage_error(cmd, "%s needs a value", argv[optind - 1]);
      default:
        return tune_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (argc - optind != 2) return tune_usage_error(cmd, "give two headers, A.h and B.h");
  if (o.min_bytes > o.max_bytes)
    return tune_usage_error(cmd, "--min-bytes is larger than --max-bytes");
  const char *pa = argv[optind], *pb = argv[optind + 1];
  dc_threshold_row *ra = NULL, *rb = NULL;
  size_t na = 0, nb = 0;
  tune_store *st = NULL;
  agree_db adb = {.tolerance = 1.0 + tol};
  tune_result r = tune_header_load(pa, &ra, &na);
  if (r == tune_ok) r = tune_header_load(pb, &rb, &nb);
  if (r == tune_ok && dbpath) r = open_db(cmd, "--db", dbpath, &st);
  if (r == tune_ok && st) {
    adb.db = tune_store_db(st);
    /* One median per size: the configs of every sweep run, averaged. */
    if (sqlite3_prepare_v2(
            adb.db,
            "SELECT c.bytes, avg(c.median_ns) FROM configs c JOIN runs r ON r.id = c.run_id"
            " WHERE r.kind = 'sweep' AND c.op = ?1 AND c.path = ?2 AND c.dtype = ?3"
            " AND c.world = ?4 AND c.align = ?5 AND c.mode = ?6 AND c.skew_ns = ?7"
            " AND c.wrong_elems = 0 GROUP BY c.bytes ORDER BY c.bytes",
            -1, &adb.q, NULL) != SQLITE_OK) {
      sql_fail(adb.db, "compare-headers: the database has no sweep configs table");
      r = tune_err_db;
    }
  }
  tune_agreement ag;
  if (r == tune_ok)
    r = tune_headers_agree(ra, na, rb, nb, &o, st ? agree_within : NULL, &adb, NULL, &ag);
  if (r == tune_ok && adb.failed) r = tune_err_db;
  if (r == tune_ok) {
    char lo[32], hi[32];
    printf("compare-headers: %s vs %s\n", pa, pb);
    printf("rows compared: %ld (only in A: %ld, only in B: %ld)%s\n", ag.rows, ag.only_a, ag.only_b,
           o.all_rows ? "" : "; sm 0 rows (the unmeasured default) left out");
    printf("points: %ld (%d per octave, %s..%s per row)\n", ag.points, o.steps,
           tune_format_size(o.min_bytes, lo, sizeof(lo)),
           tune_format_size(o.max_bytes, hi, sizeof(hi)));
    printf("agreement: %ld of %ld points choose the same path (%.2f%%)\n", ag.same, ag.points,
           ag.points ? 100.0 * (double)ag.same / (double)ag.points : 100.0);
    if (st)
      printf(
          "differing: %ld points; both paths within %.3f of each other in the measured data at "
          "%ld, "
          "not at %ld, no data at %ld\n",
          ag.points - ag.same, 1.0 + tol, ag.within, ag.apart, ag.unknown);
    else
      printf("differing: %ld points (give --db to judge them on the measured data)\n",
             ag.points - ag.same);
    r = tune_headers_agree(ra, na, rb, nb, &o, NULL, NULL, stdout, &ag);
  }
  rc = tune_exit_status(r);
  if (r == tune_ok && require >= 0 &&
      ((ag.points && 100.0 * (double)ag.same / (double)ag.points < require) || ag.apart > 0)) {
    fprintf(stderr, "tune compare-headers: below the required agreement of %g%%%s\n", require,
            ag.apart ? " or a differing point not within the tolerance" : "");
    rc = 1;
  }
  if (adb.q) sqlite3_finalize(adb.q);
  tune_store_close(st);
  free(ra);
  free(rb);
  return rc;
}

/* ---- compare ----------------------------------------------------------------- */

/* One configuration of one side: the pairing key and its samples' id. */
typedef struct {
  char key[256];
  char kind[16], impl[32], op[24], path[24], dtype[8], mode[8];
  int world, skew_rank;
  int64_t bytes, in_off, out_off, skew_ns, config_id;
} cmp_cell;

/* A paired cell's verdict. */
typedef struct {
  const cmp_cell *c;
  double base_ns, new_ns, diff, lo, hi;
  int verdict; /* 1 regression, -1 improvement, 0 neither */
} cmp_pair;

typedef struct {
  const char *path, *opt;
  tune_store *st;
  sqlite3 *db;
  int64_t run; /* 0: the newest run of each kind */
  cmp_cell *cells;
  size_t n;
  char backends[64], models[256], worlds[128], runs[256];
  sqlite3_stmt *samples;
} cmp_side;

static int cmp_key(const void *a, const void *b) {
  return strcmp(((const cmp_cell *)a)->key, ((const cmp_cell *)b)->key);
}

static void copy_col(sqlite3_stmt *q, int col, char *out, size_t len) {
  const unsigned char *t = sqlite3_column_text(q, col);
  snprintf(out, len, "%s", t ? (const char *)t : "");
}

/* The runs a side compares: its --run, else the newest run of each kind
 * that holds configurations. */
static const char *cmp_runs_sql =
    "SELECT r.id FROM runs r WHERE EXISTS (SELECT 1 FROM configs c WHERE c.run_id = r.id)"
    " AND ((?1 > 0 AND r.id = ?1) OR (?1 = 0 AND r.id = (SELECT max(r2.id) FROM runs r2"
    " WHERE r2.kind = r.kind AND EXISTS (SELECT 1 FROM configs c2 WHERE c2.run_id = r2.id))))";

/* One text line of the distinct values of expr over the side's runs. */
static tune_result cmp_distinct(cmp_side *s, const char *expr, char *out, size_t len) {
  char sql[1024];
  snprintf(sql, sizeof(sql),
           "SELECT group_concat(v, ',') FROM (SELECT DISTINCT %s AS v FROM runs r JOIN configs c"
           " ON c.run_id = r.id WHERE r.id IN (%s) ORDER BY 1)",
           expr, cmp_runs_sql);
  sqlite3_stmt *q;
  if (sqlite3_prepare_v2(s->db, sql, -1, &q, NULL) != SQLITE_OK)
    return sql_fail(s->db, s->path), tune_err_db;
  int rc = sqlite3_bind_int64(q, 1, s->run) == SQLITE_OK ? sqlite3_step(q) : SQLITE_ERROR;
  if (rc == SQLITE_ROW) copy_col(q, 0, out, len);
  sqlite3_finalize(q);
  if (rc != SQLITE_ROW) return sql_fail(s->db, s->path), tune_err_db;
  return tune_ok;
}

static tune_result cmp_load(cmp_side *s, int with_kind) {
  char sql[2048];
  snprintf(
      sql, sizeof(sql),
      "SELECT r.kind, c.impl, c.op, c.path, c.dtype, c.world, c.bytes, c.in_offset, c.out_offset,"
      " c.mode, c.skew_ns, c.skew_rank, c.id FROM configs c JOIN runs r ON r.id = c.run_id"
      " WHERE c.wrong_elems = 0 AND r.id IN (%s)",
      cmp_runs_sql);
  sqlite3_stmt *q;
  if (sqlite3_prepare_v2(s->db, sql, -1, &q, NULL) != SQLITE_OK)
    return sql_fail(s->db, s->path), tune_err_db;
  size_t cap = 0;
  int rc = sqlite3_bind_int64(q, 1, s->run);
  while (rc == SQLITE_OK || rc == SQLITE_ROW) {
    if ((rc = sqlite3_step(q)) != SQLITE_ROW) break;
    if (s->n == cap) {
      cap = cap ? 2 * cap : 1024;
      cmp_cell *grown = realloc(s->cells, cap * sizeof(*grown));
      if (grown == NULL) {
        sqlite3_finalize(q);
        return tune_err_system;
      }
      s->cells = grown;
    }
    cmp_cell *c = &s->cells[s->n++];
    copy_col(q, 0, c->kind, sizeof(c->kind));
    copy_col(q, 1, c->impl, sizeof(c->impl));
    copy_col(q, 2, c->op, sizeof(c->op));
    copy_col(q, 3, c->path, sizeof(c->path));
    copy_col(q, 4, c->dtype, sizeof(c->dtype));
    c->world = sqlite3_column_int(q, 5);
    c->bytes = sqlite3_column_int64(q, 6);
    c->in_off = sqlite3_column_int64(q, 7);
    c->out_off = sqlite3_column_int64(q, 8);
    copy_col(q, 9, c->mode, sizeof(c->mode));
    c->skew_ns = sqlite3_column_int64(q, 10);
    c->skew_rank = sqlite3_column_int(q, 11);
    c->config_id = sqlite3_column_int64(q, 12);
    snprintf(c->key, sizeof(c->key),
             "%s|%s|%s|%s|%s|%d|%020" PRId64 "|%" PRId64 "|%" PRId64 "|%s|%" PRId64 "|%d",
             with_kind ? c->kind : "", c->impl, c->op, c->path, c->dtype, c->world, c->bytes,
             c->in_off, c->out_off, c->mode, c->skew_ns, c->skew_rank);
  }
  sqlite3_finalize(q);
  if (rc != SQLITE_DONE) return sql_fail(s->db, s->path), tune_err_db;
  qsort(s->cells, s->n, sizeof(*s->cells), cmp_key);
  /* Two runs of one kind cannot both be the newest; a key twice is a run
   * chosen by --run that holds it twice, which the schema forbids. */
  for (size_t i = 1; i < s->n; i++)
    if (strcmp(s->cells[i - 1].key, s->cells[i].key) == 0) {
      tune_error("compare: %s holds configuration %s twice", s->path, s->cells[i].key);
      return tune_err_db;
    }
  TUNE_CHECK(cmp_distinct(s, "r.backend", s->backends, sizeof(s->backends)));
  TUNE_CHECK(cmp_distinct(s, "r.gpu_model", s->models, sizeof(s->models)));
  TUNE_CHECK(cmp_distinct(s, "c.world", s->worlds, sizeof(s->worlds)));
  TUNE_CHECK(cmp_distinct(s, "r.kind || ' ' || r.id", s->runs, sizeof(s->runs)));
  if (sqlite3_prepare_v2(
          s->db,
          "SELECT max(elapsed_ns) FROM samples WHERE config_id = ?1 GROUP BY trial ORDER BY trial",
          -1, &s->samples, NULL) != SQLITE_OK)
    return sql_fail(s->db, s->path), tune_err_db;
  return tune_ok;
}

/* The slowest rank of each trial of a config into *x (malloc'd), *n trials
 * (0: its samples were trimmed away, as in some databases kept in docs/). */
static tune_result cmp_slowest(cmp_side *s, int64_t config_id, double **x, size_t *n) {
  sqlite3_stmt *q = s->samples;
  size_t cap = 64;
  *n = 0;
  *x = malloc(cap * sizeof(**x));
  if (*x == NULL) return tune_err_system;
  sqlite3_reset(q);
  int rc = sqlite3_bind_int64(q, 1, config_id);
  while (rc == SQLITE_OK || rc == SQLITE_ROW) {
    if ((rc = sqlite3_step(q)) != SQLITE_ROW) break;
    if (*n == cap) {
      double *grown = realloc(*x, 2 * cap * sizeof(*grown));
      if (grown == NULL) return tune_err_system;
      *x = grown;
      cap *= 2;
    }
    (*x)[(*n)++] = sqlite3_column_double(q, 0);
  }
  if (rc != SQLITE_DONE) return sql_fail(s->db, s->path), tune_err_db;
  return tune_ok;
}

static uint64_t cmp_hash(const char *s, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20 || ch >= 0x7f)
      fprintf(f, "\\u%04x", ch < 0x20 ? ch : 0xfffd);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

static void print_pair(FILE *f, const cmp_pair *p) {
  const cmp_cell *c = p->c;
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
  char png[PATH_MAX], log[PATH_MAX];
  char name[128];
  snprintf(name, sizeof(name), "%s.png", base);
  TUNE_CHECK(join_path(png, sizeof(png), dir, name));
  TUNE_CHECK(join_path(log, sizeof(log), dir, "compare-gnuplot.log"));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0644);
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
    tune_error("compare: gnuplot failed drawing %s; its messages are in %s", base, log);
    return tune_err_system;
  }
  return tune_ok;
}

/* The ratio plots, one per op and world, into dir. */
static tune_result cmp_plots(const cmp_pair *p, size_t np, const char *dir, double tol,
                             const char *dbs[2]) {
  char gnuplot[PATH_MAX], path[PATH_MAX], tols[32];
  if (tune_report_find_gnuplot(gnuplot, sizeof(gnuplot)) != tune_ok) {
    TUNE_WARN(TUNE_REPORT, "gnuplot not found: no compare plots");
    fprintf(stderr, "tune compare: gnuplot not found; the ratio plots are left out\n");
    return tune_ok;
  }
  TUNE_CHECK(join_path(path, sizeof(path), dir, "compare.gp"));
  for (int i = 0; i < 2; i++) TUNE_CHECK(tune_check_output("--out", path, dbs[i]));
  tune_output o;
  TUNE_CHECK(tune_output_open(path, &o));
  TUNE_CHECK(tune_output_close(&o, fputs(tune_gp_compare, o.f) < 0 ? tune_err_system : tune_ok));
  snprintf(tols, sizeof(tols), "%.6g", tol);
  int done[DC_OP_COUNT][64] = {{0}};
  for (size_t i = 0; i < np; i++) {
    int op = dc_op_parse(p[i].c->op), w = p[i].c->world;
    if (op < 0 || w < 1 || w >= 64 || done[op][w]) continue;
    done[op][w] = 1;
    char base[96], title[160], series[1024] = "";
    snprintf(base, sizeof(base), "compare_%s_w%d", p[i].c->op, w);
    snprintf(title, sizeof(title), "%s, world %d: new / baseline median", p[i].c->op, w);
    char dat[128];
    snprintf(dat, sizeof(dat), "%s.dat", base);
    TUNE_CHECK(join_path(path, sizeof(path), dir, dat));
    for (int k = 0; k < 2; k++) TUNE_CHECK(tune_check_output("--out", path, dbs[k]));
    TUNE_CHECK(tune_output_open(path, &o));
    /* One block per impl:path, in the order first met (pairs are sorted by
     * key, so by impl and path). */
    char names[32][64];
    int nn = 0;
    for (size_t k = i; k < np; k++) {
      const cmp_cell *c = p[k].c;
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
        const cmp_cell *c = p[k].c;
        char nm[64];
        snprintf(nm, sizeof(nm), "%s:%s", c->impl, c->path);
        if (strcmp(c->op, p[i].c->op) == 0 && c->world == w && strcmp(nm, names[j]) == 0)
          fprintf(o.f, "%" PRId64 " %.6f\n", c->bytes, p[k].new_ns / p[k].base_ns);
      }
      fprintf(o.f, "\n\n");
      size_t len = strlen(series);
      snprintf(series + len, sizeof(series) - len, "%s%s", j ? " " : "", names[j]);
    }
    TUNE_CHECK(tune_output_close(&o, ferror(o.f) ? tune_err_system : tune_ok));
    TUNE_CHECK(cmp_gnuplot(gnuplot, dir, base, title, series, tols));
  }
  return tune_ok;
}

static const char *compare_help =
    "usage: tune compare --db NEW.db --baseline OLD.db [--tolerance 5%] [options]\n"
    "\n"
    "A regression gate: pair the configurations of two databases (impl, op, path,\n"
    "dtype, world, bytes, offsets, mode, skew; and the kind of run: before, sweep,\n"
    "after, ... -- the newest run of each kind on each side), take the bootstrap\n"
    "CI of the difference of the medians (slowest rank per trial) from the stored\n"
    "samples, and list the regressions and improvements: CI excluding zero and\n"
    "the median moved by more than the tolerance. Exits 1 on any regression.\n"
    "Draws new/baseline ratio per size, per op and world, into the output folder.\n"
    "Refuses sim against GPU, different GPU models or world sizes, unless --force.\n"
    "Both databases are only read.\n"
    "\n"
    "  --db FILE            the new database (required)\n"
    "  --baseline FILE      the baseline database (required)\n"
    "  --tolerance T        5%, 0.05 or 1.05 (default 5%)\n"
    "  --run N              compare only run N of the new database ...\n"
    "  --baseline-run M     ... against run M of the baseline (give both)\n"
    "  --confidence C       of the CI (default 0.95)\n"
    "  --seed N             of the bootstrap (default 1)\n"
    "  --json               the whole comparison as JSON on stdout instead of the table\n"
    "  --out DIR            folder of the plots (default: <new db folder>/report)\n"
    "  --no-plot            no plots\n"
    "  --force              compare sim with GPU, other GPU models or world sizes\n"
    "  -h, --help           this text\n";

int tune_cmd_compare(int argc, char **argv) {
  static const struct option opts[] = {{"db", required_argument, 0, 'd'},
                                       {"baseline", required_argument, 0, 'b'},
                                       {"tolerance", required_argument, 0, 't'},
                                       {"run", required_argument, 0, 1},
                                       {"baseline-run", required_argument, 0, 2},
                                       {"confidence", required_argument, 0, 3},
                                       {"seed", required_argument, 0, 4},
                                       {"json", no_argument, 0, 'j'},
                                       {"out", required_argument, 0, 'o'},
                                       {"no-plot", no_argument, 0, 'N'},
                                       {"force", no_argument, 0, 'f'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  const char *cmd = "compare", *out_dir = NULL;
  cmp_side side[2] = {{.opt = "--db"}, {.opt = "--baseline"}};
  double tol = 0.05, conf = 0.95;
  int64_t seed = 1;
  int json = 0, no_plot = 0, force = 0, c, rc;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'd':
        side[0].path = optarg;
        break;
      case 'b':
        side[1].path = optarg;
        break;
      case 't':
        if ((rc = tune_opt_tolerance(cmd, "--tolerance", optarg, &tol)) != 0) return rc;
        break;
      case 1:
      case 2:
        if (tune_parse_int(optarg, 1, INT64_MAX, &side[c - 1].run) != tune_ok)
          return tune_usage_error(cmd, "--%s: '%s' is not a run id",
                                  c == 1 ? "run" : "baseline-run", optarg);
        break;
      case 3:
        if ((rc = tune_opt_confidence(cmd, "--confidence", optarg, &conf)) != 0) return rc;
        break;
      case 4:
        if (tune_parse_int(optarg, 0, INT64_MAX, &seed) != tune_ok)
          return tune_usage_error(cmd, "--seed: '%s' is not a number", optarg);
        break;
      case 'j':
        json = 1;
        break;
      case 'o':
        out_dir = optarg;
        break;
      case 'N':
        no_plot = 1;
        break;
      case 'f':
        force = 1;
        break;
      case 'h':
        fputs(compare_help, stdout);
        return 0;
      case ':':
        return tune_usage_error(cmd, "%s needs a value", argv[optind - 1]);
      default:
        return tune_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) return tune_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
  if (side[0].path == NULL || side[1].path == NULL)
    return tune_usage_error(cmd, "--db NEW.db and --baseline OLD.db are required");
  if ((side[0].run == 0) != (side[1].run == 0))
    return tune_usage_error(cmd, "--run and --baseline-run go together");
  if (out_dir != NULL && *out_dir == '\0') return tune_usage_error(cmd, "--out: the path is empty");

  tune_result r = tune_ok;
  cmp_pair *pairs = NULL;
  size_t np = 0, only_new = 0, only_base = 0, no_samples = 0;
  long nreg = 0, nimp = 0;
  char dir[PATH_MAX];
  for (int i = 0; i < 2 && r == tune_ok; i++) {
    r = open_db(cmd, side[i].opt, side[i].path, &side[i].st);
    if (r == tune_ok) side[i].db = tune_store_db(side[i].st);
    if (r == tune_ok) r = cmp_load(&side[i], side[i].run == 0);
    if (r == tune_ok && side[i].n == 0) {
      tune_error("compare: %s %s holds no configurations%s", side[i].opt, side[i].path,
                 side[i].run ? " in that run" : "");
      r = tune_err_arg;
    }
  }
  /* What makes two databases incomparable, said before anything is drawn. */
  static const struct {
    const char *what;
    size_t off;
  } must_match[] = {{"backend", offsetof(cmp_side, backends)},
                    {"GPU model", offsetof(cmp_side, models)},
                    {"world sizes", offsetof(cmp_side, worlds)}};
  for (size_t k = 0; r == tune_ok && k < sizeof(must_match) / sizeof(must_match[0]); k++) {
    const char *a = (const char *)&side[0] + must_match[k].off,
               *b = (const char *)&side[1] + must_match[k].off;
    if (strcmp(a, b) == 0) continue;
    if (force) {
      fprintf(stderr, "tune compare: %s differ (%s: %s, %s: %s); compared anyway (--force)\n",
              must_match[k].what, side[0].path, a, side[1].path, b);
      continue;
    }
    tune_error(
        "compare: %s differ: %s has %s, %s has %s; %s (give --force to compare anyway)",
        must_match[k].what, side[0].path, a, side[1].path, b,
        k == 0 ? "a sim model says nothing about a GPU" : "the latencies are not comparable");
    r = tune_err_arg;
  }
  if (r == tune_ok && !no_plot) {
    if (out_dir == NULL) {
      char tmp[PATH_MAX];
      snprintf(tmp, sizeof(tmp), "%s", side[0].path);
      char *slash = strrchr(tmp, '/');
      if (slash) *slash = '\0';
      r = join_path(dir, sizeof(dir), slash ? (tmp[0] ? tmp : "/") : ".", "report");
    } else
      snprintf(dir, sizeof(dir), "%s", out_dir);
    if (r == tune_ok) r = tune_check_writable("--out", dir, 1);
    for (int i = 0; i < 2 && r == tune_ok; i++) r = tune_check_output("--out", dir, side[i].path);
  }
  if (r == tune_ok) {
    pairs = malloc((side[0].n < side[1].n ? side[0].n : side[1].n) * sizeof(*pairs) + 1);
    if (pairs == NULL) r = tune_err_system;
  }
  for (size_t i = 0, j = 0; r == tune_ok && (i < side[0].n || j < side[1].n);) {
    int k = i == side[0].n   ? 1
            : j == side[1].n ? -1
                             : strcmp(side[0].cells[i].key, side[1].cells[j].key);
    if (k < 0) {
      only_new++, i++;
      continue;
    }
    if (k > 0) {
      only_base++, j++;
      continue;
    }
    double *xn = NULL, *xb = NULL;
    size_t nn = 0, nb = 0;
    cmp_pair *p = &pairs[np];
    r = cmp_slowest(&side[0], side[0].cells[i].config_id, &xn, &nn);
    if (r == tune_ok) r = cmp_slowest(&side[1], side[1].cells[j].config_id, &xb, &nb);
    if (r == tune_ok && nn > 0 && nb > 0) {
      p->c = &side[0].cells[i];
      p->new_ns = tune_median(xn, nn);
      p->base_ns = tune_median(xb, nb);
      r = tune_ci_median_diff(xb, nb, xn, nn, conf, cmp_hash(p->c->key, (uint64_t)seed), &p->diff,
                              &p->lo, &p->hi);
    }
    free(xn);
    free(xb);
    if (r != tune_ok) break;
    if (nn == 0 || nb == 0) {
      no_samples++, i++, j++;
      continue;
    }
    p->verdict = p->lo > 0 && p->diff > tol * p->base_ns    ? 1
                 : p->hi < 0 && -p->diff > tol * p->base_ns ? -1
                                                            : 0;
    nreg += p->verdict > 0;
    nimp += p->verdict < 0;
    np++, i++, j++;
  }
  if (r == tune_ok && np == 0) {
    if (no_samples)
      tune_error(
          "compare: the %zu configurations %s and %s share have no samples stored in one or both",
          no_samples, side[0].path, side[1].path);
    else
      tune_error("compare: no configuration of %s is in %s (other sizes, ops or runs?)",
                 side[0].path, side[1].path);
    r = tune_err_arg;
  }
  if (r == tune_ok && json) {
    printf("{\"new\": ");
    json_str(stdout, side[0].path);
    printf(", \"baseline\": ");
    json_str(stdout, side[1].path);
    printf(
        ", \"tolerance\": %.6g, \"confidence\": %.6g, \"paired\": %zu, \"only_new\": %zu, "
        "\"only_baseline\": %zu,"
        " \"without_samples\": %zu, \"regressions\": %ld, \"improvements\": %ld, \"cells\": [",
        tol, conf, np, only_new, only_base, no_samples, nreg, nimp);
    for (size_t i = 0; i < np; i++) {
      const cmp_cell *c = pairs[i].c;
      printf("%s\n {\"kind\": ", i ? "," : "");
      json_str(stdout, c->kind);
      printf(", \"impl\": ");
      json_str(stdout, c->impl);
      printf(", \"op\": ");
      json_str(stdout, c->op);
      printf(", \"path\": ");
      json_str(stdout, c->path);
      printf(", \"dtype\": ");
      json_str(stdout, c->dtype);
      printf(", \"world\": %d, \"bytes\": %" PRId64 ", \"in_offset\": %" PRId64
             ", \"out_offset\": %" PRId64 ", \"mode\": ",
             c->world, c->bytes, c->in_off, c->out_off);
      json_str(stdout, c->mode);
      printf(", \"skew_ns\": %" PRId64
             ", \"skew_rank\": %d, \"baseline_ns\": %.1f, \"new_ns\": %.1f,"
             " \"diff_ns\": %.1f, \"ci_lo_ns\": %.1f, \"ci_hi_ns\": %.1f, \"verdict\": \"%s\"}",
             c->skew_ns, c->skew_rank, pairs[i].base_ns, pairs[i].new_ns, pairs[i].diff,
             pairs[i].lo, pairs[i].hi,
             pairs[i].verdict > 0   ? "regression"
             : pairs[i].verdict < 0 ? "improvement"
                                    : "same");
    }
    printf("\n]}\n");
  } else if (r == tune_ok) {
    printf("tune compare: %s (runs: %s) against baseline %s (runs: %s)\n", side[0].path,
           side[0].runs, side[1].path, side[1].runs);
    printf(
        "paired configurations: %zu (only in new: %zu, only in baseline: %zu); tolerance %.3g%%, "
        "CI %.3g%%\n",
        np, only_new, only_base, 100 * tol, 100 * conf);
    if (no_samples) printf("left out: %zu configurations without stored samples\n", no_samples);
    printf("regressions: %ld, improvements: %ld\n", nreg, nimp);
    qsort(pairs, np, sizeof(*pairs), cmp_by_ratio_desc);
    for (int v = 1; v >= -1; v -= 2) {
      long count = v > 0 ? nreg : nimp;
      if (count == 0) continue;
      printf("\n%s (new %s by more than %.3g%%, CI of the difference excluding zero):\n",
             v > 0 ? "regressions" : "improvements", v > 0 ? "slower" : "faster", 100 * tol);
      printf("  %-6s %-11s %-14s %-12s %-4s %2s %6s %5s %-5s %6s %11s %11s %6s  %s\n", "run",
             "impl", "op", "path", "type", "w", "bytes", "offs", "mode", "skewus", "base us",
             "new us", "ratio", "CI of new-base (us)");
      for (size_t i = 0; i < np; i++)
        if (pairs[v > 0 ? i : np - 1 - i].verdict == v)
          print_pair(stdout, &pairs[v > 0 ? i : np - 1 - i]);
    }
  }
  if (r == tune_ok && !no_plot) {
    const char *dbs[2] = {side[0].path, side[1].path};
    qsort(pairs, np, sizeof(*pairs), cmp_key_pair);
    r = tune_make_dirs("--out", dir, dir);
    if (r == tune_ok) r = cmp_plots(pairs, np, dir, tol, dbs);
    if (r == tune_ok && !json) printf("\nplots: %s/compare_<op>_w<world>.png\n", dir);
  }
  for (int i = 0; i < 2; i++) {
    if (side[i].samples) sqlite3_finalize(side[i].samples);
    tune_store_close(side[i].st);
    free(side[i].cells);
  }
  free(pairs);
  if (r != tune_ok) return tune_exit_status(r);
  return nreg > 0 ? 1 : 0;
}
