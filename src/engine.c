/* engine.c: the measurement engine (measure a configuration, keep every
 * rank's every sample, summarize) and the main job built on it: before ->
 * sweep + crossovers -> header -> after -> regret -> report. */
#include "engine.h"

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crossover.h"
#include "emit.h"
#include "report.h"
#include "sim.h"
#include "stats.h"
#include "store.h"

#ifndef PACKAGE_VERSION
#include "config.h"
#endif

/* One group of the sweep: everything but the size and the path. */
typedef struct {
  dc_op op;
  dc_dtype dtype;
  int world;
  int offset;
  dc_mode mode;
} engine_group;

/* One configuration measured so far: its config row and the slowest-rank
 * time of each of its trials. A later measurement of the same configuration
 * adds trials to it instead of starting another. */
typedef struct {
  dc_path path;
  uint64_t bytes;
  int64_t config_id; /* 0: not stored yet */
  int trials;
  double *slowest;
} engine_point;

/* A forced path's median at one size, kept for the regret of the after run. */
typedef struct {
  dc_path path;
  uint64_t bytes;
  double median_ns;
} engine_median;

typedef struct {
  const tune_job *job;
  tune_backend *be;
  tune_machine mach;
  tune_store *st;
  int64_t run_id;
  int64_t *elapsed, *delay;
  double *slowest;
  size_t cap; /* samples the buffers hold */
  engine_group *groups;
  int ngroups;
  int group_index;
  long configs_done;
  int tty;
  const char *phase; /* before, sweep, after: for the progress line */
  /* forced-path medians of the current group (sweep), for regret */
  engine_point *points;
  size_t npoints, points_cap;
} engine;

static void engine_progress(engine *e, const tune_cfg *c) {
  if (!e->tty) return;
  char sz[32];
  fprintf(stderr, "\r\033[K%-6s group %d/%d  %s %s w%d %s %s  %s  configs %ld", e->phase,
          e->group_index + 1, e->ngroups, dc_op_name(c->op), dc_dtype_name(c->dtype), c->world,
          dc_align_name(dc_align_class((uintptr_t)c->in_offset, (uintptr_t)c->out_offset, c->bytes)),
          dc_mode_name(c->mode), tune_format_size(c->bytes, sz, sizeof(sz)), e->configs_done);
}

static void engine_progress_end(engine *e) {
  if (e->tty) fprintf(stderr, "\r\033[K");
}

static tune_result engine_reserve(engine *e, size_t n) {
  if (n <= e->cap) return tune_ok;
  int64_t *el = realloc(e->elapsed, n * sizeof(*el));
  if (el == NULL) return tune_err_system;
  e->elapsed = el;
  int64_t *de = realloc(e->delay, n * sizeof(*de));
  if (de == NULL) return tune_err_system;
  e->delay = de;
  double *sl = realloc(e->slowest, n * sizeof(*sl));
  if (sl == NULL) return tune_err_system;
  e->slowest = sl;
  e->cap = n;
  return tune_ok;
}

/* Measure `trials` more trials of c into pt and store them with the config
 * summary in one transaction: a new config row with its samples, or more
 * samples for pt's row. */
