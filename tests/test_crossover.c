/* test_crossover.c: the crossover search on synthetic latency curves
 * (alpha + bytes * ns_per_byte, tilted for near ties, with seeded 2%
 * multiplicative normal noise) whose crossovers are known analytically. */
#include <math.h>
#include <string.h>

#include "crossover.h"
#include "tap.h"

#define MAX_SETS 512

/* The synthetic machine: per path a line, an optional tilt (a factor
 * 1 + tilt * log2(bytes / pivot)), noise, and a ledger of what was measured. */
typedef struct {
  double alpha[DC_PATH_COUNT], ns_per_byte[DC_PATH_COUNT], tilt[DC_PATH_COUNT];
  double pivot, noise;
  double (*shape)(dc_path p, uint64_t bytes); /* extra factor, or NULL */
  tune_rng rng;
  int calls;
  long trials;
  struct ledger_entry {
    dc_path path;
    uint64_t bytes;
    long trials;
  } ledger[MAX_SETS];
  int nledger;
  int bad_call; /* a call with ntrials < 1 or a ledger overflow */
} synth;

static double synth_latency(const synth *m, dc_path p, uint64_t bytes) {
  double base = m->alpha[p] + (double)bytes * m->ns_per_byte[p];
  double f = m->shape ? m->shape(p, bytes) : 1.0;
  return f * base * (1.0 + m->tilt[p] * log2((double)bytes / m->pivot));
}

/* The ledger entry of (path, bytes), a new one if there is none; NULL (and
 * bad_call) when the ledger is full. */
static struct ledger_entry *ledger_find(synth *m, dc_path path, uint64_t bytes) {
  int i = 0;
  while (i < m->nledger && !(m->ledger[i].path == path && m->ledger[i].bytes == bytes)) i++;
  if (i == m->nledger) {
    if (i == MAX_SETS) {
      m->bad_call = 1;
      return NULL;
    }
    m->ledger[m->nledger++] = (struct ledger_entry){path, bytes, 0};
  }
  return &m->ledger[i];
}

/* A measure call of ntrials at (path, bytes) counted: its ledger entry
 * (ledger_find), its trials not yet added to it. */
static struct ledger_entry *ledger_of(synth *m, dc_path path, uint64_t bytes, int ntrials) {
  m->calls++;
  m->trials += ntrials;
  if (ntrials < 1) m->bad_call = 1;
  return ledger_find(m, path, bytes);
}

static tune_result synth_measure(void *ctx, dc_path path, uint64_t bytes, int ntrials,
                                 double *out) {
  synth *m = ctx;
  struct ledger_entry *e = ledger_of(m, path, bytes, ntrials);
  if (e == NULL) return tune_err_internal;
  e->trials += ntrials;
  double mean = synth_latency(m, path, bytes);
  for (int t = 0; t < ntrials; t++) out[t] = mean * (1.0 + m->noise * tune_rng_normal(&m->rng));
  return tune_ok;
}

/* Fails on its seventh call, as a GPU error would. */
static tune_result failing_measure(void *ctx, dc_path path, uint64_t bytes, int ntrials,
                                   double *out) {
  synth *m = ctx;
  if (m->calls == 6) {
    m->calls++;
    return tune_err_cuda;
  }
  return synth_measure(ctx, path, bytes, ntrials, out);
}

static void synth_init(synth *m, uint64_t seed) {
  memset(m, 0, sizeof(*m));
  m->noise = 0.02;
  m->pivot = 65536;
  tune_rng_seed(&m->rng, seed);
}

static void synth_line(synth *m, dc_path p, double alpha, double ns_per_byte) {
  m->alpha[p] = alpha;
  m->ns_per_byte[p] = ns_per_byte;
}

static tune_xover_search default_search(synth *m, const dc_path *paths, int npaths) {
  return (tune_xover_search){.measure = synth_measure,
                             .ctx = m,
                             .paths = paths,
                             .npaths = npaths,
                             .min_bytes = 1024,
                             .max_bytes = 64u << 20,
                             .grid_factor = 2.0,
                             .granule = 16,
                             .resolution = 0.0625,
                             .trials = 16,
                             .max_trials = 256,
                             .confidence = 0.95,
                             .seed = 12345};
}

/* Where two lines cross. */
static double line_cross(const synth *m, dc_path a, dc_path b) {
  return (m->alpha[b] - m->alpha[a]) / (m->ns_per_byte[a] - m->ns_per_byte[b]);
}

static int within(const tune_xover_search *s, uint64_t found, double truth) {
  return fabs((double)found - truth) <= truth * s->resolution + (double)s->granule;
}

/* Segments well formed: increasing, last DC_BYTES_MAX, neighbours differ,
 * and consistent with the crossover records (a decided one has its CI at
 * hi_bytes below zero, lo_bytes below hi_bytes, and its threshold at
 * lo_bytes; an undecided one its threshold at the tie point hi_bytes). */
static int segments_ok(const dc_segment *seg, int nseg, const tune_xover *xo, int nxo) {
  if (nseg < 1 || nseg > DC_MAX_SEGMENTS || nxo != nseg - 1 ||
      seg[nseg - 1].max_bytes != DC_BYTES_MAX)
    return 0;
  for (int i = 0; i + 1 < nseg; i++)
    if (seg[i].max_bytes != xo[i].bytes || seg[i].path != xo[i].below ||
        seg[i + 1].path != xo[i].above || seg[i].path == seg[i + 1].path ||
        (i > 0 && seg[i].max_bytes <= seg[i - 1].max_bytes) || xo[i].lo_bytes > xo[i].hi_bytes ||
        (xo[i].decided && !(xo[i].ci_hi_ns < 0)) ||
        xo[i].bytes != (xo[i].decided ? xo[i].lo_bytes : xo[i].hi_bytes) ||
        (xo[i].decided && xo[i].lo_bytes == xo[i].hi_bytes))
      return 0;
  return 1;
}

/* Every (path, size) measured at most max_trials trials in all. */
static int ledger_ok(const synth *m, int max_trials) {
  for (int i = 0; i < m->nledger; i++)
    if (m->ledger[i].trials > max_trials) return 0;
  return !m->bad_call;
}

/* Sizes a dense grid at the search's resolution would need. */
static int dense_sizes(const tune_xover_search *s) {
  return (int)ceil(log((double)s->max_bytes / (double)s->min_bytes) / log(1.0 + s->resolution)) + 1;
}

static void test_two_paths(void) {
  static const dc_path paths[] = {DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED};
  int all_found = 1, all_decided = 1, all_ci = 1, all_seg = 1, all_ledger = 1, all_cheap = 1;
  int max_calls = 0;
  for (int rep = 0; rep < 10; rep++) {
    synth m;
    synth_init(&m, 100 + rep);
    synth_line(&m, DC_PATH_SINGLE_BLOCK, 3000, 0.4);
    synth_line(&m, DC_PATH_FUSED, 8000 + 1500 * rep, 0.02);
    tune_xover_search s = default_search(&m, paths, 2);
    s.seed = 777 + rep;
    tune_xover xo[DC_MAX_SEGMENTS];
    dc_segment seg[DC_MAX_SEGMENTS];
    int nxo = -1, nseg = -1;
    tune_result r = tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg);
    double truth = line_cross(&m, DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED);
    if (r != tune_ok || nseg != 2) {
      all_found = all_seg = 0;
      continue;
    }
    tap_diag(
        "rep %d: true %.0f found %llu (%llu..%llu) diff %.1f CI [%.1f, %.1f] decided %d, %d calls "
        "%ld trials",
        rep, truth, (unsigned long long)xo[0].bytes, (unsigned long long)xo[0].lo_bytes,
        (unsigned long long)xo[0].hi_bytes, xo[0].diff_ns, xo[0].ci_lo_ns, xo[0].ci_hi_ns,
        xo[0].decided, m.calls, m.trials);
    all_found &= within(&s, xo[0].bytes, truth);
    all_decided &= xo[0].decided == 1;
    all_ci &= xo[0].ci_lo_ns <= xo[0].diff_ns && xo[0].diff_ns <= xo[0].ci_hi_ns &&
              xo[0].ci_hi_ns < 0 && xo[0].confidence == 0.95;
    all_seg &= segments_ok(seg, nseg, xo, nxo) && seg[0].path == DC_PATH_SINGLE_BLOCK &&
               seg[1].path == DC_PATH_FUSED;
    all_ledger &= ledger_ok(&m, s.max_trials);
    all_cheap &= m.calls * 3 < dense_sizes(&s) * 2;
    if (m.calls > max_calls) max_calls = m.calls;
  }
  tap_ok(all_found, "2 paths, 10 curves: crossover within resolution + granule of the true one");
  tap_ok(all_decided, "2 paths: every crossover decided");
  tap_ok(all_ci, "2 paths: CI recorded at hi_bytes, below zero, containing diff");
  tap_ok(all_seg, "2 paths: segments single_block then fused, consistent with the crossover");
  tap_ok(all_ledger, "no (path, size) measured beyond max_trials; no empty measure call");
  tap_ok(all_cheap, "measure calls (at most %d) under a third of a dense grid's %d", max_calls,
         2 * dense_sizes(&(tune_xover_search){
                 .min_bytes = 1024, .max_bytes = 64u << 20, .resolution = 0.0625}));
}

static void test_deterministic(void) {
  static const dc_path paths[] = {DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED};
  tune_xover xo[2][DC_MAX_SEGMENTS];
  dc_segment seg[2][DC_MAX_SEGMENTS];
  int nxo[2], nseg[2];
  for (int k = 0; k < 2; k++) {
    synth m;
    synth_init(&m, 5);
    synth_line(&m, DC_PATH_SINGLE_BLOCK, 3000, 0.4);
    synth_line(&m, DC_PATH_FUSED, 11000, 0.02);
    tune_xover_search s = default_search(&m, paths, 2);
    memset(xo[k], 0, sizeof(xo[k]));
    memset(seg[k], 0, sizeof(seg[k]));
    tune_xover_find(&s, xo[k], DC_MAX_SEGMENTS, &nxo[k], seg[k], &nseg[k]);
  }
  tap_ok(nxo[0] == nxo[1] && nseg[0] == nseg[1] && memcmp(xo[0], xo[1], sizeof(xo[0])) == 0 &&
             memcmp(seg[0], seg[1], sizeof(seg[0])) == 0,
         "same data and seed give the same crossovers");
}

