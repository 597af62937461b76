/* test_stats.c: percentiles against hand-computed numpy values, the
 * slowest-rank reduction, bootstrap CI coverage on seeded normal samples,
 * Student's t quantiles against table values, and the least-squares line. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "tap.h"

static int near(double a, double b, double tol) { return fabs(a - b) <= tol; }

static void test_percentiles(void) {
  const double x8[] = {3, 1, 4, 1, 5, 9, 2, 6}; /* sorted: 1 1 2 3 4 5 6 9 */
  double keep[8];
  memcpy(keep, x8, sizeof(keep));
  tap_ok(tune_median(x8, 8) == 3.5, "median of an even, unsorted array");
  tap_ok(near(tune_percentile(x8, 8, 25), 1.75, 1e-12), "p25 interpolates like numpy (1.75)");
  tap_ok(near(tune_percentile(x8, 8, 90), 6.9, 1e-12), "p90 interpolates like numpy (6.9)");
  tap_ok(tune_percentile(x8, 8, 0) == 1 && tune_percentile(x8, 8, 100) == 9,
         "p0 / p100 are min / max");
  tap_ok(memcmp(keep, x8, sizeof(keep)) == 0, "input is not reordered");

  const double x3[] = {7, 3, 5};
  tap_ok(tune_median(x3, 3) == 5, "median of an odd array");
  tap_ok(near(tune_percentile(x3, 3, 75), 6, 1e-12), "p75 of 3 values (6)");
  const double x1[] = {42.5};
  tap_ok(tune_median(x1, 1) == 42.5 && tune_percentile(x1, 1, 10) == 42.5, "n = 1");
  tap_ok(isnan(tune_median(x1, 0)) && isnan(tune_percentile(x3, 3, 101)) &&
             isnan(tune_percentile(x3, 3, -1)),
         "n = 0 and p out of range give NAN");

  double y[8];
  memcpy(y, x8, sizeof(y));
  double p = tune_percentile_inplace(y, 8, 50);
  int sorted = 1;
  for (int i = 1; i < 8; i++) sorted &= y[i - 1] <= y[i];
  tap_ok(p == 3.5 && sorted, "in-place variant sorts and agrees");

  /* A large seeded array (heap copy path) against a direct order statistic. */
  enum { N = 1001 };
  static double big[N], sorted_big[N];
  tune_rng rng;
  tune_rng_seed(&rng, 7);
  for (int i = 0; i < N; i++) big[i] = 1000 + 100 * tune_rng_normal(&rng);
  memcpy(sorted_big, big, sizeof(big));
  tune_percentile_inplace(sorted_big, N, 0);
  tap_ok(tune_median(big, N) == sorted_big[500],
         "median of 1001 seeded values = 501st order statistic");
}

static void test_slowest(void) {
  enum { T = 17, W = 5 };
  int64_t e[T * W];
  double out[T + 1];
  out[T] = -1; /* past the last trial: must stay */
  tune_rng rng;
  tune_rng_seed(&rng, 11);
  for (int i = 0; i < T * W; i++) e[i] = 5000 + (int64_t)(tune_rng_next(&rng) % 100000);
  tune_slowest_per_trial(e, T, W, out);
  int ok = 1;
  for (int t = 0; t < T; t++) {
    int64_t m = 0;
    for (int r = 0; r < W; r++)
      if (e[t * W + r] > m) m = e[t * W + r];
    ok &= out[t] == (double)m;
  }
  tap_ok(ok && out[T] == -1, "slowest per trial = max over ranks of each trial, nothing past it");
}

/* Two normal samples with a known shift of medians. */
static void fill_normal(tune_rng *rng, double *x, int n, double mean, double sd) {
  for (int i = 0; i < n; i++) x[i] = mean + sd * tune_rng_normal(rng);
}

