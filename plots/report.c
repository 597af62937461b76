/* report.c: `tune report`. Reads runs, configs, crossovers, header rows,
 * regret and skew summaries and fits through db/'s typed readers
 * (report_read.h; read-only, so a report never races or migrates the
 * store), writes one gnuplot
 * data file per figure, has gnuplot draw it through the templates compiled
 * in from plots/ (style.gp, latency.gp, skew.gp, ...), and writes the
 * Markdown report that embeds the figures. */
#include "config.h"

#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crossover_gp.h"
#include "dc_table.h"
#include "latency_gp.h"
#include "query.h"
#include "regret_gp.h"
#include "report_read.h"
#include "skew_gp.h"
#include "stats.h"
#include "style_gp.h"

/* Written into the report directory: gnuplot runs there, and a reader can
 * redraw any figure from its .dat file with the same command. */
static const struct {
  const char *file;
  const char *text;
} templates[] = {
    {"style.gp", tune_gp_style},
    {"latency.gp", tune_gp_latency},
    {"crossover.gp", tune_gp_crossover},
    {"regret.gp", tune_gp_regret},
    {"skew.gp", tune_gp_skew},
};

#define SERIES_MAX 12

/* ---- runs ------------------------------------------------------------------ */

enum { SIDE_BEFORE, SIDE_AFTER, SIDE_SWEEP, SIDE_SKEW, SIDE_COUNT };
static const char *const side_kind[SIDE_COUNT] = {"before", "after", "sweep", "skew"};

/* The provenance table of the report: a run's text fields, then its
 * numbers, each with its row's label. */
typedef struct {
  const char *label;
  size_t off;
} run_label;
#define RUN_LABEL(f, label) \
  { label, offsetof(tune_rep_run, f) }
static const run_label run_text[] = {
    RUN_LABEL(gpu_model, "GPU"),
    RUN_LABEL(backend, "backend"),
    RUN_LABEL(topo, "topology"),
    RUN_LABEL(host, "host"),
    RUN_LABEL(started_at, "started"),
    RUN_LABEL(finished_at, "finished"),
    RUN_LABEL(driver, "driver"),
    RUN_LABEL(cuda, "CUDA"),
    RUN_LABEL(nccl, "NCCL"),
    RUN_LABEL(mpi, "MPI"),
    RUN_LABEL(launcher, "launcher"),
    RUN_LABEL(git_rev, "git revision"),
    RUN_LABEL(thresholds, "thresholds auto dispatch used"),
    RUN_LABEL(command_line, "command line"),
};
static const run_label run_int[] = {
    RUN_LABEL(gpu_count, "GPUs"),
    RUN_LABEL(sm, "SM"),
    RUN_LABEL(wrong_configs, "configs with wrong elements"),
};
#define RUN_FIELD(r, off, type) ((type *)((char *)(r) + (off)))

/* Run fields a before/after pair must share to be compared at all. */
static const struct {
  size_t off;
  const char *what;
} pair_fields[] = {
    {offsetof(tune_rep_run, gpu_model), "GPU model"},
    {offsetof(tune_rep_run, backend), "backend"},
};

/* Config dimensions a pair must share: same ops, dtypes, world sizes, modes,
 * alignment classes and size grid. */
static const struct {
  tune_rep_dim dim;
  const char *what;
} pair_dims[] = {
    {TUNE_REP_OP, "ops"},
    {TUNE_REP_DTYPE, "dtypes"},
    {TUNE_REP_WORLD, "world sizes"},
    {TUNE_REP_MODE, "modes"},
    {TUNE_REP_ALIGN, "alignment classes"},
    {TUNE_REP_BYTES, "size grids"},
};

/* ---- figures ---------------------------------------------------------------- */

/* One point of a figure: its group key (op, dtype, mode, align), panel
 * (world) and size, and a value per series (NAN: not measured); latency
 * figures also the after pass's paired after/before ratio with its CI
 * (pair: ratio, lo, hi; NAN: not paired) and whether both tables ran one
 * path there (measured once). */
typedef struct {
  char key[TUNE_REP_NKEY][TUNE_REP_KEY];
  int64_t world, bytes;
  double v[SERIES_MAX];
  double pair[3];
  int pair_shared;
} fig_row;

typedef struct {
  fig_row *row;
  size_t n, cap;
} fig_rows;

/* A kind of figure: its template (name.gp, also the file prefix), the
 * reader of its points and its series. */
typedef struct {
  const char *name;
  tune_rep_fig fig;
  int nseries;
  const char *(*series_name)(int i);
  double scale; /* stored value -> data file value */
} fig_kind;

/* Names are gnuplot words: no spaces. */
static const char *latency_series(int i) {
  static const char *const names[] = {"before", "after", "NCCL", "NCCL_symm", "before_paired"};
  return names[i];
}
static const char *path_series(int i) { return dc_path_name((dc_path)(i + 1)); }
static const char *op_series(int i) { return dc_op_name((dc_op)i); }

_Static_assert(DC_PATH_COUNT - 1 <= SERIES_MAX && DC_OP_COUNT <= SERIES_MAX,
               "a figure has more series than SERIES_MAX");

/* The latency series load_pairs fills: the previous table's auto dispatch
 * in the after pass's paired trials (the query yields the other four). */
#define LAT_PAIRED_BEFORE 4

static const fig_kind kind_latency = {"latency", TUNE_REP_LATENCY, 5, latency_series, 1e-3};
static const fig_kind kind_crossover = {"crossover", TUNE_REP_CROSSOVER, DC_PATH_COUNT - 1,
                                        path_series, 1e-3};
/* One regret figure: per op, the worst dtype, mode and alignment per size. */
static const fig_kind kind_regret = {"regret", TUNE_REP_REGRET, DC_OP_COUNT, op_series, 1.0};

typedef struct {
  const tune_report_opts *o;
  tune_store *st; /* opened read-only through the store, which vets the file */
  tune_rep_run run[SIDE_COUNT];
  int64_t nccl_run;    /* the run whose NCCL configs are the reference line */
  int64_t partial_run; /* the unfinished run of a before/after pair, or 0 */
  int64_t npairs;      /* pairings of the after run used (0: unpaired, for unpaired_why) */
  char unpaired_why[160];
  char gnuplot[PATH_MAX];
  int log_fd;
  FILE *md;
  fig_rows lat, xo_fig, regret;
  tune_rep_xo *xo, *marks; /* crossovers (report table), threshold marks (plots) */
  size_t nxo, nmarks;
  tune_rep_skew_pt *skew;
  size_t nskew;
  tune_rep_skew_fit *fits;
  size_t nfits;
  const char *md_path; /* report.md, named in its own summary */
} report_ctx;

/* ---- small helpers ------------------------------------------------------------ */

/* Append to a fixed buffer; tune_err_internal if it would not fit, since
 * every buffer is sized for a full sweep's worth of names. */
static tune_result str_append(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static tune_result str_append(char *buf, size_t len, const char *fmt, ...) {
  size_t used = strlen(buf);
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + used, len - used, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= len - used) {
    tune_error("report: internal buffer of %zu bytes too small", len);
    return tune_err_internal;
  }
  return tune_ok;
}

/* A file name part from database text: anything but [A-Za-z0-9_-] becomes '_'
 * so names are safe as paths and as gnuplot words. */
static void file_part(char *dst, size_t len, const char *src) {
  size_t i;
  for (i = 0; i + 1 < len && src[i]; i++) {
    char ch = src[i];
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             ch == '_' || ch == '-';
    dst[i] = ok ? ch : '_';
  }
  dst[i] = '\0';
}

/* Every report file's path is made here, so every file the report writes
 * (or has gnuplot write) is checked against the database. */
static tune_result out_path(const report_ctx *c, const char *name, char *buf, size_t len) {
  int n = snprintf(buf, len, "%s/%s", c->o->out_dir, name);
  if (n < 0 || (size_t)n >= len) {
    tune_error("report: path too long: %s/%s", c->o->out_dir, name);
    return tune_err_arg;
  }
  return tune_check_output("report file", buf, c->o->db_path);
}

/* 1 if two rows belong to the same figure (op, dtype, mode, align). */
static int same_key(const char (*a)[TUNE_REP_KEY], const char (*b)[TUNE_REP_KEY]) {
  for (int i = 0; i < 4; i++)
    if (strcmp(a[i], b[i]) != 0) return 0;
  return 1;
}

/* ---- database ------------------------------------------------------------------ */

/* The before run of the job of an after run whose parent is after_parent:
 * that run, or (a tune older than the pairs named the sweep) its parent; 0
 * if neither is one. */
static tune_result job_before_of(report_ctx *c, int64_t after_parent, int64_t *before) {
  char kind[16];
  int64_t up;
  *before = 0;
  if (after_parent <= 0) return tune_ok;
  TUNE_CHECK(tune_query_run_kind(c->st, after_parent, kind, sizeof(kind), &up));
  *before = strcmp(kind, "before") == 0 ? after_parent : strcmp(kind, "sweep") == 0 ? up : 0;
  return tune_ok;
}

/* Fill side from an asked id (must exist and be of the side's kind) or, with
 * asked 0, the latest run of that kind (none: the side stays empty). */
static tune_result resolve_run(report_ctx *c, int side, int64_t asked) {
  tune_rep_run *r = &c->run[side];
  int64_t id = asked;
  if (asked < 0) {
    tune_error("report: run id %lld is not valid", (long long)asked);
    return tune_err_arg;
  }
  if (asked == 0) {
    TUNE_CHECK(tune_rep_latest_run(c->st, side_kind[side], NULL, &id));
    if (id == 0) return tune_ok;
  }
  TUNE_CHECK(tune_rep_run_read(c->st, id, r));
  if (r->id == 0) {
    tune_error("report: run %lld does not exist in %s", (long long)id, c->o->db_path);
    return tune_err_arg;
  }
  if (strcmp(r->kind, side_kind[side]) != 0) {
    tune_error("report: run %lld is a '%s' run, not a '%s' run", (long long)id, r->kind,
               side_kind[side]);
    return tune_err_arg;
  }
  return tune_ok;
}

/* The sweep behind the crossover plots: the one the after run belongs to,
 * else the latest sweep on the same GPU model (none: no crossover plots). */
static tune_result resolve_sweep(report_ctx *c, const tune_rep_run *ref) {
  tune_rep_run *s = &c->run[SIDE_SWEEP];
  int64_t id = 0;
  if (c->run[SIDE_AFTER].parent_run > 0) {
    TUNE_CHECK(tune_rep_run_read(c->st, c->run[SIDE_AFTER].parent_run, s));
    if (s->id != 0 && strcmp(s->kind, "sweep") == 0 && strcmp(s->gpu_model, ref->gpu_model) == 0)
      return tune_ok;
  }
  /* The before run's own sweep. */
  if (c->run[SIDE_BEFORE].id > 0) {
    tune_chain ch;
    TUNE_CHECK(tune_query_chain(c->st, c->run[SIDE_BEFORE].id, &ch));
    if (ch.sweep > 0) {
      TUNE_CHECK(tune_rep_run_read(c->st, ch.sweep, s));
      if (s->id != 0 && strcmp(s->gpu_model, ref->gpu_model) == 0) return tune_ok;
    }
  }
  memset(s, 0, sizeof(*s));
  TUNE_CHECK(tune_rep_latest_run(c->st, "sweep", ref->gpu_model, &id));
  return id ? tune_rep_run_read(c->st, id, s) : tune_ok;
}

/* The distinct values of one dimension of a run's auto configs, as
 * "{a,b,c}". */
static tune_result dim_set(report_ctx *c, tune_rep_dim dim, int64_t run, char *buf, size_t len) {
  tune_rep_value *v;
  size_t n;
  TUNE_CHECK(tune_rep_dim_values(c->st, run, dim, &v, &n));
  snprintf(buf, len, "{");
  for (size_t i = 0; i < n; i++) {
    char item[64];
    if (dim == TUNE_REP_BYTES)
      tune_format_size((uint64_t)v[i].i, item, sizeof(item));
    else
      snprintf(item, sizeof(item), "%s", v[i].text);
    /* A long grid is cut short: the message only has to show where they part. */
    if (strlen(buf) + strlen(item) + 8 > len) {
      snprintf(buf + strlen(buf), len - strlen(buf), ",...");
      break;
    }
    snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? "," : "", item);
  }
  snprintf(buf + strlen(buf), len - strlen(buf), "}");
  free(v);
  return tune_ok;
}

/* The first config (op dtype world bytes align mode) run a measured and run
 * b did not, into buf ("" if none). */
static tune_result first_unpaired(report_ctx *c, int64_t a, int64_t b, char *buf, size_t len) {
  tune_rep_config x;
  int found;
  buf[0] = '\0';
  TUNE_CHECK(tune_rep_first_unpaired(c->st, a, b, &x, &found));
  if (found) {
    char size[32];
    tune_format_size((uint64_t)x.bytes, size, sizeof(size));
    snprintf(buf, len, "%s %s world %lld %s %s %s", x.op, x.dtype, (long long)x.world, size,
             x.align, x.mode);
  }
  return tune_ok;
}

/* Each side present must have auto-dispatch measurements; a before/after pair
 * must match in provenance and in every config dimension. A run that never
 * finished (its job killed) pairs with a finished one when every config it
 * measured is one the other measured too: the report then compares those
 * configs only (c->partial_run) and says what the unfinished run lacks. */
