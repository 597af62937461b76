/* fleet_db.c: tune fleet's tables (see fleet_db.h). Each node keeps every sample
 * in its own database; the fleet database holds one summary per node and
 * configuration (its slowest-rank time per trial as a blob of floats), and
 * full samples only for the cells where a node stands out. */
#include "fleet_db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "query.h"
#include "store_db.h"

static const char fleet_schema[] =
    "CREATE TABLE IF NOT EXISTS fleet_nodes ("
    " fleet_id INTEGER NOT NULL REFERENCES runs(id), node INTEGER NOT NULL, name TEXT NOT NULL,"
    " host TEXT NOT NULL, ranks INTEGER NOT NULL, status TEXT NOT NULL, error TEXT, db TEXT NOT NULL,"
    " gpu_model TEXT, gpu_count INTEGER, sm INTEGER, topo TEXT, driver TEXT, cuda TEXT, nccl TEXT,"
    " mpi TEXT, before_run INTEGER, sweep_run INTEGER, after_run INTEGER, mismatch TEXT,"
    " PRIMARY KEY (fleet_id, node), UNIQUE (fleet_id, name));"
    "CREATE TABLE IF NOT EXISTS fleet_cells ("
    " fleet_id INTEGER NOT NULL, node INTEGER NOT NULL, config_id INTEGER NOT NULL, kind TEXT NOT NULL,"
    " impl TEXT NOT NULL, op TEXT NOT NULL, path TEXT NOT NULL, chosen_path TEXT NOT NULL,"
    " dtype TEXT NOT NULL, world INTEGER NOT NULL, bytes INTEGER NOT NULL, in_offset INTEGER NOT NULL,"
    " out_offset INTEGER NOT NULL, align TEXT NOT NULL, mode TEXT NOT NULL, skew_ns INTEGER NOT NULL,"
    " skew_rank INTEGER NOT NULL, trials INTEGER NOT NULL, wrong_elems INTEGER NOT NULL,"
    " median_ns REAL NOT NULL, p10_ns REAL NOT NULL, p90_ns REAL NOT NULL,"
    " slowest BLOB," /* float32 per trial: the slowest rank's time, ns */
    " PRIMARY KEY (fleet_id, node, config_id)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS fleet_samples ("
    " fleet_id INTEGER NOT NULL, node INTEGER NOT NULL, config_id INTEGER NOT NULL,"
    " trial INTEGER NOT NULL, rank INTEGER NOT NULL, elapsed_ns INTEGER NOT NULL,"
    " PRIMARY KEY (fleet_id, node, config_id, trial, rank)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS fleet_consensus ("
    " fleet_id INTEGER NOT NULL, op TEXT NOT NULL, dtype TEXT NOT NULL, world INTEGER NOT NULL,"
    " align TEXT NOT NULL, mode TEXT NOT NULL, bytes INTEGER NOT NULL, path TEXT NOT NULL,"
    " fleet_ns REAL NOT NULL, nodes INTEGER NOT NULL, agree INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS fleet_regret ("
    " fleet_id INTEGER NOT NULL, node INTEGER NOT NULL, op TEXT NOT NULL, dtype TEXT NOT NULL,"
    " world INTEGER NOT NULL, align TEXT NOT NULL, mode TEXT NOT NULL, bytes INTEGER NOT NULL,"
    " own_path TEXT NOT NULL, fleet_path TEXT NOT NULL, own_ns REAL NOT NULL, fleet_ns REAL NOT NULL,"
    " regret REAL NOT NULL);"
    "CREATE TABLE IF NOT EXISTS fleet_outliers ("
    " fleet_id INTEGER NOT NULL, node INTEGER NOT NULL, config_id INTEGER NOT NULL, kind TEXT NOT NULL,"
    " impl TEXT NOT NULL, op TEXT NOT NULL, dtype TEXT NOT NULL, world INTEGER NOT NULL,"
    " align TEXT NOT NULL, mode TEXT NOT NULL, bytes INTEGER NOT NULL, node_ns REAL NOT NULL,"
    " fleet_ns REAL NOT NULL, mad_ns REAL NOT NULL, score REAL NOT NULL, ratio REAL NOT NULL);";

/* Step a statement that returns no row, then finalize it. */
static tune_result run_once(tune_store *st, sqlite3_stmt *s, int brc) {
  int rc = brc == SQLITE_OK ? sqlite3_step(s) : brc;
  tune_result r = rc == SQLITE_DONE ? tune_ok : tune_sql_fail(st, "write");
  sqlite3_finalize(s);
  return r;
}

tune_result tune_fleet_db_init(tune_store *st) {
  char *msg = NULL;
  if (sqlite3_exec(tune_store_db(st), fleet_schema, NULL, NULL, &msg) == SQLITE_OK) return tune_ok;
  tune_error("%s: fleet tables: %s", tune_store_path(st), msg ? msg : "?");
  sqlite3_free(msg);
  return tune_err_db;
}

