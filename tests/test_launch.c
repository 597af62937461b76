/* test_launch.c: the threads launcher's barrier and allgather, for every
 * world of a launcher, with ranks that spin (2 ranks: fewer than the CPUs
 * of most machines) and ranks that sleep (more ranks than CPUs), and in
 * rounds where one rank arrives late enough that the others stop spinning
 * and sleep. A rank that left a barrier early would find a peer's stamp of
 * the round missing; one that never woke would hang, and the alarm ends
 * the test as failed. */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "launch.h"
#include "tap.h"

#define MAX_RANKS 64
#define ROUNDS 600
#define LATE_EVERY 97 /* a round in which one rank arrives late */
#define LATE_NS 3000000L /* longer than the barrier spins */

typedef struct {
  tune_launcher *l;
  int world;
  atomic_int stamp[MAX_RANKS]; /* the round a rank reached (relaxed: the barrier orders) */
  atomic_long missing;         /* a peer's stamp not there after the barrier */
  atomic_long gathered_wrong;  /* allgather entries not the peer's */
} job;

static tune_result rank_fn(void *ctx, int rank) {
  job *j = ctx;
  if (rank >= j->world) return tune_ok;
  for (int k = 1; k <= ROUNDS; k++) {
    if (k % LATE_EVERY == 0 && rank == (k / LATE_EVERY) % j->world)
      nanosleep(&(struct timespec){0, LATE_NS}, NULL);
    atomic_store_explicit(&j->stamp[rank], k, memory_order_relaxed);
    TUNE_CHECK(j->l->ops->barrier(j->l, j->world, rank));
    for (int p = 0; p < j->world; p++)
      if (atomic_load_explicit(&j->stamp[p], memory_order_relaxed) < k) atomic_fetch_add(&j->missing, 1);
    /* No rank stamps the next round before every rank checked this one. */
    TUNE_CHECK(j->l->ops->barrier(j->l, j->world, rank));
    if (k % 10 != 0) continue;
    int64_t send[2] = {rank, k}, recv[2 * MAX_RANKS];
    TUNE_CHECK(j->l->ops->allgather(j->l, j->world, rank, send, recv, sizeof(send)));
    for (int p = 0; p < j->world; p++)
      if (recv[2 * p] != p || recv[2 * p + 1] != k) atomic_fetch_add(&j->gathered_wrong, 1);
  }
  return tune_ok;
}

int main(void) {
  static const int counts[] = {2, 3, MAX_RANKS};
  alarm(120); /* a lost wake-up: SIGALRM kills the test, a failure */
  for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
    tune_launcher *l = NULL;
    int ranks = counts[i];
    if (!tap_ok(tune_launcher_threads.open(ranks, &l) == tune_ok, "open %d rank threads", ranks)) continue;
    for (int world = 1; world <= ranks; world = world < ranks && 2 * world > ranks ? ranks : 2 * world) {
      static job j;
      memset(&j, 0, sizeof(j));
      j.l = l;
      j.world = world;
      tune_result r = l->ops->run(l, rank_fn, &j);
      tap_ok(r == tune_ok && atomic_load(&j.missing) == 0 && atomic_load(&j.gathered_wrong) == 0,
             "%d ranks, world %d: %d rounds, %ld stamps missing after a barrier, %ld allgather entries wrong",
             ranks, world, ROUNDS, atomic_load(&j.missing), atomic_load(&j.gathered_wrong));
    }
    l->ops->close(l);
  }
  printf("1..%d\n", tap_count);
  return tap_failed ? 1 : 0;
}
