/* crossover.h: the crossover search -- which kernel path is fastest for
 * which message size. A coarse log grid finds where the winner changes;
 * bisection between the bracketing sizes narrows each change down to a set
 * resolution, deciding each probe only when the bootstrap confidence interval
 * of the median difference excludes zero. The result is one threshold row's
 * segments plus, per change, the crossover record the database keeps. */
#ifndef TUNE_CROSSOVER_H
#define TUNE_CROSSOVER_H

#include <stdint.h>

#include "dc_table.h"
#include "tune.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Measure path at bytes per rank for ntrials trials; out[t] is trial t's
 * time of the slowest rank, in ns. Each call costs GPU time in real runs, so
 * the search never asks twice for the same samples (see tune_xover_find). */
typedef tune_result (*tune_measure_fn)(void *ctx, dc_path path, uint64_t bytes, int ntrials,
                                       double *out);

/* Measure paths[0..npaths) at bytes in the same trials, ntrials each, in
 * alternation (trial t of every path before trial t + 1 of any); out[i][t]
 * as for tune_measure_fn. A slow spell of the machine then falls on all of
 * them alike instead of on whichever path was being measured. */
typedef tune_result (*tune_measure_set_fn)(void *ctx, const dc_path *paths, int npaths,
                                           uint64_t bytes, int ntrials, double *const *out);

typedef struct {
  tune_measure_fn measure;
  tune_measure_set_fn measure_set; /* NULL: paths one at a time with measure */
  void *ctx;
  const dc_path *paths; /* candidates; earlier wins ties of the coarse grid */
  int npaths;           /* 1..DC_PATH_COUNT, distinct */
  uint64_t min_bytes, max_bytes;
  double grid_factor; /* coarse grid step, > 1 (e.g. 2 or 4) */
  uint64_t granule;   /* every size probed is a multiple of this (>= 1) */
  double resolution;  /* bisection stops when hi <= lo * (1 + resolution), > 0 */
  int trials;         /* first batch per (path, size), >= 2 */
  int max_trials;     /* cap while the CI straddles zero, >= trials */
  double confidence;  /* of the CI, in (0, 1), e.g. 0.95 */
  uint64_t seed;      /* of the bootstrap */
  double prune_ratio; /* > 1: once a path trails the coarse-grid winner by
                         this factor at two grid sizes in a row without
                         closing in on it, it is not measured at larger
                         sizes (it cannot come back: its cost grows at the
                         winner's rate or worse); a path far behind but
                         catching up (high start-up cost, best rate) is
                         kept; 0: measure every path everywhere */
  int max_segments;   /* most segments of the row, 1..DC_MAX_SEGMENTS;
                         0: DC_MAX_SEGMENTS */
  double tolerance;   /* > 1: stabilize the row (tuner/stability.h) with
                         this regret tolerance (e.g. 1.03); 0: off */
  const dc_threshold_row *incumbent; /* with tolerance: the row of the job's
                         previous table for this key (1..DC_MAX_SEGMENTS
                         segments), whose paths are kept unless beaten by
                         more than the tolerance; NULL: none */
} tune_xover_search;

/* One change of the fastest path. below won at lo_bytes, above at hi_bytes;
 * sizes between them were not resolved further. diff_ns and [ci_lo_ns,
 * ci_hi_ns] are median(above) - median(below) and its CI at hi_bytes
 * (entirely below zero when decided). decided = 1 when the CI at hi_bytes
 * is below zero and hi_bytes is within about the resolution of lo_bytes (or
 * no granule lies between them); 0 when a tie at max_trials ended the search
 * (hi_bytes is then the tied size and its CI straddles zero) or below won
 * even at the last size of above's run (lo_bytes = hi_bytes, CI above zero). */
typedef struct {
  dc_path below, above;
  uint64_t bytes; /* threshold: below runs for sizes <= bytes: lo_bytes when
                     decided, else the tie point hi_bytes */
  uint64_t lo_bytes, hi_bytes;
  double diff_ns, ci_lo_ns, ci_hi_ns, confidence;
  int decided;
} tune_xover;

/* Most sizes of a coarse grid (tune_xover_grid). */
#define TUNE_XOVER_MAX_GRID 4096

