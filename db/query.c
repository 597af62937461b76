/* query.c: read-only queries of the main job (see query.h), through the
 * query helpers of store_db.h; they run a few times per job, so nothing is
 * cached. */
#include "query.h"
#include "store_db.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The newest run of kind that names run `before` as its parent: *id (0:
 * none), whether it finished, and (thresholds non-NULL) the provenance of
 * its table. */
static tune_result child_run(tune_store *st, int64_t before, const char *kind, int64_t *id,
                             int *done, char *thresholds, size_t len) {
  typedef struct {
    int64_t id;
    int done;
    char thresholds[sizeof(((tune_chain *)0)->sweep_thresholds)];
  } child;
  static const tune_sql_col cols[] = {TUNE_SQL_FIELD(TUNE_SQL_I64, child, id),
                                      TUNE_SQL_FIELD(TUNE_SQL_INT, child, done),
                                      TUNE_SQL_FIELD(TUNE_SQL_TEXT, child, thresholds)};
  static const tune_sql_query q =
      TUNE_SQL_QUERY("SELECT id, finished_at IS NOT NULL, thresholds FROM runs"
                     " WHERE parent_run = :before AND kind = :kind ORDER BY id DESC LIMIT 1",
                     cols, child);
  const tune_sql_param p[] = {{":before", before, NULL}, {":kind", 0, kind}};
  child *c;
  size_t n;
  TUNE_CHECK(tune_sql_rows(st, &q, p, TUNE_SQL_COUNT(p), (void **)&c, &n));
  *id = n ? c->id : 0;
  *done = n ? c->done : 0;
  if (thresholds && n) snprintf(thresholds, len, "%s", c->thresholds);
  free(c);
  return tune_ok;
}

tune_result tune_query_chain(tune_store *st, int64_t before, tune_chain *ch) {
  sqlite3_stmt *s;
  int row, brc = SQLITE_OK;
  memset(ch, 0, sizeof(*ch));
  /* runs.options came with schema 4; a version 3 file is read as it is
   * (--resume looks before migrating). */
  int options = sqlite3_table_column_metadata(tune_store_db(st), "main", "runs", "options", NULL,
                                              NULL, NULL, NULL, NULL) == SQLITE_OK;
  TUNE_CHECK(tune_sql_prepare(st,
                              options ? "SELECT id, finished_at IS NOT NULL, command_line, options,"
                                        " sm, topo, gpu_model, gpu_count, host"
                                        " FROM runs WHERE id = ? AND kind = 'before'"
                                      : "SELECT id, finished_at IS NOT NULL, command_line, NULL,"
                                        " sm, topo, gpu_model, gpu_count, host"
                                        " FROM runs WHERE id = ? AND kind = 'before'",
                              &s));
  TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 1, before));
  tune_result r = tune_sql_step(st, s, brc, &row);
  if (r == tune_ok && !row) {
    tune_error("%s: there is no before run %lld", tune_store_path(st), (long long)before);
    r = tune_err_arg;
  }
  if (r == tune_ok) {
    ch->before = sqlite3_column_int64(s, 0);
    ch->before_done = sqlite3_column_int(s, 1);
    tune_sql_text(s, 2, ch->command_line, sizeof(ch->command_line));
    ch->has_options = sqlite3_column_type(s, 3) == SQLITE_TEXT;
    if (ch->has_options) tune_sql_text(s, 3, ch->options, sizeof(ch->options));
    ch->sm = sqlite3_column_int(s, 4);
    tune_sql_text(s, 5, ch->topo, sizeof(ch->topo));
    tune_sql_text(s, 6, ch->gpu_model, sizeof(ch->gpu_model));
    ch->gpu_count = sqlite3_column_int(s, 7);
    tune_sql_text(s, 8, ch->host, sizeof(ch->host));
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
  TUNE_CHECK(
      tune_sql_prepare(st, "SELECT kind, coalesce(parent_run, 0) FROM runs WHERE id = ?", &s));
  TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 1, id));
  tune_result r = tune_sql_step(st, s, brc, &row);
  if (r == tune_ok && row) {
    tune_sql_text(s, 0, kind, len);
    *parent = sqlite3_column_int64(s, 1);
  }
  sqlite3_finalize(s);
  return r;
}

tune_result tune_query_chain_below(tune_store *st, int64_t below, tune_chain *ch) {
  const tune_sql_param p[] = {{":below", below, NULL}};
  int64_t before;
  memset(ch, 0, sizeof(*ch));
  TUNE_CHECK(tune_sql_scalar(
      st, "SELECT max(id) FROM runs WHERE kind = 'before' AND (:below = 0 OR id < :below)", p,
      TUNE_SQL_COUNT(p), &before, NULL));
  return before ? tune_query_chain(st, before, ch) : tune_ok;
}

