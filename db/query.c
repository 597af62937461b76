/* query.c: read-only queries of the main job (see query.h). Each prepares,
 * binds, steps and finalizes one statement; they run a few times per job,
 * so nothing is cached. */
#include "query.h"
#include "store_db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prepare sql on st's connection; a message naming what failed. */
static tune_result prepare(tune_store *st, const char *sql, sqlite3_stmt **s) {
  if (sqlite3_prepare_v2(tune_store_db(st), sql, -1, s, NULL) != SQLITE_OK) {
    tune_error("%s: %s", tune_store_path(st), sqlite3_errmsg(tune_store_db(st)));
    return tune_err_db;
  }
  return tune_ok;
}

/* Bind through BIND so the first failing bind is kept in brc. */
#define BIND(call)                    \
  do {                                \
    if (brc == SQLITE_OK) brc = call; \
  } while (0)

/* Step s (bound with result brc) expecting a row or the end; anything else
 * is an error. */
static tune_result step(tune_store *st, sqlite3_stmt *s, int brc, int *row) {
  int rc = brc == SQLITE_OK ? sqlite3_step(s) : brc;
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    tune_error("%s: %s", tune_store_path(st), sqlite3_errmsg(tune_store_db(st)));
    return tune_err_db;
  }
  *row = rc == SQLITE_ROW;
  return tune_ok;
}

/* The newest run of kind whose parent is before: its id, whether it
 * finished, and (thresholds non-NULL) the provenance of its table. */
static tune_result child_run(tune_store *st, int64_t before, const char *kind, int64_t *id,
                             int *done, char *thresholds, size_t len) {
  sqlite3_stmt *s;
  int row, brc = SQLITE_OK;
  TUNE_CHECK(prepare(st,
                     "SELECT id, finished_at IS NOT NULL, thresholds FROM runs WHERE parent_run = ?"
                     " AND kind = ? ORDER BY id DESC LIMIT 1",
                     &s));
  BIND(sqlite3_bind_int64(s, 1, before));
  BIND(sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC));
  tune_result r = step(st, s, brc, &row);
  *id = r == tune_ok && row ? sqlite3_column_int64(s, 0) : 0;
  *done = r == tune_ok && row ? sqlite3_column_int(s, 1) : 0;
  if (thresholds && r == tune_ok && row)
    snprintf(thresholds, len, "%s", (const char *)sqlite3_column_text(s, 2));
  sqlite3_finalize(s);
  return r;
}

tune_result tune_query_chain(tune_store *st, int64_t before, tune_chain *ch) {
  sqlite3_stmt *s;
  int row, brc = SQLITE_OK;
  memset(ch, 0, sizeof(*ch));
  TUNE_CHECK(prepare(st,
                     "SELECT id, finished_at IS NOT NULL, command_line, options, sm, topo FROM runs"
                     " WHERE id = ? AND kind = 'before'",
                     &s));
  BIND(sqlite3_bind_int64(s, 1, before));
  tune_result r = step(st, s, brc, &row);
  if (r == tune_ok && !row) {
    tune_error("%s: there is no before run %lld", tune_store_path(st), (long long)before);
    r = tune_err_arg;
  }
  if (r == tune_ok) {
    ch->before = sqlite3_column_int64(s, 0);
    ch->before_done = sqlite3_column_int(s, 1);
    snprintf(ch->command_line, sizeof(ch->command_line), "%s", (const char *)sqlite3_column_text(s, 2));
    ch->has_options = sqlite3_column_type(s, 3) == SQLITE_TEXT;
    if (ch->has_options)
      snprintf(ch->options, sizeof(ch->options), "%s", (const char *)sqlite3_column_text(s, 3));
    ch->sm = sqlite3_column_int(s, 4);
    snprintf(ch->topo, sizeof(ch->topo), "%s", (const char *)sqlite3_column_text(s, 5));
  }
  sqlite3_finalize(s);
  TUNE_CHECK(r);
  TUNE_CHECK(child_run(st, before, "sweep", &ch->sweep, &ch->sweep_done, ch->sweep_thresholds,
                       sizeof(ch->sweep_thresholds)));
  return child_run(st, before, "after", &ch->after, &ch->after_done, NULL, 0);
}

tune_result tune_query_run_kind(tune_store *st, int64_t id, char *kind, size_t len,
                                int64_t *parent) {
  sqlite3_stmt *s;
  int row, brc = SQLITE_OK;
  kind[0] = '\0';
  *parent = 0;
  TUNE_CHECK(prepare(st, "SELECT kind, coalesce(parent_run, 0) FROM runs WHERE id = ?", &s));
  BIND(sqlite3_bind_int64(s, 1, id));
  tune_result r = step(st, s, brc, &row);
  if (r == tune_ok && row) {
    snprintf(kind, len, "%s", (const char *)sqlite3_column_text(s, 0));
    *parent = sqlite3_column_int64(s, 1);
  }
  sqlite3_finalize(s);
  return r;
}

