/* report_read.c: the SQL of `tune report` (report_read.h). Each reader is a
 * query and the table of the columns it fills (store_db.h's tune_sql_rows). */
#include "report_read.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_db.h"

#define TEXT(T, f) TUNE_SQL_FIELD(TUNE_SQL_TEXT, T, f)
#define I64(T, f) TUNE_SQL_FIELD(TUNE_SQL_I64, T, f)
#define INT(T, f) TUNE_SQL_FIELD(TUNE_SQL_INT, T, f)
#define F64(T, f) TUNE_SQL_FIELD(TUNE_SQL_F64, T, f)
#define KEY(T) TEXT(T, key[0]), TEXT(T, key[1]), TEXT(T, key[2]), TEXT(T, key[3])

/* The configs a before/after run's figures and pairing are built from:
 * detcoll's auto dispatch, on plain buffers and (align reg16) on buffers in
 * registered windows. */
#define AUTO_CONFIGS "impl IN ('detcoll', 'detcoll_reg') AND path = 'auto' AND skew_ns = 0"

/* The first row of q into out (elem bytes); *found 0 when there is none. */
static tune_result read_one(tune_store *st, const tune_sql_query *q, const tune_sql_param *ps,
                            size_t np, void *out, int *found) {
  void *rows;
  size_t n;
  TUNE_CHECK(tune_sql_rows(st, q, ps, np, &rows, &n));
  if (n) memcpy(out, rows, q->elem);
  *found = n != 0;
  free(rows);
  return tune_ok;
}

/* ---- runs ----------------------------------------------------------------- */

/* finished_at is NULL while a run measures, or after it was killed. */
static const char run_sql[] =
    "SELECT id, kind, started_at, COALESCE(finished_at, '-'), host, gpu_model, topo, driver, cuda,"
    " nccl, mpi, launcher, backend, git_rev, thresholds, command_line, gpu_count, sm,"
    " COALESCE(parent_run, 0),"
    " (SELECT COUNT(*) FROM configs WHERE run_id = runs.id AND wrong_elems > 0),"
    " finished_at IS NULL FROM runs WHERE id = :id";
static const tune_sql_col run_cols[] = {
    I64(tune_rep_run, id),          TEXT(tune_rep_run, kind),
    TEXT(tune_rep_run, started_at), TEXT(tune_rep_run, finished_at),
    TEXT(tune_rep_run, host),       TEXT(tune_rep_run, gpu_model),
    TEXT(tune_rep_run, topo),       TEXT(tune_rep_run, driver),
    TEXT(tune_rep_run, cuda),       TEXT(tune_rep_run, nccl),
    TEXT(tune_rep_run, mpi),        TEXT(tune_rep_run, launcher),
    TEXT(tune_rep_run, backend),    TEXT(tune_rep_run, git_rev),
    TEXT(tune_rep_run, thresholds), TEXT(tune_rep_run, command_line),
    I64(tune_rep_run, gpu_count),   I64(tune_rep_run, sm),
    I64(tune_rep_run, parent_run),  I64(tune_rep_run, wrong_configs),
    I64(tune_rep_run, unfinished),
};

tune_result tune_rep_run_read(tune_store *st, int64_t id, tune_rep_run *r) {
  static const tune_sql_query q = TUNE_SQL_QUERY(run_sql, run_cols, tune_rep_run);
  const tune_sql_param p[] = {{":id", id, NULL}};
  int found;
  memset(r, 0, sizeof(*r));
  TUNE_CHECK(read_one(st, &q, p, TUNE_SQL_COUNT(p), r, &found));
  return r->id ? tune_store_check_rows(st, r->id) : tune_ok;
}

tune_result tune_rep_latest_run(tune_store *st, const char *kind, const char *gpu_model,
                                int64_t *id) {
  const tune_sql_param p[] = {{":kind", 0, kind}, {":gpu", 0, gpu_model}};
  return tune_sql_scalar(st,
                         gpu_model
                             ? "SELECT MAX(id) FROM runs WHERE kind = :kind AND gpu_model = :gpu"
                             : "SELECT MAX(id) FROM runs WHERE kind = :kind",
                         p, TUNE_SQL_COUNT(p), id, NULL);
}

tune_result tune_rep_auto_count(tune_store *st, int64_t run, int64_t *n) {
  const tune_sql_param p[] = {{":run", run, NULL}};
  return tune_sql_scalar(st, "SELECT COUNT(*) FROM configs WHERE run_id = :run AND " AUTO_CONFIGS,
                         p, TUNE_SQL_COUNT(p), n, NULL);
}

