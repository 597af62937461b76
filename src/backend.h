/* backend.h: what the measurement engine asks of a backend (sim, gpu): run
 * one configuration for a number of trials and hand back every rank's every
 * sample. Backends are rows of a table (tune_backends[]). */
#ifndef TUNE_BACKEND_H
#define TUNE_BACKEND_H

#include "dc_table.h"
#include "tune.h"

/* One measured configuration. impl: "detcoll" or "nccl". path: DC_PATH_AUTO
 * or a forced path. skew_rank: -1 none, -2 a random rank each trial. */
typedef struct {
  const char *impl;
  dc_op op;
  dc_path path;
  dc_dtype dtype;
  int world;
  uint64_t bytes;
  int in_offset;
  int out_offset;
  dc_mode mode;
  int64_t skew_ns;
  int skew_rank;
} tune_cfg;

/* What a backend reports about the machine it measures (run provenance). */
typedef struct {
  char gpu_model[64];
  int gpu_count;
  int sm;
  dc_topo topo;
  char driver[32];
  char cuda[32];
  char nccl[32];
  char mpi[64];
  char launcher[16];
} tune_machine;

/* Per-trial outputs; arrays are [trials * world], index trial * world + rank. */
typedef struct {
  int64_t *elapsed_ns;
  int64_t *delay_ns;
  uint64_t wrong_elems;
  dc_path chosen_path; /* the path that ran (auto resolved) */
} tune_samples;

typedef struct tune_backend tune_backend;

typedef struct {
  const char *name;
  /* Open for `gpus` ranks; fails with a message if the hardware is missing. */
  tune_result (*open)(int gpus, uint64_t seed, tune_backend **out);
  void (*describe)(tune_backend *b, tune_machine *m);
  /* Use this table for DC_PATH_AUTO from now on (NULL: the compiled-in one). */
  void (*set_table)(tune_backend *b, const dc_threshold_row *rows, size_t nrows);
  /* Trials first_trial .. first_trial+trials-1 of c (a later call may add
   * trials to a configuration already measured). */
  tune_result (*measure)(tune_backend *b, const tune_cfg *c, int first_trial, int trials, int warmup,
                         tune_samples *s);
  void (*close)(tune_backend *b);
} tune_backend_ops;

struct tune_backend {
  const tune_backend_ops *ops;
};

/* The backend named name ("sim", "gpu"), or NULL. */
const tune_backend_ops *tune_backend_find(const char *name);

extern const tune_backend_ops tune_backend_sim;
extern const tune_backend_ops tune_backend_gpu;

#endif /* TUNE_BACKEND_H */
