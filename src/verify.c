/* verify.c: `tune verify` -- is a threshold table (the one compiled in, or
 * a header given with --header, loaded at run time) still right on this
 * machine (after a driver, CUDA or NCCL upgrade, or on a new node)? Auto
 * dispatch is measured against the forced paths the table weighs there, at
 * sizes of the sweep's grid (tune_xover_grid): the grid size on each side
 * of each crossover of the table and the one nearest the middle of each
 * segment, in the same trials. A size whose regret (auto over the best of
 * those paths) is decided above the tolerance fails. The measurements are
 * a run of their own (kind verify) with its configs and regret rows. The
 * options are rows of the measuring commands' spec (job_opts.h). */
#include "verify.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "crossover.h"
#include "engine.h"
#include "headers.h"
#include "job_opts.h"
#include "launch.h"
#include "stats.h"

/* auto, and the paths of a segment and its two neighbours. */
#define VERIFY_MAX_NC 4
/* Test sizes of one row: two per crossover, one per segment. */
#define VERIFY_MAX_SIZES (3 * DC_MAX_SEGMENTS)

typedef struct {
  const tune_job *o;
  double tolerance;
  tune_backend *be;
  tune_machine mach;
  tune_store *st;
  int64_t run_id;
  int64_t *elapsed[VERIFY_MAX_NC], *delay[VERIFY_MAX_NC];
  double *slowest[VERIFY_MAX_NC];
  uint64_t *grid;
  long sizes, rows, failed, configs;
  long wrong, undecided;     /* sizes where a path returned wrong results; above the tolerance, undecided */
  unsigned char *row_seen;   /* per row of table: checked (reg16 falls back to the aligned row) */
  long measurable, skipped; /* test sizes with a path to weigh, and without (counted first) */
  const dc_threshold_row *table; /* the table checked: a loaded header's, else the one compiled in */
  size_t ntable;
  int counting; /* verify_all only counts the rows it would check */
} verifier;

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The grid size nearest x (log scale) among g[lo..hi]; 0 when empty. */
static uint64_t grid_nearest(const uint64_t *g, int lo, int hi, double x) {
  uint64_t best = 0;
  for (int i = lo; i <= hi; i++)
    if (best == 0 || fabs(log((double)g[i] / x)) < fabs(log((double)best / x))) best = g[i];
  return best;
}

/* The test sizes of row on the grid g[0..ng), sorted and distinct: the
 * grid size nearest the middle (geometric) of each segment, and the grid
 * sizes nearest each crossover on either side of it. */
static int verify_sizes(const dc_threshold_row *row, const uint64_t *g, int ng, uint64_t *x) {
  int n = 0, lo = 0;
  for (int k = 0; k < row->nseg; k++) {
    uint64_t end = row->seg[k].max_bytes;
    int hi = lo;
    while (hi < ng && g[hi] <= end) hi++;
    /* g[lo..hi) is this segment's share of the grid. */
    if (hi > lo) {
      double a = (double)g[lo], b = (double)g[hi - 1];
      x[n++] = grid_nearest(g, lo, hi - 1, sqrt(a * b));
      if (k + 1 < row->nseg && hi < ng) x[n++] = g[hi - 1], x[n++] = g[hi];
    }
    lo = hi;
  }
  qsort(x, (size_t)n, sizeof(*x), cmp_u64);
  int m = 0;
  for (int i = 0; i < n; i++)
    if (m == 0 || x[i] != x[m - 1]) x[m++] = x[i];
  return m;
}

