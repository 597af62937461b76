/* engine.h: the measurement engine and the main job: measure with the
 * current thresholds ("before"), sweep the forced paths and find crossovers
 * ("sweep"), write the thresholds header, measure with it ("after"), store
 * regret, and draw the report. */
#ifndef TUNE_ENGINE_H
#define TUNE_ENGINE_H

#include "backend.h"
#include "tune.h"

#define TUNE_MAX_WORLDS 8
#define TUNE_MAX_OFFSETS 4

typedef struct {
  const char *backend; /* "gpu" or "sim" */
  int gpus;
  const char *db_path;
  int create_db_dir; /* create the database's folder (one level) if missing */
  const char *header_path; /* NULL: kernels/thresholds.h for gpu, beside the db for sim */
  int allow_sim;           /* let a sim run install kernels/thresholds.h */
  const char *report_dir;  /* NULL: <db dir>/report */
  int no_report;
  unsigned ops;    /* bit per dc_op */
  unsigned dtypes; /* bit per dc_dtype */
  unsigned modes;  /* bit per dc_mode */
  int worlds[TUNE_MAX_WORLDS];
  int nworlds;
  int offsets[TUNE_MAX_OFFSETS]; /* in = out offset, bytes */
  int noffsets;
  uint64_t min_bytes, max_bytes;
  double grid_factor;
  double resolution;
  double confidence;
  int trials, max_trials, warmup;
  uint64_t seed;
  const char *command_line;
  const char *srcdir; /* source tree holding kernels/thresholds.h */
} tune_job;

/* Run the main job end to end. Messages for the user go through tune_error. */
tune_result tune_job_run(const tune_job *job);

#endif /* TUNE_ENGINE_H */
