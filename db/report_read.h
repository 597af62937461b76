/* report_read.h: typed readers of what `tune report` draws and summarizes:
 * runs with their provenance, the figures' points, the after run's
 * pairings, regret and drift, crossovers and threshold marks, headers, and
 * the skew run's summaries and fits. Only db/ runs SQL; the report opens
 * the database read-only through the store, which vets it once. Text
 * fields are cut to their size. */
#ifndef TUNE_REPORT_READ_H
#define TUNE_REPORT_READ_H

#include <limits.h>
#include <stdint.h>

#include "store.h"

/* The size of a name field (op, dtype, path, ...). */
#define TUNE_REP_KEY 24

/* The runs a report's queries may name (0: none). nccl: the run whose
 * NCCL configs are the reference line; partial: the unfinished run of a
 * before/after pair, whose configs limit what both sides compare. */
typedef struct {
  int64_t before, after, sweep, nccl, partial;
} tune_rep_runs;

/* A run's provenance; finished_at "-" while it measures, or if it was
 * killed. */
typedef struct {
  int64_t id; /* 0: no such run */
  char kind[16], started_at[32], finished_at[32], host[128], gpu_model[128], topo[32];
  char driver[64], cuda[64], nccl[64], mpi[64], launcher[32], backend[16], git_rev[64];
  char thresholds[256], command_line[512];
  int64_t gpu_count, sm, parent_run, wrong_configs;
  int64_t unfinished; /* finished_at is NULL: killed, or still measuring */
} tune_rep_run;

/* Run id into *r (r->id 0 when there is none); tune_err_db, named, where
 * its rows hold what tune never writes (tune_store_check_rows). */
tune_result tune_rep_run_read(tune_store *st, int64_t id, tune_rep_run *r);

/* The newest run of kind (on gpu_model, unless NULL) into *id; 0: none. */
tune_result tune_rep_latest_run(tune_store *st, const char *kind, const char *gpu_model,
                                int64_t *id);

/* The auto-dispatch configs of a run: detcoll and detcoll_reg, path auto,
 * no skew. */
tune_result tune_rep_auto_count(tune_store *st, int64_t run, int64_t *n);

/* Whether run holds NCCL configs. */
tune_result tune_rep_has_nccl(tune_store *st, int64_t run, int *has);

/* The dimensions of a run's auto configs that a before/after pair must
 * share. */
typedef enum {
  TUNE_REP_OP,
  TUNE_REP_DTYPE,
  TUNE_REP_WORLD,
  TUNE_REP_MODE,
  TUNE_REP_ALIGN,
  TUNE_REP_BYTES,
} tune_rep_dim;

/* One value of a dimension: as text, and as a number for world and bytes. */
typedef struct {
  char text[64];
  int64_t i;
} tune_rep_value;

/* The distinct values of dim among run's auto configs, in order
 * (*values malloc'd). */
tune_result tune_rep_dim_values(tune_store *st, int64_t run, tune_rep_dim dim,
                                tune_rep_value **values, size_t *n);

/* A group key of the figures and tables: op, dtype, mode, align. */
#define TUNE_REP_NKEY 4

/* An auto config, without its offsets. */
typedef struct {
  char op[TUNE_REP_KEY], dtype[TUNE_REP_KEY], align[TUNE_REP_KEY], mode[TUNE_REP_KEY];
  int64_t world, bytes;
} tune_rep_config;

/* The first auto config (by op, dtype, world, bytes, align, mode) run a
 * measured and run b did not into *cfg; *found 0: none. */
tune_result tune_rep_first_unpaired(tune_store *st, int64_t a, int64_t b, tune_rep_config *cfg,
                                    int *found);

/* What the unfinished run partial lacks of run full, per group key and
 * world: how many sizes, and the smallest and largest of them. */
typedef struct {
  char key[TUNE_REP_NKEY][TUNE_REP_KEY];
  int64_t world, nsizes, min_bytes, max_bytes;
} tune_rep_lack;
tune_result tune_rep_lacking(tune_store *st, int64_t full, int64_t partial, tune_rep_lack **rows,
                             size_t *n);

/* The figures, each a query of points. */
typedef enum {
  /* per key, world and size: detcoll auto dispatch of the before and after
   * runs (series "before", "after"; the worst offset) and NCCL's reference
   * run ("NCCL", "NCCL_symm"; the reg16 key shows the align16 NCCL lines),
   * only at configs the partial run measured, where there is one */
  TUNE_REP_LATENCY,
  /* the sweep's forced paths (series: the path) of align16 and reg16 */
  TUNE_REP_CROSSOVER,
  /* the after run's regret, per world and size the worst over dtype, mode
   * and alignment (series: the op; the key is empty) */
  TUNE_REP_REGRET,
} tune_rep_fig;

/* A point of a figure: key, world, size, series and its value (ns for
 * latency and crossover). */
typedef struct {
  char key[TUNE_REP_NKEY][TUNE_REP_KEY];
  int64_t world, bytes;
  char series[TUNE_REP_KEY];
  double value;
} tune_rep_point;

/* The points of fig, sorted by key, world and size. */
tune_result tune_rep_points(tune_store *st, tune_rep_fig fig, const tune_rep_runs *runs,
                            tune_rep_point **pts, size_t *n);

/* The after run's pairings per key, world and size: the largest ratio over
 * its offsets with its CI, whether both tables ran one path there, and
 * the previous table's latency (ns). */