/* Run each statement of sql[0..n), every one with one parameter, id. */
static tune_result run_with_id(tune_store *st, const char *const *sql, size_t n, int64_t id) {
  for (size_t i = 0; i < n; i++) {
    sqlite3_stmt *s;
    int brc = SQLITE_OK;
    TUNE_CHECK(tune_sql_prepare(st, sql[i], &s));
    TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 1, id));
    TUNE_CHECK(run_once(st, s, brc));
  }
  return tune_ok;
}

tune_result tune_fleet_clear_analysis(tune_store *st, int64_t fleet_id) {
  static const char *const sql[] = {
      "DELETE FROM fleet_consensus WHERE fleet_id = ?", "DELETE FROM fleet_regret WHERE fleet_id = ?",
      "DELETE FROM fleet_outliers WHERE fleet_id = ?", "DELETE FROM fleet_samples WHERE fleet_id = ?"};
  return run_with_id(st, sql, sizeof(sql) / sizeof(sql[0]), fleet_id);
}

tune_result tune_fleet_drop_run(tune_store *st, int64_t fleet_id) {
  static const char *const sql[] = {
      "DELETE FROM fleet_cells WHERE fleet_id = ?",
      "DELETE FROM fleet_nodes WHERE fleet_id = ?",
      "DELETE FROM header_rows WHERE header_id IN (SELECT id FROM headers WHERE run_id = ?)",
      "DELETE FROM headers WHERE run_id = ?",
      "DELETE FROM runs WHERE kind = 'fleet' AND id = ?"};
  TUNE_CHECK(tune_store_begin(st));
  tune_result r = tune_fleet_clear_analysis(st, fleet_id);
  if (r == tune_ok) r = run_with_id(st, sql, sizeof(sql) / sizeof(sql[0]), fleet_id);
  if (r == tune_ok) return tune_store_commit(st);
  tune_store_rollback(st);
  return r;
}

tune_result tune_fleet_only_run(tune_store *st, int64_t fleet_id, int *only) {
  const tune_sql_param p[] = {{":fleet", fleet_id, NULL}};
  int64_t others = 1;
  TUNE_CHECK(tune_sql_scalar(st, "SELECT count(*) FROM runs WHERE id <> :fleet", p, TUNE_SQL_COUNT(p), &others,
                             NULL));
  *only = others == 0;
  return tune_ok;
}

tune_result tune_fleet_find_run(tune_store *st, const char *options, int64_t *fleet_id) {
  const tune_sql_param p[] = {{":options", 0, options}};
  return tune_sql_scalar(st,
                         "SELECT max(id) FROM runs WHERE kind = 'fleet' AND finished_at IS NULL"
                         " AND options = :options AND gpu_count > 0",
                         p, TUNE_SQL_COUNT(p), fleet_id, NULL);
}

tune_result tune_fleet_put_node(tune_store *st, int64_t fleet_id, const tune_fleet_node_row *n) {
  sqlite3_stmt *s;
  int brc = SQLITE_OK;
  TUNE_CHECK(tune_sql_prepare(
      st,
      "INSERT INTO fleet_nodes (fleet_id, node, name, host, ranks, status, error, db)"
      " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (fleet_id, node) DO UPDATE SET"
      " ranks = excluded.ranks, status = excluded.status, error = excluded.error,"
      " db = excluded.db, host = excluded.host",
      &s));
  TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 1, fleet_id));
  TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 2, n->node));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, 3, n->name, -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, 4, n->host, -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 5, n->ranks));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, 6, n->status, -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, n->error ? sqlite3_bind_text(s, 7, n->error, -1, SQLITE_STATIC)
                              : sqlite3_bind_null(s, 7));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, 8, n->db, -1, SQLITE_STATIC));
  return run_once(st, s, brc);
}

tune_result tune_fleet_node_id(tune_store *st, int64_t fleet_id, const char *name, int *node) {
  const tune_sql_param p[] = {{":fleet", fleet_id, NULL}, {":name", 0, name}};
  int64_t v;
  TUNE_CHECK(tune_sql_scalar(st,
                             "SELECT coalesce((SELECT node FROM fleet_nodes WHERE fleet_id = "
                             ":fleet AND name = :name), -1)",
                             p, TUNE_SQL_COUNT(p), &v, NULL));
  *node = (int)v;
  return tune_ok;
}

tune_result tune_fleet_next_id(tune_store *st, int64_t *id) {
  TUNE_CHECK(tune_sql_scalar(st, "SELECT coalesce(max(id), 0) + 1 FROM runs", NULL, 0, id, NULL));
  return tune_ok;
}

tune_result tune_fleet_node_count(tune_store *st, int64_t fleet_id, int *n) {
  const tune_sql_param p[] = {{":fleet", fleet_id, NULL}};
  int64_t v;
  TUNE_CHECK(tune_sql_scalar(st, "SELECT count(*) FROM fleet_nodes WHERE fleet_id = :fleet", p,
                             TUNE_SQL_COUNT(p), &v, NULL));
  *n = (int)v;
  return tune_ok;
}

