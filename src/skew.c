/* skew.c: `tune skew` -- rank-skew calibration (skew.h): per-trial roles,
 * summaries and sensitivity fits (pure), the summary table and JSON
 * (formatting), and the command that measures, stores and reports. */
#include "skew.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"
#include "engine.h"
#include "launch.h"
#include "report.h"

static const char *const q_names[TUNE_SKEW_NQ] = {"max", "injected", "last", "wait", "delay"};

const char *tune_skew_q_name(tune_skew_q q) {
  return (unsigned)q < TUNE_SKEW_NQ ? q_names[q] : NULL;
}

/* ---- per-trial roles, summaries, fits ------------------------------------- */

int tune_skew_injected_rank(const int64_t *delay_row, int world, int skew_rank) {
  int best = -1;
  for (int r = 0; r < world; r++)
    if (delay_row[r] > 0 && (best < 0 || delay_row[r] > delay_row[best])) best = r;
  if (best >= 0) return best;
  return skew_rank >= 0 && skew_rank < world ? skew_rank : 0;
}

tune_result tune_skew_per_trial(const int64_t *elapsed, const int64_t *delay, int trials, int world,
                                int skew_rank, double *out) {
  if (elapsed == NULL || delay == NULL || out == NULL || trials < 1 || world < 1)
    return tune_err_arg;
  for (int t = 0; t < trials; t++) {
    const int64_t *el = elapsed + (size_t)t * (size_t)world;
    const int64_t *de = delay + (size_t)t * (size_t)world;
    int64_t hi = el[0], lo = el[0];
    for (int r = 1; r < world; r++) {
      if (el[r] > hi) hi = el[r];
      if (el[r] < lo) lo = el[r];
    }
    int inj = tune_skew_injected_rank(de, world, skew_rank);
    out[(size_t)TUNE_SKEW_MAX * trials + t] = (double)hi;
    out[(size_t)TUNE_SKEW_INJECTED * trials + t] = (double)el[inj];
    out[(size_t)TUNE_SKEW_LAST * trials + t] = (double)lo;
    out[(size_t)TUNE_SKEW_WAIT * trials + t] = (double)(hi - lo);
    out[(size_t)TUNE_SKEW_DELAY * trials + t] = (double)de[inj];
  }
  return tune_ok;
}

void tune_skew_summarize(const double *per_trial, int trials, tune_skew_stat out[TUNE_SKEW_NQ]) {
  for (int q = 0; q < TUNE_SKEW_NQ; q++) {
    const double *x = per_trial + (size_t)q * (size_t)trials;
    out[q].median_ns = tune_median(x, (size_t)trials);
    out[q].p10_ns = tune_percentile(x, (size_t)trials, 10);
    out[q].p90_ns = tune_percentile(x, (size_t)trials, 90);
  }
}

tune_result tune_skew_series_add(tune_skew_series *s, const double *per_trial, int trials) {
  if (s == NULL || per_trial == NULL || trials < 1) return tune_err_arg;
  if (s->n + (size_t)trials > s->cap) {
    size_t cap = s->cap ? s->cap : 256;
    while (cap < s->n + (size_t)trials) cap *= 2;
    for (int q = 0; q < TUNE_SKEW_NQ; q++) {
      double *grown = realloc(s->q[q], cap * sizeof(*grown));
      if (grown == NULL) return tune_err_system;
      s->q[q] = grown;
    }
    s->cap = cap;
  }
  for (int q = 0; q < TUNE_SKEW_NQ; q++)
    memcpy(s->q[q] + s->n, per_trial + (size_t)q * (size_t)trials, (size_t)trials * sizeof(double));
  s->n += (size_t)trials;
  return tune_ok;
}

void tune_skew_series_clear(tune_skew_series *s) { s->n = 0; }

void tune_skew_series_free(tune_skew_series *s) {
  for (int q = 0; q < TUNE_SKEW_NQ; q++) free(s->q[q]);
  memset(s, 0, sizeof(*s));
}

tune_result tune_skew_fit(const tune_skew_series *s, tune_skew_q role, double confidence,
                          tune_linfit_result *r) {
  if (s == NULL || r == NULL || (unsigned)role >= TUNE_SKEW_NROLES || s->n < 3) return tune_err_arg;
  const double *x = s->q[TUNE_SKEW_DELAY];
  size_t i = 1;
  while (i < s->n && x[i] == x[0]) i++;
  if (i == s->n) return tune_err_arg;
  return tune_linfit(x, s->q[role], s->n, confidence, r);
}

/* ---- the table and the JSON ------------------------------------------------- */

void tune_skew_results_free(tune_skew_results *r) {
  free(r->sum);
  free(r->fit);
  memset(r, 0, sizeof(*r));
}

static const char *shape_text(uint64_t rows, uint64_t cols, char *buf, size_t len) {
  snprintf(buf, len, "%" PRIu64 "x%" PRIu64, rows, cols);
  return buf;
}

/* The columns of the summary table, in print order: each a median, p10 and
 * p90 under one heading. */
static const struct {
  tune_skew_q q;
  const char *heading;
} table_cols[] = {
    {TUNE_SKEW_DELAY, "measured delay (us)"},   {TUNE_SKEW_MAX, "max residence (us)"},
    {TUNE_SKEW_INJECTED, "injected rank (us)"}, {TUNE_SKEW_LAST, "last arriver (us)"},
    {TUNE_SKEW_WAIT, "wait = max - last (us)"},
};
#define NCOLS (sizeof(table_cols) / sizeof(table_cols[0]))

static const tune_skew_stat *summary_stat(const tune_skew_summary_row *s, tune_skew_q q) {
  const tune_skew_stat *v[TUNE_SKEW_NQ] = {&s->max, &s->injected, &s->last, &s->wait, &s->delay};
  return v[q];
}

