/* engine.c: the measurement engine (measure configurations, keep every
 * rank's every sample, summarize) and the main job built on it:
 *
 *   before  auto dispatch with the job's previous table (the thresholds
 *           compiled in, or DC_THRESHOLDS_FILE's), NCCL beside it
 *   sweep   every forced path; crossovers by coarse grid + CI bisection
 *   header  the thresholds table, stored (and written where it does not
 *           install into the source tree)
 *   after   auto dispatch with the new table, given to every rank's backend
 *           at run time (libdetcoll: dc_comm_set_table) in this process,
 *           with auto dispatch from the job's previous table (the one the
 *           before pass measured, stored with the before run) in the same
 *           trials -- the paired before/after figures -- and the regret of
 *           auto dispatch against the best forced path
 *   report  gnuplot plots and report.md; then, where the job installs its
 *           header, kernels/thresholds.h written and libdetcoll rebuilt
 *           against it, its compiled-in table checked against the measured
 *
 * Under the mpi launcher every process runs the whole job; rank 0 alone
 * holds the database, writes, and concludes.
 *
 * The three passes are runs of one chain (sweep and after name the before
 * run as parent). Every config is committed with its samples, so a killed
 * job keeps what it measured and --resume continues the chain: configs
 * already in the database are read back instead of measured again. */
#include "engine.h"

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "crossover.h"
#include "dc_table_ref.h"
#include "emit.h"
#include "job_opts.h"
#include "launch.h"
#include "progress.h"
#include "query.h"
#include "report.h"
#include "sim.h"
#include "stats.h"

/* Most configurations measured together: detcoll auto on plain and on
 * registered buffers, each NCCL flavour, and (after pass) auto with the
 * previous table and the best forced path of each auto. */
#define ENGINE_MAX_NC 8
#define ENGINE_MAX_AUTO 2
/* NCCL flavours measured beside detcoll's auto dispatch, where supported. */
static const char *const engine_baselines[] = {"nccl", "nccl_symm"};

/* One group of the sweep: everything but the size and the path. A
 * registered group (reg) is the twin of the aligned group of the same key:
 * the same buffers registered (impl detcoll_reg), every path of the op
 * including those that need registration, and DC_ALIGN_REG rows. */
typedef struct {
  dc_op op;
  dc_dtype dtype;
  int world;
  int offset;
  dc_mode mode;
  int64_t skew_ns; /* 0, or the typical skew (rank 0 delayed) */
  int reg;
  int twinned; /* an aligned group with a registered twin: the two share one grid */
} engine_group;

/* One configuration measured so far in this process: its config row and the
 * slowest-rank time of each trial. `given` trials have been handed to the
 * crossover search; more are measured only when it asks beyond `trials`. */
typedef struct {
  dc_path path;
  uint64_t bytes;
  int64_t config_id; /* 0: not stored (yet, or not the writer) */
  int trials, given;
  double *slowest;
} engine_point;

typedef struct {
  const tune_job *job;
  tune_backend *be;
  tune_machine mach;
  tune_store *st; /* NULL on every process but the launcher's rank 0 */
  int proc;       /* this process's rank (0 until the backend is open) */
  int64_t run_id;
  int resuming; /* the current run was begun by an earlier, killed job */
  int64_t *elapsed[ENGINE_MAX_NC], *delay[ENGINE_MAX_NC];
  size_t cap; /* samples each buffer holds */
  engine_group *groups;
  int ngroups, group_index;
  long configs_done, configs_reused;
  const char *phase;    /* before or after, for the progress of an auto pass */
  int after_pass;       /* the after pass (known on every rank): auto dispatch with the previous
                           table beside the new one, and against the sweep's best forced path */
  engine_point *points; /* the current group's, during the sweep */
  size_t npoints, points_cap;
  char options[1024]; /* the parsed options, stored with each run; --resume matches them */
  dc_threshold_row *prev; /* the job's previous table (engine_load_prev), nprev rows: every */
  size_t nprev;           /* search's incumbent, and the rows the header keeps where the job
                             measured none */
  int prev_stored;        /* process 0: the before run holds prev (engine_store_previous) */
  int prev_given;         /* every process: prev is not the table auto dispatch holds here (a
                             resumed job's, stored when DC_THRESHOLDS_FILE said otherwise): the
                             before pass gives it to the backend (engine_before_and_sweep) */
  uint64_t default_hash;  /* process 0: the hash of the table auto dispatch holds here */
  int header_written;     /* process 0: this process wrote the header where it does not install */
  int measured;           /* process 0: the after pass is over, the job concludes */
  const char *header;     /* where the job's header goes (engine_check_job) */
  int installs;           /* 1: that is the source tree's, and the job compiles it in */
} engine;

/* ---- storing ------------------------------------------------------------- */

tune_result tune_engine_open_store(const char *db_path, tune_store **st) {
  char d[PATH_MAX];
  snprintf(d, sizeof(d), "%s", db_path);
  TUNE_CHECK(tune_make_dirs("--db", db_path, dirname(d)));
  /* SQLite's own answer for a folder it cannot write is a misleading
   * "No such file or directory". */
  struct stat sb;
  if (stat(db_path, &sb) != 0) TUNE_CHECK(tune_check_writable("--db", db_path, TUNE_WRITABLE_DB));
  int taken;
  TUNE_CHECK(tune_store_lock_job(db_path, &taken));
  tune_result r = tune_store_open(db_path, 0, st);
  /* Only this call's lock: a fleet's rank 0 holds its fleet database's
   * while it opens its node database. */
  if (r != tune_ok && taken) tune_store_unlock_job();
  return r;
}

/* tune_engine_begin_run, with the parsed options of a main job (NULL: none). */
static tune_result engine_begin_run(tune_store *st, const tune_machine *m, const char *kind,
                                    const char *backend, const char *command_line,
                                    const char *options, uint64_t seed, int64_t parent_run,
                                    const char *thresholds, int64_t *run_id) {
  tune_run_info info = {
      .kind = kind,
      .host = tune_hostname(),
      .gpu_model = m->gpu_model,
      .gpu_count = m->gpu_count,
      .sm = m->sm,
      .topo = dc_topo_name(m->topo),
      .driver = m->driver,
      .cuda = m->cuda,
      .nccl = m->nccl,
      .mpi = m->mpi,
      .launcher = m->launcher,
      .backend = backend,
      .git_rev = tune_git_rev(),
      .command_line = command_line,
      .thresholds = thresholds,
      .options = options,
      .seed = (int64_t)seed,
      .parent_run = parent_run,
  };
  TUNE_CHECK(tune_store_run_begin(st, &info, run_id));
  TUNE_INFO(TUNE_SWEEP, "run %" PRId64 " (%s) started", *run_id, kind);
  return tune_ok;
}

tune_result tune_engine_begin_run(tune_store *st, const tune_machine *m, const char *kind,
                                  const char *backend, const char *command_line, uint64_t seed,
                                  int64_t parent_run, const char *thresholds, int64_t *run_id) {
  return engine_begin_run(st, m, kind, backend, command_line, NULL, seed, parent_run, thresholds,
                          run_id);
}

tune_result tune_engine_store_config(tune_store *st, int64_t run_id, const tune_cfg *c, int first_trial,
                                     int trials, int warmup, const tune_samples *s,
                                     const double *slowest, int64_t *config_id) {
  size_t total = (size_t)(first_trial + trials);
  tune_config_row row = {
      .run_id = run_id,
      .impl = c->impl,
      .op = c->op,
      .path = c->path,
      .chosen_path = s->chosen_path,
      .dtype = c->dtype,
      .world = c->world,
      .bytes = c->bytes,
      .in_offset = c->in_offset,
      .out_offset = c->out_offset,
      .align = tune_cfg_align(c),
      .mode = c->mode,
      .skew_ns = c->skew_ns,
      .skew_rank = c->skew_rank,
      .trials = (int)total,
      .warmup = warmup,
      .wrong_elems = s->wrong_elems,
      .median_ns = tune_median(slowest, total),
      .p10_ns = tune_percentile(slowest, total, 10),
      .p90_ns = tune_percentile(slowest, total, 90),
  };
  if (first_trial == 0) return tune_store_put_config(st, &row, s->elapsed_ns, s->delay_ns, config_id);
  return tune_store_add_samples(st, *config_id, &row, first_trial, trials, s->elapsed_ns, s->delay_ns);
}

/* ---- measuring ----------------------------------------------------------- */

/* What is measured now, for the progress bar. */
static void engine_progress(engine *e, const tune_cfg *c) {
  char sz[32], what[96];
  snprintf(what, sizeof(what), "%s %s w%d %s %s %s", dc_op_name(c->op), dc_dtype_name(c->dtype),
           c->world, dc_align_name(tune_cfg_align(c)), dc_mode_name(c->mode),
           tune_format_size(c->bytes, sz, sizeof(sz)));
  tune_progress_note(what, e->configs_done);
}

static tune_result engine_reserve(engine *e, size_t n) {
  if (n <= e->cap) return tune_ok;
  for (int i = 0; i < ENGINE_MAX_NC; i++) {
    int64_t *el = realloc(e->elapsed[i], n * sizeof(*el));
    if (el == NULL) return tune_err_system;
    e->elapsed[i] = el;
    int64_t *de = realloc(e->delay[i], n * sizeof(*de));
    if (de == NULL) return tune_err_system;
    e->delay[i] = de;
  }
  e->cap = n;
  return tune_ok;
}

static tune_result point_grow(engine_point *pt, int trials) {
  double *sl = realloc(pt->slowest, (size_t)trials * sizeof(*sl));
  if (sl == NULL) return tune_err_system;
  pt->slowest = sl;
  return tune_ok;
}

/* The row key of c in the current run, for looking it up on resume. */
static tune_config_row engine_key(const engine *e, const tune_cfg *c) {
  tune_config_row k = {.run_id = e->run_id,
                       .impl = c->impl,
                       .op = c->op,
                       .path = c->path,
                       .dtype = c->dtype,
                       .world = c->world,
                       .bytes = c->bytes,
                       .in_offset = c->in_offset,
                       .out_offset = c->out_offset,
                       .mode = c->mode,
                       .skew_ns = c->skew_ns,
                       .skew_rank = c->skew_rank};
  return k;
}

/* Process 0's bytes of buf on every process (the backend's launcher):
 * under the mpi launcher only process 0 reads the database, and every
 * process must take the same decisions from it. */
static tune_result engine_share(engine *e, void *buf, size_t bytes) {
  return e->be->ops->share(e->be, buf, bytes);
}

/* engine_share of what process 0 read into buf, with r, the result of its
 * read, in one exchange: every process returns process 0's r, so a failed
 * read fails the job everywhere instead of leaving the others waiting in
 * the share. */
static tune_result engine_share_read(engine *e, tune_result r, void *buf, size_t bytes) {
  int64_t *both = malloc(sizeof(*both) + bytes);
  if (both == NULL) return tune_err_system;
  both[0] = (int64_t)r;
  memcpy(both + 1, buf, bytes);
  tune_result res = engine_share(e, both, sizeof(*both) + bytes);
  if (res == tune_ok) res = (tune_result)both[0];
  if (res == tune_ok) memcpy(buf, both + 1, bytes);
  else if (!e->st && both[0] != tune_ok)
    tune_error("the database's process failed to read it (%s)", tune_result_str(res));
  free(both);
  return res;
}

/* Resume: fill a fresh point from c's committed config, if there is one
 * (read by the database's process, shared with the others). */
static tune_result engine_reuse(engine *e, const tune_cfg *c, engine_point *pt) {
  tune_config_row key = engine_key(e, c);
  int64_t id = 0, *el = NULL, *de = NULL, found[2] = {0, 0};
  int trials = 0, world;
  tune_result r = tune_ok;
  if (!e->resuming) return tune_ok;
  if (e->st) {
    r = tune_store_find_config(e->st, &key, &id);
    if (r == tune_ok && id != 0) r = tune_store_get_samples(e->st, id, &trials, &world, &el, &de);
    found[0] = id;
    found[1] = trials;
  }
  r = engine_share_read(e, r, found, sizeof(found));
  if (r == tune_ok && found[0] != 0) r = point_grow(pt, (int)found[1]);
  if (r == tune_ok && found[0] != 0) {
    if (e->st) tune_slowest_per_trial(el, trials, world, pt->slowest);
    r = engine_share(e, pt->slowest, (size_t)found[1] * sizeof(*pt->slowest));
    pt->config_id = e->st ? id : 0;
    pt->trials = (int)found[1];
    e->configs_reused++;
  }
  free(el);
  free(de);
  return r;
}

