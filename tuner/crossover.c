/* crossover.c: coarse grid, run merging and CI-decided bisection that turn
 * per-path latency measurements into one threshold row (tune_xover_find). */
#include "crossover.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stability.h"
#include "stats.h"

/* A grid of more than TUNE_XOVER_MAX_GRID sizes means a step factor so
 * close to 1 that the search would measure for days: a malformed search.
 * Likewise for the factor steps walked to build it (most may round onto the
 * same granule when the factor is tiny). */
#define XOVER_MAX_STEPS 1e6

/* Every sample taken of one path at one size, kept for the whole search. */
typedef struct {
  int path_index;
  uint64_t bytes;
  int n, cap;
  double *x;
} sample_set;

typedef struct {
  const tune_xover_search *s;
  sample_set *sets;
  int nsets;
  size_t capsets;
} xsearch;

/* Room for a grid and the midpoints near_tie_midpoints may insert, one
 * between each two of its sizes. */
#define XOVER_MAX_GRID_MIDS (2 * TUNE_XOVER_MAX_GRID - 1)

/* Grid sizes in a row a path must trail the winner by prune_ratio, and
 * not be closing in on it, before the coarse grid stops measuring it at
 * larger sizes. */
#define XOVER_PRUNE_STREAK 2

/* A run of coarse grid sizes [first, last] won by one path. */
typedef struct {
  int path_index;
  int first, last;
} xrun;

/* The index of the sample set of (path pi, bytes) in xs->sets, a new empty
 * one if there is none, with room for n samples. */
static tune_result set_of(xsearch *xs, int pi, uint64_t bytes, int n, int *index) {
  int i = 0;
  while (i < xs->nsets && !(xs->sets[i].path_index == pi && xs->sets[i].bytes == bytes)) i++;
  if (i == xs->nsets) {
    TUNE_CHECK(
        tune_grow((void **)&xs->sets, &xs->capsets, (size_t)xs->nsets, sizeof(*xs->sets), 64));
    xs->sets[xs->nsets++] = (sample_set){.path_index = pi, .bytes = bytes};
  }
  sample_set *set = &xs->sets[i];
  if (set->cap < n) {
    double *grown = realloc(set->x, (size_t)n * sizeof(*grown));
    if (grown == NULL) return tune_err_system;
    set->x = grown;
    set->cap = n;
  }
  *index = i;
  return tune_ok;
}

/* At least n samples of each of the distinct paths pis[0..np) at bytes,
 * measuring only those not yet held; idx[i]: the index of pis[i]'s set in
 * xs->sets. The paths that hold the fewest are measured together
 * (measure_set, in the same trials) up to the next count another holds, and
 * so on up to n: paths of one comparison share every trial they can. */
static tune_result samples_fill(xsearch *xs, const int *pis, int np, uint64_t bytes, int n,
                                int *idx) {
  const tune_xover_search *s = xs->s;
  int k;
  if (np < 1 || np > DC_PATH_COUNT) return tune_err_internal;
  for (int i = 0; i < np; i++) TUNE_CHECK(set_of(xs, pis[i], bytes, n, &idx[i]));
  for (;;) {
    int lo = n, to = n;
    for (int i = 0; i < np; i++)
      if (xs->sets[idx[i]].n < lo) lo = xs->sets[idx[i]].n;
    if (lo >= n) return tune_ok;
    for (int i = 0; i < np; i++)
      if (xs->sets[idx[i]].n > lo && xs->sets[idx[i]].n < to) to = xs->sets[idx[i]].n;
    dc_path paths[DC_PATH_COUNT];
    double *out[DC_PATH_COUNT];
    k = 0;
    for (int i = 0; i < np; i++)
      if (xs->sets[idx[i]].n == lo) {
        paths[k] = s->paths[pis[i]];
        out[k++] = xs->sets[idx[i]].x + lo;
        TUNE_TRACE(TUNE_TUNER, "measure %s at %llu bytes: %d more trials (have %d)",
                   dc_path_name(s->paths[pis[i]]), (unsigned long long)bytes, to - lo, lo);
      }
    if (k > 1 && s->measure_set)
      TUNE_CHECK(s->measure_set(s->ctx, paths, k, bytes, to - lo, out));
    else
      for (int i = 0; i < k; i++) TUNE_CHECK(s->measure(s->ctx, paths[i], bytes, to - lo, out[i]));
    for (int i = 0; i < np; i++)
      if (xs->sets[idx[i]].n == lo) xs->sets[idx[i]].n = to;
  }
}

/* The first n samples of paths a and b at bytes (samples_fill) into *xa and
 * *xb; the arrays stay valid until either set is extended again. */