/* run_id and c's impl, op, dtype and world into parameters 1..5, where the
 * configs queries of one group start; the first failing bind's code. */
static int bind_group(sqlite3_stmt *s, int64_t run_id, const tune_cfg *c) {
  int brc = SQLITE_OK;
  TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 1, run_id));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, 2, c->impl, -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, 3, dc_op_name(c->op), -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, 4, dc_dtype_name(c->dtype), -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 5, c->world));
  return brc;
}

tune_result tune_query_best_forced(tune_store *st, int64_t run_id, const tune_cfg *c, dc_path *path,
                                   double *median_ns) {
  sqlite3_stmt *s;
  int row, brc = SQLITE_OK;
  TUNE_CHECK(tune_sql_prepare(st,
                              "SELECT path, median_ns FROM configs WHERE run_id = ? AND impl = ?"
                              " AND path <> 'auto' AND op = ? AND dtype = ? AND world = ?"
                              " AND bytes = ? AND in_offset = ? AND out_offset = ? AND mode = ?"
                              " AND skew_ns = 0 AND wrong_elems = 0 ORDER BY median_ns LIMIT 1",
                              &s));
  brc = bind_group(s, run_id, c);
  TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 6, (int64_t)c->bytes));
  TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 7, c->in_offset));
  TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 8, c->out_offset));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, 9, dc_mode_name(c->mode), -1, SQLITE_STATIC));
  tune_result r = tune_sql_step(st, s, brc, &row);
  *median_ns = 0;
  if (r == tune_ok && row) {
    int p = dc_path_parse((const char *)sqlite3_column_text(s, 0));
    *path = p < 0 ? DC_PATH_AUTO : (dc_path)p;
    *median_ns = sqlite3_column_double(s, 1);
  }
  sqlite3_finalize(s);
  return r;
}

tune_result tune_query_has_crossovers(tune_store *st, int64_t run_id, dc_op op, dc_dtype dtype,
                                      int world, dc_align align, dc_mode mode, int64_t skew_ns,
                                      int *found) {
  const tune_sql_param p[] = {
      {":run", run_id, NULL},
      {":op", 0, dc_op_name(op)},
      {":dtype", 0, dc_dtype_name(dtype)},
      {":world", world, NULL},
      {":align", 0, dc_align_name(align)},
      {":mode", 0, dc_mode_name(mode)},
      {":skew", skew_ns, NULL},
  };
  int64_t n;
  TUNE_CHECK(tune_sql_scalar(st,
                             "SELECT count(*) FROM crossovers WHERE run_id = :run AND op = :op"
                             " AND dtype = :dtype AND world = :world AND align = :align"
                             " AND mode = :mode AND skew_ns = :skew",
                             p, TUNE_SQL_COUNT(p), &n, NULL));
  *found = n != 0;
  return tune_ok;
}

tune_result tune_query_group(tune_store *st, int64_t run_id, const tune_cfg *c,
                             tune_group_config **out, size_t *n) {
  sqlite3_stmt *s;
  int row, brc;
  size_t cap = 0;
  *out = NULL;
  *n = 0;
  TUNE_CHECK(tune_sql_prepare(
      st,
      "SELECT path, bytes, id, wrong_elems FROM configs WHERE run_id = ? AND impl = ?"
      " AND op = ? AND dtype = ? AND world = ? AND in_offset = ? AND out_offset = ?"
      " AND mode = ? AND skew_ns = ? AND skew_rank = ? ORDER BY path, bytes",
      &s));
  brc = bind_group(s, run_id, c);
  TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 6, c->in_offset));
  TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 7, c->out_offset));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, 8, dc_mode_name(c->mode), -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 9, c->skew_ns));
  TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 10, c->skew_rank));
  tune_result r = tune_ok;
  while (r == tune_ok && (r = tune_sql_step(st, s, brc, &row)) == tune_ok && row) {
    int path = dc_path_parse((const char *)sqlite3_column_text(s, 0));
    if (path < 0) {
      tune_error("%s: config %lld has an unknown path", tune_store_path(st),
                 (long long)sqlite3_column_int64(s, 2));
      r = tune_err_db;
    } else if ((r = tune_grow((void **)out, &cap, *n, sizeof(**out), 256)) == tune_ok) {
      (*out)[(*n)++] =
          (tune_group_config){(dc_path)path, (uint64_t)sqlite3_column_int64(s, 1),
                              sqlite3_column_int64(s, 2), (uint64_t)sqlite3_column_int64(s, 3)};
    }
  }
  sqlite3_finalize(s);
  if (r != tune_ok) {
    free(*out);
    *out = NULL;
    *n = 0;
  }
  return r;
}

