/* launch_mpi.c: the mpi launcher -- `mpirun -np N ./tune ... --launcher mpi`,
 * one rank per process, the rank's work on the process's main thread (MPI is
 * initialized FUNNELED: only that thread calls MPI). Barriers and allgathers
 * among the first `world` ranks run on a communicator split off for each
 * world size at open (MPI_Comm_split is collective over every process).
 *
 * A process that stops -- its rank failed, it caught SIGINT or SIGTERM, its
 * job failed outside the ranks' work (tune_launcher_failing) -- tells every
 * other process (a stop notice on a duplicate of the communicator), and a
 * process waiting in a barrier or allgather stops too when one arrives:
 * collectives are started non-blocking and waited for while looking for
 * notices. A collective left that way never completes, so MPI_Finalize
 * would wait for it: under mpirun (MPI initialized here) the processes
 * learn at close whether any left one, and if so rank 0, once done, ends
 * every process with MPI_Abort and its exit status (tune_launcher_mpi_end);
 * under tune fleet the fleet does so after its last broadcast. A failure
 * every process meets alike (a refused option) leaves no collective and
 * ends with MPI_Finalize. */
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli.h"
#include "launch.h"

typedef struct {
  tune_launcher base;
  int rank, size, node_rank;
  int initialized_here; /* MPI_Finalize on close */
  MPI_Comm *sub;        /* sub[w - 1]: ranks 0 .. w-1 (MPI_COMM_NULL elsewhere) */
  MPI_Comm ctl;         /* stop notices (a duplicate of the launcher's processes) */
  int stopped;          /* a stop notice was sent or received */
} mpi_launcher;

enum { MPI_STOP_TAG = 7301 };

/* What a stop notice carries: the tune_result, and the signal for
 * tune_err_interrupted. Static: a notice's buffer outlives its send. */
static int mpi_notice[2];
static int mpi_abandoned; /* a notice ended a wait: that collective is left */
static int mpi_announced; /* this process sent its notices */

int tune_launcher_mpi_abandoned(void) { return mpi_abandoned; }

/* The processes a launcher spans: MPI_COMM_WORLD, or one node's processes
 * under tune fleet (tune_launcher_mpi_set_comm). */
static MPI_Comm mpi_base = MPI_COMM_WORLD;

void tune_launcher_mpi_set_comm(const void *comm) {
  mpi_base = comm ? *(const MPI_Comm *)comm : MPI_COMM_WORLD;
}

tune_result tune_launcher_mpi_fail(const char *call, int code) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, msg, &len) != MPI_SUCCESS)
    snprintf(msg, sizeof(msg), "error %d", code);
  tune_error("%s failed: %s", call, msg);
  return tune_err_mpi;
}

#define MPI_TRY(call)                                  \
  do {                                                 \
    int e_ = (call);                                   \
    if (e_ != MPI_SUCCESS) return tune_launcher_mpi_fail(#call, e_); \
  } while (0)

/* A stop notice (why) to every other process of comm, not waited for (one
 * small message each). */
static void mpi_notify(MPI_Comm comm, tune_result why) {
  int rank = 0, size = 0;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS) return;
  mpi_announced = 1;
  mpi_notice[0] = (int)why;
  mpi_notice[1] = why == tune_err_interrupted ? tune_interrupt_signal() : 0;
  for (int p = 0; p < size; p++) {
    MPI_Request q;
    if (p != rank && MPI_Isend(mpi_notice, 2, MPI_INT, p, MPI_STOP_TAG, comm, &q) == MPI_SUCCESS)
      MPI_Request_free(&q);
  }
}

void tune_launcher_mpi_stop_unopened(const void *comm, tune_result why) {
  if (!mpi_announced) mpi_notify(*(const MPI_Comm *)comm, why);
}

/* This process stops (why): its notices, sent once. */
static void mpi_stop(mpi_launcher *l, tune_result why) {
  if (l->stopped || l->ctl == MPI_COMM_NULL) return;
  l->stopped = 1;
  mpi_notify(l->ctl, why);
}

/* One look at a collective started as *req (NULL: none) and at comm's stop
 * notices: *done once the collective completed; else one notice taken into
 * got[] with its sender in *from (-1: none came). An MPI error is said
 * (call names the collective). */