void tune_skew_print(FILE *out, const tune_skew_opts *o, const char *backend_note,
                     const tune_skew_results *r) {
  char shape[48], rank[48];
  if (o->skew_rank == -2)
    snprintf(rank, sizeof(rank), "a random rank each trial");
  else
    snprintf(rank, sizeof(rank), "rank %d", o->skew_rank);
  fprintf(out,
          "\ntune skew: run %" PRId64
          ", backend %s%s, world %d, %s, delay on %s, %d trials "
          "(+%d warm-up) per config\n"
          "Per trial: max = slowest rank's residence, injected = the delayed rank's, last = the "
          "smallest (the rank that waited least), wait = max - last.\n"
          "Medians over trials, with p10 and p90.\n\n",
          r->run_id, o->backend, backend_note, o->world, dc_dtype_name(o->dtype), rank, o->trials,
          o->warmup);
  fprintf(out, "%-8s %-14s %-13s %-5s %9s", "", "", "", "", "");
  for (size_t c = 0; c < NCOLS; c++) fprintf(out, " | %-26s", table_cols[c].heading);
  fprintf(out, "\n%-8s %-14s %-13s %-5s %9s", "impl", "op", "shape", "mode", "req (us)");
  for (size_t c = 0; c < NCOLS; c++) fprintf(out, " | %8s %8s %8s", "median", "p10", "p90");
  fputc('\n', out);
  for (size_t i = 0; i < r->nsum; i++) {
    const tune_skew_summary_row *s = &r->sum[i];
    fprintf(out, "%-8s %-14s %-13s %-5s %9.2f", s->impl, dc_op_name(s->op),
            shape_text(s->rows, s->cols, shape, sizeof(shape)), dc_mode_name(s->mode),
            (double)s->requested_ns * 1e-3);
    for (size_t c = 0; c < NCOLS; c++) {
      const tune_skew_stat *v = summary_stat(s, table_cols[c].q);
      fprintf(out, " | %8.2f %8.2f %8.2f", v->median_ns * 1e-3, v->p10_ns * 1e-3, v->p90_ns * 1e-3);
    }
    fputc('\n', out);
  }
  for (size_t i = 0; i < r->nskipped; i++)
    fprintf(out, "%-8s %-14s skipped: the %s backend cannot measure it at world %d\n",
            r->skipped[i].impl, dc_op_name(r->skipped[i].op), o->backend, o->world);
  if (r->nfit == 0) {
    fprintf(out, "\nNo sensitivity fits: they need at least two different delays.\n");
    return;
  }
  fprintf(out,
          "\nSensitivity: residence = intercept + slope x measured delay, over every trial of "
          "every delay (%g%% intervals)\n\n"
          "%-8s %-14s %-13s %-5s %-8s %8s %-20s %10s %-22s %7s %6s\n",
          o->confidence * 100, "impl", "op", "shape", "mode", "role", "slope", " [lo, hi]",
          "icpt (us)", " [lo, hi]", "r2", "n");
  for (size_t i = 0; i < r->nfit; i++) {
    const tune_skew_fit_row *f = &r->fit[i];
    char ci[64], ici[64];
    snprintf(ci, sizeof(ci), " [%.4f, %.4f]", f->slope_lo, f->slope_hi);
    snprintf(ici, sizeof(ici), " [%.2f, %.2f]", f->intercept_lo * 1e-3, f->intercept_hi * 1e-3);
    fprintf(out, "%-8s %-14s %-13s %-5s %-8s %8.4f %-20s %10.2f %-22s %7.4f %6" PRId64 "\n",
            f->impl, dc_op_name(f->op), shape_text(f->rows, f->cols, shape, sizeof(shape)),
            dc_mode_name(f->mode), f->role, f->slope, ci, f->intercept * 1e-3, ici, f->r2, f->n);
  }
}

/* A finite double, or null. */
static void json_num(FILE *out, const char *key, double v, const char *after) {
  if (isfinite(v))
    fprintf(out, "\"%s\": %.17g%s", key, v, after);
  else
    fprintf(out, "\"%s\": null%s", key, after);
}

/* The key columns every summary and fit row shares. */
static void json_key(FILE *out, const char *impl, dc_op op, dc_dtype dtype, int world,
                     uint64_t bytes, uint64_t rows, uint64_t cols, dc_mode mode) {
  fprintf(out,
          "\"impl\": \"%s\", \"op\": \"%s\", \"dtype\": \"%s\", \"world\": %d, \"bytes\": %" PRIu64
          ", \"rows\": %" PRIu64 ", \"cols\": %" PRIu64 ", \"mode\": \"%s\", ",
          impl, dc_op_name(op), dc_dtype_name(dtype), world, bytes, rows, cols, dc_mode_name(mode));
}

void tune_skew_write_json(FILE *out, const tune_skew_opts *o, const tune_skew_results *r) {
  fprintf(out,
          "{\n  \"run_id\": %" PRId64
          ",\n  \"backend\": \"%s\",\n  \"world\": %d,\n"
          "  \"dtype\": \"%s\",\n  \"skew_rank\": %d,\n  \"random_skew\": %s,\n"
          "  \"trials\": %d,\n  \"warmup\": %d,\n  \"seed\": %" PRIu64
          ",\n"
          "  \"confidence\": %.17g,\n  \"summaries\": [",
          r->run_id, o->backend, o->world, dc_dtype_name(o->dtype), o->skew_rank,
          o->skew_rank == -2 ? "true" : "false", o->trials, o->warmup, o->seed, o->confidence);
  for (size_t i = 0; i < r->nsum; i++) {
    const tune_skew_summary_row *s = &r->sum[i];
    fprintf(out, "%s\n    {\"config_id\": %" PRId64 ", ", i ? "," : "", s->config_id);
    json_key(out, s->impl, s->op, s->dtype, s->world, s->bytes, s->rows, s->cols, s->mode);
    fprintf(out, "\"skew_rank\": %d, \"requested_ns\": %" PRId64 ", \"trials\": %d", s->skew_rank,
            s->requested_ns, s->trials);
    for (int q = 0; q < TUNE_SKEW_NQ; q++) {
      const tune_skew_stat *v = summary_stat(s, (tune_skew_q)q);
      fprintf(out, ",\n     \"%s\": {", q_names[q]);
      json_num(out, "median_ns", v->median_ns, ", ");
      json_num(out, "p10_ns", v->p10_ns, ", ");
      json_num(out, "p90_ns", v->p90_ns, "}");
    }
    fputc('}', out);
  }
  fprintf(out, "%s],\n  \"fits\": [", r->nsum ? "\n  " : "");
  for (size_t i = 0; i < r->nfit; i++) {
    const tune_skew_fit_row *f = &r->fit[i];
    fprintf(out, "%s\n    {", i ? "," : "");
    json_key(out, f->impl, f->op, f->dtype, f->world, f->bytes, f->rows, f->cols, f->mode);
    fprintf(out, "\"role\": \"%s\", ", f->role);
    json_num(out, "slope", f->slope, ", ");
    json_num(out, "intercept_ns", f->intercept, ", ");
    json_num(out, "slope_lo", f->slope_lo, ", ");
    json_num(out, "slope_hi", f->slope_hi, ", ");
    json_num(out, "intercept_lo_ns", f->intercept_lo, ", ");
    json_num(out, "intercept_hi_ns", f->intercept_hi, ", ");
    json_num(out, "r2", f->r2, ", ");
    fprintf(out, "\"n\": %" PRId64 ", ", f->n);
    json_num(out, "confidence", f->confidence, "}");
  }
  fprintf(out, "%s],\n  \"skipped\": [", r->nfit ? "\n  " : "");
  for (size_t i = 0; i < r->nskipped; i++)
    fprintf(out, "%s{\"impl\": \"%s\", \"op\": \"%s\"}", i ? ", " : "", r->skipped[i].impl,
            dc_op_name(r->skipped[i].op));
  fprintf(out, "]\n}\n");
}

