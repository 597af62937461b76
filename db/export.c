/* export.c: `tune export` -- the store's tables as CSV or JSON, written from
 * one read snapshot through the public store API. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "store_db.h"

/* One output format: called around and for each table and row. first is 1
 * for the first table of the export / the first row of a table. */
typedef struct {
  const char *name;
  int one_table; /* 1: the format has no way to hold several tables in one output */
  void (*begin)(FILE *out);
  void (*table_begin)(FILE *out, sqlite3_stmt *s, const char *table, int first);
  void (*row)(FILE *out, sqlite3_stmt *s, int first);
  void (*table_end)(FILE *out, int nrows);
  void (*end)(FILE *out);
} export_format;

static void put_hex(FILE *out, const unsigned char *p, int n) {
  for (int i = 0; i < n; i++) fprintf(out, "%02x", p[i]);
}

/* ---- csv -------------------------------------------------------------------- */

static void csv_text(FILE *out, const char *v) {
  if (strpbrk(v, ",\"\r\n") == NULL) {
    fputs(v, out);
    return;
  }
  fputc('"', out);
  for (const char *p = v; *p; p++) {
    if (*p == '"') fputc('"', out);
    fputc(*p, out);
  }
  fputc('"', out);
}

static void csv_value(FILE *out, sqlite3_stmt *s, int col) {
  switch (sqlite3_column_type(s, col)) {
    case SQLITE_INTEGER:
      fprintf(out, "%" PRId64, (int64_t)sqlite3_column_int64(s, col));
      break;
    case SQLITE_FLOAT:
      fprintf(out, "%.17g", sqlite3_column_double(s, col));
      break;
    case SQLITE_TEXT:
      csv_text(out, (const char *)sqlite3_column_text(s, col));
      break;
    case SQLITE_BLOB:
      put_hex(out, sqlite3_column_blob(s, col), sqlite3_column_bytes(s, col));
      break;
    default: /* NULL: an empty field */
      break;
  }
}

static void csv_begin(FILE *out) { (void)out; }

static void csv_table_begin(FILE *out, sqlite3_stmt *s, const char *table, int first) {
  (void)table, (void)first;
  for (int c = 0; c < sqlite3_column_count(s); c++) {
    if (c) fputc(',', out);
    csv_text(out, sqlite3_column_name(s, c));
  }
  fputc('\n', out);
}

static void csv_row(FILE *out, sqlite3_stmt *s, int first) {
  (void)first;
  for (int c = 0; c < sqlite3_column_count(s); c++) {
    if (c) fputc(',', out);
    csv_value(out, s, c);
  }
  fputc('\n', out);
}

static void csv_table_end(FILE *out, int nrows) { (void)out, (void)nrows; }

static void csv_end(FILE *out) { (void)out; }

/* ---- json ------------------------------------------------------------------- */

static void json_value(FILE *out, sqlite3_stmt *s, int col) {
  double d;
  switch (sqlite3_column_type(s, col)) {
    case SQLITE_INTEGER:
      fprintf(out, "%" PRId64, (int64_t)sqlite3_column_int64(s, col));
      break;
    case SQLITE_FLOAT:
      d = sqlite3_column_double(s, col);
      if (isfinite(d))
        fprintf(out, "%.17g", d);
      else
        fputs("null", out);
      break;
    case SQLITE_TEXT:
      tune_json_string(out, (const char *)sqlite3_column_text(s, col));
      break;
    case SQLITE_BLOB:
      fputc('"', out);
      put_hex(out, sqlite3_column_blob(s, col), sqlite3_column_bytes(s, col));
      fputc('"', out);
      break;
    default:
      fputs("null", out);
      break;
  }
}

static void json_begin(FILE *out) { fputc('{', out); }

static void json_table_begin(FILE *out, sqlite3_stmt *s, const char *table, int first) {
  (void)s;
  fputs(first ? "\n  " : ",\n  ", out);
  tune_json_string(out, table);
  fputs(": [", out);
}

static void json_row(FILE *out, sqlite3_stmt *s, int first) {
  fputs(first ? "\n    {" : ",\n    {", out);
  for (int c = 0; c < sqlite3_column_count(s); c++) {
    if (c) fputs(", ", out);
    tune_json_string(out, sqlite3_column_name(s, c));
    fputs(": ", out);
    json_value(out, s, c);
  }
  fputc('}', out);
}

static void json_table_end(FILE *out, int nrows) { fputs(nrows ? "\n  ]" : "]", out); }

static void json_end(FILE *out) { fputs("\n}\n", out); }

static const export_format formats[] = {
    {"csv", 1, csv_begin, csv_table_begin, csv_row, csv_table_end, csv_end},
    {"json", 0, json_begin, json_table_begin, json_row, json_table_end, json_end},
};

/* ---- driver ------------------------------------------------------------------ */

typedef struct {
  char **name;
  int n;
} table_list;

static void tables_free(table_list *t) {
  for (int i = 0; i < t->n; i++) free(t->name[i]);
  free(t->name);
}