static tune_result check_pair(report_ctx *c) {
  const tune_rep_run *b = &c->run[SIDE_BEFORE], *a = &c->run[SIDE_AFTER];
  char sb[512], sa[512];
  for (int side = SIDE_BEFORE; side <= SIDE_AFTER; side++) {
    int64_t n = 0;
    if (c->run[side].id == 0) continue;
    TUNE_CHECK(tune_rep_auto_count(c->st, c->run[side].id, &n));
    if (n == 0) {
      tune_error(
          "report: %s run %lld has no detcoll auto-dispatch measurements%s", side_kind[side],
          (long long)c->run[side].id,
          c->run[side].unfinished ? " (it is unfinished: continue its job with --resume)" : "");
      return tune_err_arg;
    }
  }
  if (b->id == 0 || a->id == 0) return tune_ok;
  if (b->unfinished && a->unfinished) {
    tune_error(
        "report: runs %lld and %lld are both unfinished; name a finished run with --before "
        "or --after, or continue the job with --resume",
        (long long)b->id, (long long)a->id);
    return tune_err_arg;
  }
  for (size_t i = 0; i < sizeof(pair_fields) / sizeof(pair_fields[0]); i++) {
    const char *vb = RUN_FIELD(b, pair_fields[i].off, const char);
    const char *va = RUN_FIELD(a, pair_fields[i].off, const char);
    if (strcmp(vb, va) != 0) {
      tune_error("report: runs %lld and %lld differ: %s '%s' vs '%s'", (long long)b->id,
                 (long long)a->id, pair_fields[i].what, vb, va);
      return tune_err_arg;
    }
  }
  c->partial_run = b->unfinished ? b->id : a->unfinished ? a->id : 0;
  for (size_t i = 0; i < sizeof(pair_dims) / sizeof(pair_dims[0]) && !c->partial_run; i++) {
    TUNE_CHECK(dim_set(c, pair_dims[i].dim, b->id, sb, sizeof(sb)));
    TUNE_CHECK(dim_set(c, pair_dims[i].dim, a->id, sa, sizeof(sa)));
    if (strcmp(sb, sa) != 0) {
      tune_error("report: runs %lld and %lld differ: %s %s vs %s", (long long)b->id,
                 (long long)a->id, pair_dims[i].what, sb, sa);
      return tune_err_arg;
    }
  }
  /* Same values per dimension can still combine differently (a size only
   * measured at one world size): compare the configs themselves. */
  for (int dir = 0; dir < 2; dir++) {
    const tune_rep_run *x = dir ? a : b, *y = dir ? b : a;
    if (y->unfinished) continue; /* what it has not reached yet is no difference */
    TUNE_CHECK(first_unpaired(c, x->id, y->id, sb, sizeof(sb)));
    if (sb[0]) {
      tune_error("report: runs %lld and %lld differ: run %lld measured %s, run %lld did not",
                 (long long)b->id, (long long)a->id, (long long)x->id, sb, (long long)y->id);
      return tune_err_arg;
    }
  }
  return tune_ok;
}

/* Point p onto out, one fig_row per (key, world, bytes). */
static tune_result fig_add(fig_rows *out, const fig_kind *k, const tune_rep_point *p) {
  int s;
  for (s = 0; s < k->nseries; s++)
    if (strcmp(p->series, k->series_name(s)) == 0) break;
  if (s == k->nseries) {
    TUNE_WARN(TUNE_REPORT, "%s plot: skipping unknown series '%s'", k->name, p->series);
    return tune_ok;
  }
  fig_row *last = out->n ? &out->row[out->n - 1] : NULL;
  if (!last || last->world != p->world || last->bytes != p->bytes || !same_key(last->key, p->key)) {
    TUNE_CHECK(tune_grow((void **)&out->row, &out->cap, out->n, sizeof(*out->row), 256));
    last = &out->row[out->n++];
    memcpy(last->key, p->key, sizeof(last->key));
    last->world = p->world;
    last->bytes = p->bytes;
    for (int i = 0; i < SERIES_MAX; i++) last->v[i] = NAN;
    for (int i = 0; i < 3; i++) last->pair[i] = NAN;
    last->pair_shared = 0;
  }
  last->v[s] = p->value;
  return tune_ok;
}

/* Load a figure kind's points. */
static tune_result load_fig(report_ctx *c, const fig_kind *k, fig_rows *out) {
  const tune_rep_runs runs = {c->run[SIDE_BEFORE].id, c->run[SIDE_AFTER].id, c->run[SIDE_SWEEP].id,
                              c->nccl_run, c->partial_run};
  tune_rep_point *pts;
  size_t n;
  tune_result res = tune_ok;
  TUNE_CHECK(tune_rep_points(c->st, k->fig, &runs, &pts, &n));
  for (size_t i = 0; i < n && res == tune_ok; i++) res = fig_add(out, k, &pts[i]);
  free(pts);
  return res;
}

static int fig_cmp(const fig_row *a, const char (*key)[TUNE_REP_KEY], int64_t world,
                   int64_t bytes) {
  for (int i = 0; i < 4; i++) {
    int k = strcmp(a->key[i], key[i]);
    if (k) return k;
  }
  if (a->world != world) return a->world < world ? -1 : 1;
  return (a->bytes > bytes) - (a->bytes < bytes);
}

/* The after run's pairings onto the latency rows (both in key, world,
 * bytes order): per point the largest ratio over its offsets, as the
 * figures show the worst offset, with the previous table's latency there
 * (series before_paired). A database from before the pairs table,
 * or an after run without pairings, leaves the figures unpaired. */
static tune_result load_pairs(report_ctx *c) {
  const tune_rep_run *after = &c->run[SIDE_AFTER];
  tune_rep_pair *rows;
  size_t n, j = 0;
  int64_t npairs, job_before = 0;
  snprintf(c->unpaired_why, sizeof(c->unpaired_why),
           "it holds none: its job was begun by a tune from before the pairings");
  if (after->id == 0) return tune_ok;
  TUNE_CHECK(tune_rep_pairs(c->st, after->id, &npairs, &rows, &n));
  if (npairs < 0) return tune_ok;
  /* Its pairings are with its own job's previous table, the one its job's
   * before run (its parent, or its parent sweep's) measured: beside another
   * before run they say nothing. */
  tune_result res = job_before_of(c, after->parent_run, &job_before);
  if (res != tune_ok) goto exit;
  if (c->run[SIDE_BEFORE].id && job_before != c->run[SIDE_BEFORE].id) {
    snprintf(c->unpaired_why, sizeof(c->unpaired_why),
             "its pairings are with the table of its own job's before run %lld, not of run %lld",
             (long long)job_before, (long long)c->run[SIDE_BEFORE].id);
    goto exit;
  }
  c->npairs = npairs;
  for (size_t i = 0; i < n; i++) {
    const tune_rep_pair *p = &rows[i];
    while (j < c->lat.n && fig_cmp(&c->lat.row[j], p->key, p->world, p->bytes) < 0) j++;
    if (j == c->lat.n || fig_cmp(&c->lat.row[j], p->key, p->world, p->bytes) != 0) continue;
    fig_row *r = &c->lat.row[j];
    r->pair[0] = p->ratio;
    r->pair[1] = p->ci_lo;
    r->pair[2] = p->ci_hi;
    r->pair_shared = p->shared;
    r->v[LAT_PAIRED_BEFORE] = p->prev_ns;
  }
exit:
  free(rows);
  return res;
}

/* ---- gnuplot ---------------------------------------------------------------------- */

static int is_executable(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* buf made absolute: gnuplot is started from inside the output folder, where
 * a name relative to here ("bin/gnuplot", or an empty PATH entry's
 * "./gnuplot") names nothing. */
static tune_result absolute_program(char *buf, size_t len) {
  if (buf[0] == '/') return tune_ok;
  char *abs = realpath(buf, NULL);
  int fits = abs && snprintf(buf, len, "%s", abs) < (int)len;
  free(abs);
  return fits ? tune_ok : tune_err_system;
}

tune_result tune_report_find_gnuplot(char *buf, size_t len) {
  const char *name = getenv("GNUPLOT");
  if (name == NULL || name[0] == '\0') name = TUNE_GNUPLOT;
  if (strchr(name, '/')) {
    if (!is_executable(name) || snprintf(buf, len, "%s", name) >= (int)len) return tune_err_system;
    return absolute_program(buf, len);
  }
  const char *path = getenv("PATH");
  if (path == NULL) path = "/usr/local/bin:/usr/bin:/bin";
  for (const char *p = path;; p++) {
    const char *end = strchr(p, ':');
    size_t dlen = end ? (size_t)(end - p) : strlen(p);
    /* An empty PATH entry is the current directory. */
    int n = snprintf(buf, len, "%.*s/%s", (int)(dlen ? dlen : 1), dlen ? p : ".", name);
    if (n > 0 && (size_t)n < len && is_executable(buf)) return absolute_program(buf, len);
    if (!end) break;
    p = end;
  }
  return tune_err_system;
}

/* Run path with argv, standard input /dev/null, output and errors to out_fd
 * (-1: /dev/null), in folder dir (NULL: here), and wait: 0 with its wait
 * status in *status, or -1 (errno) if it could not be started or waited
 * for. */
static int spawn_wait(const char *path, char *const argv[], int out_fd, const char *dir, int *status) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    /* Child: async-signal-safe calls only. */
    int null_fd = open("/dev/null", O_RDWR);
    int out = out_fd >= 0 ? out_fd : null_fd;
    if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0 ||
        (dir && chdir(dir) != 0))
      _exit(126);
    if (null_fd > 2) close(null_fd);
    execv(path, argv);
    _exit(127);
  }
  while (waitpid(pid, status, 0) < 0)
    if (errno != EINTR) return -1;
  return 0;
}

/* Run the gnuplot template for figure base in the report directory; it must
 * exit 0 and leave a non-empty base.png and base.svg. */
static tune_result run_gnuplot(report_ctx *c, const char *base, char *const argv[]) {
  static const char *const exts[] = {"png", "svg"};
  int status = 0;
  /* An older figure of this name goes first, so that it cannot pass for
   * one gnuplot failed to draw. */
  for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
    char name[256], path[PATH_MAX];
    snprintf(name, sizeof(name), "%s.%s", base, exts[i]);
    TUNE_CHECK(out_path(c, name, path, sizeof(path)));
    TUNE_CHECK(tune_remove_old("report", path));
  }
  if (spawn_wait(c->gnuplot, argv, c->log_fd, c->o->out_dir, &status) != 0) {
    tune_error("report: running gnuplot: %s", strerror(errno));
    return tune_err_system;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    tune_error("report: gnuplot (%s) failed drawing %s (%s %d); its messages are in %s/gnuplot.log",
               c->gnuplot, base, WIFEXITED(status) ? "exit status" : "signal",
               WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), c->o->out_dir);
    return tune_err_system;
  }
  for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
    char name[256], path[PATH_MAX];
    struct stat st;
    snprintf(name, sizeof(name), "%s.%s", base, exts[i]);
    TUNE_CHECK(out_path(c, name, path, sizeof(path)));
    if (stat(path, &st) != 0 || st.st_size == 0) {
      tune_error("report: gnuplot (%s) wrote no %s for plot %s; see %s/gnuplot.log", c->gnuplot,
                 name, base, c->o->out_dir);
      return tune_err_system;
    }
  }
  return tune_ok;
}

static tune_result write_file(const report_ctx *c, const char *name, const char *text) {
  char path[PATH_MAX];
  TUNE_CHECK(out_path(c, name, path, sizeof(path)));
  return tune_write_file(path, text, 0);
}

/* figures.gp, which style.gp loads: what every figure of this report shares
 * (tune_simulated: a run of the report used the sim backend, so every plot
 * is marked SIMULATED). */
static tune_result write_figures_gp(const report_ctx *c) {
  int sim = 0;
  char text[256];
  for (int s = 0; s < SIDE_COUNT; s++) sim |= c->run[s].id && strcmp(c->run[s].backend, "sim") == 0;
  snprintf(text, sizeof(text),
           "# figures.gp: written by tune report; style.gp loads it.\n"
           "# tune_simulated: 1 when the runs used the sim backend (no GPU).\n"
           "tune_simulated = %d\n",
           sim);
  return write_file(c, "figures.gp", text);
}

/* ---- figure emission ---------------------------------------------------------------- */

/* Database text as a gnuplot enhanced-text string (the terminals are
 * enhanced): a backslash, a double quote and the enhanced-text specials
 * ^ _ @ & ~ { } are backslash-escaped, so "one_shot" is not drawn with a
 * subscript; a control character becomes a space. With words set the text
 * is one word of a template's word list: a space or a single quote (which
 * would group words) becomes '_' (escaped, as every '_' is). Cut to fit len;
 * room for twice the text is always enough. Returns dst. */
static const char *gp_text(char *dst, size_t len, const char *src, int words) {
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)(src ? src : "-"); *p; p++) {
    char ch = *p < 0x20 || *p == 0x7f ? ' ' : (char)*p;
    if (words && (ch == ' ' || ch == '\'')) ch = '_';
    int esc = ch && strchr("\\\"^_@&~{}", ch) != NULL;
    if (n + (size_t)esc + 2 > len) break;
    if (esc) dst[n++] = '\\';
    dst[n++] = ch;
  }
  dst[n] = '\0';
  return dst;
}

/* A y range for values in [lo, hi], with a margin: on a log axis a factor,
 * on a linear one a share of the span; the ratio and regret ranges always
 * hold 1, their reference line. */
static void y_range(double lo, double hi, int log_axis, int with_one, double *out_lo,
                    double *out_hi) {
  if (with_one) {
    lo = fmin(lo, 1.0);
    hi = fmax(hi, 1.0);
  }
  if (log_axis) {
    *out_lo = lo / 1.3;
    *out_hi = hi * 1.3;
    return;
  }
  double pad = fmax(0.02, 0.08 * (hi - lo));
  *out_lo = lo - pad;
  *out_hi = hi + pad;
}

/* The pruned curves of a crossover figure into notes (crossover.gp's ARG8:
 * "world column bytes value ratio"): a path whose curve stops before its
 * panel's last size was pruned by the sweep (it was far behind the best);
 * the note gives how far behind it was at its last point. */
static tune_result pruned_notes(const fig_kind *k, const fig_row *rows, size_t n, char *buf,
                                size_t len) {
  buf[0] = '\0';
  for (size_t g = 0; g < n;) {
    size_t e = g;
    while (e < n && rows[e].world == rows[g].world) e++;
    for (int s = 0; s < k->nseries; s++) {
      size_t last = e;
      for (size_t i = g; i < e; i++)
        if (!isnan(rows[i].v[s])) last = i;
      if (last == e || last == e - 1) continue;
      double best = INFINITY;
      for (int o = 0; o < k->nseries; o++)
        if (o != s && !isnan(rows[last].v[o])) best = fmin(best, rows[last].v[o]);
      if (!isfinite(best) || best <= 0) continue;
      TUNE_CHECK(str_append(buf, len, "%s%lld %d %lld %.6g %.3g", buf[0] ? " " : "",
                            (long long)rows[g].world, s + 2, (long long)rows[last].bytes,
                            rows[last].v[s] * k->scale, rows[last].v[s] / best));
    }
    g = e;
  }
  return tune_ok;
}

/* The worst regret of the after run: regret.gp's point ("world bytes
 * regret") and the configuration in words. */
