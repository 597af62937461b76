/* verify.c: `tune verify` -- are the installed thresholds still right on
 * this machine (after a driver, CUDA or NCCL upgrade, or on a new node)?
 * Auto dispatch is measured against the forced paths the table weighs
 * there: around each crossover of the table (a quarter octave below and
 * above it) and in the middle of each segment, in the same trials. A size
 * whose regret (auto over the best of those paths) is decided above the
 * tolerance fails. The measurements are a run of their own (kind verify)
 * with its configs and regret rows. */
#include "verify.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compare.h"
#include "engine.h"
#include "headers.h"
#include "stats.h"

/* The main job's knobs, read from the same environment variables. */
TUNE_PARAM(VerifyTrials, "TRIALS", 20, 3, 100000);
TUNE_PARAM(VerifyMaxTrials, "MAX_TRIALS", 160, 3, 1000000);
TUNE_PARAM(VerifyWarmup, "WARMUP", 5, 0, 100000);
TUNE_PARAM(VerifySeed, "SEED", 1, 0, INT64_MAX);

/* auto, and the paths of a segment and its two neighbours. */
#define VERIFY_MAX_NC 4
/* Test sizes of one row: two per crossover, one per segment. */
#define VERIFY_MAX_SIZES (3 * DC_MAX_SEGMENTS)

typedef struct {
  const char *backend, *launcher, *db_path, *header;
  int gpus, virtual_ranks, graph_calls, no_reg;
  unsigned ops, dtypes, modes;
  int worlds[TUNE_MAX_WORLDS], nworlds;
  uint64_t min_bytes, max_bytes;
  double tolerance, confidence;
  int trials, max_trials, warmup;
  uint64_t seed;
} verify_opts;

typedef struct {
  const verify_opts *o;
  tune_backend *be;
  tune_machine mach;
  tune_store *st;
  int64_t run_id;
  int64_t *elapsed[VERIFY_MAX_NC], *delay[VERIFY_MAX_NC];
  double *slowest[VERIFY_MAX_NC];
  long sizes, rows, failed, configs;
} verifier;