/* Measure `trials` more trials of c[0..nc) together (one backend call, so
 * they alternate per trial) into pts[0..nc), and store each. A config whose
 * results were wrong is counted; callers decide what it may not be used for. */
static tune_result engine_measure(engine *e, const tune_cfg *c, int nc, engine_point *pts, int trials,
                                  dc_path *chosen, uint64_t *wrong) {
  TUNE_CHECK(engine_reserve(e, (size_t)trials * (size_t)c[0].world));
  tune_samples s[ENGINE_MAX_NC];
  int first = pts[0].trials;
  for (int i = 0; i < nc; i++) {
    if (pts[i].trials != first) return tune_err_internal;
    TUNE_CHECK(point_grow(&pts[i], first + trials));
    s[i] = (tune_samples){e->elapsed[i], e->delay[i], 0, DC_PATH_AUTO};
  }
  engine_progress(e, &c[0]);
  TUNE_CHECK(e->be->ops->measure(e->be, c, nc, first, trials, e->job->warmup, s));
  for (int i = 0; i < nc; i++) {
    tune_slowest_per_trial(s[i].elapsed_ns, trials, c[i].world, pts[i].slowest + first);
    if (e->st)
      TUNE_CHECK(tune_engine_store_config(e->st, e->run_id, &c[i], first, trials, e->job->warmup, &s[i],
                                          pts[i].slowest, &pts[i].config_id));
    pts[i].trials = first + trials;
    e->configs_done++;
    if (s[i].wrong_elems != 0)
      TUNE_WARN(TUNE_SWEEP, "%s %s %s w%d %" PRIu64 " bytes: %" PRIu64 " wrong elements", c[i].impl,
                dc_op_name(c[i].op), dc_path_name(s[i].chosen_path), c[i].world, c[i].bytes, s[i].wrong_elems);
    if (chosen) chosen[i] = s[i].chosen_path;
    if (wrong) wrong[i] = s[i].wrong_elems;
  }
  return tune_ok;
}

/* ---- groups and grids ---------------------------------------------------- */