static tune_result regret_worst(report_ctx *c, char *point, size_t plen, char *text, size_t tlen) {
  tune_rep_regret w;
  int found;
  point[0] = text[0] = '\0';
  TUNE_CHECK(tune_rep_worst_regret(c->st, c->run[SIDE_AFTER].id, &w, &found));
  if (found) {
    char words[256], size[32], cause[128];
    tune_format_size((uint64_t)w.bytes, size, sizeof(size));
    snprintf(point, plen, "%lld %lld %.6g", (long long)w.world, (long long)w.bytes, w.regret);
    snprintf(words, sizeof(words), "worst: %s %s %s %s, world %lld, %s", w.key[0], w.key[1],
             w.key[2], w.key[3], (long long)w.world, size);
    snprintf(cause, sizeof(cause), "%.2fx (auto %s, best %s)", w.regret, w.auto_path, w.best_path);
    /* Two lines: one panel is too narrow for both. */
    gp_text(text, tlen / 2, words, 0);
    size_t used = strlen(text);
    snprintf(text + used, tlen - used, "\n");
    gp_text(text + used + 1, tlen - used - 1, cause, 0);
  }
  return tune_ok;
}

/* Latency ratio columns, after the four series: after / before paired
 * (the after pass's same-trial ratio, with its CI in the last two columns,
 * drawn as error bars), after / before unpaired (the two passes' medians),
 * and after / the better of NCCL and NCCL symm (below 1: the after run is
 * faster). The first LAT_NLINES are drawn as lines. */
#define LAT_NRATIO 5
#define LAT_NLINES 3
static const char *const lat_ratio_names[LAT_NRATIO] = {"after/before_paired",
                                                        "after/before_unpaired", "after/best_NCCL",
                                                        "paired_CI_lo", "paired_CI_hi"};
static double lat_ratio(const fig_row *r, int i) {
  if (i == 0) return r->pair[0];
  if (i == 1) return r->v[1] / r->v[0];
  if (i >= LAT_NLINES) return r->pair[i - LAT_NLINES + 1];
  double nccl = isnan(r->v[2]) ? r->v[3] : isnan(r->v[3]) ? r->v[2] : fmin(r->v[2], r->v[3]);
  return r->v[1] / nccl;
}

/* <base>.dat in the report folder, its path in path; *f NULL (errno set)
 * when it cannot be created. */
static tune_result dat_open(report_ctx *c, const char *base, char *path, size_t len, FILE **f) {
  char name[256];
  snprintf(name, sizeof(name), "%s.dat", base);
  TUNE_CHECK(out_path(c, name, path, len));
  *f = fopen(path, "w");
  return tune_ok;
}

/* A data file that could not be written (errno says why): the message,
 * and f (NULL: not open) closed. */
static tune_result dat_fail(FILE *f, const char *path) {
  tune_error("report: cannot write %s: %s", path, strerror(errno));
  if (f) fclose(f);
  return tune_err_system;
}

/* Close a data file written whole; a failed close is a failed write. */
static tune_result dat_close(FILE *f, const char *path) {
  return fclose(f) == 0 ? tune_ok : dat_fail(NULL, path);
}

/* A figure's data file, <base>.dat: a comment header (title, y ranges,
 * what arg7/arg8 carry) and one block per world size; the world sizes go
 * into worlds for gnuplot. */
typedef struct {
  const char *gtitle, *rcols, *arg7, *arg8;
  double ylo, yhi, qlo, qhi;
} dat_head;

static tune_result write_dat(report_ctx *c, const fig_kind *k, const fig_row *rows, size_t n, const char *base,
                             const dat_head *h, char *worlds, size_t wlen) {
  char path[PATH_MAX];
  const int is_lat = k == &kind_latency;
  FILE *f = NULL;
  tune_result res = tune_ok;
  TUNE_CHECK(dat_open(c, base, path, sizeof(path), &f));
  if (!f) goto io_fail;
  if (fprintf(f, "# %s: %s\n# yrange %.6g %.6g", base, h->gtitle, h->ylo, h->yhi) < 0) goto io_fail;
  if (h->rcols[0] && fprintf(f, " ratio_yrange %.6g %.6g", h->qlo, h->qhi) < 0) goto io_fail;
  if (fputc('\n', f) == EOF) goto io_fail;
  if (k == &kind_crossover && h->arg7[0] &&
      fprintf(f, "# thresholds (world bytes bracket_lo bracket_hi label size bracket): %s\n",
              h->arg7) < 0)
    goto io_fail;
  if (k == &kind_crossover && h->arg8[0] &&
      fprintf(f, "# pruned (world column bytes us ratio_to_best): %s\n", h->arg8) < 0)
    goto io_fail;
  if (k == &kind_regret && h->arg7[0] &&
      fprintf(f, "# worst point (world bytes regret): %s\n", h->arg7) < 0)
    goto io_fail;
  if (fprintf(f, "# bytes") < 0) goto io_fail;
  for (int s = 0; s < k->nseries; s++)
    if (fprintf(f, " %s", k->series_name(s)) < 0) goto io_fail;
  for (int r = 0; r < LAT_NRATIO && is_lat; r++)
    if (fprintf(f, " %s", lat_ratio_names[r]) < 0) goto io_fail;
  if (fputc('\n', f) == EOF) goto io_fail;
  for (size_t i = 0; i < n; i++) {
    if (i == 0 || rows[i].world != rows[i - 1].world) {
      TUNE_CHECK_GOTO(
          str_append(worlds, wlen, "%s%lld", i ? " " : "", (long long)rows[i].world), res,
          exit);
      if (fprintf(f, "%s# world %lld\n", i ? "\n\n" : "", (long long)rows[i].world) < 0)
        goto io_fail;
    }
    if (fprintf(f, "%lld", (long long)rows[i].bytes) < 0) goto io_fail;
    for (int s = 0; s < k->nseries; s++) {
      int w = isnan(rows[i].v[s]) ? fprintf(f, " ?") : fprintf(f, " %.6g", rows[i].v[s] * k->scale);
      if (w < 0) goto io_fail;
    }
    for (int r = 0; r < LAT_NRATIO && is_lat; r++) {
      double q = lat_ratio(&rows[i], r);
      int w = isnan(q) ? fprintf(f, " ?") : fprintf(f, " %.6g", q);
      if (w < 0) goto io_fail;
    }
    if (fputc('\n', f) == EOF) goto io_fail;
  }
  return dat_close(f, path);
io_fail:
  return dat_fail(f, path);
exit:
  fclose(f);
  return res;
}

/* Write base.dat from rows[0..n) (one group: one block per world, sorted)
 * and draw it with template k; marks: the crossover template's thresholds.
 * Every panel of a figure shares one y range (written into the .dat too). */
static tune_result emit_figure(report_ctx *c, const fig_kind *k, const fig_row *rows, size_t n,
                               const char *base, const char *title, const char *marks) {
  char worlds[256] = "", cols[64] = "", rcols[32] = "", names[512] = "", tmpl[64], gtitle[512], ranges[128],
       arg7[4096] = "", arg8[512] = "";
  int present[SERIES_MAX] = {0}, rpresent[LAT_NRATIO] = {0};
  const int is_lat = k == &kind_latency;
  double lo = INFINITY, hi = -INFINITY, rlo = INFINITY, rhi = -INFINITY, ylo, yhi, qlo = 0.9,
         qhi = 1.1;
  for (size_t i = 0; i < n; i++) {
    for (int s = 0; s < k->nseries; s++) {
      double v = rows[i].v[s] * k->scale;
      if (isnan(v)) continue;
      present[s] = 1;
      lo = fmin(lo, v);
      hi = fmax(hi, v);
    }
    for (int r = 0; r < LAT_NRATIO && is_lat; r++) {
      double q = lat_ratio(&rows[i], r);
      if (isnan(q)) continue;
      rpresent[r] = 1;
      rlo = fmin(rlo, q);
      rhi = fmax(rhi, q);
    }
  }
  for (int s = 0; s < k->nseries; s++) {
    char w[2 * TUNE_REP_KEY];
    TUNE_CHECK(str_append(names, sizeof(names), "%s%s", s ? " " : "",
                          gp_text(w, sizeof(w), k->series_name(s), 1)));
    if (present[s]) TUNE_CHECK(str_append(cols, sizeof(cols), "%s%d", cols[0] ? " " : "", s + 2));
  }
  for (int r = 0; r < LAT_NRATIO && is_lat; r++) {
    char w[2 * TUNE_REP_KEY];
    TUNE_CHECK(
        str_append(names, sizeof(names), " %s", gp_text(w, sizeof(w), lat_ratio_names[r], 1)));
    if (rpresent[r] && r < LAT_NLINES)
      TUNE_CHECK(str_append(rcols, sizeof(rcols), "%s%d", rcols[0] ? " " : "", k->nseries + 2 + r));
  }
  if (!isfinite(lo)) lo = hi = 1;
  y_range(lo, hi, k != &kind_regret, k == &kind_regret, &ylo, &yhi);
  /* Headroom above the regret curves for their key. */
  if (k == &kind_regret) yhi += 0.25 * (yhi - ylo);
  if (isfinite(rlo)) y_range(rlo, rhi, 0, 1, &qlo, &qhi);
  /* Headroom above the ratio curves for their key. */
  qhi += 0.3 * (qhi - qlo);
  snprintf(ranges, sizeof(ranges), "%.6g %.6g %.6g %.6g", ylo, yhi, qlo, qhi);
  if (is_lat) snprintf(arg7, sizeof(arg7), "%s", rcols);
  /* The paired ratio's CI: "column lo_column hi_column". */
  if (is_lat && rpresent[0])
    snprintf(arg8, sizeof(arg8), "%d %d %d", k->nseries + 2, k->nseries + 2 + LAT_NLINES,
             k->nseries + 3 + LAT_NLINES);
  if (k == &kind_crossover) {
    snprintf(arg7, sizeof(arg7), "%s", marks ? marks : "");
    TUNE_CHECK(pruned_notes(k, rows, n, arg8, sizeof(arg8)));
  }
  if (k == &kind_regret) TUNE_CHECK(regret_worst(c, arg7, sizeof(arg7), arg8, sizeof(arg8)));
  gp_text(gtitle, sizeof(gtitle), title, 0);
  dat_head h = {gtitle, rcols, arg7, arg8, ylo, yhi, qlo, qhi};
  TUNE_CHECK(write_dat(c, k, rows, n, base, &h, worlds, sizeof(worlds)));
  snprintf(tmpl, sizeof(tmpl), "%s.gp", k->name);
  char *argv[] = {c->gnuplot, "-d",  "-c",   tmpl, (char *)base, gtitle, worlds,
                  cols,       names, ranges, arg7, arg8,         NULL};
  TUNE_TRACE(TUNE_REPORT, "gnuplot -c %s %s '%s' '%s' '%s' '%s' '%s' '%s' '%s'", tmpl, base, gtitle,
             worlds, cols, names, ranges, arg7, arg8);
  return run_gnuplot(c, base, argv);
}

/* ---- Markdown --------------------------------------------------------------------- */

static tune_result md_printf(report_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static tune_result md_printf(report_ctx *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vfprintf(c->md, fmt, ap);
  va_end(ap);
  if (n < 0) {
    tune_error("report: writing report.md: %s", strerror(errno));
    return tune_err_system;
  }
  return tune_ok;
}

const char *tune_md_text(char *dst, size_t len, const char *src) {
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)(src ? src : "-"); *p; p++) {
    int esc = *p == '|' || *p == '\\';
    if (n + (size_t)esc + 2 > len) break;
    if (esc) dst[n++] = '\\';
    dst[n++] = *p < 0x20 || *p == 0x7f ? ' ' : (char)*p;
  }
  dst[n] = '\0';
  return dst;
}
#define MD_TEXT_LEN(field) (2 * sizeof(field))
#define MD_TEXT(buf, src) tune_md_text(buf, sizeof(buf), (const char *)(src))

static void fmt_us(char *buf, size_t len, double ns) {
  if (isnan(ns))
    snprintf(buf, len, "-");
  else
    snprintf(buf, len, "%.2f", ns * 1e-3);
}

static void fmt_ratio(char *buf, size_t len, double num, double den) {
  if (isnan(num) || isnan(den) || den <= 0)
    snprintf(buf, len, "-");
  else
    snprintf(buf, len, "%.2fx", num / den);
}

/* Say which run is unfinished and, for a pair, which configs of the other
 * run it lacks (grouped by op, dtype, mode, alignment and world): the
 * figures and tables below leave those out. */
static tune_result md_unfinished(report_ctx *c) {
  const tune_rep_run *part = NULL, *full = NULL;
  tune_rep_lack *lack = NULL;
  int64_t n_part = 0, n_full = 0;
  size_t n = 0;
  tune_result res = tune_ok;
  for (int s = SIDE_BEFORE; s <= SIDE_AFTER; s++) {
    if (!c->run[s].id || !c->run[s].unfinished) continue;
    part = &c->run[s];
    if (c->run[SIDE_BEFORE + SIDE_AFTER - s].id) full = &c->run[SIDE_BEFORE + SIDE_AFTER - s];
  }
  if (part == NULL) return tune_ok;
  if (full == NULL)
    return md_printf(c,
                     "> **UNFINISHED RUN.** %s run %lld has not finished (its job was killed or "
                     "is still running); its figures show the configs it measured.\n\n",
                     part->kind, (long long)part->id);
  TUNE_CHECK(tune_rep_auto_count(c->st, part->id, &n_part));
  TUNE_CHECK(tune_rep_auto_count(c->st, full->id, &n_full));
  TUNE_CHECK(
      md_printf(c,
                "> **UNFINISHED RUN.** %s run %lld has not finished (its job was killed or is "
                "still running; the job's command with `--resume` continues it): it measured %lld "
                "of the %lld auto-dispatch configs of %s run %lld. Only the configs both runs "
                "measured are compared below; %s run %lld lacks these:\n\n"
                "| op | dtype | mode | align | world | sizes missing | from (bytes/rank) | to "
                "(bytes/rank) |\n"
                "| --- | --- | --- | --- | ---: | ---: | ---: | ---: |\n",
                part->kind, (long long)part->id, (long long)n_part, (long long)n_full, full->kind,
                (long long)full->id, part->kind, (long long)part->id));
  TUNE_CHECK(tune_rep_lacking(c->st, full->id, part->id, &lack, &n));
  for (size_t i = 0; i < n && res == tune_ok; i++) {
    const tune_rep_lack *l = &lack[i];
    char lo[32], hi[32], t[TUNE_REP_NKEY][2 * TUNE_REP_KEY];
    tune_format_size((uint64_t)l->min_bytes, lo, sizeof(lo));
    tune_format_size((uint64_t)l->max_bytes, hi, sizeof(hi));
    res = md_printf(c, "| %s | %s | %s | %s | %lld | %lld | %s | %s |\n", MD_TEXT(t[0], l->key[0]),
                    MD_TEXT(t[1], l->key[1]), MD_TEXT(t[2], l->key[2]), MD_TEXT(t[3], l->key[3]),
                    (long long)l->world, (long long)l->nsizes, lo, hi);
  }
  free(lack);
  TUNE_CHECK(res);
  return md_printf(c, "\n");
}