/* The coarse size grid, the one grid of the toolkit: the sweep searches it
 * and the before and after passes measure auto dispatch on it, so every
 * auto size has forced-path samples of the same size to compare with.
 * min_bytes rounded up to the granule, then multiplied by grid_factor
 * (rounded to the nearest granule) up to max_bytes rounded down to the
 * granule, which is always included: every size is a multiple of granule
 * within [min_bytes, max_bytes]. g has room for TUNE_XOVER_MAX_GRID sizes;
 * *ng is set to how many. tune_err_arg: no multiple of granule in range, a
 * factor <= 1, or a grid longer than TUNE_XOVER_MAX_GRID. */
tune_result tune_xover_grid(uint64_t min_bytes, uint64_t max_bytes, double grid_factor, uint64_t granule,
                            uint64_t *g, int *ng);

/* Run the search described by s. On success seg[0..*nseg-1] (seg has room
 * for max_segments) are the segments of a dc_threshold_row: increasing
 * max_bytes, the last DC_BYTES_MAX, no two neighbours with the same path;
 * xo[0..*nxo-1] (*nxo = *nseg - 1) the crossovers between them in size
 * order, seg[i].max_bytes = xo[i].bytes, seg[i].path = xo[i].below.
 *
 * Coarse grid: tune_xover_grid of s's sizes, factor and granule. Every path is measured at every
 * grid size with s->trials trials (but see prune_ratio: a path far behind
 * at two sizes in a row is not measured above them, and loses there); the
 * winner at a size is the lowest median
 * (ties: the earlier path). With tolerance > 1, two neighbouring grid sizes
 * won by one path, where another is within the tolerance of it at either,
 * get their geometric midpoint probed (those paths in the same trials): it
 * joins the grid when one of them is decidedly faster there than the winner
 * by more than the tolerance, so a band between two grid sizes is searched
 * whatever the noise at the sizes either side. Runs of one winner become
 * segments; while there are more than max_segments, the run that is
 * cheapest to lose goes to a
 * neighbour: the least sum, over its grid sizes, of log(neighbour's median /
 * its own), for the cheaper neighbour (a band won by a hair goes before a
 * band at the end of the range won by a fifth; on a tie the lower run, and
 * its next neighbour); a run between two runs of one path joins them.
 *
 * Bisection: each change is narrowed at the granule-rounded geometric
 * midpoint, comparing only its two paths by the CI of median(above) -
 * median(below): entirely < 0 moves hi down, entirely > 0 moves lo up;
 * straddling zero doubles the sample, up to max_trials. A size still tied
 * there is usually within noise of the crossover itself, so the sizes half
 * the resolution either side of it are compared before giving up: below
 * winning under it and above over it bracket the crossover within the
 * resolution (decided); either going the other way narrows the bracket and
 * bisection goes on; another tie ends the change undecided. The bracket ends
 * from the grid rest on medians alone, so hi is confirmed by its CI before
 * use; if below wins there after all, the change moves up within above's
 * run, and if above's run is left empty it is dropped into the path before
 * it and the neighbours' change is bisected instead. The threshold is lo, or for a change ended
 * by a tie, the tie point hi.
 *
 * Stability (tolerance > 1, issue 14): after bisection, a segment whose
 * path is nowhere decidedly faster than a neighbour's by more than the
 * tolerance, narrow or wide, goes to that neighbour, and the changes are bisected
 * again, until every segment earns its place (tune_stab_pick_merge: a band
 * inside a tie takes the path around it, else the simpler path). Then, with
 * an incumbent row, its path is kept wherever the new one is not decidedly
 * faster by more than the tolerance (tune_stab_incumbent); a change that
 * moved there is recorded undecided at the incumbent's threshold, with the
 * CI of the two paths measured there.
 *
 * Samples are cached per (path, size) for the whole search: asking for n
 * samples where m < n are held measures only the n - m missing ones, so no
 * trial is measured twice or thrown away. The paths compared at a size
 * (every live path at a grid size, the two of a comparison) are measured
 * in the same trials through measure_set where their samples held are
 * alike; comparisons at a size use the
 * first n samples of each path, with a bootstrap seed derived from s->seed,
 * the size, the pair and n (the search is deterministic for a seed and
 * deterministic measurements).
 *
 * tune_err_arg: a malformed search, or max_xo < max_segments - 1;
 * tune_err_system: out of memory; any error of measure is passed on. */
tune_result tune_xover_find(const tune_xover_search *s, tune_xover *xo, int max_xo, int *nxo,
                            dc_segment *seg, int *nseg);

#ifdef __cplusplus
}
#endif
#endif /* TUNE_CROSSOVER_H */