static tune_result engine_measure(engine *e, const tune_cfg *c, engine_point *pt, int trials,
                                  dc_path *chosen_out) {
  TUNE_CHECK(engine_reserve(e, (size_t)trials * (size_t)c->world));
  double *sl = realloc(pt->slowest, (size_t)(pt->trials + trials) * sizeof(*sl));
  if (sl == NULL) return tune_err_system;
  pt->slowest = sl;
  engine_progress(e, c);
  tune_samples s = {e->elapsed, e->delay, 0, DC_PATH_AUTO};
  TUNE_CHECK(e->be->ops->measure(e->be, c, pt->trials, trials, e->job->warmup, &s));
  tune_slowest_per_trial(e->elapsed, trials, c->world, pt->slowest + pt->trials);
  int total = pt->trials + trials;
  tune_config_row row = {
      .run_id = e->run_id,
      .impl = c->impl,
      .op = c->op,
      .path = c->path,
      .chosen_path = s.chosen_path,
      .dtype = c->dtype,
      .world = c->world,
      .bytes = c->bytes,
      .in_offset = c->in_offset,
      .out_offset = c->out_offset,
      .align = dc_align_class((uintptr_t)c->in_offset, (uintptr_t)c->out_offset, c->bytes),
      .mode = c->mode,
      .skew_ns = c->skew_ns,
      .skew_rank = c->skew_rank,
      .trials = total,
      .warmup = e->job->warmup,
      .wrong_elems = s.wrong_elems,
      .median_ns = tune_median(pt->slowest, (size_t)total),
      .p10_ns = tune_percentile(pt->slowest, (size_t)total, 10),
      .p90_ns = tune_percentile(pt->slowest, (size_t)total, 90),
  };
  if (pt->config_id == 0)
    TUNE_CHECK(tune_store_put_config(e->st, &row, e->elapsed, e->delay, &pt->config_id));
  else
    TUNE_CHECK(tune_store_add_samples(e->st, pt->config_id, &row, pt->trials, trials, e->elapsed, e->delay));
  pt->trials = total;
  e->configs_done++;
  if (s.wrong_elems != 0)
    TUNE_WARN(TUNE_SWEEP, "%s %s %s w%d %" PRIu64 " bytes: %" PRIu64 " wrong elements", c->impl,
              dc_op_name(c->op), dc_path_name(s.chosen_path), c->world, c->bytes, s.wrong_elems);
  if (chosen_out) *chosen_out = s.chosen_path;
  return tune_ok;
}