tune_result tune_rep_has_nccl(tune_store *st, int64_t run, int *has) {
  const tune_sql_param p[] = {{":run", run, NULL}};
  int64_t n;
  TUNE_CHECK(tune_sql_scalar(st,
                             "SELECT COUNT(*) FROM configs WHERE run_id = :run AND impl = 'nccl'",
                             p, TUNE_SQL_COUNT(p), &n, NULL));
  *has = n != 0;
  return tune_ok;
}

/* ---- the configs of a pair --------------------------------------------------- */

tune_result tune_rep_dim_values(tune_store *st, int64_t run, tune_rep_dim dim,
                                tune_rep_value **values, size_t *n) {
  static const char *const cols[] = {
      [TUNE_REP_OP] = "op",     [TUNE_REP_DTYPE] = "dtype", [TUNE_REP_WORLD] = "world",
      [TUNE_REP_MODE] = "mode", [TUNE_REP_ALIGN] = "align", [TUNE_REP_BYTES] = "bytes",
  };
  static const tune_sql_col vcols[] = {TEXT(tune_rep_value, text), I64(tune_rep_value, i)};
  const tune_sql_param p[] = {{":run", run, NULL}};
  char sql[256];
  if ((unsigned)dim >= TUNE_SQL_COUNT(cols)) return tune_err_internal;
  snprintf(sql, sizeof(sql),
           "SELECT DISTINCT %s, %s FROM configs WHERE run_id = :run AND " AUTO_CONFIGS
           " ORDER BY 1",
           cols[dim], cols[dim]);
  const tune_sql_query q = TUNE_SQL_QUERY(sql, vcols, tune_rep_value);
  return tune_sql_rows(st, &q, p, TUNE_SQL_COUNT(p), (void **)values, n);
}

tune_result tune_rep_first_unpaired(tune_store *st, int64_t a, int64_t b, tune_rep_config *cfg,
                                    int *found) {
  static const tune_sql_col cols[] = {
      TEXT(tune_rep_config, op),   TEXT(tune_rep_config, dtype), I64(tune_rep_config, world),
      I64(tune_rep_config, bytes), TEXT(tune_rep_config, align), TEXT(tune_rep_config, mode),
  };
  static const tune_sql_query q = TUNE_SQL_QUERY(
      "SELECT op, dtype, world, bytes, align, mode FROM configs WHERE run_id = :a AND " AUTO_CONFIGS
      " EXCEPT SELECT op, dtype, world, bytes, align, mode FROM configs WHERE run_id = :b"
      " AND " AUTO_CONFIGS " ORDER BY 1, 2, 3, 4, 5, 6 LIMIT 1",
      cols, tune_rep_config);
  const tune_sql_param p[] = {{":a", a, NULL}, {":b", b, NULL}};
  return read_one(st, &q, p, TUNE_SQL_COUNT(p), cfg, found);
}

tune_result tune_rep_lacking(tune_store *st, int64_t full, int64_t partial, tune_rep_lack **rows,
                             size_t *n) {
  static const tune_sql_col cols[] = {
      KEY(tune_rep_lack),
      I64(tune_rep_lack, world),
      I64(tune_rep_lack, nsizes),
      I64(tune_rep_lack, min_bytes),
      I64(tune_rep_lack, max_bytes),
  };
  static const tune_sql_query q = TUNE_SQL_QUERY(
      "SELECT op, dtype, mode, align, world, COUNT(DISTINCT bytes), MIN(bytes), MAX(bytes) FROM ("
      "SELECT op, dtype, mode, align, world, bytes, in_offset, out_offset FROM configs"
      " WHERE run_id = :full AND " AUTO_CONFIGS
      " EXCEPT SELECT op, dtype, mode, align, world, bytes, in_offset, out_offset FROM configs"
      " WHERE run_id = :partial AND " AUTO_CONFIGS
      ") GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5",
      cols, tune_rep_lack);
  const tune_sql_param p[] = {{":full", full, NULL}, {":partial", partial, NULL}};
  return tune_sql_rows(st, &q, p, TUNE_SQL_COUNT(p), (void **)rows, n);
}

/* ---- figures ------------------------------------------------------------------- */

/* With an unfinished run in the pair (:partial, its id; else 0), a row of
 * table t counts only where that run measured the same op, dtype, mode,
 * alignment (align: the expression for t's), world and size -- for detcoll
 * rows at the same offsets -- so both sides compare the same configs. The
 * unfinished run's configs are a subset of the other's (the report checks
 * the pair). */