/* ---- the command line ------------------------------------------------------- */

static const char *const skew_impls[] = {"detcoll", "nccl", "nccl_symm"};
_Static_assert(sizeof(skew_impls) / sizeof(skew_impls[0]) == TUNE_SKEW_MAX_IMPLS,
               "TUNE_SKEW_MAX_IMPLS is the number of impls");

/* The largest bytes per rank a shape may ask for. */
#define SKEW_MAX_BYTES (64ull << 30)

static const char *skew_usage =
    "usage: tune skew [options]\n"
    "\n"
    "Rank-skew calibration: before its collective, one rank spins on %globaltimer\n"
    "(outside its timed region) while the others wait inside theirs. Per trial and\n"
    "rank it records the requested and measured delay and the residence (events\n"
    "around the collective); per (impl, op, shape, mode, delay) it summarizes the\n"
    "max, injected-rank and last-arriver (minimum) residence, max - last (time\n"
    "spent waiting) and the measured delay as median, p10 and p90; and per (impl,\n"
    "op, shape, mode) it fits each residence against the measured delay (slope,\n"
    "intercept, confidence intervals). Everything goes into the database (run kind\n"
    "'skew', tables skew_summaries and skew_fits), a table on stdout, --json, and\n"
    "the report's skew plots.\n"
    "\n";

static const char *skew_outro =
    "\n"
    "Multi-valued options take several words (--shapes 8x8192 16384x8192) or a\n"
    "comma list. Logging: TUNE_DEBUG=WARN|INFO|TRACE.\n";

/* A word that continues a multi-valued option: not an option, except that a
 * negative number is a value (so that it is refused as one). */
static int is_value(const char *s, int numeric) {
  if (s[0] != '-') return 1;
  return numeric && (s[1] == '.' || (s[1] >= '0' && s[1] <= '9'));
}

/* Parse "ROWSxCOLS". */
static int parse_shape(const char *s, tune_skew_shape *out) {
  const char *x = strchr(s, 'x');
  char rows[32];
  int64_t r, c;
  if (x == NULL || (size_t)(x - s) >= sizeof(rows) || strchr(x + 1, 'x') != NULL) return -1;
  memcpy(rows, s, (size_t)(x - s));
  rows[x - s] = '\0';
  if (tune_parse_int(rows, 1, INT64_MAX, &r) != tune_ok ||
      tune_parse_int(x + 1, 1, INT64_MAX, &c) != tune_ok)
    return -1;
  out->rows = (uint64_t)r;
  out->cols = (uint64_t)c;
  return 0;
}

/* Parse a delay in microseconds into ns; its error message into why. */
static int parse_delay(const char *s, int64_t *ns, const char **why) {
  char *end;
  errno = 0;
  double us = tune_strtod(s, &end);
  if (errno || end == s || *end || !isfinite(us)) {
    *why = "is not a number";
    return -1;
  }
  if (us < 0) {
    *why = "is negative";
    return -1;
  }
  if (us * 1e3 > (double)TUNE_SKEW_MAX_DELAY_NS) {
    *why = "is over 10 s (10000000 us)";
    return -1;
  }
  *ns = llround(us * 1e3);
  return 0;
}

/* One value of a multi-valued option (a word may hold a comma list). */
typedef int (*value_fn)(tune_skew_opts *o, const char *v);

static int add_shape(tune_skew_opts *o, const char *v) {
  tune_skew_shape sh;
  if (parse_shape(v, &sh) != 0)
    return tune_usage_error("skew", "--shapes: '%s' is not ROWSxCOLS (two positive element counts)",
                            v);
  if (o->nshapes == TUNE_SKEW_MAX_SHAPES)
    return tune_usage_error("skew", "--shapes: more than %d shapes", TUNE_SKEW_MAX_SHAPES);
  o->shapes[o->nshapes++] = sh;
  return 0;
}

static int add_delay(tune_skew_opts *o, const char *v) {
  const char *why = NULL;
  int64_t ns;
  if (parse_delay(v, &ns, &why) != 0)
    return tune_usage_error("skew", "--skew-delays-us: '%s' %s", v, why);
  if (o->ndelays == TUNE_SKEW_MAX_DELAYS)
    return tune_usage_error("skew", "--skew-delays-us: more than %d delays", TUNE_SKEW_MAX_DELAYS);
  for (int i = 0; i < o->ndelays; i++)
    if (o->delays_ns[i] == ns)
      return tune_usage_error("skew", "--skew-delays-us: '%s' is given twice", v);
  o->delays_ns[o->ndelays++] = ns;
  return 0;
}

static int add_impl(tune_skew_opts *o, const char *v) {
  size_t k = 0;
  while (k < TUNE_SKEW_MAX_IMPLS && strcmp(v, skew_impls[k]) != 0) k++;
  if (k == TUNE_SKEW_MAX_IMPLS)
    return tune_usage_error("skew", "--impls: unknown impl '%s' (detcoll, nccl, nccl_symm)", v);
  for (int i = 0; i < o->nimpls; i++)
    if (strcmp(o->impls[i], v) == 0)
      return tune_usage_error("skew", "--impls: '%s' is given twice", v);
  o->impls[o->nimpls++] = skew_impls[k];
  return 0;
}

