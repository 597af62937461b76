/* test_store.c: the SQLite store -- schema and pragmas, config/sample,
 * crossover, header, regret and skew round trips, transactions, migration
 * from version 1 and version 2 files, the stored-sample check and a migration refused for bad
 * samples, refusal of bad files (which stay byte-for-byte unchanged),
 * unwritable paths, and CSV/JSON export. */
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"
#include "query.h"
#include "store_db.h"
#include "tap.h"

static tune_rng rng;


/* ---- files and raw SQL ------------------------------------------------------ */


static int sidecars_absent(const char *path) {
  static const char *const suffixes[] = {"-wal", "-shm", "-journal"};
  char name[600];
  for (size_t i = 0; i < 3; i++) {
    snprintf(name, sizeof(name), "%s%s", path, suffixes[i]);
    if (tap_file_exists(name)) return 0;
  }
  return 1;
}

/* The file header's write version (byte 18): 1 rollback journal, 2 WAL. */
static int file_journal_mode(const char *path) {
  unsigned char h[19];
  FILE *f = fopen(path, "rb");
  size_t n = f ? fread(h, 1, sizeof(h), f) : 0;
  if (f) fclose(f);
  return n == sizeof(h) ? h[18] : -1;
}

static void write_file(const char *path, const char *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
    printf("Bail out! cannot write %s\n", path);
    exit(1);
  }
}

static void raw_exec(const char *path, const char *sql) {
  sqlite3 *db;
  char *err = NULL;
  if (sqlite3_open(path, &db) != SQLITE_OK ||
      sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
    printf("Bail out! raw SQL on %s: %s\n", path, err ? err : sqlite3_errmsg(db));
    exit(1);
  }
  sqlite3_close(db);
}

static int64_t q_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *s;
  int64_t v = -999;
  if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) return v;
  if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  return v;
}

/* First column of the first row as text, into buf. */
static const char *q_text(sqlite3 *db, const char *sql, char *buf, size_t len) {
  sqlite3_stmt *s;
  snprintf(buf, len, "(none)");
  if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) return buf;
  if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
    snprintf(buf, len, "%s", (const char *)sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  return buf;
}

/* Run fn with stderr captured; returns whether the output holds needle. */
static int stderr_holds(const char *needle, tune_result (*fn)(const char *, tune_result *),
                        const char *arg, tune_result *r) {
  const char *cap = tap_path("stderr.txt");
  fflush(stderr);
  int saved = dup(2), fd = open(cap, O_CREAT | O_TRUNC | O_WRONLY, 0600);
  dup2(fd, 2);
  close(fd);
  fn(arg, r);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  size_t len;
  char *text = tap_slurp(cap, &len);
  int found = text != NULL && memmem(text, len, needle, strlen(needle)) != NULL;
  if (text) fprintf(stderr, "%.*s", (int)len, text);
  free(text);
  return found;
}

static tune_result open_rw(const char *path, tune_result *r) {
  tune_store *st = NULL;
  *r = tune_store_open(path, 0, &st);
  tune_store_close(st);
  return *r;
}

/* ---- fixtures ---------------------------------------------------------------- */

static const tune_run_info run_info = {"sweep",
                                       "node,1 \"a\"",
                                       "NVIDIA H200",
                                       8,
                                       90,
                                       "nvlink",
                                       "560.35",
                                       "12.6",
                                       "2.23.4",
                                       "openmpi 4.1",
                                       "threads",
                                       "sim",
                                       "abc1234",
                                       "tune --gpus 8",
                                       "default (not measured)",
                                       42,
                                       0,
                                       NULL};

static tune_config_row make_config(int64_t run_id, uint64_t bytes, int trials, int world) {
  tune_config_row c = {run_id,
                       "detcoll",
                       DC_OP_ALL_REDUCE,
                       DC_PATH_AUTO,
                       DC_PATH_ONE_SHOT,
                       DC_DTYPE_BF16,
                       world,
                       bytes,
                       2,
                       4,
                       DC_ALIGN_ANY,
                       DC_MODE_GRAPH,
                       1500,
                       1,
                       trials,
                       5,
                       0,
                       0,
                       0,
                       0};
  c.median_ns = 1000 + tune_rng_uniform(&rng) * 1000;
  c.p10_ns = c.median_ns * 0.9;
  c.p90_ns = c.median_ns * 1.3;
  c.wrong_elems = tune_rng_next(&rng) % 7;
  return c;
}

static void random_samples(int64_t *v, size_t n, int64_t lo, int64_t span) {
  for (size_t i = 0; i < n; i++) v[i] = lo + (int64_t)(tune_rng_next(&rng) % (uint64_t)span);
}

/* Do the stored samples of config id equal elapsed/delay (delay NULL: 0)? */
static int samples_match(sqlite3 *db, int64_t id, int trials, int world, const int64_t *elapsed,
                         const int64_t *delay) {
  sqlite3_stmt *s;
  int ok = 1, n = 0;
  if (sqlite3_prepare_v2(db,
                         "SELECT trial, rank, elapsed_ns, delay_ns FROM samples WHERE config_id = ?"
                         " ORDER BY trial, rank",
                         -1, &s, NULL) != SQLITE_OK)
    return 0;
  sqlite3_bind_int64(s, 1, id);
  while (sqlite3_step(s) == SQLITE_ROW) {
    int i = n++;
    if (i >= trials * world || sqlite3_column_int(s, 0) != i / world ||
        sqlite3_column_int(s, 1) != i % world || sqlite3_column_int64(s, 2) != elapsed[i] ||
        sqlite3_column_int64(s, 3) != (delay ? delay[i] : 0))
      ok = 0;
  }
  sqlite3_finalize(s);
  return ok && n == trials * world;
}

/* The version 1 schema: schema.sql without runs.parent_run and regret. */
static const char v1_schema[] =
    "CREATE TABLE runs (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, started_at TEXT NOT NULL,"
    " finished_at TEXT, host TEXT NOT NULL, gpu_model TEXT NOT NULL, gpu_count INTEGER NOT NULL,"
    " sm INTEGER NOT NULL, topo TEXT NOT NULL, driver TEXT NOT NULL, cuda TEXT NOT NULL,"
    " nccl TEXT NOT NULL, mpi TEXT NOT NULL, launcher TEXT NOT NULL, backend TEXT NOT NULL,"
    " git_rev TEXT NOT NULL, command_line TEXT NOT NULL, thresholds TEXT NOT NULL,"
    " seed INTEGER NOT NULL);"
    "CREATE TABLE configs (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
    " impl TEXT NOT NULL, op TEXT NOT NULL, path TEXT NOT NULL, chosen_path TEXT NOT NULL,"
    " dtype TEXT NOT NULL, world INTEGER NOT NULL, bytes INTEGER NOT NULL,"
    " in_offset INTEGER NOT NULL, out_offset INTEGER NOT NULL, align TEXT NOT NULL,"
    " mode TEXT NOT NULL, skew_ns INTEGER NOT NULL, skew_rank INTEGER NOT NULL,"
    " trials INTEGER NOT NULL, warmup INTEGER NOT NULL, wrong_elems INTEGER NOT NULL,"
    " median_ns REAL NOT NULL, p10_ns REAL NOT NULL, p90_ns REAL NOT NULL);"
    "CREATE UNIQUE INDEX configs_key ON configs(run_id, impl, op, path, dtype, world, bytes,"
    " in_offset, out_offset, mode, skew_ns, skew_rank);"
    "CREATE TABLE samples (config_id INTEGER NOT NULL REFERENCES configs(id),"
    " trial INTEGER NOT NULL, rank INTEGER NOT NULL, elapsed_ns INTEGER NOT NULL,"
    " delay_ns INTEGER NOT NULL, PRIMARY KEY (config_id, trial, rank)) WITHOUT ROWID;"
    "CREATE TABLE crossovers (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
    " op TEXT NOT NULL, dtype TEXT NOT NULL, world INTEGER NOT NULL, align TEXT NOT NULL,"
    " mode TEXT NOT NULL, skew_ns INTEGER NOT NULL, path_below TEXT NOT NULL,"
    " path_above TEXT NOT NULL, bytes INTEGER NOT NULL, lo_bytes INTEGER NOT NULL,"
    " hi_bytes INTEGER NOT NULL, diff_ns REAL NOT NULL, ci_lo_ns REAL NOT NULL,"
    " ci_hi_ns REAL NOT NULL, confidence REAL NOT NULL, decided INTEGER NOT NULL);"
    "CREATE TABLE headers (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
    " created_at TEXT NOT NULL, path TEXT NOT NULL, sha256 TEXT NOT NULL, sim INTEGER NOT NULL,"
    " installed INTEGER NOT NULL, content TEXT NOT NULL);"
    "CREATE TABLE header_rows (header_id INTEGER NOT NULL REFERENCES headers(id),"
    " row_index INTEGER NOT NULL, seg_index INTEGER NOT NULL, sm INTEGER NOT NULL,"
    " world INTEGER NOT NULL, topo TEXT NOT NULL, op TEXT NOT NULL, dtype TEXT NOT NULL,"
    " align TEXT NOT NULL, mode TEXT NOT NULL, skew_ns INTEGER NOT NULL,"
    " max_bytes INTEGER NOT NULL, path TEXT NOT NULL,"
    " PRIMARY KEY (header_id, row_index, seg_index));"
    "PRAGMA application_id = 1145261900; PRAGMA user_version = 1;"
    "INSERT INTO runs VALUES (1, 'sweep', '2026-01-02T03:04:05Z', NULL, 'oldhost', 'H100', 4, 90,"
    " 'nvlink', '550', '12.4', '2.21', 'none', 'threads', 'gpu', 'deadbee', 'tune', 'default', 7);"
    "INSERT INTO configs VALUES (1, 1, 'detcoll', 'all_gather', 'fused', 'fused', 'fp16', 2, 65536,"
    " 0, 0, 'align16', 'eager', 0, -1, 2, 1, 0, 4321.5, 4000, 5000);"
    "INSERT INTO samples VALUES (1, 0, 0, 4111, 0), (1, 0, 1, 4222, 0), (1, 1, 0, 4333, 0),"
    " (1, 1, 1, 4444, 0);";

/* Column lists (name, type, notnull, default, pk) of every table, as one string. */
static char *schema_shape(sqlite3 *db) {
  sqlite3_stmt *s;
  char *shape = sqlite3_mprintf("");
  if (sqlite3_prepare_v2(db,
                         "SELECT m.name, p.name, p.type, p.\"notnull\", p.dflt_value, p.pk"
                         " FROM sqlite_master m, pragma_table_info(m.name) p"
                         " WHERE m.type = 'table' ORDER BY m.name, p.cid",
                         -1, &s, NULL) != SQLITE_OK)
    return shape;
  while (sqlite3_step(s) == SQLITE_ROW) {
    char *longer = sqlite3_mprintf("%s%s.%s %s %d %s %d\n", shape, sqlite3_column_text(s, 0),
                                   sqlite3_column_text(s, 1), sqlite3_column_text(s, 2),
                                   sqlite3_column_int(s, 3), sqlite3_column_text(s, 4),
                                   sqlite3_column_int(s, 5));
    sqlite3_free(shape);
    shape = longer;
  }
  sqlite3_finalize(s);
  return shape;
}