#define IN_PARTIAL(t, align)                                                            \
  " AND (:partial = 0 OR EXISTS (SELECT 1 FROM configs p WHERE p.run_id = :partial"     \
  " AND " AUTO_CONFIGS " AND p.op = " t ".op AND p.dtype = " t ".dtype AND p.mode = " t \
  ".mode AND p.align = " align " AND p.world = " t ".world AND p.bytes = " t            \
  ".bytes"                                                                              \
  " AND (" t ".impl IN ('nccl', 'nccl_symm') OR (p.in_offset = " t                      \
  ".in_offset"                                                                          \
  " AND p.out_offset = " t ".out_offset))))"

/* Offsets inside the unaligned class give several configs per size: the
 * figures show the worst (MAX), what a caller may actually get. NCCL and
 * NCCL symmetric ran on the aligned buffers in the same trials as detcoll
 * on registered ones, so the reg16 figures draw those aligned NCCL lines
 * too. */
#define LATENCY_SERIES                                                        \
  " CASE impl WHEN 'nccl' THEN 'NCCL' WHEN 'nccl_symm' THEN 'NCCL_symm' ELSE" \
  " CASE WHEN run_id = :before THEN 'before' ELSE 'after' END END, MAX(median_ns)"

static const char *const fig_sql[] = {
    [TUNE_REP_LATENCY] =
        "SELECT op, dtype, mode, align, world, bytes," LATENCY_SERIES
        " FROM configs WHERE skew_ns = 0 AND"
        " ((impl IN ('detcoll', 'detcoll_reg') AND path = 'auto' AND run_id IN (:before, :after))"
        "  OR (impl IN ('nccl', 'nccl_symm') AND run_id = :nccl))" IN_PARTIAL("configs", "configs.align")
        " GROUP BY 1, 2, 3, 4, 5, 6, 7"
        " UNION ALL SELECT op, dtype, mode, 'reg16', world, bytes," LATENCY_SERIES
        " FROM configs n WHERE skew_ns = 0 AND impl IN ('nccl', 'nccl_symm') AND run_id = :nccl"
        " AND align = 'align16' AND EXISTS (SELECT 1 FROM configs r"
        "  WHERE r.run_id IN (:before, :after) AND r.impl = 'detcoll_reg' AND r.op = n.op"
        "  AND r.dtype = n.dtype AND r.mode = n.mode AND r.world = n.world)" IN_PARTIAL("n", "'reg16'")
        " GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6",
    /* Only align16 and reg16: the unaligned class repeats the align16 story
     * at three times the figure count. */
    [TUNE_REP_CROSSOVER] =
        "SELECT op, dtype, mode, align, world, bytes, path, MAX(median_ns) FROM configs"
        " WHERE run_id = :sweep AND impl IN ('detcoll', 'detcoll_reg') AND path <> 'auto' AND skew_ns = 0"
        " AND align IN ('align16', 'reg16')"
        " GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6",
    [TUNE_REP_REGRET] =
        "SELECT '', '', '', '', world, bytes, op, MAX(regret) FROM regret WHERE run_id = :after"
        " GROUP BY 5, 6, 7 ORDER BY 5, 6",
};

tune_result tune_rep_points(tune_store *st, tune_rep_fig fig, const tune_rep_runs *runs,
                            tune_rep_point **pts, size_t *n) {
  static const tune_sql_col cols[] = {
      KEY(tune_rep_point),          I64(tune_rep_point, world), I64(tune_rep_point, bytes),
      TEXT(tune_rep_point, series), F64(tune_rep_point, value),
  };
  const tune_sql_param p[] = {
      {":before", runs->before, NULL},   {":after", runs->after, NULL},
      {":sweep", runs->sweep, NULL},     {":nccl", runs->nccl, NULL},
      {":partial", runs->partial, NULL},
  };
  if ((unsigned)fig >= TUNE_SQL_COUNT(fig_sql)) return tune_err_internal;
  const tune_sql_query q = TUNE_SQL_QUERY(fig_sql[fig], cols, tune_rep_point);
  return tune_sql_rows(st, &q, p, TUNE_SQL_COUNT(p), (void **)pts, n);
}

/* ---- the after run ------------------------------------------------------------ */