tune_result tune_query_chain_below(tune_store *st, int64_t below, tune_chain *ch) {
  sqlite3_stmt *s;
  int row, brc = SQLITE_OK;
  memset(ch, 0, sizeof(*ch));
  TUNE_CHECK(
      prepare(st, "SELECT max(id) FROM runs WHERE kind = 'before' AND (?1 = 0 OR id < ?1)", &s));
  BIND(sqlite3_bind_int64(s, 1, below));
  tune_result r = step(st, s, brc, &row);
  int64_t before = r == tune_ok && row ? sqlite3_column_int64(s, 0) : 0;
  sqlite3_finalize(s);
  TUNE_CHECK(r);
  return before ? tune_query_chain(st, before, ch) : tune_ok;
}

/* run_id and c's impl, op, dtype and world into parameters 1..5, where the
 * configs queries of one group start; the first failing bind's code. */
static int bind_group(sqlite3_stmt *s, int64_t run_id, const tune_cfg *c) {
  int brc = SQLITE_OK;
  BIND(sqlite3_bind_int64(s, 1, run_id));
  BIND(sqlite3_bind_text(s, 2, c->impl, -1, SQLITE_STATIC));
  BIND(sqlite3_bind_text(s, 3, dc_op_name(c->op), -1, SQLITE_STATIC));
  BIND(sqlite3_bind_text(s, 4, dc_dtype_name(c->dtype), -1, SQLITE_STATIC));
  BIND(sqlite3_bind_int(s, 5, c->world));
  return brc;
}

tune_result tune_query_best_forced(tune_store *st, int64_t run_id, const tune_cfg *c, dc_path *path,
                                   double *median_ns) {
  sqlite3_stmt *s;
  int row, brc = SQLITE_OK;
  TUNE_CHECK(prepare(st,
                     "SELECT path, median_ns FROM configs WHERE run_id = ? AND impl = ?"
                     " AND path <> 'auto' AND op = ? AND dtype = ? AND world = ? AND bytes = ?"
                     " AND in_offset = ? AND out_offset = ? AND mode = ? AND skew_ns = 0"
                     " AND wrong_elems = 0 ORDER BY median_ns LIMIT 1",
                     &s));
  brc = bind_group(s, run_id, c);
  BIND(sqlite3_bind_int64(s, 6, (int64_t)c->bytes));
  BIND(sqlite3_bind_int(s, 7, c->in_offset));
  BIND(sqlite3_bind_int(s, 8, c->out_offset));
  BIND(sqlite3_bind_text(s, 9, dc_mode_name(c->mode), -1, SQLITE_STATIC));
  tune_result r = step(st, s, brc, &row);
  *median_ns = 0;
  if (r == tune_ok && row) {
    int p = dc_path_parse((const char *)sqlite3_column_text(s, 0));
    *path = p < 0 ? DC_PATH_AUTO : (dc_path)p;
    *median_ns = sqlite3_column_double(s, 1);
  }
  sqlite3_finalize(s);
  return r;
}

tune_result tune_query_has_crossovers(tune_store *st, int64_t run_id, dc_op op, dc_dtype dtype, int world,
                                      dc_align align, dc_mode mode, int64_t skew_ns, int *found) {
  sqlite3_stmt *s;
  int row, brc = SQLITE_OK;
  TUNE_CHECK(prepare(st,
                     "SELECT 1 FROM crossovers WHERE run_id = ? AND op = ? AND dtype = ? AND world = ?"
                     " AND align = ? AND mode = ? AND skew_ns = ? LIMIT 1",
                     &s));
  BIND(sqlite3_bind_int64(s, 1, run_id));
  BIND(sqlite3_bind_text(s, 2, dc_op_name(op), -1, SQLITE_STATIC));
  BIND(sqlite3_bind_text(s, 3, dc_dtype_name(dtype), -1, SQLITE_STATIC));
  BIND(sqlite3_bind_int(s, 4, world));
  BIND(sqlite3_bind_text(s, 5, dc_align_name(align), -1, SQLITE_STATIC));
  BIND(sqlite3_bind_text(s, 6, dc_mode_name(mode), -1, SQLITE_STATIC));
  BIND(sqlite3_bind_int64(s, 7, skew_ns));
  tune_result r = step(st, s, brc, &row);
  *found = r == tune_ok && row;
  sqlite3_finalize(s);
  return r;
}