static uint64_t gcd_u64(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Every size probed in a group is a multiple of this: whole elements, whole
 * reduce-scatter slices, 16 bytes when the group is an aligned one, else 4
 * (the regime of every power-of-two grid size; before b42dec4 dc_copy moved
 * 2 bytes at a time at 2 mod 4 bytes, 1.3 to 1.6 times slower on one H200,
 * and the bisection landed there; now as fast, and 4 bytes is resolution
 * enough), and in an aligned or registered reduce-scatter group slices of
 * whole 16-byte vectors (a reduce-scatter's alignment class is its slice's,
 * dc_align_bytes; the direct path takes no others). An aligned group and its
 * registered twin are measured together by the auto passes, so they share
 * the twin's granule: one grid, and the sweep's forced paths of both at
 * every size the auto passes measure (reg: registered, or an aligned
 * group's twin). */
uint64_t tune_engine_granule(dc_op op, dc_dtype dtype, int world, int offset, int reg) {
  const uint64_t whole = offset % 16 == 0 ? 16 : 4;
  uint64_t q = dc_dtype_size(dtype);
  if (op == DC_OP_REDUCE_SCATTER) q *= (uint64_t)world;
  q = q / gcd_u64(q, whole) * whole;
  if ((reg || whole == 16) && op == DC_OP_REDUCE_SCATTER)
    q = q / gcd_u64(q, 16 * (uint64_t)world) * 16 * (uint64_t)world;
  return q;
}

/* The granule of a group. */
static uint64_t group_granule(const engine_group *g) {
  return tune_engine_granule(g->op, g->dtype, g->world, g->offset, g->reg || g->twinned);
}

/* The impl whose paths a group sweeps. */
static const char *group_impl(const engine_group *g) { return g->reg ? "detcoll_reg" : "detcoll"; }

static uint64_t round_up(uint64_t v, uint64_t q) { return (v + q - 1) / q * q; }

static tune_cfg group_cfg(const engine_group *g, const char *impl, dc_path path, uint64_t bytes) {
  tune_cfg c = {impl, g->op, path, g->dtype, g->world, bytes, g->offset, g->offset, g->mode,
                g->skew_ns, g->skew_ns > 0 ? 0 : -1};
  return c;
}

static dc_align group_align(const engine_group *g) {
  return g->reg ? DC_ALIGN_REG : dc_align_class((uintptr_t)g->offset, (uintptr_t)g->offset, 16);
}

/* The forced paths a group sweeps: the op's, less those that need
 * registration unless the group is a registered one. */
static int group_paths(const engine_group *g, dc_path *paths) {
  dc_path all[DC_PATH_COUNT];
  int n = 0, nall = dc_op_paths(g->op, all);
  for (int i = 0; i < nall; i++)
    if (g->reg || !dc_path_needs_reg(g->op, all[i])) paths[n++] = all[i];
  return n;
}

/* The registered twin of aligned group g (NULL: none, or g is one): the
 * group right after it (engine_groups puts it there, and dropping groups
 * keeps the order). */
static const engine_group *group_twin(const engine *e, const engine_group *g) {
  const engine_group *t = g + 1;
  if (g->reg || t >= e->groups + e->ngroups || !t->reg) return NULL;
  return t->op == g->op && t->dtype == g->dtype && t->world == g->world && t->offset == g->offset &&
                 t->mode == g->mode && t->skew_ns == g->skew_ns
             ? t
             : NULL;
}

/* The coarse size grid of a group (tune_xover_grid, the sweep's own grid);
 * sizes has room for TUNE_XOVER_MAX_GRID. */
static tune_result group_grid(const tune_job *job, const engine_group *g, uint64_t *sizes, int *n) {
  return tune_xover_grid(job->min_bytes, job->max_bytes, job->grid_factor, group_granule(g), sizes, n);
}

/* Whether the job measures op in dtype d: d is the dtype op's table rows
 * are keyed by (dc_table_dtype) for a dtype asked for. all_gather is
 * measured once, as bf16, whichever dtypes are asked for: libdetcoll never
 * looks up its rows of other dtypes. */
int tune_job_measures(const tune_job *job, dc_op op, dc_dtype d) {
  for (int k = 0; k < DC_DTYPE_COUNT; k++)
    if ((job->dtypes >> k & 1) && dc_table_dtype(op, (dc_dtype)k) == d) return 1;
  return 0;
}

/* Groups in a fixed order: mode, world, op, dtype, offset, skew, and each
 * aligned group's registered twin right after it (unless job->no_reg). The
 * before and after passes measure the zero-skew groups only. */
static tune_result engine_groups(engine *e) {
  const tune_job *job = e->job;
  int nskew = job->tune_skew_ns > 0 ? 2 : 1;
  size_t cap = (size_t)DC_MODE_COUNT * TUNE_MAX_WORLDS * DC_OP_COUNT * DC_DTYPE_COUNT *
               TUNE_MAX_OFFSETS * 2 * 2;
  e->groups = calloc(cap, sizeof(*e->groups));
  if (e->groups == NULL) return tune_err_system;
  for (int m = 0; m < DC_MODE_COUNT; m++)
    for (int w = 0; w < job->nworlds; w++)
      for (int o = 0; o < DC_OP_COUNT; o++)
        for (int d = 0; d < DC_DTYPE_COUNT; d++)
          for (int f = 0; f < job->noffsets; f++)
            for (int k = 0; k < nskew; k++)
              for (int reg = 0; reg < (job->no_reg || job->offsets[f] % 16 ? 1 : 2); reg++)
                if ((job->modes >> m & 1) && (job->ops >> o & 1) && tune_job_measures(job, o, d))
                  e->groups[e->ngroups++] = (engine_group){
                      o, d, job->worlds[w], job->offsets[f], m, k ? job->tune_skew_ns : 0, reg,
                      !reg && !job->no_reg && job->offsets[f] % 16 == 0};
  return tune_ok;
}

/* Every group needs a size of its granule within min..max bytes (the
 * crossover search refuses an empty grid); checked before measuring. */
static tune_result engine_check_sizes(const engine *e) {
  const tune_job *job = e->job;
  for (int i = 0; i < e->ngroups; i++) {
    const engine_group *g = &e->groups[i];
    uint64_t q = group_granule(g);
    if (job->max_bytes / q * q >= round_up(job->min_bytes, q) && job->max_bytes <= UINT64_MAX - q) continue;
    char lo[32], hi[32];
    tune_error(
        "--min-bytes %s --max-bytes %s: %s %s world %d offset %d measures multiples of %" PRIu64
        " bytes, and none lies in that range; widen it",
        tune_format_size(job->min_bytes, lo, sizeof(lo)),
        tune_format_size(job->max_bytes, hi, sizeof(hi)), dc_op_name(g->op),
        dc_dtype_name(g->dtype), g->world, g->offset, q);
    return tune_err_arg;
  }
  return tune_ok;
}

/* Leave out the groups the backend cannot run at all (e.g. a reduction at an
 * offset that is not a whole element: libdetcoll refuses those pointers). */
static tune_result engine_drop_unsupported(engine *e) {
  int n = 0;
  for (int i = 0; i < e->ngroups; i++) {
    const engine_group *g = &e->groups[i];
    tune_cfg c = group_cfg(g, group_impl(g), DC_PATH_AUTO, group_granule(g));
    if (e->be->ops->supports(e->be, &c))
      e->groups[n++] = *g;
    else
      TUNE_WARN(TUNE_SWEEP, "left out: %s %s %s world %d offset %d (the backend cannot run it)",
                group_impl(g), dc_op_name(g->op), dc_dtype_name(g->dtype), g->world, g->offset);
  }
  e->ngroups = n;
  if (n == 0) {
    tune_error("the backend can run none of the requested configurations");
    return tune_err_arg;
  }
  return tune_ok;
}

/* ---- the passes ---------------------------------------------------------- */

/* tune_err_interrupted once SIGINT or SIGTERM has arrived. Polled before a
 * configuration (or an after-pass size) is measured, outside any
 * transaction, so a stop never splits what one commit holds. */
static tune_result engine_poll_interrupt(void) {
  return tune_interrupt_signal() ? tune_err_interrupted : tune_ok;
}

/* More trials of a paired after-pass size (auto in pts[a], the best forced
 * path in pts[best]) while the bootstrap CI of median(auto) - target *
 * median(best) straddles zero, doubling up to TUNE_REGRET_TRIALS_FACTOR
 * times --max-trials: whether a size meets the target is decided by its
 * samples, not by a noisy median. Eager medians of one kernel against
 * itself differ by over 3% at 20 trials; on one H200 with 2 virtual ranks,
 * same-path auto/best ratios at 160 trials spread by 2.5% (RMS of the log
 * ratio), and 128 of 228 eager sizes were still undecided there. Graph
 * sizes decide within 40 trials, so the extra trials land on eager sizes.
 * A miss must hold at two successive looks (tune_look_done). Every size
 * gets the same rule, whichever side its first estimate is on. */
static tune_result engine_regret_trials(engine *e, const tune_cfg *c, int nc, engine_point *pts,
                                        int a, int best, dc_path *chosen) {
  const int cap = TUNE_REGRET_TRIALS_FACTOR * e->job->max_trials;
  for (int missed = 0;;) {
    int n = pts[a].trials;
    double diff, lo, hi;
    TUNE_CHECK(tune_ci_regret(pts[a].slowest, pts[best].slowest, (size_t)n, TUNE_REGRET_TARGET,
                              e->job->confidence, e->job->seed ^ c[0].bytes ^ ((uint64_t)n << 40),
                              &diff, &lo, &hi));
    if (tune_look_done(lo, hi, n, cap, &missed)) return tune_ok;
    TUNE_CHECK(engine_measure(e, c, nc, pts, tune_look_next(n, cap) - n, chosen, NULL));
  }
}

/* The after pass's pairing of auto config a: prev, the index of the same
 * config with auto dispatch from the previous table (a itself where both
 * tables choose one path: it runs once), -1 for none; the paths the
 * backend says each table chooses. */
typedef struct {
  int prev;
  dc_path new_path, prev_path;
} engine_pairing;

/* Plan the pairing of c[a]: where the previous table chooses another path
 * than the new one, its config joins c (the same trials, alternating
 * order); where it chooses the same, the size is measured once. The
 * backend decides alike in every process, so every rank measures the same
 * configs. No previous table (a job begun by an older tune): no pairing. */
static void engine_plan_pair(engine *e, tune_cfg *c, int *nc, int a, engine_pairing *p) {
  tune_cfg prev = c[a];
  prev.impl = tune_impl_previous(c[a].impl);
  p->new_path = e->be->ops->auto_path(e->be, &c[a]);
  p->prev_path = prev.impl ? e->be->ops->auto_path(e->be, &prev) : DC_PATH_AUTO;
  if (p->new_path == DC_PATH_AUTO || p->prev_path == DC_PATH_AUTO) return;
  if (p->new_path == p->prev_path) {
    p->prev = a;
    return;
  }
  p->prev = *nc;
  c[(*nc)++] = prev;
}

/* Store the pairing of c[a] (rank 0): after / before from the same trials,
 * with a paired bootstrap CI of the ratio; a size that ran once is ratio 1.
 * A size the backend said both tables send down one path but that ran
 * another is not stored: the sameness was not what ran. */
static tune_result engine_store_pair(engine *e, const tune_cfg *c, const engine_point *pts,
                                     const dc_path *chosen, int a, const engine_pairing *p) {
  const engine_point *pn = &pts[a], *pp = &pts[p->prev];
  int shared = p->prev == a, n = pn->trials;
  if (shared && chosen[a] != p->new_path) {
    TUNE_WARN(TUNE_SWEEP,
              "%s %s w%d %" PRIu64
              " bytes: ran %s, not the %s both tables name; pairing not stored",
              c[a].impl, dc_op_name(c[a].op), c[a].world, c[a].bytes, dc_path_name(chosen[a]),
              dc_path_name(p->new_path));
    return tune_ok;
  }
  tune_pair_row row = {.run_id = e->run_id,
                       .impl = c[a].impl,
                       .op = c[a].op,
                       .dtype = c[a].dtype,
                       .world = c[a].world,
                       .bytes = c[a].bytes,
                       .in_offset = c[a].in_offset,
                       .out_offset = c[a].out_offset,
                       .align = tune_cfg_align(&c[a]),
                       .mode = c[a].mode,
                       .new_config = pn->config_id,
                       .prev_config = pp->config_id,
                       .new_path = chosen[a],
                       .prev_path = chosen[p->prev],
                       .shared = shared,
                       .trials = n,
                       .new_ns = tune_median(pn->slowest, (size_t)n),
                       .prev_ns = tune_median(pp->slowest, (size_t)n),
                       .ci_lo = 1.0,
                       .ci_hi = 1.0,
                       .confidence = e->job->confidence};
  if (!shared) {
    double ratio;
    TUNE_CHECK(tune_ci_median_ratio_paired(pp->slowest, pn->slowest, (size_t)n, e->job->confidence,
                                           e->job->seed ^ c[a].bytes ^ ((uint64_t)c[a].mode << 56),
                                           &ratio, &row.ci_lo, &row.ci_hi));
  }
  return tune_store_put_pair(e->st, &row);
}

/* Whether the auto passes leave g out: a skewed group, and a registered
 * group measured with its unregistered one, where that one is here. */
static int auto_pass_skips(const engine *e, const engine_group *g) {
  return g->skew_ns != 0 || (g->reg && g > e->groups && group_twin(e, g - 1) == g);
}

/* The sizes an auto pass measures, each with all its configs: the steps of
 * its progress. */
static tune_result engine_auto_sizes(const engine *e, uint64_t *sizes, long *total) {
  *total = 0;
  for (int i = 0; i < e->ngroups; i++) {
    const engine_group *g = &e->groups[i];
    int n;
    if (auto_pass_skips(e, g)) continue;
    TUNE_CHECK(group_grid(e->job, g, sizes, &n));
    *total += n;
  }
  return tune_ok;
}

/* A resumed run: whether rank 0's database holds the point of c[0..nc)
 * already (every rank learns it), counted as read back. */
static tune_result engine_resumed_point(engine *e, const tune_cfg *c, int nc, int *stored) {
  tune_config_row key;
  int64_t id = 0;
  *stored = 0;
  if (!e->resuming) return tune_ok;
  key = engine_key(e, &c[0]);
  TUNE_CHECK(engine_share_read(e, e->st ? tune_store_find_config(e->st, &key, &id) : tune_ok, &id,
                               sizeof(id)));
  if (id != 0) e->configs_reused += nc;
  *stored = id != 0;
  return tune_ok;
}

/* The sweep's best correct forced path of an auto config at its size. */
typedef struct {
  dc_path path;
  double median_ns; /* the sweep's; 0: the sweep has none there */
} engine_best;

/* The after pass: the sweep's best forced path of each auto config
 * c[0..nauto), read by rank 0 from the sweep run regret_of and shared, so
 * that every process measures it in the same trials. Other passes: none. */
static tune_result engine_sweep_best(engine *e, int64_t regret_of, const tune_cfg *c, int nauto,
                                     engine_best *best) {
  tune_result r = tune_ok;
  for (int a = 0; a < nauto; a++) best[a] = (engine_best){DC_PATH_AUTO, 0};
  if (!e->after_pass) return tune_ok;
  for (int a = 0; a < nauto && e->st && r == tune_ok; a++)
    r = tune_query_best_forced(e->st, regret_of, &c[a], &best[a].path, &best[a].median_ns);
  return engine_share_read(e, r, best, (size_t)nauto * sizeof(*best));
}

/* engine_auto_pass, with room for a grid in sizes. */
static tune_result engine_auto_pass_sizes(engine *e, int64_t regret_of, uint64_t *sizes) {
  long done = 0, total;
  TUNE_CHECK(engine_auto_sizes(e, sizes, &total));
  tune_progress_begin(e->phase, "sizes", total);
  for (e->group_index = 0; e->group_index < e->ngroups; e->group_index++) {
    const engine_group *g = &e->groups[e->group_index];
    if (auto_pass_skips(e, g)) continue;
    const engine_group *twin = group_twin(e, g);
    const engine_group *ag[ENGINE_MAX_AUTO] = {g, twin};
    int nauto = twin ? 2 : 1;
    int n;
    TUNE_CHECK(group_grid(e->job, g, sizes, &n));
    for (int i = 0; i < n; i++) {
      tune_progress_step(done++, e->configs_done);
      TUNE_CHECK(engine_poll_interrupt());
      tune_cfg c[ENGINE_MAX_NC];
      int nc = 0;
      for (int a = 0; a < nauto; a++)
        c[nc++] = group_cfg(ag[a], group_impl(ag[a]), DC_PATH_AUTO, sizes[i]);
      for (size_t b = 0; b < sizeof(engine_baselines) / sizeof(engine_baselines[0]); b++) {
        tune_cfg nccl = group_cfg(g, engine_baselines[b], DC_PATH_AUTO, sizes[i]);
        if (e->be->ops->supports(e->be, &nccl)) c[nc++] = nccl;
      }
      engine_pairing pair[ENGINE_MAX_AUTO] = {{-1, DC_PATH_AUTO, DC_PATH_AUTO},
                                              {-1, DC_PATH_AUTO, DC_PATH_AUTO}};
      for (int a = 0; a < nauto && e->after_pass; a++) engine_plan_pair(e, c, &nc, a, &pair[a]);
      int stored = 0;
      TUNE_CHECK(engine_resumed_point(e, c, nc, &stored));
      if (stored) continue;
      engine_best best[ENGINE_MAX_AUTO];
      int paired[ENGINE_MAX_AUTO] = {0, 0};
      TUNE_CHECK(engine_sweep_best(e, regret_of, c, nauto, best));
      for (int a = 0; a < nauto; a++)
        if (best[a].median_ns > 0) {
          paired[a] = nc;
          c[nc++] = group_cfg(ag[a], group_impl(ag[a]), best[a].path, sizes[i]);
        }
      engine_point pts[ENGINE_MAX_NC] = {{0}};
      dc_path chosen[ENGINE_MAX_NC];
      tune_result r = tune_ok;
      if (e->st) TUNE_CHECK(tune_store_begin(e->st));
      TUNE_CHECK_GOTO(engine_measure(e, c, nc, pts, e->job->trials, chosen, NULL), r, done);
      for (int a = 0; a < nauto; a++)
        if (paired[a])
          TUNE_CHECK_GOTO(engine_regret_trials(e, c, nc, pts, a, paired[a], chosen), r, done);
      for (int a = 0; a < nauto && e->st; a++)
        if (pair[a].prev >= 0)
          TUNE_CHECK_GOTO(engine_store_pair(e, c, pts, chosen, a, &pair[a]), r, done);
      for (int a = 0; a < nauto && e->st; a++) {
        if (!paired[a]) continue;
        double auto_ns = tune_median(pts[a].slowest, (size_t)pts[a].trials);
        double best_ns = tune_median(pts[paired[a]].slowest, (size_t)pts[paired[a]].trials);
        tune_regret_row rr = {e->run_id,          g->op,   g->dtype, g->world,
                              group_align(ag[a]), g->mode, sizes[i], chosen[a],
                              best[a].path,       auto_ns, best_ns};
        TUNE_CHECK_GOTO(tune_store_put_regret(e->st, &rr), r, done);
      }
      if (e->st) r = tune_store_commit(e->st);
    done:
      if (r != tune_ok && e->st) tune_store_rollback(e->st);
      for (int k = 0; k < nc; k++) free(pts[k].slowest);
      TUNE_CHECK(r);
    }
  }
  tune_progress_step(done, e->configs_done);
  tune_progress_end();
  return tune_ok;
}

/* The before and after passes: detcoll's auto dispatch at every grid size of
 * every zero-skew group -- an aligned group together with its registered
 * twin (detcoll and detcoll_reg on the same buffers, at the twin's grid) --
 * with each NCCL flavour the backend supports there measured in the same
 * trials. In the after pass (regret_of: the sweep run, on rank 0) the
 * sweep's best correct forced path of each auto at that size (of its own
 * impl) is measured in the same trials too, on every launcher (with more
 * trials while undecided, engine_regret_trials), and regret = auto / that
 * path, both from this pass. A size's configs and regrets go in one
 * transaction, so a resumed pass skips a size exactly when it has them
 * all. */
static tune_result engine_auto_pass(engine *e, int64_t regret_of) {
  uint64_t *sizes = malloc(TUNE_XOVER_MAX_GRID * sizeof(*sizes));
  if (sizes == NULL) return tune_err_system;
  tune_result r = engine_auto_pass_sizes(e, regret_of, sizes);
  free(sizes);
  return r;
}

typedef struct {
  engine *e;
  const engine_group *g;
} sweep_ctx;

/* A path this much slower than the best at two coarse sizes in a row is not
 * measured at larger ones (a single block at 256 MiB costs seconds a trial). */
static const double engine_prune_ratio = 4.0;

/* A latency the crossover search can never prefer: what a path whose
 * results were wrong, or a size beyond the path's limit, reports, so it
 * never gets a threshold segment there. */
static const double engine_wrong_ns = 1e15;

/* The sweep's point of (path, bytes) in the current group, in e->points
 * (its index; a new one takes the trials a killed job committed). */
static tune_result sweep_point(engine *e, const tune_cfg *c, size_t *index) {
  size_t i = 0;
  while (i < e->npoints && !(e->points[i].path == c->path && e->points[i].bytes == c->bytes)) i++;
  if (i == e->npoints) {
    TUNE_CHECK(tune_grow((void **)&e->points, &e->points_cap, e->npoints, sizeof(*e->points), 256));
    e->points[e->npoints++] = (engine_point){c->path, c->bytes, 0, 0, 0, NULL};
    TUNE_CHECK(engine_reuse(e, c, &e->points[i]));
  }
  *index = i;
  return tune_ok;
}

/* The search's next ntrials samples of point pt into out (a path whose
 * results were wrong loses: engine_wrong_ns). */
static void sweep_hand_out(engine_point *pt, uint64_t wrong, int ntrials, double *out) {
  for (int t = 0; t < ntrials; t++) out[t] = wrong ? engine_wrong_ns : pt->slowest[pt->given + t];
  pt->given += ntrials;
}

static tune_result sweep_measure(void *ctx, dc_path path, uint64_t bytes, int ntrials, double *out) {
  sweep_ctx *s = ctx;
  engine *e = s->e;
  if (bytes > dc_path_max_bytes(s->g->op, path)) {
    /* Beyond what the path takes at all: it loses there, unmeasured. */
    for (int t = 0; t < ntrials; t++) out[t] = engine_wrong_ns;
    return tune_ok;
  }
  tune_cfg c = group_cfg(s->g, group_impl(s->g), path, bytes);
  size_t pi;
  TUNE_CHECK(sweep_point(e, &c, &pi));
  engine_point *pt = &e->points[pi];
  uint64_t wrong = 0;
  if (pt->trials < pt->given + ntrials) {
    TUNE_CHECK(engine_poll_interrupt());
    TUNE_CHECK(engine_measure(e, &c, 1, pt, pt->given + ntrials - pt->trials, NULL, &wrong));
  } else {
    TUNE_CHECK(engine_share_read(
        e, pt->config_id != 0 ? tune_query_wrong(e->st, pt->config_id, &wrong) : tune_ok, &wrong,
        sizeof(wrong)));
  }
  sweep_hand_out(pt, wrong, ntrials, out);
  return tune_ok;
}

/* Measure the k sweep points e->points[at[i]] (configs c[i], every one at
 * the same trial) for ntrials more trials together, alternating per trial
 * (engine_measure), into dst[i][0..ntrials). */
static tune_result sweep_measure_joint(engine *e, const tune_cfg *c, const size_t *at,
                                       double *const *dst, int k, int ntrials) {
  engine_point pts[ENGINE_MAX_NC];
  uint64_t wrong[ENGINE_MAX_NC];
  for (int i = 0; i < k; i++) pts[i] = e->points[at[i]];
  TUNE_CHECK(engine_poll_interrupt());
  tune_result r = engine_measure(e, c, k, pts, ntrials, NULL, wrong);
  for (int i = 0; i < k; i++) e->points[at[i]] = pts[i]; /* slowest may have moved */
  TUNE_CHECK(r);
  for (int i = 0; i < k; i++) sweep_hand_out(&e->points[at[i]], wrong[i], ntrials, dst[i]);
  return tune_ok;
}

/* The search's measure_set: the paths at bytes, ntrials more trials each.
 * Those whose points must be measured from the same trial on are measured
 * together, ENGINE_MAX_NC at a time (sweep_measure_joint); a path beyond
 * its limit, or whose trials a killed job committed already, goes alone
 * (sweep_measure). */
static tune_result sweep_measure_set(void *ctx, const dc_path *paths, int np, uint64_t bytes,
                                     int ntrials, double *const *out) {
  sweep_ctx *s = ctx;
  engine *e = s->e;
  tune_cfg c[ENGINE_MAX_NC];
  size_t at[ENGINE_MAX_NC];
  double *dst[ENGINE_MAX_NC];
  int k = 0;
  for (int i = 0; i < np; i++) {
    tune_cfg ci = group_cfg(s->g, group_impl(s->g), paths[i], bytes);
    size_t pi = 0;
    int alone = bytes > dc_path_max_bytes(s->g->op, paths[i]);
    if (!alone) TUNE_CHECK(sweep_point(e, &ci, &pi));
    if (alone || e->points[pi].trials != e->points[pi].given ||
        (k > 0 && e->points[pi].trials != e->points[at[0]].trials)) {
      TUNE_CHECK(sweep_measure(ctx, paths[i], bytes, ntrials, out[i]));
      continue;
    }
    if (k == ENGINE_MAX_NC) {
      TUNE_CHECK(sweep_measure_joint(e, c, at, dst, k, ntrials));
      k = 0;
    }
    c[k] = ci;
    at[k] = pi;
    dst[k++] = out[i];
  }
  return k > 0 ? sweep_measure_joint(e, c, at, dst, k, ntrials) : tune_ok;
}

static void engine_points_clear(engine *e) {
  for (size_t i = 0; i < e->npoints; i++) free(e->points[i].slowest);
  e->npoints = 0;
}

/* The row of the job's previous table (e->prev) that decides g's sizes on
 * this machine (its own key: a row of another world size or skew only
 * stands in), or NULL: the crossover search keeps its paths unless beaten
 * by more than the regret target (issue 14). */
static const dc_threshold_row *engine_incumbent(const engine *e, const engine_group *g) {
  const dc_threshold_row *r =
      dc_table_find(e->prev, e->nprev, e->mach.sm, g->world, e->mach.topo, g->op, g->dtype,
                    group_align(g), g->mode, g->skew_ns);
  return r != NULL && r->world == g->world && r->skew_ns == g->skew_ns ? r : NULL;
}

/* The crossover search of group g (the index-th), measured by measure(ctx),
 * into xo and row: the one search of the sweep and of tune fleet's
 * consensus. Both keep the incumbent row (issue 14) unless --no-incumbent. */
static tune_result engine_search(const engine *e, const engine_group *g, int index,
                                 tune_measure_fn measure, tune_measure_set_fn measure_set, void *ctx,
                                 tune_xover *xo, int *nxo, dc_threshold_row *row) {
  dc_path paths[DC_PATH_COUNT];
  tune_xover_search s = {
      .measure = measure,
      .measure_set = measure_set,
      .ctx = ctx,
      .paths = paths,
      .npaths = group_paths(g, paths),
      .min_bytes = e->job->min_bytes,
      .max_bytes = e->job->max_bytes,
      .grid_factor = e->job->grid_factor,
      .granule = group_granule(g),
      .resolution = e->job->resolution,
      .trials = e->job->trials,
      .max_trials = e->job->max_trials,
      .confidence = e->job->confidence,
      .seed = e->job->seed + (uint64_t)index,
      .prune_ratio = engine_prune_ratio,
      .tolerance = TUNE_REGRET_TARGET,
      .incumbent = e->job->no_incumbent ? NULL : engine_incumbent(e, g),
  };
  *row = (dc_threshold_row){.sm = e->mach.sm,
                            .world = g->world,
                            .topo = e->mach.topo,
                            .op = g->op,
                            .dtype = g->dtype,
                            .align = group_align(g),
                            .mode = g->mode,
                            .skew_ns = g->skew_ns};
  return tune_xover_find(&s, xo, DC_MAX_SEGMENTS, nxo, row->seg, &row->nseg);
}

/* The sweep: per group, the crossover search over the forced paths, its
 * crossovers stored, and the group's header row. */
static tune_result engine_sweep(engine *e, dc_threshold_row *rows) {
  tune_progress_begin("sweep", "groups", e->ngroups);
  for (e->group_index = 0; e->group_index < e->ngroups; e->group_index++) {
    const engine_group *g = &e->groups[e->group_index];
    tune_progress_step(e->group_index, e->configs_done);
    sweep_ctx ctx = {e, g};
    tune_xover xo[DC_MAX_SEGMENTS];
    int nxo = 0;
    dc_threshold_row *row = &rows[e->group_index];
    tune_result r = engine_search(e, g, e->group_index, sweep_measure, sweep_measure_set, &ctx, xo,
                                  &nxo, row);
    engine_points_clear(e);
    TUNE_CHECK(r);
    /* A resumed sweep finds the same crossovers again from the same samples;
     * a group's crossovers go in one transaction, so any stored means all. */
    int stored = 0;
    if (e->st && e->resuming)
      TUNE_CHECK(tune_query_has_crossovers(e->st, e->run_id, g->op, g->dtype, g->world, row->align, g->mode,
                                           g->skew_ns, &stored));
    if (e->st && !stored) {
      TUNE_CHECK(tune_store_begin(e->st));
      for (int i = 0; i < nxo && r == tune_ok; i++) {
        tune_crossover_row x = {e->run_id, g->op, g->dtype, g->world, row->align, g->mode, g->skew_ns,
                                xo[i].below, xo[i].above, xo[i].bytes, xo[i].lo_bytes, xo[i].hi_bytes,
                                xo[i].diff_ns, xo[i].ci_lo_ns, xo[i].ci_hi_ns, xo[i].confidence,
                                xo[i].decided};
        r = tune_store_put_crossover(e->st, &x);
      }
      if (r == tune_ok) r = tune_store_commit(e->st);
      if (r != tune_ok) tune_store_rollback(e->st);
      TUNE_CHECK(r);
    }
  }
  tune_progress_step(e->ngroups, e->configs_done);
  tune_progress_end();
  return tune_ok;
}

/* ---- header, rebuild, report --------------------------------------------- */

/* The group a header row was swept from (rows are sorted, groups are not);
 * NULL for a row kept from the previous table. */
static const engine_group *engine_row_group(const engine *e, const dc_threshold_row *r) {
  if (r->sm != e->mach.sm || r->topo != e->mach.topo) return NULL;
  for (int i = 0; i < e->ngroups; i++) {
    const engine_group *g = &e->groups[i];
    if (g->op == r->op && g->dtype == r->dtype && g->world == r->world && g->mode == r->mode &&
        group_align(g) == r->align && g->skew_ns == r->skew_ns)
      return g;
  }
  return NULL;
}

/* Print the crossovers of the header rows; for sim runs, beside the model's
 * true ones. */
static void engine_print_crossovers(engine *e, const dc_threshold_row *rows, size_t nrows) {
  int sim = strcmp(e->job->backend, "sim") == 0;
  printf("\ncrossovers (%s)%s\n", e->job->backend,
         sim ? ": found by the sweep, and the sim model's true crossover" : "");
  printf("%-15s %-5s %5s %-9s %-6s %-27s %12s %12s\n", "op", "dtype", "world", "align", "mode",
         "below -> above", "found", sim ? "true" : "");
  for (size_t i = 0; i < nrows; i++) {
    const dc_threshold_row *r = &rows[i];
    const engine_group *g = engine_row_group(e, r);
    if (g == NULL) continue; /* kept from the previous table, not measured */
    for (int k = 0; k + 1 < r->nseg; k++) {
      char pair[64];
      snprintf(pair, sizeof(pair), "%s -> %s", dc_path_name(r->seg[k].path), dc_path_name(r->seg[k + 1].path));
      printf("%-15s %-5s %5d %-9s %-6s %-27s %12" PRIu64, dc_op_name(r->op), dc_dtype_name(r->dtype), r->world,
             dc_align_name(r->align), dc_mode_name(r->mode), pair, r->seg[k].max_bytes);
      if (sim && r->skew_ns == 0) {
        tune_cfg c = group_cfg(g, group_impl(g), DC_PATH_AUTO, 0);
        uint64_t t = tune_sim_true_crossover(&c, r->seg[k].path, r->seg[k + 1].path, 1,
                                             e->job->max_bytes);
        if (t == 0)
          printf(" %12s", "none");
        else
          printf(" %12" PRIu64, t);
      }
      if (r->skew_ns) printf("  (skew %" PRId64 " ns)", r->skew_ns);
      printf("\n");
    }
  }
}

/* Where the header goes, and whether that installs it as the source tree's
 * kernels/thresholds.h (an installed tune knows no source tree: its header
 * goes beside the database unless --header names a file); refuses to let a sim run install it without
 * --allow-sim, and a header that is the database. Checked before measuring. */
static tune_result engine_header_path(const tune_job *job, char *out, size_t len, int *installs) {
  char installed[PATH_MAX] = "";
  if (job->srcdir) snprintf(installed, sizeof(installed), "%s/kernels/thresholds.h", job->srcdir);
  int sim = strcmp(job->backend, "sim") == 0, beside_db = 0;
  char d[PATH_MAX];
  struct stat sb;
  if (job->header_path != NULL) {
    snprintf(out, len, "%s", job->header_path);
  } else if (job->srcdir && (!sim || job->allow_sim)) {
    snprintf(out, len, "%s", installed);
  } else {
    snprintf(d, sizeof(d), "%s", job->db_path);
    snprintf(out, len, "%s/thresholds.h", dirname(d));
    beside_db = 1;
  }
  const char *what = job->header_path ? "--header" : "the thresholds header";
  char dbdir[PATH_MAX], hdir[PATH_MAX];
  TUNE_CHECK(tune_check_output(what, out, job->db_path));
  snprintf(d, sizeof(d), "%s", job->db_path);
  snprintf(dbdir, sizeof(dbdir), "%s", dirname(d));
  snprintf(d, sizeof(d), "%s", out);
  snprintf(hdir, sizeof(hdir), "%s", dirname(d));
  if (tune_same_file(out, dbdir)) {
    tune_error("%s %s is the database's folder; give the header a file's name", what, out);
    return tune_err_arg;
  }
  /* In the database's folder, the header's folder may not exist yet: it is
   * made with the database's (tune_engine_open_store), so it must be
   * makeable. */
  if ((beside_db || tune_same_file(hdir, dbdir)) && stat(hdir, &sb) != 0)
    TUNE_CHECK(tune_check_writable("--db", hdir, 1));
  else
    TUNE_CHECK(tune_check_writable(what, out, 0));
  *installs = job->srcdir != NULL && tune_same_file(out, installed);
  if (sim && !job->allow_sim && *installs) {
    tune_error("refusing to install simulated thresholds as %s; pass --allow-sim to do it anyway", out);
    return tune_err_arg;
  }
  return tune_ok;
}

/* Append to all[0..*n) the rows of add[0..nadd) whose keys it lacks,
 * leaving out rows libdetcoll never looks up (all_gather's rows of a dtype
 * other than bf16, which tables before dc_table_dtype held). */
static void merge_missing(dc_threshold_row *all, size_t *n, const dc_threshold_row *add, size_t nadd) {
  for (size_t i = 0, have = *n; i < nadd; i++) {
    if (add[i].dtype != dc_table_dtype(add[i].op, add[i].dtype)) continue;
    size_t k = 0;
    while (k < have && !dc_row_same_key(&all[k], &add[i])) k++;
    if (k == have) all[(*n)++] = add[i];
  }
}

/* The new rows plus every row of the previous table this job did not
 * measure (other topologies, world sizes, SM generations), then every row
 * of the compiled-in table neither holds (a DC_THRESHOLDS_FILE of a few
 * rows): a retune on one machine refines the table without dropping what
 * other machines need. Returns a malloc'd array of *n rows. */
static dc_threshold_row *engine_merge_rows(const engine *e, const dc_threshold_row *rows,
                                           size_t nrows, size_t *n) {
  dc_threshold_row *all = malloc((nrows + e->nprev + dc_builtin_thresholds_count) * sizeof(*all));
  if (all == NULL) return NULL;
  memcpy(all, rows, nrows * sizeof(*all));
  *n = nrows;
  merge_missing(all, n, e->prev, e->nprev);
  merge_missing(all, n, dc_builtin_thresholds, dc_builtin_thresholds_count);
  return all;
}

/* The end of a job that installs its header: the header of the sweep, as
 * stored, written at e->header (the source tree's kernels/thresholds.h) --
 * the only write into the source tree, once the after pass has measured
 * the table -- whatever replaced the file meanwhile. Also the end of a
 * resumed job whose sweep an earlier process finished (not installing):
 * its header goes where this job's goes (the database, or --header, may
 * have moved). */
static tune_result engine_install_header(engine *e, int64_t sweep) {
  char *text = NULL;
  TUNE_CHECK(tune_query_header_text(e->st, sweep, &text));
  tune_result r = tune_emit_write(e->header, text);
  free(text);
  /* The report names the header where it is now, not where the sweep's
   * process wrote it. */
  if (r == tune_ok) r = tune_store_place_header(e->st, sweep, e->header, e->installs);
  if (r == tune_ok)
    printf("thresholds header %s: %s (header of run %" PRId64 ")\n",
           e->installs ? "installed" : "written", e->header, sweep);
  return r;
}

/* Stores the header -- this job's rows merged into the compiled-in table --
 * with its rows, and writes it at e->header unless it installs there (then
 * the end of the job does, engine_install_header). */
static tune_result engine_write_header(engine *e, const dc_threshold_row *measured) {
  const char *path = e->header;
  const int installs = e->installs;
  char date[32];
  tune_utc_iso(date, sizeof(date));
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
      .git_rev = tune_git_rev(),
      .tune_version = PACKAGE_VERSION,
  };
  char *text = NULL;
  tune_result res;
  size_t nrows;
  dc_threshold_row *rows = engine_merge_rows(e, measured, (size_t)e->ngroups, &nrows);
  if (rows == NULL) return tune_err_system;
  tune_emit_sort(rows, nrows);
  TUNE_CHECK_GOTO(tune_emit_header(rows, nrows, &prov, &text), res, out);
  if (!installs) TUNE_CHECK_GOTO(tune_emit_write(path, text), res, out);
  e->header_written = !installs;
  int64_t header_id;
  TUNE_CHECK_GOTO(tune_store_put_header(e->st, e->run_id, path, strcmp(e->job->backend, "sim") == 0,
                                        installs, text, rows, nrows, &header_id),
                  res, out);
  printf("thresholds header%s: %s (header %" PRId64 ", %zu rows measured, %zu kept from the previous table)\n",
         installs ? " (installed at the end of the job)" : "", path, header_id, (size_t)e->ngroups,
         nrows - (size_t)e->ngroups);
out:
  free(rows);
  free(text);
  return res;
}

/* Run argv (a program on PATH) and wait; tune_ok only for exit status 0. */
static tune_result engine_spawn(char *const *argv) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    tune_error("cannot start %s: %s", argv[0], strerror(errno));
    return tune_err_system;
  }
  if (pid == 0) {
    execvp(argv[0], argv);
    fprintf(stderr, "tune: error: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return tune_err_system;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    tune_error("%s failed (status %d)", argv[0], WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return tune_err_system;
  }
  return tune_ok;
}