static tune_result write_summary(report_ctx *c, FILE *f, int md, const char *report);

static tune_result md_header(report_ctx *c) {
  char now[32], sims[64] = "";
  int nsides = 0;
  tune_utc_iso(now, sizeof(now));
  for (int s = 0; s < SIDE_COUNT; s++)
    if (c->run[s].id && strcmp(c->run[s].backend, "sim") == 0)
      TUNE_CHECK(
          str_append(sims, sizeof(sims), "%s%lld", sims[0] ? ", " : "", (long long)c->run[s].id));
  TUNE_CHECK(md_printf(c, "# detcoll tune report%s\n\n", sims[0] ? " -- SIMULATED" : ""));
  if (sims[0])
    TUNE_CHECK(
        md_printf(c,
                  "> **SIMULATED DATA.** Run(s) %s used the `sim` backend: every latency here "
                  "comes from a seeded model, not from a GPU. Do not read these figures as "
                  "measurements.\n\n",
                  sims));
  for (int s = 0; s < SIDE_COUNT; s++)
    if (s != SIDE_SWEEP && c->run[s].id && c->run[s].wrong_configs)
      TUNE_CHECK(
          md_printf(c, "> **WRONG RESULTS.** %s run %lld has %lld configs with wrong elements.\n\n",
                    side_kind[s], (long long)c->run[s].id, (long long)c->run[s].wrong_configs));
  if (c->run[SIDE_BEFORE].id || c->run[SIDE_AFTER].id)
    TUNE_CHECK(write_summary(c, c->md, 1, c->md_path));
  TUNE_CHECK(md_printf(c, "Generated %s from `%s`.\n\n## Runs\n\n|  |", now, c->o->db_path));
  for (int s = 0; s < SIDE_COUNT; s++)
    if (c->run[s].id) {
      TUNE_CHECK(md_printf(c, " %s |", side_kind[s]));
      nsides++;
    }
  TUNE_CHECK(md_printf(c, "\n| --- |"));
  for (int s = 0; s < nsides; s++) TUNE_CHECK(md_printf(c, " --- |"));
  TUNE_CHECK(md_printf(c, "\n| run |"));
  for (int s = 0; s < SIDE_COUNT; s++)
    if (c->run[s].id) TUNE_CHECK(md_printf(c, " %lld |", (long long)c->run[s].id));
  for (size_t i = 0; i < sizeof(run_text) / sizeof(run_text[0]); i++) {
    if (!run_text[i].label) continue;
    TUNE_CHECK(md_printf(c, "\n| %s |", run_text[i].label));
    for (int s = 0; s < SIDE_COUNT; s++) {
      const char *v = RUN_FIELD(&c->run[s], run_text[i].off, const char);
      if (!c->run[s].id) continue;
      char cell[MD_TEXT_LEN(c->run[s].command_line)];
      TUNE_CHECK(md_printf(c, " %s |", MD_TEXT(cell, v)));
    }
  }
  for (size_t i = 0; i < sizeof(run_int) / sizeof(run_int[0]); i++) {
    if (!run_int[i].label) continue;
    TUNE_CHECK(md_printf(c, "\n| %s |", run_int[i].label));
    for (int s = 0; s < SIDE_COUNT; s++)
      if (c->run[s].id)
        TUNE_CHECK(
            md_printf(c, " %lld |", (long long)*RUN_FIELD(&c->run[s], run_int[i].off, int64_t)));
  }
  TUNE_CHECK(md_printf(c, "\n\n"));
  return md_unfinished(c);
}

/* base name and title of the figure of kind k for group row r. */
static void group_names(const char *kind, const fig_row *r, char *base, size_t blen, char *title,
                        size_t tlen) {
  char part[4][TUNE_REP_KEY];
  for (int i = 0; i < 4; i++) file_part(part[i], TUNE_REP_KEY, r->key[i]);
  snprintf(base, blen, "%s_%s_%s_%s_%s", kind, part[0], part[1], part[2], part[3]);
  snprintf(title, tlen, "%s %s %s %s", r->key[0], r->key[1], r->key[2], r->key[3]);
}

/* The paired speedup of r (before/after from the after pass's same trials,
 * >1: the new table is faster) and its CI, as table cells; "-" unpaired. */
static void fmt_paired(const fig_row *r, char *x, size_t xlen, char *ci, size_t cilen) {
  if (isnan(r->pair[0]) || !(r->pair[0] > 0)) {
    snprintf(x, xlen, "-");
    snprintf(ci, cilen, "-");
  } else if (r->pair_shared) {
    snprintf(x, xlen, "1.00x (same path, measured once)");
    snprintf(ci, cilen, "-");
  } else {
    snprintf(x, xlen, "%.2fx", 1.0 / r->pair[0]);
    snprintf(ci, cilen, "[%.2f, %.2f]", 1.0 / r->pair[2], 1.0 / r->pair[1]);
  }
}

/* One figure's table: latency per side, the after run's (else the before
 * run's) and NCCL's bandwidth as nccl-tests defines them, and the ratios:
 * before/after paired (same trials) with its CI where the after pass
 * paired the tables, unpaired (two passes) beside it; the NCCL columns only
 * where NCCL was measured. */
static tune_result md_latency_table(report_ctx *c, const fig_row *rows, size_t n) {
  double log_ba = 0, log_na = 0, log_pa = 0;
  int n_ba = 0, n_na = 0, n_pa = 0;
  double log_sa = 0;
  int n_sa = 0;
  const int nccl = c->nccl_run != 0, mine = c->run[SIDE_AFTER].id ? 1 : 0, paired = c->npairs > 0;
  const char *side = mine ? "after" : "before";
  TUNE_CHECK(md_printf(
      c,
      "| world | bytes/rank | before (us) | after (us) |%s %s algbw (GB/s) | "
      "%s busbw (GB/s) |%s%s before/after%s (x) |%s\n"
      "| ---: | ---: | ---: | ---: |%s ---: | ---: | ---: |%s%s\n",
      nccl ? " NCCL (us) | NCCL symm (us) |" : "", side, side, nccl ? " NCCL busbw (GB/s) |" : "",
      paired ? " before/after paired (x) | paired CI (x) |" : "", paired ? " unpaired" : "",
      nccl ? " NCCL/after (x) | NCCL symm/after (x) |" : "", nccl ? " ---: | ---: | ---: |" : "",
      paired ? " ---: | ---: |" : "", nccl ? " ---: | ---: |" : ""));
  for (size_t i = 0; i < n; i++) {
    const double *v = rows[i].v;
    char size[32], us[4][32], ba[32], na[32], sa[32], bw[3][32],
        ncc[96] = "", nbw[48] = "", nr[96] = "", px[48], pci[48], pc[128] = "";
    int op = dc_op_parse(rows[i].key[0]);
    tune_bw b = tune_bandwidth((dc_op)op, (int)rows[i].world, (uint64_t)rows[i].bytes, v[mine]);
    tune_bw nb = tune_bandwidth((dc_op)op, (int)rows[i].world, (uint64_t)rows[i].bytes, v[2]);
    tune_format_size((uint64_t)rows[i].bytes, size, sizeof(size));
    for (int s = 0; s < 4; s++) fmt_us(us[s], sizeof(us[s]), v[s]);
    snprintf(bw[0], sizeof(bw[0]), isnan(b.algbw) ? "-" : "%.2f", b.algbw);
    snprintf(bw[1], sizeof(bw[1]), isnan(b.busbw) ? "-" : "%.2f", b.busbw);
    snprintf(bw[2], sizeof(bw[2]), isnan(nb.busbw) ? "-" : "%.2f", nb.busbw);
    fmt_ratio(ba, sizeof(ba), v[0], v[1]);
    fmt_ratio(na, sizeof(na), v[2], v[1]);
    fmt_ratio(sa, sizeof(sa), v[3], v[1]);
    fmt_paired(&rows[i], px, sizeof(px), pci, sizeof(pci));
    if (ba[0] != '-') log_ba += log(v[0] / v[1]), n_ba++;
    if (na[0] != '-') log_na += log(v[2] / v[1]), n_na++;
    if (sa[0] != '-') log_sa += log(v[3] / v[1]), n_sa++;
    if (px[0] != '-') log_pa -= log(rows[i].pair[0]), n_pa++;
    if (nccl) {
      snprintf(ncc, sizeof(ncc), " %s | %s |", us[2], us[3]);
      snprintf(nbw, sizeof(nbw), " %s |", bw[2]);
      snprintf(nr, sizeof(nr), " %s | %s |", na, sa);
    }
    if (paired) snprintf(pc, sizeof(pc), " %s | %s |", px, pci);
    TUNE_CHECK(md_printf(c, "| %lld | %s | %s | %s |%s %s | %s |%s%s %s |%s\n",
                         (long long)rows[i].world, size, us[0], us[1], ncc, bw[0], bw[1], nbw, pc,
                         ba, nr));
  }
  TUNE_CHECK(md_printf(c, "\n"));
  if (n_pa)
    TUNE_CHECK(md_printf(c,
                         "Geometric mean before/after paired (same trials): %.3fx over %d sizes. ",
                         exp(log_pa / n_pa), n_pa));
  if (n_ba)
    TUNE_CHECK(md_printf(c, "Geometric mean before/after%s: %.3fx over %d sizes. ",
                         paired ? " unpaired (two passes)" : "", exp(log_ba / n_ba), n_ba));
  if (n_na)
    TUNE_CHECK(
        md_printf(c, "Geometric mean NCCL/after: %.3fx over %d sizes.", exp(log_na / n_na), n_na));
  if (n_sa)
    TUNE_CHECK(md_printf(c, "%sGeometric mean NCCL symm/after: %.3fx over %d sizes.", n_na ? " " : "",
                         exp(log_sa / n_sa), n_sa));
  return md_printf(c, "%s", n_pa || n_ba || n_na || n_sa ? "\n\n" : "");
}

static tune_result md_latency(report_ctx *c) {
  const fig_rows *L = &c->lat;
  const tune_rep_run *r = c->run[SIDE_AFTER].id ? &c->run[SIDE_AFTER] : &c->run[SIDE_BEFORE];
  TUNE_CHECK(md_printf(
      c,
      "## Latency\n\nMedian over trials of the slowest rank, against bytes per "
      "rank; before and after are detcoll with auto dispatch (reg16: on "
      "buffers in registered windows). Where an alignment class holds several "
      "buffer offsets, the worst offset is shown. Speedups above 1 favour the "
      "after run. %s algbw and busbw are nccl-tests' (GB/s, 1e9 bytes/s): algbw = "
      "S / t with S the buffer for all_reduce, world x bytes/rank for "
      "all_gather, the whole input (bytes/rank) for reduce_scatter; busbw = "
      "algbw x 2(W-1)/W for all_reduce, x (W-1)/W for the others.\n\n",
      c->npairs ? "Paired figures come from the after pass alone: at every size auto dispatch "
                  "with the new table and with the previous one (the table the before pass "
                  "measured) ran in the same trials, in alternating order, so a drift of the "
                  "machine between the passes cancels; where both tables choose the same path "
                  "it ran once (ratio 1, \"same path\"). Their CI is a bootstrap of the ratio "
                  "over the trials, resampled in pairs; the ratio panels draw it as error bars. "
                  "Unpaired figures set the before pass beside the after pass; the summary "
                  "states the drift between them."
                : "Before/after figures are unpaired (the after run is not paired with this "
                  "before run's table: see the summary) and include any drift of the machine "
                  "between the passes."));
  if (c->nccl_run)
    TUNE_CHECK(md_printf(c,
                         "NCCL and NCCL with symmetric windows are the reference (run %lld; the "
                         "reg16 figures show NCCL on the align16 buffers, measured in the same "
                         "trials).\n\n",
                         (long long)c->nccl_run));
  else
    TUNE_CHECK(md_printf(c, "NCCL was not measured, so there are no NCCL columns: %s.\n\n",
                         strcmp(r->backend, "sim") == 0
                             ? "the sim backend models detcoll's paths only (NCCL needs GPUs)"
                             : "the runs hold no NCCL configs (this tune was built without "
                               "NCCL, or NCCL was not asked for)"));
  for (size_t g = 0; g < L->n;) {
    size_t e = g;
    char base[160], title[128], md[MD_TEXT_LEN(title)];
    while (e < L->n && same_key(L->row[g].key, L->row[e].key)) e++;
    group_names(kind_latency.name, &L->row[g], base, sizeof(base), title, sizeof(title));
    TUNE_CHECK(emit_figure(c, &kind_latency, &L->row[g], e - g, base, title, NULL));
    MD_TEXT(md, title);
    TUNE_CHECK(md_printf(c, "### %s\n\n![latency %s](%s.png)\n\n[SVG](%s.svg) | [data](%s.dat)\n\n",
                         md, md, base, base, base));
    TUNE_CHECK(md_latency_table(c, &L->row[g], e - g));
    g = e;
  }
  return tune_ok;
}

/* The crossover template's thresholds for group r: "world bytes lo hi label
 * size bracket" (bracket "lo..hi", or "-" where the sweep kept none). */
static tune_result group_marks(const report_ctx *c, const fig_row *r, char *buf, size_t len) {
  buf[0] = '\0';
  for (size_t i = 0; i < c->nmarks; i++) {
    const tune_rep_xo *m = &c->marks[i];
    char below[TUNE_REP_KEY], above[TUNE_REP_KEY], label[4 * TUNE_REP_KEY + 2],
        word[8 * TUNE_REP_KEY], size[32], lo[32], hi[32];
    if (!same_key(m->key, r->key)) continue;
    file_part(below, sizeof(below), m->below);
    file_part(above, sizeof(above), m->above);
    snprintf(label, sizeof(label), "%s/%s", below, above);
    tune_format_size((uint64_t)m->bytes, size, sizeof(size));
    tune_format_size((uint64_t)m->lo, lo, sizeof(lo));
    tune_format_size((uint64_t)m->hi, hi, sizeof(hi));
    TUNE_CHECK(str_append(buf, len, "%s%lld %lld %lld %lld %s %s %s%s%s", buf[0] ? " " : "",
                          (long long)m->world, (long long)m->bytes, (long long)m->lo,
                          (long long)m->hi, gp_text(word, sizeof(word), label, 1), size,
                          m->hi > m->lo ? lo : "-", m->hi > m->lo ? ".." : "",
                          m->hi > m->lo ? hi : ""));
  }
  return tune_ok;
}

