/* stability.c: which segments of a threshold row earn their place, and the
 * hysteresis that keeps the incumbent table's paths (tune_stab_*). */
#include "stability.h"

#include <math.h>
#include <stdlib.h>

int tune_stab_simplicity(dc_path path) {
  /* One block and one kernel first; copies by the copy engine between two
   * flag kernels last. */
  static const struct {
    dc_path path;
    int rank;
  } order[] = {
      {DC_PATH_SINGLE_BLOCK, 0}, {DC_PATH_PUSH, 1},        {DC_PATH_FUSED, 2},
      {DC_PATH_ONE_SHOT, 3},     {DC_PATH_MULTI_BLOCK, 4}, {DC_PATH_TWO_SHOT, 5},
      {DC_PATH_PIPELINE, 6},     {DC_PATH_DIRECT, 7},      {DC_PATH_COPY_ENGINE, 8},
  };
  for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
    if (order[i].path == path) return order[i].rank;
  return DC_PATH_COUNT;
}

static uint64_t stab_round(double v, uint64_t granule) {
  double q = floor(v / (double)granule + 0.5);
  return q < 1.0 ? granule : (uint64_t)q * granule;
}

/* The part of (lo, hi] inside the grid's range, as [a, b]; 0 if empty. */
static int stab_clip(const tune_stab *st, uint64_t lo, uint64_t hi, uint64_t *a, uint64_t *b) {
  uint64_t g0 = st->grid[0], gn = st->grid[st->ngrid - 1];
  *a = lo < g0 ? g0 : lo;
  *b = hi > gn ? gn : hi;
  return *a <= *b && hi >= g0 && lo < gn;
}

/* Interior points of a stretch tested besides the grid sizes in it. */
#define STAB_INTERIOR 3

/* The test sizes of (lo, hi] into x (room for ngrid + STAB_INTERIOR + 2):
 * the grid sizes inside it, its ends and STAB_INTERIOR points evenly spaced
 * in log size between them, each once; 0 if it lies outside the grid's
 * range. */
static int stab_test_sizes(const tune_stab *st, uint64_t lo, uint64_t hi, uint64_t *x) {
  uint64_t a, b;
  if (!stab_clip(st, lo, hi, &a, &b)) return 0;
  int n = 0;
  for (int k = 0; k < st->ngrid; k++)
    if (st->grid[k] > lo && st->grid[k] <= hi) x[n++] = st->grid[k];
  for (int k = 0; k <= STAB_INTERIOR + 1; k++) {
    double t = (double)k / (STAB_INTERIOR + 1);
    uint64_t v =
        stab_round(exp(log((double)a) + t * (log((double)b) - log((double)a))), st->granule);
    v = v < a ? a : v > b ? b : v;
    int dup = 0;
    for (int i = 0; i < n; i++) dup |= x[i] == v;
    if (!dup) x[n++] = v;
  }
  return n;
}

/* 1 (into *yes) if path fast beats every path of slow[0..nslow-1] by more
 * than the tolerance at one of the test sizes of (lo, hi]. */
static tune_result stab_beats_somewhere(const tune_stab *st, int fast, const int *slow, int nslow,
                                        uint64_t lo, uint64_t hi, uint64_t *x, int *yes) {
  int n = stab_test_sizes(st, lo, hi, x);
  *yes = 0;
  for (int k = 0; k < n && !*yes; k++) {
    int all = 1;
    for (int j = 0; j < nslow && all; j++)
      TUNE_CHECK(st->faster(st->ctx, fast, slow[j], x[k], st->tolerance, &all));
    *yes = all;
  }
  return tune_ok;
}

static int stab_valid(const tune_stab *st) {
  return st != NULL && st->faster != NULL && st->grid != NULL && st->ngrid >= 1 &&
         st->granule >= 1 && st->paths != NULL && st->tolerance > 1.0;
}

tune_result tune_stab_pick_merge(const tune_stab *st, const tune_stab_seg *seg, int nseg, int *m,
                                 int *into_prev) {
  if (!stab_valid(st) || seg == NULL || nseg < 1 || m == NULL || into_prev == NULL)
    return tune_err_arg;
  uint64_t *x = malloc((size_t)(st->ngrid + STAB_INTERIOR + 2) * sizeof(*x));
  if (x == NULL) return tune_err_system;
  tune_result res = tune_ok;
  /* The best candidate so far, compared as (no join, simplicity, width). */
  int best_join = 0, best_simple = 0;
  double best_width = 0.0;
  *m = -1;
  *into_prev = 0;
  for (int i = 0; i < nseg && nseg > 1; i++) {
    uint64_t a, b;
    if (!stab_clip(st, seg[i].lo, seg[i].hi, &a, &b)) continue;
    double width = (double)b / (double)a;
    for (int side = 1; side >= 0; side--) {
      int n = side ? i - 1 : i + 1, other = side ? i + 1 : i - 1;
      if (n < 0 || n >= nseg || seg[n].path < 0 || seg[i].path < 0) continue;
      int join = other >= 0 && other < nseg && seg[other].path == seg[n].path;
      int simple = tune_stab_simplicity(st->paths[seg[n].path]);
      int better = *m < 0 || join > best_join ||
                   (join == best_join &&
                    (simple < best_simple || (simple == best_simple && width < best_width)));
      if (!better) continue;
      /* Once the segment is gone, its sizes go to whichever neighbour wins
       * there after bisecting again: it earns its place where it beats
       * them all. */
      int beats, nb[2], nnb = 0;
      if (i > 0) nb[nnb++] = seg[i - 1].path;
      if (i + 1 < nseg) nb[nnb++] = seg[i + 1].path;
      TUNE_CHECK_GOTO(
          stab_beats_somewhere(st, seg[i].path, nb, nnb, seg[i].lo, seg[i].hi, x, &beats), res,
          exit);
      if (beats) continue;
      *m = i;
      *into_prev = side;
      best_join = join;
      best_simple = simple;
      best_width = width;
    }
  }
exit:
  free(x);
  return res;
}