/* Whether a word of the command line is --resume, with or without its run. */
static int engine_is_resume_arg(const char *a) {
  return strcmp(a, "--resume") == 0 || strncmp(a, "--resume=", 9) == 0;
}

/* Run argv and read the first line it prints into line; tune_ok only for
 * exit status 0. */
static tune_result engine_spawn_line(char *const *argv, char *line, size_t len) {
  int fd[2];
  if (pipe(fd) != 0) return tune_err_system;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], 1);
    close(fd[0]);
    close(fd[1]);
    execv(argv[0], argv);
    _exit(127);
  }
  close(fd[1]);
  FILE *f = pid > 0 ? fdopen(fd[0], "r") : NULL;
  line[0] = '\0';
  if (f != NULL) {
    if (fgets(line, (int)len, f) != NULL) line[strcspn(line, "\n")] = '\0';
    while (fgetc(f) != EOF) continue;
    fclose(f);
  } else {
    close(fd[0]);
  }
  int status = 0;
  while (pid > 0 && waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return tune_err_system;
  if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    tune_error("%s failed", argv[0]);
    return tune_err_system;
  }
  return tune_ok;
}

/* The end of a job that installed its header in the build's source tree:
 * rebuild libdetcoll and tune against it, and check that the table the
 * rebuilt tune compiles in is the one the after pass measured (hash). */