static void test_no_crossover(void) {
  static const dc_path paths[] = {DC_PATH_SINGLE_BLOCK, DC_PATH_MULTI_BLOCK};
  synth m;
  synth_init(&m, 9);
  synth_line(&m, DC_PATH_SINGLE_BLOCK, 9000, 0.05);
  synth_line(&m, DC_PATH_MULTI_BLOCK, 4000, 0.01);
  tune_xover_search s = default_search(&m, paths, 2);
  tune_xover xo[DC_MAX_SEGMENTS];
  dc_segment seg[DC_MAX_SEGMENTS];
  int nxo = -1, nseg = -1;
  tune_result r = tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg);
  tap_ok(r == tune_ok && nseg == 1 && nxo == 0 && seg[0].path == DC_PATH_MULTI_BLOCK &&
             seg[0].max_bytes == DC_BYTES_MAX,
         "one path always faster: one segment (multi_block to DC_BYTES_MAX)");
  tap_ok(m.calls == 2 * 17, "no crossover: only the coarse grid measured (%d calls)", m.calls);
  /* With the stability rules on, no path is near the winner anywhere: no
   * midpoint between two grid sizes is measured either. */
  synth_init(&m, 9);
  synth_line(&m, DC_PATH_SINGLE_BLOCK, 9000, 0.05);
  synth_line(&m, DC_PATH_MULTI_BLOCK, 4000, 0.01);
  s.tolerance = 1.03;
  r = tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg);
  int off_grid = 0;
  for (int i = 0; i < m.nledger; i++)
    off_grid += (m.ledger[i].bytes & (m.ledger[i].bytes - 1)) != 0;
  tap_ok(r == tune_ok && nseg == 1 && seg[0].path == DC_PATH_MULTI_BLOCK && off_grid == 0,
         "no crossover, stability rules on: no size off the coarse grid measured (%d)", off_grid);
}

/* two_shot against one_shot, the same line but for two_shot's trials: 5%
 * slower below max_bytes; at max_bytes its first 16 trials are 9 at 0.99x
 * and 7 at 1.01x one_shot (it wins the coarse grid's median there, but not
 * the CI), every later one 1.01x (it loses once the sample grows). */
typedef struct {
  synth m; /* first: synth_measure's context */
  uint64_t max_bytes;
  long at_max; /* two_shot's trials at max_bytes so far */
} edge_synth;

static tune_result edge_measure(void *ctx, dc_path path, uint64_t bytes, int ntrials, double *out) {
  edge_synth *e = ctx;
  TUNE_CHECK(synth_measure(&e->m, path, bytes, ntrials, out));
  if (path != DC_PATH_TWO_SHOT) return tune_ok;
  for (int t = 0; t < ntrials; t++)
    if (bytes != e->max_bytes) {
      out[t] *= 1.05;
    } else {
      long k = e->at_max++;
      out[t] *= k < 9 ? 0.99 : 1.01;
    }
  return tune_ok;
}

static void test_lost_at_the_end(void) {
  static const dc_path paths[] = {DC_PATH_ONE_SHOT, DC_PATH_TWO_SHOT};
  edge_synth e;
  synth_init(&e.m, 17);
  e.m.noise = 0.0;
  synth_line(&e.m, DC_PATH_ONE_SHOT, 8000, 0.05);
  synth_line(&e.m, DC_PATH_TWO_SHOT, 8000, 0.05);
  tune_xover_search s = default_search(&e.m, paths, 2);
  s.measure = edge_measure;
  s.ctx = &e;
  e.max_bytes = s.max_bytes;
  e.at_max = 0;
  tune_xover xo[DC_MAX_SEGMENTS];
  dc_segment seg[DC_MAX_SEGMENTS];
  int nxo = -1, nseg = -1;
  tune_result r = tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg);
  tap_ok(e.at_max > 16, "two_shot measured past its first trials at max_bytes (%ld)", e.at_max);
  tap_ok(r == tune_ok && nseg == 1 && nxo == 0 && seg[0].path == DC_PATH_ONE_SHOT,
         "a path that wins only the last grid size's median, and loses there once measured more, "
         "gets no segment above the sizes measured (%d segments, last %s from %llu)",
         nseg, nseg > 0 ? dc_path_name(seg[nseg - 1].path) : "-",
         nseg > 1 ? (unsigned long long)seg[nseg - 2].max_bytes : 0ull);
}

static void test_three_paths(void) {
  static const dc_path paths[] = {DC_PATH_SINGLE_BLOCK, DC_PATH_ONE_SHOT, DC_PATH_TWO_SHOT};
  synth m;
  synth_init(&m, 21);
  synth_line(&m, DC_PATH_SINGLE_BLOCK, 2000, 0.5);
  synth_line(&m, DC_PATH_ONE_SHOT, 6000, 0.05);
  synth_line(&m, DC_PATH_TWO_SHOT, 15000, 0.01);
  tune_xover_search s = default_search(&m, paths, 3);
  tune_xover xo[DC_MAX_SEGMENTS];
  dc_segment seg[DC_MAX_SEGMENTS];
  int nxo = -1, nseg = -1;
  tune_result r = tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg);
  double t1 = line_cross(&m, DC_PATH_SINGLE_BLOCK, DC_PATH_ONE_SHOT);
  double t2 = line_cross(&m, DC_PATH_ONE_SHOT, DC_PATH_TWO_SHOT);
  tap_ok(r == tune_ok && nseg == 3 && segments_ok(seg, nseg, xo, nxo) &&
             seg[0].path == DC_PATH_SINGLE_BLOCK && seg[1].path == DC_PATH_ONE_SHOT &&
             seg[2].path == DC_PATH_TWO_SHOT,
         "3 paths: single_block, one_shot, two_shot in order");
  if (nseg == 3) {
    tap_diag("true %.0f / %.0f, found %llu / %llu", t1, t2, (unsigned long long)xo[0].bytes,
             (unsigned long long)xo[1].bytes);
    tap_ok(within(&s, xo[0].bytes, t1) && within(&s, xo[1].bytes, t2) && xo[0].decided &&
               xo[1].decided,
           "3 paths: both crossovers within resolution and decided");
  }
  tap_ok(ledger_ok(&m, s.max_trials) && m.calls * 3 < 3 * dense_sizes(&s),
         "3 paths: %d measure calls (%ld trials) vs a dense grid's %d", m.calls, m.trials,
         3 * dense_sizes(&s));
}

/* Five bands on the coarse grid, one (two_shot's) holding a single grid
 * size, and room for four segments: the narrowest run must be merged. */
static void test_merge(void) {
  static const dc_path paths[] = {DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED, DC_PATH_TWO_SHOT,
                                  DC_PATH_ONE_SHOT, DC_PATH_MULTI_BLOCK};
  synth m;
  synth_init(&m, 33);
  /* Lower envelope breakpoints at 6000, 90000, 150000 and 3000000 bytes. */
  synth_line(&m, DC_PATH_SINGLE_BLOCK, 1000, 1.0);
  synth_line(&m, DC_PATH_FUSED, 5200, 0.3);
  synth_line(&m, DC_PATH_TWO_SHOT, 23200, 0.1);
  synth_line(&m, DC_PATH_ONE_SHOT, 30700, 0.05);
  synth_line(&m, DC_PATH_MULTI_BLOCK, 150700, 0.01);
  tune_xover_search s = default_search(&m, paths, 5);
  s.max_segments = 4;
  tune_xover xo[DC_MAX_SEGMENTS];
  dc_segment seg[DC_MAX_SEGMENTS];
  int nxo = -1, nseg = -1;
  tune_result r = tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg);
  tap_ok(r == tune_ok && nseg == 4 && segments_ok(seg, nseg, xo, nxo) &&
             seg[0].path == DC_PATH_SINGLE_BLOCK && seg[1].path == DC_PATH_FUSED &&
             seg[2].path == DC_PATH_ONE_SHOT && seg[3].path == DC_PATH_MULTI_BLOCK,
         "5 bands: the one-grid-size band (two_shot) merged away, 4 segments left");
  if (nseg == 4) {
    double t[3] = {line_cross(&m, DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED),
                   line_cross(&m, DC_PATH_FUSED, DC_PATH_ONE_SHOT),
                   line_cross(&m, DC_PATH_ONE_SHOT, DC_PATH_MULTI_BLOCK)};
    int ok = 1;
    for (int i = 0; i < 3; i++) {
      tap_diag("merged: true %.0f found %llu decided %d", t[i], (unsigned long long)xo[i].bytes,
               xo[i].decided);
      ok &= within(&s, xo[i].bytes, t[i]) && xo[i].decided;
    }
    tap_ok(ok, "merged: crossovers bisected between the remaining neighbours' paths");
  }
}

/* fused's latency against multi_block's: fused wins by 0.4% except in
 * three bands multi_block wins -- by 0.4% at 8-16 KiB, 3% at 2-4 MiB and 20%
 * from 128 MiB to the end. Six runs on the coarse grid and room for four
 * segments; the two to merge are the cheap ones, never the costly band at
 * the end of the range. */
static double bands(dc_path p, uint64_t bytes) {
  if (p != DC_PATH_FUSED) return 1.0;
  if (bytes >= (8u << 10) && bytes <= (16u << 10)) return 1.004;
  if (bytes >= (2u << 20) && bytes <= (4u << 20)) return 1.03;
  if (bytes >= (128u << 20)) return 1.25;
  return 0.996;
}

static void test_merge_cost(void) {
  static const dc_path paths[] = {DC_PATH_FUSED, DC_PATH_MULTI_BLOCK};
  synth m;
  synth_init(&m, 55);
  m.noise = 0.0005;
  m.shape = bands;
  synth_line(&m, DC_PATH_FUSED, 5000, 0.01);
  synth_line(&m, DC_PATH_MULTI_BLOCK, 5000, 0.01);
  tune_xover_search s = default_search(&m, paths, 2);
  s.max_bytes = 256u << 20;
  s.max_segments = 4;
  tune_xover xo[DC_MAX_SEGMENTS];
  dc_segment seg[DC_MAX_SEGMENTS];
  int nxo = -1, nseg = -1;
  tune_result r = tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg);
  tap_ok(r == tune_ok && nseg == 4 && segments_ok(seg, nseg, xo, nxo) && seg[0].path == DC_PATH_FUSED &&
             seg[1].path == DC_PATH_MULTI_BLOCK && seg[2].path == DC_PATH_FUSED &&
             seg[3].path == DC_PATH_MULTI_BLOCK,
         "6 runs: the 0.4%% band merged away, the 3%% band and the 20%% band at the end kept (%d segments)",
         nseg);
  tap_ok(nxo == 3 && xo[0].bytes >= (1u << 20) && xo[0].bytes < (2u << 20),
         "the first change lies between 1 and 2 MiB, where the 3%% band starts (%llu)",
         nxo == 3 ? (unsigned long long)xo[0].bytes : 0ull);
  tap_ok(nxo == 3 && xo[2].bytes >= (64u << 20) && xo[2].bytes < (128u << 20),
         "the last change lies between 64 and 128 MiB (%llu)", nxo == 3 ? (unsigned long long)xo[2].bytes : 0ull);
}

