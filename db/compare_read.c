/* compare_read.c: the SQL of `tune compare` and `tune compare-headers`
 * (compare_read.h). */
#include "compare_read.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query.h"
#include "store_db.h"

struct tune_cmp_reader {
  tune_store *st;
  const char *label;
  int64_t run;
  sqlite3_stmt *samples;
};

struct tune_sweep_reader {
  tune_store *st;
  sqlite3_stmt *q;
};

/* The runs a side compares: its run; else the runs of its newest main job
 * whose after run finished (its after run, the before run it names, and
 * that before run's sweep; an older tune's after run names its sweep, whose
 * parent is the before run) and the newest finished run of each other kind
 * -- each only if it holds configurations. Unfinished runs, and runs of
 * two jobs, are never mixed in. */
static const char *cmp_runs_sql =
    "WITH a AS (SELECT max(id) AS id FROM runs WHERE kind = 'after' AND finished_at IS NOT NULL),"
    " p AS (SELECT parent_run AS id FROM runs WHERE id = (SELECT id FROM a)),"
    " job AS (SELECT id FROM a UNION SELECT id FROM p UNION SELECT parent_run FROM runs"
    " WHERE id = (SELECT id FROM p) UNION SELECT id FROM runs WHERE kind = 'sweep'"
    " AND parent_run = (SELECT id FROM p))"
    " SELECT r.id FROM runs r WHERE EXISTS (SELECT 1 FROM configs c WHERE c.run_id = r.id)"
    " AND ((?1 > 0 AND r.id = ?1) OR (?1 = 0 AND (r.id IN (SELECT id FROM job)"
    " OR (r.kind NOT IN ('before', 'sweep', 'after') AND r.id = (SELECT max(r2.id) FROM runs r2"
    " WHERE r2.kind = r.kind AND r2.finished_at IS NOT NULL"
    " AND EXISTS (SELECT 1 FROM configs c2 WHERE c2.run_id = r2.id))))))";

/* tune_store_check_run of every run a side compares: its rows, and the
 * samples compare draws its intervals from. */
static tune_result cmp_check_runs(tune_store *st, const char *label, int64_t run) {
  sqlite3_stmt *q;
  tune_result e = tune_ok;
  TUNE_CHECK(tune_sql_prepare(st, cmp_runs_sql, &q));
  int rc = sqlite3_bind_int64(q, 1, run) == SQLITE_OK ? sqlite3_step(q) : SQLITE_ERROR;
  for (; rc == SQLITE_ROW && e == tune_ok; rc = sqlite3_step(q))
    e = tune_store_check_run(st, sqlite3_column_int64(q, 0));
  sqlite3_finalize(q);
  if (e != tune_ok) return e;
  return rc == SQLITE_DONE ? tune_ok : tune_sql_fail(st, label);
}

tune_result tune_cmp_reader_open(tune_store *st, const char *label, int64_t run,
                                 tune_cmp_reader **out) {
  TUNE_CHECK(cmp_check_runs(st, label, run));
  tune_cmp_reader *r = calloc(1, sizeof(*r));
  if (r == NULL) return tune_err_system;
  r->st = st;
  r->label = label;
  r->run = run;
  tune_result e = tune_sql_prepare(
      st, "SELECT max(elapsed_ns) FROM samples WHERE config_id = ?1 GROUP BY trial ORDER BY trial",
      &r->samples);
  if (e != tune_ok) {
    free(r);
    return e;
  }
  *out = r;
  return tune_ok;
}

void tune_cmp_reader_close(tune_cmp_reader *r) {
  if (r == NULL) return;
  sqlite3_finalize(r->samples);
  free(r);
}

/* One text line of the distinct values of expr over the runs that runs_sql
 * (its ?1 bound to run) selects. */
static tune_result cmp_distinct(tune_store *st, const char *label, const char *runs_sql,
                                int64_t run, const char *expr, char *out, size_t len) {
  char sql[4096];
  snprintf(sql, sizeof(sql),
           "SELECT group_concat(v, ',') FROM (SELECT DISTINCT %s AS v FROM runs r JOIN configs c"
           " ON c.run_id = r.id WHERE r.id IN (%s) ORDER BY 1)",
           expr, runs_sql);
  sqlite3_stmt *q;
  TUNE_CHECK(tune_sql_prepare(st, sql, &q));
  int rc = sqlite3_bind_int64(q, 1, run) == SQLITE_OK ? sqlite3_step(q) : SQLITE_ERROR;
  if (rc == SQLITE_ROW) tune_sql_text(q, 0, out, len);
  sqlite3_finalize(q);
  return rc == SQLITE_ROW ? tune_ok : tune_sql_fail(st, label);
}