static uint64_t verify_round(double v, uint64_t q, uint64_t lo, uint64_t hi) {
  double k = floor(v / (double)q + 0.5);
  uint64_t x = k < 1 ? q : (uint64_t)k * q;
  uint64_t lo_q = (lo + q - 1) / q * q, hi_q = hi / q * q;
  return x < lo_q ? lo_q : x > hi_q ? hi_q : x;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The test sizes of row within [lo, hi] (multiples of q), sorted, distinct. */
static int verify_sizes(const dc_threshold_row *row, uint64_t q, uint64_t lo, uint64_t hi,
                        uint64_t *x) {
  const double step = pow(2.0, 0.25);
  int n = 0;
  for (int k = 0; k < row->nseg; k++) {
    double a = k ? (double)row->seg[k - 1].max_bytes : (double)lo;
    double b = row->seg[k].max_bytes == DC_BYTES_MAX ? (double)hi : (double)row->seg[k].max_bytes;
    if (a < (double)lo) a = (double)lo;
    if (b > (double)hi) b = (double)hi;
    if (a <= b) x[n++] = verify_round(sqrt(a * b), q, lo, hi);
    if (k + 1 < row->nseg && row->seg[k].max_bytes >= lo && row->seg[k].max_bytes <= hi) {
      x[n++] = verify_round((double)row->seg[k].max_bytes / step, q, lo, hi);
      x[n++] = verify_round((double)row->seg[k].max_bytes * step, q, lo, hi);
    }
  }
  qsort(x, (size_t)n, sizeof(*x), cmp_u64);
  int m = 0;
  for (int i = 0; i < n; i++)
    if (m == 0 || x[i] != x[m - 1]) x[m++] = x[i];
  return m;
}

/* The forced paths weighed at bytes: the row's there and its neighbours'. */
static int verify_paths(const verifier *v, const dc_threshold_row *row, const tune_cfg *base,
                        uint64_t bytes, dc_path *paths) {
  int k = 0, n = 0;
  while (k + 1 < row->nseg && bytes > row->seg[k].max_bytes) k++;
  for (int d = 0; d < 3; d++) {
    int s = k + (d == 0 ? 0 : d == 1 ? -1 : 1);
    if (s < 0 || s >= row->nseg) continue;
    dc_path p = row->seg[s].path;
    tune_cfg c = *base;
    c.path = p;
    int dup = 0;
    for (int i = 0; i < n; i++) dup |= paths[i] == p;
    if (!dup && bytes <= dc_path_max_bytes(c.op, p) && tune_cfg_path_unsupported(&c) == NULL &&
        v->be->ops->supports(v->be, &c))
      paths[n++] = p;
  }
  return n;
}

/* Measure auto and paths[] at one size, with more trials while the regret
 * is undecided; store the configs and the regret row in one transaction;
 * print the size if its regret is decided above the tolerance. */
static tune_result verify_size(verifier *v, const dc_threshold_row *row, const tune_cfg *base,
                               dc_align align, const dc_path *paths, int npaths) {
  const verify_opts *o = v->o;
  tune_cfg c[VERIFY_MAX_NC];
  int nc = 0, first = 0, trials = o->trials, best = 1;
  int64_t ids[VERIFY_MAX_NC] = {0};
  dc_path chosen = DC_PATH_AUTO;
  uint64_t wrong = 0;
  double diff = 0, lo = 0, hi = 0;
  c[nc++] = *base;
  for (int i = 0; i < npaths; i++) {
    c[nc] = *base;
    c[nc++].path = paths[i];
  }
  TUNE_CHECK(tune_store_begin(v->st));
  tune_result r = tune_ok;
  for (;;) {
    tune_samples s[VERIFY_MAX_NC];
    for (int i = 0; i < nc; i++) s[i] = (tune_samples){v->elapsed[i], v->delay[i], 0, DC_PATH_AUTO};
    TUNE_CHECK_GOTO(v->be->ops->measure(v->be, c, nc, first, trials, o->warmup, s), r, fail);
    for (int i = 0; i < nc; i++) {
      tune_slowest_per_trial(s[i].elapsed_ns, trials, c[i].world, v->slowest[i] + first);
      TUNE_CHECK_GOTO(tune_engine_store_config(v->st, v->run_id, &c[i], first, trials, o->warmup,
                                               &s[i], v->slowest[i], &ids[i]),
                      r, fail);
      if (i == 0) chosen = s[0].chosen_path;
      wrong += s[i].wrong_elems;
      v->configs++;
    }
    first += trials;
    best = 1;
    for (int i = 2; i < nc; i++)
      if (tune_median(v->slowest[i], (size_t)first) < tune_median(v->slowest[best], (size_t)first))
        best = i;
    double *scaled = malloc((size_t)first * sizeof(*scaled));
    if (scaled == NULL) {
      r = tune_err_system;
      goto fail;
    }
    for (int t = 0; t < first; t++) scaled[t] = (1.0 + o->tolerance) * v->slowest[best][t];
    /* diff = median(auto) - (1 + tol) * median(best): above zero fails. */
    r = tune_ci_median_diff(scaled, (size_t)first, v->slowest[0], (size_t)first, o->confidence,
                            o->seed ^ base->bytes ^ ((uint64_t)first << 40), &diff, &lo, &hi);
    free(scaled);
    if (r != tune_ok) goto fail;
    if (lo > 0 || hi < 0 || first >= o->max_trials) break;
    trials = 2 * first <= o->max_trials ? first : o->max_trials - first;
  }
  double auto_ns = tune_median(v->slowest[0], (size_t)first),
         best_ns = tune_median(v->slowest[best], (size_t)first);
  tune_regret_row rr = {v->run_id,   base->op, base->dtype,  base->world, align,  base->mode,
                        base->bytes, chosen,   c[best].path, auto_ns,     best_ns};
  TUNE_CHECK_GOTO(tune_store_put_regret(v->st, &rr), r, fail);
  TUNE_CHECK_GOTO(tune_store_commit(v->st), r, fail);
  v->sizes++;
  if (lo > 0 || wrong) {
    char b[32];
    if (v->failed++ == 0)
      printf("%-14s %-4s %5s %-9s %-5s %6s  %-12s %10s  %-12s %10s %7s  %s\n", "op", "type",
             "world", "align", "mode", "bytes", "auto", "us", "best", "us", "regret",
             "CI of auto - tol*best (us)");
    printf("%-14s %-4s %5d %-9s %-5s %6s  %-12s %10.2f  %-12s %10.2f %7.3f  [%+.2f, %+.2f]%s\n",
           dc_op_name(base->op), dc_dtype_name(base->dtype), base->world, dc_align_name(align),
           dc_mode_name(base->mode), tune_format_size(base->bytes, b, sizeof(b)),
           dc_path_name(chosen), auto_ns / 1e3, dc_path_name(c[best].path), best_ns / 1e3,
           auto_ns / best_ns, lo / 1e3, hi / 1e3, wrong ? "  WRONG RESULTS" : "");
  }
  (void)row;
  return tune_ok;
fail:
  tune_store_rollback(v->st);
  return r;
}

/* Every group of the options (world, op, dtype, mode, offset, registered):
 * its row of the table, its test sizes, each measured. */
static tune_result verify_all(verifier *v, const dc_threshold_row *rows, size_t nrows) {
  const verify_opts *o = v->o;
  static const int offsets[] = {0, 4};
  for (int w = 0; w < o->nworlds; w++)
    for (int op = 0; op < DC_OP_COUNT; op++)
      for (int d = 0; d < DC_DTYPE_COUNT; d++)
        for (int m = 0; m < DC_MODE_COUNT; m++)
          for (int f = 0; f < 2; f++)
            for (int reg = 0; reg < (o->no_reg || offsets[f] ? 1 : 2); reg++) {
              if (!(o->ops >> op & 1) || !(o->dtypes >> d & 1) || !(o->modes >> m & 1)) continue;
              int world = o->worlds[w];
              uint64_t q = tune_engine_granule(op, d, world, offsets[f], reg);
              if (o->max_bytes / q * q < (o->min_bytes + q - 1) / q * q) continue;
              tune_cfg base = {reg ? "detcoll_reg" : "detcoll",
                               op,
                               DC_PATH_AUTO,
                               d,
                               world,
                               q,
                               offsets[f],
                               offsets[f],
                               m,
                               0,
                               -1};
              if (!v->be->ops->supports(v->be, &base)) continue;
              dc_align align = tune_cfg_align(&base);
              const dc_threshold_row *row =
                  dc_table_find(rows, nrows, v->mach.sm, world, v->mach.topo, op, d, align, m, 0);
              if (row == NULL && align == DC_ALIGN_REG)
                row = dc_table_find(rows, nrows, v->mach.sm, world, v->mach.topo, op, d,
                                    DC_ALIGN_16, m, 0);
              if (row == NULL) continue;
              v->rows++;
              uint64_t x[VERIFY_MAX_SIZES];
              int nx = verify_sizes(row, q, o->min_bytes, o->max_bytes, x);
              for (int i = 0; i < nx; i++) {
                dc_path paths[3];
                base.bytes = x[i];
                int np = verify_paths(v, row, &base, x[i], paths);
                if (np == 0) continue;
                if (tune_interrupt_signal()) return tune_err_interrupted;
                TUNE_CHECK(verify_size(v, row, &base, align, paths, np));
              }
            }
  return tune_ok;
}

static const char *verify_help =
    "usage: tune verify [--gpus N] [options]\n"
    "\n"
    "Check that the thresholds libdetcoll was built with are still right on this\n"
    "machine: auto dispatch against the forced paths the table weighs, a quarter\n"
    "octave below and above each crossover and in the middle of each segment,\n"
    "measured in the same trials. Prints every size whose regret (auto over the\n"
    "best of those paths) is decided above the tolerance, and exits 1 if there is\n"
    "any (or any wrong result). The measurements are stored as a run of kind\n"
    "verify, with its regret rows.\n"
    "\n"
    "  --gpus N            ranks (GPUs); world sizes are 2, 4, 8 up to N\n"
    "  --backend gpu|sim   measure the GPUs (default) or the sim model\n"
    "  --virtual-ranks     put every rank on GPU 0\n"
    "  --graph-calls K     collectives per CUDA graph in graph mode (default 10)\n"
    "  --header FILE       (sim only) verify this thresholds header instead of the\n"
    "                      table compiled in\n"
    "  --db FILE           SQLite database (default tune-results/tune.db)\n"
    "  --tolerance T       regret allowed: 3%, 0.03 or 1.03 (default 3%)\n"
    "  --ops LIST          all_gather,all_reduce,reduce_scatter (default all)\n"
    "  --dtypes LIST       bf16,fp16,fp32 (default bf16,fp32)\n"
    "  --modes LIST        eager,graph (default both)\n"
    "  --worlds LIST       world sizes (default 2,4,8 up to --gpus)\n"
    "  --no-reg            leave registered buffers (reg16 rows) out\n"
    "  --min-bytes SIZE    smallest bytes per rank (default 1K)\n"
    "  --max-bytes SIZE    largest bytes per rank (default 256M)\n"
    "  --confidence C      of the regret CI (default 0.95)\n"
    "  --trials N          first trials per size (default 20; env TUNE_TRIALS)\n"
    "  --max-trials N      cap while the regret is undecided (default 160)\n"
    "  --warmup N          warm-up calls (default 5; env TUNE_WARMUP)\n"
    "  --seed N            seed of data, noise and bootstrap (default 1; env TUNE_SEED)\n"
    "  -h, --help          this text\n";

/* Parse "a,b" names with parse() into a bit mask; -1 on a bad list. */
static int verify_mask(const char *list, int (*parse)(const char *), unsigned *mask) {
  char tok[32];
  *mask = 0;
  for (const char *p = list; *p;) {
    size_t w = strcspn(p, ",");
    snprintf(tok, sizeof(tok), "%.*s", (int)(w < sizeof(tok) ? w : sizeof(tok) - 1), p);
    int v = w > 0 && w < sizeof(tok) ? parse(tok) : -1;
    if (v < 0) return -1;
    *mask |= 1u << v;
    p += w + (p[w] == ',');
  }
  return *mask ? 0 : -1;
}

int tune_cmd_verify(int argc, char **argv) {
  static const struct option opts[] = {{"gpus", required_argument, 0, 'g'},
                                       {"backend", required_argument, 0, 'b'},
                                       {"virtual-ranks", no_argument, 0, 'V'},
                                       {"graph-calls", required_argument, 0, 'G'},
                                       {"header", required_argument, 0, 'H'},
                                       {"db", required_argument, 0, 'd'},
                                       {"tolerance", required_argument, 0, 't'},
                                       {"ops", required_argument, 0, 'o'},
                                       {"dtypes", required_argument, 0, 'D'},
                                       {"modes", required_argument, 0, 'm'},
                                       {"worlds", required_argument, 0, 'w'},
                                       {"no-reg", no_argument, 0, 'R'},
                                       {"min-bytes", required_argument, 0, 1},
                                       {"max-bytes", required_argument, 0, 2},
                                       {"confidence", required_argument, 0, 3},
                                       {"trials", required_argument, 0, 4},
                                       {"max-trials", required_argument, 0, 5},
                                       {"warmup", required_argument, 0, 6},
                                       {"seed", required_argument, 0, 7},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  const char *cmd = "verify", *worlds = NULL;
  verify_opts o = {.backend = "gpu",
                   .launcher = "threads",
                   .db_path = "tune-results/tune.db",
                   .graph_calls = 10,
                   .ops = (1u << DC_OP_COUNT) - 1,
                   .dtypes = 1u << DC_DTYPE_BF16 | 1u << DC_DTYPE_FP32,
                   .modes = (1u << DC_MODE_COUNT) - 1,
                   .min_bytes = 1024,
                   .max_bytes = 256ull << 20,
                   .tolerance = 0.03,
                   .confidence = 0.95};
  int64_t v;
  int c, rc;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'g':
        if (tune_parse_int(optarg, 1, 1024, &v) != tune_ok)
          return tune_usage_error(cmd, "--gpus: '%s' is not a number in 1..1024", optarg);
        o.gpus = (int)v;
        break;
      case 'b':
        if (strcmp(optarg, "gpu") != 0 && strcmp(optarg, "sim") != 0)
          return tune_usage_error(cmd, "--backend: '%s' is not gpu or sim", optarg);
        o.backend = optarg;
        break;
      case 'V':
        o.virtual_ranks = 1;
        break;
      case 'G':
        if (tune_parse_int(optarg, 1, 1000, &v) != tune_ok)
          return tune_usage_error(cmd, "--graph-calls: '%s' is not a number in 1..1000", optarg);
        o.graph_calls = (int)v;
        break;
      case 'H':
        o.header = optarg;
        break;
      case 'd':
        o.db_path = optarg;
        break;
      case 't':
        if ((rc = tune_opt_tolerance(cmd, "--tolerance", optarg, &o.tolerance)) != 0) return rc;
        break;
      case 'o':
        if (verify_mask(optarg, dc_op_parse, &o.ops))
          return tune_usage_error(cmd, "--ops: bad list '%s'", optarg);
        break;
      case 'D':
        if (verify_mask(optarg, dc_dtype_parse, &o.dtypes))
          return tune_usage_error(cmd, "--dtypes: bad list '%s'", optarg);
        break;
      case 'm':
        if (verify_mask(optarg, dc_mode_parse, &o.modes))
          return tune_usage_error(cmd, "--modes: bad list '%s'", optarg);
        break;
      case 'w':
        worlds = optarg;
        break;
      case 'R':
        o.no_reg = 1;
        break;
      case 1:
      case 2:
        if ((rc = tune_opt_size(cmd, c == 1 ? "--min-bytes" : "--max-bytes", optarg,
                                c == 1 ? &o.min_bytes : &o.max_bytes)) != 0)
          return rc;
        break;
      case 3:
        if ((rc = tune_opt_confidence(cmd, "--confidence", optarg, &o.confidence)) != 0) return rc;
        break;
      case 4:
      case 5:
      case 6:
      case 7: {
        tune_param *p[] = {&tune_param_VerifyTrials, &tune_param_VerifyMaxTrials,
                           &tune_param_VerifyWarmup, &tune_param_VerifySeed};
        static const char *const names[] = {"trials", "max-trials", "warmup", "seed"};
        if (tune_param_set_str(p[c - 4], optarg) != tune_ok)
          return tune_usage_error(cmd, "--%s: '%s' is not a number in %" PRId64 "..%" PRId64,
                                  names[c - 4], optarg, p[c - 4]->lo, p[c - 4]->hi);
        break;
      }
      case 'h':
        fputs(verify_help, stdout);
        return 0;
      case ':':
        return tune_usage_error(cmd, "%s needs a value", argv[optind - 1]);
      default:
        return tune_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) return tune_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
  int sim = strcmp(o.backend, "sim") == 0;
  if (sim && o.gpus == 0) return tune_usage_error(cmd, "--gpus is required with --backend sim");
  if (o.header && !sim)
    return tune_usage_error(
        cmd,
        "--header: the gpu backend measures the table libdetcoll was built with; "
        "rebuild it against the header, or use --backend sim");
  if (o.min_bytes > o.max_bytes)
    return tune_usage_error(cmd, "--min-bytes is larger than --max-bytes");
  if (*o.db_path == '\0') return tune_usage_error(cmd, "--db: the path is empty");
  if (tune_param_load(&tune_param_VerifyTrials) != tune_ok ||
      tune_param_load(&tune_param_VerifyMaxTrials) != tune_ok ||
      tune_param_load(&tune_param_VerifyWarmup) != tune_ok ||
      tune_param_load(&tune_param_VerifySeed) != tune_ok)
    return TUNE_EXIT_USAGE;
  o.trials = (int)tune_param_get(&tune_param_VerifyTrials);
  o.max_trials = (int)tune_param_get(&tune_param_VerifyMaxTrials);
  o.warmup = (int)tune_param_get(&tune_param_VerifyWarmup);
  o.seed = (uint64_t)tune_param_get(&tune_param_VerifySeed);
  if (o.max_trials < o.trials)
    return tune_usage_error(cmd, "--max-trials is smaller than --trials");
  if (worlds) {
    o.nworlds = 0;
    for (const char *p = worlds; *p;) {
      size_t w = strcspn(p, ",");
      char tok[16];
      snprintf(tok, sizeof(tok), "%.*s", (int)(w < sizeof(tok) ? w : sizeof(tok) - 1), p);
      if (w == 0 || w >= sizeof(tok) || tune_parse_int(tok, 1, 1024, &v) != tune_ok ||
          o.nworlds == TUNE_MAX_WORLDS || (o.gpus && v > o.gpus))
        return tune_usage_error(cmd, "--worlds: '%s' is not a list of world sizes up to --gpus",
                                worlds);
      o.worlds[o.nworlds++] = (int)v;
      p += w + (p[w] == ',');
    }
  } else {
    for (int w = 2; w <= 8 && (o.gpus == 0 || w <= o.gpus); w *= 2) o.worlds[o.nworlds++] = w;
  }
  if (o.nworlds == 0)
    return tune_usage_error(cmd, "--gpus %d leaves no world size of 2 or more; give --worlds",
                            o.gpus);

  /* Everything that can be refused is refused before the database opens. */
  dc_threshold_row *hrows = NULL;
  size_t nh = 0;
  if (o.header && tune_header_load(o.header, &hrows, &nh) != tune_ok) return TUNE_EXIT_USAGE;
  tune_result r = tune_check_output("--db", o.db_path, o.header ? o.header : "/dev/null");
  if (r != tune_ok) {
    free(hrows);
    return tune_exit_status(r);
  }
  const tune_backend_ops *ops = tune_backend_find(o.backend);
  verifier vf = {.o = &o};
  int64_t t0 = tune_now_ns();
  char *cmdline = NULL;
  tune_backend_opts bo = {o.gpus, o.seed, o.launcher, o.virtual_ranks, o.max_bytes, o.graph_calls};
  r = ops ? ops->open(&bo, &vf.be) : tune_err_arg;
  if (r != tune_ok) goto out;
  vf.be->ops->describe(vf.be, &vf.mach);
  if (hrows) TUNE_CHECK_GOTO(vf.be->ops->set_table(vf.be, hrows, nh), r, out);
  size_t need = (size_t)o.max_trials * (size_t)o.worlds[0];
  for (int i = 1; i < o.nworlds; i++)
    if ((size_t)o.max_trials * (size_t)o.worlds[i] > need)
      need = (size_t)o.max_trials * (size_t)o.worlds[i];
  for (int i = 0; i < VERIFY_MAX_NC; i++) {
    vf.elapsed[i] = malloc(need * sizeof(int64_t));
    vf.delay[i] = malloc(need * sizeof(int64_t));
    vf.slowest[i] = malloc((size_t)o.max_trials * sizeof(double));
    if (!vf.elapsed[i] || !vf.delay[i] || !vf.slowest[i]) {
      r = tune_err_system;
      goto out;
    }
  }
  TUNE_CHECK_GOTO(tune_engine_open_store(o.db_path, &vf.st), r, out);
  size_t len = 1;
  for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
  if ((cmdline = malloc(len + 8)) == NULL) {
    r = tune_err_system;
    goto out;
  }
  strcpy(cmdline, "tune");
  for (int i = 0; i < argc; i++) strcat(strcat(cmdline, " "), argv[i]);
  TUNE_CHECK_GOTO(
      tune_engine_begin_run(vf.st, &vf.mach, "verify", o.backend, cmdline, o.seed, 0,
                            o.header ? o.header : dc_builtin_thresholds_provenance, &vf.run_id),
      r, out);
  tune_interrupt_install();
  r = verify_all(&vf, hrows ? hrows : dc_builtin_thresholds,
                 hrows ? nh : dc_builtin_thresholds_count);
  if (r == tune_ok) r = tune_store_run_finish(vf.st, vf.run_id);
  if (r == tune_ok) {
    printf(
        "%sverify (%s, table: %s): %ld sizes of %ld rows, %ld configurations in %.1f s, run "
        "%" PRId64 " of %s\n",
        vf.failed ? "\n" : "", o.backend, o.header ? o.header : dc_builtin_thresholds_provenance,
        vf.sizes, vf.rows, vf.configs, (double)(tune_now_ns() - t0) / 1e9, vf.run_id, o.db_path);
    if (vf.rows == 0) {
      tune_error(
          "verify: the table has no row for this machine and these options: nothing was checked");
      r = tune_err_arg;
    } else if (vf.failed)
      printf(
          "%ld sizes with regret decided above %.3g (auto slower than the best path weighed "
          "there)\n",
          vf.failed, 1.0 + o.tolerance);
    else
      printf("every size within %.3g of the best path weighed there\n", 1.0 + o.tolerance);
  }
out:
  if (vf.be) vf.be->ops->close(vf.be);
  tune_store_close(vf.st);
  for (int i = 0; i < VERIFY_MAX_NC; i++)
    free(vf.elapsed[i]), free(vf.delay[i]), free(vf.slowest[i]);
  free(cmdline);
  free(hrows);
  if (r != tune_ok) return tune_exit_status(r);
  return vf.failed ? 1 : 0;
}