/* The forced paths weighed at bytes: the row's there and its neighbours'. */
static int verify_paths(const verifier *v, const dc_threshold_row *row, const tune_cfg *base,
                        uint64_t bytes, dc_path *paths) {
  int k = 0, n = 0;
  while (k + 1 < row->nseg && bytes > row->seg[k].max_bytes) k++;
  for (int d = 0; d < 3; d++) {
    int s = k + (d == 0 ? 0 : d == 1 ? -1 : 1);
    if (s < 0 || s >= row->nseg) continue;
    dc_path p = row->seg[s].path;
    tune_cfg c = *base;
    c.path = p;
    int dup = 0;
    for (int i = 0; i < n; i++) dup |= paths[i] == p;
    if (!dup && bytes <= dc_path_max_bytes(c.op, p) && tune_cfg_path_unsupported(&c) == NULL &&
        v->be->ops->supports(v->be, &c))
      paths[n++] = p;
  }
  return n;
}

/* One size's measurement: nc configurations (auto first), `first` trials
 * so far, the best forced path, the regret CI and what auto chose. */
typedef struct {
  tune_cfg c[VERIFY_MAX_NC];
  int64_t ids[VERIFY_MAX_NC]; /* the configs' rows, kept across rounds */
  int nc, first, best;
  dc_path chosen;
  uint64_t wrong[VERIFY_MAX_NC]; /* per configuration: a path with wrong results loses */
  double diff, lo, hi;
} verify_point;

/* Measure trials more of every configuration of p and store them; then the
 * best forced path so far and the CI of median(auto) - (1 + tol) *
 * median(best): above zero fails. */
static tune_result verify_trials(verifier *v, verify_point *p, int trials) {
  const tune_job *o = v->o;
  tune_samples s[VERIFY_MAX_NC];
  for (int i = 0; i < p->nc; i++)
    s[i] = (tune_samples){v->elapsed[i], v->delay[i], 0, DC_PATH_AUTO};
  TUNE_CHECK(v->be->ops->measure(v->be, p->c, p->nc, p->first, trials, o->warmup, s));
  for (int i = 0; i < p->nc; i++) {
    tune_slowest_per_trial(s[i].elapsed_ns, trials, p->c[i].world, v->slowest[i] + p->first);
    TUNE_CHECK(tune_engine_store_config(v->st, v->run_id, &p->c[i], p->first, trials, o->warmup,
                                        &s[i], v->slowest[i], &p->ids[i]));
    if (i == 0) p->chosen = s[0].chosen_path;
    p->wrong[i] += s[i].wrong_elems;
    v->configs++;
  }
  p->first += trials;
  size_t n = (size_t)p->first;
  /* The fastest forced path with right results (the first where none has). */
  p->best = 1;
  for (int i = 2; i < p->nc; i++)
    if (!p->wrong[i] && (p->wrong[p->best] || tune_median(v->slowest[i], n) < tune_median(v->slowest[p->best], n)))
      p->best = i;
  return tune_ci_regret(v->slowest[0], v->slowest[p->best], n, 1.0 + v->tolerance, o->confidence,
                        o->seed ^ p->c[0].bytes ^ ((uint64_t)p->first << 40), &p->diff, &p->lo,
                        &p->hi);
}

/* A size whose regret is decided above the tolerance, or with wrong
 * results: one line (a heading before the first). */
static void verify_print_failure(verifier *v, const verify_point *p, dc_align align, double auto_ns,
                                 double best_ns) {
  const tune_cfg *b = &p->c[0];
  char sz[32], wrong[160] = "";
  for (int i = 0; i < p->nc; i++)
    if (p->wrong[i])
      snprintf(wrong + strlen(wrong), sizeof(wrong) - strlen(wrong), "%s%s", wrong[0] ? ", " : "  WRONG RESULTS: ",
               i == 0 ? "auto" : dc_path_name(p->c[i].path));
  if (v->failed + v->wrong == 0)
    printf("%-14s %-4s %5s %-9s %-5s %6s  %-12s %10s  %-12s %10s %7s  %s\n", "op", "type", "world",
           "align", "mode", "bytes", "auto", "us", "best", "us", "regret",
           "CI of auto - tol*best (us)");
  printf("%-14s %-4s %5d %-9s %-5s %6s  %-12s %10.2f  %-12s %10.2f %7.3f  [%+.2f, %+.2f]%s\n",
         dc_op_name(b->op), dc_dtype_name(b->dtype), b->world, dc_align_name(align),
         dc_mode_name(b->mode), tune_format_size(b->bytes, sz, sizeof(sz)), dc_path_name(p->chosen),
         auto_ns / 1e3, dc_path_name(p->c[p->best].path), best_ns / 1e3, auto_ns / best_ns,
         p->lo / 1e3, p->hi / 1e3, wrong);
  v->failed += p->lo > 0;
  v->wrong += wrong[0] != '\0';
}