/* Backends, GPU models and world sizes of the runs runs_sql selects. */
static tune_result cmp_summary(tune_store *st, const char *label, const char *runs_sql, int64_t run,
                               tune_cmp_summary *s) {
  TUNE_CHECK(cmp_distinct(st, label, runs_sql, run, "r.backend", s->backends, sizeof(s->backends)));
  TUNE_CHECK(cmp_distinct(st, label, runs_sql, run, "r.gpu_model", s->models, sizeof(s->models)));
  return cmp_distinct(st, label, runs_sql, run, "c.world", s->worlds, sizeof(s->worlds));
}

tune_result tune_cmp_read_summary(tune_cmp_reader *r, tune_cmp_summary *s) {
  TUNE_CHECK(cmp_summary(r->st, r->label, cmp_runs_sql, r->run, s));
  return cmp_distinct(r->st, r->label, cmp_runs_sql, r->run, "r.kind || ' ' || r.id", s->runs,
                      sizeof(s->runs));
}

/* The cell of a result row of the cells query. */
static void cmp_cell_of(sqlite3_stmt *q, int with_kind, tune_cmp_cell *c) {
  tune_sql_text(q, 0, c->kind, sizeof(c->kind));
  tune_sql_text(q, 1, c->impl, sizeof(c->impl));
  tune_sql_text(q, 2, c->op, sizeof(c->op));
  tune_sql_text(q, 3, c->path, sizeof(c->path));
  tune_sql_text(q, 4, c->dtype, sizeof(c->dtype));
  c->world = sqlite3_column_int(q, 5);
  c->bytes = sqlite3_column_int64(q, 6);
  c->in_off = sqlite3_column_int64(q, 7);
  c->out_off = sqlite3_column_int64(q, 8);
  tune_sql_text(q, 9, c->mode, sizeof(c->mode));
  c->skew_ns = sqlite3_column_int64(q, 10);
  c->skew_rank = sqlite3_column_int(q, 11);
  c->config_id = sqlite3_column_int64(q, 12);
  c->wrong = sqlite3_column_int64(q, 13);
  snprintf(c->key, sizeof(c->key),
           "%s|%s|%s|%s|%s|%d|%020" PRId64 "|%" PRId64 "|%" PRId64 "|%s|%" PRId64 "|%d",
           with_kind ? c->kind : "", c->impl, c->op, c->path, c->dtype, c->world, c->bytes,
           c->in_off, c->out_off, c->mode, c->skew_ns, c->skew_rank);
}

static int cmp_key(const void *a, const void *b) {
  return strcmp(((const tune_cmp_cell *)a)->key, ((const tune_cmp_cell *)b)->key);
}

/* Append one row's cell to *cells. */
static tune_result cmp_push(sqlite3_stmt *q, int with_kind, tune_cmp_cell **cells, size_t *n,
                            size_t *cap) {
  TUNE_CHECK(tune_grow((void **)cells, cap, *n, sizeof(**cells), 1024));
  cmp_cell_of(q, with_kind, &(*cells)[(*n)++]);
  return tune_ok;
}

tune_result tune_cmp_read_cells(tune_cmp_reader *r, int with_kind, tune_cmp_cell **cells,
                                size_t *n) {
  char sql[4096];
  snprintf(
      sql, sizeof(sql),
      "SELECT r.kind, c.impl, c.op, c.path, c.dtype, c.world, c.bytes, c.in_offset, c.out_offset,"
      " c.mode, c.skew_ns, c.skew_rank, c.id, c.wrong_elems FROM configs c"
      " JOIN runs r ON r.id = c.run_id WHERE r.id IN (%s)",
      cmp_runs_sql);
  sqlite3_stmt *q;
  size_t cap = 0;
  *cells = NULL;
  *n = 0;
  TUNE_CHECK(tune_sql_prepare(r->st, sql, &q));
  int rc = sqlite3_bind_int64(q, 1, r->run);
  tune_result res = tune_ok;
  while (res == tune_ok && (rc == SQLITE_OK || rc == SQLITE_ROW) &&
         (rc = sqlite3_step(q)) == SQLITE_ROW)
    res = cmp_push(q, with_kind, cells, n, &cap);
  sqlite3_finalize(q);
  if (res != tune_ok) return res;
  if (rc != SQLITE_DONE) return tune_sql_fail(r->st, r->label);
  if (*n > 1) qsort(*cells, *n, sizeof(**cells), cmp_key);
  /* Two runs of one kind cannot both be the newest; a key twice is a run
   * chosen by number that holds it twice, which the schema forbids. */
  for (size_t i = 1; i < *n; i++)
    if (strcmp((*cells)[i - 1].key, (*cells)[i].key) == 0) {
      tune_error("compare: %s holds configuration %s twice", r->label, (*cells)[i].key);
      return tune_err_db;
    }
  return tune_ok;
}

