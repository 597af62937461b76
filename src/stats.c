/* stats.c: percentiles, the slowest-rank reduction, the bootstrap CI of a
 * median difference, Student's t quantiles and the least-squares line. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Arrays up to this size are copied onto the stack rather than malloc'd:
 * trial counts are usually below it and percentiles are called per config. */
#define STATS_STACK_N 256

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

/* Percentile of an ascending array (numpy's linear rule). */
static double percentile_sorted(const double *s, size_t n, double p) {
  double h = (double)(n - 1) * p / 100.0;
  size_t k = (size_t)floor(h);
  if (k >= n - 1) return s[n - 1];
  return s[k] + (h - (double)k) * (s[k + 1] - s[k]);
}

static int percentile_args_ok(const double *x, size_t n, double p) {
  return x != NULL && n > 0 && p >= 0.0 && p <= 100.0;
}

double tune_percentile_inplace(double *x, size_t n, double p) {
  if (!percentile_args_ok(x, n, p)) return NAN;
  qsort(x, n, sizeof(*x), cmp_double);
  return percentile_sorted(x, n, p);
}

double tune_percentile(const double *x, size_t n, double p) {
  if (!percentile_args_ok(x, n, p)) return NAN;
  double stack[STATS_STACK_N];
  double *copy = n <= STATS_STACK_N ? stack : malloc(n * sizeof(*copy));
  if (copy == NULL) return NAN;
  memcpy(copy, x, n * sizeof(*copy));
  double v = tune_percentile_inplace(copy, n, p);
  if (copy != stack) free(copy);
  return v;
}

double tune_median(const double *x, size_t n) { return tune_percentile(x, n, 50.0); }

/* x[k] becomes the k-th smallest, smaller ones before it, larger after
 * (Hoare's selection, middle pivot). */
static void select_kth(double *x, size_t n, size_t k) {
  size_t lo = 0, hi = n - 1;
  while (lo < hi) {
    double pivot = x[lo + (hi - lo) / 2];
    size_t i = lo, j = hi;
    while (i <= j) {
      while (x[i] < pivot) i++;
      while (x[j] > pivot) j--;
      if (i <= j) {
        double t = x[i];
        x[i++] = x[j];
        x[j] = t;
        if (j == 0) break;
        j--;
      }
    }
    if (k <= j)
      hi = j;
    else if (k >= i)
      lo = i;
    else
      return;
  }
}

double tune_median_select(double *x, size_t n) {
  if (n == 0) return NAN;
  size_t k = n / 2;
  select_kth(x, n, k);
  if (n % 2) return x[k];
  double below = x[0];
  for (size_t i = 1; i < k; i++)
    if (x[i] > below) below = x[i];
  return (below + x[k]) / 2;
}

void tune_slowest_per_trial(const int64_t *elapsed, int trials, int world, double *out) {
  for (int t = 0; t < trials; t++) {
    const int64_t *row = elapsed + (size_t)t * (size_t)world;
    int64_t m = row[0];
    for (int r = 1; r < world; r++)
      if (row[r] > m) m = row[r];
    out[t] = (double)m;
  }
}

/* ---- bootstrap ------------------------------------------------------------ */

/* Draw n indices of 0..n-1 with replacement; count[i]: how often i was
 * drawn. Each 64-bit draw gives two indices (Lemire's multiply-shift on
 * each 32-bit half; the bias, below n / 2^32, is negligible), which halves
 * the generator's share of the cost. */
static void resample_counts(uint32_t n, uint32_t *count, tune_rng *rng) {
  memset(count, 0, n * sizeof(*count));
  for (uint32_t i = 0; i < n; i += 2) {
    uint64_t r = tune_rng_next(rng);
    count[((r >> 32) * n) >> 32]++;
    if (i + 1 < n) count[((r & 0xffffffffu) * n) >> 32]++;
  }
}

/* Median of the ascending array s[0..n) with s[i] drawn count[i] times
 * (n draws in all). */