/* ---- tests ------------------------------------------------------------------- */

static void test_schema(const char *path) {
  tune_store *st = NULL;
  char buf[64];
  tap_ok(tune_store_open(path, 0, &st) == tune_ok, "a new database opens");
  if (st == NULL) return;
  sqlite3 *db = tune_store_db(st);
  tap_ok(q_int(db, "PRAGMA application_id") == TUNE_STORE_APPLICATION_ID, "application_id is DCOL");
  tap_ok(q_int(db, "PRAGMA user_version") == TUNE_STORE_VERSION, "user_version is %d",
         TUNE_STORE_VERSION);
  tap_ok(strcmp(q_text(db, "PRAGMA journal_mode", buf, sizeof(buf)), "wal") == 0,
         "journal_mode is wal (%s)", buf);
  tap_ok(q_int(db, "PRAGMA foreign_keys") == 1, "foreign keys are on");
  tap_ok(q_int(db, "PRAGMA synchronous") == 1, "synchronous is NORMAL");
  tap_ok(q_int(db,
               "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN"
               " ('runs','configs','samples','crossovers','headers','header_rows','regret',"
               "  'skew_summaries','skew_fits')") == 9,
         "all nine tables exist");
  tap_ok(q_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'configs_key'") == 1,
         "configs_key index exists");
  tune_store_close(st);
  tap_ok(sidecars_absent(path) && file_journal_mode(path) == 1,
         "a writer's close leaves one file, in rollback-journal mode");
  tap_ok(tune_store_open(path, 0, &st) == tune_ok, "reopening an existing database works");
  tap_ok(
      st && strcmp(q_text(tune_store_db(st), "PRAGMA journal_mode", buf, sizeof(buf)), "wal") == 0,
      "reopened for writing, it is in WAL mode again (%s)", buf);
  /* A reader open when the writer closes keeps the file in WAL mode. */
  tune_store *reader = NULL;
  tap_ok(tune_store_open(path, 1, &reader) == tune_ok &&
             q_int(tune_store_db(reader), "SELECT count(*) FROM runs") == 0,
         "a reader opens beside the writer");
  tune_store_close(st);
  tap_ok(file_journal_mode(path) == 2, "the writer closing beside a reader leaves WAL mode on");
  tune_store_close(reader);
  st = NULL;
  tap_ok(tune_store_open(path, 0, &st) == tune_ok, "a third writer opens it");
  tune_store_close(st);
  st = NULL;
  tap_ok(tune_store_open(path, 1, &st) == tune_ok, "read-only open of a current database works");
  int64_t id;
  tap_ok(st && tune_store_run_begin(st, &run_info, &id) == tune_err_arg,
         "a read-only store refuses writes");
  tune_store_close(st);
  tap_ok(sidecars_absent(path) && file_journal_mode(path) == 1,
         "a reader's close leaves no -wal or -shm");
}

static void test_configs(const char *path) {
  tune_store *st = NULL;
  int64_t run_id = 0, run2 = 0;
  if (tune_store_open(path, 0, &st) != tune_ok) {
    tap_ok(0, "open for configs");
    return;
  }
  sqlite3 *db = tune_store_db(st);
  char buf[256];
  tap_ok(tune_store_run_begin(st, &run_info, &run_id) == tune_ok && run_id > 0, "run_begin");
  tune_run_info child = run_info;
  child.kind = "after";
  child.parent_run = run_id;
  tap_ok(tune_store_run_begin(st, &child, &run2) == tune_ok && run2 > run_id,
         "run_begin with parent");
  tap_ok(q_int(db, "SELECT count(*) FROM runs WHERE parent_run IS NULL") == 1 &&
             q_int(db, "SELECT parent_run FROM runs WHERE kind = 'after'") == run_id,
         "parent_run stored (NULL for none)");
  tap_ok(strcmp(q_text(db, "SELECT host FROM runs ORDER BY id LIMIT 1", buf, sizeof(buf)),
                run_info.host) == 0,
         "run host reads back");
  tune_run_info broken = run_info;
  broken.git_rev = NULL;
  int64_t ignored;
  tap_ok(tune_store_run_begin(st, &broken, &ignored) == tune_err_arg,
         "a missing run field is refused");
  tap_ok(tune_store_run_finish(st, run_id) == tune_ok &&
             q_int(db, "SELECT count(*) FROM runs WHERE finished_at IS NOT NULL") == 1,
         "run_finish sets finished_at");
  tap_ok(tune_store_run_finish(st, 999999) == tune_err_arg,
         "run_finish of an unknown run is refused");

  /* Sizes that exercise whole 64-row batches, the single-row tail, both. */
  static const int shapes[][2] = {{37, 8}, {5, 3}, {16, 8}, {1, 2}, {125, 8}};
  int all_ok = 1, find_ok = 1;
  int64_t ids[5];
  tune_config_row cfgs[5];
  for (int k = 0; k < 5; k++) {
    int trials = shapes[k][0], world = shapes[k][1];
    size_t n = (size_t)trials * (size_t)world;
    int64_t *el = malloc(n * sizeof(*el)), *de = malloc(n * sizeof(*de));
    random_samples(el, n, 2000, 90000);
    random_samples(de, n, 1, 5000);
    cfgs[k] = make_config(run_id, (uint64_t)1024 << k, trials, world);
    const int64_t *delay = k == 1 ? NULL : de;
    if (tune_store_put_config(st, &cfgs[k], el, delay, &ids[k]) != tune_ok)
      all_ok = 0;
    else if (!samples_match(db, ids[k], trials, world, el, delay))
      all_ok = 0;
    int64_t found = -1;
    if (tune_store_find_config(st, &cfgs[k], &found) != tune_ok || found != ids[k]) find_ok = 0;
    free(el);
    free(de);
  }
  tap_ok(all_ok, "5 configs with seeded random samples read back equal");
  {
    /* Config 0 grows from 37 to 50 trials. */
    int t0 = shapes[0][0], t1 = 13, w = shapes[0][1];
    size_t n0 = (size_t)t0 * w, n = (size_t)(t0 + t1) * w;
    int64_t *el = malloc(n * sizeof(*el)), *de = malloc(n * sizeof(*de));
    int ok = 1;
    sqlite3_stmt *s;
    /* Read back what is stored (checked equal above), then append. */
    sqlite3_prepare_v2(
        db, "SELECT elapsed_ns, delay_ns FROM samples WHERE config_id = ? ORDER BY trial, rank", -1,
        &s, NULL);
    sqlite3_bind_int64(s, 1, ids[0]);
    for (size_t i = 0; i < n0 && sqlite3_step(s) == SQLITE_ROW; i++) {
      el[i] = sqlite3_column_int64(s, 0);
      de[i] = sqlite3_column_int64(s, 1);
    }
    sqlite3_finalize(s);
    random_samples(el + n0, n - n0, 2000, 90000);
    random_samples(de + n0, n - n0, 1, 5000);
    tune_config_row grown = cfgs[0];
    uint64_t before_wrong = grown.wrong_elems;
    grown.trials = t0 + t1;
    grown.wrong_elems = 2;
    grown.median_ns += 17.25;
    grown.chosen_path = DC_PATH_TWO_SHOT;
    int64_t nsamp0 = q_int(db, "SELECT count(*) FROM samples");
    tap_ok(tune_store_add_samples(st, ids[0], &grown, t0 + 1, t1 - 1, el + n0, de + n0) ==
                   tune_err_arg &&
               q_int(db, "SELECT count(*) FROM samples") == nsamp0,
           "add_samples with the wrong first trial is refused, nothing written");
    tap_ok(tune_store_add_samples(st, ids[0], &grown, t0, t1, el + n0, de + n0) == tune_ok,
           "add_samples of %d trials", t1);
    ok = ok && samples_match(db, ids[0], t0 + t1, w, el, de);
    char sql[160];
    snprintf(sql, sizeof(sql),
             "SELECT trials * 1000 + wrong_elems FROM configs WHERE id = %" PRId64
             " AND median_ns = %.17g AND chosen_path = 'two_shot'",
             ids[0], grown.median_ns);
    tap_ok(ok && q_int(db, sql) == (int64_t)(t0 + t1) * 1000 + (int64_t)(before_wrong + 2),
           "the config holds all %d trials; summary updated, wrong_elems added", t0 + t1);
    free(el);
    free(de);
  }
  tap_ok(find_ok, "find_config finds each committed config");
  {
    sqlite3_stmt *s;
    int ok = sqlite3_prepare_v2(db,
                                "SELECT op, path, chosen_path, dtype, align, mode, bytes, world,"
                                " wrong_elems, median_ns, in_offset, out_offset, skew_ns,"
                                " skew_rank FROM configs WHERE id = ?",
                                -1, &s, NULL) == SQLITE_OK;
    ok = ok && sqlite3_bind_int64(s, 1, ids[3]) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW;
    ok = ok && strcmp((const char *)sqlite3_column_text(s, 0), "all_reduce") == 0 &&
         strcmp((const char *)sqlite3_column_text(s, 1), "auto") == 0 &&
         strcmp((const char *)sqlite3_column_text(s, 2), "one_shot") == 0 &&
         strcmp((const char *)sqlite3_column_text(s, 3), "bf16") == 0 &&
         strcmp((const char *)sqlite3_column_text(s, 4), "unaligned") == 0 &&
         strcmp((const char *)sqlite3_column_text(s, 5), "graph") == 0 &&
         (uint64_t)sqlite3_column_int64(s, 6) == cfgs[3].bytes && sqlite3_column_int(s, 7) == 2 &&
         (uint64_t)sqlite3_column_int64(s, 8) == cfgs[3].wrong_elems &&
         sqlite3_column_double(s, 9) == cfgs[3].median_ns && sqlite3_column_int(s, 10) == 2 &&
         sqlite3_column_int(s, 11) == 4 && sqlite3_column_int64(s, 12) == 1500 &&
         sqlite3_column_int(s, 13) == 1;
    sqlite3_finalize(s);
    tap_ok(ok, "config columns read back as names and numbers");
  }
  tune_config_row other = cfgs[0];
  other.bytes += 1;
  int64_t found = -1;
  tap_ok(tune_store_find_config(st, &other, &found) == tune_ok && found == 0,
         "find_config of another size gives 0");
  other = cfgs[0];
  other.run_id = run2;
  tap_ok(tune_store_find_config(st, &other, &found) == tune_ok && found == 0,
         "find_config is per run");

  /* Registered buffers: a detcoll_reg config of the same key is a row of its
   * own, stored with its class (reg16) and the paths that need
   * registration; the best forced path is per impl. */
  {
    static const struct {
      const char *impl;
      dc_path path;
      dc_align align;
      double median;
    } forced[] = {{"detcoll", DC_PATH_ONE_SHOT, DC_ALIGN_16, 5000},
                  {"detcoll_reg", DC_PATH_ONE_SHOT, DC_ALIGN_REG, 4000},
                  {"detcoll_reg", DC_PATH_DIRECT, DC_ALIGN_REG, 3000}};
    int64_t fel[8], fid[3];
    int put = 1;
    random_samples(fel, 8, 100, 1000);
    for (int k = 0; k < 3; k++) {
      tune_config_row f = make_config(run2, 65536, 4, 2);
      f.impl = forced[k].impl;
      f.path = f.chosen_path = forced[k].path;
      f.align = forced[k].align;
      f.in_offset = f.out_offset = 0;
      f.skew_ns = 0;
      f.skew_rank = -1;
      f.wrong_elems = 0;
      f.median_ns = forced[k].median;
      put &= tune_store_put_config(st, &f, fel, NULL, &fid[k]) == tune_ok;
    }
    tap_ok(
        put &&
            q_int(db,
                  "SELECT count(*) FROM configs WHERE impl = 'detcoll_reg' AND align = 'reg16'") ==
                2 &&
            q_int(db, "SELECT count(*) FROM configs WHERE path = 'direct'") == 1,
        "detcoll_reg configs stored beside detcoll's, as reg16, with path direct");
    tune_cfg c = {
        "detcoll", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_BF16, 2, 65536, 0, 0, DC_MODE_GRAPH, 0,
        -1};
    dc_path best = DC_PATH_AUTO;
    double med = 0;
    int ok = tune_query_best_forced(st, run2, &c, &best, &med) == tune_ok &&
             best == DC_PATH_ONE_SHOT && med == 5000;
    c.impl = "detcoll_reg";
    ok = ok && tune_query_best_forced(st, run2, &c, &best, &med) == tune_ok &&
         best == DC_PATH_DIRECT && med == 3000;
    tap_ok(ok, "best forced path per impl: detcoll one_shot, detcoll_reg direct");
  }

  int64_t nconf = q_int(db, "SELECT count(*) FROM configs"),
          nsamp = q_int(db, "SELECT count(*) FROM samples");
  int64_t el[16];
  random_samples(el, 16, 100, 1000);
  tune_config_row dup = cfgs[2];
  dup.trials = 2; /* same key: trials is not part of it */
  tap_ok(tune_store_put_config(st, &dup, el, NULL, NULL) == tune_err_db,
         "a duplicate config key is refused");
  tap_ok(q_int(db, "SELECT count(*) FROM configs") == nconf &&
             q_int(db, "SELECT count(*) FROM samples") == nsamp,
         "the refused config left no rows");
  tune_config_row bad = cfgs[0];
  bad.op = DC_OP_COUNT;
  tap_ok(tune_store_put_config(st, &bad, el, NULL, NULL) == tune_err_arg,
         "an invalid op is refused");
  bad = cfgs[0];
  bad.bytes = UINT64_MAX;
  tap_ok(tune_store_put_config(st, &bad, el, NULL, NULL) == tune_err_arg,
         "bytes over int64 are refused");
  bad = make_config(424242, 4096, 8, 2);
  tap_ok(tune_store_put_config(st, &bad, el, NULL, NULL) == tune_err_db,
         "a config of no run is refused (foreign key)");

  /* Caller-level transactions: rollback drops both, commit keeps both, and a
   * failing put inside undoes only itself. */
  tune_config_row a = make_config(run2, 111, 8, 2), b = make_config(run2, 222, 8, 2);
  const unsigned said_before_rollback = tune_errors_said();
  tap_ok(tune_store_begin(st) == tune_ok &&
             tune_store_put_config(st, &a, el, NULL, NULL) == tune_ok &&
             tune_store_put_config(st, &b, el, NULL, NULL) == tune_ok &&
             tune_store_rollback(st) == tune_ok,
         "two configs put and rolled back");
  tap_ok(q_int(db, "SELECT count(*) FROM configs") == nconf &&
             q_int(db, "SELECT count(*) FROM samples") == nsamp,
         "rollback removed them and their samples");
  tap_ok(tune_store_rollback(st) == tune_ok && tune_errors_said() == said_before_rollback,
         "a rollback after the transaction ended (a failed commit undid it) does nothing, says nothing");
  tap_ok(tune_store_begin(st) == tune_ok &&
             tune_store_put_config(st, &a, el, NULL, NULL) == tune_ok &&
             tune_store_put_config(st, &a, el, NULL, NULL) == tune_err_db &&
             tune_store_put_config(st, &b, el, NULL, NULL) == tune_ok &&
             tune_store_commit(st) == tune_ok,
         "a batch with one failing put commits");
  tap_ok(q_int(db, "SELECT count(*) FROM configs") == nconf + 2 &&
             q_int(db, "SELECT count(*) FROM samples") == nsamp + 32,
         "the batch kept exactly its two good configs");
  tap_ok(tune_store_commit(st) == tune_err_arg, "commit without begin is refused");
  tune_store_close(st);
}