static tune_result samples_pair(xsearch *xs, int a, int b, uint64_t bytes, int n, const double **xa,
                                const double **xb) {
  int pis[2] = {a, b}, idx[2];
  TUNE_CHECK(samples_fill(xs, pis, 2, bytes, n, idx));
  *xa = xs->sets[idx[0]].x;
  *xb = xs->sets[idx[1]].x;
  return tune_ok;
}

/* Compare two paths at one size by the CI of median(above) - median(below),
 * doubling the sample while the CI straddles zero. *sign: +1 below wins
 * (CI above zero), -1 above wins (CI below zero), 0 a tie at max_trials. */
static tune_result compare_at(xsearch *xs, int below, int above, uint64_t bytes, int *sign,
                              double *diff, double *lo, double *hi) {
  const tune_xover_search *s = xs->s;
  for (int n = s->trials;; n = tune_look_next(n, s->max_trials)) {
    const double *a, *b;
    TUNE_CHECK(samples_pair(xs, below, above, bytes, n, &a, &b));
    /* A seed per comparison keeps each interval reproducible on its own,
     * whatever order the search happens to visit sizes in. */
    uint64_t seed = s->seed ^ (bytes * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)below << 48) ^
                    ((uint64_t)above << 56) ^ (uint64_t)n;
    TUNE_CHECK(tune_ci_median_diff(a, (size_t)n, b, (size_t)n, s->confidence, seed, diff, lo, hi));
    *sign = *lo > 0.0 ? 1 : *hi < 0.0 ? -1 : 0;
    if (*sign != 0 || n >= s->max_trials) return tune_ok;
  }
}

static uint64_t round_granule(double v, uint64_t granule) {
  double q = floor(v / (double)granule + 0.5);
  return q < 1.0 ? granule : (uint64_t)q * granule;
}

static int xover_max_segments(const tune_xover_search *s) {
  return s->max_segments ? s->max_segments : DC_MAX_SEGMENTS;
}

static tune_result check_search(const tune_xover_search *s, int max_xo) {
  const char *why = NULL;
  if (s == NULL || s->measure == NULL || s->paths == NULL)
    why = "no search, measure function or paths";
  else if (s->npaths < 1 || s->npaths > DC_PATH_COUNT)
    why = "path count out of range";
  else if (s->granule < 1 || s->min_bytes < 1 || s->max_bytes < s->min_bytes ||
           s->max_bytes > UINT64_MAX - s->granule)
    why = "sizes or granule out of range";
  else if (!(s->grid_factor > 1.0) || !(s->resolution > 0.0))
    why = "grid factor or resolution out of range";
  else if (s->trials < 2 || s->max_trials < s->trials || !(s->confidence > 0.0 && s->confidence < 1.0))
    why = "trials or confidence out of range";
  else if (s->max_segments < 0 || s->max_segments > DC_MAX_SEGMENTS)
    why = "segment count out of range";
  else if (!(s->tolerance == 0.0 || (s->tolerance > 1.0 && isfinite(s->tolerance))))
    why = "tolerance out of range";
  else if (max_xo < xover_max_segments(s) - 1)
    why = "no room for the crossovers";
  else if (s->incumbent != NULL && (s->incumbent->nseg < 1 || s->incumbent->nseg > DC_MAX_SEGMENTS))
    why = "incumbent row's segment count out of range";
  for (int i = 0; why == NULL && i < s->npaths; i++) {
    if (s->paths[i] <= DC_PATH_AUTO || s->paths[i] >= DC_PATH_COUNT) why = "a path out of range";
    for (int j = 0; why == NULL && j < i; j++)
      if (s->paths[j] == s->paths[i]) why = "a path named twice";
  }
  if (why == NULL) return tune_ok;
  tune_error("crossover search: %s", why);
  return tune_err_arg;
}

tune_result tune_xover_grid(uint64_t min_bytes, uint64_t max_bytes, double grid_factor, uint64_t granule,
                            uint64_t *g, int *ng) {
  if (g == NULL || ng == NULL || granule < 1 || min_bytes < 1 || max_bytes > UINT64_MAX - granule ||
      !(grid_factor > 1.0))
    return tune_err_arg;
  uint64_t lo = (min_bytes + granule - 1) / granule * granule;
  uint64_t hi = max_bytes / granule * granule;
  if (hi < lo || log((double)hi / (double)lo) / log(grid_factor) > XOVER_MAX_STEPS) return tune_err_arg;
  int n = 0;
  g[n++] = lo;
  for (double x = (double)lo * grid_factor;; x *= grid_factor) {
    uint64_t v = x >= (double)hi ? hi : round_granule(x, granule);
    if (v >= hi) break;
    if (v <= g[n - 1]) continue;
    if (n == TUNE_XOVER_MAX_GRID - 1) return tune_err_arg;
    g[n++] = v;
  }
  if (g[n - 1] < hi) g[n++] = hi;
  *ng = n;
  return tune_ok;
}