static void test_ci(void) {
  enum { REPS = 200, N = 40 };
  double a[N], b[N], diff, lo, hi;
  tune_rng rng;
  tune_rng_seed(&rng, 2024);
  int cover = 0, excl_small = 0;
  for (int rep = 0; rep < REPS; rep++) {
    fill_normal(&rng, a, N, 10000, 300);
    fill_normal(&rng, b, N, 10150, 300);
    if (tune_ci_median_diff(a, N, b, N, 0.95, 1000 + rep, &diff, &lo, &hi) != tune_ok) break;
    cover += lo <= 150 && 150 <= hi;
    excl_small += lo > 0 || hi < 0;
  }
  tap_diag("shift 0.5 sd: CI covered the shift in %d/%d, excluded zero in %d", cover, REPS,
           excl_small);
  tap_ok(cover >= 180, "95%% CI covers the true shift in >= 90%% of %d seeded repetitions", REPS);

  int excl = 0;
  for (int rep = 0; rep < REPS; rep++) {
    fill_normal(&rng, a, N, 10000, 300);
    fill_normal(&rng, b, N, 11200, 300);
    if (tune_ci_median_diff(a, N, b, N, 0.95, 5000 + rep, &diff, &lo, &hi) != tune_ok) break;
    excl += lo > 0;
  }
  tap_ok(excl == REPS, "a 4 sd shift: the CI excludes zero every time (%d/%d)", excl, REPS);

  fill_normal(&rng, a, 25, 500, 20);
  fill_normal(&rng, b, 31, 450, 20);
  double d1, l1, h1, d2, l2, h2;
  tune_ci_median_diff(a, 25, b, 31, 0.9, 99, &d1, &l1, &h1);
  tune_ci_median_diff(a, 25, b, 31, 0.9, 99, &d2, &l2, &h2);
  tap_ok(d1 == d2 && l1 == l2 && h1 == h2, "same seed, same interval");
  tap_ok(d1 == tune_median(b, 31) - tune_median(a, 25) && l1 <= d1 && d1 <= h1,
         "diff = median(b) - median(a), inside its CI");
  tap_ok(tune_ci_median_diff(a, 0, b, 31, 0.9, 1, &d1, &l1, &h1) == tune_err_arg &&
             tune_ci_median_diff(a, 25, b, 31, 1.0, 1, &d1, &l1, &h1) == tune_err_arg,
         "empty sample and confidence 1 are rejected");

  enum { NB = 200, CALLS = 300 };
  static double xa[NB], xb[NB];
  fill_normal(&rng, xa, NB, 1000, 30);
  fill_normal(&rng, xb, NB, 1010, 30);
  int64_t t0 = tune_now_ns();
  int ok = 1;
  for (int i = 0; i < CALLS; i++)
    ok &= tune_ci_median_diff(xa, NB, xb, NB, 0.95, (uint64_t)i, &d1, &l1, &h1) == tune_ok;
  tap_ok(ok, "%d calls at n = %d succeed", CALLS, NB);
  tap_diag("%d bootstrap CIs at n = %d took %.3f s", CALLS, NB,
           (double)(tune_now_ns() - t0) * 1e-9);
}

/* Samples whose resample medians have a known distribution, a single value
 * against them so the difference is that median: {0, 10, 20} resampled
 * gives 0, 10, 20 with probability 7/27, 13/27, 7/27 (the middle of three
 * draws), so its 30th and 70th percentiles are 10; {0, 0, 10, 10} gives 0, 5
 * (the mean of the two middle draws), 10 with 5/16, 6/16, 5/16, so its 40th
 * and 60th are 5. Wrong draw counts or middle ranks move them. */
static void test_ci_exact(void) {
  const double one[] = {0}, odd[] = {20, 0, 10}, even[] = {10, 0, 10, 0};
  double d1, lo1, hi1, d2, lo2, hi2;
  tune_result r1 = tune_ci_median_diff(one, 1, odd, 3, 0.4, 8, &d1, &lo1, &hi1);
  tune_result r2 = tune_ci_median_diff(one, 1, even, 4, 0.2, 8, &d2, &lo2, &hi2);
  tap_ok(r1 == tune_ok && d1 == 10 && lo1 == 10 && hi1 == 10,
         "bootstrap of 3 values: 40%% CI of the median [%g, %g] = [10, 10]", lo1, hi1);
  tap_ok(r2 == tune_ok && d2 == 5 && lo2 == 5 && hi2 == 5,
         "bootstrap of 4 values: 20%% CI of the median [%g, %g] = [5, 5]", lo2, hi2);
  double ones[4] = {1, 1, 1, 1}, shifted[4];
  for (int t = 0; t < 4; t++) shifted[t] = 1 + even[t];
  r2 = tune_ci_median_ratio_paired(ones, shifted, 4, 0.2, 8, &d2, &lo2, &hi2);
  tap_ok(r2 == tune_ok && d2 == 6 && lo2 == 6 && hi2 == 6,
         "paired bootstrap of 4 trials: 20%% CI of the ratio [%g, %g] = [6, 6]", lo2, hi2);
}