/* Measure auto and paths[] at one size, with more trials while the regret
 * is undecided; store the configs and the regret row in one transaction;
 * print the size if its regret is decided above the tolerance. */
static tune_result verify_size(verifier *v, const tune_cfg *base, dc_align align,
                               const dc_path *paths, int npaths) {
  const tune_job *o = v->o;
  verify_point p = {.nc = 1, .chosen = DC_PATH_AUTO, .best = 1};
  int trials = o->trials;
  p.c[0] = *base;
  for (int i = 0; i < npaths; i++) {
    p.c[p.nc] = *base;
    p.c[p.nc++].path = paths[i];
  }
  TUNE_CHECK(tune_store_begin(v->st));
  tune_result r;
  for (int missed = 0;;) {
    TUNE_CHECK_GOTO(verify_trials(v, &p, trials), r, fail);
    if (tune_look_done(p.lo, p.hi, p.first, o->max_trials, &missed)) break;
    trials = tune_look_next(p.first, o->max_trials) - p.first;
  }
  double auto_ns = tune_median(v->slowest[0], (size_t)p.first),
         best_ns = tune_median(v->slowest[p.best], (size_t)p.first);
  tune_regret_row rr = {v->run_id,   base->op, base->dtype,      base->world, align,  base->mode,
                        base->bytes, p.chosen, p.c[p.best].path, auto_ns,     best_ns};
  TUNE_CHECK_GOTO(tune_store_put_regret(v->st, &rr), r, fail);
  TUNE_CHECK_GOTO(tune_store_commit(v->st), r, fail);
  v->sizes++;
  int wrong = 0;
  for (int i = 0; i < p.nc; i++) wrong |= p.wrong[i] != 0;
  if (p.lo > 0 || wrong) verify_print_failure(v, &p, align, auto_ns, best_ns);
  v->undecided += p.lo <= 0 && auto_ns > (1.0 + v->tolerance) * best_ns;
  return tune_ok;
fail:
  tune_store_rollback(v->st);
  return r;
}

/* The table's row for base on this machine (a reg16 configuration falls
 * back to the aligned row, as libdetcoll's lookup does), or NULL. */
static const dc_threshold_row *verify_row(const verifier *v, const dc_threshold_row *rows,
                                          size_t nrows, const tune_cfg *base, dc_align align) {
  const dc_threshold_row *row = dc_table_find(rows, nrows, v->mach.sm, base->world, v->mach.topo,
                                              base->op, base->dtype, align, base->mode, 0);
  if (row == NULL && align == DC_ALIGN_REG)
    row = dc_table_find(rows, nrows, v->mach.sm, base->world, v->mach.topo, base->op, base->dtype,
                        DC_ALIGN_16, base->mode, 0);
  return row;
}

/* One group (world, op, dtype, mode, offset, registered): its row of the
 * table, its test sizes on the sweep's grid, each measured. */