static int rows_equal(const dc_threshold_row *a, const dc_threshold_row *b) {
  if (a->sm != b->sm || a->world != b->world || a->topo != b->topo || a->op != b->op ||
      a->dtype != b->dtype || a->align != b->align || a->mode != b->mode ||
      a->skew_ns != b->skew_ns || a->nseg != b->nseg)
    return 0;
  for (int j = 0; j < a->nseg; j++)
    if (a->seg[j].max_bytes != b->seg[j].max_bytes || a->seg[j].path != b->seg[j].path) return 0;
  return 1;
}

static void test_results(const char *path) {
  tune_store *st = NULL;
  int64_t run_id;
  char buf[128];
  if (tune_store_open(path, 0, &st) != tune_ok ||
      tune_store_run_begin(st, &run_info, &run_id) != tune_ok) {
    tap_ok(0, "open for results");
    tune_store_close(st);
    return;
  }
  sqlite3 *db = tune_store_db(st);
  tune_crossover_row x = {run_id,
                          DC_OP_ALL_GATHER,
                          DC_DTYPE_FP32,
                          4,
                          DC_ALIGN_16,
                          DC_MODE_EAGER,
                          250,
                          DC_PATH_SINGLE_BLOCK,
                          DC_PATH_FUSED,
                          24576,
                          16384,
                          32768,
                          0,
                          0,
                          0,
                          0.95,
                          1};
  x.diff_ns = -(50 + tune_rng_uniform(&rng) * 100);
  x.ci_lo_ns = x.diff_ns - 10 * tune_rng_uniform(&rng);
  x.ci_hi_ns = x.diff_ns + 10 * tune_rng_uniform(&rng);
  tap_ok(tune_store_put_crossover(st, &x) == tune_ok, "put_crossover");
  {
    sqlite3_stmt *s;
    int ok = sqlite3_prepare_v2(
                 db,
                 "SELECT path_below, path_above, bytes, lo_bytes, hi_bytes, diff_ns,"
                 " ci_lo_ns, ci_hi_ns, confidence, decided, skew_ns, align FROM crossovers",
                 -1, &s, NULL) == SQLITE_OK &&
             sqlite3_step(s) == SQLITE_ROW;
    ok = ok && strcmp((const char *)sqlite3_column_text(s, 0), "single_block") == 0 &&
         strcmp((const char *)sqlite3_column_text(s, 1), "fused") == 0 &&
         sqlite3_column_int64(s, 2) == 24576 && sqlite3_column_int64(s, 3) == 16384 &&
         sqlite3_column_int64(s, 4) == 32768 && sqlite3_column_double(s, 5) == x.diff_ns &&
         sqlite3_column_double(s, 6) == x.ci_lo_ns && sqlite3_column_double(s, 7) == x.ci_hi_ns &&
         sqlite3_column_double(s, 8) == 0.95 && sqlite3_column_int(s, 9) == 1 &&
         sqlite3_column_int64(s, 10) == 250 &&
         strcmp((const char *)sqlite3_column_text(s, 11), "align16") == 0;
    sqlite3_finalize(s);
    tap_ok(ok, "crossover reads back with its confidence interval");
  }

  /* A header: the first rows of the built-in table plus random ones. */
  enum { NB = 6, NR = 10 };
  dc_threshold_row rows[NR];
  memset(rows, 0, sizeof(rows));
  size_t nb = dc_builtin_thresholds_count < NB ? dc_builtin_thresholds_count : NB;
  memcpy(rows, dc_builtin_thresholds, nb * sizeof(rows[0]));
  for (size_t i = nb; i < NR; i++) {
    dc_threshold_row *r = &rows[i];
    r->sm = 80 + (int)(tune_rng_next(&rng) % 20);
    r->world = 2 << (tune_rng_next(&rng) % 3);
    r->topo = (dc_topo)(tune_rng_next(&rng) % DC_TOPO_COUNT);
    r->op = (dc_op)(tune_rng_next(&rng) % DC_OP_COUNT);
    r->dtype = (dc_dtype)(tune_rng_next(&rng) % DC_DTYPE_COUNT);
    r->align = (dc_align)(tune_rng_next(&rng) % DC_ALIGN_COUNT);
    r->mode = (dc_mode)(tune_rng_next(&rng) % DC_MODE_COUNT);
    r->skew_ns = (int64_t)(tune_rng_next(&rng) % 10000);
    r->nseg = 1 + (int)(tune_rng_next(&rng) % DC_MAX_SEGMENTS);
    uint64_t b = 0;
    for (int j = 0; j < r->nseg; j++) {
      b += 1 + tune_rng_next(&rng) % 1000000;
      r->seg[j].max_bytes = j == r->nseg - 1 ? DC_BYTES_MAX : b;
      /* A path of the op that the row's buffers allow, as a table holds. */
      do
        r->seg[j].path = (dc_path)(1 + tune_rng_next(&rng) % (DC_PATH_COUNT - 1));
      while (!dc_path_valid(r->op, r->seg[j].path) ||
             (dc_path_needs_reg(r->op, r->seg[j].path) && r->align != DC_ALIGN_REG));
    }
  }
  int64_t hid = 0, hid2 = 0, hid3 = 0;
  tap_ok(tune_store_put_header(st, run_id, "kernels/thresholds.h", 1, 0, "abc", rows, NR, &hid) ==
             tune_ok,
         "put_header with %d rows", NR);
  dc_threshold_row *back = NULL;
  size_t nback = 0;
  tap_ok(tune_store_get_header_rows(st, hid, &back, &nback) == tune_ok && nback == NR,
         "get_header_rows gives %d rows", NR);
  int eq = back != NULL && nback == NR;
  for (size_t i = 0; eq && i < NR; i++) eq = rows_equal(&rows[i], &back[i]);
  tap_ok(eq, "header rows round-trip equal (DC_BYTES_MAX included)");
  free(back);
  int64_t nmax = 0;
  for (size_t i = 0; i < NR; i++)
    for (int j = 0; j < rows[i].nseg; j++) nmax += rows[i].seg[j].max_bytes == DC_BYTES_MAX;
  tap_ok(q_int(db, "SELECT count(*) FROM header_rows WHERE max_bytes = -1") == nmax,
         "DC_BYTES_MAX is stored as -1 (%" PRId64 " segments)", nmax);
  tap_ok(strcmp(q_text(db, "SELECT sha256 FROM headers WHERE content = 'abc'", buf, sizeof(buf)),
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0,
         "sha256 of \"abc\" is the FIPS 180-2 value");
  static const char two_blocks[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  tap_ok(tune_store_put_header(st, run_id, "b.h", 0, 1, two_blocks, NULL, 0, &hid2) == tune_ok &&
             strcmp(q_text(db, "SELECT sha256 FROM headers WHERE path = 'b.h'", buf, sizeof(buf)),
                    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0,
         "sha256 of the 448-bit FIPS message (two padding blocks)");
  tap_ok(tune_store_put_header(st, run_id, "e.h", 0, 0, "", NULL, 0, &hid3) == tune_ok &&
             strcmp(q_text(db, "SELECT sha256 FROM headers WHERE path = 'e.h'", buf, sizeof(buf)),
                    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0,
         "sha256 of the empty string");
  tap_ok(
      tune_store_get_header_rows(st, hid2, &back, &nback) == tune_ok && nback == 0 && back == NULL,
      "a header without rows reads back empty");
  int64_t nh = q_int(db, "SELECT count(*) FROM headers");
  dc_threshold_row empty_row = rows[0];
  empty_row.nseg = 0;
  dc_threshold_row two[2] = {rows[1], empty_row};
  tap_ok(tune_store_put_header(st, run_id, "x.h", 0, 0, "x", two, 2, NULL) == tune_err_arg &&
             q_int(db, "SELECT count(*) FROM headers") == nh,
         "a header with an empty row is refused whole");

  tune_regret_row rg = {run_id,
                        DC_OP_REDUCE_SCATTER,
                        DC_DTYPE_FP16,
                        8,
                        DC_ALIGN_16,
                        DC_MODE_GRAPH,
                        1 << 20,
                        DC_PATH_MULTI_BLOCK,
                        DC_PATH_FUSED,
                        0,
                        0};
  rg.best_ns = 3000 + tune_rng_uniform(&rng) * 1000;
  rg.auto_ns = rg.best_ns * (1 + tune_rng_uniform(&rng) * 0.2);
  tap_ok(tune_store_put_regret(st, &rg) == tune_ok, "put_regret");
  {
    sqlite3_stmt *s;
    int ok = sqlite3_prepare_v2(
                 db, "SELECT auto_path, best_path, auto_ns, best_ns, regret, bytes FROM regret", -1,
                 &s, NULL) == SQLITE_OK &&
             sqlite3_step(s) == SQLITE_ROW;
    ok = ok && strcmp((const char *)sqlite3_column_text(s, 0), "multi_block") == 0 &&
         strcmp((const char *)sqlite3_column_text(s, 1), "fused") == 0 &&
         sqlite3_column_double(s, 2) == rg.auto_ns && sqlite3_column_double(s, 3) == rg.best_ns &&
         sqlite3_column_double(s, 4) == rg.auto_ns / rg.best_ns &&
         sqlite3_column_int64(s, 5) == 1 << 20;
    sqlite3_finalize(s);
    tap_ok(ok, "regret reads back, regret = auto_ns / best_ns");
  }
  rg.best_ns = 0;
  tap_ok(tune_store_put_regret(st, &rg) == tune_err_arg, "a regret with best_ns 0 is refused");

  int64_t npairs = q_int(db, "SELECT count(*) FROM pairs");
  tune_pair_row pr = {.run_id = run_id,
                      .impl = "detcoll_reg",
                      .op = DC_OP_ALL_REDUCE,
                      .dtype = DC_DTYPE_BF16,
                      .world = 4,
                      .bytes = 3 << 20,
                      .in_offset = 0,
                      .out_offset = 0,
                      .align = DC_ALIGN_REG,
                      .mode = DC_MODE_EAGER,
                      .new_config = 1,
                      .prev_config = 2,
                      .new_path = DC_PATH_DIRECT,
                      .prev_path = DC_PATH_TWO_SHOT,
                      .shared = 0,
                      .trials = 20,
                      .confidence = 0.95};
  pr.prev_ns = 5000 + tune_rng_uniform(&rng) * 1000;
  pr.new_ns = pr.prev_ns * (0.7 + tune_rng_uniform(&rng) * 0.2);
  pr.ci_lo = pr.new_ns / pr.prev_ns * 0.98;
  pr.ci_hi = pr.new_ns / pr.prev_ns * 1.02;
  tap_ok(tune_store_put_pair(st, &pr) == tune_ok, "put_pair");
  tap_ok(q_int(db,
               "SELECT count(*) FROM pairs WHERE impl = 'detcoll_reg' AND align = 'reg16' AND "
               "new_path = 'direct'"
               " AND prev_path = 'two_shot' AND shared = 0 AND trials = 20 AND bytes = 3145728") ==
                 1 &&
             q_int(db,
                   "SELECT count(*) FROM pairs WHERE ratio = new_ns / prev_ns AND ratio BETWEEN "
                   "ci_lo AND ci_hi") == npairs + 1,
         "a pairing reads back, ratio = new_ns / prev_ns");
  tune_pair_row bad = pr;
  bad.ci_lo = 0;
  int refused = tune_store_put_pair(st, &bad) == tune_err_arg;
  bad = pr;
  bad.prev_ns = 0;
  refused &= tune_store_put_pair(st, &bad) == tune_err_arg;
  bad = pr;
  bad.prev_config = 0;
  refused &= tune_store_put_pair(st, &bad) == tune_err_arg;
  bad = pr;
  bad.new_path = (dc_path)99;
  refused &= tune_store_put_pair(st, &bad) == tune_err_arg;
  tap_ok(refused && q_int(db, "SELECT count(*) FROM pairs") == npairs + 1,
         "a pairing with a CI at 0, a median 0, no config or an unknown path is refused, nothing "
         "written");
  tune_store_close(st);
}

static int count_of(const char *text, size_t len, const char *needle) {
  int n = 0;
  size_t nl = strlen(needle);
  for (const char *p = text; (p = memmem(p, len - (size_t)(p - text), needle, nl)) != NULL; p += nl)
    n++;
  return n;
}

/* Lines of the csv section of one table: from "# table NAME" to the next "# table". */
/* Lines of the CSV of one table, its text appended to *all (NULL: not
 * exported). */
static int csv_table_lines(tune_store *st, const char *table, FILE *all) {
  char *text = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&text, &len);
  int lines = -1;
  if (m != NULL && tune_store_export(st, table, "csv", m) == tune_ok) lines = 0;
  if (m != NULL) fclose(m);
  for (size_t i = 0; lines >= 0 && i < len; i++) lines += text[i] == '\n';
  if (text != NULL) fputs(text, all);
  free(text);
  return lines;
}

static void test_export(const char *path) {
  tune_store *st = NULL;
  char *text = NULL;
  size_t len = 0;
  if (tune_store_open(path, 1, &st) != tune_ok) {
    tap_ok(0, "read-only open for export");
    return;
  }
  sqlite3 *db = tune_store_db(st);
  int64_t nsamples = q_int(db, "SELECT count(*) FROM samples"),
          nruns = q_int(db, "SELECT count(*) FROM runs");

  FILE *m = open_memstream(&text, &len);
  tap_ok(tune_store_export(st, NULL, "csv", m) == tune_err_arg,
         "csv of every table is refused: one CSV holds one table");
  fclose(m);
  tap_ok(len == 0, "and nothing is written");
  free(text);
  m = open_memstream(&text, &len);
  static const char *const tables[] = {"runs",        "configs", "samples",        "crossovers",
                                       "headers",     "header_rows", "regret", "skew_summaries",
                                       "skew_fits"};
  int all = 1;
  for (size_t i = 0; i < 9; i++) all &= csv_table_lines(st, tables[i], m) >= 1;
  tap_ok(all, "csv of each of the 9 tables has a header line");
  fclose(m);
  FILE *none = fopen("/dev/null", "w");
  tap_ok(csv_table_lines(st, "samples", none) == nsamples + 1,
         "csv of samples has %" PRId64 " rows", nsamples);
  fclose(none);
  tap_ok(strstr(text, "\nconfig_id,trial,rank,elapsed_ns,delay_ns\n") != NULL,
         "csv samples header line");
  tap_ok(count_of(text, len, ",\"node,1 \"\"a\"\"\",") == nruns,
         "csv quotes a host with a comma and quotes");
  tap_ok(strstr(text, "\"default (not measured)\"") == NULL &&
             strstr(text, ",default (not measured),") != NULL,
         "csv leaves plain fields unquoted");
  free(text);

  m = open_memstream(&text, &len);
  tap_ok(tune_store_export(st, "samples", "csv", m) == tune_ok, "export csv of one table");
  fclose(m);
  tap_ok(strncmp(text, "config_id,trial,rank,elapsed_ns,delay_ns\n", 41) == 0 &&
             strstr(text, "# table") == NULL && count_of(text, len, "\n") == nsamples + 1,
         "one-table csv: header line, no table marker, one line per row");
  free(text);

  m = open_memstream(&text, &len);
  tap_ok(tune_store_export(st, NULL, "json", m) == tune_ok, "export json of every table");
  fclose(m);
  tap_ok(count_of(text, len, "{\"config_id\": ") == nsamples, "json has one object per sample");
  tap_ok(count_of(text, len, "\"host\": \"node,1 \\\"a\\\"\"") == nruns,
         "json escapes quotes in strings");
  tap_ok(strstr(text, "\"finished_at\": null") != NULL, "json writes NULL as null");
  tap_ok(strstr(text, "\"regret\": [") != NULL && strstr(text, "\"header_rows\": [") != NULL,
         "json holds every table");
  /* Structure: brackets balance outside strings. */
  int depth = 0, in_str = 0, bad = 0;
  for (size_t i = 0; i < len; i++) {
    char ch = text[i];
    if (in_str) {
      if (ch == '\\')
        i++;
      else if (ch == '"')
        in_str = 0;
      else if ((unsigned char)ch < 0x20)
        bad = 1;
    } else if (ch == '"')
      in_str = 1;
    else if (ch == '{' || ch == '[')
      depth++;
    else if (ch == '}' || ch == ']')
      bad |= --depth < 0;
  }
  tap_ok(!bad && depth == 0 && !in_str, "json brackets balance and strings are escaped");
  const char *jpath = tap_path("export.json");
  write_file(jpath, text, len);
  free(text);
  if (access("/usr/bin/python3", X_OK) == 0) {
    char cmd[1024];
    snprintf(cmd, sizeof(cmd),
             "/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));"
             " sys.exit(0 if len(d[\"samples\"])==%" PRId64 " and len(d[\"runs\"])==%" PRId64
             " and d[\"headers\"][0][\"sha256\"].startswith(\"ba7816bf\") else 1)' %s",
             nsamples, nruns, jpath);
    tap_ok(system(cmd) == 0, "python's json module parses the export and counts agree");
  } else {
    tap_diag("python3 not found: json parser cross-check skipped");
  }

  m = open_memstream(&text, &len);
  tap_ok(tune_store_export(st, "nosuch", "csv", m) == tune_err_arg,
         "unknown table is tune_err_arg");
  fclose(m);
  tap_ok(len == 0, "nothing written for an unknown table");
  free(text);
  m = open_memstream(&text, &len);
  tap_ok(tune_store_export(st, NULL, "xml", m) == tune_err_arg, "unknown format is tune_err_arg");
  fclose(m);
  tap_ok(len == 0, "nothing written for an unknown format");
  free(text);
  tune_store_close(st);
}

/* A skew summary of config_id with seeded statistics; run_id and the key
 * columns of a 2-rank all_reduce. */
static tune_skew_summary_row skew_summary(int64_t run_id, int64_t config_id) {
  tune_skew_summary_row x = {.config_id = config_id,
                             .run_id = run_id,
                             .impl = "detcoll",
                             .op = DC_OP_ALL_REDUCE,
                             .dtype = DC_DTYPE_BF16,
                             .world = 2,
                             .bytes = 8 * 8192 * 2,
                             .rows = 8,
                             .cols = 8192,
                             .mode = DC_MODE_GRAPH,
                             .skew_rank = 1,
                             .requested_ns = 250000,
                             .trials = 30};
  tune_skew_stat *stats[] = {&x.max, &x.injected, &x.last, &x.wait, &x.delay};
  for (size_t i = 0; i < 5; i++) {
    stats[i]->median_ns = 1000 + 300000 * tune_rng_uniform(&rng);
    stats[i]->p10_ns = stats[i]->median_ns * 0.9;
    stats[i]->p90_ns = stats[i]->median_ns * 1.1;
  }
  return x;
}

static void test_skew(const char *path) {
  tune_store *st = NULL;
  int64_t run_id, config_id;
  char buf[512];
  static const int64_t el[4] = {251234, 1111, 252345, 2222}, de[4] = {0, 250100, 0, 250200};
  if (tune_store_open(path, 0, &st) != tune_ok ||
      tune_store_run_begin(st, &run_info, &run_id) != tune_ok) {
    tap_ok(0, "open for skew");
    tune_store_close(st);
    return;
  }
  sqlite3 *db = tune_store_db(st);
  tune_config_row c = {run_id,
                       "detcoll",
                       DC_OP_ALL_REDUCE,
                       DC_PATH_AUTO,
                       DC_PATH_ONE_SHOT,
                       DC_DTYPE_BF16,
                       2,
                       8 * 8192 * 2,
                       0,
                       0,
                       DC_ALIGN_16,
                       DC_MODE_GRAPH,
                       250000,
                       1,
                       2,
                       1,
                       0,
                       252000,
                       251500,
                       252300};
  tap_ok(tune_store_put_config(st, &c, el, de, &config_id) == tune_ok, "a skew config stores");
  tune_skew_summary_row x = skew_summary(run_id, config_id);
  tap_ok(tune_store_put_skew_summary(st, &x) == tune_ok, "a skew summary stores");
  snprintf(buf, sizeof(buf),
           "SELECT count(*) FROM skew_summaries WHERE config_id = %" PRId64
           " AND rows = 8 AND cols = 8192 AND mode = 'graph' AND requested_ns = 250000"
           " AND abs(wait_median_ns - %.17g) < 1e-6 AND abs(delay_p90_ns - %.17g) < 1e-6",
           config_id, x.wait.median_ns, x.delay.p90_ns);
  tap_ok(q_int(db, buf) == 1, "the skew summary reads back");
  tap_ok(tune_store_put_skew_summary(st, &x) == tune_err_db,
         "a second summary of a config is tune_err_db");
  x.config_id = config_id + 1000;
  tap_ok(tune_store_put_skew_summary(st, &x) == tune_err_db,
         "a summary of no config is tune_err_db");
  x = skew_summary(run_id, config_id);
  x.injected.p10_ns = NAN;
  tap_ok(tune_store_put_skew_summary(st, &x) == tune_err_arg, "a NaN statistic is tune_err_arg");
  x = skew_summary(run_id, config_id);
  x.mode = DC_MODE_COUNT;
  tap_ok(tune_store_put_skew_summary(st, &x) == tune_err_arg, "an invalid mode is tune_err_arg");

  tune_skew_fit_row f = {
      run_id, "detcoll",     DC_OP_ALL_REDUCE, DC_DTYPE_BF16, 2,     8 * 8192 * 2, 8,
      8192,   DC_MODE_GRAPH, "wait",           0.998,         512.5, 0.99,         1.006,
      400,    620,           0.9999,           120,           0.95};
  f.slope = 0.99 + 0.02 * tune_rng_uniform(&rng);
  tap_ok(tune_store_put_skew_fit(st, &f) == tune_ok, "a skew fit stores");
  snprintf(buf, sizeof(buf),
           "SELECT count(*) FROM skew_fits WHERE run_id = %" PRId64
           " AND role = 'wait' AND n = 120 AND abs(slope - %.17g) < 1e-12",
           run_id, f.slope);
  tap_ok(q_int(db, buf) == 1, "the skew fit reads back");
  f.r2 = INFINITY;
  tap_ok(tune_store_put_skew_fit(st, &f) == tune_err_arg, "an infinite r2 is tune_err_arg");
  f.r2 = 0.5;
  f.role = NULL;
  tap_ok(tune_store_put_skew_fit(st, &f) == tune_err_arg, "a fit without a role is tune_err_arg");
  tap_ok(q_int(db, "SELECT count(*) FROM skew_fits") == 1 &&
             q_int(db, "SELECT count(*) FROM skew_summaries") == 1,
         "refused skew rows wrote nothing");
  tune_store_close(st);
}

/* A version 2 file: a fresh database without the skew tables, holding data. */
static void test_migration_v2(void) {
  const char *path = tap_path("v2.sqlite");
  tune_store *st = NULL, *fresh = NULL;
  int64_t run_id, config_id;
  static const int64_t el[2] = {4567, 5678};
  if (tune_store_open(path, 0, &st) != tune_ok ||
      tune_store_run_begin(st, &run_info, &run_id) != tune_ok) {
    tap_ok(0, "create the version 2 fixture");
    tune_store_close(st);
    return;
  }
  tune_config_row c = {run_id,
                       "detcoll",
                       DC_OP_ALL_GATHER,
                       DC_PATH_AUTO,
                       DC_PATH_FUSED,
                       DC_DTYPE_FP32,
                       2,
                       4096,
                       0,
                       0,
                       DC_ALIGN_16,
                       DC_MODE_EAGER,
                       0,
                       -1,
                       1,
                       1,
                       0,
                       5678,
                       5678,
                       5678};
  tap_ok(tune_store_put_config(st, &c, el, NULL, &config_id) == tune_ok, "v2 fixture: a config");
  tune_store_close(st);
  st = NULL;
  raw_exec(path,
           "DROP TABLE pairs; DROP TABLE skew_fits; DROP TABLE skew_summaries;"
           " ALTER TABLE runs DROP COLUMN options; PRAGMA user_version = 2;");
  tap_ok(tune_store_open(path, 1, &st) == tune_err_db && st == NULL,
         "read-only open of version 2 is refused");
  tap_ok(tune_store_open(path, 0, &st) == tune_ok, "open for writing migrates version 2");
  if (st == NULL) return;
  sqlite3 *db = tune_store_db(st);
  tap_ok(q_int(db, "PRAGMA user_version") == TUNE_STORE_VERSION,
         "user_version is %d after migration", TUNE_STORE_VERSION);
  tap_ok(q_int(db, "SELECT sum(elapsed_ns) FROM samples") == 4567 + 5678,
         "the version 2 samples are there");
  tune_skew_summary_row x = skew_summary(run_id, config_id);
  tap_ok(tune_store_put_skew_summary(st, &x) == tune_ok, "the migrated file takes skew summaries");
  if (tune_store_open(tap_path("fresh3.sqlite"), 0, &fresh) == tune_ok) {
    char *a = schema_shape(db), *b = schema_shape(tune_store_db(fresh));
    tap_ok(a && b && strcmp(a, b) == 0 && strstr(a, "skew_fits.confidence REAL 1"),
           "version 2 migrated columns equal schema.sql's");
    if (a && b && strcmp(a, b) != 0) tap_diag("migrated:\n%s\nfresh:\n%s", a, b);
    sqlite3_free(a);
    sqlite3_free(b);
  } else {
    tap_ok(0, "open a fresh database to compare");
  }
  tune_store_close(fresh);
  tune_store_close(st);
}

static void test_migration(void) {
  const char *path = tap_path("v1.sqlite");
  tune_store *st = NULL;
  size_t l0, l1;
  raw_exec(path, v1_schema);
  char *before = tap_slurp(path, &l0);
  tap_ok(tune_store_open(path, 1, &st) == tune_err_db && st == NULL,
         "read-only open of version 1 is refused");
  char *after = tap_slurp(path, &l1);
  tap_ok(before && after && l0 == l1 && memcmp(before, after, l0) == 0 && sidecars_absent(path),
         "the refused version 1 file is unchanged");
  free(before);
  free(after);
  tap_ok(tune_store_open(path, 0, &st) == tune_ok, "open for writing migrates version 1");
  if (st == NULL) return;
  sqlite3 *db = tune_store_db(st);
  char buf[64];
  tap_ok(q_int(db, "PRAGMA user_version") == TUNE_STORE_VERSION,
         "user_version is %d after migration", TUNE_STORE_VERSION);
  tap_ok(
      strcmp(q_text(db, "SELECT host FROM runs WHERE id = 1", buf, sizeof(buf)), "oldhost") == 0 &&
          q_int(db, "SELECT count(*) FROM runs WHERE id = 1 AND parent_run IS NULL") == 1,
      "the old run is there, with parent_run NULL");
  tap_ok(q_int(db, "SELECT sum(elapsed_ns) FROM samples WHERE config_id = 1") ==
                 4111 + 4222 + 4333 + 4444 &&
             q_int(db, "SELECT count(*) FROM configs") == 1,
         "the old config and its samples are there");
  tune_regret_row rg = {1,     DC_OP_ALL_GATHER, DC_DTYPE_FP16, 2,      DC_ALIGN_16, DC_MODE_EAGER,
                        65536, DC_PATH_FUSED,    DC_PATH_FUSED, 4321.5, 4321.5};
  tap_ok(tune_store_put_regret(st, &rg) == tune_ok, "the migrated file takes regret rows");
  tune_pair_row pr = {.run_id = 1,
                      .impl = "detcoll",
                      .op = DC_OP_ALL_GATHER,
                      .dtype = DC_DTYPE_FP16,
                      .world = 2,
                      .bytes = 65536,
                      .align = DC_ALIGN_16,
                      .mode = DC_MODE_EAGER,
                      .new_config = 1,
                      .prev_config = 1,
                      .new_path = DC_PATH_FUSED,
                      .prev_path = DC_PATH_FUSED,
                      .shared = 1,
                      .trials = 2,
                      .new_ns = 4321.5,
                      .prev_ns = 4321.5,
                      .ci_lo = 1,
                      .ci_hi = 1,
                      .confidence = 0.95};
  tap_ok(tune_store_put_pair(st, &pr) == tune_ok, "the migrated file takes pair rows");
  tune_config_row key = {1,
                         "detcoll",
                         DC_OP_ALL_GATHER,
                         DC_PATH_FUSED,
                         DC_PATH_FUSED,
                         DC_DTYPE_FP16,
                         2,
                         65536,
                         0,
                         0,
                         DC_ALIGN_16,
                         DC_MODE_EAGER,
                         0,
                         -1,
                         2,
                         1,
                         0,
                         0,
                         0,
                         0};
  int64_t found = 0;
  tap_ok(tune_store_find_config(st, &key, &found) == tune_ok && found == 1,
         "find_config finds the old config");

  /* The migrated schema must be the one a new file gets. */
  tune_store *fresh = NULL;
  if (tune_store_open(tap_path("fresh.sqlite"), 0, &fresh) == tune_ok) {
    char *a = schema_shape(db), *b = schema_shape(tune_store_db(fresh));
    tap_ok(a && b && strcmp(a, b) == 0 && strlen(a) > 100, "migrated columns equal schema.sql's");
    if (a && b && strcmp(a, b) != 0) tap_diag("migrated:\n%s\nfresh:\n%s", a, b);
    sqlite3_free(a);
    sqlite3_free(b);
  } else {
    tap_ok(0, "open a fresh database to compare");
  }
  tune_store_close(fresh);
  tune_store_close(st);
  st = NULL;
  tap_ok(tune_store_open(path, 1, &st) == tune_ok, "the migrated file opens read-only");
  tune_store_close(st);
}

/* A refused file must stay byte-for-byte as it was, with no WAL/SHM/journal. */
static void expect_refused(const char *path, int readonly, const char *what, const char *message) {
  size_t l0, l1;
  char *before = tap_slurp(path, &l0);
  tune_result r = tune_ok;
  int said = 1;
  if (message != NULL && !readonly)
    said = stderr_holds(message, open_rw, path, &r);
  else {
    tune_store *st = NULL;
    r = tune_store_open(path, readonly, &st);
    tune_store_close(st);
  }
  char *after = tap_slurp(path, &l1);
  tap_ok(r == tune_err_db, "%s: %s open is tune_err_db", what, readonly ? "read-only" : "writing");
  if (message != NULL && !readonly) tap_ok(said, "%s: message says \"%s\"", what, message);
  tap_ok(before && after && l0 == l1 && memcmp(before, after, l0) == 0 && sidecars_absent(path),
         "%s: file unchanged byte-for-byte, no sidecar files", what);
  free(before);
  free(after);
}

static void test_bad_files(void) {
  tune_store *st = NULL;
  tune_result r;
  const char *text = tap_path("notes.txt");
  char junk[4096];
  for (size_t i = 0; i < sizeof(junk); i++) junk[i] = (char)(' ' + tune_rng_next(&rng) % 90);
  write_file(text, junk, sizeof(junk));
  expect_refused(text, 0, "text file", "is not an SQLite database");
  expect_refused(text, 1, "text file", NULL);
  const char *small = tap_path("small.txt");
  write_file(small, "SQLite", 6);
  expect_refused(small, 0, "6-byte file", "is not an SQLite database");

  const char *other = tap_path("other.sqlite");
  raw_exec(other,
           "PRAGMA application_id = 305419896; CREATE TABLE t(x); INSERT INTO t VALUES (1), (2);");
  expect_refused(other, 0, "another application's file",
                 "another application (application_id 0x12345678)");
  expect_refused(other, 1, "another application's file", NULL);
  const char *plain = tap_path("plain.sqlite");
  raw_exec(plain, "CREATE TABLE t(x); INSERT INTO t VALUES ('keep me');");
  expect_refused(plain, 0, "an SQLite file without application_id", "another application");

  const char *newer = tap_path("newer.sqlite");
  raw_exec(newer,
           "PRAGMA application_id = 1145261900; PRAGMA user_version = 6; CREATE TABLE future(x);");
  expect_refused(newer, 0, "schema version 6",
                 "schema version 6 is newer than this tune supports (5)");
  expect_refused(newer, 1, "schema version 6", NULL);
  /* Our own WAL-mode file bumped to a newer version. */
  const char *newer_wal = tap_path("newer_wal.sqlite");
  if (tune_store_open(newer_wal, 0, &st) == tune_ok) {
    tune_store_close(st);
    st = NULL;
    raw_exec(newer_wal, "PRAGMA user_version = 9;");
    expect_refused(newer_wal, 0, "WAL file of schema version 9", "schema version 9 is newer");
  } else {
    tap_ok(0, "create the WAL fixture");
  }

  const char *missing_dir = tap_path("no/such/dir/db.sqlite");
  tap_ok(stderr_holds("cannot create", open_rw, missing_dir, &r) && r == tune_err_db,
         "a path in a missing directory is tune_err_db, \"cannot create\"");
  tap_ok(!tap_file_exists(tap_path("no")), "nothing was created for it");
  const char *under_file = tap_path("notes.txt/db.sqlite");
  tap_ok(open_rw(under_file, &r) == tune_err_db, "a path under a regular file is tune_err_db");
  /* /proc refuses new files even to root, unlike a chmod'ed directory. */
  tap_ok(open_rw("/proc/self/tune-test.sqlite", &r) == tune_err_db,
         "an unwritable directory (/proc) is tune_err_db");
  tap_ok(open_rw(tap_scratch, &r) == tune_err_db, "a directory as the database is tune_err_db");

  const char *ro = tap_path("ro.sqlite");
  if (tune_store_open(ro, 0, &st) == tune_ok) {
    int64_t id;
    tune_store_run_begin(st, &run_info, &id);
    tune_store_close(st);
    st = NULL;
    chmod(ro, 0444);
    expect_refused(ro, 0, "a write-protected file", "is read-only");
    tap_ok(tune_store_open(ro, 1, &st) == tune_ok &&
               q_int(tune_store_db(st), "SELECT count(*) FROM runs") == 1,
           "a write-protected file opens read-only and reads");
    tune_store_close(st);
    st = NULL;
    chmod(ro, 0644);
  } else {
    tap_ok(0, "create the read-only fixture");
  }

  const char *empty = tap_path("empty.sqlite");
  write_file(empty, "", 0);
  expect_refused(empty, 1, "an empty file", NULL);
  tap_ok(tune_store_open(empty, 0, &st) == tune_ok &&
             q_int(tune_store_db(st), "PRAGMA user_version") == TUNE_STORE_VERSION,
         "an empty file opened for writing gets the schema");
  tune_store_close(st);
  st = NULL;
  tap_ok(tune_store_open(tap_path("absent.sqlite"), 1, &st) == tune_err_db &&
             !tap_file_exists(tap_path("absent.sqlite")),
         "read-only open of a missing file fails and creates nothing");
  tap_ok(
      tune_store_open("", 0, &st) == tune_err_arg && tune_store_open(NULL, 0, &st) == tune_err_arg,
      "an empty or NULL path is tune_err_arg");
}

/* A samples table without the NOT NULL and CHECK constraints of schema.sql:
 * every tune schema had NOT NULL, so a NULL time comes only from a file
 * changed outside tune; this stands for one. */
static const char loose_samples[] =
    "CREATE TABLE loose (config_id INTEGER, trial INTEGER, rank INTEGER, elapsed_ns INTEGER,"
    " delay_ns INTEGER, PRIMARY KEY (config_id, trial, rank)) WITHOUT ROWID;"
    "INSERT INTO loose SELECT config_id, trial, rank, elapsed_ns, delay_ns FROM samples;"
    "DROP TABLE samples; ALTER TABLE loose RENAME TO samples;";

static tune_store *check_st;
static int64_t check_run_id;

static tune_result check_run(const char *unused, tune_result *r) {
  (void)unused;
  return *r = tune_store_check_run(check_st, check_run_id);
}

/* Whether check (check_run or check_rows) of run_id of st is tune_err_db
 * with a message holding needle. */
static int check_refuses_with(tune_store *st, int64_t run_id,
                              tune_result (*check)(const char *, tune_result *),
                              const char *needle) {
  tune_result r = tune_ok;
  check_st = st;
  check_run_id = run_id;
  return stderr_holds(needle, check, NULL, &r) && r == tune_err_db;
}

static int check_refuses(tune_store *st, int64_t run_id, const char *needle) {
  return check_refuses_with(st, run_id, check_run, needle);
}

static void sql_or_bail(sqlite3 *db, const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
    printf("Bail out! %s: %s\n", sql, err ? err : "?");
    exit(1);
  }
}

/* A new store at tap_path(name) holding two runs begun; 0 (one failed
 * check, the store closed) if it cannot be made. */
static int two_runs(const char *name, tune_store **st, int64_t *run_a, int64_t *run_b) {
  *st = NULL;
  if (tune_store_open(tap_path(name), 0, st) == tune_ok &&
      tune_store_run_begin(*st, &run_info, run_a) == tune_ok &&
      tune_store_run_begin(*st, &run_info, run_b) == tune_ok)
    return 1;
  tap_ok(0, "%s fixture: a store with two runs", name);
  tune_store_close(*st);
  return 0;
}

/* tune_store_check_run (what --resume reads back): every kind of bad sample
 * and a config short of samples is named by its first bad row, only in the
 * run checked. */
static void test_check_run(void) {
  static const struct {
    const char *column, *value, *shown;
  } bad[] = {
      {"elapsed_ns", "NULL", "elapsed_ns NULL"},
      {"elapsed_ns", "'abc'", "elapsed_ns 'abc'"},
      {"elapsed_ns", "-5", "elapsed_ns -5"},
      {"elapsed_ns", "3600000000001", "elapsed_ns 3600000000001"},
      {"elapsed_ns", "9223372036854775807", "elapsed_ns 9223372036854775807"},
      {"elapsed_ns", "1.5", "elapsed_ns 1.5"},
      {"delay_ns", "NULL", "delay_ns NULL"},
      {"delay_ns", "-1", "delay_ns -1"},
  };
  tune_store *st = NULL;
  int64_t run_a, run_b, cfg_a, cfg_b, el[4] = {4100, 4200, 4300, 4400};
  char sql[256], needle[128];
  if (!two_runs("check.sqlite", &st, &run_a, &run_b)) return;
  tune_config_row a = make_config(run_a, 4096, 2, 2), b = make_config(run_b, 4096, 2, 2);
  tap_ok(tune_store_put_config(st, &a, el, NULL, &cfg_a) == tune_ok &&
             tune_store_put_config(st, &b, el, NULL, &cfg_b) == tune_ok,
         "check_run fixture: a config of 2 trials x 2 ranks in each of two runs");
  sqlite3 *db = tune_store_db(st);
  sql_or_bail(db, loose_samples);
  tap_ok(tune_store_check_run(st, run_a) == tune_ok && tune_store_check_run(st, 0) == tune_ok,
         "check_run: good samples pass");
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    snprintf(sql, sizeof(sql),
             "UPDATE samples SET %s = %s WHERE config_id = %" PRId64 " AND trial = 1 AND rank = 0",
             bad[i].column, bad[i].value, cfg_a);
    sql_or_bail(db, sql);
    snprintf(needle, sizeof(needle), "run %" PRId64 " config %" PRId64 " trial 1 rank 0: ", run_a,
             cfg_a);
    tap_ok(check_refuses(st, run_a, needle) && check_refuses(st, run_a, bad[i].shown),
           "check_run: %s = %s is tune_err_db, naming config, trial, rank and value", bad[i].column,
           bad[i].value);
    tap_ok(tune_store_check_run(st, run_b) == tune_ok,
           "check_run: %s = %s is not run %" PRId64 "'s", bad[i].column, bad[i].value, run_b);
    snprintf(sql, sizeof(sql),
             "UPDATE samples SET elapsed_ns = 4300, delay_ns = 0 WHERE config_id = %" PRId64
             " AND trial = 1 AND rank = 0",
             cfg_a);
    sql_or_bail(db, sql);
  }
  snprintf(sql, sizeof(sql),
           "UPDATE samples SET elapsed_ns = -7 WHERE config_id = %" PRId64
           " AND trial = 1 AND rank = 1; UPDATE samples SET elapsed_ns = NULL WHERE config_id = "
           "%" PRId64 " AND trial = 0 AND rank = 1",
           cfg_a, cfg_a);
  sql_or_bail(db, sql);
  snprintf(needle, sizeof(needle), "config %" PRId64 " trial 0 rank 1: elapsed_ns NULL", cfg_a);
  tap_ok(check_refuses(st, run_a, needle), "check_run: of two bad rows, the first is named");
  snprintf(sql, sizeof(sql),
           "UPDATE samples SET elapsed_ns = 4400 WHERE config_id = %" PRId64
           " AND trial = 1 AND rank = 1; UPDATE samples SET elapsed_ns = 4200 WHERE config_id = "
           "%" PRId64 " AND trial = 0 AND rank = 1; DELETE FROM samples WHERE config_id = %" PRId64
           " AND trial = 1 AND rank = 1",
           cfg_a, cfg_a, cfg_a);
  sql_or_bail(db, sql);
  snprintf(needle, sizeof(needle), "config %" PRId64 " (trials 2, world 2) has 3 samples", cfg_a);
  tap_ok(check_refuses(st, run_a, needle), "check_run: a config short of one sample is named");
  snprintf(sql, sizeof(sql),
           "INSERT INTO samples VALUES (%" PRId64 ", 1, 1, 4400, 0), (%" PRId64 ", 2, 0, 4500, 0)",
           cfg_a, cfg_a);
  sql_or_bail(db, sql);
  snprintf(needle, sizeof(needle), "config %" PRId64 " (trials 2, world 2) has 4 samples", cfg_a);
  tap_ok(check_refuses(st, run_a, needle),
         "check_run: a config with a sample beyond its trials is named");
  snprintf(sql, sizeof(sql), "DELETE FROM samples WHERE config_id = %" PRId64 " AND trial = 2",
           cfg_a);
  sql_or_bail(db, sql);
  tap_ok(tune_store_check_run(st, run_a) == tune_ok, "check_run: repaired, run %" PRId64 " passes",
         run_a);
  tune_store_close(st);
}

static tune_result check_rows(const char *unused, tune_result *r) {
  (void)unused;
  return *r = tune_store_check_rows(check_st, check_run_id);
}

/* tune_store_check_rows (what replay, report and compare check before they
 * act on a run): a value tune never writes, in the runs row, a config or a
 * crossover of the run checked, is tune_err_db naming table, row, column
 * and value; the other run stays good; an enum's C name is not its name. */
static void test_check_rows(void) {
  /* A damage: UPDATE table SET column = value in run_a's rows, or (stmt
   * non-NULL) that statement with run_a for %lld; shown, what the error says.
   * Each is rolled back; foreign keys are checked at a commit, so wait. */
  static const struct {
    const char *table, *column, *value, *shown, *stmt;
  } bad[] = {
      {"runs", "sm", "'abc'", "sm 'abc' is not an integer", NULL},
      {"runs", "gpu_count", "-1", "gpu_count -1 is not an integer from 0", NULL},
      {"runs", "topo", "'fleet'", "its topo and kind disagree", NULL},
      {"runs", "topo", "'moon'", "topo 'moon' is not a value tune writes", NULL},
      {"runs", "topo", "'DC_TOPO_NVLINK'", "topo 'DC_TOPO_NVLINK' is not", NULL},
      {"runs", "backend", "'cpu'", "backend 'cpu' is not", NULL},
      {"runs", "seed", "1.5", "seed 1.5 is not an integer", NULL},
      {"runs", "kind", "'bogus'", "kind 'bogus' is not", NULL},
      {"runs", "parent_run", "id", "parent_run names no other run", NULL},
      {"runs", "parent_run", "99", "parent_run names no other run", NULL},
      {"runs", NULL, NULL, "it has a parent_run but is not the sweep or after run of its job",
       "UPDATE runs SET parent_run = (SELECT max(id) FROM runs) WHERE id = %lld"},
      {"configs", "op", "'all_reduze'", "op 'all_reduze' is not", NULL},
      {"configs", "op", "'DC_OP_ALL_REDUCE'", "op 'DC_OP_ALL_REDUCE' is not", NULL},
      {"configs", "path", "'nopath'", "path 'nopath' is not", NULL},
      {"configs", "chosen_path", "'auto2'", "chosen_path 'auto2' is not", NULL},
      {"configs", "dtype", "'int9'", "dtype 'int9' is not", NULL},
      {"configs", "impl", "'bogus'", "impl 'bogus' is not", NULL},
      {"configs", "world", "0", "world 0 is not an integer from 1", NULL},
      {"configs", "bytes", "-5", "bytes -5 is not", NULL},
      {"configs", "in_offset", "-1", "in_offset -1 is not", NULL},
      {"configs", "align", "'zz'", "align 'zz' is not", NULL},
      {"configs", "mode", "'x'", "mode 'x' is not", NULL},
      {"configs", "skew_rank", "-3", "skew_rank -3 is not an integer from -2", NULL},
      {"configs", "skew_rank", "2", "skew_rank is not a rank of its world", NULL},
      {"configs", "wrong_elems", "'none'", "wrong_elems 'none' is not", NULL},
      {"configs", "median_ns", "'abc'", "median_ns 'abc' is not a number from 0", NULL},
      {"configs", "p90_ns", "1e999", "p90_ns Inf is not a number", NULL},
      {"configs", "p10_ns", "-1000", "p10_ns -1000.0 is not a number", NULL},
      {"crossovers", "path_below", "'zz'", "path_below 'zz' is not", NULL},
      {"crossovers", "hi_bytes", "0", "hi_bytes 0 is not", NULL},
      {"crossovers", "decided", "3", "decided 3 is not an integer from 0 to 1", NULL},
      {"crossovers", "diff_ns", "'abc'", "diff_ns 'abc' is not a number", NULL},
      {"crossovers", "confidence", "7", "confidence 7.0 is not a number from 0 to 1", NULL},
      {"crossovers", "ci_lo_ns", "1e9", "its confidence interval is reversed", NULL},
      {"crossovers", "bytes", "1", "its threshold lies outside its bracket", NULL},
      {"regret", "regret", "'abc'", "regret 'abc' is not a number", NULL},
      {"regret", "best_ns", "-3", "best_ns -3.0 is not a number", NULL},
      {"regret", "mode", "'x'", "mode 'x' is not", NULL},
      {"regret", NULL, NULL, "it repeats an earlier row's size",
       "INSERT INTO regret SELECT * FROM regret WHERE run_id = %lld"},
      {"pairs", "shared", "7", "shared 7 is not an integer from 0 to 1", NULL},
      {"pairs", "ratio", "'abc'", "ratio 'abc' is not a number", NULL},
      {"pairs", "impl", "'nccl2'", "impl 'nccl2' is not", NULL},
      {"pairs", "new_config", "99999", "it names a config the database does not hold", NULL},
      {"pairs", NULL, NULL, "it repeats an earlier row's configuration",
       "INSERT INTO pairs SELECT * FROM pairs WHERE run_id = %lld"},
      {"headers", "installed", "5", "installed 5 is not an integer from 0 to 1", NULL},
      {"header_rows", NULL, NULL, "row 0 segment 1 is not one tune writes",
       "UPDATE header_rows SET max_bytes = -5 WHERE seg_index = 1 AND header_id IN"
       " (SELECT id FROM headers WHERE run_id = %lld)"},
      {"header_rows", NULL, NULL, "row 0 segment 0 is not one tune writes",
       "UPDATE header_rows SET world = 4294967298 WHERE header_id IN"
       " (SELECT id FROM headers WHERE run_id = %lld)"},
      {"header_rows", NULL, NULL, "is not a table tune writes (row 0: max_bytes not increasing)",
       "UPDATE header_rows SET max_bytes = -1 WHERE seg_index = 0 AND header_id IN"
       " (SELECT id FROM headers WHERE run_id = %lld)"},
  };
  tune_store *st = NULL;
  int64_t run_a, run_b, cfg_a, el[4] = {4100, 4200, 4300, 4400};
  char sql[512], needle[128];
  if (!two_runs("rows.sqlite", &st, &run_a, &run_b)) return;
  tune_config_row a = make_config(run_a, 4096, 2, 2), b = make_config(run_b, 4096, 2, 2);
  tune_crossover_row x = {run_a,        DC_OP_ALL_GATHER, DC_DTYPE_FP32, 4,   DC_ALIGN_16,
                          DC_MODE_EAGER, 0,               DC_PATH_PUSH,  DC_PATH_FUSED,
                          24576,         16384,           32768,         -70, -90,
                          -50,           0.95,            1};
  tune_regret_row rg = {run_a,       DC_OP_ALL_REDUCE, DC_DTYPE_BF16, 2,   DC_ALIGN_ANY, DC_MODE_GRAPH,
                        4096,        DC_PATH_ONE_SHOT, DC_PATH_PUSH,  2100, 2000};
  dc_threshold_row t = {0, 2, DC_TOPO_NVLINK, DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_ALIGN_ANY,
                        DC_MODE_GRAPH, 0, 2, {{65536, DC_PATH_ONE_SHOT}, {DC_BYTES_MAX, DC_PATH_TWO_SHOT}}};
  int put = tune_store_put_config(st, &a, el, NULL, &cfg_a) == tune_ok &&
            tune_store_put_config(st, &b, el, NULL, NULL) == tune_ok &&
            tune_store_put_crossover(st, &x) == tune_ok && tune_store_put_regret(st, &rg) == tune_ok &&
            tune_store_put_header(st, run_a, "t.h", 0, 0, "t", &t, 1, NULL) == tune_ok;
  /* A table tune table --file takes: a first segment of 0 bytes, a skew
   * past an hour. It is written, and reads back as written. */
  dc_threshold_row odd = t;
  dc_threshold_row *back = NULL;
  size_t nback = 0;
  odd.seg[0].max_bytes = 0;
  odd.skew_ns = INT64_C(4000000000000);
  tap_ok(tune_store_put_header(st, run_b, "odd.h", 0, 0, "odd", &odd, 1, NULL) == tune_ok &&
             tune_store_get_header_rows(st, 2, &back, &nback) == tune_ok && nback == 1 &&
             rows_equal(&odd, back),
         "a header any table check passes (0-byte first segment, a long skew) reads back");
  free(back);
  tune_pair_row pr = {.run_id = run_a, .impl = "detcoll", .op = DC_OP_ALL_REDUCE, .dtype = DC_DTYPE_BF16,
                      .world = 2, .bytes = 4096, .in_offset = 2, .out_offset = 4, .align = DC_ALIGN_ANY,
                      .mode = DC_MODE_GRAPH, .new_config = cfg_a, .prev_config = cfg_a,
                      .new_path = DC_PATH_ONE_SHOT, .prev_path = DC_PATH_ONE_SHOT, .shared = 1,
                      .trials = 2, .new_ns = 2000, .prev_ns = 2000, .ci_lo = 1, .ci_hi = 1,
                      .confidence = 0.95};
  tap_ok(put && tune_store_put_pair(st, &pr) == tune_ok,
         "check_rows fixture: a config in each of two runs; a crossover, regret, pair and header in the first");
  tap_ok(tune_store_check_rows(st, run_a) == tune_ok && tune_store_check_rows(st, 0) == tune_ok,
         "check_rows: the rows tune wrote pass");
  sqlite3 *db = tune_store_db(st);
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    int runs = strcmp(bad[i].table, "runs") == 0;
    char what[160];
    if (bad[i].stmt) {
      snprintf(what, sizeof(what), "%s", bad[i].stmt);
      snprintf(sql, sizeof(sql), "BEGIN; PRAGMA defer_foreign_keys = 1; PRAGMA ignore_check_constraints = 1; ");
      snprintf(sql + strlen(sql), sizeof(sql) - strlen(sql), bad[i].stmt, (long long)run_a);
    } else {
      snprintf(what, sizeof(what), "%s.%s = %s", bad[i].table, bad[i].column, bad[i].value);
      snprintf(sql, sizeof(sql), "BEGIN; PRAGMA defer_foreign_keys = 1; UPDATE %s SET %s = %s WHERE %s = %" PRId64, bad[i].table,
               bad[i].column, bad[i].value, runs ? "id" : "run_id", run_a);
    }
    sql_or_bail(db, sql);
    if (runs)
      snprintf(needle, sizeof(needle), "run %" PRId64 ": %s", run_a, bad[i].shown);
    else if (strcmp(bad[i].table, "header_rows") == 0)
      snprintf(needle, sizeof(needle), "header ");
    else
      snprintf(needle, sizeof(needle), "run %" PRId64 ", %s row ", run_a, bad[i].table);
    tap_ok(check_refuses_with(st, run_a, check_rows, needle) &&
               check_refuses_with(st, run_a, check_rows, bad[i].shown) &&
               check_refuses_with(st, 0, check_run, bad[i].shown),
           "check_rows: %s is tune_err_db, named; check_run refuses it too", what);
    tap_ok(tune_store_check_rows(st, run_b) == tune_ok, "check_rows: %s is not run %" PRId64 "'s",
           what, run_b);
    sql_or_bail(db, "ROLLBACK; PRAGMA ignore_check_constraints = 0");
  }
  tap_ok(tune_store_check_rows(st, run_a) == tune_ok, "check_rows: rolled back, run %" PRId64 " passes",
         run_a);
  tune_store_close(st);
}