static void test_t(void) {
  static const struct {
    double p, df, t;
  } table[] = {
      {0.975, 10, 2.228139}, {0.975, 30, 2.042272},  {0.975, 1, 12.706205},  {0.975, 2, 4.302653},
      {0.975, 5, 2.570582},  {0.975, 100, 1.983972}, {0.995, 5, 4.032143},   {0.9, 2, 1.885618},
      {0.95, 20, 1.724718},  {0.95, 1e7, 1.644854},  {0.025, 10, -2.228139}, {0.5, 7, 0.0},
  };
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
    double t = tune_t_quantile(table[i].p, table[i].df);
    tap_ok(near(t, table[i].t, 1e-5), "t(%g, %g) = %.6f (table %.6f)", table[i].p, table[i].df, t,
           table[i].t);
  }
  tap_ok(isnan(tune_t_quantile(1.0, 3)) && isnan(tune_t_quantile(0.9, 0)), "t quantile domain");
}

static void test_linfit(void) {
  enum { N = 12 };
  double x[N], y[N];
  tune_linfit_result r;
  for (int i = 0; i < N; i++) {
    x[i] = 1e6 + 37.0 * i;
    y[i] = 3.0 + 2.5 * x[i];
  }
  tune_result fit = tune_linfit(x, y, N, 0.95, &r);
  tap_ok(fit == tune_ok && near(r.slope, 2.5, 1e-9) && near(r.intercept, 3.0, 1e-3) &&
             r.r2 > 1 - 1e-12 && r.slope_se < 1e-9 && r.n == N,
         "exact line: slope %.12g intercept %.9g r2 %.15g", r.slope, r.intercept, r.r2);

  enum { REPS = 200, M = 30 };
  double xs[M], ys[M];
  tune_rng rng;
  tune_rng_seed(&rng, 31337);
  int cover_s = 0, cover_i = 0, ok = 1;
  for (int rep = 0; rep < REPS; rep++) {
    for (int i = 0; i < M; i++) {
      xs[i] = 10.0 * tune_rng_uniform(&rng);
      ys[i] = -4.0 + 1.7 * xs[i] + 0.8 * tune_rng_normal(&rng);
    }
    ok &= tune_linfit(xs, ys, M, 0.95, &r) == tune_ok;
    cover_s += r.slope_lo <= 1.7 && 1.7 <= r.slope_hi;
    cover_i += r.intercept_lo <= -4.0 && -4.0 <= r.intercept_hi;
  }
  tap_diag("noisy line: slope CI covered %d/%d, intercept CI %d/%d", cover_s, REPS, cover_i, REPS);
  tap_ok(ok && cover_s >= 180 && cover_i >= 180, "95%% CIs cover the true slope and intercept");
  tap_ok(r.r2 > 0.5 && r.r2 < 1 && r.slope_lo < r.slope && r.slope < r.slope_hi, "r2 and CI order");

  double cx[4] = {2, 2, 2, 2}, cy[4] = {1, 2, 3, 4};
  tap_ok(tune_linfit(cx, cy, 4, 0.95, &r) == tune_err_arg &&
             tune_linfit(x, y, 2, 0.95, &r) == tune_err_arg,
         "constant x and n < 3 are rejected");
}

/* nccl-tests' figures for known latencies: 1 MiB per rank in 10 us on 4
 * ranks is 104.8576 GB/s of algbw for all_reduce and reduce_scatter (S =
 * the buffer, the whole input) and 4x that for all_gather (S = the output). */
static void test_bandwidth(void) {
  const double mib = 1048576, ns = 10000, alg = mib / ns;
  tune_bw ar = tune_bandwidth(DC_OP_ALL_REDUCE, 4, 1048576, ns);
  tune_bw ag = tune_bandwidth(DC_OP_ALL_GATHER, 4, 1048576, ns);
  tune_bw rs = tune_bandwidth(DC_OP_REDUCE_SCATTER, 4, 1048576, ns);
  tap_ok(near(ar.algbw, alg, 1e-9) && near(ar.busbw, alg * 2 * 3 / 4, 1e-9),
         "all_reduce: algbw = bytes / t, busbw = algbw * 2(W-1)/W");
  tap_ok(near(ag.algbw, 4 * alg, 1e-9) && near(ag.busbw, 4 * alg * 3 / 4, 1e-9),
         "all_gather: algbw = W * bytes / t, busbw = algbw * (W-1)/W");
  tap_ok(near(rs.algbw, alg, 1e-9) && near(rs.busbw, alg * 3 / 4, 1e-9),
         "reduce_scatter: algbw = whole input / t, busbw = algbw * (W-1)/W");
  tune_bw none = tune_bandwidth(DC_OP_ALL_REDUCE, 4, 1048576, 0);
  tune_bw one = tune_bandwidth(DC_OP_ALL_GATHER, 1, 1048576, ns);
  tap_ok(isnan(none.algbw) && isnan(none.busbw) && one.busbw == 0,
         "no latency gives NAN; one rank moves nothing over the bus");
}

