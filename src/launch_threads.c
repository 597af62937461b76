/* launch_threads.c: the threads launcher -- one process, one persistent
 * host thread per rank. A rank's thread lives as long as the launcher, so
 * whatever per-thread state the rank function sets up (the current CUDA
 * device, CPU affinity) holds for every later run(). Barriers are one
 * threads_bar per world size; the allgather passes pointers through a slot
 * table between two barriers. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "launch.h"

typedef struct threads_launcher threads_launcher;

/* A CPU barrier that spins before it sleeps. The gpu backend times a
 * collective from the moment each rank leaves the barrier before it, and
 * the slowest rank's time counts, so how far apart the ranks leave adds to
 * every eager figure. A pthread barrier wakes its sleepers through the
 * kernel. On one H200 (2 virtual ranks, eager, up to 64 KiB), the two
 * ranks' times of a trial differed by 5.6 and 4.6 us on average with it,
 * and by 1.9 and 2.0 us spinning, and the medians fell by about a quarter
 * (docs/results/2026-12-03-h200/call13/barrier.txt). A spinning rank
 * leaves as soon as it sees the last arrival, as nccl-tests' threads do.
 * It sleeps after THREADS_BAR_SPIN_NS, so a long wait (rank 0 writing the
 * database) costs no core, and it does not spin at all where the ranks
 * outnumber the CPUs this process may run on. */
typedef struct {
  atomic_uint arrived;   /* ranks in the current round */
  atomic_uint round;     /* bumped by the last arrival of each round */
  atomic_int sleepers;   /* ranks in (or entering) pthread_cond_wait */
  unsigned n;
  int spin;
  pthread_mutex_t lock;
  pthread_cond_t wake;
} threads_bar;

#define THREADS_BAR_SPIN_NS 1000000

/* Lets a hyperthread sibling (perhaps another rank) run while this one spins. */
#if defined(__x86_64__) || defined(__i386__)
#define THREADS_CPU_RELAX() __builtin_ia32_pause()
#else
#define THREADS_CPU_RELAX() ((void)0)
#endif

static void threads_bar_init(threads_bar *b, unsigned n, int spin) {
  atomic_init(&b->arrived, 0);
  atomic_init(&b->round, 0);
  atomic_init(&b->sleepers, 0);
  b->n = n;
  b->spin = spin;
  pthread_mutex_init(&b->lock, NULL);
  pthread_cond_init(&b->wake, NULL);
}

static void threads_bar_destroy(threads_bar *b) {
  pthread_cond_destroy(&b->wake);
  pthread_mutex_destroy(&b->lock);
}

/* The last arrival resets the count before it bumps the round, so a rank
 * that sees the new round and arrives again counts in the next one. It
 * reads sleepers after the bump, and a sleeper counts itself before it
 * reads the round (both sequentially consistent): either the sleeper sees
 * the new round or the last arrival sees the sleeper and wakes it. */
static void threads_bar_wait(threads_bar *b) {
  unsigned round = atomic_load(&b->round);
  if (atomic_fetch_add(&b->arrived, 1) + 1 == b->n) {
    atomic_store(&b->arrived, 0);
    atomic_store(&b->round, round + 1);
    if (atomic_load(&b->sleepers) > 0) {
      pthread_mutex_lock(&b->lock);
      pthread_cond_broadcast(&b->wake);
      pthread_mutex_unlock(&b->lock);
    }
    return;
  }
  if (b->spin) {
    const int64_t until = tune_now_ns() + THREADS_BAR_SPIN_NS;
    for (unsigned i = 1;; i++) {
      if (atomic_load(&b->round) != round) return;
      THREADS_CPU_RELAX();
      if (i % 64 == 0 && tune_now_ns() > until) break;
    }
  }
  pthread_mutex_lock(&b->lock);
  atomic_fetch_add(&b->sleepers, 1);
  while (atomic_load(&b->round) == round) pthread_cond_wait(&b->wake, &b->lock);
  atomic_fetch_sub(&b->sleepers, 1);
  pthread_mutex_unlock(&b->lock);
}

/* Whether this process may run on at least `ranks` CPUs. */
static int threads_cpus_for(int ranks) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  return CPU_COUNT(&set) >= ranks;
}

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
  threads_bar *bar;       /* bar[w - 1]: ranks 0 .. w-1 */
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
  for (int w = 0; w < l->nbars; w++) threads_bar_destroy(&l->bar[w]);
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
  const int spin = threads_cpus_for(ranks);
  for (; l->nbars < ranks; l->nbars++) threads_bar_init(&l->bar[l->nbars], (unsigned)l->nbars + 1, spin);
  for (; l->nthreads < ranks; l->nthreads++) {
    threads_rank *t = &l->rank[l->nthreads];
    t->l = l;
    t->rank = l->nthreads;
    if (pthread_create(&t->tid, NULL, threads_main, t) != 0) goto fail;
  }
  TUNE_INFO(TUNE_LAUNCH, "threads launcher: %d rank threads, barriers %s", ranks,
            spin ? "spin, then sleep" : "sleep (more ranks than CPUs)");
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
  threads_bar_wait(&l->bar[world - 1]);
  return tune_ok;
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
