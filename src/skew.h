/* skew.h: `tune skew` -- rank-skew calibration. One rank (fixed, or a
 * random one each trial) is held back by a %globaltimer spin on its stream
 * before its collective, outside its timed region; every rank's residence
 * (events around the collective) and the delay actually produced are kept.
 * From them, per configuration: the slowest rank's residence (max), the
 * delayed rank's (injected), the smallest (last: the rank that arrived last
 * and waited least -- the zero-wait cost), max - last (time spent waiting)
 * and the measured delay, as median, p10 and p90 over trials; and per (impl,
 * op, shape, mode) a least-squares line of each residence against the
 * measured delay. The pure parts (per-trial roles, summaries, fits, the
 * table and the JSON) are separate from the command so tests can feed them
 * synthetic ranks. */
#ifndef TUNE_SKEW_H
#define TUNE_SKEW_H

#include <stdio.h>

#include "backend.h"
#include "stats.h"
#include "store.h"
#include "tune.h"

/* The per-trial quantities, in the order of the skew_summaries columns. */
typedef enum {
  TUNE_SKEW_MAX = 0,  /* max over ranks of the residence */
  TUNE_SKEW_INJECTED, /* the delayed rank's residence */
  TUNE_SKEW_LAST,     /* min over ranks: the rank that waited least */
  TUNE_SKEW_WAIT,     /* max - last */
  TUNE_SKEW_DELAY,    /* the delayed rank's measured delay */
  TUNE_SKEW_NQ
} tune_skew_q;

/* The roles fitted against the measured delay: TUNE_SKEW_MAX .. TUNE_SKEW_WAIT. */
#define TUNE_SKEW_NROLES TUNE_SKEW_DELAY

/* "max", "injected", "last", "wait", "delay"; NULL out of range. */
const char *tune_skew_q_name(tune_skew_q q);

/* The rank delayed in one trial, from that trial's world delays: the rank
 * with the largest delay > 0; with none, skew_rank if it is a rank (a zero
 * delay on a fixed rank), else rank 0 (random skew with a zero delay: every
 * rank is alike). */
int tune_skew_injected_rank(const int64_t *delay_row, int world, int skew_rank);

/* Per-trial quantities of trials x world samples (index trial * world +
 * rank; elapsed: residence, delay: measured delay) into out[q * trials + t]
 * for every tune_skew_q q. Nothing assumes which rank arrived last: last is
 * the minimum residence of each trial, whichever rank that is. tune_err_arg:
 * trials or world < 1, or a NULL pointer. */
tune_result tune_skew_per_trial(const int64_t *elapsed, const int64_t *delay, int trials, int world,
                                int skew_rank, double *out);

/* Median, p10 and p90 over trials of each quantity of per_trial (as
 * tune_skew_per_trial lays it out) into out[q]. trials >= 1. */
void tune_skew_summarize(const double *per_trial, int trials, tune_skew_stat out[TUNE_SKEW_NQ]);

/* Every trial of one (impl, op, shape, mode) across its delays: the points
 * the sensitivity fits are drawn through. */
typedef struct {
  size_t n, cap;
  double *q[TUNE_SKEW_NQ];
} tune_skew_series;

/* Append trials per-trial rows (tune_skew_per_trial's layout). */
tune_result tune_skew_series_add(tune_skew_series *s, const double *per_trial, int trials);
/* Forget the points, keep the memory. */
void tune_skew_series_clear(tune_skew_series *s);
void tune_skew_series_free(tune_skew_series *s);

/* Fit role (TUNE_SKEW_MAX .. TUNE_SKEW_WAIT) of s against the measured
 * delay at confidence. tune_err_arg (no message): fewer than 3 points or
 * fewer than 2 distinct delays -- nothing to fit a slope through. */
tune_result tune_skew_fit(const tune_skew_series *s, tune_skew_q role, double confidence,
                          tune_linfit_result *r);

/* ---- the command --------------------------------------------------------- */

#define TUNE_SKEW_MAX_SHAPES 16
#define TUNE_SKEW_MAX_DELAYS 32
#define TUNE_SKEW_MAX_IMPLS 3
/* The longest delay the command accepts: 10 s. */
#define TUNE_SKEW_MAX_DELAY_NS 10000000000LL

typedef struct {
  uint64_t rows, cols; /* elements; bytes per rank = rows * cols * dtype size */
} tune_skew_shape;

typedef struct {
  const char *backend; /* "gpu" or "sim" */
  unsigned ops;        /* bit per dc_op */
  dc_dtype dtype;
  unsigned modes; /* bit per dc_mode */
  tune_skew_shape shapes[TUNE_SKEW_MAX_SHAPES];
  int nshapes;
  int64_t delays_ns[TUNE_SKEW_MAX_DELAYS];
  int ndelays;
  int skew_rank; /* 0..world-1, or -2: a random rank each trial */
  const char *impls[TUNE_SKEW_MAX_IMPLS];
  int nimpls;
  dc_path path; /* detcoll's path; DC_PATH_AUTO unless forced */
  int world;
  int virtual_ranks;
  const char *launcher; /* NULL: the backend's default */
  int trials, warmup;
  uint64_t seed;
  double confidence;
  const char *db_path;
  const char *json_path;  /* NULL: no JSON */
  const char *report_dir; /* NULL: <db folder>/report */
  int no_report;
  const char *command_line;
} tune_skew_opts;

/* An impl left out of the run: the backend cannot measure it. */
typedef struct {
  const char *impl;
  dc_op op;
} tune_skew_skipped;

/* What a skew run produced, in measurement order. */
typedef struct {
  int64_t run_id;
  tune_skew_summary_row *sum;
  size_t nsum, sum_cap;
  tune_skew_fit_row *fit;
  size_t nfit, fit_cap;
  tune_skew_skipped skipped[TUNE_SKEW_MAX_IMPLS * DC_OP_COUNT];
  size_t nskipped;
} tune_skew_results;

void tune_skew_results_free(tune_skew_results *r);

/* The summaries and fits of r as aligned text tables (microseconds) with a
 * heading from o. */
void tune_skew_print(FILE *out, const tune_skew_opts *o, const char *backend_note,
                     const tune_skew_results *r);

/* r as one JSON object {"run_id", "backend", ..., "summaries": [...],
 * "fits": [...], "skipped": [...]}; times in ns. A write error is left in
 * out's error flag (tune_output_close reports it). */
void tune_skew_write_json(FILE *out, const tune_skew_opts *o, const tune_skew_results *r);

/* Parse the command line of `tune skew` (argv[0] is "skew") into *o. Returns
 * -1 when the command should run, 0 when --help was printed, and
 * TUNE_EXIT_USAGE (a message naming the argument printed) for bad input:
 * every check happens here, before anything is opened or written. */
int tune_skew_parse(int argc, char **argv, tune_skew_opts *o);

/* Run a parsed skew calibration: measure, store (one run of kind 'skew',
 * its configs, samples, summaries and fits), print the tables, write the
 * JSON and the report. Messages for the user go through tune_error. */
tune_result tune_skew_run(const tune_skew_opts *o);

/* `tune skew ...`: parse, run; the process exit status. */
int tune_cmd_skew(int argc, char **argv);

#endif /* TUNE_SKEW_H */