/* The paired ratio CI: trials that share a drift (each trial's factor
 * moves both samples) give an interval that covers the true ratio and is
 * far narrower than the same samples with their pairs broken. */
static void test_ci_paired(void) {
  enum { REPS = 200, N = 40 };
  double a[N], b[N], shuffled[N], ratio, lo, hi, r2, lo2, hi2;
  tune_rng rng;
  tune_rng_seed(&rng, 77);
  int cover = 0, narrower = 0, bad = 0;
  for (int rep = 0; rep < REPS; rep++) {
    for (int t = 0; t < N; t++) {
      double drift = 1 + 0.1 * tune_rng_normal(&rng);
      a[t] = 1000 * drift * (1 + 0.01 * tune_rng_normal(&rng));
      b[t] = 900 * drift * (1 + 0.01 * tune_rng_normal(&rng));
      shuffled[t] = b[t];
    }
    for (int t = N - 1; t > 0; t--) {
      int k = (int)(tune_rng_next(&rng) % (uint64_t)(t + 1));
      double x = shuffled[t];
      shuffled[t] = shuffled[k];
      shuffled[k] = x;
    }
    bad += tune_ci_median_ratio_paired(a, b, N, 0.95, 300 + rep, &ratio, &lo, &hi) != tune_ok;
    bad += tune_ci_median_ratio_paired(a, shuffled, N, 0.95, 300 + rep, &r2, &lo2, &hi2) != tune_ok;
    cover += lo <= 0.9 && 0.9 <= hi;
    narrower += 2 * (hi - lo) < hi2 - lo2;
  }
  tap_diag("paired ratio CI: covered 0.9 in %d/%d, narrower than half the unpaired one in %d",
           cover, REPS, narrower);
  tap_ok(bad == 0 && cover >= 180,
         "95%% paired CI covers the true ratio in >= 90%% of %d repetitions", REPS);
  tap_ok(narrower >= 190,
         "pairing cancels a drift shared by a trial's samples: CI under half as wide");
  double r1, l1, h1;
  tune_ci_median_ratio_paired(a, b, N, 0.9, 5, &r1, &l1, &h1);
  tune_ci_median_ratio_paired(a, b, N, 0.9, 5, &ratio, &lo, &hi);
  tap_ok(r1 == ratio && l1 == lo && h1 == hi, "paired: same seed, same interval");
  tap_ok(ratio == tune_median(b, N) / tune_median(a, N) && lo <= ratio && ratio <= hi,
         "paired: ratio = median(b) / median(a), inside its CI");
  double zero[3] = {1, 0, 2}, ones[3] = {1, 1, 1};
  tap_ok(tune_ci_median_ratio_paired(a, b, 0, 0.9, 1, &r1, &l1, &h1) == tune_err_arg &&
             tune_ci_median_ratio_paired(a, b, N, 1.0, 1, &r1, &l1, &h1) == tune_err_arg &&
             tune_ci_median_ratio_paired(ones, zero, 3, 0.9, 1, &r1, &l1, &h1) == tune_err_arg &&
             tune_ci_median_ratio_paired(NULL, b, N, 0.9, 1, &r1, &l1, &h1) == tune_err_arg,
         "paired: no trials, confidence 1, a time not > 0, NULL are rejected");
}

/* The linear-time median equals the sorting one on seeded arrays of every
 * length up to 300, with many ties (values from a small range) and
 * without. */
static void test_median_select(void) {
  tune_rng rng;
  tune_rng_seed(&rng, 15);
  double x[300], y[300];
  int bad = 0;
  for (size_t n = 1; n <= 300; n++)
    for (int ties = 0; ties < 2; ties++) {
      for (size_t i = 0; i < n; i++)
        x[i] = ties ? (double)(tune_rng_next(&rng) % 7) : tune_rng_uniform(&rng) * 1e6;
      memcpy(y, x, n * sizeof(*x));
      bad += tune_median_select(y, n) != tune_median(x, n);
    }
  tap_ok(bad == 0, "tune_median_select equals tune_median (%d of 600 differ)", bad);
  tap_ok(isnan(tune_median_select(x, 0)), "median_select of nothing is NaN");
}

