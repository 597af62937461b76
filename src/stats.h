/* stats.h: the statistics behind every figure the toolkit reports --
 * medians and percentiles of trial samples, the slowest-rank-per-trial
 * reduction, a seeded bootstrap confidence interval for the difference of two
 * medians (the crossover search's decision rule), and a least-squares line
 * with t-based confidence intervals (skew calibration). */
#ifndef TUNE_STATS_H
#define TUNE_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "dc_table.h"
#include "tune.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The p-th percentile (p in 0..100) of x[0..n-1] with linear interpolation
 * between order statistics, as numpy.percentile's default: with the values
 * sorted, h = (n-1)*p/100 and the result is s[floor(h)] + frac(h) *
 * (s[floor(h)+1] - s[floor(h)]). Works on a copy: x is not reordered.
 * x must not hold NaNs. Returns NAN if n == 0, p is outside 0..100 or NaN,
 * or memory runs out. */
double tune_percentile(const double *x, size_t n, double p);

/* As tune_percentile, but sorts x ascending in place instead of copying: for
 * callers that own a scratch array and want several percentiles of it. */
double tune_percentile_inplace(double *x, size_t n, double p);

/* The median: tune_percentile(x, n, 50) (the mean of the two middle values
 * when n is even). x is not reordered; NAN if n == 0. */
double tune_median(const double *x, size_t n);

/* The same median in linear time, reordering x (a scratch array): for
 * medians over many values many times (tune fleet's medians over nodes). */
double tune_median_select(double *x, size_t n);

/* out[t] = max over ranks r of elapsed[t*world + r], for t in 0..trials-1
 * (world >= 1):
 * the time of trial t is the time of its slowest rank. The headline latency
 * is the median of out. */
void tune_slowest_per_trial(const int64_t *elapsed, int trials, int world, double *out);

/* Number of bootstrap resamples tune_ci_median_diff draws. */
#define TUNE_BOOTSTRAP_RESAMPLES 2000

/* diff = median(b) - median(a), and [lo, hi] a two-sided confidence interval
 * of it at level confidence (0 < confidence < 1) by a percentile bootstrap:
 * TUNE_BOOTSTRAP_RESAMPLES times, resample a and b with replacement and take
 * the difference of the resample medians; lo and hi are the (1-c)/2 and
 * (1+c)/2 percentiles of those differences. The resampling is driven by
 * tune_rng seeded with seed, so the same inputs and seed give the same
 * interval. Cost is O(resamples * (na + nb)) with no sorting per resample,
 * cheap enough for thousands of calls at n ~ 20..200. Inputs are not
 * modified. tune_err_arg: na or nb is 0 or above UINT32_MAX, confidence out
 * of range, or a NULL pointer; tune_err_system: out of memory. */
tune_result tune_ci_median_diff(const double *a, size_t na, const double *b, size_t nb,
                                double confidence, uint64_t seed, double *diff, double *lo,
                                double *hi);

/* The CI of a size's regret against target: diff = median(auto_ns) -
 * target * median(best_ns) over n trials each, and [lo, hi] its
 * interval, as tune_ci_median_diff gives it (seed likewise): the trials
 * resampled apart, though auto and best run in the same trials. Resampled
 * in pairs (tighter where a slow spell falls on both), two chained jobs on
 * one H100 agreed less, and more of their differing points were over 3%
 * apart (docs/measurements.md, 2026-12-05, fourth session). Above zero
 * misses the target, below zero meets it. Errors as tune_ci_median_diff's. */
tune_result tune_ci_regret(const double *auto_ns, const double *best_ns, size_t n, double target,
                           double confidence, uint64_t seed, double *diff, double *lo, double *hi);

/* The stopping rule for a one-sided claim judged by a CI [lo, hi] of a
 * difference at one look of n trials (1 to stop): the claim (lo > 0: a
 * size's regret misses, median(auto) - target * median(best); a path is
 * decidedly faster by a factor, median(slow) - ratio * median(fast)) must
 * hold at two looks in a row (*seen, 0 before the first look, carries
 * it); its refutation (hi < 0) stops at once; n >= cap stops, and there
 * the look at the cap, on the most trials, decides alone (the caller
 * reads lo > 0). At 20 and 40 trials the percentile bootstrap of eager
 * medians is too narrow (one H200, 2 virtual ranks: auto and the very same
 * forced path were decided 11% and 34% apart at 40 and 20 trials). Asking
 * the cap's look for a second one too was tried (a review's proposal) and
 * not kept: replayed over two jobs' samples on two H200s, the headers
 * agreed at 98.00% of points instead of 99.79% (docs/measurements.md,
 * 2026-12-05, fourth session). */
int tune_look_done(double lo, double hi, int n, int cap, int *seen);

/* The trials the look after one of n trials holds: twice n, at most cap. */
int tune_look_next(int n, int cap);

/* ratio = median(b) / median(a) of paired samples (a[t] and b[t] measured
 * in the same trial t, n trials), and [lo, hi] its percentile-bootstrap
 * interval at level confidence: TUNE_BOOTSTRAP_RESAMPLES times, draw n
 * trials with replacement and take the ratio of the two medians over the
 * same drawn trials, so what moved both samples of a trial (the machine
 * drifting) cancels. Seeded like tune_ci_median_diff. tune_err_arg: n 0 or
 * above UINT32_MAX, a value not > 0, confidence out of range, a NULL
 * pointer; tune_err_system: out of memory. */
tune_result tune_ci_median_ratio_paired(const double *a, const double *b, size_t n,
                                        double confidence, uint64_t seed, double *ratio, double *lo,
                                        double *hi);

/* The p-quantile (0 < p < 1) of Student's t distribution with df > 0
 * degrees of freedom (df need not be an integer), found by bisection on the
 * CDF computed through the regularized incomplete beta function; absolute
 * error below 1e-9 for |t| < 1e6. NAN for p or df out of range. */
double tune_t_quantile(double p, double df);

/* An ordinary least-squares line y = intercept + slope * x. *_se are the
 * standard errors, [*_lo, *_hi] the two-sided intervals at level confidence
 * from the t distribution with n - 2 degrees of freedom, r2 the coefficient
 * of determination (1 when y is constant and fitted exactly). */
typedef struct {
  size_t n;
  double confidence;
  double slope, intercept;
  double slope_se, intercept_se;
  double slope_lo, slope_hi;
  double intercept_lo, intercept_hi;
  double r2;
} tune_linfit_result;

/* Fit y against x (n points) into *r. tune_err_arg: n < 3, all x equal,
 * confidence outside (0, 1), a non-finite value or a NULL pointer. */
tune_result tune_linfit(const double *x, const double *y, size_t n, double confidence,
                        tune_linfit_result *r);

/* nccl-tests' bandwidths of one call (its doc/PERFORMANCE.md), in GB/s (1e9
 * bytes/s): algbw = S / t, with S the nccl-tests size -- all_reduce: the
 * buffer (bytes); all_gather: the whole output (world * bytes);
 * reduce_scatter: the whole input (bytes, which is world * the output) --
 * and busbw = algbw * 2(W-1)/W for all_reduce, * (W-1)/W for all_gather
 * and reduce_scatter. bytes is the toolkit's size: each rank's input; ns
 * the call's latency. Both are NAN for ns <= 0 or NaN, world < 1 or an
 * unknown op. Export, the report and the job summary all use this one. */
typedef struct {
  double algbw, busbw;
} tune_bw;
tune_bw tune_bandwidth(dc_op op, int world, uint64_t bytes, double ns);

#ifdef __cplusplus
}
#endif
#endif /* TUNE_STATS_H */
