/* test_skew.c: tune skew on the CPU -- the per-trial roles and summaries on
 * synthetic ranks with known answers (the last arriver changes from trial
 * to trial), the sensitivity fit on a line with known slope and intercept,
 * the command line's refusals (exit 2, the argument named, no database),
 * and the whole command on the sim backend: database rows, the printed
 * table, the JSON, random skew, and a skew-only report. */
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"
#include "skew.h"
#include "tap.h"

static tune_rng rng;



/* ---- roles and summaries ------------------------------------------------------ */

enum { W = 4, T = 11, INJ = 2 };

/* 11 trials of 4 ranks. Trial t: the least-waiting rank L (which varies)
 * has residence cost[t]; a different rank M waits wait[t] more; the others
 * wait less than that. Rank INJ is delayed by delay[t] (zero in the trials
 * of a zero-delay config). Known answers: max = cost + wait, last = cost. */
typedef struct {
  int64_t el[T * W], de[T * W];
  double cost[T], wait[T], delay[T];
  int last_rank[T];
} fixture;

static void make_fixture(fixture *f, int delayed) {
  /* wait = 1000 * (1..11) ns in a shuffled order: median 6000, p10 2000,
   * p90 10000 exactly (numpy's linear rule on 11 values). */
  int order[T];
  for (int t = 0; t < T; t++) order[t] = t + 1;
  for (int t = T - 1; t > 0; t--) {
    int j = (int)(tune_rng_next(&rng) % (uint64_t)(t + 1)), k = order[t];
    order[t] = order[j];
    order[j] = k;
  }
  for (int t = 0; t < T; t++) {
    int L = (int)(tune_rng_next(&rng) % W), M = (L + 1 + (int)(tune_rng_next(&rng) % (W - 1))) % W;
    f->last_rank[t] = L;
    f->cost[t] = 5000 + (double)(tune_rng_next(&rng) % 3000);
    f->wait[t] = 1000.0 * order[t];
    f->delay[t] = delayed ? 250000 + (double)(tune_rng_next(&rng) % 500) : 0;
    for (int r = 0; r < W; r++) {
      double extra = r == L   ? 0
                     : r == M ? f->wait[t]
                              : 1 + (double)(tune_rng_next(&rng) % (uint64_t)(f->wait[t] - 1));
      f->el[t * W + r] = (int64_t)(f->cost[t] + extra);
      f->de[t * W + r] = r == INJ ? (int64_t)f->delay[t] : 0;
    }
  }
}