/* The user tables of the store in creation order (schema order). */
static tune_result tables_list(tune_store *st, table_list *t) {
  static const char sql[] =
      "SELECT name FROM sqlite_master WHERE type = 'table'"
      " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid";
  sqlite3 *db = tune_store_db(st);
  sqlite3_stmt *s = NULL;
  tune_result r = tune_ok;
  int rc;
  if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) goto db_fail;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    char **grown = realloc(t->name, (size_t)(t->n + 1) * sizeof(*t->name));
    if (grown == NULL) goto oom;
    t->name = grown;
    if ((t->name[t->n] = strdup((const char *)sqlite3_column_text(s, 0))) == NULL) goto oom;
    t->n++;
  }
  if (rc != SQLITE_DONE) goto db_fail;
  goto exit;
oom:
  tune_error("out of memory listing tables");
  r = tune_err_system;
  goto exit;
db_fail:
  tune_error("%s: listing tables: %s", tune_store_path(st), sqlite3_errmsg(db));
  r = tune_err_db;
exit:
  sqlite3_finalize(s);
  return r;
}

/* SQL tune_bw(op, world, bytes, ns, busbw): nccl-tests' algbw (busbw when
 * the last argument is 1) in GB/s, by tune_bandwidth; NULL where it is
 * undefined. */
static void sql_bandwidth(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  (void)argc;
  const int op = dc_op_parse((const char *)sqlite3_value_text(v[0]));
  const tune_bw bw = tune_bandwidth((dc_op)op, sqlite3_value_int(v[1]), (uint64_t)sqlite3_value_int64(v[2]),
                                    sqlite3_value_double(v[3]));
  const double x = sqlite3_value_int(v[4]) ? bw.busbw : bw.algbw;
  if (op < 0 || isnan(x))
    sqlite3_result_null(ctx);
  else
    sqlite3_result_double(ctx, x);
}

static tune_result export_table(tune_store *st, const export_format *f, const char *table,
                                int first, FILE *out) {
  sqlite3 *db = tune_store_db(st);
  sqlite3_stmt *s = NULL;
  int rc, nrows = 0;
  tune_result r = tune_ok;
  /* The name comes from sqlite_master; %w quotes it as an identifier anyway.
   * Configurations also get their bandwidths, as nccl-tests reports them. */
  char *sql = strcmp(table, "configs") == 0
                  ? sqlite3_mprintf(
                        "SELECT *, tune_bw(op, world, bytes, median_ns, 0) AS algbw_gbs,"
                        " tune_bw(op, world, bytes, median_ns, 1) AS busbw_gbs FROM configs")
                  : sqlite3_mprintf("SELECT * FROM \"%w\"", table);
  if (sqlite3_create_function(db, "tune_bw", 5, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, sql_bandwidth, NULL,
                              NULL) != SQLITE_OK)
    goto fail;
  if (sql == NULL || sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) goto fail;
  f->table_begin(out, s, table, first);
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) f->row(out, s, nrows++ == 0);
  if (rc != SQLITE_DONE) goto fail;
  f->table_end(out, nrows);
  goto exit;
fail:
  tune_error("%s: exporting %s: %s", tune_store_path(st), table, sqlite3_errmsg(db));
  r = tune_err_db;
exit:
  sqlite3_finalize(s);
  sqlite3_free(sql);
  return r;
}

tune_result tune_store_export(tune_store *st, const char *table, const char *format, FILE *out) {
  const export_format *f = NULL;
  table_list tl = {NULL, 0};
  tune_result r = tune_ok;
  int own_tx = 0, found = table == NULL;
  sqlite3 *db = tune_store_db(st);
  if (db == NULL || out == NULL) {
    tune_error("export: no database or output");
    return tune_err_arg;
  }
  for (size_t i = 0; format != NULL && i < sizeof(formats) / sizeof(formats[0]); i++)
    if (strcmp(format, formats[i].name) == 0) f = &formats[i];
  if (f == NULL) {
    tune_error("export: unknown format '%s' (csv or json)", format ? format : "");
    return tune_err_arg;
  }
  if (table == NULL && f->one_table) {
    tune_error("export: %s holds one table: name it (--table)", f->name);
    return tune_err_arg;
  }
  /* One read transaction: every table from the same snapshot, even while a
   * sweep keeps writing. */
  if (sqlite3_get_autocommit(db)) {
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
      tune_error("%s: export: %s", tune_store_path(st), sqlite3_errmsg(db));
      return tune_err_db;
    }
    own_tx = 1;
  }
  TUNE_CHECK_GOTO(tables_list(st, &tl), r, exit);
  for (int i = 0; table != NULL && i < tl.n; i++) found |= strcmp(tl.name[i], table) == 0;
  if (!found) {
    tune_error("%s: export: no table '%s'", tune_store_path(st), table);
    r = tune_err_arg;
    goto exit;
  }
  f->begin(out);
  for (int i = 0, first = 1; i < tl.n; i++) {
    if (table != NULL && strcmp(tl.name[i], table) != 0) continue;
    TUNE_CHECK_GOTO(export_table(st, f, tl.name[i], first, out), r, exit);
    first = 0;
  }
  f->end(out);
  if (fflush(out) != 0 || ferror(out)) {
    tune_error("export: writing the output failed: %s", strerror(errno));
    r = tune_err_system;
  }
exit:
  if (own_tx) sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
  tables_free(&tl);
  return r;
}