static tune_result engine_rebuild(const tune_job *job, uint64_t measured) {
  char *make[] = {"make", "-s", "-C", (char *)job->build_dir, NULL};
  char exe[PATH_MAX], got[64], want[32];
  printf("rebuilding libdetcoll and tune in %s against the new thresholds\n", job->build_dir);
  tune_progress_begin("rebuild", NULL, 0);
  TUNE_CHECK(engine_spawn(make));
  tune_progress_stop();
  snprintf(exe, sizeof(exe), "%s/src/tune", job->build_dir);
  char *table[] = {exe, "table", "--hash", NULL};
  TUNE_CHECK(engine_spawn_line(table, got, sizeof(got)));
  snprintf(want, sizeof(want), "%016" PRIx64, measured);
  if (strcmp(got, want) != 0) {
    tune_error("the rebuilt %s compiles in table %s, not the table %s the after pass measured", exe, got, want);
    return tune_err_internal;
  }
  printf("the rebuilt libdetcoll compiles in the table the after pass measured (%s)\n", want);
  return tune_ok;
}

static int engine_cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* The command line without its program name and --resume: a resumed job
 * must be the same job. */
static void normalize_cmdline(const char *in, char *out, size_t len) {
  const char *p = strchr(in, ' ');
  size_t n = 0;
  out[0] = '\0';
  for (p = p ? p + 1 : ""; *p && n + 1 < len;) {
    const char *sp = strchr(p, ' ');
    size_t w = sp ? (size_t)(sp - p) : strlen(p);
    if (!(w >= 8 && strncmp(p, "--resume", 8) == 0 && (w == 8 || p[8] == '=')))
      n += (size_t)snprintf(out + n, len - n, "%s%.*s", n ? " " : "", (int)w, p);
    p += w;
    while (*p == ' ') p++;
  }
}

/* The options that make a main job what it is, in one canonical text:
 * what --resume must repeat. Where the outputs go (database, header, report)
 * is left out, so a moved database or a relative path still resumes; lists
 * are sets, so their order is left out too. */
static void engine_options(const tune_job *job, char *out, size_t len) {
  int w[TUNE_MAX_WORLDS], o[TUNE_MAX_OFFSETS];
  size_t n = 0;
  memcpy(w, job->worlds, sizeof(w));
  memcpy(o, job->offsets, sizeof(o));
  qsort(w, (size_t)job->nworlds, sizeof(int), engine_cmp_int);
  qsort(o, (size_t)job->noffsets, sizeof(int), engine_cmp_int);
  n += (size_t)snprintf(
      out + n, len - n,
      "backend=%s gpus=%d launcher=%s virtual_ranks=%d graph_calls=%d ops=%#x dtypes=%#x"
      " modes=%#x worlds=",
      job->backend, job->gpus, job->launcher ? job->launcher : "-", job->virtual_ranks,
      job->graph_calls, job->ops, job->dtypes, job->modes);
  for (int i = 0; i < job->nworlds && n < len; i++)
    n += (size_t)snprintf(out + n, len - n, "%s%d", i ? "," : "", w[i]);
  if (n < len) n += (size_t)snprintf(out + n, len - n, " offsets=");
  for (int i = 0; i < job->noffsets && n < len; i++)
    n += (size_t)snprintf(out + n, len - n, "%s%d", i ? "," : "", o[i]);
  if (n < len)
    snprintf(out + n, len - n,
             " bytes=%" PRIu64 "..%" PRIu64
             " grid=%.17g resolution=%.17g confidence=%.17g trials=%d..%d"
             " warmup=%d seed=%" PRIu64 " tune_skew_ns=%" PRId64 " no_reg=%d",
             job->min_bytes, job->max_bytes, job->grid_factor, job->resolution, job->confidence,
             job->trials, job->max_trials, job->warmup, job->seed, job->tune_skew_ns, job->no_reg);
  n = strlen(out);
  if (job->no_incumbent && n < len) snprintf(out + n, len - n, " no_incumbent=1");
}

/* Whether the chain ch was started by a job with these options. A chain
 * from before runs.options existed is matched by its command line. */
static int engine_same_job(const engine *e, const tune_chain *ch) {
  if (ch->has_options) return strcmp(ch->options, e->options) == 0;
  char a[4096], b[4096];
  normalize_cmdline(ch->command_line, a, sizeof(a));
  normalize_cmdline(e->job->command_line, b, sizeof(b));
  return strcmp(a, b) == 0;
}

/* Whether ch, a finished job of these options that installs its header,
 * was stopped after its after pass and before its end. Stopped before the
 * install (in the report): the header where it installs is missing, or
 * still holds the table the job began with (stored with its before run)
 * or the one this tune compiles in, the tree as it was built. Stopped in
 * the rebuild: it holds the job's own table, which this tune, with a build
 * to rebuild, does not compile in. --resume then finishes it: the report,
 * the install, the rebuild and the summary, measuring nothing. A third
 * table there (another job's, a hand edit) leaves the job finished, the
 * file alone; so does the job's own table where there is no build. */
static int engine_uninstalled(engine *e, const tune_chain *ch) {
  dc_threshold_row *began = NULL, *own = NULL, *there = NULL;
  size_t nbegan = 0, nown = 0, nthere = 0;
  char why[512];
  struct stat sb;
  int r = e->installs && ch->after_done && ch->sweep_done && engine_same_job(e, ch) &&
          tune_query_previous_table(e->st, ch->before, &began, &nbegan) == tune_ok && nbegan > 0 &&
          tune_query_header_rows(e->st, ch->sweep, &own, &nown) == tune_ok;
  if (r) {
    const uint64_t b = dc_table_hash(began, nbegan), o = dc_table_hash(own, nown),
                   built = dc_table_hash(dc_builtin_thresholds, dc_builtin_thresholds_count);
    if (lstat(e->header, &sb) != 0 && errno == ENOENT) {
      r = 1;
    } else if (dc_table_read_file(e->header, &there, &nthere, why, sizeof(why)) != 0) {
      r = 0;
    } else {
      const uint64_t t = dc_table_hash(there, nthere);
      r = t == o ? e->job->build_dir != NULL && built != o : t == b || t == built;
    }
  }
  free(began);
  free(own);
  free(there);
  if (r)
    printf("the main job of run %" PRId64 " measured all it had to, but stopped before its table was installed"
           " at %s and compiled in: finishing it (report, install, rebuild)\n",
           ch->before, e->header);
  return r;
}