/* A version 3 file (no CHECK constraints yet) holding a NULL time: opening
 * it for writing would migrate it, and the migration refuses, naming the
 * first bad row, and leaves the file as it was -- in WAL mode, as tune
 * wrote it, and in rollback mode. Repaired, it migrates. */
static void test_migration_bad_samples(void) {
  const char *path = tap_path("v3bad.sqlite");
  tune_store *st = NULL;
  int64_t run_id, config_id, el[4] = {4100, 4200, 4300, 4400};
  if (tune_store_open(path, 0, &st) != tune_ok ||
      tune_store_run_begin(st, &run_info, &run_id) != tune_ok) {
    tap_ok(0, "create the version 3 fixture");
    tune_store_close(st);
    return;
  }
  tune_config_row c = make_config(run_id, 8192, 2, 2);
  tap_ok(tune_store_put_config(st, &c, el, NULL, &config_id) == tune_ok, "v3 fixture: a config");
  tune_store_close(st);
  st = NULL;
  raw_exec(path, loose_samples);
  raw_exec(path,
           "DROP TABLE pairs; ALTER TABLE runs DROP COLUMN options; PRAGMA user_version = 3;"
           " UPDATE samples SET elapsed_ns = NULL WHERE trial = 1 AND rank = 0;"
           " UPDATE samples SET elapsed_ns = -3 WHERE trial = 1 AND rank = 1;");
  char needle[128];
  snprintf(needle, sizeof(needle),
           "run %" PRId64 " config %" PRId64 " trial 1 rank 0: elapsed_ns NULL", run_id, config_id);
  expect_refused(path, 0, "a version 3 file (WAL) with a NULL time", needle);
  raw_exec(path, "PRAGMA journal_mode = DELETE");
  expect_refused(path, 0, "a version 3 file (rollback journal) with a NULL time", needle);
  raw_exec(path,
           "UPDATE samples SET elapsed_ns = 4300 WHERE trial = 1 AND rank = 0;"
           " UPDATE samples SET elapsed_ns = 4400 WHERE trial = 1 AND rank = 1;");
  tap_ok(tune_store_open(path, 0, &st) == tune_ok, "repaired, the version 3 file migrates");
  if (st == NULL) return;
  sqlite3 *db = tune_store_db(st);
  tap_ok(q_int(db, "PRAGMA user_version") == TUNE_STORE_VERSION &&
             q_int(db, "SELECT sum(elapsed_ns) FROM samples") == 4100 + 4200 + 4300 + 4400,
         "the migrated file is version %d with its samples", TUNE_STORE_VERSION);
  tap_ok(sqlite3_exec(db, "UPDATE samples SET elapsed_ns = NULL WHERE trial = 0", NULL, NULL,
                      NULL) != SQLITE_OK &&
             sqlite3_exec(db, "UPDATE samples SET elapsed_ns = -1 WHERE trial = 0", NULL, NULL,
                          NULL) != SQLITE_OK,
         "the migrated samples table refuses a NULL and a negative time");
  tune_store_close(st);
}