tune_result tune_fleet_mark_missing(tune_store *st, int64_t fleet_id, const unsigned char *present,
                                    int npresent) {
  sqlite3_stmt *s;
  TUNE_CHECK(tune_sql_prepare(
      st, "SELECT node FROM fleet_nodes WHERE fleet_id = ? AND status = 'running'", &s));
  int nodes[4096], n = 0, rc;
  if (sqlite3_bind_int64(s, 1, fleet_id) != SQLITE_OK) {
    sqlite3_finalize(s);
    return tune_sql_fail(st, "bind");
  }
  while ((rc = sqlite3_step(s)) == SQLITE_ROW && n < 4096) {
    int k = sqlite3_column_int(s, 0);
    if (k < 0 || k >= npresent || !present[k]) nodes[n++] = k;
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) return tune_sql_fail(st, "nodes");
  for (int i = 0; i < n; i++) {
    int brc = SQLITE_OK;
    TUNE_CHECK(tune_sql_prepare(
        st,
        "UPDATE fleet_nodes SET status = 'missing', error = 'not in the resumed job"
        " (the node dropped out)' WHERE fleet_id = ? AND node = ?",
        &s));
    TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 1, fleet_id));
    TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 2, nodes[i]));
    TUNE_CHECK(run_once(st, s, brc));
  }
  return tune_ok;
}

/* The node's hardware and runs into its row, from its before run. */
static const char merge_node_sql[] =
    "UPDATE fleet_nodes SET (gpu_model, gpu_count, sm, topo, driver, cuda, nccl, mpi) ="
    " (SELECT gpu_model, gpu_count, sm, topo, driver, cuda, nccl, mpi FROM n.runs WHERE id = ?3),"
    " before_run = ?3, sweep_run = ?4, after_run = ?5 WHERE fleet_id = ?1 AND node = ?2";

static const char merge_cells_sql[] =
    "INSERT OR REPLACE INTO fleet_cells SELECT ?1, ?2, c.id, r.kind, c.impl, c.op, c.path, c.chosen_path,"
    " c.dtype, c.world, c.bytes, c.in_offset, c.out_offset, c.align, c.mode, c.skew_ns, c.skew_rank,"
    " c.trials, c.wrong_elems, c.median_ns, c.p10_ns, c.p90_ns, NULL"
    " FROM n.configs c JOIN n.runs r ON r.id = c.run_id WHERE c.run_id IN (?3, ?4, ?5)";

/* The same, taking each config's slowest-rank times from the node's own
 * summary (tune_fleet_node_summarize). */
static const char merge_cells_summary_sql[] =
    "INSERT OR REPLACE INTO fleet_cells SELECT ?1, ?2, c.id, r.kind, c.impl, c.op, c.path, c.chosen_path,"
    " c.dtype, c.world, c.bytes, c.in_offset, c.out_offset, c.align, c.mode, c.skew_ns, c.skew_rank,"
    " c.trials, c.wrong_elems, c.median_ns, c.p10_ns, c.p90_ns, z.slowest"
    " FROM n.configs c JOIN n.runs r ON r.id = c.run_id LEFT JOIN n.fleet_node_slowest z ON z.config_id = c.id"
    " WHERE c.run_id IN (?3, ?4, ?5)";

/* Per trial, the slowest rank, of every config of the node's runs, in
 * database schema ("n": the attached node, "main": the node's own). */
static const char slowest_sql[] =
    "SELECT s.config_id, s.trial, max(s.elapsed_ns) FROM %s.samples s"
    " WHERE s.config_id IN (SELECT id FROM %s.configs WHERE run_id IN (?1, ?2, ?3))"
    " GROUP BY s.config_id, s.trial ORDER BY s.config_id, s.trial";

/* up: ?1 the blob, ?2 the config, and where it has them ?3 fleet, ?4 node. */
static tune_result put_slowest(tune_store *st, sqlite3_stmt *up, int64_t config, const float *v, int n) {
  int brc = SQLITE_OK;
  sqlite3_reset(up);
  TUNE_SQL_BIND(brc, sqlite3_bind_blob(up, 1, v, (int)((size_t)n * sizeof(*v)), SQLITE_TRANSIENT));
  TUNE_SQL_BIND(brc, sqlite3_bind_int64(up, 2, config));
  int rc = brc == SQLITE_OK ? sqlite3_step(up) : brc;
  return rc == SQLITE_DONE ? tune_ok : tune_sql_fail(st, "slowest");
}

/* Each config's slowest-rank time per trial, read from schema's samples
 * and written by update (see put_slowest). */
static tune_result slowest_pass(tune_store *st, const char *schema, const int64_t runs[3], const char *update,
                                int64_t fleet_id, int node) {
  sqlite3_stmt *q = NULL, *up = NULL;
  tune_result r = tune_ok;
  float *v = NULL;
  int n = 0, rc, brc = SQLITE_OK;
  size_t cap = 0;
  int64_t cur = -1;
  char sql[sizeof(slowest_sql) + 16];
  snprintf(sql, sizeof(sql), slowest_sql, schema, schema);
  TUNE_CHECK_GOTO(tune_sql_prepare(st, sql, &q), r, out);
  TUNE_CHECK_GOTO(tune_sql_prepare(st, update, &up), r, out);
  for (int i = 0; i < 3; i++) TUNE_SQL_BIND(brc, sqlite3_bind_int64(q, i + 1, runs[i]));
  if (sqlite3_bind_parameter_count(up) >= 4) {
    TUNE_SQL_BIND(brc, sqlite3_bind_int64(up, 3, fleet_id));
    TUNE_SQL_BIND(brc, sqlite3_bind_int(up, 4, node));
  }
  if (brc != SQLITE_OK) {
    r = tune_sql_fail(st, "bind");
    goto out;
  }
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(q, 0);
    if (id != cur && n > 0) TUNE_CHECK_GOTO(put_slowest(st, up, cur, v, n), r, out);
    if (id != cur) n = 0, cur = id;
    TUNE_CHECK_GOTO(tune_grow((void **)&v, &cap, (size_t)n, sizeof(*v), 256), r, out);
    v[n++] = (float)sqlite3_column_int64(q, 2);
  }
  if (rc != SQLITE_DONE) {
    r = tune_sql_fail(st, "node samples");
    goto out;
  }
  if (n > 0) r = put_slowest(st, up, cur, v, n);