static void test_roles(void) {
  fixture f;
  double pt[TUNE_SKEW_NQ * T];
  tune_skew_stat st[TUNE_SKEW_NQ];
  int lasts = 0;
  for (int delayed = 0; delayed < 2; delayed++) {
    make_fixture(&f, delayed);
    tap_ok(tune_skew_per_trial(f.el, f.de, T, W, INJ, pt) == tune_ok, "per_trial (delayed %d)",
           delayed);
    int ok_max = 1, ok_last = 1, ok_wait = 1, ok_inj = 1, ok_delay = 1;
    for (int t = 0; t < T; t++) {
      ok_max &= pt[TUNE_SKEW_MAX * T + t] == (double)(int64_t)(f.cost[t] + f.wait[t]);
      ok_last &= pt[TUNE_SKEW_LAST * T + t] == (double)(int64_t)f.cost[t];
      ok_wait &= pt[TUNE_SKEW_WAIT * T + t] == f.wait[t];
      ok_inj &= pt[TUNE_SKEW_INJECTED * T + t] == (double)f.el[t * W + INJ];
      ok_delay &= pt[TUNE_SKEW_DELAY * T + t] == f.delay[t];
      lasts |= 1 << f.last_rank[t];
    }
    tap_ok(ok_max, "max is cost + wait in every trial (delayed %d)", delayed);
    tap_ok(ok_last, "last arriver is the minimum, whichever rank it is (delayed %d)", delayed);
    tap_ok(ok_wait, "wait is max - last (delayed %d)", delayed);
    tap_ok(ok_inj, "injected is rank %d's residence (delayed %d)", INJ, delayed);
    tap_ok(ok_delay, "delay is rank %d's measured delay (delayed %d)", INJ, delayed);
    tune_skew_summarize(pt, T, st);
    tap_ok(st[TUNE_SKEW_WAIT].median_ns == 6000 && st[TUNE_SKEW_WAIT].p10_ns == 2000 &&
               st[TUNE_SKEW_WAIT].p90_ns == 10000,
           "wait summary is exactly 6000 [2000, 10000] (got %.1f [%.1f, %.1f])",
           st[TUNE_SKEW_WAIT].median_ns, st[TUNE_SKEW_WAIT].p10_ns, st[TUNE_SKEW_WAIT].p90_ns);
    double last_med = tune_median(f.cost, T);
    tap_ok(fabs(st[TUNE_SKEW_LAST].median_ns - floor(last_med)) < 1e-9,
           "last-arriver median is the median cost (%.1f)", st[TUNE_SKEW_LAST].median_ns);
    tap_ok(delayed ? st[TUNE_SKEW_DELAY].p10_ns >= 250000 && st[TUNE_SKEW_DELAY].p90_ns < 250500
                   : st[TUNE_SKEW_DELAY].median_ns == 0,
           "delay summary (delayed %d): %.1f", delayed, st[TUNE_SKEW_DELAY].median_ns);
  }
  tap_ok(__builtin_popcount((unsigned)lasts) >= 3,
         "the fixture's last arriver varies (ranks mask 0x%x)", (unsigned)lasts);

  const int64_t d1[W] = {0, 0, 5, 0}, d2[W] = {0, 7, 9, 0}, d0[W] = {0, 0, 0, 0};
  tap_ok(tune_skew_injected_rank(d1, W, 3) == 2,
         "injected: the rank with a delay wins over skew_rank");
  tap_ok(tune_skew_injected_rank(d2, W, 1) == 2, "injected: the largest delay wins");
  tap_ok(tune_skew_injected_rank(d0, W, 1) == 1, "injected: zero delay falls back to skew_rank");
  tap_ok(tune_skew_injected_rank(d0, W, -2) == 0,
         "injected: random skew with zero delay is rank 0");
  tap_ok(tune_skew_per_trial(f.el, f.de, 0, W, 1, pt) == tune_err_arg &&
             tune_skew_per_trial(NULL, f.de, T, W, 1, pt) == tune_err_arg,
         "per_trial refuses no trials and NULL");
  tap_ok(strcmp(tune_skew_q_name(TUNE_SKEW_LAST), "last") == 0 &&
             tune_skew_q_name(TUNE_SKEW_NQ) == NULL,
         "quantity names");
}

/* ---- the fit ------------------------------------------------------------------ */