/* Hand run m's sizes to its previous (into_prev) or next neighbour, joining
 * the two neighbours when they are the same path; returns the new count. */
static int absorb_run(xrun *r, int nruns, int m, int into_prev) {
  int ndrop = 1;
  if (into_prev)
    r[m - 1].last = r[m].last;
  else
    r[m + 1].first = r[m].first;
  if (m > 0 && m + 1 < nruns && r[m - 1].path_index == r[m + 1].path_index) {
    r[m - 1].last = r[m + 1].last;
    ndrop = 2;
  }
  memmove(&r[m], &r[m + ndrop], (size_t)(nruns - m - ndrop) * sizeof(*r));
  return nruns - ndrop;
}

/* Merge the run that costs least to lose into a neighbour (see
 * tune_xover_find); returns the new run count. A run's cost is the sum over
 * its grid sizes of log(neighbour's median / its own), for the cheaper of
 * its neighbours: a narrow band won by a hair goes first, a band at the end
 * of the range that a path wins by a fifth stays. */
static int merge_cheapest(xrun *r, int nruns, const double *med, int npaths) {
  int m = 0, into_prev = 0;
  double best = INFINITY;
  for (int i = 0; i < nruns; i++) {
    for (int side = 0; side < 2; side++) {
      int n = side ? i - 1 : i + 1;
      if (n < 0 || n >= nruns) continue;
      double cost = 0.0;
      for (int k = r[i].first; k <= r[i].last; k++)
        cost += log(med[k * npaths + r[n].path_index]) - log(med[k * npaths + r[i].path_index]);
      if (cost < best) {
        best = cost;
        m = i;
        into_prev = side;
      }
    }
  }
  TUNE_INFO(TUNE_TUNER, "merging run %d (grid sizes %d..%d) into its %s neighbour: %.3f log-latency lost", m,
            r[m].first, r[m].last, into_prev ? "previous" : "next", best);
  return absorb_run(r, nruns, m, into_prev);
}

/* One comparison's outcome (see compare_at). */
typedef struct {
  int sign;
  double diff, lo, hi;
} xci;

static tune_result probe(xsearch *xs, int below, int above, uint64_t bytes, xci *c) {
  return compare_at(xs, below, above, bytes, &c->sign, &c->diff, &c->lo, &c->hi);
}

/* The granule-rounded geometric midpoint of (lo, hi), or 0 when the two
 * are within the resolution or no granule lies strictly between them. */
static uint64_t midpoint(const tune_xover_search *s, uint64_t lo, uint64_t hi) {
  if (!((double)hi > (double)lo * (1.0 + s->resolution))) return 0;
  uint64_t mid = round_granule(sqrt((double)lo * (double)hi), s->granule);
  if (mid <= lo) mid = lo + s->granule;
  if (mid >= hi) mid = hi - s->granule;
  return mid > lo && mid < hi ? mid : 0;
}

/* A bisection's bracket: lo where below won, hi where above won -- with a
 * CI below zero once have_hi -- and at_hi the comparison there; decided
 * once the crossover lies within the resolution. */
typedef struct {
  uint64_t lo, hi;
  xci at_hi;
  int have_hi, decided;
} xbracket;

/* above won at hi (c: the comparison there, its CI below zero). */
static void above_won(xbracket *br, uint64_t hi, const xci *c) {
  br->hi = hi;
  br->at_hi = *c;
  br->have_hi = 1;
}

/* below won at lo (c: the comparison there) where the medians gave the size
 * to above: the crossover lies further up, at most at top, the end of
 * above's run. Returns 1 while that leaves room to search. */
static int past_hi(xbracket *br, uint64_t lo, const xci *c, uint64_t top) {
  br->lo = lo;
  br->at_hi = *c;
  br->hi = top > lo ? top : lo;
  return br->hi > br->lo;
}

/* A tie at m (c: the comparison there), which usually lies within noise of
 * the crossover itself: the sizes half the resolution either side of it (a,
 * b) are compared too. Below winning at a and above at b bracket the
 * crossover within the resolution after all; one of them going the other
 * way narrows the bracket and *more says to search on; a second tie ends
 * the search undecided, with hi at m and the CI there. */