/* 1 if another process cannot take the fcntl write lock on path (this one
 * holds it). */
static int held_here(const char *path) {
  pid_t pid = fork();
  if (pid == 0) {
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    int fd = open(path, O_RDWR);
    _exit(fd >= 0 && fcntl(fd, F_SETLK, &fl) != 0 ? 0 : 1);
  }
  int status = 1;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The job lock goes beside the file the database path reaches; a database
 * refused on opening gives back the lock its own call took, and only that
 * one (a fleet's rank 0 holds the fleet database's while it opens its
 * node's). Runs last: the process keeps the lock it takes. */
static void test_job_lock(void) {
  char a[PATH_MAX], alock[PATH_MAX + 8], link[PATH_MAX], junk[PATH_MAX], jlock[PATH_MAX + 8];
  tune_store *st = NULL;
  snprintf(a, sizeof(a), "%s", tap_path("lock-a.db"));
  snprintf(alock, sizeof(alock), "%s.lock", a);
  snprintf(link, sizeof(link), "%s", tap_path("lock-link.db"));
  snprintf(junk, sizeof(junk), "%s", tap_path("lock-junk.db"));
  snprintf(jlock, sizeof(jlock), "%s.lock", junk);
  FILE *f = fopen(junk, "wb");
  for (int i = 0; f && i < 4096; i++) fputc((int)(tune_rng_next(&rng) & 0xff), f);
  if (f) fclose(f);
  tap_ok(tune_engine_open_store(junk, &st) != tune_ok && access(jlock, F_OK) != 0,
         "a database refused on opening leaves no lock beside it");
  tap_ok(symlink(a, link) == 0 && tune_engine_open_store(link, &st) == tune_ok && access(alock, F_OK) == 0 &&
             held_here(alock),
         "a database opened through a link is locked beside the file the link reaches");
  tune_store_close(st);
  st = NULL;
  tap_ok(tune_engine_open_store(junk, &st) != tune_ok && access(alock, F_OK) == 0 && held_here(alock),
         "a second database refused keeps the first one's lock");
}

int main(void) {
  if (tap_scratch_open("test_store") != 0) return 1;
  tune_rng_seed(&rng, 0x5eed5707e);
  const char *main_db = tap_path("tune.sqlite");
  test_schema(main_db);
  test_configs(main_db);
  test_results(main_db);
  test_export(main_db);
  test_skew(main_db);
  test_migration();
  test_migration_v2();
  test_check_run();
  test_check_rows();
  test_migration_bad_samples();
  test_bad_files();
  test_job_lock();
  int status = tap_done();
  tap_scratch_close(status);
  return status;
}