/* --resume: the newest unfinished main job started with these options, or
 * the newest finished one stopped before its install (engine_uninstalled);
 * a finished or different job is a clear refusal. */
static tune_result engine_find_resumable(engine *e, tune_chain *ch) {
  const tune_job *job = e->job;
  tune_chain c, finished = {0}, other = {0};
  for (int64_t below = 0;; below = c.before) {
    TUNE_CHECK(tune_query_chain_below(e->st, below, &c));
    if (c.before == 0) break;
    if (c.after_done) {
      if (finished.before == 0 && engine_uninstalled(e, &c)) {
        *ch = c;
        return tune_ok;
      }
      if (finished.before == 0) finished = c;
    } else if (engine_same_job(e, &c)) {
      *ch = c;
      return tune_ok;
    } else if (other.before == 0) {
      other = c;
    }
  }
  if (other.before != 0) {
    tune_error(
        "--resume must repeat the options of the job it resumes: no unfinished main job in %s has"
        " these options (the newest unfinished one, run %" PRId64 ", ran '%s')",
        job->db_path, other.before, other.command_line);
  } else if (finished.before != 0) {
    tune_error("every main job in %s has finished; nothing to resume (the newest is runs %" PRId64
               " and %" PRId64 "; to draw its report again: tune report --db %s --before %" PRId64
               " --after %" PRId64 ")",
               job->db_path, finished.before, finished.after, job->db_path, finished.before,
               finished.after);
  } else {
    tune_error("%s holds no main job to resume", job->db_path);
  }
  return tune_err_arg;
}

/* --resume=RUN: the job RUN belongs to -- RUN is its before run or the
 * sweep or after run naming it as parent -- if that job is unfinished and
 * was started with these options; anything else is a clear refusal. */
static tune_result engine_find_run(engine *e, tune_chain *ch) {
  const tune_job *job = e->job;
  int64_t run = job->resume_run, parent;
  char kind[16];
  TUNE_CHECK(tune_query_run_kind(e->st, run, kind, sizeof(kind), &parent));
  if (kind[0] == '\0') {
    tune_error("--resume=%" PRId64 ": %s has no run %" PRId64 "; nothing to resume", run,
               job->db_path, run);
    return tune_err_arg;
  }
  int64_t before = strcmp(kind, "before") == 0 ? run : parent;
  if (strcmp(kind, "before") != 0 && strcmp(kind, "sweep") != 0 && strcmp(kind, "after") != 0) {
    tune_error("--resume=%" PRId64 ": run %" PRId64
               " is a run of kind %s, not of a main job (before, sweep or after); nothing to resume",
               run, run, kind);
    return tune_err_arg;
  }
  if (before == 0) {
    tune_error("--resume=%" PRId64 ": %s run %" PRId64
               " names no before run of its job; the database was changed outside tune",
               run, kind, run);
    return tune_err_arg;
  }
  TUNE_CHECK(tune_query_chain(e->st, before, ch));
  if (ch->after_done && !engine_uninstalled(e, ch)) {
    tune_error("--resume=%" PRId64 ": the main job of run %" PRId64 " has finished (runs %" PRId64
               " and %" PRId64
               "); nothing to resume (to draw its report again: tune report --db %s"
               " --before %" PRId64 " --after %" PRId64 ")",
               run, before, ch->before, ch->after, job->db_path, ch->before, ch->after);
    return tune_err_arg;
  }
  if (!engine_same_job(e, ch)) {
    tune_error("--resume=%" PRId64 ": the main job of run %" PRId64
               " was started with other options ('%s'); --resume must repeat them",
               run, before, ch->command_line);
    return tune_err_arg;
  }
  return tune_ok;
}

/* Append s to out as one shell word: single-quoted unless it is plain.
 * Returns 0, leaving out as it was, where the whole word does not fit. */