tune_result tune_query_wrong(tune_store *st, int64_t config_id, uint64_t *wrong) {
  const tune_sql_param p[] = {{":id", config_id, NULL}};
  int64_t v;
  TUNE_CHECK(tune_sql_scalar(st, "SELECT wrong_elems FROM configs WHERE id = :id", p,
                             TUNE_SQL_COUNT(p), &v, NULL));
  *wrong = (uint64_t)v;
  return tune_ok;
}

tune_result tune_query_wrong_configs(tune_store *st, const tune_chain *ch, tune_wrong_config **rows,
                                     size_t *n) {
#define W(kind, field) TUNE_SQL_FIELD(kind, tune_wrong_config, field)
  static const tune_sql_col cols[] = {
      W(TUNE_SQL_I64, run_id), W(TUNE_SQL_TEXT, kind),  W(TUNE_SQL_TEXT, impl),  W(TUNE_SQL_TEXT, op),
      W(TUNE_SQL_TEXT, path),  W(TUNE_SQL_TEXT, dtype), W(TUNE_SQL_I64, world),  W(TUNE_SQL_I64, bytes),
      W(TUNE_SQL_TEXT, mode),  W(TUNE_SQL_I64, wrong)};
#undef W
  static const tune_sql_query q = TUNE_SQL_QUERY(
      "SELECT c.run_id, r.kind, c.impl, c.op, c.path, c.dtype, c.world, c.bytes, c.mode, c.wrong_elems"
      " FROM configs c JOIN runs r ON r.id = c.run_id"
      " WHERE c.run_id IN (:before, :sweep, :after) AND c.wrong_elems > 0 ORDER BY c.id",
      cols, tune_wrong_config);
  const tune_sql_param p[] = {{":before", ch->before, NULL}, {":sweep", ch->sweep, NULL}, {":after", ch->after, NULL}};
  return tune_sql_rows(st, &q, p, TUNE_SQL_COUNT(p), (void **)rows, n);
}

void tune_wrong_config_text(const tune_wrong_config *w, char *buf, size_t len) {
  char run[32] = "";
  if (w->run_id) snprintf(run, sizeof(run), " %" PRId64, w->run_id);
  snprintf(buf, len,
           "%s %s path %s %s world %" PRId64 ", %" PRId64 " bytes per rank, %s (%s run%s, %" PRId64
           " elements wrong)",
           w->impl, w->op, w->path, w->dtype, w->world, w->bytes, w->mode, w->kind, run, w->wrong);
}

tune_result tune_query_max_regret(tune_store *st, int64_t run_id, double *max_regret) {
  const tune_sql_param p[] = {{":run", run_id, NULL}};
  return tune_sql_scalar(st, "SELECT coalesce(max(regret), 0) FROM regret WHERE run_id = :run", p,
                         TUNE_SQL_COUNT(p), NULL, max_regret);
}

/* The newest header run_id emitted into *header (0: none). */
static tune_result newest_header(tune_store *st, int64_t run_id, int64_t *header) {
  const tune_sql_param p[] = {{":run", run_id, NULL}};
  return tune_sql_scalar(st, "SELECT max(id) FROM headers WHERE run_id = :run", p,
                         TUNE_SQL_COUNT(p), header, NULL);
}

/* newest_header, where there must be one: tune_err_arg if not. */
static tune_result emitted_header(tune_store *st, int64_t run_id, int64_t *header) {
  TUNE_CHECK(newest_header(st, run_id, header));
  if (*header == 0) {
    tune_error("%s: run %lld wrote no thresholds header", tune_store_path(st), (long long)run_id);
    return tune_err_arg;
  }
  return tune_ok;
}

tune_result tune_query_header_rows(tune_store *st, int64_t run_id, dc_threshold_row **rows,
                                   size_t *nrows) {
  int64_t header;
  TUNE_CHECK(emitted_header(st, run_id, &header));
  return tune_store_get_header_rows(st, header, rows, nrows);
}

tune_result tune_query_previous_table(tune_store *st, int64_t before, dc_threshold_row **rows,
                                      size_t *nrows) {
  int64_t header;
  *rows = NULL;
  *nrows = 0;
  TUNE_CHECK(newest_header(st, before, &header));
  return header ? tune_store_get_header_rows(st, header, rows, nrows) : tune_ok;
}

tune_result tune_query_header_text(tune_store *st, int64_t run_id, char **text) {
  sqlite3_stmt *s;
  int64_t header;
  int row, brc = SQLITE_OK;
  TUNE_CHECK(emitted_header(st, run_id, &header));
  TUNE_CHECK(tune_sql_prepare(st, "SELECT content FROM headers WHERE id = ?", &s));
  TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 1, header));
  tune_result r = tune_sql_step(st, s, brc, &row);
  const unsigned char *c = r == tune_ok && row ? sqlite3_column_text(s, 0) : NULL;
  *text = c ? strdup((const char *)c) : NULL;
  if (r == tune_ok && *text == NULL) r = tune_err_system;
  sqlite3_finalize(s);
  return r;
}