static void test_fit(void) {
  tune_skew_series s = {0};
  static const double delays[] = {0, 50e3, 250e3, 1e6};
  const double slope = 1.0, icpt = 7500, sd = 60;
  enum { N = 30 };
  for (size_t d = 0; d < 4; d++) {
    double pt[TUNE_SKEW_NQ * N];
    for (int t = 0; t < N; t++) {
      double x = delays[d] + (d ? fabs(tune_rng_normal(&rng)) * 30 : 0);
      pt[TUNE_SKEW_DELAY * N + t] = x;
      pt[TUNE_SKEW_MAX * N + t] = icpt + slope * x + sd * tune_rng_normal(&rng);
      pt[TUNE_SKEW_INJECTED * N + t] = 6100 + sd * tune_rng_normal(&rng);
      pt[TUNE_SKEW_LAST * N + t] = 6000 + sd * tune_rng_normal(&rng);
      pt[TUNE_SKEW_WAIT * N + t] = pt[TUNE_SKEW_MAX * N + t] - pt[TUNE_SKEW_LAST * N + t];
    }
    tap_ok(tune_skew_series_add(&s, pt, N) == tune_ok, "series add delay %.0f", delays[d]);
  }
  /* 99.9% intervals: a seeded draw must not land in the 5% a 95% interval
   * misses by design. */
  tune_linfit_result r, r95;
  tune_result fr;
  fr = tune_skew_fit(&s, TUNE_SKEW_MAX, 0.999, &r);
  tap_ok(fr == tune_ok && r.n == 4 * N, "fit max over %d trials", 4 * N);
  tap_ok(r.slope_lo <= slope && slope <= r.slope_hi && r.intercept_lo <= icpt &&
             icpt <= r.intercept_hi,
         "max: CI holds slope 1 and intercept 7500 (%.5f [%.5f, %.5f], %.1f [%.1f, %.1f])", r.slope,
         r.slope_lo, r.slope_hi, r.intercept, r.intercept_lo, r.intercept_hi);
  tap_ok(r.r2 > 0.999, "max: r2 %.6f", r.r2);
  fr = tune_skew_fit(&s, TUNE_SKEW_INJECTED, 0.999, &r);
  tap_ok(fr == tune_ok && r.slope_lo <= 0 && 0 <= r.slope_hi && r.intercept_lo <= 6100 &&
             6100 <= r.intercept_hi,
         "injected: CI holds slope 0 and intercept 6100 (%.6f [%.6f, %.6f], %.1f [%.1f, %.1f])",
         r.slope, r.slope_lo, r.slope_hi, r.intercept, r.intercept_lo, r.intercept_hi);
  fr = tune_skew_fit(&s, TUNE_SKEW_WAIT, 0.999, &r);
  tap_ok(fr == tune_ok && r.slope_lo <= 1 && 1 <= r.slope_hi, "wait: CI holds slope 1 (%.5f)",
         r.slope);
  tap_ok(tune_skew_fit(&s, TUNE_SKEW_WAIT, 0.95, &r95) == tune_ok && r95.slope == r.slope &&
             r95.slope_lo > r.slope_lo && r95.slope_hi < r.slope_hi && r95.confidence == 0.95,
         "a 95%% interval is narrower than the 99.9%% one around the same slope");
  tap_ok(tune_skew_fit(&s, TUNE_SKEW_DELAY, 0.95, &r) == tune_err_arg,
         "the delay is not a role to fit");
  tune_skew_series_clear(&s);
  double one[TUNE_SKEW_NQ * 5];
  for (int i = 0; i < TUNE_SKEW_NQ * 5; i++) one[i] = i < TUNE_SKEW_DELAY * 5 ? 1000 + i : 50e3;
  tune_skew_series_add(&s, one, 5);
  tap_ok(tune_skew_fit(&s, TUNE_SKEW_MAX, 0.95, &r) == tune_err_arg, "one delay: nothing to fit");
  tune_skew_series_free(&s);
}

/* ---- the command ---------------------------------------------------------------- */

/* Run `tune skew` with argv (NULL-terminated, from "skew"), stdout and
 * stderr into files; its exit status. */
static int run_skew(const char *out, const char *err, const char *const *args) {
  char *argv[64];
  int argc = 0;
  while (args[argc]) {
    argv[argc] = (char *)args[argc];
    argc++;
  }
  argv[argc] = NULL;
  fflush(stdout);
  fflush(stderr);
  int so = dup(1), se = dup(2);
  int fo = open(out, O_CREAT | O_TRUNC | O_WRONLY, 0600),
      fe = open(err, O_CREAT | O_TRUNC | O_WRONLY, 0600);
  dup2(fo, 1);
  dup2(fe, 2);
  close(fo);
  close(fe);
  int rc = tune_cmd_skew(argc, argv);
  fflush(stdout);
  fflush(stderr);
  dup2(so, 1);
  dup2(se, 2);
  close(so);
  close(se);
  return rc;
}