tune_result tune_rep_pairs(tune_store *st, int64_t after, int64_t *npairs, tune_rep_pair **rows,
                           size_t *n) {
  static const tune_sql_col cols[] = {
      KEY(tune_rep_pair),         I64(tune_rep_pair, world),   I64(tune_rep_pair, bytes),
      F64(tune_rep_pair, ratio),  F64(tune_rep_pair, ci_lo),   F64(tune_rep_pair, ci_hi),
      INT(tune_rep_pair, shared), F64(tune_rep_pair, prev_ns),
  };
  static const tune_sql_query q = TUNE_SQL_QUERY(
      "SELECT op, dtype, mode, align, world, bytes, MAX(ratio), ci_lo, ci_hi, MIN(shared), prev_ns"
      " FROM pairs WHERE run_id = :after GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6",
      cols, tune_rep_pair);
  const tune_sql_param p[] = {{":after", after, NULL}};
  int64_t has;
  *rows = NULL;
  *n = 0;
  *npairs = -1;
  TUNE_CHECK(tune_sql_scalar(
      st, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'pairs'", NULL, 0,
      &has, NULL));
  if (!has) return tune_ok;
  TUNE_CHECK(tune_sql_scalar(st, "SELECT COUNT(*) FROM pairs WHERE run_id = :after", p,
                             TUNE_SQL_COUNT(p), npairs, NULL));
  return tune_sql_rows(st, &q, p, TUNE_SQL_COUNT(p), (void **)rows, n);
}

tune_result tune_rep_drifts(tune_store *st, int64_t before, int64_t after, tune_rep_drift **rows,
                            size_t *n) {
  static const tune_sql_col cols[] = {
      TEXT(tune_rep_drift, op),    TEXT(tune_rep_drift, mode), TEXT(tune_rep_drift, dtype),
      TEXT(tune_rep_drift, align), I64(tune_rep_drift, world), I64(tune_rep_drift, bytes),
      F64(tune_rep_drift, drift),
  };
  static const tune_sql_query q = TUNE_SQL_QUERY(
      "SELECT p.op, p.mode, p.dtype, p.align, p.world, p.bytes, p.prev_ns / b.median_ns FROM pairs "
      "p"
      " JOIN configs b ON b.run_id = :before AND b.impl = p.impl AND b.path = 'auto' AND b.skew_ns "
      "= 0"
      " AND b.op = p.op AND b.dtype = p.dtype AND b.world = p.world AND b.bytes = p.bytes"
      " AND b.in_offset = p.in_offset AND b.out_offset = p.out_offset AND b.mode = p.mode"
      " AND b.chosen_path = p.prev_path"
      " WHERE p.run_id = :after AND b.median_ns > 0 ORDER BY 1, 2, 3, 4, 5, 6",
      cols, tune_rep_drift);
  const tune_sql_param p[] = {{":before", before, NULL}, {":after", after, NULL}};
  return tune_sql_rows(st, &q, p, TUNE_SQL_COUNT(p), (void **)rows, n);
}

static const tune_sql_col regret_cols[] = {
    KEY(tune_rep_regret),
    I64(tune_rep_regret, world),
    I64(tune_rep_regret, bytes),
    TEXT(tune_rep_regret, auto_path),
    TEXT(tune_rep_regret, best_path),
    F64(tune_rep_regret, regret),
};

tune_result tune_rep_worst_regret(tune_store *st, int64_t after, tune_rep_regret *r, int *found) {
  static const tune_sql_query q = TUNE_SQL_QUERY(
      "SELECT op, dtype, mode, align, world, bytes, auto_path, best_path, regret FROM regret"
      " WHERE run_id = :after ORDER BY regret DESC, op, dtype, mode, align, world, bytes LIMIT 1",
      regret_cols, tune_rep_regret);
  const tune_sql_param p[] = {{":after", after, NULL}};
  return read_one(st, &q, p, TUNE_SQL_COUNT(p), r, found);
}

tune_result tune_rep_regret_shares(tune_store *st, int64_t after, double target,
                                   tune_rep_regret_share **rows, size_t *n) {
  /* Parameters are integers or text: the target goes in parts per million. */
  static const tune_sql_col cols[] = {
      TEXT(tune_rep_regret_share, mode),
      I64(tune_rep_regret_share, sizes),
      I64(tune_rep_regret_share, within),
      I64(tune_rep_regret_share, same_path),
  };
  static const tune_sql_query q = TUNE_SQL_QUERY(
      "SELECT mode, COUNT(*), SUM(regret <= :target_ppm / 1e6),"
      " SUM(regret > :target_ppm / 1e6 AND auto_path = best_path) FROM regret WHERE run_id = :after"
      " GROUP BY mode ORDER BY mode",
      cols, tune_rep_regret_share);
  const tune_sql_param p[] = {{":after", after, NULL}, {":target_ppm", llround(target * 1e6), NULL}};
  return tune_sql_rows(st, &q, p, TUNE_SQL_COUNT(p), (void **)rows, n);
}

