/* launch_mpi.c: the mpi launcher -- `mpirun -np N ./tune ... --launcher mpi`,
 * one rank per process, the rank's work on the process's main thread (MPI is
 * initialized FUNNELED: only that thread calls MPI). Barriers and allgathers
 * among the first `world` ranks run on a communicator split off for each
 * world size at open (MPI_Comm_split is collective over every process). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "launch.h"

typedef struct {
  tune_launcher base;
  int rank, size, node_rank;
  int initialized_here; /* MPI_Finalize on close */
  MPI_Comm *sub;        /* sub[w - 1]: ranks 0 .. w-1 (MPI_COMM_NULL elsewhere) */
} mpi_launcher;

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

static void mpi_close(tune_launcher *base) {
  mpi_launcher *l = (mpi_launcher *)base;
  if (l == NULL) return;
  for (int w = 0; l->sub && w < l->size; w++)
    if (l->sub[w] != MPI_COMM_NULL) MPI_Comm_free(&l->sub[w]);
  free(l->sub);
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
    return tune_err_arg;
  }
  /* Open MPI names the node-local rank (the device); elsewhere one node is
   * assumed. Under tune fleet's test grouping several "nodes" share a host
   * and so its devices, one each. */
  const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  l->node_rank = lr ? atoi(lr) : l->rank;
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
  return fn(ctx, ((mpi_launcher *)base)->rank);
}

static tune_result mpi_barrier(tune_launcher *base, int world, int rank) {
  mpi_launcher *l = (mpi_launcher *)base;
  if (world < 1 || world > l->size || rank != l->rank || rank >= world) return tune_err_internal;
  MPI_TRY(MPI_Barrier(l->sub[world - 1]));
  return tune_ok;
}

static tune_result mpi_allgather(tune_launcher *base, int world, int rank, const void *send,
                                 void *recv, size_t bytes) {
  mpi_launcher *l = (mpi_launcher *)base;
  if (world < 1 || world > l->size || rank != l->rank || rank >= world || bytes > (size_t)INT32_MAX)
    return tune_err_internal;
  MPI_TRY(MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, l->sub[world - 1]));
  return tune_ok;
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
