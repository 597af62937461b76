/* store_db.h: the store's SQLite connection and the helpers every query of
 * db/ shares (sql.c), for db/ itself and for tests. Nothing above the db
 * floor includes it: everything else asks the store's typed readers and
 * writers. */
#ifndef TUNE_STORE_DB_H
#define TUNE_STORE_DB_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* The connection, for read queries. Do not close it, and do not leave a
 * transaction open across store calls other than
 * tune_store_begin/commit/rollback. */
sqlite3 *tune_store_db(tune_store *st);

/* A failed SQLite call on st: one tune_error() line "<file>: <what>:
 * <SQLite's message>"; tune_err_db. */
tune_result tune_sql_fail(tune_store *st, const char *what);

/* Prepare sql on st's connection (a failure: tune_sql_fail). */
tune_result tune_sql_prepare(tune_store *st, const char *sql, sqlite3_stmt **s);

/* Bind through TUNE_SQL_BIND so that the first failing bind is kept in brc
 * (an int that starts as SQLITE_OK). */
#define TUNE_SQL_BIND(brc, call)          \
  do {                                    \
    if ((brc) == SQLITE_OK) (brc) = call; \
  } while (0)

/* Step s, whose binds gave brc, expecting a row or the end: *row 1 or 0;
 * anything else is tune_sql_fail. */
tune_result tune_sql_step(tune_store *st, sqlite3_stmt *s, int brc, int *row);

/* Column col of s's row as text into out ("" for NULL). */
void tune_sql_text(sqlite3_stmt *s, int col, char *out, size_t len);

/* How many rows a parameter or column table holds. */
#define TUNE_SQL_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* A named parameter of a query: name (":run") bound to the text s, or to
 * the integer i where s is NULL. */
typedef struct {
  const char *name;
  int64_t i;
  const char *s;
} tune_sql_param;

/* What a result column fills in a row struct: text (cut to the field, ""
 * for NULL), a 64-bit or a plain integer, or a double. */
typedef enum { TUNE_SQL_TEXT, TUNE_SQL_I64, TUNE_SQL_INT, TUNE_SQL_F64 } tune_sql_kind;
typedef struct {
  tune_sql_kind kind;
  size_t off, len;
} tune_sql_col;
#define TUNE_SQL_FIELD(kind, type, field) \
  { kind, offsetof(type, field), sizeof(((type *)0)->field) }

/* A typed query: sql, its result columns in SELECT order (column k fills
 * cols[k]), and the size of the row struct they fill. */
typedef struct {
  const char *sql;
  const tune_sql_col *cols;
  size_t ncols, elem;
} tune_sql_query;

#define TUNE_SQL_QUERY(sql, cols, type) \
  { sql, cols, TUNE_SQL_COUNT(cols), sizeof(type) }

/* Every row of q, with the parameters of ps[0..np) that q's SQL names bound
 * (the others are left out): *rows malloc'd (NULL for none; the caller
 * frees it), *n rows. */
tune_result tune_sql_rows(tune_store *st, const tune_sql_query *q, const tune_sql_param *ps,
                          size_t np, void **rows, size_t *n);

/* The first column of the first row of sql as an integer into *i64 and as
 * a double into *f64 (either may be NULL; 0 when there is no row, or
 * NULL), parameters as tune_sql_rows. */
tune_result tune_sql_scalar(tune_store *st, const char *sql, const tune_sql_param *ps, size_t np,
                            int64_t *i64, double *f64);

#endif /* TUNE_STORE_DB_H */