static tune_result md_crossovers(report_ctx *c) {
  const fig_rows *X = &c->xo_fig;
  const tune_rep_run *s = &c->run[SIDE_SWEEP];
  char marks[4096];
  if (s->id == 0) return md_printf(c, "## Crossovers\n\nNo sweep run on this GPU model.\n\n");
  TUNE_CHECK(md_printf(c,
                       "## Crossovers (sweep run %lld)\n\nEach forced path's median latency "
                       "(align16 and reg16, no skew); dashed lines mark the thresholds chosen%s.\n\n",
                       (long long)s->id, c->nxo ? "" : " (from the emitted header)"));
  for (size_t g = 0; g < X->n;) {
    size_t e = g;
    char base[160], title[128], md[MD_TEXT_LEN(title)];
    while (e < X->n && same_key(X->row[g].key, X->row[e].key)) e++;
    group_names(kind_crossover.name, &X->row[g], base, sizeof(base), title, sizeof(title));
    TUNE_CHECK(group_marks(c, &X->row[g], marks, sizeof(marks)));
    TUNE_CHECK(emit_figure(c, &kind_crossover, &X->row[g], e - g, base, title, marks));
    MD_TEXT(md, title);
    TUNE_CHECK(md_printf(c,
                         "### %s\n\n![crossovers %s](%s.png)\n\n[SVG](%s.svg) | [data](%s.dat)\n\n",
                         md, md, base, base, base));
    g = e;
  }
  if (c->nxo == 0)
    return md_printf(c, "No crossovers recorded for run %lld.\n\n", (long long)s->id);
  TUNE_CHECK(
      md_printf(c,
                "### Crossover table\n\n`below -> above`: the path below runs for sizes up "
                "to the threshold. diff: median(above) - median(below) at the first size "
                "where the path above won, with its confidence interval.\n\n"
                "| op | dtype | mode | align | world | skew (ns) | below -> above | threshold "
                "(bytes/rank) | bracket (bytes/rank) | diff (us) | CI (us) | decided |\n"
                "| --- | --- | --- | --- | ---: | ---: | --- | ---: | --- | ---: | --- | --- |\n"));
  for (size_t i = 0; i < c->nxo; i++) {
    const tune_rep_xo *x = &c->xo[i];
    char size[32], lo[32], hi[32], t[6][MD_TEXT_LEN(x->below)];
    tune_format_size((uint64_t)x->bytes, size, sizeof(size));
    tune_format_size((uint64_t)x->lo, lo, sizeof(lo));
    tune_format_size((uint64_t)x->hi, hi, sizeof(hi));
    TUNE_CHECK(md_printf(c,
                         "| %s | %s | %s | %s | %lld | %lld | %s -> %s | %s | %s..%s | %.3f | "
                         "[%.3f, %.3f] at %g%% | %s |\n",
                         MD_TEXT(t[0], x->key[0]), MD_TEXT(t[1], x->key[1]),
                         MD_TEXT(t[2], x->key[2]), MD_TEXT(t[3], x->key[3]), (long long)x->world,
                         (long long)x->skew_ns, MD_TEXT(t[4], x->below), MD_TEXT(t[5], x->above),
                         size, lo, hi, x->diff * 1e-3, x->ci_lo * 1e-3, x->ci_hi * 1e-3,
                         x->confidence * 100, x->decided ? "yes" : "tie"));
  }
  return md_printf(c, "\n");
}

static tune_result md_regret(report_ctx *c) {
  tune_rep_regret *g;
  size_t n;
  tune_result res = tune_ok;
  if (c->regret.n == 0) return tune_ok;
  TUNE_CHECK(emit_figure(c, &kind_regret, c->regret.row, c->regret.n, "regret",
                         "auto dispatch regret (worst dtype, mode, alignment)", NULL));
  TUNE_CHECK(md_printf(
      c,
      "## Auto-dispatch regret (after run %lld)\n\n"
      "Latency of auto dispatch over the best forced path at each size; 1 is "
      "no regret.\n\n![regret](regret.png)\n\n[SVG](regret.svg) | "
      "[data](regret.dat)\n\n"
      "| op | dtype | mode | align | world | max regret (x) | at (bytes/rank) | auto path | best "
      "path |\n"
      "| --- | --- | --- | --- | ---: | ---: | ---: | --- | --- |\n",
      (long long)c->run[SIDE_AFTER].id));
  TUNE_CHECK(tune_rep_regret_groups(c->st, c->run[SIDE_AFTER].id, &g, &n));
  for (size_t i = 0; i < n && res == tune_ok; i++) {
    char size[32], t[6][2 * TUNE_REP_KEY];
    tune_format_size((uint64_t)g[i].bytes, size, sizeof(size));
    res =
        md_printf(c, "| %s | %s | %s | %s | %lld | %.3f | %s | %s | %s |\n",
                  MD_TEXT(t[0], g[i].key[0]), MD_TEXT(t[1], g[i].key[1]),
                  MD_TEXT(t[2], g[i].key[2]), MD_TEXT(t[3], g[i].key[3]), (long long)g[i].world,
                  g[i].regret, size, MD_TEXT(t[4], g[i].auto_path), MD_TEXT(t[5], g[i].best_path));
  }
  free(g);
  TUNE_CHECK(res);
  return md_printf(c, "\n");
}

/* ---- skew sensitivity ---------------------------------------------------------------- */

static int skew_same_fig(const tune_rep_skew_pt *a, const tune_rep_skew_pt *b) {
  return strcmp(a->op, b->op) == 0 && strcmp(a->dtype, b->dtype) == 0 && a->world == b->world &&
         a->bytes == b->bytes;
}

static int skew_same_panel(const tune_rep_skew_pt *a, const tune_rep_skew_pt *b) {
  return skew_same_fig(a, b) && strcmp(a->impl, b->impl) == 0 && strcmp(a->mode, b->mode) == 0;
}

/* The fit of role for panel p, or NULL. */
static const tune_rep_skew_fit *skew_find_fit(const report_ctx *c, const tune_rep_skew_pt *p,
                                              const char *role) {
  for (size_t i = 0; i < c->nfits; i++) {
    const tune_rep_skew_fit *f = &c->fits[i];
    if (strcmp(f->op, p->op) == 0 && strcmp(f->dtype, p->dtype) == 0 && f->world == p->world &&
        f->bytes == p->bytes && strcmp(f->impl, p->impl) == 0 && strcmp(f->mode, p->mode) == 0 &&
        strcmp(f->role, role) == 0)
      return f;
  }
  return NULL;
}

/* Write base.dat for the figure pts[0..n) (one block per panel: measured
 * delay, then median, p10, p90 of each role, in us) and draw it with
 * skew.gp; panel names and fitted lines go as arguments. */
static tune_result emit_skew_figure(report_ctx *c, const tune_rep_skew_pt *pts, size_t n,
                                    const char *base, const char *title) {
  char panels[1024] = "", coefs[2048] = "", path[PATH_MAX], gtitle[512];
  FILE *f = NULL;
  tune_result res = tune_ok;
  TUNE_CHECK(dat_open(c, base, path, sizeof(path), &f));
  if (!f) goto io_fail;
  if (fprintf(f, "# %s: %s\n# delay_us max p10 p90 injected p10 p90 last p10 p90\n", base, title) <
      0)
    goto io_fail;
  for (size_t i = 0; i < n; i++) {
    if (i == 0 || !skew_same_panel(&pts[i], &pts[i - 1])) {
      char impl[TUNE_REP_KEY], mode[TUNE_REP_KEY], panel[2 * TUNE_REP_KEY + 1],
          word[4 * TUNE_REP_KEY + 2];
      file_part(impl, sizeof(impl), pts[i].impl);
      file_part(mode, sizeof(mode), pts[i].mode);
      snprintf(panel, sizeof(panel), "%s/%s", impl, mode);
      TUNE_CHECK_GOTO(str_append(panels, sizeof(panels), "%s%s", panels[0] ? " " : "",
                                 gp_text(word, sizeof(word), panel, 1)),
                      res, exit);
      for (size_t r = 0; r < TUNE_REP_SKEW_NROLES; r++) {
        const tune_rep_skew_fit *ft = skew_find_fit(c, &pts[i], tune_rep_skew_roles[r]);
        if (ft)
          TUNE_CHECK_GOTO(str_append(coefs, sizeof(coefs), "%s%.9g %.9g", coefs[0] ? " " : "",
                                     ft->slope, ft->intercept * 1e-3),
                          res, exit);
        else
          TUNE_CHECK_GOTO(str_append(coefs, sizeof(coefs), "%s- -", coefs[0] ? " " : ""), res,
                          exit);
      }
      if (fprintf(f, "%s# %s %s\n", i ? "\n\n" : "", pts[i].impl, pts[i].mode) < 0) goto io_fail;
    }
    if (fprintf(f, "%.6g", pts[i].delay * 1e-3) < 0) goto io_fail;
    for (size_t r = 0; r < TUNE_REP_SKEW_NROLES; r++)
      for (int k = 0; k < 3; k++)
        if (fprintf(f, " %.6g", pts[i].role[r][k] * 1e-3) < 0) goto io_fail;
    if (fputc('\n', f) == EOF) goto io_fail;
  }
  TUNE_CHECK(dat_close(f, path));
  gp_text(gtitle, sizeof(gtitle), title, 0);
  char *argv[] = {c->gnuplot, "-d", "-c", "skew.gp", (char *)base, gtitle, panels, coefs, NULL};
  TUNE_TRACE(TUNE_REPORT, "gnuplot -c skew.gp %s '%s' '%s' '%s'", base, gtitle, panels, coefs);
  return run_gnuplot(c, base, argv);
io_fail:
  return dat_fail(f, path);
exit:
  fclose(f);
  return res;
}

static tune_result md_skew_tables(report_ctx *c, const tune_rep_skew_pt *pts, size_t n) {
  TUNE_CHECK(md_printf(c,
                       "| impl | mode | requested (us) | measured delay | max | injected | last "
                       "arriver | wait (max - last) |\n"
                       "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n"));
  for (size_t i = 0; i < n; i++) {
    const tune_rep_skew_pt *p = &pts[i];
    char t[2][MD_TEXT_LEN(p->impl)];
    TUNE_CHECK(md_printf(c, "| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
                         MD_TEXT(t[0], p->impl), MD_TEXT(t[1], p->mode),
                         (double)p->requested_ns * 1e-3, p->delay * 1e-3, p->role[0][0] * 1e-3,
                         p->role[1][0] * 1e-3, p->role[2][0] * 1e-3, p->wait * 1e-3));
  }
  TUNE_CHECK(md_printf(c, "\n"));
  int any = 0;
  for (size_t i = 0; i < c->nfits; i++) {
    const tune_rep_skew_fit *f = &c->fits[i];
    char t[3][MD_TEXT_LEN(f->impl)];
    if (strcmp(f->op, pts[0].op) != 0 || strcmp(f->dtype, pts[0].dtype) != 0 ||
        f->world != pts[0].world || f->bytes != pts[0].bytes)
      continue;
    if (!any++)
      TUNE_CHECK(
          md_printf(c,
                    "| impl | mode | role | slope | slope CI | intercept (us) | intercept CI "
                    "(us) | r2 | trials |\n"
                    "| --- | --- | --- | ---: | --- | ---: | --- | ---: | ---: |\n"));
    TUNE_CHECK(md_printf(c,
                         "| %s | %s | %s | %.4f | [%.4f, %.4f] at %g%% | %.2f | [%.2f, %.2f] | "
                         "%.4f | %lld |\n",
                         MD_TEXT(t[0], f->impl), MD_TEXT(t[1], f->mode), MD_TEXT(t[2], f->role),
                         f->slope, f->slope_lo, f->slope_hi, f->confidence * 100,
                         f->intercept * 1e-3, f->icpt_lo * 1e-3, f->icpt_hi * 1e-3, f->r2,
                         (long long)f->n));
  }
  return md_printf(c, "%s", any ? "\n" : "No fits: the run measured a single delay.\n\n");
}

static tune_result md_skew(report_ctx *c) {
  if (c->run[SIDE_SKEW].id == 0) return tune_ok;
  TUNE_CHECK(md_printf(c,
                       "## Skew sensitivity (skew run %lld)\n\n"
                       "One rank is held back by a %%globaltimer spin before its collective. Per "
                       "trial: max is the slowest rank's residence, injected the delayed rank's, "
                       "last the smallest (the rank that waited least: the zero-wait cost), wait "
                       "= max - last. Points are medians over trials (bars: p10..p90) against the "
                       "median measured delay; lines are least-squares fits over every trial.\n\n",
                       (long long)c->run[SIDE_SKEW].id));
  if (c->run[SIDE_SKEW].unfinished)
    TUNE_CHECK(md_printf(c,
                         "> **UNFINISHED RUN.** skew run %lld has not finished (it was killed or is "
                         "still running; a skew run is not resumed: run tune skew again): its "
                         "figures show the configs it measured.\n\n",
                         (long long)c->run[SIDE_SKEW].id));
  if (c->nskew == 0) return md_printf(c, "The skew run holds no summaries.\n\n");
  for (size_t g = 0; g < c->nskew;) {
    size_t e = g;
    char base[192], title[160], op[TUNE_REP_KEY], dtype[TUNE_REP_KEY];
    const tune_rep_skew_pt *p = &c->skew[g];
    while (e < c->nskew && skew_same_fig(&c->skew[g], &c->skew[e])) e++;
    file_part(op, sizeof(op), p->op);
    file_part(dtype, sizeof(dtype), p->dtype);
    snprintf(base, sizeof(base), "skew_%s_%s_w%lld_%lldx%lld", op, dtype, (long long)p->world,
             (long long)p->rows, (long long)p->cols);
    snprintf(title, sizeof(title), "%s %s world %lld, %lldx%lld", p->op, p->dtype,
             (long long)p->world, (long long)p->rows, (long long)p->cols);
    TUNE_CHECK(emit_skew_figure(c, p, e - g, base, title));
    char md[MD_TEXT_LEN(title)];
    MD_TEXT(md, title);
    TUNE_CHECK(md_printf(c, "### %s\n\n![skew %s](%s.png)\n\n[SVG](%s.svg) | [data](%s.dat)\n\n",
                         md, md, base, base, base));
    TUNE_CHECK(md_skew_tables(c, p, e - g));
    g = e;
  }
  return tune_ok;
}

/* ---- summary ---------------------------------------------------------------------- */

