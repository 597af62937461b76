/* backend.h: what the measurement engine asks of a backend (sim, gpu): run
 * one configuration for a number of trials and hand back every rank's every
 * sample. Backends are rows of a table (tune_backends[]). */
#ifndef TUNE_BACKEND_H
#define TUNE_BACKEND_H

#include "cfg.h"
#include "dc_table.h"
#include "tune.h"

/* What a backend reports about the machine it measures (run provenance). */
typedef struct {
  char gpu_model[64];
  int gpu_count;
  int ranks; /* the ranks it runs (--gpus, or what it found without) */
  int sm;
  dc_topo topo;
  char driver[32];
  char cuda[32];
  char nccl[32];
  char mpi[64];
  char launcher[16];
} tune_machine;

/* Per-trial outputs; arrays are [trials * world], index trial * world + rank.
 * wrong_elems counts the elements, over all ranks and trials, that failed
 * the correctness check (detcoll: bitwise against the CPU fold in rank
 * order; nccl: within a tolerance). */
typedef struct {
  int64_t *elapsed_ns;
  int64_t *delay_ns;
  uint64_t wrong_elems;
  dc_path chosen_path; /* the path that ran (auto resolved); DC_PATH_AUTO for nccl */
} tune_samples;

typedef struct tune_backend tune_backend;

/* The threshold tables a backend holds for auto dispatch: the current one
 * (what detcoll and detcoll_reg measure) and the job's previous one (what
 * the after pass measures beside it, in the same trials: detcoll_prev and
 * detcoll_reg_prev, cfg.h). */
typedef enum { TUNE_TABLE_CURRENT = 0, TUNE_TABLE_PREVIOUS, TUNE_TABLE_COUNT } tune_table_slot;

/* How to open a backend. */
typedef struct {
  int gpus;             /* ranks; 0: every GPU found (gpu backend) */
  uint64_t seed;        /* data and noise */
  const char *launcher; /* gpu: "threads" (default) or "mpi" */
  int virtual_ranks;    /* gpu: place all ranks on GPU 0 as virtual ranks */
  uint64_t max_bytes;   /* largest bytes per rank any configuration will use */
  int graph_calls;      /* graph mode: calls captured per graph; a sample is
                           the graph's time / graph_calls */
} tune_backend_opts;

typedef struct {
  const char *name;
  /* Open; fails with a message (tune_error) if the hardware is missing. */
  tune_result (*open)(const tune_backend_opts *o, tune_backend **out);
  void (*describe)(tune_backend *b, tune_machine *m);
  /* This process's rank among the launcher's processes: only rank 0 writes
   * the database and prints. 0 for one-process launchers. */
  int (*rank)(tune_backend *b);
  /* 1 if the backend can measure c (impl, world size, op) on this machine. */
  int (*supports)(tune_backend *b, const tune_cfg *c);
  /* Use process 0's table rows[0..nrows) (other processes pass anything;
   * collective over the launcher's processes) for the auto dispatch of the
   * impls that read `slot` from now on: TUNE_TABLE_CURRENT for detcoll and
   * detcoll_reg (NULL: the default table, DC_THRESHOLDS_FILE's or the
   * compiled-in one), TUNE_TABLE_PREVIOUS for detcoll_prev and
   * detcoll_reg_prev (NULL: none; those impls cannot be measured then).
   * A malformed table is tune_err_arg with a message. */
  tune_result (*set_table)(tune_backend *b, tune_table_slot slot, const dc_threshold_row *rows,
                           size_t nrows);
  /* The path auto dispatch takes for detcoll config c (auto path) with the
   * table its impl reads, decided alike in every process; DC_PATH_AUTO
   * where the backend cannot tell (no table given to that slot). */
  dc_path (*auto_path)(tune_backend *b, const tune_cfg *c);
  /* Measure nc configurations together: they share op, dtype, world, bytes
   * and mode (e.g. detcoll auto and nccl). Each trial runs every one of them
   * once, after a CPU barrier across ranks, config 0 first on even trials and
   * last on odd ones, the same order on every rank. Trials first_trial ..
   * first_trial + trials - 1 (a later call may add trials to a configuration
   * already measured). s[i] receives c[i]'s samples, every rank's, in every
   * process. */
  tune_result (*measure)(tune_backend *b, const tune_cfg *c, int nc, int first_trial, int trials,
                         int warmup, tune_samples *s);
  void (*close)(tune_backend *b);
  /* Process 0's bytes of buf into buf on every process (collective: every
   * process calls it, from its main thread): what only process 0 reads
   * from the database (--resume) reaches the others. One process: nothing
   * to do. */
  tune_result (*share)(tune_backend *b, void *buf, size_t bytes);
  /* Whether every process was given the same bytes in mine (collective, as
   * share): *differs is the lowest process whose bytes are not process 0's
   * (copied into theirs), -1 where all agree; one process: -1. */
  tune_result (*agree)(tune_backend *b, const void *mine, void *theirs, size_t bytes, int *differs);
} tune_backend_ops;

struct tune_backend {
  const tune_backend_ops *ops;
};

/* The backend named name ("sim", "gpu"), or NULL. */
const tune_backend_ops *tune_backend_find(const char *name);

extern const tune_backend_ops tune_backend_sim;
extern const tune_backend_ops tune_backend_gpu;

#endif /* TUNE_BACKEND_H */