static tune_result tie_at(xsearch *xs, int below, int above, uint64_t m, const xci *c, uint64_t top,
                          xbracket *br, int *more) {
  const tune_xover_search *s = xs->s;
  double half = sqrt(1.0 + s->resolution);
  uint64_t a = round_granule((double)m / half, s->granule);
  uint64_t b = round_granule((double)m * half, s->granule);
  uint64_t cap = m < br->hi ? br->hi : top;
  xci cs;
  a = a > br->lo ? a : br->lo;
  b = b < cap ? b : cap;
  *more = 1;
  TUNE_CHECK(probe(xs, below, above, a, &cs));
  if (cs.sign < 0) {
    above_won(br, a, &cs);
    return tune_ok;
  }
  if (cs.sign > 0) {
    br->lo = a;
    if (b > m) {
      TUNE_CHECK(probe(xs, below, above, b, &cs));
      if (cs.sign < 0) {
        above_won(br, b, &cs);
        br->decided = 1;
        *more = 0;
        return tune_ok;
      }
      if (cs.sign > 0) {
        /* A tie between two wins of below: the crossover is higher --
         * below the CI-backed hi, or up to the end of above's run when
         * the tie was at the median-only hi itself. */
        if (m < br->hi)
          br->lo = b;
        else
          *more = past_hi(br, b, &cs, top);
        return tune_ok;
      }
    }
  }
  br->hi = m;
  br->at_hi = *c;
  *more = 0;
  return tune_ok;
}

/* The crossover a finished bisection found, into *xo. */
static void bracket_xover(const tune_xover_search *s, int below, int above, const xbracket *br,
                          tune_xover *xo) {
  /* Noise can make a median-only grid size contradict its CI and close the
   * bracket from the wrong side; that is no decision. */
  int decided = br->decided && br->lo < br->hi;
  /* An undecided change ends at a tie: the two paths are indistinguishable
   * at hi, which is the best estimate of the crossover, whereas lo may lie a
   * whole bracket below it. */
  *xo = (tune_xover){.below = s->paths[below],
                     .above = s->paths[above],
                     .bytes = decided ? br->lo : br->hi,
                     .lo_bytes = br->lo,
                     .hi_bytes = br->hi,
                     .diff_ns = br->at_hi.diff,
                     .ci_lo_ns = br->at_hi.lo,
                     .ci_hi_ns = br->at_hi.hi,
                     .confidence = s->confidence,
                     .decided = decided};
  TUNE_INFO(TUNE_TUNER, "crossover %s -> %s at %llu (..%llu) diff %.1f ns CI [%.1f, %.1f]%s",
            dc_path_name(xo->below), dc_path_name(xo->above), (unsigned long long)xo->bytes,
            (unsigned long long)br->hi, br->at_hi.diff, br->at_hi.lo, br->at_hi.hi,
            decided ? "" : " undecided");
}

/* Narrow the change between below (winning at lo by the coarse medians) and
 * above (winning at hi, likewise); top is the last grid size of above's run,
 * as far as the change may move up when the medians at hi were misled by
 * noise. The bracket keeps lo where below won and hi where above won with
 * a CI below zero; a tie goes to tie_at. */
static tune_result bisect(xsearch *xs, int below, int above, uint64_t lo, uint64_t hi, uint64_t top,
                          tune_xover *xo) {
  xbracket br = {lo, hi, {0, 0.0, 0.0, 0.0}, 0, 0};
  int more = 1;
  while (more) {
    uint64_t m = br.have_hi ? midpoint(xs->s, br.lo, br.hi) : br.hi;
    xci c;
    if (m == 0) {
      br.decided = 1;
      break;
    }
    TUNE_CHECK(probe(xs, below, above, m, &c));
    if (c.sign < 0) {
      above_won(&br, m, &c);
    } else if (c.sign > 0 && m < br.hi) {
      br.lo = m;
    } else if (c.sign > 0) {
      more = past_hi(&br, m, &c, top);
    } else {
      TUNE_CHECK(tie_at(xs, below, above, m, &c, top, &br, &more));
    }
  }
  bracket_xover(xs->s, below, above, &br, xo);
  return tune_ok;
}

/* ---- stability (tuner/stability.h) -------------------------------------- */

/* What the stability rules ask the search about: the sample cache, and the
 * coarse grid's medians (INFINITY where a path was pruned). */
typedef struct {
  xsearch *xs;
  const uint64_t *g;
  int ng;
  const double *med;
} stab_ctx;

/* 1 if the coarse grid stopped measuring path pi at or around bytes: it
 * trails far behind there, and measuring it (a single block at 256 MiB)
 * would cost seconds a trial. */
static int stab_pruned(const stab_ctx *c, int pi, uint64_t bytes) {
  int np = c->xs->s->npaths, k = 0;
  while (k + 1 < c->ng && c->g[k + 1] <= bytes) k++;
  if (isinf(c->med[k * np + pi])) return 1;
  return k + 1 < c->ng && c->g[k] < bytes && isinf(c->med[(k + 1) * np + pi]);
}

