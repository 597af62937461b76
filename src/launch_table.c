/* launch_table.c: a threshold table handed from process 0 to every process
 * of a launcher, so that the after pass measures one table on every rank
 * (only process 0 holds the database the table comes from), and checked
 * there once for every backend, which keeps only its own part: libdetcoll
 * comms (gpu) or the sim's model of them; and the check that every
 * process was given the same job (tune_launcher_agree), since mpirun hands
 * each process its own command line and environment. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"

static tune_result launch_failure = tune_ok;

void tune_launcher_failing(tune_result r) { launch_failure = r; }

tune_result tune_launcher_failure(void) { return launch_failure; }

typedef struct {
  tune_launcher *l;
  const dc_threshold_row *rows;
  size_t n;
  dc_threshold_row *copy;
  size_t ncopy;
} share_ctx;

/* Two allgathers among every rank: process 0's row count, then its rows
 * (the other ranks send zeros of the same size). */
static tune_result share_rank(void *ctx, int rank) {
  share_ctx *x = ctx;
  int world = x->l->ops->ranks(x->l);
  uint64_t mine = rank == 0 ? (uint64_t)x->n : 0, *counts = calloc((size_t)world, sizeof(*counts));
  if (counts == NULL) return tune_err_system;
  tune_result r = x->l->ops->allgather(x->l, world, rank, &mine, counts, sizeof(mine));
  size_t n = (size_t)counts[0], bytes = n * sizeof(dc_threshold_row);
  free(counts);
  TUNE_CHECK(r);
  if (n == 0) return tune_ok;
  dc_threshold_row *send = calloc(n, sizeof(*send)), *all = calloc(n * (size_t)world, sizeof(*all));
  if (send == NULL || all == NULL) {
    r = tune_err_system;
    goto out;
  }
  if (rank == 0) memcpy(send, x->rows, bytes);
  TUNE_CHECK_GOTO(x->l->ops->allgather(x->l, world, rank, send, all, bytes), r, out);
  memcpy(send, all, bytes);
  x->copy = send;
  x->ncopy = n;
  send = NULL;
out:
  free(send);
  free(all);
  return r;
}

/* Process 0's rows on every process: a plain copy in one process. */
static tune_result share_rows(tune_launcher *l, const dc_threshold_row *rows, size_t n,
                              dc_threshold_row **copy, size_t *ncopy) {
  if (l == NULL || l->ops->single_process) {
    if (rows == NULL || n == 0) return tune_ok;
    if ((*copy = malloc(n * sizeof(**copy))) == NULL) return tune_err_system;
    memcpy(*copy, rows, n * sizeof(**copy));
    *ncopy = n;
    return tune_ok;
  }
  if (l->ops->local_count(l) != 1) return tune_err_internal;
  share_ctx x = {l, rows, n, NULL, 0};
  TUNE_CHECK(l->ops->run(l, share_rank, &x));
  *copy = x.copy;
  *ncopy = x.ncopy;
  return tune_ok;
}

tune_result tune_launcher_share_table(tune_launcher *l, tune_table_slot slot,
                                      const dc_threshold_row *rows, size_t n,
                                      dc_threshold_row **copy, size_t *ncopy) {
  char why[256];
  *copy = NULL;
  *ncopy = 0;
  if ((unsigned)slot >= TUNE_TABLE_COUNT) return tune_err_internal;
  TUNE_CHECK(share_rows(l, rows, n, copy, ncopy));
  if (*copy == NULL || dc_table_check(*copy, *ncopy, why, sizeof(why)) == 0) return tune_ok;
  free(*copy);
  *copy = NULL;
  *ncopy = 0;
  return tune_table_refused(slot, why);
}

tune_result tune_table_refused(tune_table_slot slot, const char *why) {
  tune_error("the %s threshold table for auto dispatch: %s",
             slot == TUNE_TABLE_PREVIOUS ? "previous" : "current", why);
  return tune_err_arg;
}

typedef struct {
  tune_launcher *l;
  void *buf;
  size_t bytes;
} bytes_ctx;

/* One allgather among every rank; process 0's contribution is kept. */
static tune_result share_bytes_rank(void *ctx, int rank) {
  bytes_ctx *x = ctx;
  int world = x->l->ops->ranks(x->l);
  unsigned char *all = malloc(x->bytes * (size_t)world);
  if (all == NULL) return tune_err_system;
  tune_result r = x->l->ops->allgather(x->l, world, rank, x->buf, all, x->bytes);
  if (r == tune_ok) memcpy(x->buf, all, x->bytes);
  free(all);
  return r;
}

tune_result tune_launcher_share_bytes(tune_launcher *l, void *buf, size_t bytes) {
  if (l == NULL || l->ops->single_process || bytes == 0) return tune_ok;
  if (l->ops->local_count(l) != 1) return tune_err_internal;
  bytes_ctx x = {l, buf, bytes};
  return l->ops->run(l, share_bytes_rank, &x);
}

typedef struct {
  tune_launcher *l;
  const void *mine;
  void *theirs;
  size_t bytes;
  int differs;
} agree_ctx;

/* One allgather among every rank; the first one unlike process 0 is kept. */
static tune_result agree_rank(void *ctx, int rank) {
  agree_ctx *x = ctx;
  int world = x->l->ops->ranks(x->l);
  unsigned char *all = malloc(x->bytes * (size_t)world);
  if (all == NULL) return tune_err_system;
  tune_result r = x->l->ops->allgather(x->l, world, rank, x->mine, all, x->bytes);
  for (int p = 1; r == tune_ok && p < world && x->differs < 0; p++)
    if (memcmp(all, all + (size_t)p * x->bytes, x->bytes) != 0) {
      x->differs = p;
      memcpy(x->theirs, all + (size_t)p * x->bytes, x->bytes);
    }
  free(all);
  return r;
}

tune_result tune_launcher_agree(tune_launcher *l, const void *mine, void *theirs, size_t bytes,
                                int *differs) {
  *differs = -1;
  if (l == NULL || l->ops->single_process || bytes == 0) return tune_ok;
  if (l->ops->local_count(l) != 1) return tune_err_internal;
  agree_ctx x = {l, mine, theirs, bytes, -1};
  TUNE_CHECK(l->ops->run(l, agree_rank, &x));
  *differs = x.differs;
  return tune_ok;
}

/* The words of a (space-separated) that b does not hold, into out. */
static void words_not_in(const char *a, const char *b, char *out, size_t len) {
  size_t n = 0;
  out[0] = '\0';
  for (const char *w = a; *w && n + 1 < len;) {
    size_t wl = strcspn(w, " ");
    int found = 0;
    for (const char *v = b; *v && !found;) {
      size_t vl = strcspn(v, " ");
      found = vl == wl && strncmp(v, w, wl) == 0;
      v += vl + (v[vl] == ' ');
    }
    if (!found && wl > 0) n += (size_t)snprintf(out + n, len - n, "%s%.*s", n ? " " : "", (int)wl, w);
    if (n >= len) n = len - 1;
    w += wl + (w[wl] == ' ');
  }
}

tune_result tune_launcher_options_refused(int rank, const char *zero, const char *theirs) {
  char a[512], b[512];
  words_not_in(theirs, zero, a, sizeof(a));
  words_not_in(zero, theirs, b, sizeof(b));
  tune_error("rank %d was given other options than rank 0 (rank %d: %s; rank 0: %s): every rank must "
             "be given the same options and TUNE_ variables; nothing was measured",
             rank, rank, a[0] ? a : "-", b[0] ? b : "-");
  return tune_err_arg;
}