tune_result tune_cmp_read_slowest(tune_cmp_reader *r, int64_t config_id, double **x, size_t *n) {
  sqlite3_stmt *q = r->samples;
  size_t cap = 0;
  *n = 0;
  *x = NULL;
  sqlite3_reset(q);
  int rc = sqlite3_bind_int64(q, 1, config_id);
  while ((rc == SQLITE_OK || rc == SQLITE_ROW) && (rc = sqlite3_step(q)) == SQLITE_ROW) {
    TUNE_CHECK(tune_grow((void **)x, &cap, *n, sizeof(**x), 64));
    (*x)[(*n)++] = sqlite3_column_double(q, 0);
  }
  return rc == SQLITE_DONE ? tune_ok : tune_sql_fail(r->st, r->label);
}

/* The previous table's measurements: a compared before run's auto configs
 * (libdetcoll's impls, no skew) and, with the pairs table, a compared after
 * run's previous-table trials. */
static const char *cmp_prev_before_sql =
    "SELECT 'before', c.impl, c.op, c.dtype, c.world, c.bytes, c.in_offset, c.out_offset, c.mode,"
    " c.align, r.id, c.median_ns FROM configs c JOIN runs r ON r.id = c.run_id"
    " WHERE r.kind = 'before' AND r.id IN (%s) AND c.path = 'auto'"
    " AND c.impl IN ('detcoll', 'detcoll_reg') AND c.skew_ns = 0 AND c.wrong_elems = 0"
    " AND c.median_ns > 0";
static const char *cmp_prev_after_sql =
    " UNION ALL SELECT 'after', p.impl, p.op, p.dtype, p.world, p.bytes, p.in_offset, p.out_offset,"
    " p.mode, p.align, r.parent_run, p.prev_ns FROM pairs p JOIN runs r ON r.id = p.run_id"
    " WHERE r.kind = 'after' AND r.id IN (%s) AND p.prev_ns > 0";

static int cmp_prev_key(const void *a, const void *b) {
  return strcmp(((const tune_cmp_prev *)a)->key, ((const tune_cmp_prev *)b)->key);
}

