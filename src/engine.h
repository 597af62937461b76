/* engine.h: the measurement engine and the main job: measure with the
 * current thresholds ("before"), sweep the forced paths and find crossovers
 * ("sweep"), write the thresholds header, measure with it ("after"), store
 * regret, and draw the report. */
#ifndef TUNE_ENGINE_H
#define TUNE_ENGINE_H

#include "backend.h"
#include "store.h"
#include "tune.h"

#define TUNE_MAX_WORLDS 8
#define TUNE_MAX_OFFSETS 4

typedef struct {
  const char *backend; /* "gpu" or "sim" */
  int gpus;
  const char *launcher; /* gpu: "threads" or "mpi" */
  int virtual_ranks;    /* gpu: every rank on GPU 0 */
  int graph_calls;      /* graph mode: calls per captured graph */
  const char *db_path;
  const char *header_path; /* NULL: kernels/thresholds.h for gpu (installed at the end of
                              the job), beside the db for sim and for an installed tune */
  int allow_sim;           /* let a sim run install kernels/thresholds.h */
  const char *report_dir;  /* NULL: <db dir>/report */
  int no_report;
  unsigned ops;    /* bit per dc_op */
  unsigned dtypes; /* bit per dc_dtype */
  unsigned modes;  /* bit per dc_mode */
  int worlds[TUNE_MAX_WORLDS];
  int nworlds;
  int worlds_default; /* --worlds not given: tune_job_default_worlds's, of the
                         ranks once known (tune_job_resolve_worlds) */
  int offsets[TUNE_MAX_OFFSETS]; /* in = out offset, bytes */
  int noffsets;
  uint64_t min_bytes, max_bytes;
  double grid_factor;
  double resolution;
  double confidence;
  int trials, max_trials, warmup;
  uint64_t seed;
  int64_t tune_skew_ns; /* > 0: also find crossovers under this skew (rank 0 delayed) */
  int no_reg;           /* leave registered buffers out: no detcoll_reg, no reg16 rows */
  int no_incumbent;     /* sweep from scratch: no hysteresis against the table compiled in */
  const char *command_line;
  const char *srcdir;    /* source tree holding kernels/thresholds.h; NULL: none
                            (an installed tune) */
  const char *build_dir; /* build tree of srcdir, rebuilt at the end of a job that
                            installs its header; NULL: none to rebuild */
  int resume;            /* continue the latest unfinished main job in db_path */
  int64_t resume_run;    /* > 0 (with resume): the job of this run, any run of its chain */
  char **argv;           /* the command line, for the --resume hint (none: a fleet node's) */
  int argc;
} tune_job;

/* Run the main job end to end. Messages for the user go through tune_error. */
tune_result tune_job_run(const tune_job *job);

/* Whether job measures op in dtype d (all_gather: bf16 only, whichever
 * dtypes are asked for; dc_table_dtype). */
int tune_job_measures(const tune_job *job, dc_op op, dc_dtype d);

/* ---- pieces other commands (tune skew) share with the main job ---------- */

/* Every size a configuration of (op, dtype, world, in = out offset,
 * registered buffers) is measured at is a multiple of this: whole elements,
 * whole reduce-scatter slices, 16 bytes on 16-aligned buffers, and on
 * registered reduce-scatter buffers slices of whole 16-byte vectors. reg:
 * registered buffers, or an aligned group measured beside its registered
 * twin (the two share one grid). */
uint64_t tune_engine_granule(dc_op op, dc_dtype dtype, int world, int offset, int reg);

/* Open the database at db_path for writing, creating its folders first
 * (mkdir -p) as report --out does. */
tune_result tune_engine_open_store(const char *db_path, tune_store **st);

/* The hash (dc_table_hash) of the table auto dispatch holds here:
 * DC_THRESHOLDS_FILE's, or the compiled-in one. Every process of a job
 * must hold the same. */
tune_result tune_engine_table_hash(uint64_t *hash);

/* That table as a run records it: the compiled-in table's provenance, or
 * "DC_THRESHOLDS_FILE FILE (table HASH)". */
tune_result tune_engine_table_name(char *out, size_t len);

/* Begin a run of `kind` in st with the provenance of machine m and this
 * process (host, git revision: tune_git_rev). */
tune_result tune_engine_begin_run(tune_store *st, const tune_machine *m, const char *kind,
                                  const char *backend, const char *command_line, uint64_t seed,
                                  int64_t parent_run, const char *thresholds, int64_t *run_id);

/* Store trials first_trial .. first_trial+trials-1 of configuration c of
 * run_id, one transaction: with first_trial == 0 a new config row and its
 * samples (*config_id set), else more samples for *config_id. The row's
 * summary (median, p10, p90 of the slowest rank per trial) covers every
 * trial so far: slowest holds the per-trial slowest-rank times of all
 * first_trial + trials trials. */
tune_result tune_engine_store_config(tune_store *st, int64_t run_id, const tune_cfg *c, int first_trial,
                                     int trials, int warmup, const tune_samples *s,
                                     const double *slowest, int64_t *config_id);

/* ---- tune fleet ----------------------------------------------------------- */

/* The canonical text of the options that make a job what it is (what
 * --resume matches; outputs and the order of lists left out). */
void tune_job_options(const tune_job *job, char *out, size_t len);

/* Where tune fleet's consensus takes its samples from. has_group: whether
 * the fleet swept the group of c (c->path auto, c->bytes 0), and from now
 * on the group samples() is asked about. samples: the next ntrials fleet
 * samples of c (its path and bytes), out[t] a slowest-rank time in ns;
 * >= 1e15 where the fleet has none (the path loses there). */
typedef struct {
  int (*has_group)(void *ctx, const tune_cfg *c);
  tune_result (*samples)(void *ctx, const tune_cfg *c, int ntrials, double *out);
  void *ctx;
} tune_replay_source;

/* The main job's crossover search, group by group in the job's order and
 * with its seeds, over the source's samples instead of a backend: with
 * every node's samples alike, each row is the one a node's sweep found.
 * prev[0..nprev) is the job's previous table (NULL: the table auto
 * dispatch holds in this process), the incumbent of every search.
 * *rows (malloc'd, sorted, merged with the previous table's rows the
 * source has no group of, as the main job's header is) and *nrows;
 * *nmeasured rows came from the source. */
tune_result tune_engine_replay(const tune_job *job, int sm, dc_topo topo, const tune_replay_source *src,
                               const dc_threshold_row *prev, size_t nprev, dc_threshold_row **rows,
                               size_t *nrows, size_t *nmeasured);

#endif /* TUNE_ENGINE_H */