out:
  sqlite3_finalize(q);
  sqlite3_finalize(up);
  free(v);
  return r;
}

tune_result tune_fleet_node_summarize(const char *node_db, const char *node, int64_t before, int64_t sweep,
                                      int64_t after) {
  tune_store *st;
  const int64_t runs[3] = {before, sweep, after};
  TUNE_CHECK(tune_store_open(node_db, 0, &st));
  tune_result r = tune_store_begin(st);
  if (r == tune_ok &&
      sqlite3_exec(tune_store_db(st),
                   "CREATE TABLE IF NOT EXISTS fleet_node_slowest (config_id INTEGER PRIMARY KEY,"
                   " slowest BLOB NOT NULL);"
                   "CREATE TABLE IF NOT EXISTS fleet_node_self (before_run INTEGER PRIMARY KEY,"
                   " name TEXT NOT NULL, job TEXT NOT NULL)",
                   NULL, NULL, NULL) != SQLITE_OK)
    r = tune_sql_fail(st, "fleet_node_slowest");
  if (r == tune_ok) {
    /* Unique to this summary (its time in ns, this process): a copy of
     * the file keeps it, another fleet's node of that name and second
     * does not. */
    struct timespec ts;
    char job[64];
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(job, sizeof(job), "%lld.%09ld-%ld", (long long)ts.tv_sec, ts.tv_nsec, (long)getpid());
    const tune_sql_param p[] = {{":before", before, NULL}, {":name", 0, node}, {":job", 0, job}};
    r = tune_sql_scalar(st, "INSERT OR REPLACE INTO fleet_node_self VALUES (:before, :name, :job)", p,
                        TUNE_SQL_COUNT(p), NULL, NULL);
  }
  if (r == tune_ok)
    r = slowest_pass(st, "main", runs, "INSERT OR REPLACE INTO fleet_node_slowest (slowest, config_id) VALUES (?1, ?2)",
                     0, 0);
  if (r == tune_ok) r = tune_store_commit(st);
  if (r != tune_ok) tune_store_rollback(st);
  tune_store_close(st);
  return r;
}

typedef struct {
  char name[192];
} self_row;

tune_result tune_fleet_node_self(const char *node_db, int64_t before, char *name, size_t len) {
  static const tune_sql_col cols[] = {TUNE_SQL_FIELD(TUNE_SQL_TEXT, self_row, name)};
  static const tune_sql_query q = TUNE_SQL_QUERY(
      "SELECT name || ', summary ' || job FROM fleet_node_self WHERE before_run = :before", cols, self_row);
  const tune_sql_param p[] = {{":before", before, NULL}};
  tune_store *st;
  self_row *rows = NULL;
  size_t n = 0;
  name[0] = '\0';
  TUNE_CHECK(tune_store_open(node_db, 1, &st));
  tune_result r = tune_ok;
  if (sqlite3_table_column_metadata(tune_store_db(st), "main", "fleet_node_self", "job", NULL, NULL, NULL,
                                    NULL, NULL) == SQLITE_OK)
    r = tune_sql_rows(st, &q, p, TUNE_SQL_COUNT(p), (void **)&rows, &n);
  if (r == tune_ok && n > 0) snprintf(name, len, "%s", rows[0].name);
  free(rows);
  tune_store_close(st);
  return r;
}

/* The statements of a merge, inside the caller's transaction. */
static tune_result merge_rows(tune_store *st, int64_t fleet_id, int node, const int64_t runs[3], int summarized) {
  sqlite3_stmt *s;
  int brc = SQLITE_OK;
  TUNE_CHECK(tune_sql_prepare(st, "DELETE FROM fleet_cells WHERE fleet_id = ? AND node = ?", &s));
  TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 1, fleet_id));
  TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 2, node));
  TUNE_CHECK(run_once(st, s, brc));
  const char *sqls[] = {merge_node_sql, summarized ? merge_cells_summary_sql : merge_cells_sql};
  for (int k = 0; k < 2; k++) {
    TUNE_CHECK(tune_sql_prepare(st, sqls[k], &s));
    brc = SQLITE_OK;
    TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 1, fleet_id));
    TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 2, node));
    for (int i = 0; i < 3; i++) TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, i + 3, runs[i]));
    TUNE_CHECK(run_once(st, s, brc));
  }
  if (summarized) return tune_ok;
  return slowest_pass(st, "n", runs, "UPDATE fleet_cells SET slowest = ?1 WHERE config_id = ?2 AND fleet_id = ?3 AND node = ?4",
                      fleet_id, node);
}

