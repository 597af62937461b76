/* query.h: the read-only questions the main job asks of its database --
 * which run chain to resume, the best forced path of a sweep at a size, the
 * thresholds a sweep emitted -- kept beside the store that owns the file. */
#ifndef TUNE_QUERY_H
#define TUNE_QUERY_H

#include "cfg.h"
#include "store.h"

/* One main job: its before run and, when they exist, the sweep and after
 * runs that name it as parent (0: none); *_done: finished_at is set. */
typedef struct {
  int64_t before, sweep, after;
  int before_done, sweep_done, after_done;
  char command_line[4096]; /* of the before run */
  char options[1024];      /* of the before run, if has_options */
  int has_options;         /* 0: a run from before runs.options (schema 3) */
  int sm;                  /* of the before run's machine */
  char topo[16];
  char gpu_model[64];
  int gpu_count;
  char sweep_thresholds[256]; /* the sweep's compiled-in table (its provenance), if any */
  char host[256];          /* of the before run */
} tune_chain;

/* The chain of before run `before`; tune_err_arg if there is no such run. */
tune_result tune_query_chain(tune_store *st, int64_t before, tune_chain *ch);

/* The kind of run id (before, sweep, after, skew, bench) into kind and the
 * run it belongs to into *parent (0: none); kind[0] = '\0' if there is no
 * run id. */
tune_result tune_query_run_kind(tune_store *st, int64_t id, char *kind, size_t len,
                                int64_t *parent);

/* The chain of the newest before run older than run `below` (0: of all);
 * ch->before = 0 if there is none. */
tune_result tune_query_chain_below(tune_store *st, int64_t below, tune_chain *ch);

/* The fastest forced path of c's impl (detcoll or detcoll_reg) in run_id at
 * c's op, dtype, world, bytes, offsets and mode, without skew, among configs
 * with no wrong element:
 * *path and its median; *median_ns = 0 if the run has none there. */
tune_result tune_query_best_forced(tune_store *st, int64_t run_id, const tune_cfg *c, dc_path *path,
                                   double *median_ns);

/* Whether run_id already holds crossovers of this group. */
tune_result tune_query_has_crossovers(tune_store *st, int64_t run_id, dc_op op, dc_dtype dtype, int world,
                                      dc_align align, dc_mode mode, int64_t skew_ns, int *found);

/* One config of a group (tune_query_group). */
typedef struct {
  dc_path path;
  uint64_t bytes;
  int64_t config_id;
  uint64_t wrong_elems;
} tune_group_config;

/* The configs run_id holds of c's group -- c's impl, op, dtype, world,
 * offsets, mode and skew, at every path and size -- ordered by path and
 * bytes, into *out (malloc'd, NULL when none) and *n. */
tune_result tune_query_group(tune_store *st, int64_t run_id, const tune_cfg *c,
                             tune_group_config **out, size_t *n);

/* Wrong elements recorded for a config. */
tune_result tune_query_wrong(tune_store *st, int64_t config_id, uint64_t *wrong);

/* A configuration of a job whose results were wrong (run_id 0: not known,
 * as in a fleet's merged cells). */
typedef struct {
  int64_t run_id, world, bytes, wrong;
  char kind[16], impl[32], op[32], path[32], dtype[16], mode[16];
} tune_wrong_config;

/* w as a message names it: "IMPL OP path PATH DTYPE world W, B bytes per
 * rank, MODE (KIND run R, N elements wrong)". */
void tune_wrong_config_text(const tune_wrong_config *w, char *buf, size_t len);

/* The configurations of the job of chain ch (its before, sweep and after
 * runs) whose results were wrong, oldest first: *rows malloc'd (NULL for
 * none; the caller frees it), *n rows. */
tune_result tune_query_wrong_configs(tune_store *st, const tune_chain *ch, tune_wrong_config **rows,
                                     size_t *n);

/* The largest regret stored for run_id (0 if none). */
tune_result tune_query_max_regret(tune_store *st, int64_t run_id, double *max_regret);

/* The table rows of the newest header run_id emitted (caller frees *rows);
 * tune_err_arg if it emitted none. */
tune_result tune_query_header_rows(tune_store *st, int64_t run_id, dc_threshold_row **rows, size_t *nrows);

/* The job's previous table -- the table auto dispatch had when the job
 * began (compiled in, or DC_THRESHOLDS_FILE's), stored as a header of its
 * before run -- into *rows (caller frees); *rows NULL and *nrows 0 when the
 * before run has none (a job begun by a tune older than schema 5). */
tune_result tune_query_previous_table(tune_store *st, int64_t before, dc_threshold_row **rows,
                                      size_t *nrows);

/* The text of the newest header run_id emitted (caller frees *text);
 * tune_err_arg if it emitted none. */
tune_result tune_query_header_text(tune_store *st, int64_t run_id, char **text);

#endif /* TUNE_QUERY_H */