/* Measure c once with the job's trial count; its median. */
static tune_result engine_measure_once(engine *e, const tune_cfg *c, double *median, dc_path *chosen) {
  engine_point pt = {c->path, c->bytes, 0, 0, NULL};
  tune_result r = engine_measure(e, c, &pt, e->job->trials, chosen);
  if (r == tune_ok) *median = tune_median(pt.slowest, (size_t)pt.trials);
  free(pt.slowest);
  return r;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Every size probed in a group is a multiple of this: whole elements, whole
 * reduce-scatter slices, and 16 bytes when the group is the aligned one. */
static uint64_t group_granule(const engine_group *g) {
  uint64_t g1 = dc_dtype_size(g->dtype);
  if (g->op == DC_OP_REDUCE_SCATTER) g1 *= (uint64_t)g->world;
  if (g->offset % 16 == 0) g1 = g1 / gcd_u64(g1, 16) * 16;
  return g1;
}

static uint64_t round_up(uint64_t v, uint64_t q) { return (v + q - 1) / q * q; }

static tune_cfg group_cfg(const engine_group *g, dc_path path, uint64_t bytes) {
  tune_cfg c = {"detcoll", g->op, path, g->dtype, g->world, bytes, g->offset, g->offset, g->mode, 0, -1};
  return c;
}

static dc_align group_align(const engine_group *g) {
  return dc_align_class((uintptr_t)g->offset, (uintptr_t)g->offset, 16);
}

/* The coarse size grid of a group: min, min*f, ... rounded to the granule, max. */
static int group_grid(const tune_job *job, const engine_group *g, uint64_t *sizes, int cap) {
  uint64_t q = group_granule(g);
  int n = 0;
  for (double b = (double)job->min_bytes; n < cap; b *= job->grid_factor) {
    uint64_t s = round_up(b < (double)job->max_bytes ? (uint64_t)b : job->max_bytes, q);
    if (n == 0 || s > sizes[n - 1]) sizes[n++] = s;
    if (b >= (double)job->max_bytes) break;
  }
  return n;
}

static tune_result engine_begin_run(engine *e, const char *kind, int64_t parent, const char *thresholds) {
  char host[256];
  if (gethostname(host, sizeof(host)) != 0) snprintf(host, sizeof(host), "unknown");
  host[sizeof(host) - 1] = '\0';
  const char *rev = getenv("TUNE_GIT_REV");
  tune_run_info info = {
      .kind = kind,
      .host = host,
      .gpu_model = e->mach.gpu_model,
      .gpu_count = e->mach.gpu_count,
      .sm = e->mach.sm,
      .topo = dc_topo_name(e->mach.topo),
      .driver = e->mach.driver,
      .cuda = e->mach.cuda,
      .nccl = e->mach.nccl,
      .mpi = e->mach.mpi,
      .launcher = e->mach.launcher,
      .backend = e->job->backend,
      .git_rev = rev && *rev ? rev : TUNE_CONFIGURE_GIT_REV,
      .command_line = e->job->command_line,
      .thresholds = thresholds,
      .seed = (int64_t)e->job->seed,
      .parent_run = parent,
  };
  TUNE_CHECK(tune_store_run_begin(e->st, &info, &e->run_id));
  TUNE_INFO(TUNE_SWEEP, "run %" PRId64 " (%s) started", e->run_id, kind);
  return tune_ok;
}

/* The "before" and "after" passes: auto dispatch at every grid size. */
static tune_result engine_auto_pass(engine *e) {
  uint64_t sizes[64];
  for (e->group_index = 0; e->group_index < e->ngroups; e->group_index++) {
    const engine_group *g = &e->groups[e->group_index];
    int n = group_grid(e->job, g, sizes, 64);
    for (int i = 0; i < n; i++) {
      tune_cfg c = group_cfg(g, DC_PATH_AUTO, sizes[i]);
      double median;
      TUNE_CHECK(engine_measure_once(e, &c, &median, NULL));
    }
  }
  engine_progress_end(e);
  return tune_ok;
}

typedef struct {
  engine *e;
  const engine_group *g;
} sweep_ctx;

static tune_result sweep_measure(void *ctx, dc_path path, uint64_t bytes, int ntrials, double *out) {
  sweep_ctx *s = ctx;
  engine *e = s->e;
  engine_point *pt = NULL;
  for (size_t i = 0; i < e->npoints && pt == NULL; i++)
    if (e->points[i].path == path && e->points[i].bytes == bytes) pt = &e->points[i];
  if (pt == NULL) {
    if (e->npoints == e->points_cap) {
      size_t cap = e->points_cap ? 2 * e->points_cap : 256;
      engine_point *p = realloc(e->points, cap * sizeof(*p));
      if (p == NULL) return tune_err_system;
      e->points = p;
      e->points_cap = cap;
    }
    pt = &e->points[e->npoints++];
    *pt = (engine_point){path, bytes, 0, 0, NULL};
  }
  tune_cfg c = group_cfg(s->g, path, bytes);
  int first = pt->trials;
  TUNE_CHECK(engine_measure(e, &c, pt, ntrials, NULL));
  memcpy(out, pt->slowest + first, (size_t)ntrials * sizeof(*out));
  return tune_ok;
}

/* Drop the current group's points (their slowest arrays too). */
static void engine_points_clear(engine *e) {
  for (size_t i = 0; i < e->npoints; i++) free(e->points[i].slowest);
  e->npoints = 0;
}

/* The forced-path medians of every group, for regret: group i's points are
 * points[start[i] .. start[i+1]). */
typedef struct {
  engine_median *points;
  size_t *start;
} engine_best;

/* The sweep: crossovers per group, stored, and one header row per group. */
static tune_result engine_sweep(engine *e, dc_threshold_row *rows, engine_best *best) {
  size_t total = 0;
  best->start[0] = 0;
  for (e->group_index = 0; e->group_index < e->ngroups; e->group_index++) {
    const engine_group *g = &e->groups[e->group_index];
    dc_path paths[DC_PATH_COUNT];
    sweep_ctx ctx = {e, g};
    tune_xover_search s = {
        .measure = sweep_measure,
        .ctx = &ctx,
        .paths = paths,
        .npaths = dc_op_paths(g->op, paths),
        .min_bytes = e->job->min_bytes,
        .max_bytes = e->job->max_bytes,
        .grid_factor = e->job->grid_factor,
        .granule = group_granule(g),
        .resolution = e->job->resolution,
        .trials = e->job->trials,
        .max_trials = e->job->max_trials,
        .confidence = e->job->confidence,
        .seed = e->job->seed + (uint64_t)e->group_index,
    };
    tune_xover xo[DC_MAX_SEGMENTS];
    int nxo = 0;
    dc_threshold_row *row = &rows[e->group_index];
    *row = (dc_threshold_row){.sm = e->mach.sm,
                              .world = g->world,
                              .topo = e->mach.topo,
                              .op = g->op,
                              .dtype = g->dtype,
                              .align = group_align(g),
                              .mode = g->mode};
    TUNE_CHECK(tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, row->seg, &row->nseg));
    for (int i = 0; i < nxo; i++) {
      tune_crossover_row x = {e->run_id, g->op, g->dtype, g->world, row->align, g->mode, 0,
                              xo[i].below, xo[i].above, xo[i].bytes, xo[i].lo_bytes, xo[i].hi_bytes,
                              xo[i].diff_ns, xo[i].ci_lo_ns, xo[i].ci_hi_ns, xo[i].confidence,
                              xo[i].decided};
      TUNE_CHECK(tune_store_put_crossover(e->st, &x));
    }
    engine_median *p = realloc(best->points, (total + e->npoints + 1) * sizeof(*p));
    if (p == NULL) return tune_err_system;
    best->points = p;
    for (size_t i = 0; i < e->npoints; i++)
      p[total++] = (engine_median){e->points[i].path, e->points[i].bytes,
                                   tune_median(e->points[i].slowest, (size_t)e->points[i].trials)};
    best->start[e->group_index + 1] = total;
    engine_points_clear(e);
  }
  engine_progress_end(e);
  return tune_ok;
}