tune_result tune_fleet_merge_node(tune_store *st, int64_t fleet_id, int node, const char *node_db, int64_t before,
                                  int64_t sweep, int64_t after) {
  sqlite3 *db = tune_store_db(st);
  sqlite3_stmt *s;
  int brc = SQLITE_OK;
  TUNE_CHECK(tune_sql_prepare(st, "ATTACH DATABASE ? AS n", &s));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, 1, node_db, -1, SQLITE_STATIC));
  TUNE_CHECK(run_once(st, s, brc));
  const int64_t runs[3] = {before, sweep, after};
  const tune_sql_param p[] = {{":b", before, NULL}, {":s", sweep, NULL}, {":a", after, NULL}};
  int64_t summarized = 0, unsummarized = 0;
  tune_result r =
      tune_sql_scalar(st, "SELECT count(*) FROM n.sqlite_master WHERE name = 'fleet_node_slowest'",
                      NULL, 0, &summarized, NULL);
  /* The summary is of the job the node's fleet ran; a later job of the
   * same options in the same database (one node run again) has none. */
  if (r == tune_ok && summarized)
    r = tune_sql_scalar(st,
                        "SELECT count(*) FROM n.configs WHERE run_id IN (:b, :s, :a)"
                        " AND id NOT IN (SELECT config_id FROM n.fleet_node_slowest)",
                        p, TUNE_SQL_COUNT(p), &unsummarized, NULL);
  if (unsummarized) summarized = 0;
  if (r == tune_ok) r = tune_store_begin(st);
  if (r == tune_ok) {
    r = merge_rows(st, fleet_id, node, runs, summarized > 0);
    if (r == tune_ok) r = tune_store_commit(st);
    if (r != tune_ok) tune_store_rollback(st);
  }
  /* The node database is only read: closing it must not checkpoint its
   * -wal into it (a node stopped before its last checkpoint), which would
   * rewrite the input. The output's own close still checkpoints. */
  int was = 0;
  if ((sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, -1, &was) != SQLITE_OK ||
       sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL) != SQLITE_OK) &&
      r == tune_ok)
    r = tune_sql_fail(st, "detach");
  if (sqlite3_exec(db, "DETACH DATABASE n", NULL, NULL, NULL) != SQLITE_OK && r == tune_ok)
    r = tune_sql_fail(st, "detach");
  if (sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, was, NULL) != SQLITE_OK &&
      r == tune_ok)
    r = tune_sql_fail(st, "detach");
  return r;
}

tune_result tune_fleet_get_nodes(tune_store *st, int64_t fleet_id, tune_fleet_hw **nodes, int *n) {
#define HW(kind, f) TUNE_SQL_FIELD(kind, tune_fleet_hw, f)
  static const tune_sql_col cols[] = {
      HW(TUNE_SQL_INT, node),       HW(TUNE_SQL_TEXT, name), HW(TUNE_SQL_TEXT, status),
      HW(TUNE_SQL_TEXT, gpu_model), HW(TUNE_SQL_TEXT, topo), HW(TUNE_SQL_TEXT, driver),
      HW(TUNE_SQL_TEXT, cuda),      HW(TUNE_SQL_TEXT, nccl), HW(TUNE_SQL_INT, gpu_count),
      HW(TUNE_SQL_INT, sm),
  };
#undef HW
  static const tune_sql_query q = TUNE_SQL_QUERY(
      "SELECT node, name, status, gpu_model, topo, driver, cuda, nccl, gpu_count, sm"
      " FROM fleet_nodes WHERE fleet_id = :fleet ORDER BY node",
      cols, tune_fleet_hw);
  const tune_sql_param p[] = {{":fleet", fleet_id, NULL}};
  size_t count;
  TUNE_CHECK(tune_sql_rows(st, &q, p, TUNE_SQL_COUNT(p), (void **)nodes, &count));
  *n = (int)count;
  return tune_ok;
}

tune_result tune_fleet_wrong_nodes(tune_store *st, int64_t fleet_id, tune_fleet_wrong_node **rows, size_t *n) {
#define W(kind, f) TUNE_SQL_FIELD(kind, tune_fleet_wrong_node, f)
  static const tune_sql_col cols[] = {
      W(TUNE_SQL_I64, node),        W(TUNE_SQL_TEXT, name),        W(TUNE_SQL_I64, configs),
      W(TUNE_SQL_TEXT, first.kind), W(TUNE_SQL_TEXT, first.impl),  W(TUNE_SQL_TEXT, first.op),
      W(TUNE_SQL_TEXT, first.path), W(TUNE_SQL_TEXT, first.dtype), W(TUNE_SQL_I64, first.world),
      W(TUNE_SQL_I64, first.bytes), W(TUNE_SQL_TEXT, first.mode),  W(TUNE_SQL_I64, first.wrong)};
#undef W
  /* One row per node: with min() alone, SQLite takes the other columns
   * from the row that holds the minimum. */
  static const tune_sql_query q = TUNE_SQL_QUERY(
      "SELECT c.node, n.name, count(*), c.kind, c.impl, c.op, c.path, c.dtype, c.world, c.bytes, c.mode,"
      " c.wrong_elems, min(c.config_id) FROM fleet_cells c JOIN fleet_nodes n"
      " ON n.fleet_id = c.fleet_id AND n.node = c.node"
      " WHERE c.fleet_id = :fleet AND c.wrong_elems > 0 GROUP BY c.node ORDER BY c.node",
      cols, tune_fleet_wrong_node);
  const tune_sql_param p[] = {{":fleet", fleet_id, NULL}};
  return tune_sql_rows(st, &q, p, TUNE_SQL_COUNT(p), (void **)rows, n);
}