static tune_result verify_group(verifier *v, const dc_threshold_row *rows, size_t nrows,
                                tune_cfg base) {
  const tune_job *o = v->o;
  int reg = strcmp(base.impl, "detcoll_reg") == 0;
  int twinned = !reg && !o->no_reg && base.in_offset % 16 == 0;
  uint64_t q = tune_engine_granule(base.op, base.dtype, base.world, (int)base.in_offset,
                                   reg || twinned),
           x[VERIFY_MAX_SIZES];
  int ng;
  base.bytes = q;
  if (!v->be->ops->supports(v->be, &base)) return tune_ok;
  if (tune_xover_grid(o->min_bytes, o->max_bytes, o->grid_factor, q, v->grid, &ng) != tune_ok)
    return tune_ok;
  dc_align align = tune_cfg_align(&base);
  const dc_threshold_row *row = verify_row(v, rows, nrows, &base, align);
  if (row == NULL) return tune_ok;
  if (!v->row_seen[row - rows]) v->rows++;
  v->row_seen[row - rows] = 1;
  int nx = verify_sizes(row, v->grid, ng, x);
  for (int i = 0; i < nx; i++) {
    dc_path paths[3];
    base.bytes = x[i];
    int np = verify_paths(v, row, &base, x[i], paths);
    if (v->counting) {
      if (np)
        v->measurable++;
      else
        v->skipped++;
      continue;
    }
    if (np == 0) continue;
    if (tune_interrupt_signal()) return tune_err_interrupted;
    TUNE_CHECK(verify_size(v, &base, align, paths, np));
  }
  return tune_ok;
}

/* Every group of the options, against v->table. */
static tune_result verify_all(verifier *v) {
  const tune_job *o = v->o;
  for (int w = 0; w < o->nworlds; w++)
    for (int op = 0; op < DC_OP_COUNT; op++)
      for (int d = 0; d < DC_DTYPE_COUNT; d++)
        for (int m = 0; m < DC_MODE_COUNT; m++)
          for (int f = 0; f < o->noffsets; f++)
            for (int reg = 0; reg < (o->no_reg || o->offsets[f] % 16 ? 1 : 2); reg++) {
              if (!(o->ops >> op & 1) || !tune_job_measures(o, op, d) || !(o->modes >> m & 1)) continue;
              tune_cfg base = {reg ? "detcoll_reg" : "detcoll",
                               op,
                               DC_PATH_AUTO,
                               d,
                               o->worlds[w],
                               0,
                               o->offsets[f],
                               o->offsets[f],
                               m,
                               0,
                               -1};
              TUNE_CHECK(verify_group(v, v->table, v->ntable, base));
            }
  return tune_ok;
}

static const char *verify_usage =
    "usage: tune verify [--gpus N] [--header FILE] [options]\n"
    "\n"
    "Check that a threshold table -- the one auto dispatch follows (the file\n"
    "DC_THRESHOLDS_FILE names, else the one libdetcoll was built with), or a\n"
    "header given with --header, loaded at run time -- is still right on this\n"
    "machine: auto dispatch against the forced paths the table weighs, at the\n"
    "sweep's grid sizes on either side of each crossover and in the middle of\n"
    "each segment, measured in the same trials. Prints every size whose regret\n"
    "(auto over the best of those paths) is decided above the tolerance, and\n"
    "exits 1 if there is any (or any wrong result), 2 on an error, so that a\n"
    "failure is never read as the verdict. The measurements are stored as a\n"
    "run of kind verify, with its regret rows.\n"
    "\n";

static const char *verify_outro =
    "\nSIZE takes K, M, G, KiB, MiB, GiB (binary). Logging: TUNE_DEBUG=WARN|INFO|TRACE.\n";

static const tune_opt verify_spec[] = {
    TUNE_JOB_ROWS_MACHINE,
    TUNE_JOB_ROWS_DEVICE,
    TUNE_OPT_STRING_ROW("header", NULL, "FILE", tune_job_args, job.header_path,
                        "verify this thresholds header (loaded at run time, as\n"
                        "DC_THRESHOLDS_FILE=FILE would) instead of the table compiled in"),
    TUNE_JOB_ROW_DB,
    TUNE_OPT_TOLERANCE_ROW(tune_job_args, tolerance,
                           "regret allowed: 3%, 0.03 or 1.03 (default 3%)"),
    TUNE_JOB_ROWS_GROUPS,
    TUNE_JOB_ROWS_SIZES,
    TUNE_JOB_ROW_CONFIDENCE,
    TUNE_JOB_ROWS_TRIALS("trials cap while a CI straddles zero (default 160; env\n"
                         "TUNE_MAX_TRIALS)"),
};