static int shell_word(char *out, size_t len, const char *s) {
  static const char plain_chars[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./,=:+-@%";
  int plain = *s != '\0' && strspn(s, plain_chars) == strlen(s);
  size_t start = strlen(out), n = start;
  if (start + 3 > len) return 0;
  if (n) out[n++] = ' ';
  if (!plain) out[n++] = '\'';
  for (; *s && n + 5 < len; s++) {
    if (*s == '\'') {
      memcpy(out + n, "'\\''", 4);
      n += 4;
    } else {
      out[n++] = *s;
    }
  }
  if (!plain) out[n++] = '\'';
  if (*s || n >= len) {
    out[start] = '\0';
    return 0;
  }
  out[n] = '\0';
  return 1;
}

/* Append to out the environment the job depends on, as NAME=VALUE words:
 * DC_THRESHOLDS_FILE (the table the before pass measures), DC_PDL (how
 * libdetcoll launches) and every TUNE_ variable (option defaults, the
 * source and build trees the ./tune script names, the sim's knobs) but
 * TUNE_SIM_PAUSE_AFTER, which stops a job. */
static void engine_resume_env(char *out, size_t len) {
  extern char **environ;
  for (char **v = environ; v && *v; v++) {
    const char *eq = strchr(*v, '=');
    int name_len = eq ? (int)(eq - *v) : 0;
    if (name_len == 0 || strspn(*v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != (size_t)name_len ||
        strncmp(*v, "TUNE_SIM_PAUSE_AFTER=", 21) == 0 ||
        (strncmp(*v, "TUNE_", 5) != 0 && strncmp(*v, "DC_PDL=", 7) != 0 &&
         strncmp(*v, DC_THRESHOLDS_FILE_ENV "=", sizeof(DC_THRESHOLDS_FILE_ENV)) != 0))
      continue;
    char value[PATH_MAX + 8] = "";
    size_t n = strlen(out);
    /* A word that does not fit whole is left out, never cut. */
    if (!shell_word(value, sizeof(value), eq + 1) || n + (size_t)name_len + strlen(value) + 3 > len) {
      fprintf(stderr, "tune: the command below leaves out %.*s (too long to print): set it as the job had it\n",
              name_len, *v);
      continue;
    }
    snprintf(out + n, len - n, "%s%.*s=%s", n ? " " : "", name_len, *v, value);
  }
}

/* After SIGINT or SIGTERM, or a failure past the after pass (the report,
 * the rebuild): say what stopped the job and print the command that
 * continues it -- the environment it depends on (engine_resume_env),
 * then this command line, with --resume added unless it is there already;
 * concluded (past the after pass, writing no source tree): the command
 * that draws its report, all that is left. */
static void engine_print_resume(const tune_job *job, const tune_chain *concluded) {
  if (tune_interrupt_signal())
    fprintf(stderr, "tune: interrupted by %s: every configuration measured so far is committed to %s\n",
            tune_interrupt_name(), job->db_path);
  char env[8192] = "", cmd[8192] = "";
  int has_resume = 0;
  if (job->argc == 0) { /* a fleet node's job: the fleet prints the fleet's command */
    fprintf(stderr, "tune: to continue, run the command that started it again with --resume\n");
    return;
  }
  if (concluded) {
    /* Past the after pass of a job that writes no source tree: nothing is
     * left to resume but the report of its runs, which tune report draws. */
    char before[24], after[24];
    snprintf(before, sizeof(before), "%" PRId64, concluded->before);
    snprintf(after, sizeof(after), "%" PRId64, concluded->after);
    int whole = shell_word(cmd, sizeof(cmd), job->argv[0]) && shell_word(cmd, sizeof(cmd), "report") &&
                shell_word(cmd, sizeof(cmd), "--db") && shell_word(cmd, sizeof(cmd), job->db_path) &&
                shell_word(cmd, sizeof(cmd), "--before") && shell_word(cmd, sizeof(cmd), before) &&
                shell_word(cmd, sizeof(cmd), "--after") && shell_word(cmd, sizeof(cmd), after) &&
                (!job->report_dir ||
                 (shell_word(cmd, sizeof(cmd), "--out") && shell_word(cmd, sizeof(cmd), job->report_dir)));
    fprintf(stderr, "tune: the job measured all it had to; its report%s%s\n",
            whole ? " is drawn by:\n  " : " is drawn by tune report --db (too long to print)", whole ? cmd : "");
    return;
  }
  engine_resume_env(env, sizeof(env));
  int whole = 1;
  for (int i = 0; i < job->argc; i++) {
    whole &= shell_word(cmd, sizeof(cmd), job->argv[i]);
    has_resume |= i > 0 && engine_is_resume_arg(job->argv[i]);
  }
  if (!has_resume) whole &= shell_word(cmd, sizeof(cmd), "--resume");
  /* Under the mpi launcher the ranks are mpirun's processes, one per GPU. */
  char np[32] = "";
  if (job->launcher && strcmp(job->launcher, "mpi") == 0) snprintf(np, sizeof(np), "mpirun -np %d ", job->gpus);
  if (!whole) {
    fprintf(stderr, "tune: to continue the job, run its command line again with --resume (too long to print)\n");
    return;
  }
  fprintf(stderr, "tune: to continue the job, run:\n  %s%s%s%s\n", env, env[0] ? " " : "", np, cmd);
}

/* Whether the chain ch was begun on a machine like this one -- the same GPU
 * model, GPU count, compute capability and topology -- else a refusal
 * naming both: a resumed job would mix two machines' samples in its runs,
 * and its table rows are keyed by the machine it was begun on. */
static tune_result engine_same_machine(const engine *e, const tune_chain *ch) {
  const tune_machine *m = &e->mach;
  const char *topo = dc_topo_name(m->topo);
  if (strcmp(ch->gpu_model, m->gpu_model) == 0 && ch->gpu_count == m->gpu_count &&
      ch->sm == m->sm && strcmp(ch->topo, topo) == 0)
    return tune_ok;
  tune_error(
      "--resume: the main job of run %" PRId64
      " was begun on another machine (%d x %s, sm %d, %s) than this one (%d x %s, sm %d, %s);"
      " its runs cannot take this machine's samples: resume it there, or start a new job"
      " here (without --resume)",
      ch->before, ch->gpu_count, ch->gpu_model, ch->sm, ch->topo, m->gpu_count, m->gpu_model, m->sm,
      topo);
  return tune_err_arg;
}

/* Find where this job starts: a new chain, or the unfinished one to resume.
 * A chain continued is first checked: samples read back must be ones tune
 * could have written. */
static tune_result engine_chain(engine *e, tune_chain *ch) {
  const tune_job *job = e->job;
  memset(ch, 0, sizeof(*ch));
  if (job->resume) {
    TUNE_CHECK(job->resume_run > 0 ? engine_find_run(e, ch) : engine_find_resumable(e, ch));
    TUNE_CHECK(engine_same_machine(e, ch));
  } else {
    return tune_ok;
  }
  const int64_t runs[] = {ch->before, ch->sweep, ch->after};
  for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
    if (runs[i] != 0) TUNE_CHECK(tune_store_check_run(e->st, runs[i]));
  if (job->resume) printf("resuming the main job of run %" PRId64 "\n", ch->before);
  return tune_ok;
}

/* Begin a run of the chain, or continue it if an earlier job began it. */
static tune_result engine_run(engine *e, int64_t existing, const char *kind, int64_t parent, const char *thresholds) {
  e->phase = kind;
  e->resuming = existing != 0;
  e->run_id = existing;
  if (existing == 0 && e->st)
    TUNE_CHECK(engine_begin_run(e->st, &e->mach, kind, e->job->backend, e->job->command_line,
                                e->options, e->job->seed, parent, thresholds, &e->run_id));
  return tune_ok;
}

static tune_result engine_finish(engine *e) { return e->st ? tune_store_run_finish(e->st, e->run_id) : tune_ok; }

/* What is checked before anything is measured or written: the backend's
 * name, the launcher, where the header and the report go. */
static tune_result engine_check_job(const tune_job *job, char *header, size_t len, int *installs) {
  if (tune_backend_find(job->backend) == NULL) {
    tune_error("unknown backend '%s' (use gpu or sim)", job->backend);
    return tune_err_arg;
  }
  TUNE_CHECK(engine_header_path(job, header, len, installs));
  const char *file = getenv(DC_THRESHOLDS_FILE_ENV);
  if (file && *file) {
    dc_threshold_row *rows;
    size_t n;
    char why[512];
    if (dc_table_read_file(file, &rows, &n, why, sizeof(why)) != 0) {
      tune_error("%s: %s", DC_THRESHOLDS_FILE_ENV, why);
      return tune_err_arg;
    }
    free(rows);
  }
  if (job->no_report) return tune_ok;
  tune_report_opts ro = {job->db_path, 0, 0, job->report_dir};
  TUNE_CHECK(tune_report_check_outputs(&ro));
  char rd[PATH_MAX];
  tune_report_folder(&ro, rd, sizeof(rd));
  const char *what = job->report_dir ? "--report-dir" : "the report folder";
  TUNE_CHECK(tune_report_check_keep(&ro, header, "the thresholds header"));
  TUNE_CHECK(tune_check_writable(what, rd, 1));
  /* A report that cannot be drawn fails now, as tune skew's does: not
   * after the measurements, with the header installed and no rebuild. */
  char gp[PATH_MAX];
  return tune_report_need_gnuplot(NULL, ", or pass --no-report", gp, sizeof(gp));
}

/* Process 0: the database, and the chain to continue. Under --resume the
 * chain is found and checked on a look (TUNE_STORE_LOOK), before the file
 * is opened for writing (which migrates an older schema), so a refused
 * --resume writes nothing: the database as it was, no lock left beside it.
 * A file older than tune reads (schema 1, 2) is looked at once migrated. */
static tune_result engine_open_db(engine *e, tune_chain *ch) {
  const tune_job *job = e->job;
  int taken = 0, looked = 0;
  struct stat sb;
  if (!job->resume) return tune_engine_open_store(job->db_path, &e->st);
  /* Here, not with the job's other checks: only process 0 reads the
   * database, so the others need not reach it (another node, another
   * working directory). */
  if (stat(job->db_path, &sb) != 0) {
    tune_error("--resume: %s: %s; nothing to resume", job->db_path,
               errno == ENOENT ? "no such database" : strerror(errno));
    return tune_err_arg;
  }
  TUNE_CHECK(tune_store_lock_job(job->db_path, &taken));
  tune_result r = tune_store_open(job->db_path, TUNE_STORE_LOOK, &e->st);
  looked = r == tune_ok && tune_store_version(e->st) >= TUNE_STORE_READ_VERSION;
  if (looked) r = engine_chain(e, ch);
  tune_store_close(e->st);
  e->st = NULL;
  if (r == tune_ok) r = tune_store_open(job->db_path, 0, &e->st);
  if (r == tune_ok && !looked) r = engine_chain(e, ch);
  if (r != tune_ok && taken) tune_store_unlock_job();
  return r;
}

/* Every process must run one job: mpirun gives each its own command line
 * and environment (an MPMD line, `-x TUNE_TRIALS` on some ranks), and a
 * process measuring other configurations than rank 0 would meet it in
 * other collectives. The options (what --resume matches, TUNE_ variables
 * included) are compared before the database is opened; process 0 names
 * the first process that differs. */
static tune_result engine_default_table(dc_threshold_row **rows, size_t *n);

tune_result tune_engine_table_hash(uint64_t *hash) {
  dc_threshold_row *def = NULL;
  size_t ndef = 0;
  TUNE_CHECK(engine_default_table(&def, &ndef));
  *hash = dc_table_hash(def, ndef);
  free(def);
  return tune_ok;
}

tune_result tune_engine_table_name(char *out, size_t len) {
  uint64_t h;
  const char *file = getenv(DC_THRESHOLDS_FILE_ENV);
  TUNE_CHECK(tune_engine_table_hash(&h));
  if (h == dc_table_hash(dc_builtin_thresholds, dc_builtin_thresholds_count))
    snprintf(out, len, "%s", dc_builtin_thresholds_provenance);
  else
    snprintf(out, len, "%s %s (table %016" PRIx64 ")", DC_THRESHOLDS_FILE_ENV, file ? file : "?", h);
  return tune_ok;
}

static tune_result engine_agree(engine *e) {
  char mine[sizeof(e->options) + 1024] = "", theirs[sizeof(mine)] = "", sim[1024] = "";
  int differs = -1;
  uint64_t table;
  /* The table each process's auto dispatch holds (DC_THRESHOLDS_FILE's
   * on one rank only was found only mid-measurement), and the sim's model. */
  TUNE_CHECK(tune_engine_table_hash(&table));
  if (strcmp(e->job->backend, "sim") == 0) tune_sim_model_text(sim, sizeof(sim));
  snprintf(mine, sizeof(mine), "%s table=%016" PRIx64 "%s", e->options, table, sim);
  TUNE_CHECK(e->be->ops->agree(e->be, mine, theirs, sizeof(mine), &differs));
  if (differs < 0) return tune_ok;
  if (e->proc == 0) return tune_launcher_options_refused(differs, mine, theirs);
  return tune_err_arg;
}

/* The groups of the job's worlds, made afresh, their sizes checked. */
static tune_result engine_make_groups(engine *e) {
  free(e->groups);
  e->groups = NULL;
  e->ngroups = 0;
  TUNE_CHECK(engine_groups(e));
  return engine_check_sizes(e);
}

/* Groups, the backend, and (rank 0) the database and the chain to continue.
 * job is e->job: without --gpus its default worlds are those of the ranks
 * the backend found (6 GPUs: 2, 4, 6, as --gpus 6), and the groups follow. */
static tune_result engine_open(engine *e, tune_job *job, tune_chain *ch) {
  TUNE_CHECK(engine_make_groups(e));
  tune_backend_opts bo = {job->gpus, job->seed, job->launcher, job->virtual_ranks, job->max_bytes, job->graph_calls};
  TUNE_CHECK(tune_backend_find(job->backend)->open(&bo, &e->be));
  e->be->ops->describe(e->be, &e->mach);
  e->proc = e->be->ops->rank(e->be);
  tune_progress_enable(e->proc == 0);
  if (tune_job_resolve_worlds(job, e->mach.ranks)) TUNE_CHECK(engine_make_groups(e));
  TUNE_CHECK(engine_drop_unsupported(e));
  engine_options(job, e->options, sizeof(e->options));
  TUNE_CHECK(engine_agree(e));
  memset(ch, 0, sizeof(*ch));
  /* Every process continues the chain process 0 found (a refusal there
   * reaches the others as a chain with no before run and an error). */
  int64_t refused = e->proc == 0 ? engine_open_db(e, ch) : tune_ok;
  TUNE_CHECK(engine_share(e, &refused, sizeof(refused)));
  if (refused != tune_ok) return (tune_result)refused;
  return engine_share(e, ch, sizeof(*ch));
}

/* A malloc'd copy of the table auto dispatch holds in this process:
 * DC_THRESHOLDS_FILE's, else the compiled-in one, as a comm of libdetcoll
 * takes it. */
static tune_result engine_default_table(dc_threshold_row **rows, size_t *n) {
  dc_table_ref t = {0};
  char why[512];
  if (dc_table_ref_default(&t, why, sizeof(why)) != 0) {
    tune_error("%s", why);
    return tune_err_arg;
  }
  if ((*rows = malloc((t.n ? t.n : 1) * sizeof(**rows))) != NULL) {
    memcpy(*rows, t.rows, t.n * sizeof(**rows));
    *n = t.n;
  }
  dc_table_ref_free(&t);
  return *rows ? tune_ok : tune_err_system;
}

/* e->prev on every process, as process 0 has it: the previous table a
 * resumed job's before run stored, else the table auto dispatch holds as
 * the job begins (engine_default_table). One table for the whole job, so
 * that every search keeps the same incumbent, and the before pass measures
 * one table from its first size to its last whatever DC_THRESHOLDS_FILE
 * says when it resumes (e->prev_given). */
static tune_result engine_load_prev(engine *e, const tune_chain *ch) {
  tune_result r = tune_ok;
  uint64_t n[2] = {0, 0};
  dc_threshold_row *def = NULL;
  size_t ndef = 0;
  if (e->st) {
    if (ch->before) r = tune_query_previous_table(e->st, ch->before, &e->prev, &e->nprev);
    e->prev_stored = r == tune_ok && e->nprev > 0;
    if (r == tune_ok) r = engine_default_table(&def, &ndef);
    if (r == tune_ok) e->default_hash = dc_table_hash(def, ndef);
    if (r == tune_ok && e->nprev == 0) {
      free(e->prev);
      e->prev = def;
      e->nprev = ndef;
      def = NULL;
    }
    free(def);
    n[0] = e->nprev;
    n[1] = r == tune_ok && dc_table_hash(e->prev, e->nprev) != e->default_hash;
  }
  TUNE_CHECK(engine_share_read(e, r, n, sizeof(n)));
  if (!e->st && (e->prev = calloc(n[0] ? n[0] : 1, sizeof(*e->prev))) == NULL)
    return tune_err_system;
  e->nprev = (size_t)n[0];
  e->prev_given = (int)n[1];
  return engine_share(e, e->prev, e->nprev * sizeof(*e->prev));
}

/* Store, as a header of the before run just begun (or resumed without
 * one), the job's previous table, e->prev -- the table auto dispatch has as
 * the job begins, DC_THRESHOLDS_FILE's, else the compiled-in one -- which
 * the before pass measures, and which the after pass measures again beside
 * the new one. */
static tune_result engine_store_previous(engine *e) {
  dc_threshold_row *rows = NULL;
  char *text = NULL;
  size_t len = 0;
  tune_result r = tune_ok;
  rows = malloc(e->nprev * sizeof(*rows));
  FILE *f = rows ? open_memstream(&text, &len) : NULL;
  if (f == NULL) {
    r = tune_err_system;
    goto out;
  }
  memcpy(rows, e->prev, e->nprev * sizeof(*rows));
  tune_emit_rows(f, rows, e->nprev);
  if (fclose(f) != 0) {
    r = tune_err_system;
    goto out;
  }
  const char *file = getenv(DC_THRESHOLDS_FILE_ENV);
  r = tune_store_put_header(e->st, e->run_id, file && *file ? file : "compiled in", 0, 0, text,
                            rows, e->nprev, NULL);
  e->prev_stored = r == tune_ok;
out:
  free(text);
  free(rows);
  return r;
}

/* The job's previous table as the before and sweep runs record it: the
 * compiled-in table's provenance when it is that table, else its hash (and
 * DC_THRESHOLDS_FILE's name where that file holds it). */
static void engine_prev_name(const engine *e, char *out, size_t len) {
  const uint64_t h = dc_table_hash(e->prev, e->nprev);
  const char *file = getenv(DC_THRESHOLDS_FILE_ENV);
  if (h == dc_table_hash(dc_builtin_thresholds, dc_builtin_thresholds_count))
    snprintf(out, len, "%s", dc_builtin_thresholds_provenance);
  else if (file && *file && h == e->default_hash)
    snprintf(out, len, "%s %s (table %016" PRIx64 ")", DC_THRESHOLDS_FILE_ENV, file, h);
  else
    snprintf(out, len, "previous table %016" PRIx64, h);
}

/* A resumed before pass whose table (stored with its run) is not the one
 * auto dispatch holds here -- DC_THRESHOLDS_FILE set, unset or changed
 * since the job began -- measures its own table on: the backend is given
 * it, as the after pass gives the new one, so one run holds one table. */
static tune_result engine_give_prev(engine *e) {
  const char *file = getenv(DC_THRESHOLDS_FILE_ENV);
  if (e->st)
    printf("before run %" PRId64 " measures on with the table it began with (%016" PRIx64
           "), not %s%s (%016" PRIx64 ")\n",
           e->run_id, dc_table_hash(e->prev, e->nprev),
           file && *file ? DC_THRESHOLDS_FILE_ENV "'s " : "the compiled-in table",
           file && *file ? file : "", e->default_hash);
  return e->be->ops->set_table(e->be, TUNE_TABLE_CURRENT, e->prev, e->nprev);
}

/* The before pass and the sweep, with its header, where the chain has not
 * finished them. */
static tune_result engine_before_and_sweep(engine *e, tune_chain *ch) {
  if (!ch->before_done) {
    char table[PATH_MAX + 64];
    engine_prev_name(e, table, sizeof(table));
    TUNE_CHECK(engine_run(e, ch->before, "before", 0, table));
    ch->before = e->run_id;
    if (e->prev_given) TUNE_CHECK(engine_give_prev(e));
    if (e->st && !e->prev_stored) TUNE_CHECK(engine_store_previous(e));
    TUNE_CHECK(engine_auto_pass(e, 0));
    TUNE_CHECK(engine_finish(e));
  }
  if (ch->sweep_done) return tune_ok;
  dc_threshold_row *rows = calloc((size_t)e->ngroups, sizeof(*rows));
  if (rows == NULL) return tune_err_system;
  char table[PATH_MAX + 64];
  engine_prev_name(e, table, sizeof(table));
  tune_result r = engine_run(e, ch->sweep, "sweep", ch->before, table);
  ch->sweep = e->run_id;
  if (r == tune_ok) r = engine_sweep(e, rows);
  if (r == tune_ok && e->st) {
    tune_progress_begin("header", NULL, 0);
    r = engine_write_header(e, rows);
    tune_progress_end();
  }
  free(rows);
  TUNE_CHECK(r);
  ch->after = 0;
  return engine_finish(e);
}

/* The after pass: the sweep's table, from rank 0's database, handed to
 * every rank's backend (libdetcoll's dc_comm_set_table on GPUs) and
 * measured in this process, and the job's previous table (its before
 * run's) beside it for the paired figures. Its run records the table's
 * hash. */
static tune_result engine_after(engine *e, tune_chain *ch, dc_threshold_row **rows, size_t *nrows,
                                uint64_t *hash) {
  char provenance[128];
  if (e->st) TUNE_CHECK(tune_query_header_rows(e->st, ch->sweep, rows, nrows));
  TUNE_CHECK(e->be->ops->set_table(e->be, TUNE_TABLE_CURRENT, *rows, *nrows));
  /* Process 0's rows go to every process (set_table shares them). */
  TUNE_CHECK(e->be->ops->set_table(e->be, TUNE_TABLE_PREVIOUS, e->prev_stored ? e->prev : NULL,
                                   e->prev_stored ? e->nprev : 0));
  if (e->st && !e->prev_stored)
    TUNE_WARN(TUNE_SWEEP,
              "before run %" PRId64
              " holds no previous table (its job was begun by an older tune): the after "
              "pass is not paired with it",
              ch->before);
  *hash = dc_table_hash(*rows, *nrows);
  snprintf(provenance, sizeof(provenance), "header of run %" PRId64 " (table %016" PRIx64 ")%s", ch->sweep,
           *hash, strcmp(e->job->backend, "sim") == 0 ? " (sim)" : "");
  if (ch->after_done) return tune_ok;
  TUNE_CHECK(engine_run(e, ch->after, "after", ch->before, provenance));
  ch->after = e->run_id;
  e->after_pass = 1;
  TUNE_CHECK(engine_auto_pass(e, ch->sweep));
  return engine_finish(e);
}

/* After the summary: a job any of whose configurations returned wrong
 * results fails (tune_err_wrong), naming how many and the first, as verify
 * and compare fail, though everything it measured is stored and its header
 * written (a path is never chosen where its results were wrong). */
static tune_result engine_wrong_verdict(engine *e, const tune_chain *ch) {
  tune_wrong_config *w;
  size_t n;
  TUNE_CHECK(tune_query_wrong_configs(e->st, ch, &w, &n));
  if (n == 0) return tune_ok;
  char first[512];
  tune_wrong_config_text(w, first, sizeof(first));
  free(w);
  tune_error("%zu configuration%s of this job returned wrong results, the first: %s; the configs table of %s "
             "holds them all (wrong_elems)",
             n, n == 1 ? "" : "s", first, e->job->db_path);
  return tune_err_wrong;
}

/* Rank 0, once every rank has measured: the crossovers and the figures,
 * the report, the header installed and compiled in (the job's only write
 * into the source tree, where it installs), and the summary. */
static tune_result engine_conclude(engine *e, const tune_chain *ch, const dc_threshold_row *rows, size_t nrows,
                                   uint64_t hash, int64_t t0) {
  const tune_job *job = e->job;
  const char *header = e->header;
  const int installs = e->installs;
  double max_regret;
  TUNE_CHECK(tune_query_max_regret(e->st, ch->after, &max_regret));
  engine_print_crossovers(e, rows, nrows);
  printf("\n%ld configurations measured (%ld read back) in %.1f s; runs: before %" PRId64 ", sweep %" PRId64
         ", after %" PRId64 "; max regret %.3f\n",
         e->configs_done, e->configs_reused, (double)(tune_now_ns() - t0) * 1e-9, ch->before, ch->sweep,
         ch->after, max_regret);
  e->measured = 1;
  if (!installs && !e->header_written) TUNE_CHECK(engine_install_header(e, ch->sweep));
  tune_store_close(e->st);
  e->st = NULL;
  tune_report_opts ro = {job->db_path, ch->before, ch->after, job->report_dir};
  if (!job->no_report) {
    tune_progress_begin("report", NULL, 0);
    TUNE_CHECK(tune_report_run(&ro));
    tune_progress_end();
  }
  /* The source tree changes last, once nothing but the rebuild is left:
   * stopped before, or in a rebuild that fails for it, the job is resumed
   * (engine_uninstalled); a rebuild that ends well ends the job. */
  if (tune_interrupt_signal()) return tune_err_interrupted;
  TUNE_CHECK(tune_engine_open_store(job->db_path, &e->st));
  if (installs) TUNE_CHECK(engine_install_header(e, ch->sweep));
  if (installs && job->build_dir) TUNE_CHECK(engine_rebuild(job, hash));
  if (installs && !job->build_dir)
    printf("%s is not the header this tune's build compiles in: rebuild libdetcoll where it is to compile"
           " it in\n", header);
  if (!installs)
    printf("thresholds written to %s, not compiled in: DC_THRESHOLDS_FILE=%s makes libdetcoll use them\n",
           header, header);
  /* Last, so what changed is what a user sees when the job ends. The
   * store is open meanwhile: closing it, not the summary's read-only
   * handle, is what removes the -wal file. */
  TUNE_CHECK(tune_report_summary(&ro, !job->no_report, stdout));
  tune_result r = engine_wrong_verdict(e, ch);
  tune_store_close(e->st);
  e->st = NULL;
  return r;
}

tune_result tune_job_run(const tune_job *job) {
  tune_result res = tune_ok;
  tune_job own = *job; /* its worlds resolved once the backend is open */
  engine e = {.job = &own};
  dc_threshold_row *rows = NULL;
  size_t nrows = 0;
  uint64_t hash = 0;
  char header[PATH_MAX];
  tune_chain ch;
  const unsigned said = tune_errors_said();
  tune_interrupt_install();
  res = engine_check_job(job, header, sizeof(header), &e.installs);
  if (res == tune_ok && tune_interrupt_signal()) res = tune_err_interrupted;
  if (res == tune_err_interrupted) fprintf(stderr, "tune: interrupted by %s: nothing written\n", tune_interrupt_name());
  if (res != tune_ok) return res;
  e.header = header;
  TUNE_CHECK_GOTO(engine_open(&e, &own, &ch), res, out);
  TUNE_CHECK_GOTO(engine_load_prev(&e, &ch), res, out);
  int64_t t0 = tune_now_ns();
  TUNE_CHECK_GOTO(engine_before_and_sweep(&e, &ch), res, out);
  TUNE_CHECK_GOTO(engine_after(&e, &ch, &rows, &nrows, &hash), res, out);
  /* Every rank has measured: the launcher (MPI) ends here, and rank 0
   * alone finishes the job. */
  e.be->ops->close(e.be);
  e.be = NULL;
  if (e.st) TUNE_CHECK_GOTO(engine_conclude(&e, &ch, rows, nrows, hash, t0), res, out);
out:
  tune_progress_stop();
  if (e.st) tune_store_close(e.st);
  /* A child (make, gnuplot) the signal reached too fails with its own
   * error; the signal is the reason either way. */
  /* Past the after pass a job that writes no source tree has nothing left
   * to resume: its report can be drawn again. One that failed there (its
   * report, its rebuild) is finished the same way as one stopped there. */
  if (res != tune_ok && tune_interrupt_signal()) res = tune_err_interrupted;
  if (e.proc == 0 && (res == tune_err_interrupted || (res != tune_ok && res != tune_err_wrong && e.measured)))
    engine_print_resume(job, e.measured && !e.installs ? &ch : NULL);
  /* Every failure says why: one that came up through the calls without a
   * line of its own (TUNE_CHECK traces each step at INFO) says so here. */
  if (res != tune_ok && res != tune_err_interrupted && e.proc == 0 && tune_errors_said() == said)
    tune_error(
        "the job stopped (%s), and no line above from this process says why; TUNE_DEBUG=INFO "
        "shows the calls it came up through",
        tune_result_str(res));
  if (res != tune_ok) tune_launcher_failing(res);
  if (e.be) e.be->ops->close(e.be);
  free(rows);
  engine_points_clear(&e);
  free(e.points);
  free(e.groups);
  free(e.prev);
  for (int i = 0; i < ENGINE_MAX_NC; i++) {
    free(e.elapsed[i]);
    free(e.delay[i]);
  }
  return res;
}

void tune_job_options(const tune_job *job, char *out, size_t len) { engine_options(job, out, len); }

/* The search of each group the source has, over its samples (tune fleet's
 * consensus): the main job's groups in its order, so that a group's search
 * has the seed the nodes' sweeps gave it. */
typedef struct {
  const engine_group *g;
  const tune_replay_source *src;
} replay_ctx;

static tune_result replay_measure(void *ctx, dc_path path, uint64_t bytes, int ntrials,
                                  double *out) {
  replay_ctx *x = ctx;
  if (bytes > dc_path_max_bytes(x->g->op, path)) {
    for (int t = 0; t < ntrials; t++) out[t] = engine_wrong_ns;
    return tune_ok;
  }
  tune_cfg c = group_cfg(x->g, group_impl(x->g), path, bytes);
  TUNE_CHECK(x->src->samples(x->src->ctx, &c, ntrials, out));
  for (int t = 0; t < ntrials; t++)
    if (!(out[t] < engine_wrong_ns)) out[t] = engine_wrong_ns;
  return tune_ok;
}

tune_result tune_engine_replay(const tune_job *job, int sm, dc_topo topo,
                               const tune_replay_source *src, const dc_threshold_row *prev,
                               size_t nprev, dc_threshold_row **rows, size_t *nrows,
                               size_t *nmeasured) {
  engine e = {.job = job};
  e.mach.sm = sm;
  e.mach.topo = topo;
  tune_result r = tune_ok;
  dc_threshold_row *mine = NULL;
  *rows = NULL;
  if (prev == NULL)
    TUNE_CHECK(engine_default_table(&e.prev, &e.nprev));
  else if ((e.prev = malloc((nprev ? nprev : 1) * sizeof(*prev))) == NULL)
    return tune_err_system;
  else
    memcpy(e.prev, prev, (e.nprev = nprev) * sizeof(*prev));
  TUNE_CHECK_GOTO(engine_groups(&e), r, out);
  TUNE_CHECK_GOTO(engine_check_sizes(&e), r, out);
  int n = 0;
  for (int i = 0; i < e.ngroups; i++) {
    tune_cfg c = group_cfg(&e.groups[i], group_impl(&e.groups[i]), DC_PATH_AUTO, 0);
    if (src->has_group(src->ctx, &c)) e.groups[n++] = e.groups[i];
  }
  e.ngroups = n;
  if ((mine = calloc((size_t)n + 1, sizeof(*mine))) == NULL) {
    r = tune_err_system;
    goto out;
  }
  for (int i = 0; i < n; i++) {
    tune_xover xo[DC_MAX_SEGMENTS];
    int nxo;
    replay_ctx x = {&e.groups[i], src};
    tune_cfg c = group_cfg(&e.groups[i], group_impl(&e.groups[i]), DC_PATH_AUTO, 0);
    (void)src->has_group(src->ctx, &c); /* the source's current group */
    TUNE_CHECK_GOTO(engine_search(&e, &e.groups[i], i, replay_measure, NULL, &x, xo, &nxo, &mine[i]), r,
                    out);
  }
  if ((*rows = engine_merge_rows(&e, mine, (size_t)n, nrows)) == NULL) {
    r = tune_err_system;
    goto out;
  }
  tune_emit_sort(*rows, *nrows);
  *nmeasured = (size_t)n;
out:
  free(mine);
  free(e.groups);
  free(e.prev);
  return r;
}