tune_result tune_fleet_set_mismatch(tune_store *st, int64_t fleet_id, int node, const char *what) {
  sqlite3_stmt *s;
  int brc = SQLITE_OK;
  TUNE_CHECK(tune_sql_prepare(
      st, "UPDATE fleet_nodes SET mismatch = ? WHERE fleet_id = ? AND node = ?", &s));
  TUNE_SQL_BIND(brc,
                what ? sqlite3_bind_text(s, 1, what, -1, SQLITE_STATIC) : sqlite3_bind_null(s, 1));
  TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 2, fleet_id));
  TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 3, node));
  return run_once(st, s, brc);
}

/* In the table's own order (sorted in C after: SQLite's sorter spills
 * millions of rows with their blobs to disk). */
static const char cells_sql[] =
    "SELECT c.node, c.config_id, c.impl, c.op, c.path, c.dtype, c.world, c.bytes, c.in_offset, c.out_offset,"
    " c.mode, c.skew_ns, c.skew_rank, c.chosen_path, c.trials, c.wrong_elems, c.median_ns, c.slowest"
    " FROM fleet_cells c JOIN fleet_nodes n ON n.fleet_id = c.fleet_id AND n.node = c.node"
    " WHERE c.fleet_id = ? AND c.kind = ? AND n.status = 'ok' AND n.mismatch IS NULL";

static int cmp_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }

/* impl, op, dtype, world, offsets, mode, skew, path, bytes, node. */
static int cmp_cell(const void *pa, const void *pb) {
  const tune_fleet_cell *a = pa, *b = pb;
  int c = strcmp(a->impl, b->impl);
  const int64_t ka[] = {a->c.op, a->c.dtype, a->c.world, a->c.in_offset, a->c.out_offset, a->c.mode, a->c.skew_ns,
                        a->c.path, (int64_t)a->c.bytes, a->node};
  const int64_t kb[] = {b->c.op, b->c.dtype, b->c.world, b->c.in_offset, b->c.out_offset, b->c.mode, b->c.skew_ns,
                        b->c.path, (int64_t)b->c.bytes, b->node};
  for (size_t i = 0; c == 0 && i < sizeof(ka) / sizeof(ka[0]); i++) c = cmp_i64(ka[i], kb[i]);
  return c;
}

/* One row of cells_sql into x. */
static tune_result read_cell(sqlite3_stmt *s, int with_slowest, tune_fleet_cell *x) {
  memset(x, 0, sizeof(*x));
  x->node = sqlite3_column_int(s, 0);
  x->config_id = sqlite3_column_int64(s, 1);
  tune_sql_text(s, 2, x->impl, sizeof(x->impl));
  const char *op = (const char *)sqlite3_column_text(s, 3), *path = (const char *)sqlite3_column_text(s, 4),
             *dt = (const char *)sqlite3_column_text(s, 5), *mode = (const char *)sqlite3_column_text(s, 10),
             *chosen = (const char *)sqlite3_column_text(s, 13);
  int o = op ? dc_op_parse(op) : -1, p = path ? dc_path_parse(path) : -1, d = dt ? dc_dtype_parse(dt) : -1,
      m = mode ? dc_mode_parse(mode) : -1, ch = chosen ? dc_path_parse(chosen) : -1;
  if (o < 0 || p < 0 || d < 0 || m < 0) return tune_err_db;
  x->c = (tune_cfg){x->impl,
                    (dc_op)o,
                    (dc_path)p,
                    (dc_dtype)d,
                    sqlite3_column_int(s, 6),
                    (uint64_t)sqlite3_column_int64(s, 7),
                    sqlite3_column_int(s, 8),
                    sqlite3_column_int(s, 9),
                    (dc_mode)m,
                    sqlite3_column_int64(s, 11),
                    sqlite3_column_int(s, 12)};
  x->chosen_path = ch < 0 ? DC_PATH_AUTO : (dc_path)ch;
  x->trials = sqlite3_column_int(s, 14);
  x->wrong_elems = (uint64_t)sqlite3_column_int64(s, 15);
  x->median_ns = sqlite3_column_double(s, 16);
  if (!with_slowest) return tune_ok;
  int bytes = sqlite3_column_bytes(s, 17);
  if (bytes != x->trials * (int)sizeof(float)) return tune_err_db;
  if ((x->slowest = malloc((size_t)bytes)) == NULL) return tune_err_system;
  memcpy(x->slowest, sqlite3_column_blob(s, 17), (size_t)bytes);
  return tune_ok;
}