static void test_bad_input(void) {
  static const struct {
    const char *want;
    const char *args[16];
  } bad[] = {
      {"--skew-rank: 2 is outside the world", {"--world", "2", "--skew-rank", "2"}},
      {"--skew-rank: -1 is outside the world", {"--skew-rank", "-1"}},
      {"--skew-delays-us: '-5' is negative", {"--skew-delays-us", "0", "-5"}},
      {"--skew-delays-us: '20000000' is over 10 s", {"--skew-delays-us", "20000000"}},
      {"--skew-delays-us: 'abc' is not a number", {"--skew-delays-us", "abc"}},
      {"--skew-delays-us: '50' is given twice", {"--skew-delays-us", "50", "50"}},
      {"--shapes: '8x' is not ROWSxCOLS", {"--shapes", "8x"}},
      {"--shapes: 'x8' is not ROWSxCOLS", {"--shapes", "x8"}},
      {"--shapes: '0x8' is not ROWSxCOLS", {"--shapes", "0x8"}},
      {"--shapes: '8x8x8' is not ROWSxCOLS", {"--shapes", "8x8192", "8x8x8"}},
      {"--shapes: '-3x8' is not ROWSxCOLS", {"--shapes=-3x8"}},
      {"does not divide into 4 ranks for reduce_scatter",
       {"--op", "reduce_scatter", "--world", "4", "--shapes", "7x3"}},
      {"are the same size per rank", {"--shapes", "8x8192", "16x4096"}},
      {"is over 64G bytes per rank", {"--shapes", "100000000x100000000"}},
      {"--op: unknown op 'all_to_all'", {"--op", "all_reduce,all_to_all"}},
      {"--dtype: unknown dtype 'int8'", {"--dtype", "int8"}},
      {"--mode: unknown mode 'lazy'", {"--mode", "lazy"}},
      {"--backend: 'tpu' is not gpu or sim", {"--backend", "tpu"}},
      {"--impls: unknown impl 'mpi'", {"--impls", "detcoll,mpi"}},
      {"--impls: unknown impl 'mpi'", {"--impls", "detcoll,mpi"}},
      {"--path: two_shot is not a path of all_gather",
       {"--op", "all_gather", "--path", "two_shot"}},
      {"--skew-rank and --random-skew exclude each other", {"--random-skew", "--skew-rank", "1"}},
      {"--trials: '1' is not a number", {"--trials", "1"}},
      {"--world: '1' is not a number", {"--world", "1"}},
      {"--launcher: 'srun' is not threads or mpi", {"--launcher", "srun"}},
      {"unexpected argument 'extra'", {"--backend", "sim", "extra"}},
      {"unknown option '--bogus'", {"--bogus"}},
      {"--shapes needs a value", {"--shapes"}},
  };
  char db[512];
  snprintf(db, sizeof(db), "%s", tap_path("bad.db"));
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    const char *args[24] = {"skew", "--backend", "sim", "--db", db};
    int n = 5;
    for (int k = 0; bad[i].args[k]; k++) args[n++] = bad[i].args[k];
    args[n] = NULL;
    int rc = run_skew(tap_path("bad.out"), tap_path("bad.err"), args);
    char *err = tap_slurp(tap_path("bad.err"), NULL);
    int said = err && strstr(err, bad[i].want);
    tap_ok(rc == 2 && said && !tap_file_exists(db),
           "exit 2, says \"%s\", no database (rc %d, said: %s)", bad[i].want, rc,
           err ? strtok(err, "\n") : "");
    free(err);
  }
  const char *help[] = {"skew", "--help", NULL};
  int rc = run_skew(tap_path("help.out"), tap_path("help.err"), help);
  char *text = tap_slurp(tap_path("help.out"), NULL);
  tap_ok(rc == 0 && text && strncmp(text, "usage: tune skew", 16) == 0 &&
             strstr(text, "--random-skew"),
         "--help prints the usage and exits 0");
  free(text);

  tune_skew_opts o;
  char *argv[] = {"skew",
                  "--shapes",
                  "8x8192",
                  "8627x8192,16384x8192",
                  "--skew-delays-us",
                  "0",
                  "50",
                  "250.5",
                  "1000",
                  "--skew-rank",
                  "1",
                  "--mode",
                  "graph",
                  "--op",
                  "all_gather",
                  "--op",
                  "reduce_scatter",
                  "--world",
                  "4",
                  NULL};
  rc = tune_skew_parse(19, argv, &o);
  tap_ok(rc == -1 && o.nshapes == 3 && o.shapes[1].rows == 8627 && o.shapes[2].cols == 8192 &&
             o.ndelays == 4 && o.delays_ns[2] == 250500 && o.delays_ns[3] == 1000000 &&
             o.skew_rank == 1 && o.modes == 1u << DC_MODE_GRAPH &&
             o.ops == (1u << DC_OP_ALL_GATHER | 1u << DC_OP_REDUCE_SCATTER) && o.world == 4 &&
             o.nimpls == 2 && strcmp(o.backend, "gpu") == 0,
         "multi-word options parse (rc %d, %d shapes, %d delays)", rc, o.nshapes, o.ndelays);
  char *argv2[] = {"skew", "--world", "4", NULL};
  tap_ok(tune_skew_parse(3, argv2, &o) == -1 && o.skew_rank == 3 && o.nshapes == 1 &&
             o.ndelays == 4 && o.delays_ns[3] == 1000000 && o.modes == 3u && o.trials == 50 &&
             o.warmup == 10,
         "defaults: last rank, 8x8192, 0 50 250 1000 us, both modes, 50 trials, 10 warm-up");
}