tune_result tune_rep_regret_groups(tune_store *st, int64_t after, tune_rep_regret **rows,
                                   size_t *n) {
  /* SQLite takes a MAX() row's other columns from that row. */
  static const tune_sql_query q = TUNE_SQL_QUERY(
      "SELECT op, dtype, mode, align, world, bytes, auto_path, best_path, MAX(regret) FROM regret"
      " WHERE run_id = :after GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5",
      regret_cols, tune_rep_regret);
  const tune_sql_param p[] = {{":after", after, NULL}};
  return tune_sql_rows(st, &q, p, TUNE_SQL_COUNT(p), (void **)rows, n);
}

/* ---- the sweep ------------------------------------------------------------------ */

#define XO_COLS "op, dtype, mode, align, world, skew_ns, path_below, path_above, bytes"

static const char *const xo_sql[] = {
    [TUNE_REP_XO_ALL] = "SELECT " XO_COLS
                        ", lo_bytes, hi_bytes, diff_ns, ci_lo_ns, ci_hi_ns, confidence, decided"
                        " FROM crossovers WHERE run_id = :sweep ORDER BY 1, 2, 3, 4, 5, 6, 9",
    [TUNE_REP_XO_MARKS] = "SELECT " XO_COLS
                          ", lo_bytes, hi_bytes, 0, 0, 0, 0, 1 FROM crossovers"
                          " WHERE run_id = :sweep AND skew_ns = 0 AND align IN ('align16', 'reg16')"
                          " ORDER BY 1, 2, 3, 4, 5, 9",
    [TUNE_REP_XO_HEADER_MARKS] =
        "SELECT h.op, h.dtype, h.mode, h.align, h.world, 0, h.path, n.path, h.max_bytes,"
        " h.max_bytes, h.max_bytes, 0, 0, 0, 0, 1 FROM header_rows h JOIN header_rows n"
        " ON n.header_id = h.header_id AND n.row_index = h.row_index AND n.seg_index = h.seg_index "
        "+ 1"
        " WHERE h.header_id = (SELECT MAX(id) FROM headers WHERE run_id = :sweep)"
        " AND h.skew_ns = 0 AND h.align IN ('align16', 'reg16') AND h.max_bytes >= 0"
        " ORDER BY 1, 2, 3, 4, 5, 9",
};

tune_result tune_rep_crossovers(tune_store *st, int64_t sweep, tune_rep_xo_kind kind,
                                tune_rep_xo **rows, size_t *n) {
  static const tune_sql_col cols[] = {
      KEY(tune_rep_xo),          I64(tune_rep_xo, world),  I64(tune_rep_xo, skew_ns),
      TEXT(tune_rep_xo, below),  TEXT(tune_rep_xo, above), I64(tune_rep_xo, bytes),
      I64(tune_rep_xo, lo),      I64(tune_rep_xo, hi),     F64(tune_rep_xo, diff),
      F64(tune_rep_xo, ci_lo),   F64(tune_rep_xo, ci_hi),  F64(tune_rep_xo, confidence),
      INT(tune_rep_xo, decided),
  };
  const tune_sql_param p[] = {{":sweep", sweep, NULL}};
  if ((unsigned)kind >= TUNE_SQL_COUNT(xo_sql)) return tune_err_internal;
  const tune_sql_query q = TUNE_SQL_QUERY(xo_sql[kind], cols, tune_rep_xo);
  return tune_sql_rows(st, &q, p, TUNE_SQL_COUNT(p), (void **)rows, n);
}

tune_result tune_rep_header_of(tune_store *st, int64_t run, tune_rep_header *h) {
  static const tune_sql_col cols[] = {
      I64(tune_rep_header, id),
      TEXT(tune_rep_header, path),
      INT(tune_rep_header, installed),
      INT(tune_rep_header, sim),
  };
  static const tune_sql_query q = TUNE_SQL_QUERY(
      "SELECT id, path, installed, sim FROM headers WHERE run_id = :run ORDER BY id DESC LIMIT 1",
      cols, tune_rep_header);
  const tune_sql_param p[] = {{":run", run, NULL}};
  int found;
  memset(h, 0, sizeof(*h));
  return read_one(st, &q, p, TUNE_SQL_COUNT(p), h, &found);
}