tune_result tune_fleet_get_cells(tune_store *st, int64_t fleet_id, const char *kind, int with_slowest,
                                 tune_fleet_cell **cells, size_t *n) {
  sqlite3_stmt *s;
  size_t cap = 0;
  int rc, brc = SQLITE_OK;
  tune_result r = tune_ok;
  *cells = NULL;
  *n = 0;
  TUNE_CHECK(tune_sql_prepare(st, cells_sql, &s));
  TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 1, fleet_id));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC));
  while (r == tune_ok && (rc = brc == SQLITE_OK ? sqlite3_step(s) : brc) == SQLITE_ROW) {
    if ((r = tune_grow((void **)cells, &cap, *n, sizeof(**cells), 1024)) != tune_ok) break;
    r = read_cell(s, with_slowest, &(*cells)[*n]);
    if (r == tune_ok) (*n)++;
  }
  if (r == tune_err_db) tune_error("%s: a fleet cell that tune could not have written", tune_store_path(st));
  if (r == tune_ok && rc != SQLITE_DONE) r = tune_sql_fail(st, "cells");
  sqlite3_finalize(s);
  if (r == tune_ok && *n > 1) qsort(*cells, *n, sizeof(**cells), cmp_cell);
  for (size_t i = 0; i < *n; i++) (*cells)[i].c.impl = (*cells)[i].impl;
  if (r != tune_ok) {
    tune_fleet_free_cells(*cells, *n);
    *cells = NULL;
    *n = 0;
  }
  return r;
}

void tune_fleet_free_cells(tune_fleet_cell *cells, size_t n) {
  for (size_t i = 0; cells && i < n; i++) free(cells[i].slowest);
  free(cells);
}

/* Bind a row's key and size to s's parameters first .. first + 5. */
static int bind_size(sqlite3_stmt *s, int first, const tune_fleet_size *k) {
  int brc = SQLITE_OK;
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, first, dc_op_name(k->op), -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, first + 1, dc_dtype_name(k->dtype), -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, sqlite3_bind_int(s, first + 2, k->world));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, first + 3, dc_align_name(k->align), -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, first + 4, dc_mode_name(k->mode), -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, first + 5, (int64_t)k->bytes));
  return brc;
}

tune_result tune_fleet_put_consensus(tune_store *st, int64_t fleet_id, const tune_fleet_consensus_row *x) {
  sqlite3_stmt *s;
  int brc = SQLITE_OK;
  TUNE_CHECK(tune_sql_prepare(
      st, "INSERT INTO fleet_consensus VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", &s));
  TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 1, fleet_id));
  TUNE_SQL_BIND(brc, bind_size(s, 2, &x->at));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, 8, dc_path_name(x->path), -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, sqlite3_bind_double(s, 9, x->fleet_ns));
  TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 10, x->nodes));
  TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 11, x->agree));
  return run_once(st, s, brc);
}

tune_result tune_fleet_put_regret(tune_store *st, int64_t fleet_id, const tune_fleet_regret_row *x) {
  sqlite3_stmt *s;
  int brc = SQLITE_OK;
  if (!(x->own_ns > 0)) return tune_err_arg;
  TUNE_CHECK(tune_sql_prepare(
      st, "INSERT INTO fleet_regret VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", &s));
  TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 1, fleet_id));
  TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 2, x->node));
  TUNE_SQL_BIND(brc, bind_size(s, 3, &x->at));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, 9, dc_path_name(x->own_path), -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, 10, dc_path_name(x->fleet_path), -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, sqlite3_bind_double(s, 11, x->own_ns));
  TUNE_SQL_BIND(brc, sqlite3_bind_double(s, 12, x->fleet_ns));
  TUNE_SQL_BIND(brc, sqlite3_bind_double(s, 13, x->fleet_ns / x->own_ns));
  return run_once(st, s, brc);
}

/* The outlier cell's every sample, from the node's database. */
static tune_result copy_samples(tune_store *st, int64_t fleet_id, const tune_fleet_cell *c, const char *node_db) {
  tune_store *nd;
  TUNE_CHECK(tune_store_open(node_db, 1, &nd));
  int trials, world;
  int64_t *el = NULL, *de = NULL;
  tune_result r = tune_store_get_samples(nd, c->config_id, &trials, &world, &el, &de);
  tune_store_close(nd);
  sqlite3_stmt *s = NULL;
  if (r == tune_ok)
    r = tune_sql_prepare(st, "INSERT OR REPLACE INTO fleet_samples VALUES (?, ?, ?, ?, ?, ?)", &s);
  for (int t = 0; r == tune_ok && t < trials; t++)
    for (int k = 0; r == tune_ok && k < world; k++) {
      int brc = SQLITE_OK;
      sqlite3_reset(s);
      TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 1, fleet_id));
      TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 2, c->node));
      TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 3, c->config_id));
      TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 4, t));
      TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 5, k));
      TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 6, el[(size_t)t * (size_t)world + (size_t)k]));
      if ((brc == SQLITE_OK ? sqlite3_step(s) : brc) != SQLITE_DONE)
        r = tune_sql_fail(st, "samples");
    }
  sqlite3_finalize(s);
  free(el);
  free(de);
  return r;
}