/* The after pass: auto dispatch with the new table at every grid size, and
 * its regret against the best forced path the sweep measured at that size. */
static tune_result engine_after(engine *e, const engine_best *best, double *max_regret) {
  uint64_t sizes[64];
  *max_regret = 0;
  for (e->group_index = 0; e->group_index < e->ngroups; e->group_index++) {
    const engine_group *g = &e->groups[e->group_index];
    int n = group_grid(e->job, g, sizes, 64);
    for (int i = 0; i < n; i++) {
      tune_cfg c = group_cfg(g, DC_PATH_AUTO, sizes[i]);
      double auto_ns;
      dc_path chosen;
      TUNE_CHECK(engine_measure_once(e, &c, &auto_ns, &chosen));
      const engine_median *b = NULL;
      for (size_t k = best->start[e->group_index]; k < best->start[e->group_index + 1]; k++)
        if (best->points[k].bytes == sizes[i] && (b == NULL || best->points[k].median_ns < b->median_ns))
          b = &best->points[k];
      if (b == NULL) continue;
      tune_regret_row r = {e->run_id, g->op, g->dtype, g->world, group_align(g), g->mode, sizes[i],
                           chosen, b->path, auto_ns, b->median_ns};
      TUNE_CHECK(tune_store_put_regret(e->st, &r));
      if (auto_ns / b->median_ns > *max_regret) *max_regret = auto_ns / b->median_ns;
    }
  }
  engine_progress_end(e);
  return tune_ok;
}

/* The group a header row was swept from (rows are sorted, groups are not). */
static const engine_group *engine_row_group(const engine *e, const dc_threshold_row *r) {
  for (int i = 0; i < e->ngroups; i++) {
    const engine_group *g = &e->groups[i];
    if (g->op == r->op && g->dtype == r->dtype && g->world == r->world && g->mode == r->mode &&
        group_align(g) == r->align)
      return g;
  }
  return &e->groups[0];
}

/* Print the crossovers found; for sim runs, beside the model's true ones. */
static void engine_print_crossovers(engine *e, const dc_threshold_row *rows) {
  int sim = strcmp(e->job->backend, "sim") == 0;
  printf("\ncrossovers (%s)%s\n", e->job->backend,
         sim ? ": found by the sweep, and the sim model's true crossover" : "");
  printf("%-15s %-5s %5s %-9s %-6s %-27s %12s %12s\n", "op", "dtype", "world", "align", "mode",
         "below -> above", "found", sim ? "true" : "");
  for (int i = 0; i < e->ngroups; i++) {
    const dc_threshold_row *r = &rows[i];
    for (int k = 0; k + 1 < r->nseg; k++) {
      char pair[64];
      snprintf(pair, sizeof(pair), "%s -> %s", dc_path_name(r->seg[k].path), dc_path_name(r->seg[k + 1].path));
      printf("%-15s %-5s %5d %-9s %-6s %-27s %12" PRIu64, dc_op_name(r->op), dc_dtype_name(r->dtype), r->world,
             dc_align_name(r->align), dc_mode_name(r->mode), pair, r->seg[k].max_bytes);
      if (sim) {
        tune_cfg c = group_cfg(engine_row_group(e, r), DC_PATH_AUTO, 0);
        printf(" %12" PRIu64, tune_sim_true_crossover(&c, r->seg[k].path, r->seg[k + 1].path, 1,
                                                       e->job->max_bytes));
      }
      printf("\n");
    }
  }
}

/* Same file? Compares the real paths of the directories (the file itself
 * may not exist yet) and the base names. */