static int add_op(tune_skew_opts *o, const char *v) {
  int op = dc_op_parse(v);
  if (op < 0) return tune_usage_error("skew", "--op: unknown op '%s'", v);
  o->ops |= 1u << op;
  return 0;
}

/* Feed optarg and the value words after it to fn, each split at commas. */
static int take_values(int argc, char **argv, tune_skew_opts *o, value_fn fn, int numeric,
                       const char *opt) {
  const char *first = optarg;
  int n = 0;
  for (;;) {
    char buf[256];
    if (snprintf(buf, sizeof(buf), "%s", first) >= (int)sizeof(buf))
      return tune_usage_error("skew", "%s: '%.32s...' is too long", opt, first);
    int rc = tune_check_list_items("skew", opt, first);
    if (rc) return rc;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
      rc = fn(o, tok);
      if (rc) return rc;
      n++;
    }
    if (optind >= argc || !is_value(argv[optind], numeric)) break;
    first = argv[optind++];
  }
  return n ? 0 : tune_usage_error("skew", "%s needs a value", opt);
}

/* The forced path of o for op: one of op's that tune skew can run (its
 * detcoll impl has no registered buffers). */
static int check_forced_path(const tune_skew_opts *o, dc_op op) {
  if (o->path == DC_PATH_AUTO) return 0;
  if (!dc_path_valid(op, o->path))
    return tune_usage_error("skew", "--path: %s is not a path of %s", dc_path_name(o->path),
                            dc_op_name(op));
  if (dc_path_needs_reg(op, o->path))
    return tune_usage_error("skew",
                            "--path: %s of %s needs registered buffers, which tune skew does not "
                            "use (its detcoll is the unregistered impl)",
                            dc_path_name(o->path), dc_op_name(op));
  return 0;
}

/* Checks across options, once all are read. */
static int check_opts(tune_skew_opts *o, int rank_given, int random_given) {
  if (random_given && rank_given)
    return tune_usage_error("skew", "--skew-rank and --random-skew exclude each other");
  /* -2 is how a random rank is kept, not a rank --skew-rank can name. */
  if (random_given)
    o->skew_rank = -2;
  else if (!rank_given)
    o->skew_rank = o->world - 1;
  else if (o->skew_rank < 0 || o->skew_rank >= o->world)
    return tune_usage_error("skew", "--skew-rank: %d is outside the world (ranks 0..%d)",
                            o->skew_rank, o->world - 1);
  for (int op = 0; op < DC_OP_COUNT; op++) {
    if (!(o->ops & 1u << op)) continue;
    int rc = check_forced_path(o, (dc_op)op);
    if (rc) return rc;
    for (int i = 0; i < o->nshapes; i++) {
      const tune_skew_shape *s = &o->shapes[i];
      uint64_t elems = s->rows, bytes;
      if (__builtin_mul_overflow(s->rows, s->cols, &elems) ||
          __builtin_mul_overflow(elems, (uint64_t)dc_dtype_size(o->dtype), &bytes) ||
          bytes > SKEW_MAX_BYTES)
        return tune_usage_error("skew",
                                "--shapes: %" PRIu64 "x%" PRIu64 " is over 64G bytes per rank",
                                s->rows, s->cols);
      if (o->path != DC_PATH_AUTO && bytes > dc_path_max_bytes((dc_op)op, o->path))
        return tune_usage_error("skew",
                                "--shapes: %" PRIu64 "x%" PRIu64 " (%" PRIu64
                                " bytes per rank) is over the %s path's limit for %s (%" PRIu64
                                " bytes)",
                                s->rows, s->cols, bytes, dc_path_name(o->path),
                                dc_op_name((dc_op)op), dc_path_max_bytes((dc_op)op, o->path));
      if (op == DC_OP_REDUCE_SCATTER && elems % (uint64_t)o->world != 0)
        return tune_usage_error("skew",
                                "--shapes: %" PRIu64 "x%" PRIu64 " (%" PRIu64
                                " elements) does not divide into %d ranks for reduce_scatter",
                                s->rows, s->cols, elems, o->world);
      for (int j = 0; j < i; j++)
        if (o->shapes[j].rows * o->shapes[j].cols == elems)
          return tune_usage_error("skew",
                                  "--shapes: %" PRIu64 "x%" PRIu64 " and %" PRIu64 "x%" PRIu64
                                  " are the same size per rank",
                                  o->shapes[j].rows, o->shapes[j].cols, s->rows, s->cols);
    }
  }
  return 0;
}

/* The options as parsed, and what the checks after parsing need to know. */
typedef struct {
  tune_skew_opts o;
  int rank_given, random_given;
  int64_t trials, warmup, seed; /* as given on the command line; -1: not given */
} skew_args;

/* --trials, --warmup, --seed: the command line over TUNE_TRIALS,
 * TUNE_WARMUP and TUNE_SEED over skew's own defaults, as the main job's. */
TUNE_PARAM(SkewTrials, "TRIALS", 50, TUNE_TRIALS_MIN, TUNE_TRIALS_MAX);
TUNE_PARAM(SkewWarmup, "WARMUP", 10, 0, TUNE_WARMUP_MAX);
TUNE_PARAM(SkewSeed, "SEED", 1, 0, INT64_MAX);

/* given (>= 0: from the command line), else p's value; a usage error status
 * if p's environment variable is not a number in its range. */
static int skew_param(int64_t given, tune_param *p, int64_t *out) {
  if (given < 0 && tune_param_load(p) != tune_ok) return TUNE_EXIT_USAGE;
  *out = given >= 0 ? given : tune_param_get(p);
  return 0;
}

/* The multi-valued options, by the spec row's name: where each value goes
 * and whether a negative number is a value (to be refused as one). */
static const struct {
  const char *name, *opt;
  value_fn add;
  int numeric;
} skew_multi[] = {{"op", "--op", add_op, 0},
                  {"shapes", "--shapes", add_shape, 0},
                  {"skew-delays-us", "--skew-delays-us", add_delay, 1},
                  {"impls", "--impls", add_impl, 0},
                  {"backends", "--impls", add_impl, 0}};