tune_result tune_cmp_read_previous(tune_cmp_reader *r, tune_cmp_prev **out, size_t *n) {
  char sql[8192], part[4096];
  sqlite3_stmt *q;
  int pairs = 0, rc;
  size_t cap = 0;
  tune_result res = tune_ok;
  *out = NULL;
  *n = 0;
  TUNE_CHECK(tune_sql_prepare(
      r->st, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'pairs'", &q));
  rc = sqlite3_step(q);
  pairs = rc == SQLITE_ROW;
  sqlite3_finalize(q);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return tune_sql_fail(r->st, r->label);
  snprintf(sql, sizeof(sql), cmp_prev_before_sql, cmp_runs_sql);
  if (pairs) {
    snprintf(part, sizeof(part), cmp_prev_after_sql, cmp_runs_sql);
    strncat(sql, part, sizeof(sql) - strlen(sql) - 1);
  }
  TUNE_CHECK(tune_sql_prepare(r->st, sql, &q));
  rc = sqlite3_bind_int64(q, 1, r->run);
  while (res == tune_ok && (rc == SQLITE_OK || rc == SQLITE_ROW) &&
         (rc = sqlite3_step(q)) == SQLITE_ROW) {
    if ((res = tune_grow((void **)out, &cap, *n, sizeof(**out), 1024)) != tune_ok) break;
    tune_cmp_prev *p = &(*out)[(*n)++];
    char impl[32];
    tune_sql_text(q, 0, p->kind, sizeof(p->kind));
    tune_sql_text(q, 1, impl, sizeof(impl));
    tune_sql_text(q, 2, p->op, sizeof(p->op));
    tune_sql_text(q, 3, p->dtype, sizeof(p->dtype));
    p->world = sqlite3_column_int(q, 4);
    p->bytes = sqlite3_column_int64(q, 5);
    tune_sql_text(q, 8, p->mode, sizeof(p->mode));
    tune_sql_text(q, 9, p->align, sizeof(p->align));
    p->job = sqlite3_column_int64(q, 10);
    p->median_ns = sqlite3_column_double(q, 11);
    snprintf(p->key, sizeof(p->key), "%s|%s|%s|%s|%s|%d|%020" PRId64 "|%" PRId64 "|%" PRId64,
             p->kind, p->op, p->mode, impl, p->dtype, p->world, p->bytes,
             (int64_t)sqlite3_column_int64(q, 6), (int64_t)sqlite3_column_int64(q, 7));
  }
  sqlite3_finalize(q);
  if (res == tune_ok && rc != SQLITE_DONE) res = tune_sql_fail(r->st, r->label);
  if (res != tune_ok) {
    free(*out);
    *out = NULL;
    *n = 0;
    return res;
  }
  if (*n > 1) qsort(*out, *n, sizeof(**out), cmp_prev_key);
  return tune_ok;
}

tune_result tune_cmp_previous_hash(tune_cmp_reader *r, int64_t job, uint64_t *hash, int *has) {
  dc_threshold_row *rows = NULL;
  size_t n = 0;
  TUNE_CHECK(tune_query_previous_table(r->st, job, &rows, &n));
  *has = rows != NULL;
  *hash = rows ? dc_table_hash(rows, n) : 0;
  free(rows);
  return tune_ok;
}

tune_result tune_sweep_reader_open(tune_store *st, tune_sweep_reader **out) {
  tune_sweep_reader *r = calloc(1, sizeof(*r));
  if (r == NULL) return tune_err_system;
  r->st = st;
  /* One median per size: the configs of every sweep run, averaged. */
  if (sqlite3_prepare_v2(
          tune_store_db(st),
          "SELECT c.bytes, avg(c.median_ns) FROM configs c JOIN runs r ON r.id = c.run_id"
          " WHERE r.kind = 'sweep' AND c.op = ?1 AND c.path = ?2 AND c.dtype = ?3"
          " AND c.world = ?4 AND c.align = ?5 AND c.mode = ?6 AND c.skew_ns = ?7"
          " AND c.wrong_elems = 0 GROUP BY c.bytes ORDER BY c.bytes",
          -1, &r->q, NULL) != SQLITE_OK) {
    tune_result e = tune_sql_fail(st, "compare-headers: the database has no sweep configs table");
    free(r);
    return e;
  }
  *out = r;
  return tune_ok;
}

tune_result tune_sweep_summary(tune_store *st, const char *label, tune_cmp_summary *s) {
  return cmp_summary(st, label, "SELECT id FROM runs WHERE kind = 'sweep' AND ?1 = 0", 0, s);
}

void tune_sweep_reader_close(tune_sweep_reader *r) {
  if (r == NULL) return;
  sqlite3_finalize(r->q);
  free(r);
}

tune_result tune_sweep_around(tune_sweep_reader *r, const dc_threshold_row *row, dc_path path,
                              uint64_t bytes, double lo[2], double hi[2]) {
  sqlite3_stmt *q = r->q;
  sqlite3_reset(q);
  sqlite3_clear_bindings(q);
  if (sqlite3_bind_text(q, 1, dc_op_name(row->op), -1, SQLITE_STATIC) != SQLITE_OK ||
      sqlite3_bind_text(q, 2, dc_path_name(path), -1, SQLITE_STATIC) != SQLITE_OK ||
      sqlite3_bind_text(q, 3, dc_dtype_name(row->dtype), -1, SQLITE_STATIC) != SQLITE_OK ||
      sqlite3_bind_int(q, 4, row->world) != SQLITE_OK ||
      sqlite3_bind_text(q, 5, dc_align_name(row->align), -1, SQLITE_STATIC) != SQLITE_OK ||
      sqlite3_bind_text(q, 6, dc_mode_name(row->mode), -1, SQLITE_STATIC) != SQLITE_OK ||
      sqlite3_bind_int64(q, 7, row->skew_ns) != SQLITE_OK)
    return tune_sql_fail(r->st, "compare-headers: query");
  int rc;
  lo[0] = hi[0] = -1;
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    double b = (double)sqlite3_column_int64(q, 0), v = sqlite3_column_double(q, 1);
    if (!(v > 0)) continue;
    if (b <= (double)bytes) lo[0] = b, lo[1] = v;
    if (b >= (double)bytes && hi[0] < 0) hi[0] = b, hi[1] = v;
  }
  return rc == SQLITE_DONE ? tune_ok : tune_sql_fail(r->st, "compare-headers: query");
}