/* The two-look stopping rule: a refutation stops at once, a claim (a
 * regret miss, a decided win) only at its second look in a row, the cap
 * always. */
static void test_look_done(void) {
  int missed = 0;
  tap_ok(tune_look_done(-2, -1, 20, 640, &missed) == 1 && !missed, "a pass stops at the first look");
  missed = 0;
  int first = tune_look_done(1, 2, 20, 640, &missed);
  int second = tune_look_done(1, 2, 40, 640, &missed);
  tap_ok(first == 0 && second == 1, "a miss stops at its second look in a row, not its first");
  missed = 0;
  int a = tune_look_done(1, 2, 20, 640, &missed), b = tune_look_done(-1, 2, 40, 640, &missed),
      c = tune_look_done(1, 2, 80, 640, &missed);
  tap_ok(a == 0 && b == 0 && c == 0, "a miss, an undecided look, a miss: not two in a row, goes on");
  missed = 0;
  tap_ok(tune_look_done(-1, 1, 640, 640, &missed) == 1 && tune_look_done(1, 2, 640, 640, &(int){0}) == 1,
         "the cap stops an undecided size and a first miss");
  tap_ok(tune_look_next(20, 640) == 40 && tune_look_next(320, 640) == 640 &&
             tune_look_next(400, 640) == 640 && tune_look_next(640, 640) == 640,
         "the next look doubles the trials, up to the cap");
}

/* The regret CI is the median-difference CI of auto against target times
 * best, the same seed giving the same interval. */
static void test_ci_regret(void) {
  tune_rng rng;
  tune_rng_seed(&rng, 21);
  double a[40], b[40], scaled[40], d0, lo0, hi0, d1 = 0, lo1 = 0, hi1 = 0;
  for (int t = 0; t < 40; t++) {
    a[t] = 100 + 10 * tune_rng_uniform(&rng);
    b[t] = 97 + 10 * tune_rng_uniform(&rng);
    scaled[t] = 1.03 * b[t];
  }
  tune_result r0 = tune_ci_median_diff(scaled, 40, a, 40, 0.95, 9, &d0, &lo0, &hi0);
  tune_result r1 = tune_ci_regret(a, b, 40, 1.03, 0.95, 9, &d1, &lo1, &hi1);
  tap_ok(r0 == tune_ok && r1 == tune_ok && d0 == d1 && lo0 == lo1 && hi0 == hi1,
         "regret CI: median(auto) - 1.03 * median(best), as tune_ci_median_diff of the scaled best");
  tap_ok(tune_ci_regret(NULL, b, 40, 1.03, 0.95, 9, &d1, &lo1, &hi1) == tune_err_arg &&
             tune_ci_regret(a, b, 0, 1.03, 0.95, 9, &d1, &lo1, &hi1) == tune_err_arg,
         "regret CI: NULL samples or no trials refused");
}

/* The edges of stats.h's contracts: each bound just inside accepted, just
 * outside refused, each pointer checked on its own, and a fit whose every
 * figure is known in closed form. */
