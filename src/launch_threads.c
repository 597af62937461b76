/* launch_threads.c: the threads launcher -- one process, one persistent
 * host thread per rank. A rank's thread lives as long as the launcher, so
 * whatever per-thread state the rank function sets up (the current CUDA
 * device, CPU affinity) holds for every later run(). Barriers are one
 * pthread barrier per world size; the allgather passes pointers through a
 * slot table between two barriers. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "launch.h"

typedef struct threads_launcher threads_launcher;

typedef struct {
  threads_launcher *l;
  int rank;
  pthread_t tid;
  tune_result res;
} threads_rank;

struct threads_launcher {
  tune_launcher base;
  int ranks;
  threads_rank *rank;
  pthread_barrier_t *bar; /* bar[w - 1]: ranks 0 .. w-1 */
  const void **slot;      /* slot[(w - 1) * ranks + r]: rank r's allgather input */
  pthread_mutex_t lock;
  pthread_cond_t go, done;
  unsigned long generation; /* bumped by run() for each job */
  int pending;              /* ranks still working on the current job */
  int quit;
  tune_rank_fn fn;
  void *ctx;
  int nthreads; /* threads started (for close after a failed open) */
  int nbars;
};

static void *threads_main(void *arg) {
  threads_rank *me = arg;
  threads_launcher *l = me->l;
  unsigned long seen = 0;
  for (;;) {
    pthread_mutex_lock(&l->lock);
    while (!l->quit && l->generation == seen) pthread_cond_wait(&l->go, &l->lock);
    if (l->quit) {
      pthread_mutex_unlock(&l->lock);
      return NULL;
    }
    seen = l->generation;
    tune_rank_fn fn = l->fn;
    void *ctx = l->ctx;
    pthread_mutex_unlock(&l->lock);
    tune_result r = fn(ctx, me->rank);
    pthread_mutex_lock(&l->lock);
    me->res = r;
    if (--l->pending == 0) pthread_cond_signal(&l->done);
    pthread_mutex_unlock(&l->lock);
  }
}

static void threads_close(tune_launcher *base) {
  threads_launcher *l = (threads_launcher *)base;
  if (l == NULL) return;
  pthread_mutex_lock(&l->lock);
  l->quit = 1;
  pthread_cond_broadcast(&l->go);
  pthread_mutex_unlock(&l->lock);
  for (int r = 0; r < l->nthreads; r++) pthread_join(l->rank[r].tid, NULL);
  for (int w = 0; w < l->nbars; w++) pthread_barrier_destroy(&l->bar[w]);
  pthread_cond_destroy(&l->go);
  pthread_cond_destroy(&l->done);
  pthread_mutex_destroy(&l->lock);
  free(l->rank);
  free(l->bar);
  free(l->slot);
  free(l);
}

static tune_result threads_open(int ranks, tune_launcher **out) {
  if (ranks < 1) {
    tune_error("the threads launcher needs at least one rank (got %d)", ranks);
    return tune_err_arg;
  }
  threads_launcher *l = calloc(1, sizeof(*l));
  if (l == NULL) return tune_err_system;
  l->base.ops = &tune_launcher_threads;
  l->ranks = ranks;
  pthread_mutex_init(&l->lock, NULL);
  pthread_cond_init(&l->go, NULL);
  pthread_cond_init(&l->done, NULL);
  l->rank = calloc((size_t)ranks, sizeof(*l->rank));
  l->bar = calloc((size_t)ranks, sizeof(*l->bar));
  l->slot = calloc((size_t)ranks * (size_t)ranks, sizeof(*l->slot));
  if (l->rank == NULL || l->bar == NULL || l->slot == NULL) goto fail;
  for (; l->nbars < ranks; l->nbars++)
    if (pthread_barrier_init(&l->bar[l->nbars], NULL, (unsigned)l->nbars + 1) != 0) goto fail;
  for (; l->nthreads < ranks; l->nthreads++) {
    threads_rank *t = &l->rank[l->nthreads];
    t->l = l;
    t->rank = l->nthreads;
    if (pthread_create(&t->tid, NULL, threads_main, t) != 0) goto fail;
  }
  TUNE_INFO(TUNE_LAUNCH, "threads launcher: %d rank threads", ranks);
  *out = &l->base;
  return tune_ok;
fail:
  tune_error("cannot start %d rank threads", ranks);
  threads_close(&l->base);
  return tune_err_system;
}

static int threads_ranks(tune_launcher *base) { return ((threads_launcher *)base)->ranks; }

static int threads_first_local(tune_launcher *base) {
  (void)base;
  return 0;
}

static int threads_process_rank(tune_launcher *base) {
  (void)base;
  return 0;
}

static tune_result threads_run(tune_launcher *base, tune_rank_fn fn, void *ctx) {
  threads_launcher *l = (threads_launcher *)base;
  pthread_mutex_lock(&l->lock);
  l->fn = fn;
  l->ctx = ctx;
  l->pending = l->ranks;
  l->generation++;
  pthread_cond_broadcast(&l->go);
  while (l->pending > 0) pthread_cond_wait(&l->done, &l->lock);
  pthread_mutex_unlock(&l->lock);
  for (int r = 0; r < l->ranks; r++)
    if (l->rank[r].res != tune_ok) return l->rank[r].res;
  return tune_ok;
}

static tune_result threads_barrier(tune_launcher *base, int world, int rank) {
  threads_launcher *l = (threads_launcher *)base;
  if (world < 1 || world > l->ranks || rank < 0 || rank >= world) return tune_err_internal;
  int e = pthread_barrier_wait(&l->bar[world - 1]);
  return e == 0 || e == PTHREAD_BARRIER_SERIAL_THREAD ? tune_ok : tune_err_system;
}

static tune_result threads_allgather(tune_launcher *base, int world, int rank, const void *send,
                                     void *recv, size_t bytes) {
  threads_launcher *l = (threads_launcher *)base;
  if (world < 1 || world > l->ranks || rank < 0 || rank >= world) return tune_err_internal;
  const void **slot = &l->slot[(size_t)(world - 1) * (size_t)l->ranks];
  slot[rank] = send;
  TUNE_CHECK(threads_barrier(base, world, rank));
  for (int p = 0; p < world; p++) memcpy((char *)recv + (size_t)p * bytes, slot[p], bytes);
  /* No rank may reuse its send buffer (or slot) before every peer copied it. */
  return threads_barrier(base, world, rank);
}

const tune_launcher_ops tune_launcher_threads = {
    .name = "threads",
    .single_process = 1,
    .open = threads_open,
    .ranks = threads_ranks,
    .first_local = threads_first_local,
    .local_count = threads_ranks,
    .process_rank = threads_process_rank,
    .node_rank = threads_process_rank,
    .run = threads_run,
    .barrier = threads_barrier,
    .allgather = threads_allgather,
    .close = threads_close,
};

const tune_launcher_ops *tune_launcher_find(const char *name) {
  if (strcmp(name, "threads") == 0) return &tune_launcher_threads;
#ifdef HAVE_MPI
  if (strcmp(name, "mpi") == 0) return &tune_launcher_mpi;
#endif
  return NULL;
}