/* The words of a multi-valued option. Its first occurrence replaces the
 * default: the mask or count at the row's offset starts from zero (the
 * impls count, shared by two spellings, only once). */
static int opt_values(void *out, const tune_opt *spec, const char *v, int seen, int argc, char **argv) {
  skew_args *a = out;
  size_t k = 0;
  (void)v;
  while (strcmp(skew_multi[k].name, spec->name) != 0) k++;
  if (strcmp(spec->name, "backends") == 0)
    fprintf(stderr, "tune skew: --backends is deprecated (it names impls, not --backend): use --impls\n");
  int *field = (int *)((char *)out + spec->offset);
  if (!seen && (field != &a->o.nimpls || a->o.nimpls == TUNE_SKEW_MAX_IMPLS + 1)) *field = 0;
  return take_values(argc, argv, &a->o, skew_multi[k].add, skew_multi[k].numeric, skew_multi[k].opt);
}

static int opt_dtype(void *out, const tune_opt *spec, const char *v, int seen, int argc, char **argv) {
  (void)spec, (void)seen, (void)argc, (void)argv;
  int d = dc_dtype_parse(v);
  if (d < 0) return tune_usage_error("skew", "--dtype: unknown dtype '%s'", v);
  ((skew_args *)out)->o.dtype = (dc_dtype)d;
  return 0;
}

static int opt_mode(void *out, const tune_opt *spec, const char *v, int seen, int argc, char **argv) {
  (void)spec, (void)seen, (void)argc, (void)argv;
  int m = strcmp(v, "both") == 0 ? DC_MODE_COUNT : dc_mode_parse(v);
  if (m < 0) return tune_usage_error("skew", "--mode: unknown mode '%s' (eager, graph, both)", v);
  ((skew_args *)out)->o.modes = m == DC_MODE_COUNT ? (1u << DC_MODE_COUNT) - 1 : 1u << m;
  return 0;
}

static int opt_path(void *out, const tune_opt *spec, const char *v, int seen, int argc, char **argv) {
  (void)spec, (void)seen, (void)argc, (void)argv;
  int p = dc_path_parse(v);
  if (p < 0) return tune_usage_error("skew", "--path: unknown path '%s'", v);
  ((skew_args *)out)->o.path = (dc_path)p;
  return 0;
}

static int opt_rank(void *out, const tune_opt *spec, const char *v, int seen, int argc, char **argv) {
  (void)seen, (void)argc, (void)argv;
  skew_args *a = out;
  int64_t r;
  int rc = tune_opts_int("skew", spec, v, &r);
  a->o.skew_rank = (int)r;
  a->rank_given = 1;
  return rc;
}

#define SKEW_MULTI_ROW(n, al, a, field, h) \
  {.name = n, .alias = al, .kind = TUNE_OPT_CALL, .arg = a, .offset = offsetof(skew_args, field), .call = opt_values, .help = h}

static const tune_opt skew_spec[] = {
    SKEW_MULTI_ROW("op", "ops", "LIST", o.ops,
                   "all_reduce, all_gather, reduce_scatter (comma list;\ndefault all_reduce); also --ops"),
    SKEW_MULTI_ROW("shapes", NULL, "S...", o.nshapes,
                      "ROWSxCOLS element shapes, bytes per rank = ROWS*COLS*\ndtype size, each rank's input "
                      "(reduce_scatter: the\nwhole input, a multiple of world elements); default 8x8192"),
    TUNE_OPT_CALL_ROW("dtype", "dtypes", "D", opt_dtype, "bf16, fp16 or fp32 (default bf16); also --dtypes"),
    SKEW_MULTI_ROW("skew-delays-us", NULL, "D...", o.ndelays,
                      "delays in microseconds, 0..10000000 (default 0 50 250 1000)"),
    {.name = "skew-rank",
     .kind = TUNE_OPT_CALL,
     .arg = "R",
     .lo = -1000000,
     .hi = 1000000,
     .call = opt_rank,
     .help = "the delayed rank, 0..world-1 (default world-1)"},
    TUNE_OPT_FLAG_ROW("random-skew", skew_args, random_given,
                      "delay a random rank each trial (seeded by --seed) by the\nfull delay of each "
                      "--skew-delays-us value"),
    TUNE_OPT_CALL_ROW("mode", "modes", "M", opt_mode,
                      "eager, graph or both (default both; graph mode captures\none delay and one collective "
                      "per graph); also --modes"),
    SKEW_MULTI_ROW("impls", NULL, "LIST", o.nimpls,
                      "detcoll, nccl, nccl_symm (default detcoll,nccl); one the\nbackend cannot run is skipped "
                      "with a warning (--backends,\nthe old name, still works and warns)"),
    SKEW_MULTI_ROW("backends", NULL, "LIST", o.nimpls, NULL),
    TUNE_OPT_CALL_ROW("path", NULL, "P", opt_path, "force detcoll's kernel path (default auto)"),
    TUNE_OPT_CHOICE_ROW("backend", "gpu|sim", skew_args, o.backend, "gpu|sim",
                        "measure the GPUs (default) or the sim model"),
    TUNE_OPT_INT_ROW("world", "gpus", "W", skew_args, o.world, 2, 1024, "ranks (default 2); also --gpus"),
    TUNE_OPT_FLAG_ROW("virtual-ranks", skew_args, o.virtual_ranks, "place every rank on GPU 0"),
    TUNE_OPT_CHOICE_ROW("launcher", "L", skew_args, o.launcher, "threads|mpi", "threads or mpi (gpu backend)"),
    TUNE_OPT_INT_ROW("trials", NULL, "N", skew_args, trials, TUNE_TRIALS_MIN, TUNE_TRIALS_MAX,
                     "trials per configuration (default 50; env TUNE_TRIALS)"),
    TUNE_OPT_INT_ROW("warmup", NULL, "N", skew_args, warmup, 0, TUNE_WARMUP_MAX,
                     "warm-up calls (default 10; env TUNE_WARMUP)"),
    TUNE_OPT_INT_ROW("seed", NULL, "N", skew_args, seed, 0, INT64_MAX,
                     "seed of data, noise and random ranks (default 1; env\nTUNE_SEED)"),
    TUNE_OPT_DOUBLE_ROW("confidence", "C", skew_args, o.confidence, 0.5, 0.9999,
                        "level of the fit intervals (default 0.95)"),
    TUNE_OPT_STRING_ROW("db", NULL, "FILE", skew_args, o.db_path, "SQLite database (default tune-results/tune.db)"),
    TUNE_OPT_STRING_ROW("json", NULL, "FILE", skew_args, o.json_path, "also write the summaries and fits as JSON"),
    TUNE_OPT_STRING_ROW("report-dir", "out", "DIR", skew_args, o.report_dir,
                        "report folder (default: <db folder>/report); also --out"),
    TUNE_OPT_FLAG_ROW("no-report", skew_args, o.no_report, "skip the report"),
};