tune_result tune_query_group(tune_store *st, int64_t run_id, const tune_cfg *c,
                             tune_group_config **out, size_t *n) {
  sqlite3_stmt *s;
  int row, brc = SQLITE_OK;
  size_t cap = 0;
  *out = NULL;
  *n = 0;
  TUNE_CHECK(
      prepare(st,
              "SELECT path, bytes, id, wrong_elems FROM configs WHERE run_id = ? AND impl = ?"
              " AND op = ? AND dtype = ? AND world = ? AND in_offset = ? AND out_offset = ?"
              " AND mode = ? AND skew_ns = ? AND skew_rank = ? ORDER BY path, bytes",
              &s));
  brc = bind_group(s, run_id, c);
  BIND(sqlite3_bind_int(s, 6, c->in_offset));
  BIND(sqlite3_bind_int(s, 7, c->out_offset));
  BIND(sqlite3_bind_text(s, 8, dc_mode_name(c->mode), -1, SQLITE_STATIC));
  BIND(sqlite3_bind_int64(s, 9, c->skew_ns));
  BIND(sqlite3_bind_int(s, 10, c->skew_rank));
  tune_result r = tune_ok;
  while (r == tune_ok && (r = step(st, s, brc, &row)) == tune_ok && row) {
    int path = dc_path_parse((const char *)sqlite3_column_text(s, 0));
    if (path < 0) {
      tune_error("%s: config %lld has an unknown path", tune_store_path(st),
                 (long long)sqlite3_column_int64(s, 2));
      r = tune_err_db;
    } else if (*n == cap) {
      tune_group_config *g = realloc(*out, (cap = cap ? 2 * cap : 256) * sizeof(*g));
      if (g == NULL)
        r = tune_err_system;
      else
        *out = g;
    }
    if (r == tune_ok)
      (*out)[(*n)++] =
          (tune_group_config){(dc_path)path, (uint64_t)sqlite3_column_int64(s, 1),
                              sqlite3_column_int64(s, 2), (uint64_t)sqlite3_column_int64(s, 3)};
  }
  sqlite3_finalize(s);
  if (r != tune_ok) {
    free(*out);
    *out = NULL;
    *n = 0;
  }
  return r;
}

/* The first column of the single row sql returns for parameter id, as
 * both an integer and a double (0 when there is no row or it is NULL). */
static tune_result scalar(tune_store *st, const char *sql, int64_t id, int64_t *i64, double *f64) {
  sqlite3_stmt *s;
  int row, brc = SQLITE_OK;
  TUNE_CHECK(prepare(st, sql, &s));
  BIND(sqlite3_bind_int64(s, 1, id));
  tune_result r = step(st, s, brc, &row);
  if (i64) *i64 = r == tune_ok && row ? sqlite3_column_int64(s, 0) : 0;
  if (f64) *f64 = r == tune_ok && row ? sqlite3_column_double(s, 0) : 0;
  sqlite3_finalize(s);
  return r;
}

tune_result tune_query_wrong(tune_store *st, int64_t config_id, uint64_t *wrong) {
  int64_t v;
  TUNE_CHECK(scalar(st, "SELECT wrong_elems FROM configs WHERE id = ?", config_id, &v, NULL));
  *wrong = (uint64_t)v;
  return tune_ok;
}

tune_result tune_query_max_regret(tune_store *st, int64_t run_id, double *max_regret) {
  return scalar(st, "SELECT coalesce(max(regret), 0) FROM regret WHERE run_id = ?", run_id, NULL, max_regret);
}

/* The newest header run_id emitted into *header; tune_err_arg if none. */
static tune_result newest_header(tune_store *st, int64_t run_id, int64_t *header) {
  TUNE_CHECK(scalar(st, "SELECT max(id) FROM headers WHERE run_id = ?", run_id, header, NULL));
  if (*header == 0) {
    tune_error("%s: run %lld wrote no thresholds header", tune_store_path(st), (long long)run_id);
    return tune_err_arg;
  }
  return tune_ok;
}

tune_result tune_query_header_rows(tune_store *st, int64_t run_id, dc_threshold_row **rows, size_t *nrows) {
  int64_t header;
  TUNE_CHECK(newest_header(st, run_id, &header));
  return tune_store_get_header_rows(st, header, rows, nrows);
}

tune_result tune_query_previous_table(tune_store *st, int64_t before, dc_threshold_row **rows,
                                      size_t *nrows) {
  int64_t header;
  *rows = NULL;
  *nrows = 0;
  TUNE_CHECK(scalar(st, "SELECT max(id) FROM headers WHERE run_id = ?", before, &header, NULL));
  return header ? tune_store_get_header_rows(st, header, rows, nrows) : tune_ok;
}

tune_result tune_query_header_text(tune_store *st, int64_t run_id, char **text) {
  sqlite3_stmt *s;
  int64_t header;
  int row, brc = SQLITE_OK;
  TUNE_CHECK(newest_header(st, run_id, &header));
  TUNE_CHECK(prepare(st, "SELECT content FROM headers WHERE id = ?", &s));
  BIND(sqlite3_bind_int64(s, 1, header));
  tune_result r = step(st, s, brc, &row);
  const unsigned char *c = r == tune_ok && row ? sqlite3_column_text(s, 0) : NULL;
  *text = c ? strdup((const char *)c) : NULL;
  if (r == tune_ok && *text == NULL) r = tune_err_system;
  sqlite3_finalize(s);
  return r;
}
