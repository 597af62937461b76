/* launch.h: launchers run the ranks of the gpu backend. A launcher owns
 * where each rank's host code runs -- a pinned thread of this process
 * (threads) or its own process (mpi) -- and gives the ranks a CPU barrier
 * and an allgather among the first `world` ranks. The backend describes the
 * per-rank work as a function; run() calls it on every rank this process
 * drives, each on that rank's own host thread, and returns when all are
 * done.
 *
 * Collective rules: barrier(world) and allgather(world) are called by ranks
 * 0 .. world-1 only, all of them, in the same order; ranks >= world must not
 * call them for that world. Every call into the launcher but run() and close()
 * comes from inside a rank function. */
#ifndef TUNE_LAUNCH_H
#define TUNE_LAUNCH_H

#include <stddef.h>

#include "backend.h"
#include "dc_table.h"
#include "tune.h"

typedef struct tune_launcher tune_launcher;

/* One rank's work: rank is the global rank. */
typedef tune_result (*tune_rank_fn)(void *ctx, int rank);

typedef struct {
  const char *name;
  /* 1: every rank is a thread of this process (one address space). */
  int single_process;
  /* Start a launcher of `ranks` ranks (mpi: 0 takes the process count, any
   * other count must equal it). Fails with a message. */
  tune_result (*open)(int ranks, tune_launcher **out);
  /* Total ranks; ranks this process drives are first_local() ..
   * first_local() + local_count() - 1. */
  int (*ranks)(tune_launcher *l);
  int (*first_local)(tune_launcher *l);
  int (*local_count)(tune_launcher *l);
  /* This process's rank among the launcher's processes (0 for threads). */
  int (*process_rank)(tune_launcher *l);
  /* Ranks on this process's node before this one (mpi: the node-local rank,
   * which picks the device); threads: 0. */
  int (*node_rank)(tune_launcher *l);
  /* fn(ctx, r) for every local rank r on its own thread; waits for all;
   * returns the failure of the lowest failing rank, else tune_ok. */
  tune_result (*run)(tune_launcher *l, tune_rank_fn fn, void *ctx);
  /* CPU barrier among ranks 0 .. world-1. */
  tune_result (*barrier)(tune_launcher *l, int world, int rank);
  /* Every rank of 0 .. world-1 passes bytes in send; recv receives all
   * ranks' contributions in rank order (world * bytes). */
  tune_result (*allgather)(tune_launcher *l, int world, int rank, const void *send, void *recv,
                           size_t bytes);
  void (*close)(tune_launcher *l);
} tune_launcher_ops;

struct tune_launcher {
  const tune_launcher_ops *ops;
};

/* Process 0's table rows[0..n) (ignored on other processes) for a
 * backend's table slot on every process of l: *copy (malloc'd, the caller
 * frees it; NULL for no rows) and *ncopy, checked (dc_table_check): a
 * malformed table is refused on every process alike, with one message
 * (tune_table_refused) and tune_err_arg. Collective: every process calls
 * it, from its main thread, outside rank functions. l NULL: one process,
 * a plain copy. */
tune_result tune_launcher_share_table(tune_launcher *l, tune_table_slot slot,
                                      const dc_threshold_row *rows, size_t n,
                                      dc_threshold_row **copy, size_t *ncopy);

/* The message of a table refused for slot (why: the reason); tune_err_arg. */
tune_result tune_table_refused(tune_table_slot slot, const char *why);

/* Process 0's bytes of buf into buf on every process of l (collective, as
 * tune_launcher_share_table). l NULL or a one-process launcher: nothing to
 * do. */
tune_result tune_launcher_share_bytes(tune_launcher *l, void *buf, size_t bytes);

/* Whether every process of l was given the same bytes in mine (collective,
 * as tune_launcher_share_table): *differs is the lowest process whose bytes
 * are not process 0's, its bytes copied into theirs; -1 where they all
 * agree (l NULL or a one-process launcher: always). */
tune_result tune_launcher_agree(tune_launcher *l, const void *mine, void *theirs, size_t bytes,
                                int *differs);

/* The message of a job whose process `rank` was given other options than
 * process 0 (options texts of space-separated words: process 0's zero,
 * that process's theirs), naming the words that differ; tune_err_arg. */
tune_result tune_launcher_options_refused(int rank, const char *zero, const char *theirs);

/* A failed MPI call (code: its MPI error code): one tune_error() line
 * naming the call and MPI's message; tune_err_mpi. */
tune_result tune_launcher_mpi_fail(const char *call, int code);

/* The mpi launcher spans the processes of *comm (an MPI_Comm) from its
 * next open on, instead of MPI_COMM_WORLD (NULL: back to it): tune fleet
 * gives each node's processes a launcher of their own. */
void tune_launcher_mpi_set_comm(const void *comm);

/* This process's job is failing with r (not tune_ok), said before its
 * launcher is closed: a launcher of several processes then tells the
 * others, so that none waits for this one in a collective. */
void tune_launcher_failing(tune_result r);
/* What tune_launcher_failing was told last, else tune_ok. */
tune_result tune_launcher_failure(void);

/* Whether an mpi launcher of this process left a collective unfinished
 * because a process stopped (its own or another's failure): MPI_Finalize
 * would wait for it forever, so the process ends with MPI_Abort once the
 * job's rank 0 is done (tune fleet: after its last broadcast). */
int tune_launcher_mpi_abandoned(void);

/* This process's job failed (why) before its mpi launcher opened over the
 * processes of *comm (an MPI_Comm): the others, waiting at the open, are
 * told, unless this process told them already. */
void tune_launcher_mpi_stop_unopened(const void *comm, tune_result why);

/* End every process of MPI_COMM_WORLD with exit status code: process 0
 * at once (it is done: call it last), any other after waiting a minute
 * for process 0 to do so. Does not return. */
void tune_launcher_mpi_end(int code);

/* The launcher named name ("threads", "mpi"), or NULL (mpi: NULL when this
 * tune was built without MPI). */
const tune_launcher_ops *tune_launcher_find(const char *name);

extern const tune_launcher_ops tune_launcher_threads;
extern const tune_launcher_ops tune_launcher_mpi;

#endif /* TUNE_LAUNCH_H */