int tune_skew_parse(int argc, char **argv, tune_skew_opts *o) {
  skew_args a = {.o = {.backend = "gpu",
                       .ops = 1u << DC_OP_ALL_REDUCE,
                       .dtype = DC_DTYPE_BF16,
                       .modes = (1u << DC_MODE_COUNT) - 1,
                       .path = DC_PATH_AUTO,
                       .world = 2,
                       .confidence = 0.95,
                       .db_path = "tune-results/tune.db",
                       .nimpls = TUNE_SKEW_MAX_IMPLS + 1},
                 .trials = -1,
                 .warmup = -1,
                 .seed = -1};
  int helped, rc;
  /* In order: the value words of --shapes and --skew-delays-us stay where
   * they are for take_values. */
  rc = tune_opts_parse("skew", skew_spec, sizeof(skew_spec) / sizeof(skew_spec[0]), argc, argv, &a, 1, skew_usage,
                       skew_outro, 25, &helped);
  *o = a.o;
  if (rc != 0 || helped) return rc;
  if (optind < argc) return tune_usage_error("skew", "unexpected argument '%s'", argv[optind]);
  if (a.o.no_report && a.o.report_dir)
    return tune_usage_error("skew", "--no-report and --report-dir contradict each other: give one");
  int64_t trials, warmup, seed;
  if (skew_param(a.trials, &tune_param_SkewTrials, &trials) ||
      skew_param(a.warmup, &tune_param_SkewWarmup, &warmup) ||
      skew_param(a.seed, &tune_param_SkewSeed, &seed))
    return TUNE_EXIT_USAGE;
  o->trials = (int)trials;
  o->warmup = (int)warmup;
  o->seed = (uint64_t)seed;
  if (o->nshapes == 0) o->shapes[o->nshapes++] = (tune_skew_shape){8, 8192};
  if (o->ndelays == 0) {
    static const int64_t def[] = {0, 50000, 250000, 1000000};
    for (size_t i = 0; i < sizeof(def) / sizeof(def[0]); i++) o->delays_ns[o->ndelays++] = def[i];
  }
  if (o->nimpls == TUNE_SKEW_MAX_IMPLS + 1) {
    o->nimpls = 0;
    o->impls[o->nimpls++] = skew_impls[0];
    o->impls[o->nimpls++] = skew_impls[1];
  }
  if ((rc = check_opts(o, a.rank_given, a.random_given))) return rc;
  return -1;
}

/* ---- the run ------------------------------------------------------------------ */

typedef struct {
  const tune_skew_opts *o;
  tune_backend *be;
  tune_machine mach;
  tune_store *st; /* NULL on ranks other than 0 */
  tune_skew_results res;
  const char *impls[TUNE_SKEW_MAX_IMPLS * DC_OP_COUNT]; /* measurable impls per op */
  int nimpls[DC_OP_COUNT];
  tune_samples samples[TUNE_SKEW_MAX_IMPLS];
  double *per_trial, *slowest;
  tune_skew_series series[TUNE_SKEW_MAX_IMPLS];
  int nwrong;       /* configurations that returned wrong results */
  char first[256];  /* the first of them */
} skew_ctx;

static tune_cfg skew_cfg(const tune_skew_opts *o, const char *impl, dc_op op, uint64_t bytes,
                         dc_mode mode, int64_t delay_ns) {
  tune_cfg c = {impl,     op,          strcmp(impl, "detcoll") == 0 ? o->path : DC_PATH_AUTO,
                o->dtype, o->world,    bytes,
                0,        0,           mode,
                delay_ns, o->skew_rank};
  return c;
}

static uint64_t shape_bytes(const tune_skew_opts *o, const tune_skew_shape *s) {
  return s->rows * s->cols * (uint64_t)dc_dtype_size(o->dtype);
}

/* Which impls the backend can measure, per op; the others are skipped. */
static tune_result skew_plan(skew_ctx *x) {
  const tune_skew_opts *o = x->o;
  int any = 0;
  for (int op = 0; op < DC_OP_COUNT; op++) {
    if (!(o->ops & 1u << op)) continue;
    for (int i = 0; i < o->nimpls; i++) {
      tune_cfg c =
          skew_cfg(o, o->impls[i], (dc_op)op, shape_bytes(o, &o->shapes[0]), DC_MODE_EAGER, 0);
      if (x->be->ops->supports(x->be, &c)) {
        x->impls[op * TUNE_SKEW_MAX_IMPLS + x->nimpls[op]++] = o->impls[i];
        any = 1;
        continue;
      }
      TUNE_WARN(TUNE_SWEEP, "skipping %s %s: the %s backend cannot measure it at world %d",
                o->impls[i], dc_op_name((dc_op)op), o->backend, o->world);
      x->res.skipped[x->res.nskipped++] = (tune_skew_skipped){o->impls[i], (dc_op)op};
    }
  }
  if (any) return tune_ok;
  tune_error(
      "skew: the %s backend can measure none of the impls asked for (--impls) at world %d",
      o->backend, o->world);
  return tune_err_arg;
}

static tune_result push_summary(skew_ctx *x, const tune_skew_summary_row *s) {
  tune_skew_results *r = &x->res;
  TUNE_CHECK(tune_grow((void **)&r->sum, &r->sum_cap, r->nsum, sizeof(*r->sum), 64));
  r->sum[r->nsum++] = *s;
  return tune_ok;
}

static tune_result push_fit(skew_ctx *x, const tune_skew_fit_row *f) {
  tune_skew_results *r = &x->res;
  TUNE_CHECK(tune_grow((void **)&r->fit, &r->fit_cap, r->nfit, sizeof(*r->fit), 64));
  r->fit[r->nfit++] = *f;
  return tune_ok;
}