static double counted_median(const double *s, uint32_t n, const uint32_t *count) {
  uint32_t k1 = (n - 1) / 2, k2 = n / 2, seen = 0, i = 0;
  while (seen + count[i] <= k1) seen += count[i++];
  double v1 = s[i];
  while (seen + count[i] <= k2) seen += count[i++];
  return 0.5 * (v1 + s[i]);
}

/* Median of one resample of the ascending array s: the counts of its
 * order statistics, walked to the middle rank(s). A resample of a sorted
 * array is sorted by index, so no sort is needed. */
static double resample_median(const double *s, uint32_t n, uint32_t *count, tune_rng *rng) {
  resample_counts(n, count, rng);
  return counted_median(s, n, count);
}

tune_result tune_ci_median_diff(const double *a, size_t na, const double *b, size_t nb,
                                double confidence, uint64_t seed, double *diff, double *lo,
                                double *hi) {
  if (a == NULL || b == NULL || diff == NULL || lo == NULL || hi == NULL || na == 0 || nb == 0 ||
      na > UINT32_MAX || nb > UINT32_MAX || !(confidence > 0.0 && confidence < 1.0))
    return tune_err_arg;
  tune_result res = tune_ok;
  size_t nmax = na > nb ? na : nb;
  double *sa = malloc(na * sizeof(*sa));
  double *sb = malloc(nb * sizeof(*sb));
  uint32_t *count = malloc(nmax * sizeof(*count));
  double *d = malloc(TUNE_BOOTSTRAP_RESAMPLES * sizeof(*d));
  if (sa == NULL || sb == NULL || count == NULL || d == NULL) {
    res = tune_err_system;
    goto exit;
  }
  memcpy(sa, a, na * sizeof(*sa));
  memcpy(sb, b, nb * sizeof(*sb));
  qsort(sa, na, sizeof(*sa), cmp_double);
  qsort(sb, nb, sizeof(*sb), cmp_double);
  *diff = percentile_sorted(sb, nb, 50.0) - percentile_sorted(sa, na, 50.0);

  tune_rng rng;
  tune_rng_seed(&rng, seed);
  for (int i = 0; i < TUNE_BOOTSTRAP_RESAMPLES; i++) {
    double ma = resample_median(sa, (uint32_t)na, count, &rng);
    double mb = resample_median(sb, (uint32_t)nb, count, &rng);
    d[i] = mb - ma;
  }
  qsort(d, TUNE_BOOTSTRAP_RESAMPLES, sizeof(*d), cmp_double);
  *lo = percentile_sorted(d, TUNE_BOOTSTRAP_RESAMPLES, 50.0 * (1.0 - confidence));
  *hi = percentile_sorted(d, TUNE_BOOTSTRAP_RESAMPLES, 50.0 * (1.0 + confidence));
exit:
  free(sa);
  free(sb);
  free(count);
  free(d);
  return res;
}

/* A trial's index and its value, for sorting one side of a pairing. */
typedef struct {
  double v;
  uint32_t trial;
} stats_ranked;

static int cmp_ranked(const void *pa, const void *pb) {
  double a = ((const stats_ranked *)pa)->v, b = ((const stats_ranked *)pb)->v;
  return (a > b) - (a < b);
}

tune_result tune_ci_regret(const double *auto_ns, const double *best_ns, size_t n, double target,
                           double confidence, uint64_t seed, double *diff, double *lo, double *hi) {
  if (auto_ns == NULL || best_ns == NULL || n == 0) return tune_err_arg;
  double *scaled = malloc(n * sizeof(*scaled));
  if (scaled == NULL) return tune_err_system;
  for (size_t t = 0; t < n; t++) scaled[t] = target * best_ns[t];
  tune_result r = tune_ci_median_diff(scaled, n, auto_ns, n, confidence, seed, diff, lo, hi);
  free(scaled);
  return r;
}

int tune_look_done(double lo, double hi, int n, int cap, int *seen) {
  const int claim = lo > 0.0, was = *seen;
  *seen = claim;
  return hi < 0.0 || (claim && was) || n >= cap;
}