tune_result tune_fleet_put_outlier(tune_store *st, int64_t fleet_id, const tune_fleet_outlier_row *x,
                                   const char *node_db) {
  const tune_fleet_cell *c = x->cell;
  sqlite3_stmt *s;
  int brc = SQLITE_OK;
  TUNE_CHECK(tune_sql_prepare(
      st,
      "INSERT INTO fleet_outliers VALUES (?, ?, ?, 'after', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      &s));
  TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 1, fleet_id));
  TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 2, c->node));
  TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 3, c->config_id));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, 4, c->impl, -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, 5, dc_op_name(c->c.op), -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, 6, dc_dtype_name(c->c.dtype), -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 7, c->c.world));
  TUNE_SQL_BIND(brc,
                sqlite3_bind_text(s, 8, dc_align_name(tune_cfg_align(&c->c)), -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, sqlite3_bind_text(s, 9, dc_mode_name(c->c.mode), -1, SQLITE_STATIC));
  TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 10, (int64_t)c->c.bytes));
  TUNE_SQL_BIND(brc, sqlite3_bind_double(s, 11, c->median_ns));
  TUNE_SQL_BIND(brc, sqlite3_bind_double(s, 12, x->fleet_ns));
  TUNE_SQL_BIND(brc, sqlite3_bind_double(s, 13, x->mad_ns));
  TUNE_SQL_BIND(brc, sqlite3_bind_double(s, 14, x->score));
  TUNE_SQL_BIND(brc, sqlite3_bind_double(s, 15, c->median_ns / x->fleet_ns));
  TUNE_CHECK(run_once(st, s, brc));
  return copy_samples(st, fleet_id, c, node_db);
}

tune_result tune_fleet_node_header(const char *node_db, int64_t sweep, dc_threshold_row **rows, size_t *n) {
  tune_store *nd;
  TUNE_CHECK(tune_store_open(node_db, 1, &nd));
  tune_result r = tune_query_header_rows(nd, sweep, rows, n);
  tune_store_close(nd);
  return r;
}

tune_result tune_fleet_node_previous(const char *node_db, int64_t sweep, dc_threshold_row **rows, size_t *n) {
  tune_store *nd;
  char kind[16];
  int64_t before = 0;
  *rows = NULL;
  *n = 0;
  TUNE_CHECK(tune_store_open(node_db, 1, &nd));
  tune_result r = tune_query_run_kind(nd, sweep, kind, sizeof(kind), &before);
  if (r == tune_ok && before != 0) r = tune_query_previous_table(nd, before, rows, n);
  tune_store_close(nd);
  return r;
}

tune_result tune_fleet_node_db(tune_store *st, int64_t fleet_id, int node, char *db, size_t len, int64_t *sweep) {
  sqlite3_stmt *s;
  int brc = SQLITE_OK;
  TUNE_CHECK(tune_sql_prepare(
      st, "SELECT db, coalesce(sweep_run, 0) FROM fleet_nodes WHERE fleet_id = ? AND node = ?",
      &s));
  TUNE_SQL_BIND(brc, sqlite3_bind_int64(s, 1, fleet_id));
  TUNE_SQL_BIND(brc, sqlite3_bind_int(s, 2, node));
  int rc = brc == SQLITE_OK ? sqlite3_step(s) : brc;
  if (rc == SQLITE_ROW) {
    tune_sql_text(s, 0, db, len);
    *sweep = sqlite3_column_int64(s, 1);
  }
  sqlite3_finalize(s);
  if (rc == SQLITE_ROW) return tune_ok;
  if (rc == SQLITE_DONE) {
    tune_error("%s: fleet run %lld has no node %d", tune_store_path(st), (long long)fleet_id, node);
    return tune_err_db;
  }
  return tune_sql_fail(st, "node");
}

tune_result tune_fleet_node_chain(const char *db, const char *options, int *state, tune_chain *found) {
  tune_store *st;
  tune_chain ch;
  *state = TUNE_FLEET_FRESH;
  memset(found, 0, sizeof(*found));
  /* Missing or empty: no job yet. SQLite leaves an empty file when the
   * node is stopped between creating it and writing the schema (and a
   * reader such as the sqlite3 shell creates one), and the node's job
   * takes it as a fresh database; opened read-only it would be refused. */
  struct stat sb;
  if (stat(db, &sb) != 0 || (S_ISREG(sb.st_mode) && sb.st_size == 0)) return tune_ok;
  TUNE_CHECK(tune_store_open(db, 1, &st));
  tune_result r = tune_ok;
  for (int64_t below = 0; r == tune_ok; below = ch.before) {
    r = tune_query_chain_below(st, below, &ch);
    if (r != tune_ok || ch.before == 0) break;
    if (ch.has_options && strcmp(ch.options, options) == 0) {
      *state = ch.after_done ? TUNE_FLEET_DONE : TUNE_FLEET_RESUME;
      *found = ch;
      break;
    }
  }
  tune_store_close(st);
  return r;
}