/* Store and summarize one measured config (rank 0), and add its trials to
 * the series its fits are drawn through (every rank, so all agree). */
static tune_result skew_keep(skew_ctx *x, const tune_cfg *c, const tune_skew_shape *sh,
                             const tune_samples *s, tune_skew_series *series) {
  const tune_skew_opts *o = x->o;
  TUNE_CHECK(tune_skew_per_trial(s->elapsed_ns, s->delay_ns, o->trials, o->world, o->skew_rank,
                                 x->per_trial));
  TUNE_CHECK(tune_skew_series_add(series, x->per_trial, o->trials));
  if (s->wrong_elems != 0 && x->nwrong++ == 0)
    snprintf(x->first, sizeof(x->first), "%s %s %s %" PRIu64 " bytes, delay %" PRId64 " ns: %" PRIu64 " wrong elements",
             c->impl, dc_op_name(c->op), dc_mode_name(c->mode), c->bytes, c->skew_ns, s->wrong_elems);
  if (x->st == NULL) return tune_ok;
  tune_skew_summary_row row = {.run_id = x->res.run_id,
                               .impl = c->impl,
                               .op = c->op,
                               .dtype = c->dtype,
                               .world = c->world,
                               .bytes = c->bytes,
                               .rows = sh->rows,
                               .cols = sh->cols,
                               .mode = c->mode,
                               .skew_rank = c->skew_rank,
                               .requested_ns = c->skew_ns,
                               .trials = o->trials};
  tune_skew_stat q[TUNE_SKEW_NQ];
  tune_result r;
  tune_slowest_per_trial(s->elapsed_ns, o->trials, o->world, x->slowest);
  tune_skew_summarize(x->per_trial, o->trials, q);
  row.max = q[TUNE_SKEW_MAX];
  row.injected = q[TUNE_SKEW_INJECTED];
  row.last = q[TUNE_SKEW_LAST];
  row.wait = q[TUNE_SKEW_WAIT];
  row.delay = q[TUNE_SKEW_DELAY];
  /* The config, its samples and its summary commit together. */
  TUNE_CHECK(tune_store_begin(x->st));
  TUNE_CHECK_GOTO(tune_engine_store_config(x->st, x->res.run_id, c, 0, o->trials, o->warmup, s,
                                           x->slowest, &row.config_id),
                  r, fail);
  TUNE_CHECK_GOTO(tune_store_put_skew_summary(x->st, &row), r, fail);
  TUNE_CHECK(tune_store_commit(x->st));
  return push_summary(x, &row);
fail:
  tune_store_rollback(x->st);
  return r;
}

/* Fit every role of one (impl, op, shape, mode) series; a series with one
 * delay has no slope to fit and is left out: one requested delay, whose
 * measured delays differ by the spin's jitter only, as well as one whose
 * measured delays are all alike. */
static tune_result skew_fit_series(skew_ctx *x, const tune_cfg *c, const tune_skew_shape *sh,
                                   const tune_skew_series *series) {
  const tune_skew_opts *o = x->o;
  if (x->st == NULL || o->ndelays < 2) return tune_ok;
  for (int q = 0; q < TUNE_SKEW_NROLES; q++) {
    tune_linfit_result lf;
    if (tune_skew_fit(series, (tune_skew_q)q, o->confidence, &lf) != tune_ok) {
      TUNE_INFO(TUNE_SWEEP, "%s %s: no %s fit (one delay)", c->impl, dc_op_name(c->op), q_names[q]);
      continue;
    }
    tune_skew_fit_row f = {x->res.run_id, c->impl,       c->op,           c->dtype,
                           c->world,      c->bytes,      sh->rows,        sh->cols,
                           c->mode,       q_names[q],    lf.slope,        lf.intercept,
                           lf.slope_lo,   lf.slope_hi,   lf.intercept_lo, lf.intercept_hi,
                           lf.r2,         (int64_t)lf.n, lf.confidence};
    TUNE_CHECK(tune_store_put_skew_fit(x->st, &f));
    TUNE_CHECK(push_fit(x, &f));
  }
  return tune_ok;
}

/* Every delay of one (op, shape, mode): the measurable impls of op
 * together in one measure call per delay, so they alternate per trial. */
static tune_result skew_measure_group(skew_ctx *x, dc_op op, const tune_skew_shape *sh,
                                      dc_mode mode) {
  const tune_skew_opts *o = x->o;
  const char *const *impls = &x->impls[op * TUNE_SKEW_MAX_IMPLS];
  int nc = x->nimpls[op];
  tune_cfg cfg[TUNE_SKEW_MAX_IMPLS];
  for (int i = 0; i < nc; i++) tune_skew_series_clear(&x->series[i]);
  for (int d = 0; d < o->ndelays; d++) {
    /* Stopped: what is measured is committed (each config with its samples). */
    if (tune_interrupt_signal()) return tune_err_interrupted;
    for (int i = 0; i < nc; i++)
      cfg[i] = skew_cfg(o, impls[i], op, shape_bytes(o, sh), mode, o->delays_ns[d]);
    TUNE_CHECK(x->be->ops->measure(x->be, cfg, nc, 0, o->trials, o->warmup, x->samples));
    for (int i = 0; i < nc; i++)
      TUNE_CHECK(skew_keep(x, &cfg[i], sh, &x->samples[i], &x->series[i]));
  }
  for (int i = 0; i < nc; i++) TUNE_CHECK(skew_fit_series(x, &cfg[i], sh, &x->series[i]));
  return tune_ok;
}

static tune_result skew_alloc(skew_ctx *x) {
  const tune_skew_opts *o = x->o;
  size_t n = (size_t)o->trials * (size_t)o->world;
  for (int i = 0; i < TUNE_SKEW_MAX_IMPLS; i++) {
    x->samples[i].elapsed_ns = calloc(n, sizeof(int64_t));
    x->samples[i].delay_ns = calloc(n, sizeof(int64_t));
    if (x->samples[i].elapsed_ns == NULL || x->samples[i].delay_ns == NULL) return tune_err_system;
  }
  x->per_trial = calloc((size_t)TUNE_SKEW_NQ * (size_t)o->trials, sizeof(double));
  x->slowest = calloc((size_t)o->trials, sizeof(double));
  return x->per_trial && x->slowest ? tune_ok : tune_err_system;
}