int tune_look_next(int n, int cap) { return 2 * n < cap ? 2 * n : cap; }

/* Each side sorted once with its trials' numbers; a resample draws counts
 * per trial, which each side reads in its own order (counted_median). */
tune_result tune_ci_median_ratio_paired(const double *a, const double *b, size_t n,
                                        double confidence, uint64_t seed, double *ratio, double *lo,
                                        double *hi) {
  if (a == NULL || b == NULL || ratio == NULL || lo == NULL || hi == NULL || n == 0 ||
      n > UINT32_MAX || !(confidence > 0.0 && confidence < 1.0))
    return tune_err_arg;
  for (size_t t = 0; t < n; t++)
    if (!(a[t] > 0) || !(b[t] > 0)) return tune_err_arg;
  tune_result res = tune_ok;
  stats_ranked *ra = malloc(n * sizeof(*ra)), *rb = malloc(n * sizeof(*rb));
  double *sa = malloc(n * sizeof(*sa)), *sb = malloc(n * sizeof(*sb));
  uint32_t *count = malloc(n * sizeof(*count)), *ca = malloc(n * sizeof(*ca)),
           *cb = malloc(n * sizeof(*cb));
  double *q = malloc(TUNE_BOOTSTRAP_RESAMPLES * sizeof(*q));
  if (!ra || !rb || !sa || !sb || !count || !ca || !cb || !q) {
    res = tune_err_system;
    goto exit;
  }
  for (uint32_t t = 0; t < (uint32_t)n; t++) {
    ra[t] = (stats_ranked){a[t], t};
    rb[t] = (stats_ranked){b[t], t};
  }
  qsort(ra, n, sizeof(*ra), cmp_ranked);
  qsort(rb, n, sizeof(*rb), cmp_ranked);
  for (size_t i = 0; i < n; i++) {
    sa[i] = ra[i].v;
    sb[i] = rb[i].v;
  }
  *ratio = percentile_sorted(sb, n, 50.0) / percentile_sorted(sa, n, 50.0);
  tune_rng rng;
  tune_rng_seed(&rng, seed);
  for (int k = 0; k < TUNE_BOOTSTRAP_RESAMPLES; k++) {
    resample_counts((uint32_t)n, count, &rng);
    for (size_t i = 0; i < n; i++) {
      ca[i] = count[ra[i].trial];
      cb[i] = count[rb[i].trial];
    }
    q[k] = counted_median(sb, (uint32_t)n, cb) / counted_median(sa, (uint32_t)n, ca);
  }
  qsort(q, TUNE_BOOTSTRAP_RESAMPLES, sizeof(*q), cmp_double);
  *lo = percentile_sorted(q, TUNE_BOOTSTRAP_RESAMPLES, 50.0 * (1.0 - confidence));
  *hi = percentile_sorted(q, TUNE_BOOTSTRAP_RESAMPLES, 50.0 * (1.0 + confidence));
exit:
  free(ra);
  free(rb);
  free(sa);
  free(sb);
  free(count);
  free(ca);
  free(cb);
  free(q);
  return res;
}

/* ---- Student's t ---------------------------------------------------------- */

/* Continued fraction of the incomplete beta function (modified Lentz). */
static double beta_cf(double a, double b, double x) {
  const double tiny = 1e-300, eps = 1e-15;
  double qab = a + b, qap = a + 1.0, qam = a - 1.0;
  double c = 1.0, d = 1.0 - qab * x / qap;
  if (fabs(d) < tiny) d = tiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= 1000; m++) {
    double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1.0 + aa * d;
    if (fabs(d) < tiny) d = tiny;
    c = 1.0 + aa / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1.0 + aa * d;
    if (fabs(d) < tiny) d = tiny;
    c = 1.0 + aa / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    double del = d * c;
    h *= del;
    if (fabs(del - 1.0) < eps) break;
  }
  return h;
}

/* Regularized incomplete beta I_x(a, b), 0 <= x <= 1. */
static double beta_inc(double a, double b, double x) {
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
  /* The fraction converges fast only below the mean; use the symmetry
   * I_x(a, b) = 1 - I_{1-x}(b, a) above it. */
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_cf(a, b, x) / a;
  return 1.0 - front * beta_cf(b, a, 1.0 - x) / b;
}

