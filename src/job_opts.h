/* job_opts.h: the options of the commands that measure a job's groups --
 * `tune run` and `tune verify` -- as rows of the option spec (opts.h), so
 * the two commands give an option one name, range and help. Measure
 * floor. */
#ifndef TUNE_JOB_OPTS_H
#define TUNE_JOB_OPTS_H

#include <stddef.h>

#include "engine.h"
#include "opts.h"

/* The options as parsed, before the checks that need them all. cmd names
 * the command in messages. */
typedef struct {
  tune_job job;
  const char *cmd;
  const char *worlds;
  int64_t gpus;
  double tolerance; /* verify: the regret allowed (0.03) */
  int node_timeout; /* fleet: seconds a node may take (0: wait) */
  int64_t run;      /* replay: the job of this run (0: the newest of the options) */
  const char *incumbent; /* replay: the table file standing in for the job's previous table */
} tune_job_args;

/* The defaults of every measuring command. */
void tune_job_args_init(tune_job_args *a, const char *cmd);

/* The checks that need every option: ranges between options, offsets of
 * distinct alignment classes, the numeric params (command line >
 * environment > default), --gpus, and the world sizes. 0 or a usage error
 * status. */
int tune_job_args_check(tune_job_args *a);

/* The default world sizes of a job on n ranks: 2, 4, 8 up to n, and n
 * itself (a machine of 6 GPUs gets rows of world 6, where auto dispatch
 * would otherwise take world 4's); n = 0 (ranks not known yet): 2, 4, 8.
 * worlds holds TUNE_MAX_WORLDS; returns how many. */
int tune_job_default_worlds(int n, int *worlds);

/* A job given neither --gpus nor --worlds, once its backend has counted
 * the ranks (tune_machine.ranks): the default worlds of those n ranks, as
 * --gpus n would have them. Returns 1 where they changed. */
int tune_job_resolve_worlds(tune_job *job, int n);

/* TUNE_OPT_CALL handlers of the rows below (out is a tune_job_args). */
int tune_job_opt_mask(void *out, const tune_opt *o, const char *v, int seen, int argc, char **argv);
int tune_job_opt_offsets(void *out, const tune_opt *o, const char *v, int seen, int argc, char **argv);
int tune_job_opt_param(void *out, const tune_opt *o, const char *v, int seen, int argc, char **argv);
int tune_job_opt_resume(void *out, const tune_opt *o, const char *v, int seen, int argc, char **argv);
int tune_job_opt_skew_us(void *out, const tune_opt *o, const char *v, int seen, int argc, char **argv);

/* The rows both commands have. */
#define TUNE_JOB_ROWS_MACHINE                                                        \
  TUNE_OPT_INT_ROW("gpus", NULL, "N", tune_job_args, gpus, 1, 1024,                 \
                   "ranks (GPUs) to use (default: every GPU found; required\n"    \
                   "with --backend sim); world sizes are 2, 4, 8 up to N, and N\n" \
                   "up to 8 (libdetcoll's largest world)"),                             \
      TUNE_OPT_CHOICE_ROW("backend", "gpu|sim", tune_job_args, job.backend, "gpu|sim", \
                          "measure the GPUs (default) or rehearse on the sim model")

/* The main job's alone: verify runs its ranks as threads. */
#define TUNE_JOB_ROW_LAUNCHER                                                        \
  TUNE_OPT_CHOICE_ROW("launcher", "L", tune_job_args, job.launcher, "threads|mpi", \
                      "threads (default: one process, a thread per rank) or mpi\n" \
                      "(mpirun -np N tune ... --launcher mpi: a process per rank)")

#define TUNE_JOB_ROWS_DEVICE                                                              \
  TUNE_OPT_FLAG_ROW("virtual-ranks", tune_job_args, job.virtual_ranks,                   \
                    "put every rank on GPU 0 (development on one GPU)"),                 \
      TUNE_OPT_INT_ROW("graph-calls", NULL, "K", tune_job_args, job.graph_calls, 1, 1000, \
                       "collectives captured per CUDA graph in graph mode (default 20,\n" \
                       "as nccl-tests)")

#define TUNE_JOB_ROW_DB \
  TUNE_OPT_STRING_ROW("db", NULL, "FILE", tune_job_args, job.db_path, "SQLite database (default tune-results/tune.db)")

#define TUNE_JOB_ROWS_GROUPS                                                                                    \
  TUNE_OPT_CALL_ROW("ops", "op", "LIST", tune_job_opt_mask,                                                    \
                    "all_gather,all_reduce,reduce_scatter (default all); also --op"),                          \
      TUNE_OPT_CALL_ROW("dtypes", "dtype", "LIST", tune_job_opt_mask,                                          \
                        "bf16,fp16,fp32 (default bf16,fp32); also --dtype; all_gather\n"                       \
                        "moves bytes and is measured once, as bf16, whatever the list"),                       \
      TUNE_OPT_CALL_ROW("modes", "mode", "LIST", tune_job_opt_mask, "eager,graph (default both); also --mode"), \
      TUNE_OPT_STRING_ROW("worlds", NULL, "LIST", tune_job_args, worlds, "world sizes, 1.." DC_STR(DC_MAX_WORLD) " (default 2,4,8 up to --gpus, and --gpus)"), \
      TUNE_OPT_CALL_ROW("offsets", NULL, "LIST", tune_job_opt_offsets,                                         \
                        "buffer offsets in bytes, in = out, 0.." DC_STR(TUNE_MAX_OFFSET) " (default 0,4);\n"    \
                        "reductions leave out one that is not of whole elements"),                             \
      TUNE_OPT_FLAG_ROW("no-reg", tune_job_args, job.no_reg,                                                   \
                        "leave registered buffers out: each 16-aligned offset is\n"                            \
                        "otherwise measured again with its buffers registered\n"                               \
                        "(detcoll_reg: the direct and copy_engine paths, reg16 rows)")

#define TUNE_JOB_ROWS_SIZES                                                                               \
  TUNE_OPT_SIZE_ROW("min-bytes", tune_job_args, job.min_bytes, "smallest bytes per rank (default 1K)"), \
      TUNE_OPT_SIZE_ROW("max-bytes", tune_job_args, job.max_bytes, \
                        "largest bytes per rank (default 256M)"),                                        \
      TUNE_OPT_DOUBLE_ROW("grid-factor", "F", tune_job_args, job.grid_factor, 1.1, 64,                   \
                          "coarse grid ratio (default 2)")

#define TUNE_JOB_ROW_CONFIDENCE                                                   \
  TUNE_OPT_DOUBLE_ROW("confidence", "C", tune_job_args, job.confidence, 0.5, 0.9999, \
                      "confidence of the median-difference CI (default 0.95)")

/* max_trials_help: what --max-trials caps in this command. */
#define TUNE_JOB_ROWS_TRIALS(max_trials_help)                                                                    \
  TUNE_OPT_CALL_ROW("trials", NULL, "N", tune_job_opt_param, "trials per configuration (default 20; env TUNE_TRIALS)"), \
      TUNE_OPT_CALL_ROW("max-trials", NULL, "N", tune_job_opt_param, max_trials_help),                          \
      TUNE_OPT_CALL_ROW("warmup", NULL, "N", tune_job_opt_param, "warm-up calls (default 5; env TUNE_WARMUP)"),  \
      TUNE_OPT_CALL_ROW("seed", NULL, "N", tune_job_opt_param,                                                  \
                        "seed of data, noise and bootstrap (default 1; env TUNE_SEED)")

#endif /* TUNE_JOB_OPTS_H */