/* tune_faster_fn over the sample cache: the CI of median(slow) - ratio *
 * median(fast), as the regret of slow against fast (tune_ci_regret),
 * doubling the sample while it straddles zero. A decided win must hold at
 * two looks in a row (tune_look_done): a segment or a switch from the
 * incumbent rests on one, and one look at 20 trials of eager medians is
 * too narrow (on one H200, the points where chained jobs' headers
 * differed fell from 47 to 13 in four pairs). The size asked is measured
 * at the nearest granule: a stretch of the incumbent row may end off it. */
static tune_result stab_faster(void *ctx, int fast, int slow, uint64_t bytes, double ratio,
                               int *yes) {
  stab_ctx *c = ctx;
  const tune_xover_search *s = c->xs->s;
  bytes = round_granule((double)bytes, s->granule);
  *yes = 0;
  if (stab_pruned(c, slow, bytes)) {
    *yes = !stab_pruned(c, fast, bytes);
    return tune_ok;
  }
  if (stab_pruned(c, fast, bytes)) return tune_ok;
  for (int n = s->trials, seen = 0;; n = tune_look_next(n, s->max_trials)) {
    const double *a, *b;
    double diff, lo, hi;
    TUNE_CHECK(samples_pair(c->xs, fast, slow, bytes, n, &a, &b));
    uint64_t seed = s->seed ^ (bytes * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)fast << 40) ^
                    ((uint64_t)slow << 52) ^ (uint64_t)n ^ 0x5ab1e;
    TUNE_CHECK(tune_ci_regret(b, a, (size_t)n, ratio, s->confidence, seed, &diff, &lo, &hi));
    if (tune_look_done(lo, hi, n, s->max_trials, &seen)) {
      *yes = lo > 0.0;
      return tune_ok;
    }
  }
}

static tune_stab stab_rules(const tune_xover_search *s, stab_ctx *c) {
  return (tune_stab){.tolerance = s->tolerance,
                     .grid = c->g,
                     .ngrid = c->ng,
                     .granule = s->granule,
                     .paths = s->paths,
                     .faster = stab_faster,
                     .ctx = c};
}

/* Hand one segment that has not earned its place to a neighbour (*again =
 * 1: the changes must be bisected again), or leave the runs as they are. */
static tune_result stab_merge(xsearch *xs, const uint64_t *g, int ng, const double *med, xrun *runs,
                              int *nruns, const tune_xover *xo, int *again) {
  stab_ctx c = {xs, g, ng, med};
  tune_stab st = stab_rules(xs->s, &c);
  tune_stab_seg seg[DC_MAX_SEGMENTS];
  int m, into_prev;
  for (int i = 0; i < *nruns; i++)
    seg[i] = (tune_stab_seg){runs[i].path_index, i ? xo[i - 1].bytes : 0,
                             i + 1 < *nruns ? xo[i].bytes : DC_BYTES_MAX};
  TUNE_CHECK(tune_stab_pick_merge(&st, seg, *nruns, &m, &into_prev));
  if (m < 0) {
    int q;
    TUNE_CHECK(tune_stab_pick_simpler(&st, seg, *nruns, xs->s->npaths, &m, &q));
    if (m < 0) return tune_ok;
    TUNE_INFO(TUNE_TUNER, "%s at %llu..%llu is nowhere decidedly faster than the simpler %s",
              dc_path_name(xs->s->paths[seg[m].path]), (unsigned long long)seg[m].lo,
              (unsigned long long)seg[m].hi, dc_path_name(xs->s->paths[q]));
    runs[m].path_index = q;
    /* Neighbours of one path are one segment. */
    for (int i = *nruns - 1; i > 0; i--)
      if (runs[i - 1].path_index == runs[i].path_index) {
        runs[i - 1].last = runs[i].last;
        memmove(&runs[i], &runs[i + 1], (size_t)(*nruns - i - 1) * sizeof(*runs));
        (*nruns)--;
      }
    *again = 1;
    return tune_ok;
  }
  TUNE_INFO(TUNE_TUNER, "%s at %llu..%llu is nowhere decidedly faster than %s: one segment",
            dc_path_name(xs->s->paths[seg[m].path]), (unsigned long long)seg[m].lo,
            (unsigned long long)seg[m].hi,
            dc_path_name(xs->s->paths[seg[into_prev ? m - 1 : m + 1].path]));
  int a = m > 0 ? runs[m - 1].path_index : -1, b = m + 1 < *nruns ? runs[m + 1].path_index : -1;
  if (a >= 0 && b >= 0 && a != b) {
    /* Between two paths, each of the run's grid sizes goes to the one with
     * the lower median there: bisection starts from brackets it trusts. */
    int k = runs[m].first, np = xs->s->npaths;
    while (k <= runs[m].last && !(med[k * np + b] < med[k * np + a])) k++;
    runs[m - 1].last = k - 1;
    runs[m + 1].first = k;
    memmove(&runs[m], &runs[m + 1], (size_t)(*nruns - m - 1) * sizeof(*runs));
    (*nruns)--;
  } else
    *nruns = absorb_run(runs, *nruns, m, into_prev);
  *again = 1;
  return tune_ok;
}