/* The backend, the sample buffers, the grid, the store and the run. job is
 * vf->o: without --gpus its default worlds are those of the ranks the
 * backend found, as the main job's (tune_job_resolve_worlds). */
static tune_result verify_open(verifier *vf, tune_job *job, const dc_threshold_row *rows, size_t nrows,
                               int argc, char **argv) {
  const tune_job *o = job;
  size_t need = 0;
  tune_backend_opts bo = {o->gpus,          o->seed,      o->launcher,
                          o->virtual_ranks, o->max_bytes, o->graph_calls};
  const tune_backend_ops *ops = tune_backend_find(o->backend);
  TUNE_CHECK(ops ? ops->open(&bo, &vf->be) : tune_err_arg);
  vf->be->ops->describe(vf->be, &vf->mach);
  tune_job_resolve_worlds(job, vf->mach.ranks);
  if (rows) TUNE_CHECK(vf->be->ops->set_table(vf->be, TUNE_TABLE_CURRENT, rows, nrows));
  for (int i = 0; i < o->nworlds; i++)
    if ((size_t)o->max_trials * (size_t)o->worlds[i] > need)
      need = (size_t)o->max_trials * (size_t)o->worlds[i];
  for (int i = 0; i < VERIFY_MAX_NC; i++) {
    vf->elapsed[i] = malloc(need * sizeof(int64_t));
    vf->delay[i] = malloc(need * sizeof(int64_t));
    vf->slowest[i] = malloc((size_t)o->max_trials * sizeof(double));
    if (!vf->elapsed[i] || !vf->delay[i] || !vf->slowest[i]) return tune_err_system;
  }
  if ((vf->grid = malloc(TUNE_XOVER_MAX_GRID * sizeof(*vf->grid))) == NULL) return tune_err_system;
  if ((vf->row_seen = calloc(vf->ntable + 1, 1)) == NULL) return tune_err_system;
  /* A table with no row to check here is refused before the database is
   * touched. */
  vf->counting = 1;
  TUNE_CHECK(verify_all(vf));
  vf->counting = 0;
  if (vf->rows == 0) {
    tune_error("verify: the table has no row for this machine and these options: nothing to check");
    return tune_err_arg;
  }
  /* Rows whose paths run at none of their test sizes (each over its size
   * limit there) would pass having measured nothing. */
  if (vf->measurable == 0) {
    tune_error("verify: at none of the %ld test sizes of the table's %ld rows does a path the table "
               "weighs there run (each is over its size limit; see --min-bytes, --max-bytes): "
               "nothing to check", vf->skipped, vf->rows);
    return tune_err_arg;
  }
  vf->rows = 0;
  memset(vf->row_seen, 0, vf->ntable + 1);
  TUNE_CHECK(tune_engine_open_store(o->db_path, &vf->st));
  char *cmdline = tune_join_args("tune", argc, argv);
  if (cmdline == NULL) return tune_err_system;
  tune_result r = tune_engine_begin_run(
      vf->st, &vf->mach, "verify", o->backend, cmdline, o->seed, 0,
      o->header_path ? o->header_path : dc_builtin_thresholds_provenance, &vf->run_id);
  free(cmdline);
  return r;
}