static void test_near_tie(void) {
  static const dc_path paths[] = {DC_PATH_ONE_SHOT, DC_PATH_TWO_SHOT};
  synth m;
  synth_init(&m, 44);
  synth_line(&m, DC_PATH_ONE_SHOT, 8000, 0.05);
  synth_line(&m, DC_PATH_TWO_SHOT, 8000, 0.05);
  m.tilt[DC_PATH_TWO_SHOT] = 0.0001; /* 0.1% apart over the whole range */
  tune_xover_search s = default_search(&m, paths, 2);
  s.max_trials = 128;
  tune_xover xo[DC_MAX_SEGMENTS];
  dc_segment seg[DC_MAX_SEGMENTS];
  int nxo = -1, nseg = -1;
  tune_result r = tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg);
  tap_ok(r == tune_ok && segments_ok(seg, nseg, xo, nxo) && nxo >= 1,
         "near tie: terminates with %d well-formed segments", nseg);
  int undecided = 1;
  for (int i = 0; i < nxo; i++)
    undecided &= xo[i].decided == 0 && xo[i].ci_lo_ns <= 0 && 0 <= xo[i].ci_hi_ns;
  tap_ok(undecided, "near tie: every crossover reported decided = 0 with a CI straddling zero");
  tap_ok(ledger_ok(&m, s.max_trials), "near tie: %d calls, %ld trials, none beyond max_trials",
         m.calls, m.trials);
}

static void test_bad_search(void) {
  static const dc_path paths[] = {DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED};
  static const dc_path dup[] = {DC_PATH_FUSED, DC_PATH_FUSED};
  synth m;
  synth_init(&m, 1);
  tune_xover xo[DC_MAX_SEGMENTS];
  dc_segment seg[DC_MAX_SEGMENTS];
  int nxo, nseg, ok = 1;
  tune_xover_search s = default_search(&m, paths, 2);
  s.grid_factor = 1.0;
  ok &= tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg) == tune_err_arg;
  s = default_search(&m, paths, 2);
  s.max_trials = 8;
  ok &= tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg) == tune_err_arg;
  s = default_search(&m, dup, 2);
  ok &= tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg) == tune_err_arg;
  s = default_search(&m, paths, 2);
  ok &= tune_xover_find(&s, xo, 1, &nxo, seg, &nseg) == tune_err_arg;
  s.max_segments = DC_MAX_SEGMENTS + 1;
  ok &= tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg) == tune_err_arg;
  s.max_segments = -1;
  ok &= tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg) == tune_err_arg;
  s.max_segments = 0;
  s.min_bytes = 100, s.max_bytes = 110;
  ok &= tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg) == tune_err_arg;
  tap_ok(ok && m.calls == 0, "malformed searches rejected before any measurement");

  synth_line(&m, DC_PATH_SINGLE_BLOCK, 3000, 0.4);
  synth_line(&m, DC_PATH_FUSED, 11000, 0.02);
  s = default_search(&m, paths, 2);
  s.measure = failing_measure;
  tap_ok(
      tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg) == tune_err_cuda && m.calls == 7,
      "a failing measurement ends the search with its error");
}

/* prune_ratio: a single block that falls far behind early is not measured
 * at the large sizes, and the crossover is found all the same. */
static void test_prune(void) {
  static const dc_path paths[] = {DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED};
  synth m;
  synth_init(&m, 77);
  synth_line(&m, DC_PATH_SINGLE_BLOCK, 3000, 0.4);
  synth_line(&m, DC_PATH_FUSED, 8000, 0.02);
  tune_xover_search s = default_search(&m, paths, 2);
  s.prune_ratio = 4.0;
  tune_xover xo[DC_MAX_SEGMENTS];
  dc_segment seg[DC_MAX_SEGMENTS];
  int nxo = 0, nseg = 0;
  tune_result r = tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg);
  int sb_sizes = 0, sb_largest = 0;
  for (int i = 0; i < m.nledger; i++)
    if (m.ledger[i].path == DC_PATH_SINGLE_BLOCK) {
      sb_sizes++;
      /* over 4x behind at 128 and 256 KiB, two grid sizes in a row */
      if (m.ledger[i].bytes >= (512u << 10)) sb_largest = 1;
    }
  double truth = line_cross(&m, DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED);
  tap_ok(r == tune_ok && nseg == 2 && seg[0].path == DC_PATH_SINGLE_BLOCK && within(&s, xo[0].bytes, truth),
         "pruned search finds the crossover (%llu vs %.0f)", (unsigned long long)xo[0].bytes, truth);
  tap_ok(!sb_largest, "single block, 4x behind at two grid sizes in a row (128, 256 KiB), not "
         "measured at the next (512 KiB) or above");
  /* Without pruning every grid size is measured for both paths. */
  synth_init(&m, 77);
  synth_line(&m, DC_PATH_SINGLE_BLOCK, 3000, 0.4);
  synth_line(&m, DC_PATH_FUSED, 8000, 0.02);
  s.prune_ratio = 0;
  r = tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg);
  int all = 0, unpruned = 0;
  for (int i = 0; i < m.nledger; i++) {
    all += m.ledger[i].path == DC_PATH_SINGLE_BLOCK && m.ledger[i].bytes == s.max_bytes;
    unpruned += m.ledger[i].path == DC_PATH_SINGLE_BLOCK;
  }
  tap_ok(r == tune_ok && all == 1, "without prune_ratio the single block is measured at the largest size");
  tap_ok(sb_sizes + 8 <= unpruned, "pruning saved the single block %d of %d sizes", unpruned - sb_sizes, unpruned);
}

/* prune_ratio does not drop a path that is far behind at small sizes but
 * catching up (a copy engine: ten times the start-up cost, the best rate):
 * it still wins the large sizes. */
static void test_prune_keeps_catching_up(void) {
  static const dc_path paths[] = {DC_PATH_PUSH, DC_PATH_DIRECT, DC_PATH_COPY_ENGINE};
  synth m;
  synth_init(&m, 78);
  synth_line(&m, DC_PATH_PUSH, 1000, 0.2);
  synth_line(&m, DC_PATH_DIRECT, 3000, 0.002);
  synth_line(&m, DC_PATH_COPY_ENGINE, 12000, 0.0012);
  tune_xover_search s = default_search(&m, paths, 3);
  s.prune_ratio = 4.0;
  tune_xover xo[DC_MAX_SEGMENTS];
  dc_segment seg[DC_MAX_SEGMENTS];
  int nxo = 0, nseg = 0;
  tune_result r = tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg);
  double truth = line_cross(&m, DC_PATH_DIRECT, DC_PATH_COPY_ENGINE);
  tap_ok(r == tune_ok && nseg == 3 && seg[1].path == DC_PATH_DIRECT &&
             seg[2].path == DC_PATH_COPY_ENGINE && within(&s, xo[1].bytes, truth),
         "a path 10x behind at 1K but catching up is kept and wins from %llu (true %.0f)",
         nxo > 1 ? (unsigned long long)xo[1].bytes : 0ull, truth);
  int push_largest = 0;
  for (int i = 0; i < m.nledger; i++)
    push_largest |= m.ledger[i].path == DC_PATH_PUSH && m.ledger[i].bytes >= (1u << 20);
  tap_ok(!push_largest, "push, falling behind, is still pruned below 1 MiB");
}

/* The bounds of a well-formed search, as crossover.h states them: each
 * value just inside is searched, each just outside refused before any
 * measurement. Single block is always faster here, so a search is the
 * three sizes of a short coarse grid. */
static void test_search_bounds(void) {
  static const dc_path two[] = {DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED};
  static const dc_path with_auto[] = {DC_PATH_SINGLE_BLOCK, DC_PATH_AUTO};
  static const dc_path past_last[] = {DC_PATH_SINGLE_BLOCK, DC_PATH_COUNT};
  static const struct {
    const char *what;
    int field, ok;
    double v;
  } cases[] = {
      {"1 path", 0, 1, 1},         {"no path", 0, 0, 0},         {"DC_PATH_AUTO", 1, 0, 0},
      {"DC_PATH_COUNT", 1, 0, 1},  {"no measure", 2, 0, 0},       {"granule 1", 3, 1, 1},
      {"granule 0", 3, 0, 0},      {"resolution 0", 4, 0, 0},     {"trials 2", 5, 1, 2},
      {"trials 1", 5, 0, 1},       {"max_trials = trials", 6, 1, 16}, {"confidence 0", 7, 0, 0},
      {"confidence 1", 7, 0, 1},   {"max_segments 8", 8, 1, DC_MAX_SEGMENTS},
      {"tolerance 1", 9, 0, 1},    {"tolerance 0.5", 9, 0, 0.5},  {"tolerance inf", 9, 0, INFINITY},
      {"max_xo = max_segments - 1", 10, 1, 3}, {"max_xo = max_segments - 2", 10, 0, 2},
      {"incumbent of 1 segment", 11, 1, 1},  {"incumbent of 0 segments", 11, 0, 0},
      {"incumbent of 8 segments", 11, 1, DC_MAX_SEGMENTS}, {"incumbent of 9 segments", 11, 0, DC_MAX_SEGMENTS + 1},
  };
  int bad = 0;
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    synth m;
    synth_init(&m, 3);
    synth_line(&m, DC_PATH_SINGLE_BLOCK, 2000, 0.01);
    synth_line(&m, DC_PATH_FUSED, 8000, 0.02);
    tune_xover_search s = default_search(&m, two, 2);
    s.min_bytes = 1024, s.max_bytes = 4096;
    int max_xo = DC_MAX_SEGMENTS - 1, v = (int)cases[c].v;
    dc_threshold_row inc = {.nseg = v};
    for (int i = 0; i < DC_MAX_SEGMENTS; i++)
      inc.seg[i] = (dc_segment){i + 1 < DC_MAX_SEGMENTS ? 2048ull << i : DC_BYTES_MAX, two[i % 2]};
    switch (cases[c].field) {
      case 0: s.npaths = v; break;
      case 1: s.paths = v ? past_last : with_auto; break;
      case 2: s.measure = NULL; break;
      case 3: s.granule = (uint64_t)v; break;
      case 4: s.resolution = cases[c].v; break;
      case 5: s.trials = v; break;
      case 6: s.max_trials = v; break;
      case 7: s.confidence = cases[c].v; break;
      case 8: s.max_segments = v; break;
      case 9: s.tolerance = cases[c].v; break;
      case 11: s.incumbent = &inc; break;
      default: s.max_segments = 4, max_xo = v; break;
    }
    tune_xover xo[DC_MAX_SEGMENTS];
    dc_segment seg[DC_MAX_SEGMENTS];
    int nxo = -1, nseg = -1;
    tune_result r = tune_xover_find(&s, xo, max_xo, &nxo, seg, &nseg);
    int good = cases[c].ok ? r == tune_ok && nseg == 1 && seg[0].path == DC_PATH_SINGLE_BLOCK
                           : r == tune_err_arg && m.calls == 0;
    if (!good) tap_diag("%s: result %d, %d calls", cases[c].what, (int)r, m.calls);
    bad += !good;
  }
  tap_ok(bad == 0, "search bounds: each value just inside searched, just outside refused (%d wrong)",
         bad);
}