static tune_result mpi_look(MPI_Request *req, MPI_Comm comm, const char *call, int *done, int got[2],
                            int *from) {
  int e, heard = 0;
  MPI_Status st;
  *done = 0;
  *from = -1;
  if (req && (e = MPI_Test(req, done, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
    return tune_launcher_mpi_fail(call, e);
  if (*done) return tune_ok;
  if ((e = MPI_Iprobe(MPI_ANY_SOURCE, MPI_STOP_TAG, comm, &heard, &st)) != MPI_SUCCESS)
    return tune_launcher_mpi_fail("MPI_Iprobe", e);
  if (!heard) return tune_ok;
  if ((e = MPI_Recv(got, 2, MPI_INT, st.MPI_SOURCE, MPI_STOP_TAG, comm, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
    return tune_launcher_mpi_fail("MPI_Recv", e);
  *from = st.MPI_SOURCE;
  return tune_ok;
}

/* Wait for a collective started as *req; a stop notice from another
 * process ends the wait instead (the collective is left). */
static tune_result mpi_wait(mpi_launcher *l, MPI_Request *req, const char *call) {
  for (;;) {
    int done, from, got[2];
    TUNE_CHECK(mpi_look(req, l->ctl, call, &done, got, &from));
    if (done) return tune_ok;
    /* Interrupted while waiting (a peer held up elsewhere): stop now. */
    if (tune_interrupt_signal()) {
      mpi_stop(l, tune_err_interrupted);
      mpi_abandoned = 1;
      return tune_err_interrupted;
    }
    if (from >= 0) {
      l->stopped = mpi_abandoned = 1;
      const tune_result why = (tune_result)got[0];
      if (why == tune_err_interrupted) tune_interrupt_adopt(got[1]);
      if (l->rank == 0)
        tune_error("process %d of the job stopped (%s): every process stops", from,
                   why == tune_err_interrupted ? "interrupted" : tune_result_str(why));
      return why == tune_err_interrupted ? tune_err_interrupted : tune_err_mpi;
    }
    sched_yield();
  }
}

void tune_launcher_mpi_end(int code) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fflush(stdout);
  fflush(stderr);
  /* One process aborts: Open MPI's mpirun can crash on several at once. */
  if (rank == 0) MPI_Abort(MPI_COMM_WORLD, code);
  for (int i = 0; i < 600; i++) nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
  tune_error("process 0 did not end the job within a minute of a stop; process %d ends it", rank);
  MPI_Abort(MPI_COMM_WORLD, code);
}

/* Whether any process of l left a collective (mpi_abandoned): every
 * process asks at close, taking the notices none waited for. It waits as
 * long as the others take to close (rank 0 may finish a report first), but
 * once a stop is known a minute at most: a process that does not come then
 * is held up elsewhere, as good as yes. */
static int mpi_any_abandoned(mpi_launcher *l) {
  const int64_t minute = 60 * (int64_t)1000000000;
  int any = mpi_abandoned, done = 0, from, got[2];
  MPI_Request req;
  if (MPI_Iallreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, l->ctl, &req) != MPI_SUCCESS) return 1;
  int64_t until = l->stopped || mpi_abandoned ? tune_now_ns() + minute : 0;
  while (!done && (until == 0 || tune_now_ns() < until)) {
    if (mpi_look(&req, l->ctl, "MPI_Iallreduce", &done, got, &from) != tune_ok) return 1;
    if (from >= 0 && until == 0) until = tune_now_ns() + minute;
    if (!done && from < 0) sched_yield();
  }
  for (int none; mpi_look(NULL, l->ctl, NULL, &none, got, &from) == tune_ok && from >= 0;)
    continue;
  return !done || any;
}

static void mpi_close(tune_launcher *base) {
  mpi_launcher *l = (mpi_launcher *)base;
  if (l == NULL) return;
  const tune_result why = tune_launcher_failure();
  if (why != tune_ok) mpi_stop(l, why);
  const int left = l->initialized_here && l->ctl != MPI_COMM_NULL && mpi_any_abandoned(l);
  for (int w = 0; l->sub && w < l->size; w++)
    if (l->sub[w] != MPI_COMM_NULL) MPI_Comm_free(&l->sub[w]);
  free(l->sub);
  if (l->ctl != MPI_COMM_NULL) MPI_Comm_free(&l->ctl);
  if (left) tune_launcher_mpi_end(tune_exit_status(why == tune_ok ? tune_err_mpi : why));
  if (l->initialized_here) MPI_Finalize();
  free(l);
}

static tune_result mpi_setup(mpi_launcher *l, int ranks) {
  int inited = 0, provided = 0;
  MPI_TRY(MPI_Initialized(&inited));
  if (!inited) {
    MPI_TRY(MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided));
    l->initialized_here = 1;
  }
  /* Errors come back as codes, so that each becomes one readable message. */
  MPI_TRY(MPI_Comm_set_errhandler(mpi_base, MPI_ERRORS_RETURN));
  MPI_TRY(MPI_Comm_rank(mpi_base, &l->rank));
  MPI_TRY(MPI_Comm_size(mpi_base, &l->size));
  if (ranks != 0 && ranks != l->size) {
    tune_error(
        "--gpus %d but mpirun started %d processes; the mpi launcher runs one rank per process "
        "(mpirun -np %d ./tune --gpus %d --launcher mpi)",
        ranks, l->size, ranks, ranks);
    /* A process given another --gpus than the rest would leave them
     * waiting in the barrier below. */
    mpi_notify(mpi_base, tune_err_arg);
    return tune_err_arg;
  }
  /* Open MPI names the node-local rank (the device); elsewhere one node is
   * assumed. Under tune fleet's test grouping several "nodes" share a host
   * and so its devices, one each. */
  const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  l->node_rank = lr ? atoi(lr) : l->rank;
  /* Every process must come to the open: one whose job failed before it
   * (a node's process under tune fleet) says so instead
   * (tune_launcher_mpi_stop_unopened), and the others stop here. */
  MPI_Request req;
  MPI_TRY(MPI_Ibarrier(mpi_base, &req));
  for (int done = 0, from, got[2]; !done;) {
    TUNE_CHECK(mpi_look(&req, mpi_base, "MPI_Ibarrier", &done, got, &from));
    if (from >= 0) {
      mpi_abandoned = 1;
      tune_error("process %d of the job stopped before its ranks started (%s): every process stops", from,
                 tune_result_str((tune_result)got[0]));
      return tune_err_mpi;
    }
    if (!done) sched_yield();
  }
  MPI_TRY(MPI_Comm_dup(mpi_base, &l->ctl));
  l->sub = malloc((size_t)l->size * sizeof(*l->sub));
  if (l->sub == NULL) return tune_err_system;
  for (int w = 0; w < l->size; w++) l->sub[w] = MPI_COMM_NULL;
  for (int w = 1; w <= l->size; w++)
    MPI_TRY(
        MPI_Comm_split(mpi_base, l->rank < w ? 0 : MPI_UNDEFINED, l->rank, &l->sub[w - 1]));
  TUNE_INFO(TUNE_LAUNCH, "mpi launcher: rank %d of %d (node rank %d)", l->rank, l->size,
            l->node_rank);
  return tune_ok;
}

static tune_result mpi_open(int ranks, tune_launcher **out) {
  mpi_launcher *l = calloc(1, sizeof(*l));
  if (l == NULL) return tune_err_system;
  l->base.ops = &tune_launcher_mpi;
  l->ctl = MPI_COMM_NULL;
  tune_result r = mpi_setup(l, ranks);
  if (r != tune_ok) {
    mpi_close(&l->base);
    return r;
  }
  *out = &l->base;
  return tune_ok;
}

static int mpi_ranks(tune_launcher *base) { return ((mpi_launcher *)base)->size; }
static int mpi_first_local(tune_launcher *base) { return ((mpi_launcher *)base)->rank; }
static int mpi_node_rank(tune_launcher *base) { return ((mpi_launcher *)base)->node_rank; }

static int mpi_local_count(tune_launcher *base) {
  (void)base;
  return 1;
}

static tune_result mpi_run(tune_launcher *base, tune_rank_fn fn, void *ctx) {
  mpi_launcher *l = (mpi_launcher *)base;
  tune_result r = fn(ctx, l->rank);
  if (r != tune_ok) mpi_stop(l, r);
  return r;
}

static tune_result mpi_barrier(tune_launcher *base, int world, int rank) {
  mpi_launcher *l = (mpi_launcher *)base;
  if (world < 1 || world > l->size || rank != l->rank || rank >= world) return tune_err_internal;
  MPI_Request req;
  MPI_TRY(MPI_Ibarrier(l->sub[world - 1], &req));
  return mpi_wait(l, &req, "MPI_Ibarrier");
}

static tune_result mpi_allgather(tune_launcher *base, int world, int rank, const void *send,
                                 void *recv, size_t bytes) {
  mpi_launcher *l = (mpi_launcher *)base;
  if (world < 1 || world > l->size || rank != l->rank || rank >= world || bytes > (size_t)INT32_MAX)
    return tune_err_internal;
  MPI_Request req;
  MPI_TRY(MPI_Iallgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, l->sub[world - 1],
                         &req));
  return mpi_wait(l, &req, "MPI_Iallgather");
}

const tune_launcher_ops tune_launcher_mpi = {
    .name = "mpi",
    .single_process = 0,
    .open = mpi_open,
    .ranks = mpi_ranks,
    .first_local = mpi_first_local,
    .local_count = mpi_local_count,
    .process_rank = mpi_first_local,
    .node_rank = mpi_node_rank,
    .run = mpi_run,
    .barrier = mpi_barrier,
    .allgather = mpi_allgather,
    .close = mpi_close,
};
