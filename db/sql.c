/* sql.c: the helpers db/'s queries share (store_db.h): one message for a
 * failed SQLite call, prepare and step with it, named parameters, and typed
 * rows read through a column table instead of a copy of the read loop per
 * query. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_db.h"

tune_result tune_sql_fail(tune_store *st, const char *what) {
  tune_error("%s: %s: %s", tune_store_path(st), what, sqlite3_errmsg(tune_store_db(st)));
  return tune_err_db;
}

tune_result tune_sql_prepare(tune_store *st, const char *sql, sqlite3_stmt **s) {
  if (sqlite3_prepare_v2(tune_store_db(st), sql, -1, s, NULL) == SQLITE_OK) return tune_ok;
  *s = NULL;
  return tune_sql_fail(st, "prepare");
}

tune_result tune_sql_step(tune_store *st, sqlite3_stmt *s, int brc, int *row) {
  int rc = brc == SQLITE_OK ? sqlite3_step(s) : brc;
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return tune_sql_fail(st, brc == SQLITE_OK ? "query" : "bind");
  *row = rc == SQLITE_ROW;
  return tune_ok;
}

void tune_sql_text(sqlite3_stmt *s, int col, char *out, size_t len) {
  const unsigned char *t = sqlite3_column_text(s, col);
  snprintf(out, len, "%s", t ? (const char *)t : "");
}

/* Prepare sql and bind the parameters of ps its text names. */
static tune_result prepare_bound(tune_store *st, const char *sql, const tune_sql_param *ps,
                                 size_t np, sqlite3_stmt **s, int *brc) {
  *brc = SQLITE_OK;
  TUNE_CHECK(tune_sql_prepare(st, sql, s));
  for (size_t i = 0; i < np; i++) {
    int idx = sqlite3_bind_parameter_index(*s, ps[i].name);
    if (idx == 0) continue;
    TUNE_SQL_BIND(*brc, ps[i].s ? sqlite3_bind_text(*s, idx, ps[i].s, -1, SQLITE_TRANSIENT)
                                : sqlite3_bind_int64(*s, idx, ps[i].i));
  }
  return tune_ok;
}

/* The current row of s into row, column k into cols[k]'s field. */
static void fill_row(sqlite3_stmt *s, const tune_sql_query *q, char *row) {
  memset(row, 0, q->elem);
  for (size_t k = 0; k < q->ncols; k++) {
    const tune_sql_col *c = &q->cols[k];
    char *f = row + c->off;
    switch (c->kind) {
      case TUNE_SQL_TEXT:
        tune_sql_text(s, (int)k, f, c->len);
        break;
      case TUNE_SQL_I64:
        *(int64_t *)(void *)f = sqlite3_column_int64(s, (int)k);
        break;
      case TUNE_SQL_INT:
        *(int *)(void *)f = sqlite3_column_int(s, (int)k);
        break;
      case TUNE_SQL_F64:
        *(double *)(void *)f = sqlite3_column_double(s, (int)k);
        break;
    }
  }
}

tune_result tune_sql_rows(tune_store *st, const tune_sql_query *q, const tune_sql_param *ps,
                          size_t np, void **rows, size_t *n) {
  sqlite3_stmt *s;
  char *all = NULL;
  size_t cap = 0;
  int brc, row = 1;
  tune_result r;
  *rows = NULL;
  *n = 0;
  TUNE_CHECK(prepare_bound(st, q->sql, ps, np, &s, &brc));
  while ((r = tune_sql_step(st, s, brc, &row)) == tune_ok && row) {
    if ((r = tune_grow((void **)&all, &cap, *n, q->elem, 64)) != tune_ok) break;
    fill_row(s, q, all + (*n)++ * q->elem);
  }
  sqlite3_finalize(s);
  if (r != tune_ok) {
    free(all);
    *n = 0;
    return r;
  }
  *rows = all;
  return tune_ok;
}

tune_result tune_sql_scalar(tune_store *st, const char *sql, const tune_sql_param *ps, size_t np,
                            int64_t *i64, double *f64) {
  sqlite3_stmt *s;
  int brc, row = 0;
  TUNE_CHECK(prepare_bound(st, sql, ps, np, &s, &brc));
  tune_result r = tune_sql_step(st, s, brc, &row);
  if (i64) *i64 = r == tune_ok && row ? sqlite3_column_int64(s, 0) : 0;
  if (f64) *f64 = r == tune_ok && row ? sqlite3_column_double(s, 0) : 0;
  sqlite3_finalize(s);
  return r;
}