static void test_stats_edges(void) {
  double a[4] = {1, 2, 3, 4}, b[4] = {2, 3, 4, 5}, zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
  double d, lo, hi;
  int missed = 0;
  tap_ok(tune_look_done(0, 1, 20, 640, &missed) == 0 && !missed &&
             tune_look_done(0, 1, 40, 640, &missed) == 0 && tune_look_done(-1, 0, 20, 640, &missed) == 0,
         "look: lo = 0 is no miss and hi = 0 no pass");
  tap_ok(tune_ci_median_diff(NULL, 4, b, 4, 0.9, 1, &d, &lo, &hi) == tune_err_arg &&
             tune_ci_median_diff(a, 4, NULL, 4, 0.9, 1, &d, &lo, &hi) == tune_err_arg &&
             tune_ci_median_diff(a, 4, b, 4, 0.9, 1, &d, &lo, NULL) == tune_err_arg &&
             tune_ci_median_diff(a, (size_t)UINT32_MAX + 1, b, 4, 0.9, 1, &d, &lo, &hi) == tune_err_arg &&
             tune_ci_median_diff(a, 4, b, (size_t)UINT32_MAX + 1, 0.9, 1, &d, &lo, &hi) == tune_err_arg,
         "median-difference CI: each NULL pointer alone, and either sample above UINT32_MAX, refused");
  tap_ok(tune_ci_regret(a, NULL, 4, 1.03, 0.9, 1, &d, &lo, &hi) == tune_err_arg,
         "regret CI: NULL best samples alone refused");
  /* On the heap, exactly n long: a read past the last trial is an error
   * of the sanitizer build. */
  double *ha = malloc(3 * sizeof(*ha)), *hb = malloc(3 * sizeof(*hb));
  int paired = ha && hb;
  for (int t = 0; paired && t < 3; t++) ha[t] = 1 + t, hb[t] = 2 + t;
  paired = paired && tune_ci_median_ratio_paired(ha, hb, 3, 0.9, 1, &d, &lo, &hi) == tune_ok && d == 1.5;
  free(ha);
  free(hb);
  tap_ok(paired, "paired ratio of 3 heap trials: median 3 / median 2 = 1.5");
  tap_ok(tune_ci_median_ratio_paired(zero, one, 3, 0.9, 1, &d, &lo, &hi) == tune_err_arg &&
             tune_ci_median_ratio_paired(one, one, 3, 0.9, 1, &d, &lo, &hi) == tune_ok,
         "paired ratio: a 0 among the first samples refused, all 1 accepted");
  /* 1..5 against 2, 4, 5, 4, 5: slope 0.6, intercept 2.2, SSE 2.4 on 3
   * degrees of freedom (t(0.975, 3) = 3.182446305), r2 0.6. */
  double x[5] = {1, 2, 3, 4, 5}, y[5] = {2, 4, 5, 4, 5}, flat[5] = {7, 7, 7, 7, 7};
  tune_linfit_result r;
  int ok = tune_linfit(x, y, 5, 0.95, &r) == tune_ok;
  tap_ok(ok && near(r.slope, 0.6, 1e-12) && near(r.intercept, 2.2, 1e-12) &&
             near(r.slope_se, sqrt(0.08), 1e-12) && near(r.intercept_se, sqrt(0.88), 1e-12) &&
             near(r.slope_lo, -0.3001317453, 1e-8) && near(r.slope_hi, 1.5001317453, 1e-8) &&
             near(r.intercept_lo, -0.7853992610, 1e-8) && near(r.intercept_hi, 5.1853992610, 1e-8) &&
             near(r.r2, 0.6, 1e-12),
         "fit of 5 points: slope %.10g [%.10g, %.10g] se %.10g, intercept %.10g [%.10g, %.10g] "
         "se %.10g, r2 %.10g", r.slope, r.slope_lo, r.slope_hi, r.slope_se, r.intercept,
         r.intercept_lo, r.intercept_hi, r.intercept_se, r.r2);
  tap_ok(tune_linfit(x, flat, 5, 0.95, &r) == tune_ok && r.r2 == 1 && r.slope == 0,
         "fit of a constant y: r2 1");
  double nan_y[5] = {2, 4, NAN, 4, 5};
  tap_ok(tune_linfit(x, y, 3, 0.95, &r) == tune_ok && tune_linfit(NULL, y, 5, 0.95, &r) == tune_err_arg &&
             tune_linfit(x, nan_y, 5, 0.95, &r) == tune_err_arg &&
             tune_linfit(x, y, 5, 0, &r) == tune_err_arg && tune_linfit(x, y, 5, 1, &r) == tune_err_arg,
         "fit: 3 points accepted; a NULL x, a NaN y, confidence 0 or 1 refused");
  /* Closed forms: df 1, t = tan(pi (p - 1/2)); df 2, (2p - 1) / sqrt(2p(1 - p)). */
  static const double ps[] = {0.2, 0.6, 0.9, 0.975, 0.999};
  int close = 1;
  for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
    double p = ps[i];
    close &= near(tune_t_quantile(p, 1), tan(M_PI * (p - 0.5)), 1e-9) &&
             near(tune_t_quantile(p, 2), (2 * p - 1) / sqrt(2 * p * (1 - p)), 1e-9);
  }
  tap_ok(close, "t quantiles of 1 and 2 degrees of freedom within 1e-9 of their closed forms");
  tap_ok(isnan(tune_t_quantile(0, 3)) && isnan(tune_t_quantile(0.5, -1)), "t quantile: p = 0 and df < 0 are NaN");
}

int main(void) {
  test_look_done();
  test_ci_regret();
  test_bandwidth();
  test_percentiles();
  test_slowest();
  test_ci();
  test_ci_exact();
  test_ci_paired();
  test_t();
  test_linfit();
  test_median_select();
  test_stats_edges();
  return tap_done();
}