/* Keep the incumbent row's paths where the new ones do not beat them by
 * more than the tolerance (tune_stab_incumbent); seg and xo are rewritten.
 * A change the search found is kept with its record; one that moved to an
 * incumbent threshold is recorded there, undecided, with the CI of its two
 * paths measured at that size. */
static tune_result stab_incumbent(xsearch *xs, const uint64_t *g, int ng, const double *med,
                                  dc_segment *seg, int *nseg, tune_xover *xo, int *nxo) {
  const tune_xover_search *s = xs->s;
  const dc_threshold_row *inc = s->incumbent;
  stab_ctx c = {xs, g, ng, med};
  tune_stab st = stab_rules(s, &c);
  tune_stab_seg now[DC_MAX_SEGMENTS], old[DC_MAX_SEGMENTS], out[DC_MAX_SEGMENTS];
  tune_xover found[DC_MAX_SEGMENTS];
  int nout, changed, nfound = *nxo;
  for (int i = 0; i < *nseg; i++)
    for (int p = 0; p < s->npaths; p++)
      if (s->paths[p] == seg[i].path)
        now[i] = (tune_stab_seg){p, i ? seg[i - 1].max_bytes : 0, seg[i].max_bytes};
  for (int i = 0; i < inc->nseg; i++) {
    old[i] = (tune_stab_seg){-1, i ? inc->seg[i - 1].max_bytes : 0, inc->seg[i].max_bytes};
    for (int p = 0; p < s->npaths; p++)
      if (s->paths[p] == inc->seg[i].path) old[i].path = p;
  }
  TUNE_CHECK(tune_stab_incumbent(&st, now, *nseg, old, inc->nseg, out, &nout, xover_max_segments(s),
                                 &changed));
  if (!changed) return tune_ok;
  memcpy(found, xo, (size_t)nfound * sizeof(*found));
  for (int i = 0; i + 1 < nout; i++) {
    dc_path below = s->paths[out[i].path], above = s->paths[out[i + 1].path];
    int k = 0;
    while (k < nfound &&
           !(found[k].bytes == out[i].hi && found[k].below == below && found[k].above == above))
      k++;
    if (k < nfound) {
      xo[i] = found[k];
      continue;
    }
    xci ci;
    TUNE_CHECK(
        probe(xs, out[i].path, out[i + 1].path, round_granule((double)out[i].hi, s->granule), &ci));
    xo[i] = (tune_xover){.below = below,
                         .above = above,
                         .bytes = out[i].hi,
                         .lo_bytes = out[i].hi,
                         .hi_bytes = out[i].hi,
                         .diff_ns = ci.diff,
                         .ci_lo_ns = ci.lo,
                         .ci_hi_ns = ci.hi,
                         .confidence = s->confidence,
                         .decided = 0};
    TUNE_INFO(TUNE_TUNER, "incumbent kept: %s -> %s at %llu", dc_path_name(below),
              dc_path_name(above), (unsigned long long)out[i].hi);
  }
  for (int i = 0; i < nout; i++)
    seg[i] = (dc_segment){i + 1 < nout ? out[i].hi : DC_BYTES_MAX, s->paths[out[i].path]};
  *nseg = nout;
  *nxo = nout - 1;
  return tune_ok;
}

/* The path with the lowest median at grid size k (the earlier on a tie). */
static int grid_winner(const double *med, int npaths, int k) {
  int win = 0;
  for (int p = 1; p < npaths; p++)
    if (med[k * npaths + p] < med[k * npaths + win]) win = p;
  return win;
}

/* The coarse grid: every path's median at every grid size into med (a path
 * far behind is pruned, its medians INFINITY). */