static int same_path(const char *a, const char *b) {
  char da[PATH_MAX], db[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];
  snprintf(da, sizeof(da), "%s", a);
  snprintf(db, sizeof(db), "%s", b);
  if (realpath(dirname(da), ra) == NULL || realpath(dirname(db), rb) == NULL) return 0;
  snprintf(da, sizeof(da), "%s", a);
  snprintf(db, sizeof(db), "%s", b);
  return strcmp(ra, rb) == 0 && strcmp(basename(da), basename(db)) == 0;
}

/* Where the header goes; refuses to let a sim run install
 * kernels/thresholds.h without --allow-sim. Checked before measuring. */
static tune_result engine_header_path(const tune_job *job, char *out, size_t len) {
  char installed[PATH_MAX];
  snprintf(installed, sizeof(installed), "%s/kernels/thresholds.h", job->srcdir);
  int sim = strcmp(job->backend, "sim") == 0;
  if (job->header_path != NULL) {
    snprintf(out, len, "%s", job->header_path);
  } else if (!sim || job->allow_sim) {
    snprintf(out, len, "%s", installed);
  } else {
    char d[PATH_MAX];
    snprintf(d, sizeof(d), "%s", job->db_path);
    snprintf(out, len, "%s/thresholds.h", dirname(d));
  }
  if (sim && !job->allow_sim && same_path(out, installed)) {
    tune_error("refusing to install simulated thresholds as %s; pass --allow-sim to do it anyway", out);
    return tune_err_arg;
  }
  return tune_ok;
}

static tune_result engine_groups(engine *e) {
  const tune_job *job = e->job;
  int cap = DC_MODE_COUNT * TUNE_MAX_WORLDS * DC_OP_COUNT * DC_DTYPE_COUNT * TUNE_MAX_OFFSETS;
  e->groups = calloc((size_t)cap, sizeof(*e->groups));
  if (e->groups == NULL) return tune_err_system;
  for (int m = 0; m < DC_MODE_COUNT; m++)
    for (int w = 0; w < job->nworlds; w++)
      for (int o = 0; o < DC_OP_COUNT; o++)
        for (int d = 0; d < DC_DTYPE_COUNT; d++)
          for (int f = 0; f < job->noffsets; f++)
            if ((job->modes >> m & 1) && (job->ops >> o & 1) && (job->dtypes >> d & 1))
              e->groups[e->ngroups++] = (engine_group){o, d, job->worlds[w], job->offsets[f], m};
  return e->ngroups > 0 ? tune_ok : tune_err_arg;
}

/* Sorts rows into header order, writes the header and stores it with its rows. */
static tune_result engine_write_header(engine *e, const char *path, dc_threshold_row *rows,
                                       char **provenance) {
  char date[32];
  tune_utc_iso(date, sizeof(date));
  const char *rev = getenv("TUNE_GIT_REV");
  tune_provenance prov = {
      .run_id = e->run_id,
      .db_path = e->job->db_path,
      .backend = e->job->backend,
      .gpu_model = e->mach.gpu_model,
      .gpu_count = e->mach.gpu_count,
      .sm = e->mach.sm,
      .topo = dc_topo_name(e->mach.topo),
      .driver = e->mach.driver,
      .cuda = e->mach.cuda,
      .nccl = e->mach.nccl,
      .date = date,
      .git_rev = rev && *rev ? rev : TUNE_CONFIGURE_GIT_REV,
      .tune_version = PACKAGE_VERSION,
  };
  char *text = NULL;
  tune_result res;
  tune_emit_sort(rows, (size_t)e->ngroups);
  TUNE_CHECK_GOTO(tune_emit_header(rows, (size_t)e->ngroups, &prov, &text), res, out);
  TUNE_CHECK_GOTO(tune_emit_write(path, text), res, out);
  char installed[PATH_MAX];
  snprintf(installed, sizeof(installed), "%s/kernels/thresholds.h", e->job->srcdir);
  int64_t header_id;
  TUNE_CHECK_GOTO(tune_store_put_header(e->st, e->run_id, path, strcmp(e->job->backend, "sim") == 0,
                                        same_path(path, installed), text, rows, (size_t)e->ngroups,
                                        &header_id),
                  res, out);
  printf("thresholds header: %s (header %" PRId64 ")\n", path, header_id);
  if (asprintf(provenance, "run %" PRId64 " %s %s sm%d %s", e->run_id, e->job->backend, e->mach.gpu_model,
               e->mach.sm, date) < 0)
    res = tune_err_system;
out:
  free(text);
  return res;
}

