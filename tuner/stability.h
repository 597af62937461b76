/* stability.h: rules that keep a threshold row from following noise (issue
 * 14). Two back-to-back sweeps on one machine must write the same row unless
 * the machine changed, so a segment has to earn its place with a decided
 * difference, and the table compiled in (the incumbent) is kept wherever the
 * new measurement cannot show a better path by more than the tolerance.
 *
 * The rules see paths by their index in the search's candidate list and ask
 * the search one question through tune_faster_fn, so they run on whatever
 * measurements the caller holds (the crossover search's sample cache). */
#ifndef TUNE_STABILITY_H
#define TUNE_STABILITY_H

#include <stdint.h>

#include "dc_table.h"
#include "tune.h"

#ifdef __cplusplus
extern "C" {
#endif

/* *yes = 1 when path index fast is decidedly faster than slow at bytes by
 * more than the factor ratio: the confidence interval of median(slow) -
 * ratio * median(fast) lies entirely above zero; else 0 (a tie, or slower). */
typedef tune_result (*tune_faster_fn)(void *ctx, int fast, int slow, uint64_t bytes, double ratio,
                                      int *yes);

/* A segment of a row: path index for sizes in (lo, hi]; the first starts at
 * lo = 0, the last ends at DC_BYTES_MAX. */
typedef struct {
  int path; /* index into the candidates; -1: a path that is not one of them */
  uint64_t lo, hi;
} tune_stab_seg;

typedef struct {
  double tolerance;     /* > 1: the regret a merge may cost (1.03) */
  const uint64_t *grid; /* the measured sizes, increasing; test sizes come from here */
  int ngrid;            /* >= 1 */
  uint64_t granule;     /* a size made up between grid sizes is a multiple of this */
  const dc_path *paths; /* the candidates, for the simplicity order */
  tune_faster_fn faster;
  void *ctx;
} tune_stab;

/* Rank of a path by how much machinery it runs (blocks, kernels, copies):
 * lower is simpler. A tie goes to the simpler path. */
int tune_stab_simplicity(dc_path path);

/* The merge the row needs next, or *m = -1 when every segment earns its
 * place. Segment i may go when at none of its test sizes (the grid sizes
 * inside it, its ends and three points between them, evenly spaced in log
 * size) its path is decidedly faster than every neighbour's by more than
 * the tolerance, however wide the segment: a smaller edge, even decided
 * within one job, is within the run-to-run drift of a real machine (two
 * jobs on two H200s, docs/results/2026-12-01-2xh200/call2/agreement-replay.md,
 * kept segments on 1.5-5% wins at one size that the other job did not
 * see). Its sizes then go to whichever neighbour wins each of them, so no
 * size loses more than the tolerance.
 * Among the segments that may go, one whose two neighbours share a path
 * goes first (a band inside a tie takes the path around it), then the one
 * whose receiving neighbour has the simpler path, then the narrower, then
 * the lower. *into_prev: 1 to hand it to the previous segment, 0 to the
 * next. Errors of faster are passed on. */
tune_result tune_stab_pick_merge(const tune_stab *st, const tune_stab_seg *seg, int nseg, int *m,
                                 int *into_prev);

/* A simpler path for one segment, or *m = -1: the first segment whose path
 * is nowhere faster than a simpler candidate (of npaths) by more than the
 * tolerance, at the same test sizes as tune_stab_pick_merge's, gets the simplest
 * such candidate (*path): a tie goes to the simpler path whichever of the
 * two the noise of the coarse grid let win. */
tune_result tune_stab_pick_simpler(const tune_stab *st, const tune_stab_seg *seg, int nseg,
                                   int npaths, int *m, int *path);

/* Hysteresis against the incumbent row inc[0..ninc-1]: out[0..*nout-1] is
 * seg with the incumbent's path wherever the two differ and the new path is
 * not decidedly faster by more than the tolerance at any test size of that
 * stretch (the grid sizes inside it, its ends and three points between
 * them). Incumbent thresholds outside the grid's range are not judged
 * (nothing was measured there), a stretch with no size in the grid's range
 * keeps the new path, and incumbent paths that are not candidates (path -1)
 * are not kept. Neighbours with one path are joined. *changed: 1 if out differs from seg. When the result
 * would need more than max_out segments, out is seg and *changed 0.
 * tune_err_arg: a malformed argument; errors of faster are passed on. */
tune_result tune_stab_incumbent(const tune_stab *st, const tune_stab_seg *seg, int nseg,
                                const tune_stab_seg *inc, int ninc, tune_stab_seg *out, int *nout,
                                int max_out, int *changed);

#ifdef __cplusplus
}
#endif
#endif /* TUNE_STABILITY_H */