static sqlite3 *open_db(const char *path) {
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    sqlite3_close(db);
    return NULL;
  }
  return db;
}

static double q_num(sqlite3 *db, const char *sql) {
  sqlite3_stmt *s;
  double v = NAN;
  if (db == NULL || sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) return v;
  if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
    v = sqlite3_column_double(s, 0);
  sqlite3_finalize(s);
  return v;
}

static int have_python(void) { return system("python3 -c 'import json' >/dev/null 2>&1") == 0; }

static void test_command(void) {
  const char *db_path = tap_path("skew.db");
  char json[512];
  snprintf(json, sizeof(json), "%s", tap_path("skew.json"));
  const char *args[] = {"skew",
                        "--backend",
                        "sim",
                        "--world",
                        "4",
                        "--op",
                        "all_reduce,reduce_scatter",
                        "--shapes",
                        "8x8192",
                        "16x8192",
                        "--dtype",
                        "bf16",
                        "--skew-delays-us",
                        "0",
                        "50",
                        "250",
                        "1000",
                        "--skew-rank",
                        "2",
                        "--mode",
                        "both",
                        "--impls",
                        "detcoll,nccl",
                        "--trials",
                        "20",
                        "--warmup",
                        "2",
                        "--seed",
                        "7",
                        "--db",
                        db_path,
                        "--json",
                        json,
                        "--no-report",
                        NULL};
  int rc = run_skew(tap_path("run.out"), tap_path("run.err"), args);
  char *out = tap_slurp(tap_path("run.out"), NULL), *err = tap_slurp(tap_path("run.err"), NULL);
  tap_ok(rc == 0, "tune skew on the sim backend exits 0 (rc %d)", rc);
  if (rc != 0 && err) tap_diag("stderr: %s", err);
  sqlite3 *db = open_db(db_path);
  tap_ok(q_num(db,
               "SELECT count(*) FROM runs WHERE kind = 'skew' AND backend = 'sim' AND finished_at "
               "IS NOT NULL") == 1,
         "one finished skew run");
  /* 2 ops x 2 shapes x 2 modes x 4 delays, detcoll only (the sim has no NCCL). */
  tap_ok(q_num(db, "SELECT count(*) FROM configs WHERE impl = 'detcoll' AND skew_rank = 2") == 32 &&
             q_num(db, "SELECT count(*) FROM configs") == 32,
         "32 configs stored");
  tap_ok(q_num(db, "SELECT count(*) FROM samples") == 32 * 20 * 4,
         "every rank's every trial stored");
  tap_ok(q_num(db,
               "SELECT count(*) FROM skew_summaries s JOIN configs c ON c.id = s.config_id"
               " WHERE s.requested_ns = c.skew_ns AND s.bytes = c.bytes AND s.trials = 20") == 32,
         "a summary per config, matching it");
  tap_ok(q_num(db, "SELECT count(*) FROM skew_fits") == 8 * 4 &&
             q_num(db, "SELECT count(*) FROM skew_fits WHERE n = 80") == 32,
         "4 role fits per (op, shape, mode), over 80 trials each");
  tap_ok(q_num(db,
               "SELECT count(*) FROM skew_summaries WHERE requested_ns >= 50000 AND"
               " abs(delay_median_ns - requested_ns) > 0.01 * requested_ns") == 0,
         "measured delay within 1%% of requested at >= 50 us");
  tap_ok(q_num(db,
               "SELECT count(*) FROM skew_summaries WHERE requested_ns >= 250000 AND"
               " abs(wait_median_ns - delay_median_ns) > 0.05 * delay_median_ns") == 0,
         "max - last tracks the delay within 5%% at 250 us and 1 ms");
  tap_ok(q_num(db,
               "SELECT count(*) FROM skew_summaries WHERE requested_ns > 0 AND"
               " injected_median_ns > 0.5 * requested_ns") == 0 &&
             q_num(db,
                   "SELECT count(*) FROM skew_summaries WHERE requested_ns > 0 AND"
                   " max_median_ns < requested_ns") == 0,
         "the injected rank does not wait; the slowest rank waits the delay");
  tap_ok(q_num(db, "SELECT min(slope) FROM skew_fits WHERE role IN ('max', 'wait')") > 0.97 &&
             q_num(db, "SELECT max(slope) FROM skew_fits WHERE role IN ('max', 'wait')") < 1.03 &&
             q_num(db, "SELECT max(abs(slope)) FROM skew_fits WHERE role IN ('injected', 'last')") <
                 0.03,
         "fit slopes: max and wait ~1, injected and last ~0");
  tap_ok(q_num(db,
               "SELECT count(*) FROM skew_fits WHERE slope_lo > slope OR slope_hi < slope OR"
               " intercept_lo > intercept OR intercept_hi < intercept OR confidence <> 0.95") == 0,
         "fit intervals hold their estimates");
  sqlite3_close(db);

  tap_ok(out && strstr(out, "measured delay (us)") && strstr(out, "wait = max - last (us)") &&
             strstr(out, "impl     op             shape         mode   req (us)"),
         "the table has its headings");
  tap_ok(out && strstr(out, "detcoll  all_reduce     8x8192        eager      0.00 |") &&
             strstr(out, "detcoll  reduce_scatter 16x8192       graph   1000.00 |"),
         "the table has aligned rows in us");
  tap_ok(out && strstr(out, "nccl     all_reduce     skipped") &&
             strstr(out, "nccl     reduce_scatter skipped") && err && strstr(err, "skipping nccl"),
         "nccl is skipped with a warning and noted in the table");
  tap_ok(out && strstr(out, "Sensitivity: residence = intercept + slope x measured delay"),
         "the fits table is printed");
  if (out) tap_diag("table:\n%s", out);
  free(out);
  free(err);

  if (have_python()) {
    char cmd[1200];
    snprintf(cmd, sizeof(cmd),
             "python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));"
             " s=d[\"summaries\"]; f=d[\"fits\"];"
             " assert d[\"backend\"]==\"sim\" and d[\"world\"]==4 and d[\"skew_rank\"]==2;"
             " assert len(s)==32 and len(f)==32 and len(d[\"skipped\"])==2, (len(s), len(f));"
             " assert "
             "all(x[\"delay\"][\"p10_ns\"]<=x[\"delay\"][\"median_ns\"]<=x[\"delay\"][\"p90_ns\"] "
             "for x in s);"
             " assert {x[\"role\"] for x in f}=={\"max\",\"injected\",\"last\",\"wait\"}' '%s'",
             json);
    tap_ok(system(cmd) == 0, "the JSON parses and holds the summaries, fits and skipped impls");
  } else {
    tap_diag("python3 missing: JSON parse not checked");
    char *j = tap_slurp(json, NULL);
    tap_ok(j && j[0] == '{' && strstr(j, "\"summaries\": ["), "the JSON was written");
    free(j);
  }

  /* Random skew: a random rank per trial; summaries and fits still hold. */
  const char *rargs[] = {"skew",        "--backend",  "sim",
                         "--world",     "4",          "--random-skew",
                         "--shapes",    "8x8192",     "--skew-delays-us",
                         "0",           "250",        "--mode",
                         "eager",       "--impls", "detcoll",
                         "--trials",    "40",         "--seed",
                         "11",          "--db",       db_path,
                         "--no-report", NULL};
  rc = run_skew(tap_path("rand.out"), tap_path("rand.err"), rargs);
  db = open_db(db_path);
  tap_ok(rc == 0 && q_num(db, "SELECT count(*) FROM runs WHERE kind = 'skew'") == 2,
         "random skew run exits 0");
  tap_ok(q_num(db,
               "SELECT count(DISTINCT s.rank) FROM samples s JOIN configs c ON c.id = s.config_id"
               " WHERE c.skew_rank = -2 AND c.skew_ns = 250000 AND s.delay_ns > 0") >= 3,
         "random skew delays several ranks");
  tap_ok(
      q_num(db,
            "SELECT count(*) FROM skew_summaries WHERE skew_rank = -2 AND requested_ns = 250000"
            " AND injected_median_ns < 0.5 * requested_ns AND abs(wait_median_ns - delay_median_ns)"
            " < 0.05 * delay_median_ns") == 1,
      "random skew: the injected role follows the delayed rank");
  sqlite3_close(db);

  /* A skew-only database gets a report with the skew plots. */
  char gp[4096];
  if (tune_report_find_gnuplot(gp, sizeof(gp)) != tune_ok) {
    tap_diag("gnuplot missing: skew report not checked");
    return;
  }
  const char *only = tap_path("only.db");
  char rdir[512];
  snprintf(rdir, sizeof(rdir), "%s", tap_path("report"));
  const char *pargs[] = {"skew",       "--backend",        "sim",      "--shapes", "8x8192",
                         "16384x8192", "--skew-delays-us", "0",        "50",       "250",
                         "--impls", "detcoll",          "--trials", "10",       "--db",
                         only,         "--report-dir",     rdir,       NULL};
  rc = run_skew(tap_path("rep.out"), tap_path("rep.err"), pargs);
  char path[600];
  snprintf(path, sizeof(path), "%s/report.md", rdir);
  char *md = tap_slurp(path, NULL);
  tap_ok(rc == 0 && md && strstr(md, "## Skew sensitivity (skew run 1)") &&
             strstr(md, "(skew_all_reduce_bf16_w2_8x8192.png)") &&
             strstr(md, "(skew_all_reduce_bf16_w2_16384x8192.png)") && strstr(md, "SIMULATED") &&
             !strstr(md, "## Latency"),
         "a skew-only database gives a skew report (rc %d)", rc);
  tap_ok(
      md && strstr(md, "| detcoll | graph | max | ") && strstr(md, "| detcoll | eager | 250.00 | "),
      "the report tabulates summaries and fits");
  free(md);
  int drawn = 1;
  for (int i = 0; i < 2; i++) {
    snprintf(path, sizeof(path), "%s/skew_all_reduce_bf16_w2_8x8192.%s", rdir, i ? "svg" : "png");
    struct stat sb;
    drawn &= stat(path, &sb) == 0 && sb.st_size > 0;
  }
  tap_ok(drawn, "the skew plot is drawn as PNG and SVG");
}

int main(void) {
  if (tap_scratch_open("test_skew") != 0) return 1;
  tune_rng_seed(&rng, 0x5ce3);
  test_roles();
  test_fit();
  test_bad_input();
  test_command();
  int status = tap_done();
  tap_scratch_close(status);
  return status;
}