static tune_result coarse_medians(xsearch *xs, const uint64_t *g, int ng, double *med) {
  const tune_xover_search *s = xs->s;
  int behind[DC_PATH_COUNT] = {0};
  double ratio[DC_PATH_COUNT] = {0};
  for (int k = 0; k < ng; k++) {
    int live[DC_PATH_COUNT], idx[DC_PATH_COUNT], nlive = 0;
    for (int p = 0; p < s->npaths; p++) {
      med[k * s->npaths + p] = INFINITY;
      if (behind[p] < XOVER_PRUNE_STREAK) live[nlive++] = p;
    }
    if (nlive > 0) TUNE_CHECK(samples_fill(xs, live, nlive, g[k], s->trials, idx));
    for (int i = 0; i < nlive; i++)
      med[k * s->npaths + live[i]] = tune_median(xs->sets[idx[i]].x, (size_t)s->trials);
    const int win = grid_winner(med, s->npaths, k);
    for (int p = 0; p < s->npaths; p++) {
      /* A path far behind but catching up (a high start-up cost paid for
       * the best rate: copy engines) may still win at larger sizes. */
      double now = med[k * s->npaths + p] / med[k * s->npaths + win];
      int far = s->prune_ratio > 1.0 && now > s->prune_ratio && !(behind[p] > 0 && now < ratio[p]);
      ratio[p] = now;
      behind[p] = far ? behind[p] + 1 : 0;
      if (behind[p] == XOVER_PRUNE_STREAK)
        TUNE_INFO(TUNE_TUNER, "%s is over %.1fx slower than %s from %llu bytes: not measured above",
                  dc_path_name(s->paths[p]), s->prune_ratio, dc_path_name(s->paths[win]),
                  (unsigned long long)g[k]);
    }
  }
  return tune_ok;
}

/* The runs of grid sizes with one winner into runs[0..*nruns). */
static void grid_runs(const double *med, int ng, int npaths, xrun *runs, int *nruns) {
  *nruns = 0;
  for (int k = 0; k < ng; k++) {
    const int win = grid_winner(med, npaths, k);
    if (*nruns > 0 && runs[*nruns - 1].path_index == win)
      runs[*nruns - 1].last = k;
    else
      runs[(*nruns)++] = (xrun){.path_index = win, .first = k, .last = k};
  }
}

/* A path within the tolerance of the winner at either of two neighbouring
 * grid sizes that one path wins may still win between them by more than
 * that. The coarse grid alone would then search that range or not as the
 * noise at the two sizes fell (two virtual ranks, all_reduce bf16: one_shot
 * 3 to 6% ahead of pipeline from 150 to 245 MiB; at 128 MiB 1.2% behind in
 * one job, 0.1% ahead in the next). So the geometric midpoint of such a
 * pair is probed, and joins the grid (*g, *ng, *med; g has room for
 * XOVER_MAX_GRID_MIDS) when a path is decidedly faster there than the
 * winner by more than the tolerance. */
static tune_result near_tie_midpoints(xsearch *xs, uint64_t *g, int *ng, double **med) {
  const tune_xover_search *s = xs->s;
  const int np = s->npaths, n0 = *ng;
  const double *m = *med;
  stab_ctx c = {xs, g, n0, m};
  uint64_t mid[TUNE_XOVER_MAX_GRID];
  int ni = 0;
  if (n0 < 2) return tune_ok;
  for (int k = 0; k + 1 < n0; k++) {
    const int w = grid_winner(m, np, k);
    mid[k] = 0;
    if (w != grid_winner(m, np, k + 1) || (mid[k] = midpoint(s, g[k], g[k + 1])) == 0) continue;
    /* The winner and the paths near it, measured in the same trials. */
    const double *a = &m[k * np], *b = &m[(k + 1) * np];
    int near[DC_PATH_COUNT], idx[DC_PATH_COUNT], nn = 1, yes = 0;
    near[0] = w;
    for (int p = 0; p < np; p++)
      if (p != w && !isinf(a[p]) && !isinf(b[p]) &&
          (a[p] <= s->tolerance * a[w] || b[p] <= s->tolerance * b[w]))
        near[nn++] = p;
    if (nn > 1) TUNE_CHECK(samples_fill(xs, near, nn, mid[k], s->trials, idx));
    for (int i = 1; i < nn && !yes; i++) {
      TUNE_CHECK(stab_faster(&c, near[i], w, mid[k], s->tolerance, &yes));
      if (yes)
        TUNE_INFO(TUNE_TUNER, "%s is over %.2fx faster than %s at %llu, between two sizes %s won",
                  dc_path_name(s->paths[near[i]]), s->tolerance, dc_path_name(s->paths[w]),
                  (unsigned long long)mid[k], dc_path_name(s->paths[w]));
    }
    if (!yes) mid[k] = 0;
    ni += yes;
  }
  mid[n0 - 1] = 0; /* nothing above the last size */
  if (ni == 0) return tune_ok;
  double *m2 = malloc((size_t)(n0 + ni) * (size_t)np * sizeof(*m2));
  if (m2 == NULL) return tune_err_system;
  /* From the top down, so g can grow in place. */
  tune_result res = tune_ok;
  for (int k = n0 - 1, j = n0 + ni - 1; k >= 0; k--) {
    if (mid[k]) {
      int live[DC_PATH_COUNT], idx[DC_PATH_COUNT], nlive = 0;
      for (int p = 0; p < np; p++) {
        m2[j * np + p] = INFINITY;
        if (!isinf(m[k * np + p]) && !isinf(m[(k + 1) * np + p])) live[nlive++] = p;
      }
      TUNE_CHECK_GOTO(samples_fill(xs, live, nlive, mid[k], s->trials, idx), res, exit);
      for (int i = 0; i < nlive; i++)
        m2[j * np + live[i]] = tune_median(xs->sets[idx[i]].x, (size_t)s->trials);
      g[j--] = mid[k];
    }
    memcpy(&m2[j * np], &m[k * np], (size_t)np * sizeof(*m2));
    g[j--] = g[k];
  }
  free(*med);
  *med = m2;
  *ng = n0 + ni;
  return tune_ok;
exit:
  free(m2);
  return res;
}