/* The summary lines. */
static tune_result verify_summary(const verifier *vf, int64_t t0) {
  const tune_job *o = vf->o;
  printf(
      "%sverify (%s, table: %s): %ld sizes of %ld rows, %ld configurations in %.1f s, run %" PRId64
      " of %s\n",
      vf->failed || vf->wrong ? "\n" : "", o->backend,
      o->header_path ? o->header_path : dc_builtin_thresholds_provenance, vf->sizes, vf->rows,
      vf->configs, (double)(tune_now_ns() - t0) / 1e9, vf->run_id, o->db_path);
  if (vf->failed)
    printf(
        "%ld sizes with regret decided above %.3g (auto slower than the best path weighed there)\n",
        vf->failed, 1.0 + vf->tolerance);
  else if (vf->undecided)
    printf("no size with regret decided above %.3g; %ld sizes above it undecided (their interval holds it)\n",
           1.0 + vf->tolerance, vf->undecided);
  else
    printf("every size within %.3g of the best path weighed there\n", 1.0 + vf->tolerance);
  if (vf->wrong)
    printf("%ld sizes where a path returned wrong results (marked above)\n", vf->wrong);
  if (vf->skipped)
    printf("%ld test sizes not checked: no path the table weighs there runs at that size (over its "
           "size limit)\n", vf->skipped);
  return tune_ok;
}

static void verify_close(verifier *vf) {
  if (vf->be) vf->be->ops->close(vf->be);
  tune_store_close(vf->st);
  for (int i = 0; i < VERIFY_MAX_NC; i++)
    free(vf->elapsed[i]), free(vf->delay[i]), free(vf->slowest[i]);
  free(vf->grid);
  free(vf->row_seen);
}

int tune_cmd_verify(int argc, char **argv) {
  tune_job_args a;
  int rc, helped;
  tune_job_args_init(&a, "verify");
  rc = tune_opts_parse("verify", verify_spec, sizeof(verify_spec) / sizeof(verify_spec[0]), argc,
                       argv, &a, 0, verify_usage, verify_outro, 22, &helped);
  if (rc != 0 || helped) return rc;
  if (optind < argc) return tune_usage_error("verify", "unexpected argument '%s'", argv[optind]);
  if ((rc = tune_job_args_check(&a)) != 0) return rc;
  /* Everything that can be refused is refused before the database opens. */
  dc_threshold_row *hrows = NULL;
  size_t nh = 0;
  /* Without --header, the table auto dispatch follows: DC_THRESHOLDS_FILE's
   * where it is set (libdetcoll loads it), else the one compiled in. */
  const char *env = getenv(DC_THRESHOLDS_FILE_ENV);
  if (a.job.header_path == NULL && env != NULL && *env != '\0') a.job.header_path = env;
  if (a.job.header_path && tune_header_load(a.job.header_path, &hrows, &nh) != tune_ok)
    return TUNE_EXIT_USAGE;
  tune_result r = tune_ok;
  if (a.job.header_path && tune_same_file(a.job.db_path, a.job.header_path)) {
    tune_error("--db %s is the header verify checks (%s); give the database another name",
               a.job.db_path,
               env && a.job.header_path == env ? DC_THRESHOLDS_FILE_ENV : "--header");
    r = tune_err_arg;
  }
  verifier vf = {.o = &a.job,
                 .tolerance = a.tolerance,
                 .table = hrows ? hrows : dc_builtin_thresholds,
                 .ntable = hrows ? nh : dc_builtin_thresholds_count};
  int64_t t0 = tune_now_ns();
  if (r == tune_ok) r = verify_open(&vf, &a.job, hrows, nh, argc, argv);
  if (r == tune_ok) {
    tune_interrupt_install();
    r = verify_all(&vf);
  }
  if (r == tune_err_interrupted)
    fprintf(stderr,
            "tune verify: interrupted by %s: what it measured is committed to %s as verify run %" PRId64
            ", left unfinished (a verify is not resumed: run it again)\n",
            tune_interrupt_name(), a.job.db_path, vf.run_id);
  if (r == tune_ok) r = tune_store_run_finish(vf.st, vf.run_id);
  if (r == tune_ok) r = verify_summary(&vf, t0);
  if (r != tune_ok) tune_launcher_failing(r);
  verify_close(&vf);
  free(hrows);
  /* A gate: 1 is the verdict, so an error is 2. */
  if (r != tune_ok) return tune_gate_exit_status(r);
  return vf.failed || vf.wrong ? 1 : 0;
}