/* measure_set on a machine whose k-th trial of a path at a size has one
 * value whichever call measures it: the search must come out the same
 * through measure_set as through measure alone, having measured the very
 * same trials, and measure_set must only be given paths holding alike
 * samples -- of two paths, every trial (the grid's and each comparison's)
 * is measured for both together. */
typedef struct {
  synth m; /* first: the context of the measure functions */
  int set_calls, single_calls, unalike;
} set_synth;

static tune_result trial_measure(void *ctx, dc_path path, uint64_t bytes, int ntrials,
                                 double *out) {
  synth *m = ctx;
  struct ledger_entry *e = ledger_of(m, path, bytes, ntrials);
  if (e == NULL) return tune_err_internal;
  double mean = synth_latency(m, path, bytes);
  for (int t = 0; t < ntrials; t++) {
    tune_rng r;
    tune_rng_seed(&r, (uint64_t)path * 0x9e3779b97f4a7c15ull ^ bytes * 0xbf58476d1ce4e5b9ull ^
                          (uint64_t)(e->trials + t));
    out[t] = mean * (1.0 + m->noise * tune_rng_normal(&r));
  }
  e->trials += ntrials;
  return tune_ok;
}

static tune_result trial_measure_one(void *ctx, dc_path path, uint64_t bytes, int ntrials,
                                     double *out) {
  ((set_synth *)ctx)->single_calls++;
  return trial_measure(ctx, path, bytes, ntrials, out);
}

static tune_result trial_measure_set(void *ctx, const dc_path *paths, int npaths, uint64_t bytes,
                                     int ntrials, double *const *out) {
  set_synth *x = ctx;
  x->set_calls++;
  for (int i = 0; i < npaths; i++) {
    struct ledger_entry *e = ledger_find(&x->m, paths[i], bytes),
                        *e0 = ledger_find(&x->m, paths[0], bytes);
    if (e == NULL || e0 == NULL) return tune_err_internal;
    x->unalike |= e->trials != e0->trials;
  }
  for (int i = 0; i < npaths; i++)
    TUNE_CHECK(trial_measure(&x->m, paths[i], bytes, ntrials, out[i]));
  return tune_ok;
}

/* Every (path, size) of a measured the same number of trials in b. */
static int same_ledger(const synth *a, const synth *b) {
  int same = a->nledger == b->nledger;
  for (int i = 0; same && i < a->nledger; i++) {
    int j = 0;
    while (j < b->nledger &&
           !(b->ledger[j].path == a->ledger[i].path && b->ledger[j].bytes == a->ledger[i].bytes))
      j++;
    same = j < b->nledger && b->ledger[j].trials == a->ledger[i].trials;
  }
  return same;
}

static void test_measure_set(void) {
  static const dc_path paths[] = {DC_PATH_SINGLE_BLOCK, DC_PATH_ONE_SHOT, DC_PATH_TWO_SHOT};
  for (int np = 2; np <= 3; np++) {
    static set_synth x[2];
    tune_xover xo[2][DC_MAX_SEGMENTS];
    dc_segment seg[2][DC_MAX_SEGMENTS];
    int nxo[2] = {-1, -1}, nseg[2] = {-1, -1};
    tune_result r[2];
    for (int k = 0; k < 2; k++) {
      memset(&x[k], 0, sizeof(x[k]));
      synth_init(&x[k].m, 41);
      synth_line(&x[k].m, DC_PATH_SINGLE_BLOCK, 2000, 0.5);
      synth_line(&x[k].m, DC_PATH_ONE_SHOT, 6000, 0.05);
      synth_line(&x[k].m, DC_PATH_TWO_SHOT, 15000, 0.01);
      tune_xover_search s = default_search(&x[k].m, paths, np);
      s.ctx = &x[k];
      s.measure = k ? trial_measure_one : trial_measure;
      s.measure_set = k ? trial_measure_set : NULL;
      memset(xo[k], 0, sizeof(xo[k]));
      memset(seg[k], 0, sizeof(seg[k]));
      r[k] = tune_xover_find(&s, xo[k], DC_MAX_SEGMENTS, &nxo[k], seg[k], &nseg[k]);
    }
    tap_diag("%d paths: %d measure_set and %d measure calls, %d crossovers", np, x[1].set_calls,
             x[1].single_calls, nxo[1]);
    tap_ok(r[0] == tune_ok && r[1] == tune_ok && nseg[0] == np && nxo[0] == nxo[1] &&
               nseg[0] == nseg[1] && memcmp(xo[0], xo[1], sizeof(xo[0])) == 0 &&
               memcmp(seg[0], seg[1], sizeof(seg[0])) == 0,
           "%d paths: measure_set gives the crossovers measure alone gives", np);
    tap_ok(same_ledger(&x[0].m, &x[1].m) && ledger_ok(&x[1].m, 256) && x[1].set_calls > 0 &&
               !x[1].unalike && (np > 2 || x[1].single_calls == 0),
           "%d paths: the same trials measured, measure_set given paths holding alike samples%s",
           np, np > 2 ? "" : ", every trial of both paths together");
  }
}

/* The one grid (tune_xover_grid): within [min, max], every size a multiple
 * of the granule, increasing, the last one max rounded down -- also for a
 * granule that is no power of two (reduce_scatter on 6 ranks). */
static void test_grid(void) {
  static uint64_t g[TUNE_XOVER_MAX_GRID];
  static const uint64_t granules[] = {16, 96, 48, 7};
  for (size_t k = 0; k < sizeof(granules) / sizeof(granules[0]); k++) {
    uint64_t q = granules[k], lo = 1024, hi = 1u << 20;
    int n = 0, ok = tune_xover_grid(lo, hi, 2.0, q, g, &n) == tune_ok && n > 5;
    for (int i = 0; ok && i < n; i++)
      ok = g[i] % q == 0 && g[i] >= lo && g[i] <= hi && (i == 0 || g[i] > g[i - 1]);
    tap_ok(ok && g[n - 1] == hi / q * q && g[0] == (lo + q - 1) / q * q,
           "grid of granule %llu: %d sizes in [1K, 1M], multiples, increasing, ends at max rounded down",
           (unsigned long long)q, n);
  }
  int n = 0;
  tap_ok(tune_xover_grid(1000, 1000, 2.0, 96, g, &n) == tune_err_arg, "grid: no multiple in range refused");
  tap_ok(tune_xover_grid(1024, 4096, 1.0, 16, g, &n) == tune_err_arg, "grid: factor 1 refused");
  tap_ok(tune_xover_grid(1024, 1024, 1.0, 16, g, &n) == tune_err_arg,
         "grid: factor 1 refused also where the grid would be one size");
  tap_ok(tune_xover_grid(1025, 4096, 2.0, 16, g, &n) == tune_ok && g[0] == 1040 && g[n - 1] == 4096,
         "grid: a min_bytes one past a multiple rounds up to the next one (1040)");
  tap_ok(tune_xover_grid(1000, 1100, 2.0, 96, g, &n) == tune_ok && n == 1 && g[0] == 1056,
         "grid: a single multiple in range is a grid of one size");
  int ok = tune_xover_grid(1, 100, 3.0, 1, g, &n) == tune_ok && n > 3 && g[0] == 1 && g[n - 1] == 100;
  for (int i = 1; ok && i < n; i++) ok = g[i] > g[i - 1];
  tap_ok(ok, "grid: granule 1 from 1 byte, increasing to max_bytes");
  /* A factor so small that many steps round onto one granule: each size once. */
  ok = tune_xover_grid(1024, 8192, 1.01, 64, g, &n) == tune_ok && n > 20 && g[n - 1] == 8192;
  for (int i = 1; ok && i < n; i++) ok = g[i] > g[i - 1] && g[i] % 64 == 0;
  tap_ok(ok, "grid: factor 1.01 on granule 64, every size once (%d sizes)", n);
  /* 1.0001 steps by under one byte up to 4096: every byte count is a size. */
  int full = tune_xover_grid(1, TUNE_XOVER_MAX_GRID, 1.0001, 1, g, &n) == tune_ok &&
             n == TUNE_XOVER_MAX_GRID && g[n - 1] == TUNE_XOVER_MAX_GRID;
  tap_ok(full && tune_xover_grid(1, TUNE_XOVER_MAX_GRID + 1, 1.0001, 1, g, &n) == tune_err_arg,
         "grid: %d sizes fit, one more is refused", TUNE_XOVER_MAX_GRID);
}

/* A noise-free change between two paths whose every comparison is crisp:
 * below's line 10000 + bytes / 20 ns; above 5% slower than it under lo and
 * 5% faster over hi, the very same time on [lo, hi] (a tie at any number
 * of trials) and at the single size point (0: none). above is the earlier
 * candidate, so a tie on a grid size is above's on the coarse grid. */
typedef struct {
  synth m; /* first: the ledger */
  uint64_t lo, hi, point;
} step_synth;

static const dc_path step_paths[] = {DC_PATH_TWO_SHOT, DC_PATH_ONE_SHOT}; /* above, below */

static tune_result step_measure(void *ctx, dc_path path, uint64_t bytes, int ntrials,
                                double *out) {
  step_synth *x = ctx;
  TUNE_CHECK(synth_measure(&x->m, path, bytes, ntrials, out));
  double t = 10000 + (double)bytes / 20;
  if (path == step_paths[0] && bytes != x->point)
    t *= bytes < x->lo ? 1.05 : bytes > x->hi ? 0.95 : 1.0;
  for (int i = 0; i < ntrials; i++) out[i] = t;
  return tune_ok;
}