tune_result tune_job_run(const tune_job *job) {
  tune_result res = tune_ok;
  engine e = {.job = job, .tty = isatty(STDERR_FILENO)};
  dc_threshold_row *rows = NULL;
  engine_best best = {NULL, NULL};
  char header[PATH_MAX];
  char *provenance = NULL;
  int64_t before_run, after_run;
  double max_regret;
  const tune_backend_ops *ops = tune_backend_find(job->backend);
  if (ops == NULL) {
    tune_error("unknown backend '%s' (use gpu or sim)", job->backend);
    return tune_err_arg;
  }
  TUNE_CHECK(engine_header_path(job, header, sizeof(header)));
  TUNE_CHECK_GOTO(engine_groups(&e), res, out);
  rows = calloc((size_t)e.ngroups, sizeof(*rows));
  best.start = calloc((size_t)e.ngroups + 1, sizeof(*best.start));
  if (rows == NULL || best.start == NULL) {
    res = tune_err_system;
    goto out;
  }
  TUNE_CHECK_GOTO(ops->open(job->gpus, job->seed, &e.be), res, out);
  e.be->ops->describe(e.be, &e.mach);
  if (job->create_db_dir) {
    char d[PATH_MAX];
    snprintf(d, sizeof(d), "%s", job->db_path);
    if (mkdir(dirname(d), 0777) != 0 && errno != EEXIST) {
      tune_error("cannot create the folder of %s: %s", job->db_path, strerror(errno));
      res = tune_err_system;
      goto out;
    }
  }
  TUNE_CHECK_GOTO(tune_store_open(job->db_path, 0, &e.st), res, out);

  int64_t t0 = tune_now_ns();
  e.phase = "before";
  TUNE_CHECK_GOTO(engine_begin_run(&e, "before", 0, dc_builtin_thresholds_provenance), res, out);
  before_run = e.run_id;
  TUNE_CHECK_GOTO(engine_auto_pass(&e), res, out);
  TUNE_CHECK_GOTO(tune_store_run_finish(e.st, e.run_id), res, out);

  e.phase = "sweep";
  TUNE_CHECK_GOTO(engine_begin_run(&e, "sweep", before_run, dc_builtin_thresholds_provenance), res, out);
  TUNE_CHECK_GOTO(engine_sweep(&e, rows, &best), res, out);
  TUNE_CHECK_GOTO(engine_write_header(&e, header, rows, &provenance), res, out);
  TUNE_CHECK_GOTO(tune_store_run_finish(e.st, e.run_id), res, out);

  /* The sim applies the new table directly; a GPU run measures the library
   * rebuilt against the written header. */
  e.phase = "after";
  e.be->ops->set_table(e.be, rows, (size_t)e.ngroups);
  TUNE_CHECK_GOTO(engine_begin_run(&e, "after", before_run, provenance), res, out);
  after_run = e.run_id;
  TUNE_CHECK_GOTO(engine_after(&e, &best, &max_regret), res, out);
  TUNE_CHECK_GOTO(tune_store_run_finish(e.st, e.run_id), res, out);

  engine_print_crossovers(&e, rows);
  printf("\n%ld configurations measured in %.1f s; runs: before %" PRId64 ", after %" PRId64
         "; max regret %.3f\n",
         e.configs_done, (double)(tune_now_ns() - t0) * 1e-9, before_run, after_run, max_regret);
  tune_store_close(e.st);
  e.st = NULL;

  if (!job->no_report) {
    char dir[PATH_MAX];
    if (job->report_dir) {
      snprintf(dir, sizeof(dir), "%s", job->report_dir);
    } else {
      char d[PATH_MAX];
      snprintf(d, sizeof(d), "%s", job->db_path);
      snprintf(dir, sizeof(dir), "%s/report", dirname(d));
    }
    tune_report_opts ro = {job->db_path, before_run, after_run, dir};
    TUNE_CHECK_GOTO(tune_report_run(&ro), res, out);
  }
out:
  engine_progress_end(&e);
  if (e.st) tune_store_close(e.st);
  if (e.be) e.be->ops->close(e.be);
  free(provenance);
  free(rows);
  free(best.points);
  free(best.start);
  engine_points_clear(&e);
  free(e.points);
  free(e.groups);
  free(e.elapsed);
  free(e.delay);
  free(e.slowest);
  return res;
}