typedef struct {
  char key[TUNE_REP_NKEY][TUNE_REP_KEY];
  int64_t world, bytes;
  double ratio, ci_lo, ci_hi;
  int shared;
  double prev_ns;
} tune_rep_pair;

/* The pairings of run after, sorted by key, world and size, and their
 * count before grouping into *npairs; -1 for a database from before the
 * pairs table (schema 5), which has none. */
tune_result tune_rep_pairs(tune_store *st, int64_t after, int64_t *npairs, tune_rep_pair **rows,
                           size_t *n);

/* The run-to-run drift of one pairing: the previous table's latency in the
 * after pass over the before run's at the same config and path. */
typedef struct {
  char op[TUNE_REP_KEY], mode[TUNE_REP_KEY], dtype[TUNE_REP_KEY], align[TUNE_REP_KEY];
  int64_t world, bytes;
  double drift;
} tune_rep_drift;

/* Sorted by op, mode, dtype, align, world and size. */
tune_result tune_rep_drifts(tune_store *st, int64_t before, int64_t after, tune_rep_drift **rows,
                            size_t *n);

/* A regret of the after run. key: op, dtype, mode, align. */
typedef struct {
  char key[TUNE_REP_NKEY][TUNE_REP_KEY];
  int64_t world, bytes;
  char auto_path[TUNE_REP_KEY], best_path[TUNE_REP_KEY];
  double regret;
} tune_rep_regret;

/* The largest regret of run after (ties: the first by key, world, size);
 * *found 0: none. */
tune_result tune_rep_worst_regret(tune_store *st, int64_t after, tune_rep_regret *r, int *found);

/* The sizes of run after per mode, how many have a regret of at most
 * target, and how many of the others ran the best path itself (auto chose
 * it: what lies over the target there is measurement, not dispatch),
 * sorted by mode. */
typedef struct {
  char mode[TUNE_REP_KEY];
  int64_t sizes, within, same_path;
} tune_rep_regret_share;
tune_result tune_rep_regret_shares(tune_store *st, int64_t after, double target,
                                   tune_rep_regret_share **rows, size_t *n);

/* The largest regret of each key and world, sorted by them. */
tune_result tune_rep_regret_groups(tune_store *st, int64_t after, tune_rep_regret **rows,
                                   size_t *n);

/* A crossover of the sweep, or a threshold mark. */
typedef struct {
  char key[TUNE_REP_NKEY][TUNE_REP_KEY];
  int64_t world, skew_ns, bytes, lo, hi;
  char below[TUNE_REP_KEY], above[TUNE_REP_KEY];
  double diff, ci_lo, ci_hi, confidence;
  int decided;
} tune_rep_xo;

typedef enum {
  TUNE_REP_XO_ALL,   /* every crossover, by key, world, skew and size */
  TUNE_REP_XO_MARKS, /* the zero-skew align16 and reg16 crossovers */
  /* for a sweep whose crossovers were not kept: the segment boundaries of
   * its newest header (zero skew, align16 and reg16) */
  TUNE_REP_XO_HEADER_MARKS,
} tune_rep_xo_kind;

tune_result tune_rep_crossovers(tune_store *st, int64_t sweep, tune_rep_xo_kind kind,
                                tune_rep_xo **rows, size_t *n);

/* A header a run emitted. */
typedef struct {
  int64_t id; /* 0: none */
  char path[PATH_MAX];
  int installed, sim;
} tune_rep_header;

/* The newest header run emitted. */
tune_result tune_rep_header_of(tune_store *st, int64_t run, tune_rep_header *h);

/* The newest header older than header `below` whose text carries the
 * provenance prov (its DC_THRESHOLDS_PROVENANCE) into *id; 0: none. */
tune_result tune_rep_header_with_provenance(tune_store *st, int64_t below, const char *prov,
                                            int64_t *id);

/* The residence roles of a skew summary, in role[] order. */
#define TUNE_REP_SKEW_NROLES 3
extern const char *const tune_rep_skew_roles[TUNE_REP_SKEW_NROLES];

/* A skew summary: figure key (op, dtype, world, bytes), panel (impl,
 * mode), the requested delay and medians; role stats: median, p10, p90. */
typedef struct {
  char op[TUNE_REP_KEY], dtype[TUNE_REP_KEY], impl[TUNE_REP_KEY], mode[TUNE_REP_KEY];
  int64_t world, bytes, rows, cols, requested_ns;
  double delay, wait, role[TUNE_REP_SKEW_NROLES][3];
} tune_rep_skew_pt;

/* A skew fit of one role ("max", "injected", "last" or "wait"). */
typedef struct {
  char op[TUNE_REP_KEY], dtype[TUNE_REP_KEY], impl[TUNE_REP_KEY], mode[TUNE_REP_KEY],
      role[TUNE_REP_KEY];
  int64_t world, bytes, n;
  double slope, intercept, slope_lo, slope_hi, icpt_lo, icpt_hi, r2, confidence;
} tune_rep_skew_fit;

/* The skew run's summaries, by figure, panel and delay, and its fits. */
tune_result tune_rep_skew(tune_store *st, int64_t skew, tune_rep_skew_pt **pts, size_t *npts,
                          tune_rep_skew_fit **fits, size_t *nfits);

#endif /* TUNE_REPORT_READ_H */