/* Search the step (lo, hi, point) into *xo, on the default grid or on
 * grid's min_bytes, max_bytes, grid_factor and granule; 1 when it gave two
 * segments, below's then above's, well formed. */
static int step_search_on(step_synth *x, uint64_t lo, uint64_t hi, uint64_t point,
                          const tune_xover_search *grid, tune_xover *xo) {
  synth_init(&x->m, 61);
  x->lo = lo, x->hi = hi, x->point = point;
  tune_xover_search s = default_search(&x->m, step_paths, 2);
  if (grid) {
    s.min_bytes = grid->min_bytes, s.max_bytes = grid->max_bytes;
    s.grid_factor = grid->grid_factor, s.granule = grid->granule;
  }
  s.measure = step_measure;
  s.ctx = x;
  tune_xover all[DC_MAX_SEGMENTS];
  dc_segment seg[DC_MAX_SEGMENTS];
  int nxo = -1, nseg = -1;
  tune_result r = tune_xover_find(&s, all, DC_MAX_SEGMENTS, &nxo, seg, &nseg);
  *xo = all[0];
  tap_diag("step [%llu, %llu] point %llu: %s at %llu (%llu..%llu) CI [%.1f, %.1f]",
           (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)point,
           nxo == 1 && xo->decided ? "decided" : "undecided", (unsigned long long)xo->bytes,
           (unsigned long long)xo->lo_bytes, (unsigned long long)xo->hi_bytes, xo->ci_lo_ns,
           xo->ci_hi_ns);
  return r == tune_ok && nseg == 2 && segments_ok(seg, nseg, all, nxo) &&
         seg[0].path == step_paths[1] && ledger_ok(&x->m, s.max_trials);
}

static int step_search(step_synth *x, uint64_t lo, uint64_t hi, uint64_t point, tune_xover *xo) {
  return step_search_on(x, lo, hi, point, NULL, xo);
}

/* Every size measured off the coarse grid lies strictly between the grid
 * sizes lo and hi. */
static int probes_within(const step_synth *x, uint64_t lo, uint64_t hi) {
  for (int i = 0; i < x->m.nledger; i++) {
    uint64_t b = x->m.ledger[i].bytes;
    if ((b & (b - 1)) != 0 && !(b > lo && b < hi)) return 0;
  }
  return 1;
}

/* Ties during bisection (crossover.h): a size tied at max_trials has the
 * sizes half the resolution either side compared; below under it and
 * above over it decide the change, below on both sides moves it up, and a
 * second tie ends it undecided at the tie, lo_bytes still a size below won. */
static void test_ties(void) {
  static step_synth x;
  tune_xover xo;
  double half = sqrt(1.0625);
  int ok = step_search(&x, 16384, 16384, 0, &xo);
  tap_ok(ok && xo.decided && xo.lo_bytes < 16384 && xo.lo_bytes >= 16384 / half - 16 &&
             xo.hi_bytes > 16384 && xo.hi_bytes <= 16384 * half + 16,
         "a tie on a grid size between below's win under it and above's over it: decided, "
         "bracketing it within the resolution");
  for (int k = 0; k < 2; k++) {
    uint64_t lo = k ? 11400 : 10000, hi = 15000;
    ok = step_search(&x, lo, hi, 0, &xo);
    tap_ok(ok && !xo.decided && xo.bytes == xo.hi_bytes && xo.hi_bytes >= lo && xo.hi_bytes <= hi &&
               xo.lo_bytes < lo && xo.ci_lo_ns <= 0 && xo.ci_hi_ns >= 0,
           "a tie over [%llu, %llu]: undecided at a size inside it, lo_bytes where below won",
           (unsigned long long)lo, (unsigned long long)hi);
  }
  ok = step_search(&x, 14000, 14000, 11584, &xo);
  tap_ok(ok && xo.decided && within(&(tune_xover_search){.resolution = 0.0625, .granule = 16},
                                    xo.bytes, 14000) &&
             probes_within(&x, 8192, 16384),
         "a tie at a bisection midpoint with below winning either side: the change moves up to "
         "the true one, measured only inside its grid bracket");
  ok = step_search(&x, 24000, 24000, 16384, &xo);
  tap_ok(ok && xo.decided && within(&(tune_xover_search){.resolution = 0.0625, .granule = 16},
                                    xo.bytes, 24000),
         "a tie at the grid size above's run starts at, below winning either side: the change "
         "moves up within above's run to the true one");
}

/* A tie at the last grid size, max_bytes, where above won the coarse grid,
 * with below winning half the resolution under it: the size half the
 * resolution over it lies past max_bytes and is not measured, and above,
 * left no size it wins, gets no segment. */
static void test_tie_at_the_end(void) {
  static step_synth x;
  synth_init(&x.m, 61);
  x.lo = x.hi = 65536, x.point = 0;
  tune_xover_search s = default_search(&x.m, step_paths, 2);
  s.max_bytes = 65536;
  s.measure = step_measure;
  s.ctx = &x;
  tune_xover xo[DC_MAX_SEGMENTS];
  dc_segment seg[DC_MAX_SEGMENTS];
  int nxo = -1, nseg = -1;
  tune_result r = tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg);
  uint64_t top = 0;
  for (int i = 0; i < x.m.nledger; i++)
    if (x.m.ledger[i].bytes > top) top = x.m.ledger[i].bytes;
  tap_ok(r == tune_ok && nseg == 1 && seg[0].path == step_paths[1] && top == s.max_bytes,
         "a tie at max_bytes, below winning under it: nothing measured past it (largest %llu), "
         "one segment (%d)",
         (unsigned long long)top, nseg);
}

/* Where bisection stops (crossover.h): at hi <= lo * (1 + resolution), and
 * when no granule lies between lo and hi, however far apart. */
static void test_bisection_stops(void) {
  static step_synth x;
  tune_xover xo;
  tune_xover_search grid = {.min_bytes = 1024, .max_bytes = 1088, .grid_factor = 1.0625, .granule = 16};
  int ok = step_search_on(&x, 1050, 1050, 0, &grid, &xo);
  tap_ok(ok && xo.decided && xo.lo_bytes == 1024 && xo.hi_bytes == 1088 && x.m.nledger == 4,
         "grid sizes 1024 and 1088 = 1024 * (1 + resolution): decided between them, nothing "
         "measured in between (%d sizes measured)", x.m.nledger);
  grid = (tune_xover_search){.min_bytes = 1024, .max_bytes = 64u << 10, .grid_factor = 2, .granule = 1024};
  ok = step_search_on(&x, 1500, 1500, 0, &grid, &xo);
  tap_ok(ok && xo.decided && xo.lo_bytes == 1024 && xo.hi_bytes == 2048 && xo.bytes == 1024,
         "granule 1024: a change between 1024 and 2048 is decided there, no granule between them");
}

/* Merge costs on three paths of one line, by factor: a band (8-16 KiB)
 * single_block wins by a hair over fused, which wins the small sizes by a
 * fifth; one_shot wins from 32 KiB by a third, except that multi_block
 * wins the one grid size 1 MiB by a fifth and the three 64-256 KiB by a
 * hair, and trails by 75% below 32 KiB (merge_case 1); merge_case 2: multi_block a hair ahead at 1-2 KiB,
 * 20% behind elsewhere. */
static int merge_case;

static double merge_shape(dc_path p, uint64_t bytes) {
  if (merge_case == 2) return p == DC_PATH_MULTI_BLOCK ? (bytes <= 2048 ? 0.996 : 1.25) : 1.0;
  int small = bytes <= 4096, band = bytes >= 8192 && bytes <= 16384, large = bytes >= 32768;
  int hair = bytes >= (64u << 10) && bytes <= (256u << 10), peak = bytes == (1u << 20);
  switch (p) {
    case DC_PATH_FUSED: return small ? 0.8 : band ? 1.004 : 1.5;
    case DC_PATH_SINGLE_BLOCK: return small ? 1.0 : band ? 1.0 : 1.5;
    case DC_PATH_ONE_SHOT: return large ? 1.0 : 1.5;
    default: return peak ? 0.8 : hair ? 0.996 : large ? 1.25 : 1.75;
  }
}

static int merge_search(const dc_path *paths, int np, int max_segments, dc_segment *seg, int *nseg,
                        tune_xover *xo) {
  synth m;
  synth_init(&m, 57);
  m.noise = 0.0005;
  m.shape = merge_shape;
  for (int p = 0; p < DC_PATH_COUNT; p++) synth_line(&m, (dc_path)p, 5000, 0.01);
  tune_xover_search s = default_search(&m, paths, np);
  s.max_segments = max_segments;
  int nxo = -1;
  return tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, nseg) == tune_ok &&
         segments_ok(seg, *nseg, xo, nxo);
}

/* The run cheapest to lose goes (crossover.h): its cost summed over all
 * its grid sizes, against either neighbour; a run between two runs of one
 * path joins them. */
static void test_merge_runs(void) {
  static const dc_path three[] = {DC_PATH_FUSED, DC_PATH_SINGLE_BLOCK, DC_PATH_ONE_SHOT};
  static const dc_path two[] = {DC_PATH_ONE_SHOT, DC_PATH_MULTI_BLOCK};
  static const dc_path fused_mb[] = {DC_PATH_FUSED, DC_PATH_MULTI_BLOCK};
  dc_segment seg[DC_MAX_SEGMENTS];
  tune_xover xo[DC_MAX_SEGMENTS];
  int nseg = -1;
  merge_case = 1;
  int ok = merge_search(three, 3, 2, seg, &nseg, xo);
  tap_ok(ok && nseg == 2 && seg[0].path == DC_PATH_FUSED && seg[1].path == DC_PATH_ONE_SHOT,
         "single_block's hair-wide band goes into fused before it, not fused's or one_shot's "
         "runs into it (%d segments)", nseg);
  ok = merge_search(two, 2, 3, seg, &nseg, xo);
  tap_ok(ok && nseg == 3 && seg[1].path == DC_PATH_MULTI_BLOCK && xo[0].bytes >= (512u << 10) &&
             xo[0].bytes < (1u << 20) &&
             xo[1].bytes >= (1u << 20),
         "a one-grid-size band won by a fifth is kept, three sizes won by a hair go (%d segments)",
         nseg);
  ok = merge_search(two, 2, 2, seg, &nseg, xo);
  tap_ok(ok && nseg == 1 && seg[0].path == DC_PATH_ONE_SHOT,
         "room for two segments: the cheaper band goes, then the band between one_shot's two "
         "runs, which join (%d segments)", nseg);
  merge_case = 2;
  ok = merge_search(fused_mb, 2, 1, seg, &nseg, xo);
  tap_ok(ok && nseg == 1 && seg[0].path == DC_PATH_FUSED,
         "room for one segment: the first run, won by a hair, goes (%d segments)", nseg);
}