/* tune_output_open: a failure leaves no partial file, and a FIFO or device
 * is written, not replaced. */
static tune_result skew_json(const skew_ctx *x) {
  tune_output out;
  TUNE_CHECK(tune_output_open(x->o->json_path, &out));
  tune_skew_write_json(out.f, x->o, &x->res);
  return tune_output_close(&out, tune_ok); /* which reports a failed write */
}

/* What is checked before anything is measured or written: the outputs
 * (--json, the report's folder and files) and gnuplot. */
static tune_result skew_check_outputs(const tune_skew_opts *o) {
  if (o->json_path) {
    TUNE_CHECK(tune_check_output("--json", o->json_path, o->db_path));
    TUNE_CHECK(tune_check_writable("--json", o->json_path, 0));
  }
  /* A report that cannot be drawn fails now, not after the measurements. */
  if (!o->no_report) {
    tune_report_opts ro = {o->db_path, 0, 0, o->report_dir};
    char rd[PATH_MAX];
    TUNE_CHECK(tune_report_check_outputs(&ro));
    if (o->json_path) TUNE_CHECK(tune_report_check_keep(&ro, o->json_path, "--json"));
    tune_report_folder(&ro, rd, sizeof(rd));
    TUNE_CHECK(tune_check_writable(o->report_dir ? "--report-dir" : "the report folder", rd, 1));
    char gp[PATH_MAX];
    TUNE_CHECK(tune_report_need_gnuplot("skew", ", or pass --no-report", gp, sizeof(gp)));
  }
  return tune_ok;
}

tune_result tune_skew_run(const tune_skew_opts *o) {
  skew_ctx x = {.o = o};
  tune_result res = tune_ok;
  tune_interrupt_install();
  uint64_t max_bytes = 0;
  const tune_backend_ops *ops = tune_backend_find(o->backend);
  if (ops == NULL) {
    tune_error("unknown backend '%s' (use gpu or sim)", o->backend);
    return tune_err_arg;
  }
  TUNE_CHECK(skew_check_outputs(o));
  for (int i = 0; i < o->nshapes; i++)
    if (shape_bytes(o, &o->shapes[i]) > max_bytes) max_bytes = shape_bytes(o, &o->shapes[i]);
  /* One delay and one collective per captured graph: a trial's delay must
   * precede exactly the collective it is measured against. */
  tune_backend_opts bo = {o->world, o->seed, o->launcher, o->virtual_ranks, max_bytes, 1};
  TUNE_CHECK_GOTO(ops->open(&bo, &x.be), res, out);
  x.be->ops->describe(x.be, &x.mach);
  TUNE_CHECK_GOTO(skew_plan(&x), res, out);
  TUNE_CHECK_GOTO(skew_alloc(&x), res, out);
  if (x.be->ops->rank(x.be) == 0) {
    char table[PATH_MAX + 128];
    TUNE_CHECK_GOTO(tune_engine_table_name(table, sizeof(table)), res, out);
    TUNE_CHECK_GOTO(tune_engine_open_store(o->db_path, &x.st), res, out);
    TUNE_CHECK_GOTO(tune_engine_begin_run(x.st, &x.mach, "skew", o->backend,
                                          o->command_line ? o->command_line : "tune skew", o->seed,
                                          0, table, &x.res.run_id),
                    res, out);
  }
  for (int op = 0; op < DC_OP_COUNT; op++) {
    if (x.nimpls[op] == 0) continue;
    for (int s = 0; s < o->nshapes; s++)
      for (int m = 0; m < DC_MODE_COUNT; m++)
        if (o->modes & 1u << m)
          TUNE_CHECK_GOTO(skew_measure_group(&x, (dc_op)op, &o->shapes[s], (dc_mode)m), res, out);
  }
  if (x.st == NULL) goto out;
  TUNE_CHECK_GOTO(tune_store_run_finish(x.st, x.res.run_id), res, out);
  tune_store_close(x.st);
  x.st = NULL;
  tune_skew_print(stdout, o,
                  strcmp(o->backend, "sim") == 0 ? " (SIMULATED: a seeded model, not a GPU)" : "",
                  &x.res);
  fflush(stdout);
  if (o->json_path) TUNE_CHECK_GOTO(skew_json(&x), res, out);
  if (!o->no_report) {
    tune_report_opts ro = {o->db_path, 0, 0, o->report_dir};
    TUNE_CHECK_GOTO(tune_report_run(&ro), res, out);
  }
  /* As a main job's: everything is stored and drawn, and the run fails. */
  if (x.nwrong > 0) {
    tune_error("%d configuration%s of this run returned wrong results, the first: %s; the configs table of %s holds"
               " them all (wrong_elems)",
               x.nwrong, x.nwrong == 1 ? "" : "s", x.first, o->db_path);
    res = tune_err_wrong;
  }
out:
  if (res != tune_ok && tune_interrupt_signal()) {
    res = tune_err_interrupted;
    if (x.st)
      fprintf(stderr,
              "tune skew: interrupted by %s: what it measured is committed to %s as skew run %" PRId64
              ", left unfinished (a skew run is not resumed: run it again)\n",
              tune_interrupt_name(), o->db_path, x.res.run_id);
  }
  if (x.st) tune_store_close(x.st);
  if (res != tune_ok) tune_launcher_failing(res);
  if (x.be) x.be->ops->close(x.be);
  for (int i = 0; i < TUNE_SKEW_MAX_IMPLS; i++) {
    free(x.samples[i].elapsed_ns);
    free(x.samples[i].delay_ns);
    tune_skew_series_free(&x.series[i]);
  }
  free(x.per_trial);
  free(x.slowest);
  tune_skew_results_free(&x.res);
  return res;
}

int tune_cmd_skew(int argc, char **argv) {
  tune_skew_opts o;
  int rc = tune_skew_parse(argc, argv, &o);
  if (rc >= 0) return rc;
  char *cmdline = tune_join_args("tune", argc, argv);
  o.command_line = cmdline;
  tune_result r = tune_skew_run(&o);
  free(cmdline);
  return tune_exit_status(r);
}