tune_result tune_stab_pick_simpler(const tune_stab *st, const tune_stab_seg *seg, int nseg,
                                   int npaths, int *m, int *path) {
  if (!stab_valid(st) || seg == NULL || nseg < 1 || npaths < 1 || m == NULL || path == NULL)
    return tune_err_arg;
  uint64_t *x = malloc((size_t)(st->ngrid + STAB_INTERIOR + 2) * sizeof(*x));
  if (x == NULL) return tune_err_system;
  tune_result res = tune_ok;
  *m = -1;
  for (int i = 0; i < nseg && *m < 0; i++) {
    uint64_t a, b;
    if (seg[i].path < 0 || !stab_clip(st, seg[i].lo, seg[i].hi, &a, &b)) continue;
    int own = tune_stab_simplicity(st->paths[seg[i].path]);
    /* The simplest candidate first. */
    for (int rank = 0; rank < own && *m < 0; rank++)
      for (int q = 0; q < npaths && *m < 0; q++) {
        if (tune_stab_simplicity(st->paths[q]) != rank) continue;
        int beats;
        TUNE_CHECK_GOTO(
            stab_beats_somewhere(st, seg[i].path, &q, 1, seg[i].lo, seg[i].hi, x, &beats), res,
            exit);
        if (!beats) *m = i, *path = q;
      }
  }
exit:
  free(x);
  return res;
}

/* The path of segs[0..n-1] at bytes (-1 if none holds it). */
static int stab_path_at(const tune_stab_seg *segs, int n, uint64_t bytes) {
  for (int i = 0; i < n; i++)
    if (bytes > segs[i].lo && bytes <= segs[i].hi) return segs[i].path;
  return n > 0 && bytes == 0 ? segs[0].path : -1;
}

static int cmp_u64(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return a < b ? -1 : a > b;
}

tune_result tune_stab_incumbent(const tune_stab *st, const tune_stab_seg *seg, int nseg,
                                const tune_stab_seg *inc, int ninc, tune_stab_seg *out, int *nout,
                                int max_out, int *changed) {
  if (!stab_valid(st) || seg == NULL || nseg < 1 || inc == NULL || ninc < 1 || out == NULL ||
      nout == NULL || changed == NULL || max_out < nseg)
    return tune_err_arg;
  int nb = nseg + ninc;
  uint64_t *bound = malloc((size_t)nb * sizeof(*bound));
  uint64_t *x = malloc((size_t)(st->ngrid + STAB_INTERIOR + 2) * sizeof(*x));
  tune_stab_seg *tmp = malloc((size_t)nb * sizeof(*tmp));
  tune_result res = tune_ok;
  int n = 0, nt = 0;
  if (bound == NULL || x == NULL || tmp == NULL) {
    res = tune_err_system;
    goto exit;
  }
  /* Every end of a stretch where both rows hold one path each. */
  for (int i = 0; i < nseg; i++) bound[n++] = seg[i].hi;
  /* An incumbent threshold outside the measured sizes cannot be judged. */
  for (int i = 0; i < ninc; i++)
    if (inc[i].hi >= st->grid[0] && inc[i].hi < st->grid[st->ngrid - 1]) bound[n++] = inc[i].hi;
  qsort(bound, (size_t)n, sizeof(*bound), cmp_u64);
  uint64_t lo = 0;
  for (int k = 0; k < n; k++) {
    uint64_t hi = bound[k];
    if (hi <= lo) continue;
    int pn = stab_path_at(seg, nseg, hi), pi = stab_path_at(inc, ninc, hi), path = pn;
    if (pi >= 0 && pi != pn) {
      int beats, ntest = stab_test_sizes(st, lo, hi, x);
      if (ntest > 0) {
        TUNE_CHECK_GOTO(stab_beats_somewhere(st, pn, &pi, 1, lo, hi, x, &beats), res, exit);
        if (!beats) path = pi;
      }
    }
    if (nt > 0 && tmp[nt - 1].path == path)
      tmp[nt - 1].hi = hi;
    else
      tmp[nt++] = (tune_stab_seg){path, lo, hi};
    lo = hi;
  }
  *changed = nt != nseg;
  for (int i = 0; i < nt && !*changed; i++)
    *changed = tmp[i].path != seg[i].path || tmp[i].hi != seg[i].hi;
  if (nt > max_out) {
    TUNE_INFO(TUNE_TUNER, "keeping the incumbent's paths would take %d segments; not kept", nt);
    *changed = 0;
  }
  if (*changed) {
    for (int i = 0; i < nt; i++) out[i] = tmp[i];
    *nout = nt;
  } else {
    for (int i = 0; i < nseg; i++) out[i] = seg[i];
    *nout = nseg;
  }
exit:
  free(bound);
  free(x);
  free(tmp);
  return res;
}