/* single_block wins the one grid size 8 KiB by 1% over fused before it and
 * one_shot after it, which tie from 4 to 16 KiB; each of those two wins
 * its other sizes by a fifth. */
static double tie_shape(dc_path p, uint64_t b) {
  int between = b > 4096 && b < 16384;
  if (p == DC_PATH_SINGLE_BLOCK) return b == 8192 ? 0.99 : 1.5;
  if (p == DC_PATH_FUSED) return b <= 4096 ? 0.8 : between ? 1.0 : 1.5;
  return b >= 16384 ? 0.8 : between ? 1.0 : 1.5;
}

/* A run whose two neighbours cost it the same goes to the next
 * (crossover.h), noise-free (tie_shape): single_block's 8 KiB goes to
 * one_shot, so the change from fused is bisected from 4 KiB up and ends
 * undecided at the tie at 8 KiB (into fused, it would end at 11584). */
static void test_merge_tie(void) {
  static const dc_path paths[] = {DC_PATH_FUSED, DC_PATH_SINGLE_BLOCK, DC_PATH_ONE_SHOT};
  synth m;
  synth_init(&m, 59);
  m.noise = 0.0;
  m.shape = tie_shape;
  for (int p = 0; p < DC_PATH_COUNT; p++) synth_line(&m, (dc_path)p, 5000, 0.01);
  tune_xover_search s = default_search(&m, paths, 3);
  s.max_segments = 2;
  tune_xover xo[DC_MAX_SEGMENTS];
  dc_segment seg[DC_MAX_SEGMENTS];
  int nxo = -1, nseg = -1;
  tune_result r = tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg);
  tap_ok(r == tune_ok && nseg == 2 && segments_ok(seg, nseg, xo, nxo) &&
             seg[0].path == DC_PATH_FUSED && seg[1].path == DC_PATH_ONE_SHOT && !xo[0].decided &&
             xo[0].bytes == 8192 && xo[0].lo_bytes == 4096,
         "a run whose neighbours cost it the same goes to the next: fused to one_shot at the tie "
         "at 8192 (result %d, %d segments, at %llu)",
         (int)r, nseg, nxo == 1 ? (unsigned long long)xo[0].bytes : 0ull);
}

/* A grid size below won by its median but above by its CI: two_shot's
 * first 16 trials at 1024 bytes are 0.99x and 1.02x one_shot in turn (a
 * median 0.5% behind, a CI across zero), every later one 0.9x; the two tie
 * exactly at 1040, the only other grid size. The tie at 1040 has 1024
 * compared, where above wins by its CI, closing the bracket on 1024 itself
 * from the wrong side. */
static tune_result flip_measure(void *ctx, dc_path path, uint64_t bytes, int ntrials, double *out) {
  synth *m = ctx;
  struct ledger_entry *e = ledger_of(m, path, bytes, ntrials);
  if (e == NULL) return tune_err_internal;
  double t = 10000 + (double)bytes / 20;
  for (int i = 0; i < ntrials; i++) {
    long k = e->trials + i;
    double f = k >= 16 ? 0.9 : k % 2 ? 1.02 : 0.99;
    out[i] = path == step_paths[0] && bytes == 1024 ? f * t : t;
  }
  e->trials += ntrials;
  return tune_ok;
}

static void test_bracket_closed_on_lo(void) {
  synth m;
  synth_init(&m, 62);
  tune_xover_search s = default_search(&m, step_paths, 2);
  s.measure = flip_measure;
  s.max_bytes = 1040;
  s.grid_factor = 1040.0 / 1024.0;
  tune_xover xo[DC_MAX_SEGMENTS];
  dc_segment seg[DC_MAX_SEGMENTS];
  int nxo = -1, nseg = -1;
  tune_result r = tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg);
  tap_ok(r == tune_ok && nseg == 2 && segments_ok(seg, nseg, xo, nxo) &&
             seg[0].path == step_paths[1] && !xo[0].decided && xo[0].bytes == 1024 &&
             xo[0].lo_bytes == 1024 && xo[0].hi_bytes == 1024,
         "above's CI win at the grid size below won by its median closes the bracket there: "
         "undecided at 1024 (%s, %llu..%llu)",
         nxo == 1 && xo[0].decided ? "decided" : "undecided",
         nxo == 1 ? (unsigned long long)xo[0].lo_bytes : 0ull,
         nxo == 1 ? (unsigned long long)xo[0].hi_bytes : 0ull);
}

/* Scenes for the stability rules (tolerance 1.03), noise-free: every path
 * on one line, scaled by scene_factor; the grid from 1 KiB by 2x. */
static int scene;
static double scene_factor(dc_path p, uint64_t bytes);

static tune_result scene_search(synth *m, const dc_path *paths, int np, uint64_t max_bytes,
                                double prune_ratio, const dc_threshold_row *inc, dc_segment *seg,
                                int *nseg, tune_xover *xo) {
  synth_init(m, 63);
  m->noise = 0.0;
  m->shape = scene_factor;
  for (int p = 0; p < DC_PATH_COUNT; p++) synth_line(m, (dc_path)p, 5000, 0.01);
  tune_xover_search s = default_search(m, paths, np);
  s.max_bytes = max_bytes;
  s.tolerance = 1.03;
  s.prune_ratio = prune_ratio;
  s.incumbent = inc;
  int nxo = -1;
  tune_result r = tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, nseg);
  char buf[256] = "";
  size_t n = 0;
  for (int i = 0; r == tune_ok && i < *nseg && n < sizeof(buf); i++)
    n += (size_t)snprintf(
        buf + n, sizeof(buf) - n, " %s<=%llu", dc_path_name(seg[i].path),
        seg[i].max_bytes == DC_BYTES_MAX ? 0ull : (unsigned long long)seg[i].max_bytes);
  tap_diag("scene %d: result %d,%s", scene, (int)r, buf);
  return r == tune_ok && !segments_ok(seg, *nseg, xo, nxo) ? tune_err_internal : r;
}

/* Trials of path at bytes in m's ledger. */
static long ledger_trials(const synth *m, dc_path path, uint64_t bytes) {
  for (int i = 0; i < m->nledger; i++)
    if (m->ledger[i].path == path && m->ledger[i].bytes == bytes) return m->ledger[i].trials;
  return 0;
}

/* Scenes 0 to 2: fused 1% ahead of the better of single_block and
 * two_shot from 32 to 256 KiB, 50% behind elsewhere, so its run on the
 * grid earns no segment; two_shot against single_block: 5% behind below
 * c1, tied at c1, 5% ahead to c2, 1% behind to c3 (a dip the tolerance
 * ignores), 20% ahead above. Scene 1 puts c1 inside fused's run, scene 2
 * just above it, scene 0 on its grid size 64 KiB (no dip).
 * Scene 3: the midpoints between grid sizes (near_tie_midpoints), on
 * single_block's line: fused 10% ahead on two bands between grid sizes
 * (1300-1600 and 40000-52000 bytes), exactly the tolerance behind at 1
 * and 64 KiB, 10% behind elsewhere; multi_block 20% ahead
 * from 700000 bytes (the last grid size), 20% behind below; two_shot 5x
 * behind from 16 KiB, pipeline from 32 KiB (2x below), pruned two grid
 * sizes on. Scene 4: fused 10% ahead strictly between the grid sizes
 * band_lo and band_hi, 1% behind at band_lo, 10% behind elsewhere.
 * Scene 5 (pruning under a prune ratio of 1.02): single_block ahead of
 * fused up to 4 KiB, by 10% at 1 KiB closing to 6% (fused, catching up, is
 * not pruned); 2.5% behind from there
 * to 32 KiB (pruned from the grid size 32 KiB on); from 32 KiB as fast as
 * fused, which the coarse grid never sees. Scene 6: fused 20% ahead of
 * single_block and two_shot up to 4 KiB; above, fused 20% behind
 * single_block and two_shot 1% ahead of it.
 * Scene 7: single_block and fused 10% ahead in turn, changing at each power
 * of two from 2 KiB. */
static const uint64_t scene_c[3][3] = {
    {65536, UINT64_MAX, UINT64_MAX}, {100000, 160000, 400000}, {300000, 600000, 900000}};
static uint64_t band_lo, band_hi;

static double scene_factor(dc_path p, uint64_t b) {
  if (scene == 7) return (p == DC_PATH_FUSED) == ((int)log2((double)b / 1024) % 2) ? 0.9 : 1.0;
  if (scene == 6) {
    if (p == DC_PATH_FUSED) return b <= 4096 ? 0.8 : 1.2;
    return p == DC_PATH_TWO_SHOT && b > 4096 ? 0.99 : 1.0;
  }
  if (scene == 5) {
    if (p != DC_PATH_SINGLE_BLOCK) return 1.0;
    return b <= 4096 ? 0.9 + 0.02 * log2((double)b / 1024) : b < 32768 ? 1.025 : 1.0;
  }
  if (scene == 4) {
    if (p != DC_PATH_FUSED) return 1.0;
    return b == band_lo ? 1.01 : b > band_lo && b < band_hi ? 0.9 : 1.1;
  }
  if (scene == 3) {
    switch (p) {
      case DC_PATH_FUSED:
        if ((b >= 1300 && b <= 1600) || (b >= 40000 && b <= 52000)) return 0.9;
        return b == 1024 || b == 65536 ? 1.03 : 1.1;
      case DC_PATH_MULTI_BLOCK:
        return b >= 700000 ? 0.8 : 1.2;
      case DC_PATH_TWO_SHOT:
        return b >= 16384 ? 5.0 : 2.0;
      case DC_PATH_PIPELINE:
        return b >= 32768 ? 5.0 : 2.0;
      default:
        return 1.0;
    }
  }
  const uint64_t *c = scene_c[scene];
  double ts = b < c[0] ? 1.05 : b == c[0] ? 1.0 : b <= c[1] ? 1 / 1.05 : b <= c[2] ? 1.01 : 1 / 1.2;
  double best = ts < 1.0 ? ts : 1.0;
  switch (p) {
    case DC_PATH_TWO_SHOT:
      return ts;
    case DC_PATH_FUSED:
      return (b >= 32768 && b <= 262144 ? 0.99 : 1.5) * best;
    default:
      return 1.0;
  }
}