tune_result tune_xover_find(const tune_xover_search *s, tune_xover *xo, int max_xo, int *nxo,
                            dc_segment *seg, int *nseg) {
  if (xo == NULL || nxo == NULL || seg == NULL || nseg == NULL) return tune_err_arg;
  TUNE_CHECK(check_search(s, max_xo));
  tune_result res = tune_ok;
  xsearch xs = {.s = s};
  uint64_t *g = malloc(XOVER_MAX_GRID_MIDS * sizeof(*g));
  double *med = NULL;
  xrun *runs = NULL;
  int ng = 0, nruns = 0;
  if (g == NULL) {
    res = tune_err_system;
    goto exit;
  }
  TUNE_CHECK_GOTO(tune_xover_grid(s->min_bytes, s->max_bytes, s->grid_factor, s->granule, g, &ng), res, exit);
  med = malloc((size_t)ng * (size_t)s->npaths * sizeof(*med));
  runs = malloc((size_t)ng * sizeof(*runs));
  if (med == NULL || runs == NULL) {
    res = tune_err_system;
    goto exit;
  }

  TUNE_CHECK_GOTO(coarse_medians(&xs, g, ng, med), res, exit);
  if (s->tolerance > 1.0) {
    TUNE_CHECK_GOTO(near_tie_midpoints(&xs, g, &ng, &med), res, exit);
    xrun *grown = realloc(runs, (size_t)ng * sizeof(*runs));
    if (grown == NULL) {
      res = tune_err_system;
      goto exit;
    }
    runs = grown;
  }
  grid_runs(med, ng, s->npaths, runs, &nruns);
  while (nruns > xover_max_segments(s)) nruns = merge_cheapest(runs, nruns, med, s->npaths);

  /* A change settled past a narrow run's last size (its path lost there
   * after all) would leave that run an empty segment -- or, for the last
   * run, one holding no measured size, only those above the largest: drop
   * the run into the path before it and bisect again; the sample cache makes
   * the repeated probes free of measurement. */
  for (int again = 1; again;) {
    for (int i = 0; i + 1 < nruns; i++)
      TUNE_CHECK_GOTO(bisect(&xs, runs[i].path_index, runs[i + 1].path_index, g[runs[i].last],
                             g[runs[i + 1].first], g[runs[i + 1].last], &xo[i]),
                      res, exit);
    again = 0;
    for (int i = 0; i + 1 < nruns && !again; i++) {
      if (xo[i].bytes < (i + 2 < nruns ? xo[i + 1].bytes : g[ng - 1])) continue;
      TUNE_INFO(TUNE_TUNER, "%s lost its whole run at %llu; dropping it",
                dc_path_name(s->paths[runs[i + 1].path_index]), (unsigned long long)xo[i].bytes);
      nruns = absorb_run(runs, nruns, i + 1, 1);
      again = 1;
    }
    if (!again && s->tolerance > 1.0)
      TUNE_CHECK_GOTO(stab_merge(&xs, g, ng, med, runs, &nruns, xo, &again), res, exit);
  }
  for (int i = 0; i < nruns; i++) {
    seg[i].path = s->paths[runs[i].path_index];
    seg[i].max_bytes = i + 1 < nruns ? xo[i].bytes : DC_BYTES_MAX;
  }
  *nxo = nruns - 1;
  *nseg = nruns;
  if (s->tolerance > 1.0 && s->incumbent != NULL)
    TUNE_CHECK_GOTO(stab_incumbent(&xs, g, ng, med, seg, nseg, xo, nxo), res, exit);
exit:
  for (int i = 0; i < xs.nsets; i++) free(xs.sets[i].x);
  free(xs.sets);
  free(g);
  free(med);
  free(runs);
  return res;
}