/* P(T <= t) for t >= 0. */
static double t_cdf_upper_half(double t, double df) {
  return 1.0 - 0.5 * beta_inc(0.5 * df, 0.5, df / (df + t * t));
}

double tune_t_quantile(double p, double df) {
  if (!(p > 0.0 && p < 1.0) || !(df > 0.0)) return NAN;
  if (p == 0.5) return 0.0;
  double q = p > 0.5 ? p : 1.0 - p;
  double lo = 0.0, hi = 1.0;
  while (t_cdf_upper_half(hi, df) < q && hi < 1e300) hi *= 2.0;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * (1.0 + hi); i++) {
    double mid = 0.5 * (lo + hi);
    if (t_cdf_upper_half(mid, df) < q)
      lo = mid;
    else
      hi = mid;
  }
  double t = 0.5 * (lo + hi);
  return p > 0.5 ? t : -t;
}

/* ---- least squares -------------------------------------------------------- */

tune_result tune_linfit(const double *x, const double *y, size_t n, double confidence,
                        tune_linfit_result *r) {
  if (x == NULL || y == NULL || r == NULL || n < 3 || !(confidence > 0.0 && confidence < 1.0))
    return tune_err_arg;
  double mx = 0.0, my = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(x[i]) || !isfinite(y[i])) return tune_err_arg;
    mx += x[i];
    my += y[i];
  }
  mx /= (double)n;
  my /= (double)n;
  /* Centered sums (two passes) keep the fit accurate when x is large and
   * narrow, like byte counts or timestamps. */
  double sxx = 0.0, sxy = 0.0, syy = 0.0;
  for (size_t i = 0; i < n; i++) {
    double dx = x[i] - mx, dy = y[i] - my;
    sxx += dx * dx;
    sxy += dx * dy;
    syy += dy * dy;
  }
  if (!(sxx > 0.0)) return tune_err_arg;
  double slope = sxy / sxx, intercept = my - slope * mx;
  double sse = 0.0;
  for (size_t i = 0; i < n; i++) {
    double e = y[i] - (intercept + slope * x[i]);
    sse += e * e;
  }
  double s2 = sse / (double)(n - 2);
  double tq = tune_t_quantile(0.5 * (1.0 + confidence), (double)(n - 2));
  r->n = n;
  r->confidence = confidence;
  r->slope = slope;
  r->intercept = intercept;
  r->slope_se = sqrt(s2 / sxx);
  r->intercept_se = sqrt(s2 * (1.0 / (double)n + mx * mx / sxx));
  r->slope_lo = slope - tq * r->slope_se;
  r->slope_hi = slope + tq * r->slope_se;
  r->intercept_lo = intercept - tq * r->intercept_se;
  r->intercept_hi = intercept + tq * r->intercept_se;
  r->r2 = syy > 0.0 ? 1.0 - sse / syy : 1.0;
  return tune_ok;
}

tune_bw tune_bandwidth(dc_op op, int world, uint64_t bytes, double ns) {
  static const struct {
    dc_op op;
    int size_per_rank; /* 1: S = world * bytes */
    int bus_twice;     /* 1: busbw factor 2(W-1)/W, else (W-1)/W */
  } rules[] = {
      {DC_OP_ALL_REDUCE, 0, 1},
      {DC_OP_ALL_GATHER, 1, 0},
      {DC_OP_REDUCE_SCATTER, 0, 0},
  };
  tune_bw bw = {NAN, NAN};
  if (!(ns > 0) || world < 1) return bw;
  for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
    if (rules[i].op != op) continue;
    double s = (double)bytes * (rules[i].size_per_rank ? world : 1);
    bw.algbw = s / ns; /* bytes per ns = GB/s */
    bw.busbw = bw.algbw * (rules[i].bus_twice ? 2.0 : 1.0) * (world - 1) / world;
  }
  return bw;
}