/* A segment that goes between two different paths (stab_merge) has its
 * grid sizes split between them by their medians: the change is bisected
 * from the first grid size the later path wins, not from the ends of the
 * band (where, past the dip, it would land at c3), whichever of the two
 * paths is listed first; a grid size where they tie stays with the
 * earlier, so the change lies at or above it. */
static void test_merge_split(void) {
  static const dc_path orders[2][3] = {{DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED, DC_PATH_TWO_SHOT},
                                       {DC_PATH_TWO_SHOT, DC_PATH_FUSED, DC_PATH_SINGLE_BLOCK}};
  const tune_xover_search res = {.resolution = 0.0625, .granule = 16};
  for (scene = 0; scene <= 2; scene++)
    for (int o = 0; o < 2; o++) {
      synth m;
      dc_segment seg[DC_MAX_SEGMENTS];
      tune_xover xo[DC_MAX_SEGMENTS];
      int nseg = -1;
      tune_result r =
          scene_search(&m, orders[o], 3, scene == 1 ? 1u << 20 : 2u << 20, 0, NULL, seg, &nseg, xo);
      tap_ok(r == tune_ok && nseg == 2 && seg[0].path == DC_PATH_SINGLE_BLOCK &&
                 seg[1].path == DC_PATH_TWO_SHOT &&
                 within(&res, xo[0].bytes, (double)scene_c[scene][0]) &&
                 (scene > 0 || xo[0].bytes >= scene_c[0][0]),
             "fused's band (32-256 KiB) goes; single_block then two_shot, changing at %llu (true "
             "%llu: %s), %s listed first",
             nseg == 2 ? (unsigned long long)xo[0].bytes : 0ull,
             (unsigned long long)scene_c[scene][0],
             scene == 0   ? "a tie at a grid size of it"
             : scene == 1 ? "inside it"
                          : "above it",
             dc_path_name(orders[o][0]));
    }
}

/* An incumbent row of DC_MAX_SEGMENTS segments, fused and single_block in
 * turn, over two paths that cost exactly the same: nowhere is the new row
 * (single_block alone) decidedly faster, so all eight are kept. */
static void test_incumbent_full_row(void) {
  static const dc_path paths[] = {DC_PATH_FUSED, DC_PATH_SINGLE_BLOCK};
  /* The row of a skewed key: its other fields play no part. */
  dc_threshold_row inc = {.nseg = DC_MAX_SEGMENTS, .skew_ns = 50000};
  for (int i = 0; i < DC_MAX_SEGMENTS; i++)
    inc.seg[i] = (dc_segment){i + 1 < DC_MAX_SEGMENTS ? 2048ull << i : DC_BYTES_MAX, paths[i % 2]};
  synth m;
  synth_init(&m, 64);
  m.noise = 0.0;
  synth_line(&m, DC_PATH_FUSED, 3000, 0.002);
  synth_line(&m, DC_PATH_SINGLE_BLOCK, 3000, 0.002);
  tune_xover_search s = default_search(&m, paths, 2);
  s.tolerance = 1.03;
  s.incumbent = &inc;
  tune_xover xo[DC_MAX_SEGMENTS];
  dc_segment seg[DC_MAX_SEGMENTS];
  int nxo = -1, nseg = -1;
  tune_result r = tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg);
  int same = r == tune_ok && nseg == DC_MAX_SEGMENTS;
  for (int i = 0; same && i < nseg; i++)
    same = seg[i].path == inc.seg[i].path && seg[i].max_bytes == inc.seg[i].max_bytes;
  tap_ok(same && segments_ok(seg, nseg, xo, nxo),
         "a tie under an incumbent of %d segments: all of them kept (%d segments)", DC_MAX_SEGMENTS,
         nseg);
}

/* Midpoints between grid sizes (scene 3): fused's two bands are found --
 * the one between the first two grid sizes, near only at the first, and
 * the one between 32 and 64 KiB, near only at 64 KiB, each exactly by the
 * tolerance -- as is multi_block's lead at the last grid size. A midpoint
 * joins the grid measured for each path measured at both sizes around it
 * (pipeline, pruned from 128 KiB on), for no other (two_shot, pruned from
 * 64 KiB), and never for a path that is not a candidate. */
static void test_midpoints_join_grid(void) {
  /* The last entry is no candidate (npaths 5): it must never be measured. */
  static const dc_path paths[] = {DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED,    DC_PATH_MULTI_BLOCK,
                                  DC_PATH_TWO_SHOT,     DC_PATH_PIPELINE, DC_PATH_ONE_SHOT};
  static const dc_path want[] = {DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED,        DC_PATH_SINGLE_BLOCK,
                                 DC_PATH_FUSED,        DC_PATH_SINGLE_BLOCK, DC_PATH_MULTI_BLOCK};
  static const double truth[] = {1300, 1600, 40000, 52000, 700000};
  const tune_xover_search res = {.resolution = 0.0625, .granule = 16};
  synth m;
  dc_segment seg[DC_MAX_SEGMENTS];
  tune_xover xo[DC_MAX_SEGMENTS];
  int nseg = -1;
  scene = 3;
  int ok = scene_search(&m, paths, 5, 1u << 20, 4.0, NULL, seg, &nseg, xo) == tune_ok && nseg == 6;
  for (int i = 0; ok && i < nseg; i++)
    ok = seg[i].path == want[i] && (i + 1 == nseg || within(&res, xo[i].bytes, truth[i]));
  tap_ok(ok,
         "fused's bands between 1 and 2 KiB and between 32 and 64 KiB, and multi_block's "
         "lead at the last grid size, found (%d segments)",
         nseg);
  long two_shot_above = 0, not_candidate = 0;
  for (int i = 0; i < m.nledger; i++) {
    two_shot_above += m.ledger[i].path == DC_PATH_TWO_SHOT && m.ledger[i].bytes > 32768;
    not_candidate += m.ledger[i].path == DC_PATH_ONE_SHOT;
  }
  tap_ok(ledger_trials(&m, DC_PATH_PIPELINE, 46336) > 0 && two_shot_above == 0,
         "the midpoint 46336 is measured for pipeline, live at 32 and 64 KiB, not for two_shot, "
         "pruned at 64 KiB (%ld two_shot sizes above 32 KiB)",
         two_shot_above);
  tap_ok(not_candidate == 0, "a path past npaths is never measured (%ld sizes)", not_candidate);
}

/* m's noise-free latency, with no ledger (a grid too long for it). */
static tune_result plain_measure(void *ctx, dc_path path, uint64_t bytes, int ntrials,
                                 double *out) {
  for (int t = 0; t < ntrials; t++) out[t] = synth_latency(ctx, path, bytes);
  return tune_ok;
}

/* A grid of TUNE_XOVER_MAX_GRID sizes (granule 1, factor 1.001 up to
 * 22050 bytes) with a band of fused between two of its sizes (scene 4):
 * the midpoint joins the full grid and the band is found. */
static void test_full_grid_midpoint(void) {
  static const dc_path paths[] = {DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED};
  static uint64_t g[TUNE_XOVER_MAX_GRID];
  int n = 0, k = 0;
  int ok = tune_xover_grid(1, 22050, 1.001, 1, g, &n) == tune_ok && n == TUNE_XOVER_MAX_GRID;
  while (ok && g[k] < 20000) k++;
  band_lo = g[k], band_hi = g[k + 1];
  synth m;
  synth_init(&m, 65);
  m.noise = 0.0;
  m.shape = scene_factor;
  synth_line(&m, DC_PATH_SINGLE_BLOCK, 5000, 0.01);
  synth_line(&m, DC_PATH_FUSED, 5000, 0.01);
  tune_xover_search s = default_search(&m, paths, 2);
  s.measure = plain_measure;
  s.min_bytes = 1, s.max_bytes = 22050, s.grid_factor = 1.001, s.granule = 1;
  s.resolution = 0.0002;
  s.tolerance = 1.03;
  scene = 4;
  tune_xover xo[DC_MAX_SEGMENTS];
  dc_segment seg[DC_MAX_SEGMENTS];
  int nxo = -1, nseg = -1;
  tune_result r =
      ok ? tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg) : tune_err_internal;
  tap_ok(r == tune_ok && nseg == 3 && segments_ok(seg, nseg, xo, nxo) &&
             seg[1].path == DC_PATH_FUSED && xo[0].bytes >= band_lo && xo[1].bytes < band_hi,
         "a grid of %d sizes takes a midpoint: fused's band between %llu and %llu found "
         "(result %d, %d segments)",
         n, (unsigned long long)band_lo, (unsigned long long)band_hi, (int)r, nseg);
}

/* fused the base line; single_block 1% ahead of it up to 8 KiB, 5% ahead
 * to 12000 bytes and 10% behind above; two_shot 50% behind, but at 8 KiB
 * its first 16 trials are 3% and 0% ahead of fused in turn (it wins the
 * coarse grid's median there) and every later one 5% behind. */
static tune_result lost_measure(void *ctx, dc_path path, uint64_t bytes, int ntrials, double *out) {
  synth *m = ctx;
  struct ledger_entry *e = ledger_of(m, path, bytes, ntrials);
  if (e == NULL) return tune_err_internal;
  for (int i = 0; i < ntrials; i++) {
    long k = e->trials + i;
    double f = path == DC_PATH_FUSED ? 1.0 : path == DC_PATH_TWO_SHOT ? 1.5 : 1.1;
    if (path == DC_PATH_SINGLE_BLOCK && bytes <= 12000) f = bytes <= 8192 ? 0.99 : 0.95;
    if (path == DC_PATH_TWO_SHOT && bytes == 8192) f = k >= 16 ? 1.05 : k % 2 ? 1.0 : 0.97;
    out[i] = f * (5000 + (double)bytes / 100);
  }
  e->trials += ntrials;
  return tune_ok;
}

/* A run lost whole to bisection (two_shot's at 8 KiB, lost_measure) is
 * dropped and the changes bisected again before the stability rules judge
 * the row: single_block earns its segment by its 5% lead above 8 KiB, which
 * it would not with its change still where two_shot's run began. */