/* The summary goes to the end of the job (text) and to the top of
 * report.md (Markdown) from the same code, so both say the same things:
 * each item is one line, a bullet in report.md. */
typedef struct {
  FILE *f;
  int md;
} sum_out;

static void sum_item(const sum_out *o, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void sum_item(const sum_out *o, int level, const char *fmt, ...) {
  char line[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  /* Database text must not end the item or start a heading. */
  for (char *p = line; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
  fprintf(o->f, "%*s%s%s\n", 2 * level + (o->md ? 0 : 2), "", o->md ? "- " : "", line);
}

/* One table row: a Markdown row, or columns of width w[] (negative: left
 * aligned) in text. rule: the Markdown separator row after the header. */
static void sum_row(const sum_out *o, const int *w, int n, const char *const *cell, int rule) {
  for (int i = 0; i < n; i++) {
    if (o->md)
      fprintf(o->f, "| %s ", cell[i]);
    else
      fprintf(o->f, "%s%*s", i ? "  " : "    ", w[i], cell[i]);
  }
  fprintf(o->f, "%s\n", o->md ? "|" : "");
  if (rule && o->md) {
    for (int i = 0; i < n; i++) fprintf(o->f, "| %s ", w[i] < 0 ? "---" : "---:");
    fprintf(o->f, "|\n");
  }
}

/* One threshold that moved: op/dtype/align/mode/world, the paths either
 * side, the old size (0: the boundary is new) and the new one. */
typedef struct {
  dc_threshold_row row;
  dc_path below, above, old_below; /* old_below: of the old boundary */
  uint64_t old_bytes, new_bytes;
  double score; /* |log2(new / old)|; -1 for a new boundary */
} sum_move;

static int same_segments(const dc_threshold_row *a, const dc_threshold_row *b) {
  if (a->nseg != b->nseg) return 0;
  for (int i = 0; i < a->nseg; i++)
    if (a->seg[i].max_bytes != b->seg[i].max_bytes || a->seg[i].path != b->seg[i].path) return 0;
  return 1;
}

static int move_cmp(const void *a, const void *b) {
  double x = ((const sum_move *)a)->score, y = ((const sum_move *)b)->score;
  return (x < y) - (x > y);
}

/* Where the header went; how many measured rows differ from the table the
 * before run had compiled in (this tune's own table, or an earlier header
 * in the database with that provenance), and the largest moves. */
/* The threshold moves of the measured rows (this sweep's GPU and
 * topology) against the old table, into moves; counts the rows measured
 * and changed. Returns how many moves. */
static size_t sum_moves(const tune_rep_run *s, const dc_threshold_row *rows, size_t n,
                        const dc_threshold_row *old, size_t nold, sum_move *moves,
                        size_t *pnmeasured, size_t *pnchanged) {
  size_t nmeasured = 0, nchanged = 0, nmoves = 0;
  for (size_t i = 0; i < n; i++) {
    const dc_threshold_row *r = &rows[i];
    /* Rows of other GPUs and topologies were copied from the old table. */
    if (r->sm != (int)s->sm || strcmp(dc_topo_name(r->topo) ? dc_topo_name(r->topo) : "", s->topo))
      continue;
    nmeasured++;
    const dc_threshold_row *was = dc_table_find(old, nold, r->sm, r->world, r->topo, r->op,
                                                r->dtype, r->align, r->mode, r->skew_ns);
    if (was && same_segments(was, r)) continue;
    nchanged++;
    for (int k = 0; k + 1 < r->nseg; k++) {
      sum_move *m = &moves[nmoves++];
      m->row = *r;
      m->below = r->seg[k].path;
      m->above = r->seg[k + 1].path;
      m->new_bytes = r->seg[k].max_bytes;
      /* The same pair of paths, else where the path above took over. */
      for (int j = 0; was && j + 1 < was->nseg && !m->old_bytes; j++)
        if (was->seg[j].path == m->below && was->seg[j + 1].path == m->above)
          m->old_bytes = was->seg[j].max_bytes, m->old_below = m->below;
      for (int j = 0; was && j + 1 < was->nseg && !m->old_bytes; j++)
        if (was->seg[j + 1].path == m->above)
          m->old_bytes = was->seg[j].max_bytes, m->old_below = was->seg[j].path;
      /* Moves of a boundary the old table had first; new ones after. */
      m->score = m->old_bytes ? fabs(log2((double)m->new_bytes / (double)m->old_bytes)) : -1;
      if (m->score == 0) nmoves--;
    }
  }
  *pnmeasured = nmeasured;
  *pnchanged = nchanged;
  return nmoves;
}

/* The five largest moves, one line each. */
static void sum_print_moves(const sum_out *o, sum_move *moves, size_t nmoves) {
  qsort(moves, nmoves, sizeof(*moves), move_cmp);
  for (size_t i = 0; i < nmoves && i < 5; i++) {
    const sum_move *m = &moves[i];
    char was[64] = "none", now[32];
    if (m->old_bytes) tune_format_size(m->old_bytes, was, sizeof(was));
    if (m->old_bytes && m->old_below != m->below)
      snprintf(was + strlen(was), sizeof(was) - strlen(was), " (from %s)",
               dc_path_name(m->old_below));
    tune_format_size(m->new_bytes, now, sizeof(now));
    sum_item(o, 1, "%s world %d %s (%s %s%s): %s -> %s: %s -> %s", dc_op_name(m->row.op),
             m->row.world, dc_mode_name(m->row.mode), dc_dtype_name(m->row.dtype),
             dc_align_name(m->row.align), m->row.skew_ns ? ", skewed" : "", dc_path_name(m->below),
             dc_path_name(m->above), was, now);
  }
}

static tune_result sum_header(report_ctx *c, const sum_out *o) {
  const tune_rep_run *s = &c->run[SIDE_SWEEP], *b = &c->run[SIDE_BEFORE];
  dc_threshold_row *rows = NULL, *old_rows = NULL;
  const dc_threshold_row *old = NULL;
  size_t n = 0, nold = 0, nmeasured = 0, nchanged = 0, nmoves = 0;
  sum_move *moves = NULL;
  tune_rep_header h;
  int64_t old_id = 0;
  char topo[32];
  tune_result res = tune_ok;
  if (s->id == 0) {
    sum_item(o, 0, "thresholds header: none (no sweep run on this GPU model)");
    return tune_ok;
  }
  TUNE_CHECK(tune_rep_header_of(c->st, s->id, &h));
  if (h.id == 0) {
    sum_item(o, 0, "thresholds header: none written by sweep run %lld", (long long)s->id);
    return tune_ok;
  }
  sum_item(o, 0, "thresholds header: %s (%s, from sweep run %lld)", h.path,
           h.installed ? "installed as kernels/thresholds.h"
           : h.sim     ? "simulated, not installed"
                       : "not installed",
           (long long)s->id);
  TUNE_CHECK_GOTO(tune_store_get_header_rows(c->st, h.id, &rows, &n), res, exit);
  /* The job's previous table, stored with its before run (schema 5);
   * older jobs: this tune's compiled-in table or an earlier header with the
   * before run's provenance. */
  if (b->id) TUNE_CHECK_GOTO(tune_query_previous_table(c->st, b->id, &old_rows, &nold), res, exit);
  if (old_rows) {
    old = old_rows;
  } else if (b->id && strcmp(b->thresholds, dc_builtin_thresholds_provenance) == 0) {
    old = dc_builtin_thresholds;
    nold = dc_builtin_thresholds_count;
  } else if (b->id) {
    TUNE_CHECK_GOTO(tune_rep_header_with_provenance(c->st, h.id, b->thresholds, &old_id), res,
                    exit);
    if (old_id)
      TUNE_CHECK_GOTO(tune_store_get_header_rows(c->st, old_id, &old_rows, &nold), res, exit);
    old = old_rows;
  }
  if (old == NULL) {
    sum_item(o, 0,
             "rows changed: unknown: the before run's table (\"%s\") is neither this tune's "
             "compiled-in table nor a header in the database",
             b->id ? b->thresholds : "no before run");
    goto exit;
  }
  moves = calloc(n * DC_MAX_SEGMENTS + 1, sizeof(*moves));
  if (moves == NULL) {
    tune_error("report: out of memory");
    res = tune_err_system;
    goto exit;
  }
  nmoves = sum_moves(s, rows, n, old, nold, moves, &nmeasured, &nchanged);
  snprintf(topo, sizeof(topo), "%s", s->topo);
  sum_item(o, 0,
           "rows changed: %zu of the %zu rows measured (sm %lld, %s) differ from the table "
           "compiled in (\"%s\")%s",
           nchanged, nmeasured, (long long)s->sm, topo, b->thresholds,
           nmoves ? "; largest threshold moves (bytes per rank):" : "");
  sum_print_moves(o, moves, nmoves);
exit:
  free(rows);
  free(old_rows);
  free(moves);
  return res;
}

/* Per op and world, over every dtype, mode and alignment of the latency
 * rows: before/after speedups, the sizes where detcoll (after) or the
 * faster NCCL wins, and the figures at the largest size. */
typedef struct {
  char op[TUNE_REP_KEY];
  int64_t world;
  double *ratio; /* paired where the after run has pairings, else unpaired */
  size_t nratio;
  double *uratio; /* unpaired, beside paired ones */
  size_t nuratio;
  double worst;
  const fig_row *worst_at;
  int64_t top_bytes;
  double top_after, top_nccl;
} sum_group;

typedef struct {
  char op[TUNE_REP_KEY];
  int64_t world, bytes;
  int dwin, nwin;
} sum_win;

static int win_cmp(const void *a, const void *b) {
  const sum_win *x = a, *y = b;
  int k = strcmp(x->op, y->op);
  if (k) return k;
  if (x->world != y->world) return x->world < y->world ? -1 : 1;
  return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

static double nccl_best(const double *v) {
  if (isnan(v[2])) return v[3];
  if (isnan(v[3])) return v[2];
  return v[2] < v[3] ? v[2] : v[3];
}

/* The sizes of wins[0..n) (one op and world, sorted) where pick holds, as
 * ranges of consecutive sizes: "1K..64K, 1M". */
static void win_ranges(const sum_win *w, size_t n, int detcoll, char *buf, size_t len) {
  buf[0] = '\0';
  for (size_t i = 0; i < n;) {
    int mine = detcoll ? w[i].dwin > w[i].nwin : w[i].nwin > w[i].dwin;
    size_t e = i;
    if (!mine) {
      i++;
      continue;
    }
    while (e + 1 < n && (detcoll ? w[e + 1].dwin > w[e + 1].nwin : w[e + 1].nwin > w[e + 1].dwin))
      e++;
    char lo[32], hi[32];
    size_t used = strlen(buf);
    tune_format_size((uint64_t)w[i].bytes, lo, sizeof(lo));
    tune_format_size((uint64_t)w[e].bytes, hi, sizeof(hi));
    if (e == i)
      snprintf(buf + used, len - used, "%s%s", used ? ", " : "", lo);
    else
      snprintf(buf + used, len - used, "%s%s..%s", used ? ", " : "", lo, hi);
    i = e + 1;
  }
  if (!buf[0]) snprintf(buf, len, "no size");
}

/* The latency rows by (op, world), in that order: each group's after/before
 * ratios (contiguous in ratios), its worst one, its largest size with the
 * best after and NCCL latencies there; and per size whether detcoll or
 * NCCL wins more configs (w). */
static void sum_lat_gather(const report_ctx *c, sum_group *g, size_t *png, sum_win *w, size_t *pnw,
                           double *ratios, double *uratios) {
  const fig_rows *L = &c->lat;
  size_t ng = 0, nw = 0, nr = 0, nu = 0;
  const int has_after = c->run[SIDE_AFTER].id != 0;
  const int paired = c->npairs > 0;
  /* Groups in (op, world) order: ratios of a group are contiguous once the
   * rows are visited group by group. */
  for (size_t i = 0; i < L->n; i++) {
    const fig_row *r = &L->row[i];
    size_t k = 0;
    while (k < ng && !(strcmp(g[k].op, r->key[0]) == 0 && g[k].world == r->world)) k++;
    if (k == ng) {
      snprintf(g[ng].op, TUNE_REP_KEY, "%s", r->key[0]);
      g[ng].world = r->world;
      g[ng].worst = NAN;
      g[ng].top_after = g[ng].top_nccl = NAN;
      ng++;
    }
  }
  for (size_t k = 0; k < ng; k++) {
    g[k].ratio = ratios + nr;
    g[k].uratio = uratios + nu;
    for (size_t i = 0; i < L->n; i++) {
      const fig_row *r = &L->row[i];
      const double *v = r->v;
      double nc = nccl_best(v);
      if (strcmp(g[k].op, r->key[0]) != 0 || g[k].world != r->world) continue;
      double unpaired = !isnan(v[0]) && !isnan(v[1]) && v[1] > 0 ? v[0] / v[1] : NAN;
      double x = !paired ? unpaired : r->pair[0] > 0 ? 1.0 / r->pair[0] : NAN;
      if (!isnan(unpaired)) g[k].uratio[g[k].nuratio++] = unpaired, nu++;
      if (!isnan(x)) {
        g[k].ratio[g[k].nratio++] = x;
        nr++;
        if (isnan(g[k].worst) || x < g[k].worst) g[k].worst = x, g[k].worst_at = r;
      }
      double after = has_after ? v[1] : v[0];
      if (r->bytes > g[k].top_bytes) {
        g[k].top_bytes = r->bytes;
        g[k].top_after = g[k].top_nccl = NAN;
      }
      if (r->bytes == g[k].top_bytes) {
        if (!isnan(after) && !(after >= g[k].top_after)) g[k].top_after = after;
        if (!isnan(nc) && !(nc >= g[k].top_nccl)) g[k].top_nccl = nc;
      }
      if (isnan(after) || isnan(nc)) continue;
      size_t j = 0;
      while (j < nw &&
             !(strcmp(w[j].op, r->key[0]) == 0 && w[j].world == r->world && w[j].bytes == r->bytes))
        j++;
      if (j == nw) {
        snprintf(w[nw].op, TUNE_REP_KEY, "%s", r->key[0]);
        w[nw].world = r->world;
        w[nw++].bytes = r->bytes;
      }
      if (after < nc)
        w[j].dwin++;
      else if (nc < after)
        w[j].nwin++;
    }
  }
  *png = ng;
  *pnw = nw;
}

/* The table: per group the median and worst speedup (paired, with the
 * worst one's CI, and the unpaired median beside it where the after run has
 * pairings), and at the largest size the latency and bandwidths (and
 * NCCL's). Column 4, the unpaired median, only beside paired figures; the
 * NCCL columns only with NCCL. */
static void sum_lat_table(const report_ctx *c, const sum_out *o, const sum_group *g, size_t ng, const char *side) {
  static const int wd_all[] = {-14, 5, 12, 34, 12, 12, 14, 11, 11, 11, 11};
  const int paired = c->npairs > 0;
  char hdr_lat[32], hdr_alg[32], hdr_bus[32];
  snprintf(hdr_lat, sizeof(hdr_lat), "%s (us)", side);
  snprintf(hdr_alg, sizeof(hdr_alg), "algbw (GB/s)");
  snprintf(hdr_bus, sizeof(hdr_bus), "busbw (GB/s)");
  const char *head_all[] = {
      "op",
      "world",
      paired ? "paired median (x)" : "median (x)",
      paired ? "paired worst (x [CI], at bytes/rank)" : "worst (x, at bytes/rank)",
      "unpaired median (x)",
      "at (bytes/rank)",
      hdr_lat,
      hdr_alg,
      hdr_bus,
      "NCCL (us)",
      "NCCL busbw (GB/s)"};
  const int ncol_all = c->nccl_run ? 11 : 9;
  int wd[11], ncol = 0;
  const char *head[11];
  for (int i = 0; i < ncol_all; i++)
    if (i != 4 || paired) wd[ncol] = wd_all[i], head[ncol++] = head_all[i];
  sum_row(o, wd, ncol, head, 1);
  for (size_t k = 0; k < ng; k++) {
    char world[16], med[16], umed[16] = "-", worst[512] = "-", size[32], lat[32], alg[32], bus[32],
                             nl[32], nb[32];
    int op = dc_op_parse(g[k].op);
    tune_bw bw =
        tune_bandwidth((dc_op)op, (int)g[k].world, (uint64_t)g[k].top_bytes, g[k].top_after);
    tune_bw nbw =
        tune_bandwidth((dc_op)op, (int)g[k].world, (uint64_t)g[k].top_bytes, g[k].top_nccl);
    snprintf(world, sizeof(world), "%lld", (long long)g[k].world);
    if (g[k].nratio)
      snprintf(med, sizeof(med), "%.2f", tune_median(g[k].ratio, g[k].nratio));
    else
      snprintf(med, sizeof(med), "-");
    if (g[k].worst_at) {
      char at[32], ci[48] = "";
      const fig_row *r = g[k].worst_at;
      tune_format_size((uint64_t)r->bytes, at, sizeof(at));
      if (paired && !r->pair_shared)
        snprintf(ci, sizeof(ci), " [%.2f, %.2f]", 1.0 / r->pair[2], 1.0 / r->pair[1]);
      snprintf(worst, sizeof(worst), "%.2f%s (%s %s %s %s)", g[k].worst, ci, at, r->key[1],
               r->key[2], r->key[3]);
    }
    if (g[k].nuratio) snprintf(umed, sizeof(umed), "%.2f", tune_median(g[k].uratio, g[k].nuratio));
    tune_format_size((uint64_t)g[k].top_bytes, size, sizeof(size));
    fmt_us(lat, sizeof(lat), g[k].top_after);
    fmt_us(nl, sizeof(nl), g[k].top_nccl);
    snprintf(alg, sizeof(alg), isnan(bw.algbw) ? "-" : "%.1f", bw.algbw);
    snprintf(bus, sizeof(bus), isnan(bw.busbw) ? "-" : "%.1f", bw.busbw);
    snprintf(nb, sizeof(nb), isnan(nbw.busbw) ? "-" : "%.1f", nbw.busbw);
    const char *cell_all[] = {g[k].op, world, med, worst, umed, size, lat, alg, bus, nl, nb};
    const char *cell[11];
    for (int i = 0, n = 0; i < ncol_all; i++)
      if (i != 4 || paired) cell[n++] = cell_all[i];
    sum_row(o, wd, ncol, cell, 0);
  }
}

/* detcoll against the faster NCCL, per op and world: the sizes each wins. */
static void sum_lat_nccl(const report_ctx *c, const sum_out *o, sum_win *w, size_t nw, const char *side) {
  const int has_after = c->run[SIDE_AFTER].id != 0;
  if (c->nccl_run == 0) {
    const tune_rep_run *r = has_after ? &c->run[SIDE_AFTER] : &c->run[SIDE_BEFORE];
    sum_item(o, 0, "detcoll vs NCCL: NCCL was not measured: %s",
             strcmp(r->backend, "sim") == 0
                 ? "the sim backend models detcoll's paths only (NCCL needs GPUs)"
                 : "the runs hold no NCCL configs (this tune was built without NCCL, or NCCL "
                   "was not asked for)");
  } else {
    qsort(w, nw, sizeof(*w), win_cmp);
    sum_item(o, 0,
             "detcoll (%s) vs the faster of NCCL and NCCL symm (run %lld), per op and world: "
             "the sizes (bytes per rank) where each is faster in most configs:",
             side, (long long)c->nccl_run);
    for (size_t i = 0; i < nw;) {
      size_t e = i;
      char dwin[512], nwin[512];
      while (e < nw && strcmp(w[e].op, w[i].op) == 0 && w[e].world == w[i].world) e++;
      win_ranges(&w[i], e - i, 1, dwin, sizeof(dwin));
      win_ranges(&w[i], e - i, 0, nwin, sizeof(nwin));
      sum_item(o, 1, "%s world %lld: detcoll wins %s; NCCL wins %s", w[i].op, (long long)w[i].world,
               dwin, nwin);
      i = e;
    }
  }
}

static tune_result sum_latency(report_ctx *c, const sum_out *o) {
  const fig_rows *L = &c->lat;
  sum_group *g = calloc(L->n + 1, sizeof(*g));
  sum_win *w = calloc(L->n + 1, sizeof(*w));
  double *ratios = calloc(L->n + 1, sizeof(*ratios)), *uratios = calloc(L->n + 1, sizeof(*uratios));
  size_t ng = 0, nw = 0;
  const int has_before = c->run[SIDE_BEFORE].id != 0, has_after = c->run[SIDE_AFTER].id != 0;
  const int paired = c->npairs > 0;
  if (!g || !w || !ratios || !uratios) {
    free(g);
    free(w);
    free(ratios);
    free(uratios);
    tune_error("report: out of memory");
    return tune_err_system;
  }
  sum_lat_gather(c, g, &ng, w, &nw, ratios, uratios);
  const char *side = has_after ? "after" : "before";
  sum_item(
      o, 0,
      "%s: per op and world, over every dtype, mode and alignment (detcoll auto dispatch; "
      "bandwidths as nccl-tests defines them, at the largest size, best config):",
      !(has_before && has_after) ? "latency"
      : paired
          ? "speedup before -> after (before/after latency, >1: faster), paired: the new and the "
            "previous table's auto dispatch in the same trials of the after pass, the worst with "
            "its "
            "CI; unpaired: the before pass against the after pass, a drift between them included"
          : "speedup before -> after (before/after latency, >1: faster), unpaired: the before pass "
            "against the after pass");
  if (o->md) fprintf(o->f, "\n");
  sum_lat_table(c, o, g, ng, side);
  if (o->md) fprintf(o->f, "\n");
  sum_lat_nccl(c, o, w, nw, side);
  free(g);
  free(w);
  free(ratios);
  free(uratios);
  return tune_ok;
}

/* The run-to-run drift the job measured: the same (previous) table's auto
 * dispatch in two passes -- the before pass, and the after pass's paired
 * trials -- per op and mode: the median of after / before, the mean and
 * the largest distance from 1. What the unpaired figures include besides
 * the tables' difference. */
static tune_result sum_drift(report_ctx *c, const sum_out *o) {
  tune_rep_drift *pts = NULL;
  double *d = NULL;
  size_t n = 0;
  tune_result res = tune_ok;
  if (c->run[SIDE_BEFORE].id == 0 || c->run[SIDE_AFTER].id == 0) return tune_ok;
  if (c->npairs == 0) {
    sum_item(o, 0,
             "run-to-run drift: not measured: after run %lld is not paired with before run %lld's "
             "table (%s); "
             "the speedups above are unpaired",
             (long long)c->run[SIDE_AFTER].id, (long long)c->run[SIDE_BEFORE].id, c->unpaired_why);
    return tune_ok;
  }
  TUNE_CHECK(tune_rep_drifts(c->st, c->run[SIDE_BEFORE].id, c->run[SIDE_AFTER].id, &pts, &n));
  sum_item(o, 0,
           "run-to-run drift: the previous table's auto dispatch measured twice, by before run "
           "%lld and by the "
           "paired trials of after run %lld (after/before; 1.00 = none), per op and mode%s",
           (long long)c->run[SIDE_BEFORE].id, (long long)c->run[SIDE_AFTER].id,
           n ? ":" : ": no size of the after run matches one of the before run");
  d = malloc((n + 1) * sizeof(*d));
  if (d == NULL) {
    tune_error("report: out of memory");
    res = tune_err_system;
    goto exit;
  }
  for (size_t i = 0; i < n;) {
    size_t e = i, worst = i;
    double mean = 0;
    while (e < n && strcmp(pts[e].op, pts[i].op) == 0 && strcmp(pts[e].mode, pts[i].mode) == 0) {
      d[e - i] = pts[e].drift;
      mean += fabs(pts[e].drift - 1);
      if (fabs(pts[e].drift - 1) > fabs(pts[worst].drift - 1)) worst = e;
      e++;
    }
    char at[32];
    tune_format_size((uint64_t)pts[worst].bytes, at, sizeof(at));
    sum_item(o, 1,
             "%s %s: median %+.1f%%, mean |drift| %.1f%%, largest %+.1f%% (%s %s world %lld, %s); "
             "%zu sizes",
             pts[i].op, pts[i].mode, 100 * (tune_median(d, e - i) - 1),
             100 * mean / (double)(e - i), 100 * (pts[worst].drift - 1), pts[worst].dtype,
             pts[worst].align, (long long)pts[worst].world, at, e - i);
    i = e;
  }
exit:
  free(pts);
  free(d);
  return res;
}

static tune_result sum_regret(report_ctx *c, const sum_out *o) {
  tune_rep_regret w;
  int found;
  char size[32];
  if (c->run[SIDE_AFTER].id == 0) {
    sum_item(o, 0, "regret: none (no after run)");
    return tune_ok;
  }
  TUNE_CHECK(tune_rep_worst_regret(c->st, c->run[SIDE_AFTER].id, &w, &found));
  if (!found) {
    sum_item(o, 0, "regret: not recorded for after run %lld", (long long)c->run[SIDE_AFTER].id);
    return tune_ok;
  }
  tune_rep_regret_share *sh;
  size_t nsh;
  TUNE_CHECK(tune_rep_regret_shares(c->st, c->run[SIDE_AFTER].id, TUNE_REGRET_TARGET, &sh, &nsh));
  int64_t sizes = 0, within = 0, same = 0;
  char modes[128] = "", same_note[96] = "";
  for (size_t i = 0, used = 0; i < nsh; i++) {
    sizes += sh[i].sizes;
    within += sh[i].within;
    same += sh[i].same_path;
    if (used < sizeof(modes)) /* two modes take under 60 characters */
      used += (size_t)snprintf(modes + used, sizeof(modes) - used, "%s%s %lld of %lld", i ? ", " : "",
                               sh[i].mode, (long long)sh[i].within, (long long)sh[i].sizes);
  }
  free(sh);
  if (same > 0)
    snprintf(same_note, sizeof(same_note), "; auto ran the best path itself at %lld of the %lld sizes over %.2fx",
             (long long)same, (long long)(sizes - within), TUNE_REGRET_TARGET);
  tune_format_size((uint64_t)w.bytes, size, sizeof(size));
  sum_item(o, 0,
           "regret (auto dispatch over the best forced path, 1.00 = none): at most %.2fx at %lld of "
           "%lld sizes (%s); max %.2fx at %s %s %s %s world %lld, %s bytes/rank (auto %s, best %s)%s",
           TUNE_REGRET_TARGET, (long long)within, (long long)sizes, modes, w.regret, w.key[0],
           w.key[1], w.key[2], w.key[3], (long long)w.world, size, w.auto_path, w.best_path, same_note);
  return tune_ok;
}

/* The whole summary; report: report.md's path, NULL if none was written. */
static tune_result write_summary(report_ctx *c, FILE *f, int md, const char *report) {
  const sum_out o = {f, md};
  if (md) fprintf(f, "## Summary\n\n");
  TUNE_CHECK(sum_header(c, &o));
  TUNE_CHECK(sum_latency(c, &o));
  TUNE_CHECK(sum_drift(c, &o));
  TUNE_CHECK(sum_regret(c, &o));
  if (report)
    sum_item(&o, 0, "report: %s", report);
  else
    sum_item(&o, 0, "report: not written (--no-report)");
  if (md) fprintf(f, "\n");
  if (ferror(f)) {
    tune_error("report: writing the summary: %s", strerror(errno));
    return tune_err_system;
  }
  return tune_ok;
}

/* ---- the command ---------------------------------------------------------------------- */

/* The exit status of gnuplot at path choosing an SVG terminal (every
 * gnuplot has one) and leaving; -1 if it could not be started or died of
 * a signal. A program that is no working gnuplot (GNUPLOT=/bin/false) is
 * caught before the measurements rather than at the report. */
static int probe_gnuplot(const char *path) {
  char *const argv[] = {(char *)path, (char *)"-e", (char *)"set terminal svg; exit", NULL};
  int status = 0;
  if (spawn_wait(path, argv, -1, NULL, &status) != 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

tune_result tune_report_need_gnuplot(const char *who, const char *hint, char *buf, size_t len) {
  if (tune_report_find_gnuplot(buf, len) == tune_ok) {
    int rc = probe_gnuplot(buf);
    if (rc == 0) return tune_ok;
    /* Ctrl-C reached gnuplot too: not gnuplot's fault. */
    if (tune_interrupt_signal()) return tune_err_interrupted;
    tune_error(
        "%s%sgnuplot (%s) does not work: 'gnuplot -e \"set terminal svg; exit\"' %s%.0d; install "
        "it (apt-get install gnuplot-nox), point GNUPLOT at a working one%s",
        who ? who : "", who ? ": " : "", buf,
        rc < 0 ? "could not be started, or died of a signal" : "exit status ", rc < 0 ? 0 : rc, hint);
    return tune_err_system;
  }
  const char *env = getenv("GNUPLOT");
  const char *name = env && env[0] ? env : TUNE_GNUPLOT;
  tune_error("%s%sgnuplot not found for the report ('%s' is not an executable%s); install it "
             "(apt-get install gnuplot-nox), point GNUPLOT at it%s",
             who ? who : "", who ? ": " : "", name, strchr(name, '/') ? "" : " on PATH", hint);
  return tune_err_system;
}

/* The gnuplot program into c->gnuplot, or a message and tune_err_system. */
static tune_result find_gnuplot(report_ctx *c) {
  return tune_report_need_gnuplot("report", "", c->gnuplot, sizeof(c->gnuplot));
}

/* Everything read from the database, before anything is written. A
 * database with a skew run but no before/after run gives a skew-only report. */
static tune_result gather_data(report_ctx *c) {
  const tune_report_opts *o = c->o;
  const tune_rep_run *ref;
  /* The store opens the file (in place in a folder that cannot hold a
   * -shm) and checks that it is a tune database of a schema this tune
   * reads, once, for every command. */
  TUNE_CHECK(tune_store_open(o->db_path, 1, &c->st));
  /* The after run first: unasked, the before run is its job's, not the
   * newest (which may be an unfinished later job's). */
  TUNE_CHECK(resolve_run(c, SIDE_AFTER, o->after_run));
  int64_t before = o->before_run;
  if (before == 0 && c->run[SIDE_AFTER].id)
    TUNE_CHECK(job_before_of(c, c->run[SIDE_AFTER].parent_run, &before));
  TUNE_CHECK(resolve_run(c, SIDE_BEFORE, before));
  TUNE_CHECK(resolve_run(c, SIDE_SKEW, 0));
  if (c->run[SIDE_SKEW].id)
    TUNE_CHECK(
        tune_rep_skew(c->st, c->run[SIDE_SKEW].id, &c->skew, &c->nskew, &c->fits, &c->nfits));
  if (c->run[SIDE_BEFORE].id == 0 && c->run[SIDE_AFTER].id == 0) {
    if (c->run[SIDE_SKEW].id) return tune_ok;
    tune_error("report: %s has no before, after or skew run to report on", o->db_path);
    return tune_err_arg;
  }
  TUNE_CHECK(check_pair(c));
  ref = c->run[SIDE_AFTER].id ? &c->run[SIDE_AFTER] : &c->run[SIDE_BEFORE];
  TUNE_CHECK(resolve_sweep(c, ref));
  /* NCCL does not change with retuning: one run's curve is the reference,
   * the after run's when it has one. */
  for (int s = SIDE_AFTER; s >= SIDE_BEFORE && c->nccl_run == 0; s--) {
    int has = 0;
    if (!c->run[s].id) continue;
    TUNE_CHECK(tune_rep_has_nccl(c->st, c->run[s].id, &has));
    if (has) c->nccl_run = c->run[s].id;
  }
  TUNE_CHECK(load_fig(c, &kind_latency, &c->lat));
  TUNE_CHECK(load_pairs(c));
  if (c->run[SIDE_SWEEP].id) {
    TUNE_CHECK(load_fig(c, &kind_crossover, &c->xo_fig));
    TUNE_CHECK(tune_rep_crossovers(c->st, c->run[SIDE_SWEEP].id, TUNE_REP_XO_ALL, &c->xo, &c->nxo));
    TUNE_CHECK(tune_rep_crossovers(c->st, c->run[SIDE_SWEEP].id,
                                   c->nxo ? TUNE_REP_XO_MARKS : TUNE_REP_XO_HEADER_MARKS, &c->marks,
                                   &c->nmarks));
  }
  if (c->run[SIDE_AFTER].id) TUNE_CHECK(load_fig(c, &kind_regret, &c->regret));
  return tune_ok;
}

/* The data, then gnuplot: a report needs both. */
static tune_result gather(report_ctx *c) {
  TUNE_CHECK(gather_data(c));
  return find_gnuplot(c);
}

static void free_ctx(report_ctx *c) {
  tune_store_close(c->st);
  free(c->lat.row);
  free(c->xo_fig.row);
  free(c->regret.row);
  free(c->xo);
  free(c->marks);
  free(c->skew);
  free(c->fits);
}

/* The report folder: out_dir, else <db folder>/report, into buf. */
void tune_report_folder(const tune_report_opts *o, char *buf, size_t len) {
  char db[PATH_MAX];
  if (o->out_dir != NULL) {
    snprintf(buf, len, "%s", o->out_dir);
    return;
  }
  snprintf(db, sizeof(db), "%s", o->db_path);
  snprintf(buf, len, "%s/report", dirname(db));
}

/* Every name the report writes ends in one of these. */
static const char *const report_exts[] = {".gp", ".log", ".md", ".tmp", ".dat", ".png", ".svg"};

static int has_report_ext(const char *name) {
  size_t len = strlen(name);
  for (size_t k = 0; k < sizeof(report_exts) / sizeof(report_exts[0]); k++)
    if (len > strlen(report_exts[k]) && strcmp(name + len - strlen(report_exts[k]), report_exts[k]) == 0)
      return 1;
  return 0;
}

/* The entries already in the report folder dir that the report may write
 * (a name it uses ends in report_exts): none may be the database by another
 * name (a link, a hard link), or the report would stop there, its old
 * report.md gone and half its figures replaced; nor keep (NULL: none), a
 * file its command writes beside it, named what. A folder not there yet
 * holds none. */
static tune_result check_existing(const char *dir, const char *db_path, const char *keep, const char *what) {
  DIR *d = opendir(dir);
  tune_result r = tune_ok;
  char path[2 * PATH_MAX];
  if (d == NULL) return tune_ok;
  for (struct dirent *e; r == tune_ok && (e = readdir(d)) != NULL;) {
    if (!has_report_ext(e->d_name)) continue;
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    r = tune_check_output("report file", path, db_path);
    if (r == tune_ok && keep && tune_same_file(path, keep)) {
      tune_error("report file %s is %s %s; refusing to overwrite it", path, what, keep);
      r = tune_err_arg;
    }
  }
  closedir(d);
  return r;
}

/* 1 if name is a figure file of a report: a kind's name (latency_...,
 * crossover_..., regret, skew_...) with .dat, .png or .svg, in the folder
 * itself. */
static int is_figure_file(const char *name) {
  static const char *const kinds[] = {"latency_", "crossover_", "regret.", "skew_"};
  const char *dot = strrchr(name, '.');
  if (strchr(name, '/') != NULL || dot == NULL ||
      (strcmp(dot, ".dat") && strcmp(dot, ".png") && strcmp(dot, ".svg")))
    return 0;
  for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
    if (strncmp(name, kinds[k], strlen(kinds[k])) == 0) return 1;
  return 0;
}

/* The figure files the old report.md at md links (its "](NAME)" targets
 * that are figures) go before this report draws: report.md then lists
 * every figure of a report there. Files it does not name stay; so do
 * folders, and a link goes, not what it names. */
static tune_result remove_old_figures(const char *dir, const char *md) {
  char *text = NULL, path[2 * PATH_MAX], name[256];
  size_t len = 0;
  FILE *f = fopen(md, "r");
  if (f == NULL) return tune_ok; /* no old report */
  ssize_t got = getdelim(&text, &len, '\0', f);
  fclose(f);
  tune_result r = tune_ok;
  for (const char *p = got > 0 ? text : ""; r == tune_ok && (p = strstr(p, "](")) != NULL;) {
    p += 2;
    size_t n = strcspn(p, ")\n");
    if (p[n] != ')' || n >= sizeof(name)) continue;
    snprintf(name, sizeof(name), "%.*s", (int)n, p);
    struct stat st;
    if (!is_figure_file(name) ||
        snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
        lstat(path, &st) != 0 || S_ISDIR(st.st_mode))
      continue;
    r = tune_remove_old("report", path);
  }
  free(text);
  return r;
}

tune_result tune_report_check_outputs(const tune_report_opts *o) {
  /* The figures' names come from the data, so before the data exists the
   * test is: does a database file with such a name sit where the report
   * will write it, or is a file already there the database? */
  static const char *const fixed[] = {"gnuplot.log", "report.md", "report.md.tmp", "figures.gp"};
  char dir[PATH_MAX], real[PATH_MAX], path[2 * PATH_MAX];
  const char
      *names[2 + sizeof(fixed) / sizeof(fixed[0]) + sizeof(templates) / sizeof(templates[0])];
  size_t n = 0;
  if (o == NULL || o->db_path == NULL) return tune_ok;
  tune_report_folder(o, dir, sizeof(dir));
  TUNE_CHECK(tune_check_output("report folder", dir, o->db_path));
  for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) names[n++] = fixed[i];
  for (size_t i = 0; i < sizeof(templates) / sizeof(templates[0]); i++)
    names[n++] = templates[i].file;
  const char *given = strrchr(o->db_path, '/');
  names[n++] = given ? given + 1 : o->db_path;
  if (realpath(o->db_path, real) != NULL) names[n++] = strrchr(real, '/') + 1;
  for (size_t i = 0; i < n; i++) {
    if (!has_report_ext(names[i])) continue;
    snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
    TUNE_CHECK(tune_check_output("report file", path, o->db_path));
  }
  return check_existing(dir, o->db_path, NULL, NULL);
}

tune_result tune_report_check_keep(const tune_report_opts *o, const char *keep, const char *what) {
  char dir[PATH_MAX], kd[PATH_MAX];
  tune_report_folder(o, dir, sizeof(dir));
  /* Written first, it would stand where the report makes its folder. */
  if (tune_same_file(keep, dir)) {
    tune_error("%s %s is where the report folder goes too; give them different paths", what, keep);
    return tune_err_arg;
  }
  snprintf(kd, sizeof(kd), "%s", keep);
  const char *base = strrchr(keep, '/') ? strrchr(keep, '/') + 1 : keep;
  if (has_report_ext(base) && tune_same_file(dirname(kd), dir)) {
    tune_error("%s %s is in the report folder %s, whose files of that kind (%s) the report writes; give it"
               " another name or folder",
               what, keep, dir, strrchr(base, '.'));
    return tune_err_arg;
  }
  /* A link there to it, named like a report file, would be written through. */
  return check_existing(dir, NULL, keep, what);
}

tune_result tune_report_run(const tune_report_opts *opts) {
  report_ctx c;
  char md_path[PATH_MAX], log_path[PATH_MAX], dir[PATH_MAX], path[PATH_MAX];
  tune_output md = {0};
  tune_result res = tune_ok;
  int hold = -1;
  if (opts == NULL || opts->db_path == NULL) {
    tune_error("report: a database is required");
    return tune_err_arg;
  }
  TUNE_CHECK(tune_report_check_outputs(opts));
  tune_report_opts with_dir = *opts;
  const tune_report_opts *o = &with_dir;
  tune_report_folder(opts, dir, sizeof(dir));
  with_dir.out_dir = dir;
  memset(&c, 0, sizeof(c));
  c.o = o;
  c.log_fd = -1;
  /* A stale report.md.tmp, left by a report of an older tune killed while
   * writing, goes; report.md itself is written by tune_output_open. */
  TUNE_CHECK_GOTO(out_path(&c, "report.md.tmp", path, sizeof(path)), res, exit);
  unlink(path);
  TUNE_CHECK_GOTO(gather(&c), res, exit);

  TUNE_CHECK_GOTO(tune_make_dirs("report folder", o->out_dir, o->out_dir), res, exit);
  /* Another report into this folder finishes first: none mixes files. */
  TUNE_CHECK_GOTO(tune_hold_folder("report", o->out_dir, &hold), res, exit);
  /* The old report.md goes before the figures it names are replaced: a
   * report cut short (a failed plot, a kill) leaves none, rather than one
   * beside another job's figures. A link named report.md stays (it is
   * written through). */
  TUNE_CHECK_GOTO(out_path(&c, "report.md", md_path, sizeof(md_path)), res, exit);
  struct stat st;
  if (lstat(md_path, &st) == 0 && S_ISREG(st.st_mode)) {
    TUNE_CHECK_GOTO(remove_old_figures(o->out_dir, md_path), res, exit);
    TUNE_CHECK_GOTO(tune_remove_old("report", md_path), res, exit);
  }
  for (size_t i = 0; i < sizeof(templates) / sizeof(templates[0]); i++)
    TUNE_CHECK_GOTO(write_file(&c, templates[i].file, templates[i].text), res, exit);
  TUNE_CHECK_GOTO(write_figures_gp(&c), res, exit);
  TUNE_CHECK_GOTO(out_path(&c, "gnuplot.log", log_path, sizeof(log_path)), res, exit);
  c.log_fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (c.log_fd < 0) {
    tune_error("report: cannot create %s: %s", log_path, strerror(errno));
    res = tune_err_system;
    goto exit;
  }
  /* report.md appears whole or not at all: a failed plot leaves no report
   * that points at missing images. */
  c.md_path = md_path;
  TUNE_CHECK_GOTO(tune_output_open(md_path, &md), res, exit);
  c.md = md.f;
  TUNE_CHECK_GOTO(md_header(&c), res, exit);
  if (c.run[SIDE_BEFORE].id || c.run[SIDE_AFTER].id) {
    TUNE_CHECK_GOTO(md_latency(&c), res, exit);
    TUNE_CHECK_GOTO(md_crossovers(&c), res, exit);
  }
  TUNE_CHECK_GOTO(md_regret(&c), res, exit);
  TUNE_CHECK_GOTO(md_skew(&c), res, exit);
exit:
  c.md = NULL;
  /* report.md appears whole, or not at all. */
  res = tune_output_close(&md, res);
  if (res == tune_ok) {
    printf("%s\n", md_path);
    fflush(stdout);
  }
  if (c.log_fd >= 0) close(c.log_fd);
  if (hold >= 0) close(hold);
  free_ctx(&c);
  return res;
}

tune_result tune_report_summary(const tune_report_opts *opts, int written, FILE *out) {
  report_ctx c;
  char dir[PATH_MAX], md_path[PATH_MAX + 16];
  tune_result res;
  tune_report_opts with_dir = *opts;
  tune_report_folder(opts, dir, sizeof(dir));
  with_dir.out_dir = dir;
  snprintf(md_path, sizeof(md_path), "%s/report.md", dir);
  memset(&c, 0, sizeof(c));
  c.o = &with_dir;
  c.log_fd = -1;
  TUNE_CHECK_GOTO(gather_data(&c), res, exit);
  if (c.run[SIDE_BEFORE].id == 0 && c.run[SIDE_AFTER].id == 0) goto exit;
  fprintf(out, "\nsummary\n");
  res = write_summary(&c, out, 0, written ? md_path : NULL);
  fflush(out);
exit:
  free_ctx(&c);
  return res;
}