tune_result tune_rep_header_with_provenance(tune_store *st, int64_t below, const char *prov,
                                            int64_t *id) {
  const tune_sql_param p[] = {{":h", below, NULL}, {":prov", 0, prov}};
  return tune_sql_scalar(st,
                         "SELECT MAX(id) FROM headers WHERE id < :h AND instr(content,"
                         " '#define DC_THRESHOLDS_PROVENANCE \"' || :prov || '\"') > 0",
                         p, TUNE_SQL_COUNT(p), id, NULL);
}

/* ---- skew ------------------------------------------------------------------------- */

const char *const tune_rep_skew_roles[TUNE_REP_SKEW_NROLES] = {"max", "injected", "last"};

#define ROLE(r)                                                         \
  F64(tune_rep_skew_pt, role[r][0]), F64(tune_rep_skew_pt, role[r][1]), \
      F64(tune_rep_skew_pt, role[r][2])

tune_result tune_rep_skew(tune_store *st, int64_t skew, tune_rep_skew_pt **pts, size_t *npts,
                          tune_rep_skew_fit **fits, size_t *nfits) {
  static const tune_sql_col pt_cols[] = {
      TEXT(tune_rep_skew_pt, op),
      TEXT(tune_rep_skew_pt, dtype),
      TEXT(tune_rep_skew_pt, impl),
      TEXT(tune_rep_skew_pt, mode),
      I64(tune_rep_skew_pt, world),
      I64(tune_rep_skew_pt, bytes),
      I64(tune_rep_skew_pt, rows),
      I64(tune_rep_skew_pt, cols),
      I64(tune_rep_skew_pt, requested_ns),
      F64(tune_rep_skew_pt, delay),
      F64(tune_rep_skew_pt, wait),
      ROLE(0),
      ROLE(1),
      ROLE(2),
  };
  static const tune_sql_query pt_q = TUNE_SQL_QUERY(
      "SELECT op, dtype, impl, mode, world, bytes, rows, cols, requested_ns, delay_median_ns,"
      " wait_median_ns, max_median_ns, max_p10_ns, max_p90_ns, injected_median_ns,"
      " injected_p10_ns, injected_p90_ns, last_median_ns, last_p10_ns, last_p90_ns"
      " FROM skew_summaries WHERE run_id = :skew ORDER BY op, dtype, world, bytes, impl, mode,"
      " requested_ns",
      pt_cols, tune_rep_skew_pt);
  static const tune_sql_col fit_cols[] = {
      TEXT(tune_rep_skew_fit, op),      TEXT(tune_rep_skew_fit, dtype),
      TEXT(tune_rep_skew_fit, impl),    TEXT(tune_rep_skew_fit, mode),
      TEXT(tune_rep_skew_fit, role),    I64(tune_rep_skew_fit, world),
      I64(tune_rep_skew_fit, bytes),    I64(tune_rep_skew_fit, n),
      F64(tune_rep_skew_fit, slope),    F64(tune_rep_skew_fit, intercept),
      F64(tune_rep_skew_fit, slope_lo), F64(tune_rep_skew_fit, slope_hi),
      F64(tune_rep_skew_fit, icpt_lo),  F64(tune_rep_skew_fit, icpt_hi),
      F64(tune_rep_skew_fit, r2),       F64(tune_rep_skew_fit, confidence),
  };
  static const tune_sql_query fit_q = TUNE_SQL_QUERY(
      "SELECT op, dtype, impl, mode, role, world, bytes, n, slope, intercept, slope_lo, slope_hi,"
      " intercept_lo, intercept_hi, r2, confidence FROM skew_fits WHERE run_id = :skew"
      " AND role IN ('max', 'injected', 'last', 'wait')"
      " ORDER BY op, dtype, world, bytes, impl, mode, role",
      fit_cols, tune_rep_skew_fit);
  const tune_sql_param p[] = {{":skew", skew, NULL}};
  *fits = NULL;
  *nfits = 0;
  TUNE_CHECK(tune_sql_rows(st, &pt_q, p, TUNE_SQL_COUNT(p), (void **)pts, npts));
  tune_result r = tune_sql_rows(st, &fit_q, p, TUNE_SQL_COUNT(p), (void **)fits, nfits);
  if (r != tune_ok) {
    free(*pts);
    *pts = NULL;
    *npts = 0;
  }
  return r;
}