static void test_lost_run_then_rules(void) {
  static const dc_path paths[] = {DC_PATH_SINGLE_BLOCK, DC_PATH_TWO_SHOT, DC_PATH_FUSED};
  synth m;
  synth_init(&m, 67);
  tune_xover_search s = default_search(&m, paths, 3);
  s.measure = lost_measure;
  s.max_bytes = 65536;
  s.tolerance = 1.03;
  tune_xover xo[DC_MAX_SEGMENTS];
  dc_segment seg[DC_MAX_SEGMENTS];
  int nxo = -1, nseg = -1;
  tune_result r = tune_xover_find(&s, xo, DC_MAX_SEGMENTS, &nxo, seg, &nseg);
  tap_ok(r == tune_ok && nseg == 2 && segments_ok(seg, nseg, xo, nxo) &&
             seg[0].path == DC_PATH_SINGLE_BLOCK && seg[1].path == DC_PATH_FUSED &&
             xo[0].bytes > 8192 && xo[0].bytes <= 12000 &&
             ledger_trials(&m, DC_PATH_TWO_SHOT, 8192) > 16,
         "two_shot's run lost at 8 KiB: single_block keeps its band up to 12000 bytes (result %d, "
         "%d segments, changing at %llu)",
         (int)r, nseg, nxo > 0 ? (unsigned long long)xo[0].bytes : 0ull);
}

/* A grid of two sizes takes its midpoint too (scene 4, fused 1% behind at
 * 1 KiB, 10% behind at 2 KiB, 10% ahead between): fused's band is found,
 * and single_block's lead at 1 KiB, under the tolerance, goes to it. */
static void test_two_size_grid_midpoint(void) {
  static const dc_path paths[] = {DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED};
  synth m;
  dc_segment seg[DC_MAX_SEGMENTS];
  tune_xover xo[DC_MAX_SEGMENTS];
  int nseg = -1;
  scene = 4;
  band_lo = 1024, band_hi = 2048;
  tune_result r = scene_search(&m, paths, 2, 2048, 0, NULL, seg, &nseg, xo);
  tap_ok(r == tune_ok && nseg == 2 && seg[0].path == DC_PATH_FUSED && xo[0].bytes < 2048 &&
             xo[0].bytes * 1.0625 >= 2048,
         "a grid of two sizes: fused's band between them found (result %d, %d segments)", (int)r,
         nseg);
}

/* The rules asking about a pruned path (scene 5: a prune ratio of 1.02,
 * under the tolerance, prunes single_block 2.5% behind from 32 KiB): at a
 * grid size from its pruning on, and between the last grid size it was
 * measured at and the next, it counts as pruned -- fused earns its segment
 * there, single_block unmeasured -- but at that last grid size it is
 * judged by its samples. So an incumbent's single_block on (8200, 16390]
 * is kept, 2.5% behind at 16 KiB, and on (16384, 24000] it is not. No row
 * measures single_block above 16 KiB, nor any size off the granule (8200
 * and 16390 are not multiples of 16: the rules judge a stretch at its
 * ends, and the search measures them at the nearest granule). */
static void test_pruned_under_rules(void) {
  static const dc_path paths[] = {DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED};
  static const struct {
    uint64_t t1, t2; /* incumbent: fused <= t1, single_block <= t2, fused; 0: none */
    int nseg;
    uint64_t want[3];
  } cases[] = {{0, 0, 2, {4096}}, {8200, 16390, 4, {4096, 8200, 16390}}, {16384, 24000, 2, {4096}}};
  scene = 5;
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    dc_threshold_row inc = {.nseg = 3,
                            .seg = {{cases[c].t1, DC_PATH_FUSED},
                                    {cases[c].t2, DC_PATH_SINGLE_BLOCK},
                                    {DC_BYTES_MAX, DC_PATH_FUSED}}};
    synth m;
    dc_segment seg[DC_MAX_SEGMENTS];
    tune_xover xo[DC_MAX_SEGMENTS];
    int nseg = -1;
    tune_result r =
        scene_search(&m, paths, 2, 64u << 10, 1.02, cases[c].t1 ? &inc : NULL, seg, &nseg, xo);
    int ok = r == tune_ok && nseg == cases[c].nseg;
    for (int i = 0; ok && i < nseg; i++)
      ok = seg[i].path == paths[i % 2] && (i + 1 == nseg || seg[i].max_bytes == cases[c].want[i]);
    long above = 0, off = 0;
    for (int i = 0; i < m.nledger; i++) {
      above += m.ledger[i].path == DC_PATH_SINGLE_BLOCK && m.ledger[i].bytes > 16384;
      off += m.ledger[i].bytes % 16 != 0;
    }
    tap_ok(ok && above == 0,
           "pruned single_block, incumbent %llu/%llu: %d segments as expected, %ld sizes of "
           "single_block measured above 16 KiB",
           (unsigned long long)cases[c].t1, (unsigned long long)cases[c].t2, nseg, above);
    tap_ok(off == 0,
           "... no size measured off the granule, though the incumbent's ends may lie "
           "off it (%ld)",
           off);
  }
}

/* A segment that earns its place against its neighbour but nowhere
 * against a simpler candidate takes the simpler path (scene 6): two_shot's
 * range goes to single_block, fused's stays, and the change between them
 * is bisected again, decided at 4 KiB. */
static void test_simpler_path(void) {
  static const dc_path paths[] = {DC_PATH_FUSED, DC_PATH_TWO_SHOT, DC_PATH_SINGLE_BLOCK};
  synth m;
  dc_segment seg[DC_MAX_SEGMENTS];
  tune_xover xo[DC_MAX_SEGMENTS];
  int nseg = -1;
  scene = 6;
  tune_result r = scene_search(&m, paths, 3, 64u << 10, 0, NULL, seg, &nseg, xo);
  tap_ok(r == tune_ok && nseg == 2 && seg[0].path == DC_PATH_FUSED &&
             seg[1].path == DC_PATH_SINGLE_BLOCK && xo[0].bytes == 4096 && xo[0].decided,
         "two_shot, nowhere 3%% ahead of single_block, gives it its range; fused's stays, "
         "changing at 4096 (result %d, %d segments)",
         (int)r, nseg);
}

/* A row of DC_MAX_SEGMENTS segments, each earned (scene 7), under an
 * incumbent of the same paths changing at the powers of two themselves,
 * where the new path leads by 10%: the row stays as measured. */
static void test_full_row_incumbent(void) {
  static const dc_path paths[] = {DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED};
  dc_threshold_row inc = {.nseg = DC_MAX_SEGMENTS};
  for (int i = 0; i < DC_MAX_SEGMENTS; i++)
    inc.seg[i] = (dc_segment){i + 1 < DC_MAX_SEGMENTS ? 2048ull << i : DC_BYTES_MAX, paths[i % 2]};
  synth m;
  dc_segment seg[DC_MAX_SEGMENTS];
  tune_xover xo[DC_MAX_SEGMENTS];
  int nseg = -1;
  scene = 7;
  int ok = scene_search(&m, paths, 2, 128u << 10, 0, &inc, seg, &nseg, xo) == tune_ok &&
           nseg == DC_MAX_SEGMENTS;
  for (int i = 0; ok && i < nseg; i++)
    ok = seg[i].path == paths[i % 2] &&
         (i + 1 == nseg || (xo[i].decided && seg[i].max_bytes < inc.seg[i].max_bytes &&
                            seg[i].max_bytes * 1.0625 >= inc.seg[i].max_bytes));
  tap_ok(ok,
         "a full row of %d earned segments under an incumbent a little off it: kept as "
         "measured (%d segments)",
         DC_MAX_SEGMENTS, nseg);
}

/* paths past npaths name no candidate, whatever they hold: a third entry
 * of one_shot, or repeating single_block or fused, changes neither the row
 * nor what is measured -- also where the incumbent row holds that path. */
static void test_paths_past_npaths(void) {
  static const dc_path lists[3][3] = {{DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED, DC_PATH_ONE_SHOT},
                                      {DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED, DC_PATH_SINGLE_BLOCK},
                                      {DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED, DC_PATH_FUSED}};
  const dc_threshold_row inc = {
      .nseg = 3,
      .seg = {
          {8192, DC_PATH_SINGLE_BLOCK}, {32768, DC_PATH_ONE_SHOT}, {DC_BYTES_MAX, DC_PATH_FUSED}}};
  static synth m[3];
  tune_xover xo[3][DC_MAX_SEGMENTS];
  dc_segment seg[3][DC_MAX_SEGMENTS];
  int nxo[3], nseg[3], ok = 1;
  for (int k = 0; k < 3; k++) {
    synth_init(&m[k], 66);
    m[k].noise = 0.0;
    synth_line(&m[k], DC_PATH_SINGLE_BLOCK, 3000, 0.4);
    synth_line(&m[k], DC_PATH_FUSED, 8000, 0.02);
    tune_xover_search s = default_search(&m[k], lists[k], 2);
    s.tolerance = 1.03;
    s.incumbent = &inc;
    memset(xo[k], 0, sizeof(xo[k]));
    memset(seg[k], 0, sizeof(seg[k]));
    ok &= tune_xover_find(&s, xo[k], DC_MAX_SEGMENTS, &nxo[k], seg[k], &nseg[k]) == tune_ok;
    for (int i = 0; i < m[k].nledger; i++) ok &= m[k].ledger[i].path != DC_PATH_ONE_SHOT;
    ok &= nseg[k] == 2 && nseg[k] == nseg[0] && nxo[k] == nxo[0] &&
          memcmp(xo[k], xo[0], sizeof(xo[0])) == 0 && memcmp(seg[k], seg[0], sizeof(seg[0])) == 0 &&
          same_ledger(&m[0], &m[k]);
  }
  tap_ok(ok,
         "a third entry past npaths (one_shot, or single_block or fused again) changes "
         "neither the row nor the measurements, under an incumbent holding it");
}

int main(void) {
  test_grid();
  test_two_paths();
  test_prune();
  test_prune_keeps_catching_up();
  test_deterministic();
  test_no_crossover();
  test_lost_at_the_end();
  test_three_paths();
  test_merge();
  test_merge_cost();
  test_near_tie();
  test_bad_search();
  test_measure_set();
  test_search_bounds();
  test_ties();
  test_bisection_stops();
  test_tie_at_the_end();
  test_merge_runs();
  test_merge_tie();
  test_bracket_closed_on_lo();
  test_merge_split();
  test_incumbent_full_row();
  test_midpoints_join_grid();
  test_full_grid_midpoint();
  test_two_size_grid_midpoint();
  test_lost_run_then_rules();
  test_pruned_under_rules();
  test_simpler_path();
  test_full_row_incumbent();
  test_paths_past_npaths();
  return tap_done();
}
