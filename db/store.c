/* store.c: the tune database file -- opening and vetting it, creating the
 * schema or migrating an older one, and the prepared inserts every stage
 * writes through. The export lives in export.c. */
#include "store_db.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfg.h"
#include "schema_sql.h"

/* Each step takes a database of version i + 1 to version i + 2. Steps are
 * frozen history: the schema they produce, applied in order to version 1,
 * must equal schema.sql (tests/test_store.c compares the two). */
static const char *const migrations[] = {
    /* 1 -> 2: resumed and "after" runs point at their parent; regret table. */
    "ALTER TABLE runs ADD COLUMN parent_run INTEGER REFERENCES runs(id);\n"
    "CREATE TABLE regret (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
    "  op TEXT NOT NULL,\n"
    "  dtype TEXT NOT NULL,\n"
    "  world INTEGER NOT NULL,\n"
    "  align TEXT NOT NULL,\n"
    "  mode TEXT NOT NULL,\n"
    "  bytes INTEGER NOT NULL,\n"
    "  auto_path TEXT NOT NULL,\n"
    "  best_path TEXT NOT NULL,\n"
    "  auto_ns REAL NOT NULL,\n"
    "  best_ns REAL NOT NULL,\n"
    "  regret REAL NOT NULL\n"
    ");\n",
    /* 2 -> 3: tune skew's per-config summaries and sensitivity fits. */
    "CREATE TABLE skew_summaries (\n"
    "  config_id INTEGER PRIMARY KEY REFERENCES configs(id),\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
    "  impl TEXT NOT NULL, op TEXT NOT NULL, dtype TEXT NOT NULL, world INTEGER NOT NULL,\n"
    "  bytes INTEGER NOT NULL, rows INTEGER NOT NULL, cols INTEGER NOT NULL,\n"
    "  mode TEXT NOT NULL, skew_rank INTEGER NOT NULL, requested_ns INTEGER NOT NULL,\n"
    "  trials INTEGER NOT NULL,\n"
    "  max_median_ns REAL NOT NULL, max_p10_ns REAL NOT NULL, max_p90_ns REAL NOT NULL,\n"
    "  injected_median_ns REAL NOT NULL, injected_p10_ns REAL NOT NULL,\n"
    "  injected_p90_ns REAL NOT NULL,\n"
    "  last_median_ns REAL NOT NULL, last_p10_ns REAL NOT NULL, last_p90_ns REAL NOT NULL,\n"
    "  wait_median_ns REAL NOT NULL, wait_p10_ns REAL NOT NULL, wait_p90_ns REAL NOT NULL,\n"
    "  delay_median_ns REAL NOT NULL, delay_p10_ns REAL NOT NULL, delay_p90_ns REAL NOT NULL\n"
    ");\n"
    "CREATE TABLE skew_fits (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
    "  impl TEXT NOT NULL, op TEXT NOT NULL, dtype TEXT NOT NULL, world INTEGER NOT NULL,\n"
    "  bytes INTEGER NOT NULL, rows INTEGER NOT NULL, cols INTEGER NOT NULL,\n"
    "  mode TEXT NOT NULL, role TEXT NOT NULL,\n"
    "  slope REAL NOT NULL, intercept REAL NOT NULL, slope_lo REAL NOT NULL,\n"
    "  slope_hi REAL NOT NULL, intercept_lo REAL NOT NULL, intercept_hi REAL NOT NULL,\n"
    "  r2 REAL NOT NULL, n INTEGER NOT NULL, confidence REAL NOT NULL\n"
    ");\n",
    /* 3 -> 4: the parsed options of a main job; samples hold only sane times
     * (a table gets CHECK constraints only by being rebuilt). prepare_schema
     * names the first sample that would fail before running this. */
    "ALTER TABLE runs ADD COLUMN options TEXT;\n"
    "CREATE TABLE samples_v4 (\n"
    "  config_id INTEGER NOT NULL,\n"
    "  trial INTEGER NOT NULL CHECK (typeof(trial) = 'integer' AND trial >= 0),\n"
    "  rank INTEGER NOT NULL CHECK (typeof(rank) = 'integer' AND rank >= 0),\n"
    "  elapsed_ns INTEGER NOT NULL\n"
    "    CHECK (typeof(elapsed_ns) = 'integer' AND elapsed_ns BETWEEN 0 AND 3600000000000),\n"
    "  delay_ns INTEGER NOT NULL\n"
    "    CHECK (typeof(delay_ns) = 'integer' AND delay_ns BETWEEN 0 AND 3600000000000),\n"
    "  PRIMARY KEY (config_id, trial, rank)\n"
    ") WITHOUT ROWID;\n"
    "INSERT INTO samples_v4 SELECT config_id, trial, rank, elapsed_ns, delay_ns FROM samples;\n"
    "DROP TABLE samples;\n"
    "ALTER TABLE samples_v4 RENAME TO samples;\n",
    /* 4 -> 5: the after pass's before/after pairings. */
    "CREATE TABLE pairs (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
    "  impl TEXT NOT NULL, op TEXT NOT NULL, dtype TEXT NOT NULL, world INTEGER NOT NULL,\n"
    "  bytes INTEGER NOT NULL, in_offset INTEGER NOT NULL, out_offset INTEGER NOT NULL,\n"
    "  align TEXT NOT NULL, mode TEXT NOT NULL,\n"
    "  new_config INTEGER NOT NULL REFERENCES configs(id),\n"
    "  prev_config INTEGER NOT NULL REFERENCES configs(id),\n"
    "  new_path TEXT NOT NULL, prev_path TEXT NOT NULL, shared INTEGER NOT NULL,\n"
    "  trials INTEGER NOT NULL, new_ns REAL NOT NULL, prev_ns REAL NOT NULL,\n"
    "  ratio REAL NOT NULL, ci_lo REAL NOT NULL, ci_hi REAL NOT NULL,\n"
    "  confidence REAL NOT NULL\n"
    ");\n",
};
_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == TUNE_STORE_VERSION - 1,
               "one migration step per version");

/* How long a connection waits for another one's lock before SQLITE_BUSY:
 * long enough for a reader's or an exporter's snapshot, never the end of a
 * job. */
#define STORE_BUSY_MS 600000
/* The step of that wait, and after how many steps it is said. */
#define STORE_BUSY_STEP_MS 50
#define STORE_BUSY_SAY 20

typedef enum {
  S_BEGIN,
  S_COMMIT,
  S_ROLLBACK,
  S_SAVEPOINT,
  S_RELEASE,
  S_ROLLBACK_TO,
  S_RUN_BEGIN,
  S_RUN_FINISH,
  S_CONFIG,
  S_CONFIG_GROW,
  S_SAMPLE,
  S_SAMPLES,
  S_FIND_CONFIG,
  S_GET_SAMPLES,
  S_CROSSOVER,
  S_HEADER,
  S_HEADER_ROW,
  S_HEADER_PLACE,
  S_GET_HEADER_ROWS,
  S_REGRET,
  S_PAIR,
  S_SKEW_SUMMARY,
  S_SKEW_FIT,
  S_COUNT
} stmt_id;

/* Samples go in SAMPLE_BATCH rows per statement: per-statement overhead,
 * not the B-tree, dominated one-row inserts. */
#define SAMPLE_BATCH 64

/* Prepared once on first use, kept until close. A put joins a transaction
 * the caller opened through a savepoint, so it can undo just itself. */
static const char *const stmt_sql[S_COUNT] = {
    [S_BEGIN] = "BEGIN IMMEDIATE",
    [S_COMMIT] = "COMMIT",
    [S_ROLLBACK] = "ROLLBACK",
    [S_SAVEPOINT] = "SAVEPOINT tune_put",
    [S_RELEASE] = "RELEASE tune_put",
    [S_ROLLBACK_TO] = "ROLLBACK TO tune_put",
    [S_RUN_BEGIN] =
        "INSERT INTO runs(started_at, gpu_count, sm, seed, parent_run, kind, host,"
        " gpu_model, topo, driver, cuda, nccl, mpi, launcher, backend, git_rev,"
        " command_line, thresholds, options)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_RUN_FINISH] = "UPDATE runs SET finished_at = ? WHERE id = ?",
    [S_CONFIG] =
        "INSERT INTO configs(run_id, impl, op, path, dtype, world, bytes, in_offset,"
        " out_offset, mode, skew_ns, skew_rank, chosen_path, align, trials, warmup,"
        " wrong_elems, median_ns, p10_ns, p90_ns)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_CONFIG_GROW] =
        "UPDATE configs SET trials = ?, chosen_path = ?, wrong_elems = wrong_elems + ?,"
        " median_ns = ?, p10_ns = ?, p90_ns = ? WHERE id = ? AND trials = ? AND world = ?",
    [S_SAMPLE] =
        "INSERT INTO samples(config_id, trial, rank, elapsed_ns, delay_ns)"
        " VALUES (?1,?,?,?,?)",
    [S_SAMPLES] =
        "INSERT INTO samples(config_id, trial, rank, elapsed_ns, delay_ns)"
        " VALUES (?1,?,?,?,?)",
    [S_FIND_CONFIG] =
        "SELECT id FROM configs WHERE run_id = ? AND impl = ? AND op = ? AND path = ?"
        " AND dtype = ? AND world = ? AND bytes = ? AND in_offset = ?"
        " AND out_offset = ? AND mode = ? AND skew_ns = ? AND skew_rank = ?",
    [S_GET_SAMPLES] =
        "SELECT c.trials, c.world, s.trial, s.rank, s.elapsed_ns, s.delay_ns"
        " FROM configs c JOIN samples s ON s.config_id = c.id WHERE c.id = ?"
        " ORDER BY s.trial, s.rank",
    [S_CROSSOVER] =
        "INSERT INTO crossovers(run_id, op, dtype, world, align, mode, path_below,"
        " path_above, skew_ns, bytes, lo_bytes, hi_bytes, diff_ns, ci_lo_ns,"
        " ci_hi_ns, confidence, decided)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_HEADER] =
        "INSERT INTO headers(run_id, created_at, path, sha256, sim, installed, content)"
        " VALUES (?,?,?,?,?,?,?)",
    [S_HEADER_ROW] =
        "INSERT INTO header_rows(header_id, row_index, seg_index, sm, world, topo, op,"
        " dtype, align, mode, skew_ns, max_bytes, path)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_HEADER_PLACE] =
        "UPDATE headers SET path = ?, installed = ?"
        " WHERE id = (SELECT max(id) FROM headers WHERE run_id = ?)",
    [S_GET_HEADER_ROWS] =
        "SELECT row_index, seg_index, sm, world, skew_ns, max_bytes, topo, op,"
        " dtype, align, mode, path, header_id FROM header_rows WHERE header_id = ?"
        " ORDER BY row_index, seg_index",
    [S_REGRET] =
        "INSERT INTO regret(run_id, op, dtype, world, align, mode, auto_path, best_path,"
        " bytes, auto_ns, best_ns, regret) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_PAIR] =
        "INSERT INTO pairs(run_id, op, dtype, world, align, mode, new_path, prev_path, impl, bytes,"
        " in_offset, out_offset, new_config, prev_config, shared, trials, new_ns, prev_ns,"
        " ratio, ci_lo, ci_hi, confidence) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_SKEW_SUMMARY] =
        "INSERT INTO skew_summaries(config_id, run_id, impl, op, dtype, world, bytes, rows,"
        " cols, mode, skew_rank, requested_ns, trials,"
        " max_median_ns, max_p10_ns, max_p90_ns,"
        " injected_median_ns, injected_p10_ns, injected_p90_ns,"
        " last_median_ns, last_p10_ns, last_p90_ns,"
        " wait_median_ns, wait_p10_ns, wait_p90_ns,"
        " delay_median_ns, delay_p10_ns, delay_p90_ns)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_SKEW_FIT] =
        "INSERT INTO skew_fits(run_id, impl, op, dtype, world, bytes, rows, cols, mode, role,"
        " slope, intercept, slope_lo, slope_hi, intercept_lo, intercept_hi, r2, n, confidence)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
};

/* Statements prepared with their (last) VALUES row repeated this many
 * times, so one step inserts that many rows. */
static const int stmt_rows[S_COUNT] = {[S_SAMPLES] = SAMPLE_BATCH};

struct tune_store {
  sqlite3 *db;
  char *path;
  int readonly, look; /* look: TUNE_STORE_LOOK */
  int opened;         /* open for writing, and the open succeeded: settle at close */
  int64_t version;    /* the schema version, as opened */
  sqlite3_stmt *stmt[S_COUNT];
};

/* ---- small helpers --------------------------------------------------------- */

/* Report an SQLite failure on st as the user-facing error. */
static tune_result db_fail(const tune_store *st, const char *what) {
  tune_error("%s: %s: %s", st->path, what, sqlite3_errmsg(st->db));
  return tune_err_db;
}

static tune_result arg_fail(const tune_store *st, const char *what) {
  tune_error("%s: %s", st ? st->path : "(no database)", what);
  return tune_err_arg;
}

/* The text of statement id, with its VALUES row repeated stmt_rows[id]
 * times; sqlite3_free() it. */
static char *stmt_text(stmt_id id) {
  const char *sql = stmt_sql[id], *row = strrchr(sql, '(');
  char *text = sqlite3_mprintf("%s", sql);
  for (int i = 1; text != NULL && i < stmt_rows[id]; i++) {
    char *longer = sqlite3_mprintf("%s,%s", text, row);
    sqlite3_free(text);
    text = longer;
  }
  return text;
}

static tune_result stmt_get(tune_store *st, stmt_id id, sqlite3_stmt **out) {
  if (st->stmt[id] == NULL) {
    char *text = stmt_text(id);
    int rc = text == NULL ? SQLITE_NOMEM
                          : sqlite3_prepare_v3(st->db, text, -1, SQLITE_PREPARE_PERSISTENT,
                                               &st->stmt[id], NULL);
    sqlite3_free(text);
    if (rc != SQLITE_OK) return db_fail(st, "preparing a statement");
  }
  *out = st->stmt[id];
  return tune_ok;
}

/* Binds the parameters of a statement in order; the first failure sticks. */
typedef struct {
  sqlite3_stmt *s;
  int col;
  int rc;
} binder;

static void bind_i64(binder *b, int64_t v) {
  if (b->rc == SQLITE_OK) b->rc = sqlite3_bind_int64(b->s, ++b->col, v);
}
static void bind_f64(binder *b, double v) {
  if (b->rc == SQLITE_OK) b->rc = sqlite3_bind_double(b->s, ++b->col, v);
}
static void bind_text(binder *b, const char *v) {
  if (b->rc == SQLITE_OK) b->rc = sqlite3_bind_text(b->s, ++b->col, v, -1, SQLITE_STATIC);
}
static void bind_null(binder *b) {
  if (b->rc == SQLITE_OK) b->rc = sqlite3_bind_null(b->s, ++b->col);
}

/* Step a statement that returns no rows, then reset it for the next use
 * (bindings stay; SQLITE_STATIC text is only read during the step). */
static tune_result stmt_run(tune_store *st, sqlite3_stmt *s, int bind_rc, const char *what) {
  tune_result r = tune_ok;
  if (bind_rc != SQLITE_OK || sqlite3_step(s) != SQLITE_DONE) r = db_fail(st, what);
  sqlite3_reset(s);
  return r;
}

static tune_result stmt_exec(tune_store *st, stmt_id id) {
  sqlite3_stmt *s;
  TUNE_CHECK(stmt_get(st, id, &s));
  return stmt_run(st, s, SQLITE_OK, stmt_sql[id]);
}

static tune_result need_writable(const tune_store *st) {
  if (st == NULL) return arg_fail(st, "no store");
  if (st->readonly) return arg_fail(st, "the database was opened read-only");
  return tune_ok;
}

/* Bytes and counts are unsigned in C but INTEGER (int64) in SQLite. */
static tune_result check_u64(const tune_store *st, uint64_t v, const char *field) {
  if (v <= (uint64_t)INT64_MAX) return tune_ok;
  tune_error("%s: %s %" PRIu64 " does not fit the database", st->path, field, v);
  return tune_err_arg;
}

/* Names of enum values; a NULL name means the value is out of range. */
typedef struct {
  const char *field;
  const char *name;
} named;

static tune_result check_names(const tune_store *st, const named *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (v[i].name != NULL) continue;
    tune_error("%s: invalid %s value", st->path, v[i].field);
    return tune_err_arg;
  }
  return tune_ok;
}
#define NNAMES(a) (sizeof(a) / sizeof((a)[0]))

/* Start a write: its own BEGIN IMMEDIATE (so the write lock is taken up
 * front, waiting in store_busy) or a savepoint inside the caller's. */
static tune_result tx_begin(tune_store *st, int *own) {
  *own = sqlite3_get_autocommit(st->db);
  return stmt_exec(st, *own ? S_BEGIN : S_SAVEPOINT);
}

/* Finish a write started by tx_begin: keep it if r is tune_ok, else undo
 * exactly it. Returns r, or the failure of the commit. */
static tune_result tx_end(tune_store *st, int own, tune_result r) {
  if (r == tune_ok) {
    r = stmt_exec(st, own ? S_COMMIT : S_RELEASE);
    if (r == tune_ok) return r;
  }
  if (own) {
    if (!sqlite3_get_autocommit(st->db)) stmt_exec(st, S_ROLLBACK);
  } else if (stmt_exec(st, S_ROLLBACK_TO) == tune_ok) {
    stmt_exec(st, S_RELEASE);
  }
  return r;
}

/* ---- SHA-256 (FIPS 180-4), for the fingerprint of emitted headers ---------- */

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror32(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

static void sha256_block(uint32_t h[8], const unsigned char *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
           p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 =
        k + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) + ((e & f) ^ (~e & g)) + sha256_k[i] + w[i];
    uint32_t t2 = (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

/* The digest of len bytes at data as 64 lower-case hex digits. */
static void sha256_hex(const void *data, size_t len, char hex[65]) {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const unsigned char *p = data;
  size_t full = len / 64 * 64;
  for (size_t off = 0; off < full; off += 64) sha256_block(h, p + off);
  /* The tail, a 0x80 byte, zeros, and the bit length fill one or two blocks. */
  unsigned char tail[128] = {0};
  size_t rest = len - full;
  memcpy(tail, p + full, rest);
  tail[rest] = 0x80;
  size_t tail_len = rest + 9 <= 64 ? 64 : 128;
  uint64_t bits = (uint64_t)len * 8;
  for (int i = 0; i < 8; i++) tail[tail_len - 1 - i] = (unsigned char)(bits >> (8 * i));
  for (size_t off = 0; off < tail_len; off += 64) sha256_block(h, tail + off);
  for (int i = 0; i < 8; i++) snprintf(hex + 8 * i, 9, "%08" PRIx32, h[i]);
}

/* ---- opening --------------------------------------------------------------- */

typedef struct {
  int64_t app_id, version, ntables;
} file_info;

static tune_result query_int(tune_store *st, const char *sql, int64_t *v) {
  sqlite3_stmt *s = NULL;
  tune_result r = tune_ok;
  if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) {
    int rc = sqlite3_extended_errcode(st->db);
    if (rc == SQLITE_NOTADB) {
      tune_error("%s is not an SQLite database", st->path);
      r = tune_err_db;
    } else {
      r = db_fail(st, "reading the database");
    }
    goto exit;
  }
  *v = sqlite3_column_int64(s, 0);
exit:
  sqlite3_finalize(s);
  return r;
}

static tune_result inspect(tune_store *st, file_info *fi) {
  TUNE_CHECK(query_int(st, "PRAGMA application_id", &fi->app_id));
  TUNE_CHECK(query_int(st, "PRAGMA user_version", &fi->version));
  return query_int(st, "SELECT count(*) FROM sqlite_master", &fi->ntables);
}

/* Is the file one this program may use as it was asked to? *fresh: an
 * empty SQLite file that gets the schema. */
static tune_result vet(const tune_store *st, const file_info *fi, int *fresh) {
  *fresh = fi->app_id == 0 && fi->ntables == 0;
  if (*fresh) {
    if (!st->readonly) return tune_ok;
    tune_error("%s holds no tune data", st->path);
  } else if (fi->app_id != TUNE_STORE_APPLICATION_ID) {
    tune_error("%s is an SQLite database of another application (application_id 0x%08" PRIx64
               "), not a tune database",
               st->path, (uint64_t)(uint32_t)fi->app_id);
  } else if (fi->version > TUNE_STORE_VERSION) {
    tune_error("%s: schema version %" PRId64 " is newer than this tune supports (%d)", st->path,
               fi->version, TUNE_STORE_VERSION);
  } else if (fi->version < 1) {
    tune_error("%s is a tune database without a schema version; it is damaged", st->path);
  } else if (fi->version < TUNE_STORE_READ_VERSION && st->readonly && !st->look) {
    tune_error("%s: schema version %" PRId64
               " is older than this tune reads (%d); open it for "
               "writing once to migrate it",
               st->path, fi->version, TUNE_STORE_READ_VERSION);
  } else {
    return tune_ok;
  }
  return tune_err_db;
}

/* Reject what is not an SQLite file from its first bytes, before SQLite
 * sees it. The header's other fields can be stale (a WAL file keeps newer
 * pages in -wal), so they are asked of SQLite. Sets *empty for a 0-byte file. */
static tune_result check_magic(const tune_store *st, int *empty) {
  static const char magic[16] = "SQLite format 3";
  char head[100];
  FILE *f = fopen(st->path, "rb");
  if (f == NULL) {
    tune_error("cannot read %s: %s", st->path, strerror(errno));
    return tune_err_db;
  }
  size_t n = fread(head, 1, sizeof(head), f);
  int bad_read = ferror(f);
  fclose(f);
  if (bad_read) {
    tune_error("cannot read %s", st->path);
    return tune_err_db;
  }
  *empty = n == 0;
  if (n == 0 || (n == sizeof(head) && memcmp(head, magic, sizeof(magic)) == 0)) return tune_ok;
  tune_error("%s is not an SQLite database", st->path);
  return tune_err_db;
}

/* Create the schema on a fresh file or migrate an older one, in one
 * transaction, after checking again under the write lock: another process
 * may have done it between our first look and now. */
static tune_result prepare_schema(tune_store *st) {
  file_info fi;
  int fresh;
  char *err = NULL;
  char pragmas[96];
  tune_result r;
  TUNE_CHECK(stmt_exec(st, S_BEGIN));
  TUNE_CHECK_GOTO(inspect(st, &fi), r, fail);
  TUNE_CHECK_GOTO(vet(st, &fi, &fresh), r, fail);
  if (!fresh && fi.version == TUNE_STORE_VERSION) goto commit;
  if (fresh) {
    if (sqlite3_exec(st->db, tune_schema_sql, NULL, NULL, &err) != SQLITE_OK) goto sql_fail;
  } else {
    if (fi.version < 4) TUNE_CHECK_GOTO(tune_store_check_run(st, 0), r, fail);
    for (int64_t v = fi.version; v < TUNE_STORE_VERSION; v++) {
      TUNE_INFO(TUNE_DB, "%s: migrating schema version %" PRId64 " to %" PRId64, st->path, v,
                v + 1);
      if (sqlite3_exec(st->db, migrations[v - 1], NULL, NULL, &err) != SQLITE_OK) goto sql_fail;
    }
  }
  snprintf(pragmas, sizeof(pragmas), "PRAGMA application_id = %d; PRAGMA user_version = %d",
           TUNE_STORE_APPLICATION_ID, TUNE_STORE_VERSION);
  if (sqlite3_exec(st->db, pragmas, NULL, NULL, &err) != SQLITE_OK) goto sql_fail;
commit:
  return tx_end(st, 1, tune_ok);
sql_fail:
  tune_error("%s: %s the schema: %s", st->path, fresh ? "creating" : "migrating",
             err ? err : "unknown error");
  sqlite3_free(err);
  r = tune_err_db;
fail:
  return tx_end(st, 1, r);
}

/* SQLite's busy handler: wait for another connection's lock, up to
 * STORE_BUSY_MS, and say so once a second has passed -- another program
 * holding the database (a sqlite3 shell in a transaction) would otherwise
 * look like a hang. 0: give up (SQLITE_BUSY). */
static int store_busy(void *ctx, int count) {
  const tune_store *st = ctx;
  if ((int64_t)count * STORE_BUSY_STEP_MS >= STORE_BUSY_MS) return 0;
  if (count == STORE_BUSY_SAY)
    TUNE_WARN(TUNE_DB, "%s: waiting for another program's lock on it (at most %d s)", st->path,
              STORE_BUSY_MS / 1000);
  sqlite3_sleep(STORE_BUSY_STEP_MS);
  return 1;
}

static tune_result set_pragmas(tune_store *st) {
  sqlite3_stmt *s = NULL;
  tune_result r = tune_ok;
  /* The answer says whether WAL took (it cannot on some file systems).
   * Leaving a rollback journal takes an exclusive lock, and SQLite does
   * not wait for that one (store_busy) while another connection writes:
   * waited for here as for any other lock. */
  int rc = sqlite3_prepare_v2(st->db, "PRAGMA journal_mode = WAL", -1, &s, NULL);
  for (int n = 0; s != NULL && (rc == SQLITE_OK || (rc == SQLITE_BUSY && store_busy(st, n++)));) {
    if ((rc = sqlite3_step(s)) != SQLITE_BUSY) break;
    sqlite3_reset(s);
  }
  if (rc != SQLITE_ROW) {
    r = db_fail(st, "setting WAL mode");
    goto exit;
  }
  if (strcmp((const char *)sqlite3_column_text(s, 0), "wal") != 0) {
    tune_error("%s: cannot use WAL mode (journal mode stays %s)", st->path,
               (const char *)sqlite3_column_text(s, 0));
    r = tune_err_db;
    goto exit;
  }
  /* In WAL mode NORMAL survives a killed process; only power loss can
   * drop the last commits, and it spares one fsync per config. */
  if (sqlite3_exec(st->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) != SQLITE_OK)
    r = db_fail(st, "setting synchronous = NORMAL");
exit:
  sqlite3_finalize(s);
  return r;
}

/* Remove what a failed open created, so a failed create leaves no file. */
void tune_store_remove(const char *path) {
  static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
  char name[PATH_MAX];
  for (size_t i = 0; i < NNAMES(suffixes); i++) {
    snprintf(name, sizeof(name), "%s%s", path, suffixes[i]);
    unlink(name);
  }
}

/* 1 if the file's header says WAL mode (its read and write versions,
 * bytes 18 and 19, are 2). */
static int wal_file(const char *path) {
  unsigned char h[20];
  FILE *f = fopen(path, "rb");
  size_t n = f ? fread(h, 1, sizeof(h), f) : 0;
  if (f) fclose(f);
  return n == sizeof(h) && (h[18] == 2 || h[19] == 2);
}

/* A read-only open of a WAL file needs its -shm, which SQLite creates if it
 * is missing: a folder that cannot hold one (read-only, or not ours) would
 * make the open fail with "attempt to write a readonly database". Without a
 * -wal holding frames, every page is in the file itself, so it can be read
 * as immutable -- as a look (tune_store_open's TUNE_STORE_LOOK) reads it
 * in any folder, leaving no -wal or -shm behind. */
static tune_result readonly_uri(const char *path, int look, char **uri) {
  char dir[PATH_MAX], side[PATH_MAX];
  struct stat sb;
  *uri = NULL;
  snprintf(dir, sizeof(dir), "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash == NULL)
    snprintf(dir, sizeof(dir), ".");
  else
    slash[slash == dir] = '\0';
  snprintf(side, sizeof(side), "%s-wal", path);
  int frames = stat(side, &sb) == 0 && sb.st_size > 0;
  snprintf(side, sizeof(side), "%s-shm", path);
  if ((frames || !look) && (access(dir, W_OK) == 0 || access(side, R_OK) == 0)) return tune_ok;
  /* In rollback-journal mode (as a writer leaves it: settle) no -shm is
   * needed: read in place, in any folder. */
  if (!look && !frames && !wal_file(path)) return tune_ok;
  if (frames) {
    tune_error(
        "%s: its -wal holds data but its folder cannot hold the -shm to read it; copy the files"
        " to a writable folder",
        path);
    return tune_err_db;
  }
  /* The path as a URI: every byte but unreserved ones and '/' %-escaped. */
  char *u = sqlite3_mprintf("file:");
  for (const unsigned char *p = (const unsigned char *)path; u != NULL && *p; p++) {
    char *longer = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                           (*p >= '0' && *p <= '9') || strchr("/-._~", *p) != NULL
                       ? sqlite3_mprintf("%s%c", u, *p)
                       : sqlite3_mprintf("%s%%%02X", u, *p);
    sqlite3_free(u);
    u = longer;
  }
  if (u != NULL) {
    char *longer = sqlite3_mprintf("%s?immutable=1", u);
    sqlite3_free(u);
    u = longer;
  }
  if (u == NULL) {
    tune_error("out of memory opening %s", path);
    return tune_err_system;
  }
  TUNE_INFO(TUNE_DB, "%s: %s; reading it as immutable", path,
            look ? "its -wal holds no frames" : "its folder is read-only");
  *uri = u;
  return tune_ok;
}

tune_result tune_store_readonly_name(const char *path, char **uri) {
  return readonly_uri(path, 0, uri);
}

tune_result tune_store_check_attachable(const char *path) {
  char *uri;
  TUNE_CHECK(tune_store_readonly_name(path, &uri));
  if (uri == NULL) return tune_ok;
  sqlite3_free(uri);
  tune_error(
      "%s: its folder is read-only, and SQLite attaches a database in WAL mode only where it "
      "can keep its -shm beside it; copy it to a writable folder",
      path);
  return tune_err_arg;
}

/* Before anything is written at path or beside it (its -wal, its job lock):
 * it exists and is a regular file, writable unless readonly, and (unless
 * readonly) reached by one name only; or it is missing and may be created
 * (*exists = 0). SQLite keeps a database's -wal and -shm, and tune its job
 * lock, beside the name it is opened by: through two hard links, two jobs
 * would each have their own and overwrite each other's writes (SQLite's
 * "How To Corrupt": unsafe). A reader takes no lock and may use any name. */
tune_result tune_store_check_path(const char *path) {
  /* SQLite opens a relative name as an absolute one, and takes none whose
   * "-journal" name would be longer than its VFS's mxPathname (512 bytes as
   * built by default); it would say only "unable to open database file". */
  char cwd[PATH_MAX] = "";
  sqlite3_vfs *vfs = sqlite3_vfs_find(NULL);
  size_t full = strlen(path) + (path[0] == '/' || !getcwd(cwd, sizeof(cwd)) ? 0 : strlen(cwd) + 1);
  if (vfs && full + 8 > (size_t)vfs->mxPathname) {
    tune_error("%s: its absolute path is %zu bytes; SQLite takes at most %d", path, full, vfs->mxPathname - 8);
    return tune_err_db;
  }
  return tune_ok;
}

static tune_result store_check_name(const char *path, int readonly, int *exists) {
  struct stat sb;
  TUNE_CHECK(tune_store_check_path(path));
  *exists = stat(path, &sb) == 0;
  if (!*exists && (errno != ENOENT || readonly)) {
    tune_error("cannot %s %s: %s", readonly ? "open" : "create", path, strerror(errno));
    return tune_err_db;
  }
  if (!*exists) return tune_ok;
  if (!S_ISREG(sb.st_mode)) {
    tune_error("%s is not a regular file", path);
    return tune_err_db;
  }
  /* Root writes through any mode; a write-protected file still means
   * "keep this", so honour it for everyone. */
  if (!readonly && (sb.st_mode & 0222) == 0) {
    tune_error("%s is read-only (mode %04o); nothing written", path, (unsigned)(sb.st_mode & 07777));
    return tune_err_db;
  }
  if (!readonly && sb.st_nlink > 1) {
    tune_error(
        "%s has %ju names (hard links): SQLite keeps a database's -wal, and tune its job "
        "lock, beside the name it is opened by, so jobs through two names would overwrite "
        "each other's writes; keep one name (remove the other links, or copy the file); "
        "nothing written",
        path, (uintmax_t)sb.st_nlink);
    return tune_err_db;
  }
  return tune_ok;
}

/* Before SQLite sees path: store_check_name, and the first bytes of a file
 * that exists are a database's. */
static tune_result store_check_file(tune_store *st, const char *path, int readonly, int *exists) {
  int empty = 0;
  TUNE_CHECK(store_check_name(path, readonly, exists));
  if (!*exists) return tune_ok;
  TUNE_CHECK(check_magic(st, &empty));
  if (empty && readonly) {
    tune_error("%s is empty: it holds no tune data", path);
    return tune_err_db;
  }
  return tune_ok;
}

/* The connection: read-only (immutable where the folder cannot hold a
 * -shm) or read-write (created if missing), with its busy handler.
 * *opened: SQLite opened (or created) the file, whatever failed after. */
static tune_result store_connect(tune_store *st, const char *path, int readonly, int exists, int *opened) {
  /* NOMUTEX: a store is used by one thread at a time (store.h), so the
   * per-call connection mutex is pure cost on the sample path. */
  int flags =
      SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI |
      (readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (exists ? 0 : SQLITE_OPEN_CREATE));
  char *uri = NULL;
  if (readonly) TUNE_CHECK(readonly_uri(path, readonly == TUNE_STORE_LOOK, &uri));
  int orc =
      sqlite3_open_v2(uri ? uri : path, &st->db, uri ? flags : flags & ~SQLITE_OPEN_URI, NULL);
  sqlite3_free(uri);
  *opened = orc == SQLITE_OK;
  if (orc != SQLITE_OK) {
    int err = st->db ? sqlite3_system_errno(st->db) : 0;
    tune_error("cannot %s %s: %s%s%s", exists ? "open" : "create", path,
               st->db ? sqlite3_errmsg(st->db) : "out of memory", err ? ": " : "",
               err ? strerror(err) : "");
    return tune_err_db;
  }
  if (!readonly && sqlite3_db_readonly(st->db, "main") == 1) {
    tune_error("%s is not writable; nothing written", path);
    return tune_err_db;
  }
  if (sqlite3_busy_handler(st->db, store_busy, st) != SQLITE_OK)
    return db_fail(st, "setting the busy handler");
  return tune_ok;
}

tune_result tune_store_open(const char *path, int readonly, tune_store **out) {
  tune_result r = tune_ok;
  tune_store *st = NULL;
  int exists = 1, opened = 0, created = 0, fresh;
  file_info fi;
  if (out == NULL || path == NULL || path[0] == '\0') return arg_fail(NULL, "no database path");
  *out = NULL;
  if (strlen(path) + sizeof("-journal") > PATH_MAX) return arg_fail(NULL, "database path too long");
  st = calloc(1, sizeof(*st));
  if (st == NULL || (st->path = strdup(path)) == NULL) {
    free(st);
    tune_error("out of memory opening %s", path);
    return tune_err_system;
  }
  st->readonly = readonly != 0;
  st->look = readonly == TUNE_STORE_LOOK;
  TUNE_CHECK_GOTO(store_check_file(st, path, readonly, &exists), r, fail);
  r = store_connect(st, path, readonly, exists, &opened);
  created = !exists && opened;
  if (r != tune_ok) goto fail;
  /* Look before writing anything: setting WAL mode rewrites the header. */
  TUNE_CHECK_GOTO(inspect(st, &fi), r, fail);
  TUNE_CHECK_GOTO(vet(st, &fi, &fresh), r, fail);
  if (sqlite3_exec(st->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) != SQLITE_OK) {
    r = db_fail(st, "enabling foreign keys");
    goto fail;
  }
  /* An old file's samples are checked before WAL mode rewrites its header:
   * a migration refused for bad data leaves the file as it was. A look
   * refuses alike: what opening it for writing would refuse. */
  if ((!readonly || st->look) && !fresh && fi.version < 4)
    TUNE_CHECK_GOTO(tune_store_check_run(st, 0), r, fail);
  st->version = fi.version;
  if (!readonly) {
    TUNE_CHECK_GOTO(set_pragmas(st), r, fail);
    TUNE_CHECK_GOTO(prepare_schema(st), r, fail);
    st->version = TUNE_STORE_VERSION;
  }
  TUNE_INFO(TUNE_DB, "opened %s%s", path, readonly ? " read-only" : "");
  st->opened = !readonly;
  *out = st;
  return tune_ok;
fail:
  tune_store_close(st);
  if (created) tune_store_remove(path);
  return r;
}

/* A writer that opened a database and closes it leaves it one file, in
 * rollback-journal mode: a read-only open of a WAL file creates its -wal
 * and -shm and cannot remove them, so every export or report would leave
 * both beside it. The next writer turns WAL on again (set_pragmas), which
 * waits for a reader still in a read transaction then (in WAL mode at
 * rest it would not). Another connection still open (a report read during
 * the job) keeps it in WAL mode, which loses nothing; so does a
 * transaction left open by a failure, or an open that failed. */
static void settle(tune_store *st) {
  sqlite3_stmt *s = NULL;
  const char *mode = NULL;
  if (!sqlite3_get_autocommit(st->db)) return;
  if (sqlite3_busy_timeout(st->db, 0) == SQLITE_OK &&
      sqlite3_prepare_v2(st->db, "PRAGMA main.journal_mode = DELETE", -1, &s, NULL) == SQLITE_OK &&
      sqlite3_step(s) == SQLITE_ROW)
    mode = (const char *)sqlite3_column_text(s, 0);
  if (mode == NULL || strcmp(mode, "delete") != 0)
    TUNE_INFO(TUNE_DB, "%s stays in WAL mode: %s", st->path, mode ? mode : sqlite3_errmsg(st->db));
  sqlite3_finalize(s);
}

void tune_store_close(tune_store *st) {
  if (st == NULL) return;
  for (int i = 0; i < S_COUNT; i++) sqlite3_finalize(st->stmt[i]);
  if (st->opened) settle(st);
  if (st->db != NULL && sqlite3_close(st->db) != SQLITE_OK)
    TUNE_WARN(TUNE_DB, "%s: closing: %s", st->path, sqlite3_errmsg(st->db));
  free(st->path);
  free(st);
}

sqlite3 *tune_store_db(tune_store *st) { return st ? st->db : NULL; }

const char *tune_store_path(const tune_store *st) { return st ? st->path : NULL; }

int64_t tune_store_version(const tune_store *st) { return st ? st->version : 0; }

tune_result tune_store_begin(tune_store *st) {
  TUNE_CHECK(need_writable(st));
  if (!sqlite3_get_autocommit(st->db)) return arg_fail(st, "a transaction is already open");
  return stmt_exec(st, S_BEGIN);
}

tune_result tune_store_commit(tune_store *st) {
  TUNE_CHECK(need_writable(st));
  if (sqlite3_get_autocommit(st->db)) return arg_fail(st, "no transaction to commit");
  return tx_end(st, 1, tune_ok);
}

tune_result tune_store_rollback(tune_store *st) {
  TUNE_CHECK(need_writable(st));
  if (sqlite3_get_autocommit(st->db)) return tune_ok; /* tx_end rolled back a failed commit */
  return stmt_exec(st, S_ROLLBACK);
}

/* ---- runs ------------------------------------------------------------------ */

/* The text columns of runs, in the order S_RUN_BEGIN binds them. */
static const struct {
  const char *field;
  size_t offset;
} run_text[] = {
    {"kind", offsetof(tune_run_info, kind)},
    {"host", offsetof(tune_run_info, host)},
    {"gpu_model", offsetof(tune_run_info, gpu_model)},
    {"topo", offsetof(tune_run_info, topo)},
    {"driver", offsetof(tune_run_info, driver)},
    {"cuda", offsetof(tune_run_info, cuda)},
    {"nccl", offsetof(tune_run_info, nccl)},
    {"mpi", offsetof(tune_run_info, mpi)},
    {"launcher", offsetof(tune_run_info, launcher)},
    {"backend", offsetof(tune_run_info, backend)},
    {"git_rev", offsetof(tune_run_info, git_rev)},
    {"command_line", offsetof(tune_run_info, command_line)},
    {"thresholds", offsetof(tune_run_info, thresholds)},
};

tune_result tune_store_run_begin(tune_store *st, const tune_run_info *info, int64_t *run_id) {
  char now[32];
  sqlite3_stmt *s;
  TUNE_CHECK(need_writable(st));
  if (info == NULL || run_id == NULL) return arg_fail(st, "run_begin: no run info");
  TUNE_CHECK(stmt_get(st, S_RUN_BEGIN, &s));
  tune_utc_iso(now, sizeof(now));
  binder b = {s, 0, SQLITE_OK};
  bind_text(&b, now);
  bind_i64(&b, info->gpu_count);
  bind_i64(&b, info->sm);
  bind_i64(&b, info->seed);
  if (info->parent_run != 0)
    bind_i64(&b, info->parent_run);
  else
    bind_null(&b);
  for (size_t i = 0; i < NNAMES(run_text); i++) {
    const char *v = *(const char *const *)((const char *)info + run_text[i].offset);
    if (v == NULL) {
      sqlite3_clear_bindings(s);
      tune_error("%s: run_begin: %s is missing", st->path, run_text[i].field);
      return tune_err_arg;
    }
    bind_text(&b, v);
  }
  if (info->options != NULL)
    bind_text(&b, info->options);
  else
    bind_null(&b);
  TUNE_CHECK(stmt_run(st, s, b.rc, "inserting a run"));
  *run_id = sqlite3_last_insert_rowid(st->db);
  return tune_ok;
}

tune_result tune_store_run_finish(tune_store *st, int64_t run_id) {
  char now[32];
  sqlite3_stmt *s;
  TUNE_CHECK(need_writable(st));
  TUNE_CHECK(stmt_get(st, S_RUN_FINISH, &s));
  tune_utc_iso(now, sizeof(now));
  binder b = {s, 0, SQLITE_OK};
  bind_text(&b, now);
  bind_i64(&b, run_id);
  TUNE_CHECK(stmt_run(st, s, b.rc, "finishing a run"));
  if (sqlite3_changes(st->db) == 0) return arg_fail(st, "run_finish: no such run");
  return tune_ok;
}

/* ---- configs and samples --------------------------------------------------- */

/* Check a config's enum values and bytes; n gets the names of op, path,
 * chosen_path, dtype, align and mode, in that order. */
static tune_result config_names(const tune_store *st, const tune_config_row *c, named n[6]) {
  const named v[6] = {
      {"config op", dc_op_name(c->op)},
      {"config path", dc_path_name(c->path)},
      {"config chosen_path", dc_path_name(c->chosen_path)},
      {"config dtype", dc_dtype_name(c->dtype)},
      {"config align", dc_align_name(c->align)},
      {"config mode", dc_mode_name(c->mode)},
  };
  memcpy(n, v, sizeof(v));
  if (c->impl == NULL) return arg_fail(st, "config impl is missing");
  TUNE_CHECK(check_names(st, n, 6));
  return check_u64(st, c->bytes, "config bytes");
}

/* Bind sample i (trial first_trial + i / world) as parameters col..col + 3
 * of s (after ?1). */
static int bind_sample(sqlite3_stmt *s, int col, const tune_config_row *c, int first_trial,
                       size_t i, const int64_t *elapsed_ns, const int64_t *delay_ns) {
  int rc;
  if ((rc = sqlite3_bind_int64(s, col, first_trial + (int64_t)(i / (size_t)c->world))) !=
          SQLITE_OK ||
      (rc = sqlite3_bind_int64(s, col + 1, (int64_t)(i % (size_t)c->world))) != SQLITE_OK ||
      (rc = sqlite3_bind_int64(s, col + 2, elapsed_ns[i])) != SQLITE_OK)
    return rc;
  return sqlite3_bind_int64(s, col + 3, delay_ns ? delay_ns[i] : 0);
}

/* trials * world samples of config id from trial first_trial on, full
 * batches then single rows. config_id (?1) stays bound across steps; the
 * rest is rebound each time. */
static tune_result put_samples(tune_store *st, int64_t id, const tune_config_row *c,
                               int first_trial, int trials, const int64_t *elapsed_ns,
                               const int64_t *delay_ns) {
  sqlite3_stmt *batch, *one;
  size_t n = (size_t)trials * (size_t)c->world, i = 0;
  TUNE_CHECK(stmt_get(st, S_SAMPLES, &batch));
  TUNE_CHECK(stmt_get(st, S_SAMPLE, &one));
  int rc = sqlite3_bind_int64(batch, 1, id);
  if (rc == SQLITE_OK) rc = sqlite3_bind_int64(one, 1, id);
  for (; rc == SQLITE_OK && n - i >= SAMPLE_BATCH; i += SAMPLE_BATCH) {
    for (size_t j = 0; j < SAMPLE_BATCH && rc == SQLITE_OK; j++)
      rc = bind_sample(batch, 2 + 4 * (int)j, c, first_trial, i + j, elapsed_ns, delay_ns);
    if (rc == SQLITE_OK) rc = sqlite3_step(batch) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    sqlite3_reset(batch);
  }
  for (; rc == SQLITE_OK && i < n; i++) {
    rc = bind_sample(one, 2, c, first_trial, i, elapsed_ns, delay_ns);
    if (rc == SQLITE_OK) rc = sqlite3_step(one) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    sqlite3_reset(one);
  }
  return rc == SQLITE_OK ? tune_ok : db_fail(st, "inserting samples");
}

/* The unique key of a config (configs_key), in the column order that
 * S_CONFIG and S_FIND_CONFIG share; n are config_names()'s names. */
static void bind_config_key(binder *b, const tune_config_row *c, const named *n) {
  bind_i64(b, c->run_id);
  bind_text(b, c->impl);
  bind_text(b, n[0].name); /* op */
  bind_text(b, n[1].name); /* path */
  bind_text(b, n[3].name); /* dtype */
  bind_i64(b, c->world);
  bind_i64(b, (int64_t)c->bytes);
  bind_i64(b, c->in_offset);
  bind_i64(b, c->out_offset);
  bind_text(b, n[5].name); /* mode */
  bind_i64(b, c->skew_ns);
  bind_i64(b, c->skew_rank);
}

tune_result tune_store_put_config(tune_store *st, const tune_config_row *c,
                                  const int64_t *elapsed_ns, const int64_t *delay_ns,
                                  int64_t *config_id) {
  named n[6];
  sqlite3_stmt *s;
  int own;
  int64_t id = 0;
  tune_result r;
  TUNE_CHECK(need_writable(st));
  if (c == NULL || elapsed_ns == NULL) return arg_fail(st, "put_config: no config or samples");
  TUNE_CHECK(config_names(st, c, n));
  TUNE_CHECK(check_u64(st, c->wrong_elems, "config wrong_elems"));
  if (c->trials < 1 || c->world < 1)
    return arg_fail(st, "put_config: trials and world must be >= 1");
  TUNE_CHECK(stmt_get(st, S_CONFIG, &s));
  TUNE_CHECK(tx_begin(st, &own));
  binder b = {s, 0, SQLITE_OK};
  bind_config_key(&b, c, n);
  bind_text(&b, n[2].name);
  bind_text(&b, n[4].name);
  bind_i64(&b, c->trials);
  bind_i64(&b, c->warmup);
  bind_i64(&b, (int64_t)c->wrong_elems);
  bind_f64(&b, c->median_ns);
  bind_f64(&b, c->p10_ns);
  bind_f64(&b, c->p90_ns);
  TUNE_CHECK_GOTO(stmt_run(st, s, b.rc, "inserting a config"), r, exit);
  id = sqlite3_last_insert_rowid(st->db);
  r = put_samples(st, id, c, 0, c->trials, elapsed_ns, delay_ns);
exit:
  r = tx_end(st, own, r);
  if (r == tune_ok && config_id != NULL) *config_id = id;
  return r;
}

tune_result tune_store_add_samples(tune_store *st, int64_t config_id, const tune_config_row *c,
                                   int first_trial, int trials, const int64_t *elapsed_ns,
                                   const int64_t *delay_ns) {
  sqlite3_stmt *s;
  int own;
  tune_result r;
  TUNE_CHECK(need_writable(st));
  if (c == NULL || elapsed_ns == NULL) return arg_fail(st, "add_samples: no config or samples");
  if (trials < 1 || first_trial < 0 || c->world < 1 || c->trials != first_trial + trials)
    return arg_fail(st, "add_samples: trials must be >= 1 and c->trials first_trial + trials");
  const char *chosen = dc_path_name(c->chosen_path);
  if (chosen == NULL) return arg_fail(st, "add_samples: invalid chosen_path");
  TUNE_CHECK(check_u64(st, c->wrong_elems, "config wrong_elems"));
  TUNE_CHECK(stmt_get(st, S_CONFIG_GROW, &s));
  TUNE_CHECK(tx_begin(st, &own));
  binder b = {s, 0, SQLITE_OK};
  bind_i64(&b, c->trials);
  bind_text(&b, chosen);
  bind_i64(&b, (int64_t)c->wrong_elems);
  bind_f64(&b, c->median_ns);
  bind_f64(&b, c->p10_ns);
  bind_f64(&b, c->p90_ns);
  bind_i64(&b, config_id);
  bind_i64(&b, first_trial);
  bind_i64(&b, c->world);
  TUNE_CHECK_GOTO(stmt_run(st, s, b.rc, "updating a config"), r, exit);
  if (sqlite3_changes(st->db) != 1) {
    tune_error("%s: add_samples: config %" PRId64 " does not hold %d trials of %d ranks", st->path,
               config_id, first_trial, c->world);
    r = tune_err_arg;
    goto exit;
  }
  r = put_samples(st, config_id, c, first_trial, trials, elapsed_ns, delay_ns);
exit:
  return tx_end(st, own, r);
}

tune_result tune_store_find_config(tune_store *st, const tune_config_row *key, int64_t *config_id) {
  named n[6];
  sqlite3_stmt *s;
  tune_result r = tune_ok;
  if (st == NULL || key == NULL || config_id == NULL) return arg_fail(st, "find_config: no key");
  TUNE_CHECK(config_names(st, key, n));
  TUNE_CHECK(stmt_get(st, S_FIND_CONFIG, &s));
  binder b = {s, 0, SQLITE_OK};
  bind_config_key(&b, key, n);
  int rc = b.rc == SQLITE_OK ? sqlite3_step(s) : b.rc;
  if (rc == SQLITE_ROW)
    *config_id = sqlite3_column_int64(s, 0);
  else if (rc == SQLITE_DONE)
    *config_id = 0;
  else
    r = db_fail(st, "looking up a config");
  sqlite3_reset(s);
  return r;
}

tune_result tune_store_get_samples(tune_store *st, int64_t config_id, int *trials, int *world,
                                  int64_t **elapsed_ns, int64_t **delay_ns) {
  sqlite3_stmt *s;
  tune_result r = tune_ok;
  int64_t *el = NULL, *de = NULL;
  size_t n = 0, want = 0;
  int rc;
  if (st == NULL || trials == NULL || world == NULL || elapsed_ns == NULL || delay_ns == NULL)
    return arg_fail(st, "get_samples: no output");
  TUNE_CHECK(stmt_get(st, S_GET_SAMPLES, &s));
  if (sqlite3_bind_int64(s, 1, config_id) != SQLITE_OK) return db_fail(st, "reading samples");
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    if (el == NULL) {
      *trials = sqlite3_column_int(s, 0);
      *world = sqlite3_column_int(s, 1);
      want = (size_t)*trials * (size_t)*world;
      el = malloc((want ? want : 1) * sizeof(*el));
      de = malloc((want ? want : 1) * sizeof(*de));
      if (el == NULL || de == NULL) {
        r = tune_err_system;
        break;
      }
    }
    /* Rows come in (trial, rank) order; anything else is a damaged config. */
    if (n >= want || sqlite3_column_int64(s, 2) != (int64_t)(n / (size_t)*world) ||
        sqlite3_column_int64(s, 3) != (int64_t)(n % (size_t)*world)) {
      tune_error("%s: config %" PRId64 " has samples out of order", st->path, config_id);
      r = tune_err_db;
      break;
    }
    el[n] = sqlite3_column_int64(s, 4);
    de[n] = sqlite3_column_int64(s, 5);
    n++;
  }
  if (r == tune_ok && rc != SQLITE_DONE) r = db_fail(st, "reading samples");
  if (r == tune_ok && (el == NULL || n != want)) {
    tune_error("%s: config %" PRId64 " has %zu of %zu samples", st->path, config_id, n, want);
    r = tune_err_db;
  }
  sqlite3_reset(s);
  if (r != tune_ok) {
    free(el);
    free(de);
    return r;
  }
  *elapsed_ns = el;
  *delay_ns = de;
  return tune_ok;
}

/* A time column t of a sane row: an integer in 0..TUNE_STORE_MAX_NS. */
#define SANE_NS(t) "(typeof(" t ") = 'integer' AND " t " BETWEEN 0 AND 3600000000000)"
_Static_assert(TUNE_STORE_MAX_NS == INT64_C(3600000000000), "SANE_NS repeats TUNE_STORE_MAX_NS");

/* The first row of sql (bound: ?1 = run_id) formatted by fmt from its
 * columns 0..5 as text, into one tune_error() line; *found if there was one. */
static tune_result first_bad(tune_store *st, const char *sql, int64_t run_id, const char *fmt,
                             int *found) {
  sqlite3_stmt *s = NULL;
  tune_result r = tune_ok;
  *found = 0;
  if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK ||
      sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK) {
    r = db_fail(st, "checking stored samples");
    goto exit;
  }
  int rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) {
    const char *c[6];
    for (int i = 0; i < 6; i++)
      c[i] = sqlite3_column_text(s, i) ? (const char *)sqlite3_column_text(s, i) : "NULL";
    tune_error(fmt, st->path, c[0], c[1], c[2], c[3], c[4], c[5]);
    *found = 1;
    r = tune_err_db;
  } else if (rc != SQLITE_DONE) {
    r = db_fail(st, "checking stored samples");
  }
exit:
  sqlite3_finalize(s);
  return r;
}

/* What a column of a row tune wrote may hold: one of a closed set of names
 * (parse non-NULL: a name it gives back as dc_*_name spells it), an integer
 * in min..max, or (real) a finite number in min..max. */
typedef struct {
  const char *col;
  int (*parse)(const char *);
  int64_t min, max;
  int real;
} field_rule;

static int parse_backend(const char *s) { return strcmp(s, "gpu") == 0 || strcmp(s, "sim") == 0 ? 0 : -1; }

static int parse_kind(const char *s) {
  static const char *const kinds[] = {"before", "sweep", "after", "skew", "verify", "fleet", "bench"};
  for (size_t i = 0; i < NNAMES(kinds); i++)
    if (strcmp(s, kinds[i]) == 0) return 0;
  return -1;
}

static int parse_impl(const char *s) { return tune_impl_find(s) ? 0 : -1; }

/* A machine's topology as dc_topo_name spells it, or a fleet run's "fleet". */
static int parse_topo(const char *s) {
  int v = dc_topo_parse(s);
  return strcmp(s, "fleet") == 0 || (v >= 0 && strcmp(dc_topo_name((dc_topo)v), s) == 0) ? 0 : -1;
}

/* The canonical name of v for parse, NULL where it has none. */
static const char *field_name(int (*parse)(const char *), int v) {
  return parse == dc_op_parse      ? dc_op_name((dc_op)v)
         : parse == dc_dtype_parse ? dc_dtype_name((dc_dtype)v)
         : parse == dc_path_parse  ? dc_path_name((dc_path)v)
         : parse == dc_align_parse ? dc_align_name((dc_align)v)
         : parse == dc_mode_parse  ? dc_mode_name((dc_mode)v)
                                   : NULL;
}

static int field_ok(sqlite3_stmt *s, int i, const field_rule *f) {
  int type = sqlite3_column_type(s, i);
  if (f->real) {
    double v = sqlite3_column_double(s, i);
    return (type == SQLITE_FLOAT || type == SQLITE_INTEGER) && isfinite(v) && v >= (double)f->min &&
           v <= (double)f->max;
  }
  if (f->parse == NULL)
    return type == SQLITE_INTEGER && sqlite3_column_int64(s, i) >= f->min &&
           sqlite3_column_int64(s, i) <= f->max;
  const char *t = (const char *)sqlite3_column_text(s, i);
  int v = type == SQLITE_TEXT && t ? f->parse(t) : -1;
  const char *name = v < 0 ? NULL : field_name(f->parse, v);
  return v >= 0 && (name == NULL || strcmp(name, t) == 0);
}

/* "run R" for a runs row, "run R, TABLE row N" for another table's. */
static void row_where(char *buf, size_t len, const char *table, sqlite3_stmt *s) {
  long long id = sqlite3_column_int64(s, 0), run = sqlite3_column_int64(s, 1);
  if (strcmp(table, "runs") == 0)
    snprintf(buf, len, "run %lld", run);
  else
    snprintf(buf, len, "run %lld, %s row %lld", run, table, id);
}

/* Whether the database has table, and its column col (NULL: any): one of
 * an older tune (a version before the migration that added it) may not. */
static int column_here(tune_store *st, const char *table, const char *col) {
  return sqlite3_table_column_metadata(st->db, "main", table, col, NULL, NULL, NULL, NULL, NULL) ==
         SQLITE_OK;
}

/* Prepare into *s "SELECT rowid, run_col<cols> FROM table WHERE run_col =
 * ?1<and> ORDER BY rowid", bound to run_id (0: every run's rows); *s NULL
 * where the database has no such table (one of an older tune). */
static tune_result rows_select(tune_store *st, const char *cols, const char *table,
                               const char *run_col, const char *and, int64_t run_id,
                               sqlite3_stmt **s) {
  *s = NULL;
  if (!column_here(st, table, NULL)) return tune_ok; /* an older tune's database: no rows */
  /* A run's rows by "run_col = ?1" (an index, where its table has one). */
  char *sql = sqlite3_mprintf("SELECT rowid, %s%s FROM %s WHERE %s%s%s ORDER BY rowid", run_col, cols,
                              table, run_id ? run_col : "?1 = 0", run_id ? " = ?1" : "", and);
  if (sql == NULL) return arg_fail(st, "checking stored rows: out of memory");
  int bad = sqlite3_prepare_v2(st->db, sql, -1, s, NULL) != SQLITE_OK ||
            sqlite3_bind_int64(*s, 1, run_id) != SQLITE_OK;
  sqlite3_free(sql);
  if (!bad) return tune_ok;
  tune_result r = db_fail(st, "checking stored rows");
  sqlite3_finalize(*s);
  *s = NULL;
  return r;
}

/* The first row of table (of run_id; 0: every run) whose column breaks its
 * rule, named in one tune_error() line; tune_err_db then. */
static tune_result first_bad_field(tune_store *st, const char *table, const char *run_col,
                                   const field_rule *f, size_t nf, int64_t run_id) {
  sqlite3_stmt *s = NULL;
  const field_rule *use[32]; /* the rules of the columns this database has */
  size_t nu = 0;
  char *cols = sqlite3_mprintf("%s", "");
  for (size_t i = 0; cols && i < nf && nu < NNAMES(use); i++) {
    if (!column_here(st, table, f[i].col)) continue;
    use[nu++] = &f[i];
    char *more = sqlite3_mprintf("%s, %s", cols, f[i].col);
    sqlite3_free(cols);
    cols = more;
  }
  tune_result r = cols ? rows_select(st, cols, table, run_col, "", run_id, &s)
                       : arg_fail(st, "checking stored rows: out of memory");
  sqlite3_free(cols);
  int rc = SQLITE_DONE;
  while (r == tune_ok && s && (rc = sqlite3_step(s)) == SQLITE_ROW)
    for (size_t i = 0; i < nu && r == tune_ok; i++) {
      const field_rule *u = use[i];
      if (field_ok(s, 2 + (int)i, u)) continue;
      int text = sqlite3_column_type(s, 2 + (int)i) == SQLITE_TEXT;
      const char *v = (const char *)sqlite3_column_text(s, 2 + (int)i), *q = text ? "'" : "";
      char where[96], range[96] = "a value tune writes";
      row_where(where, sizeof(where), table, s);
      if (u->parse == NULL)
        snprintf(range, sizeof(range), "%s from %lld to %lld", u->real ? "a number" : "an integer",
                 (long long)u->min, (long long)u->max);
      tune_error("%s: %s: %s %s%s%s is not %s; the database was changed outside tune", st->path,
                 where, u->col, q, v ? v : "NULL", q, range);
      r = tune_err_db;
    }
  if (r == tune_ok && rc != SQLITE_DONE) r = db_fail(st, "checking stored rows");
  sqlite3_finalize(s);
  return r;
}

/* What a row of a table must hold beside its own fields: bad, an SQL
 * condition true of a row tune never writes, on column col (skipped where
 * an older tune's database lacks it); what, the reason, as said. */
typedef struct {
  const char *table, *run_col, *col, *bad, *what;
} row_rule;

/* The first row of run_id (0: every run) that a row_rule refuses, named
 * in one tune_error() line; tune_err_db then. */
static tune_result first_bad_row(tune_store *st, const row_rule *x, int64_t run_id) {
  sqlite3_stmt *s = NULL;
  if (!column_here(st, x->table, x->col)) return tune_ok;
  char *and = sqlite3_mprintf(" AND (%s)", x->bad);
  tune_result r = and ? rows_select(st, "", x->table, x->run_col, and, run_id, &s)
                      : arg_fail(st, "checking stored rows: out of memory");
  sqlite3_free(and);
  int rc = r == tune_ok && s ? sqlite3_step(s) : SQLITE_DONE;
  if (rc == SQLITE_ROW) {
    char where[96];
    row_where(where, sizeof(where), x->table, s);
    tune_error("%s: %s: %s; the database was changed outside tune", st->path, where, x->what);
    r = tune_err_db;
  } else if (r == tune_ok && rc != SQLITE_DONE) {
    r = db_fail(st, "checking stored rows");
  }
  sqlite3_finalize(s);
  return r;
}

/* Each header of run_id (0: of every run) read as a table, which
 * tune_store_get_header_rows refuses unless tune could have written it. */
static tune_result check_header_tables(tune_store *st, int64_t run_id) {
  sqlite3_stmt *s = NULL;
  TUNE_CHECK(rows_select(st, "", "headers", "run_id", "", run_id, &s));
  tune_result r = tune_ok;
  int rc = SQLITE_DONE;
  while (r == tune_ok && s && (rc = sqlite3_step(s)) == SQLITE_ROW) {
    dc_threshold_row *t = NULL;
    size_t n = 0;
    r = tune_store_get_header_rows(st, sqlite3_column_int64(s, 0), &t, &n);
    free(t);
  }
  if (r == tune_ok && rc != SQLITE_DONE) r = db_fail(st, "checking stored headers");
  sqlite3_finalize(s);
  return r;
}

/* The columns that name a row's group (op, dtype, world, align, mode). */
#define GROUP_RULES                                                                          \
  {"op", dc_op_parse, 0, 0, 0}, {"dtype", dc_dtype_parse, 0, 0, 0}, {"world", NULL, 1, BIG, 0}, \
      {"align", dc_align_parse, 0, 0, 0}, {"mode", dc_mode_parse, 0, 0, 0}
#define NS_RULE(c) {c, NULL, 0, TUNE_STORE_MAX_NS, 1}

/* The rules of tune_store_check_rows: per table, its fields', then rows'. */
enum { BIG = 1 << 20 };
static const field_rule runs_rules[] = {
    {"kind", parse_kind, 0, 0, 0},       {"gpu_count", NULL, 0, BIG, 0}, /* 0: merge's fleet run */
    {"sm", NULL, 0, BIG, 0},             {"topo", parse_topo, 0, 0, 0},
    {"backend", parse_backend, 0, 0, 0}, {"seed", NULL, INT64_MIN, INT64_MAX, 0},
};
static const field_rule configs_rules[] = {
    GROUP_RULES,
    {"impl", parse_impl, 0, 0, 0},
    {"path", dc_path_parse, 0, 0, 0},
    {"chosen_path", dc_path_parse, 0, 0, 0},
    {"bytes", NULL, 1, INT64_MAX, 0},
    {"in_offset", NULL, 0, BIG, 0},
    {"out_offset", NULL, 0, BIG, 0},
    {"skew_ns", NULL, 0, TUNE_STORE_MAX_NS, 0},
    {"skew_rank", NULL, -2, BIG, 0},
    {"trials", NULL, 1, INT32_MAX, 0},
    {"warmup", NULL, 0, INT32_MAX, 0},
    {"wrong_elems", NULL, 0, INT64_MAX, 0},
    NS_RULE("median_ns"),
    NS_RULE("p10_ns"),
    NS_RULE("p90_ns"),
};
static const field_rule crossovers_rules[] = {
    GROUP_RULES,
    {"skew_ns", NULL, 0, TUNE_STORE_MAX_NS, 0},
    {"path_below", dc_path_parse, 0, 0, 0},
    {"path_above", dc_path_parse, 0, 0, 0},
    {"bytes", NULL, 1, INT64_MAX, 0},
    {"lo_bytes", NULL, 1, INT64_MAX, 0},
    {"hi_bytes", NULL, 1, INT64_MAX, 0},
    {"diff_ns", NULL, -INT64_MAX, INT64_MAX, 1},
    {"ci_lo_ns", NULL, -INT64_MAX, INT64_MAX, 1},
    {"ci_hi_ns", NULL, -INT64_MAX, INT64_MAX, 1},
    {"confidence", NULL, 0, 1, 1},
    {"decided", NULL, 0, 1, 0},
};
static const field_rule regret_rules[] = {
    GROUP_RULES,
    {"bytes", NULL, 1, INT64_MAX, 0},
    {"auto_path", dc_path_parse, 0, 0, 0},
    {"best_path", dc_path_parse, 0, 0, 0},
    NS_RULE("auto_ns"),
    NS_RULE("best_ns"),
    {"regret", NULL, 0, TUNE_STORE_MAX_NS, 1},
};
static const field_rule pairs_rules[] = {
    GROUP_RULES,
    {"impl", parse_impl, 0, 0, 0},
    {"bytes", NULL, 1, INT64_MAX, 0},
    {"in_offset", NULL, 0, BIG, 0},
    {"out_offset", NULL, 0, BIG, 0},
    {"new_path", dc_path_parse, 0, 0, 0},
    {"prev_path", dc_path_parse, 0, 0, 0},
    {"shared", NULL, 0, 1, 0},
    {"trials", NULL, 1, INT32_MAX, 0},
    NS_RULE("new_ns"),
    NS_RULE("prev_ns"),
    {"ratio", NULL, 0, TUNE_STORE_MAX_NS, 1},
    {"ci_lo", NULL, 0, TUNE_STORE_MAX_NS, 1},
    {"ci_hi", NULL, 0, TUNE_STORE_MAX_NS, 1},
    {"confidence", NULL, 0, 1, 1},
};
static const field_rule headers_rules[] = {
    {"sim", NULL, 0, 1, 0},
    {"installed", NULL, 0, 1, 0},
};
static const struct {
  const char *table, *run_col;
  const field_rule *f;
  size_t n;
} check_fields[] = {
    {"runs", "id", runs_rules, NNAMES(runs_rules)},
    {"configs", "run_id", configs_rules, NNAMES(configs_rules)},
    {"crossovers", "run_id", crossovers_rules, NNAMES(crossovers_rules)},
    {"regret", "run_id", regret_rules, NNAMES(regret_rules)},
    {"pairs", "run_id", pairs_rules, NNAMES(pairs_rules)},
    {"headers", "run_id", headers_rules, NNAMES(headers_rules)},
};
static const row_rule check_row_rules[] = {
    {"runs", "id", "parent_run",
     "parent_run IS NOT NULL AND (parent_run IS id OR parent_run NOT IN (SELECT id FROM runs))",
     "parent_run names no other run"},
    {"runs", "id", "parent_run",
     /* an after run's parent is its before run (an older tune: its sweep) */
     "parent_run IS NOT NULL AND NOT EXISTS (SELECT 1 FROM runs p WHERE p.id = runs.parent_run"
     " AND (p.kind = 'before' AND runs.kind IN ('sweep', 'after') OR"
     " p.kind = 'sweep' AND runs.kind = 'after'))",
     "it has a parent_run but is not the sweep or after run of its job"},
    {"runs", "id", "topo", "(topo = 'fleet') <> (kind = 'fleet')",
     "its topo and kind disagree (topo 'fleet' is a fleet run's alone)"},
    {"configs", "run_id", "skew_rank", "skew_rank >= world", "skew_rank is not a rank of its world"},
    {"crossovers", "run_id", "ci_lo_ns", "ci_lo_ns > ci_hi_ns", "its confidence interval is reversed"},
    {"crossovers", "run_id", "bytes", "bytes < lo_bytes OR bytes > hi_bytes",
     "its threshold lies outside its bracket (lo_bytes..hi_bytes)"},
    {"regret", "run_id", "bytes",
     "rowid NOT IN (SELECT min(rowid) FROM regret GROUP BY run_id, op, dtype, world, align, "
     "mode, bytes)",
     "it repeats an earlier row's size"},
    {"pairs", "run_id", "new_config",
     "new_config NOT IN (SELECT id FROM configs) OR prev_config NOT IN (SELECT id FROM configs)",
     "it names a config the database does not hold"},
    {"pairs", "run_id", "new_config",
     "rowid NOT IN (SELECT min(rowid) FROM pairs GROUP BY run_id, impl, op, dtype, world, "
     "bytes, in_offset, out_offset, align, mode)",
     "it repeats an earlier row's configuration"},
};

tune_result tune_store_check_rows(tune_store *st, int64_t run_id) {
  if (st == NULL) return arg_fail(st, "check_rows: no store");
  for (size_t i = 0; i < NNAMES(check_fields); i++)
    TUNE_CHECK(first_bad_field(st, check_fields[i].table, check_fields[i].run_col, check_fields[i].f,
                               check_fields[i].n, run_id));
  for (size_t i = 0; i < NNAMES(check_row_rules); i++)
    TUNE_CHECK(first_bad_row(st, &check_row_rules[i], run_id));
  return check_header_tables(st, run_id);
}

tune_result tune_store_check_run(tune_store *st, int64_t run_id) {
  /* Each in two forms, the run's (its configs found by index) and every run's. */
#define SAMPLES_SQL(run)                                                                                  \
  "SELECT c.run_id, s.config_id, quote(s.trial), quote(s.rank), quote(s.elapsed_ns), quote(s.delay_ns)" \
  " FROM configs c JOIN samples s ON s.config_id = c.id WHERE " run " AND NOT ("                        \
  "typeof(s.trial) = 'integer' AND typeof(s.rank) = 'integer' AND " SANE_NS("s.elapsed_ns") " AND "     \
      SANE_NS("s.delay_ns") ") ORDER BY c.run_id, s.config_id, s.trial, s.rank LIMIT 1"
#define CONFIGS_SQL(run)                                                                         \
  "SELECT run_id, id, quote(trials), quote(world), n, quote(median_ns) FROM (SELECT c.*,"      \
  " (SELECT count(*) FROM samples s WHERE s.config_id = c.id AND s.trial BETWEEN 0 AND "       \
  "c.trials - 1 AND s.rank BETWEEN 0 AND c.world - 1) AS n,"                                   \
  " (SELECT count(*) FROM samples s WHERE s.config_id = c.id) AS m FROM configs c WHERE " run \
  ") WHERE NOT (n = trials * world AND m = n) ORDER BY run_id, id LIMIT 1"
  static const char *const samples_sql[2] = {SAMPLES_SQL("?1 = 0"), SAMPLES_SQL("c.run_id = ?1")};
  static const char *const configs_sql[2] = {CONFIGS_SQL("?1 = 0"), CONFIGS_SQL("c.run_id = ?1")};
#undef SAMPLES_SQL
#undef CONFIGS_SQL
  int found;
  TUNE_CHECK(tune_store_check_rows(st, run_id));
  tune_result r = first_bad(
      st, samples_sql[run_id != 0], run_id,
      "%s: run %s config %s trial %s rank %s: elapsed_ns %s, delay_ns %s: a stored time must be "
      "an integer from 0 to 3600 s; the database was changed outside tune",
      &found);
  if (found || r != tune_ok) return r;
  return first_bad(st, configs_sql[run_id != 0], run_id,
                   "%s: run %s config %s (trials %s, world %s) has %s samples in range and median "
                   "%s: its samples "
                   "do not match its row; the database was changed outside tune",
                   &found);
}

/* The job locks this process holds (a fleet's rank 0 holds the fleet's and
 * its node's): each one's descriptor, its file's name, whether this process
 * made it, and (a file that was there) the line it held before ours. */
#define JOB_LOCKS_MAX 4
typedef struct {
  int fd, made, readonly; /* readonly: another user's file, held for reading */
  char name[PATH_MAX + 8];
  char prev[300];
} job_lock_t;
static job_lock_t job_locks[JOB_LOCKS_MAX];
static int job_nlocks;

/* Whether the n bytes of text (NUL-terminated) are empty or the one line
 * tune_store_lock_job writes into its lock: "pid N on host H". */
static int lock_text_ours(const char *text, size_t n) {
  if (n == 0) return 1;
  size_t digits = strncmp(text, "pid ", 4) == 0 ? strspn(text + 4, "0123456789") : 0;
  const char *host = text + 4 + digits + 9;
  return digits > 0 && strlen(text) == n && strncmp(text + 4 + digits, " on host ", 9) == 0 &&
         host < text + n - 1 && strchr(host, '\n') == text + n - 1;
}

/* An existing file at the lock's name (fd, locked by this process) is used
 * as the lock only where it is one: a regular file with one name, empty or
 * holding a holder line (lock_text_ours). Anything else -- a file of
 * another program (--db Cargo meets Cargo.lock), a hard link, a FIFO -- is
 * left alone: tune_err_arg naming it. (A symbolic link is refused at open.) */
static tune_result lock_vet(int fd, const char *name, const char *db_path) {
  char text[400];
  struct stat sb;
  ssize_t n = -1;
  const char *why = "cannot read it";
  if (fstat(fd, &sb) != 0)
    why = strerror(errno);
  else if (!S_ISREG(sb.st_mode))
    why = "not a regular file";
  else if (sb.st_nlink != 1)
    why = "it has more than one name";
  else if (sb.st_size >= (off_t)sizeof(text))
    why = "it holds something else";
  else if ((n = pread(fd, text, sizeof(text) - 1, 0)) >= 0)
    why = "it holds something else";
  if (n >= 0) {
    text[n] = '\0';
    if (lock_text_ours(text, (size_t)n)) return tune_ok;
  }
  tune_error(
      "%s is not a job lock tune wrote (%s), and the job lock of %s goes there; tune leaves "
      "it alone: move it, or give the database another name",
      name, why, db_path);
  return tune_err_arg;
}

/* Open the lock file, never through a symbolic link: made here (*made = 1)
 * or the one there. -1 with open's errno; -2: it was there and then was
 * not (removed by a refused job, tune_store_unlock_job): try again. */
static int lock_open(const char *name, int *made, int *readonly) {
  /* Close-on-exec: a child (make, gnuplot, a helper of theirs) left
   * running would hold the flock on after tune has ended. */
  int fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  *made = fd >= 0;
  *readonly = 0;
  if (fd >= 0 || errno != EEXIST) return fd;
  fd = open(name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  /* Another user's lock, left by a job of theirs: held for reading, which
   * a job of theirs, writing, cannot take meanwhile. */
  if (fd < 0 && errno == EACCES) {
    fd = open(name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    *readonly = fd >= 0;
  }
  return fd < 0 && errno == ENOENT ? -2 : fd;
}

/* The name of db_path's job lock into name (len bytes). The lock goes
 * beside the file the path reaches, as SQLite's -wal does: a link to the
 * database, or another spelling of its path, meets it. */
static tune_result lock_name(const char *db_path, char *name, size_t len) {
  char target[PATH_MAX];
  if (snprintf(name, len, "%s.lock", tune_path_target(db_path, target) == 0 ? target : db_path) >= (int)len) {
    tune_error("%s: path too long", db_path);
    return tune_err_arg;
  }
  return tune_ok;
}

/* Whether this process holds the lock at name already (*held), and room
 * for one more where it does not (what: for the message). */
static tune_result lock_held(const char *name, const char *what, int *held) {
  *held = 0;
  for (int i = 0; i < job_nlocks; i++) *held |= strcmp(job_locks[i].name, name) == 0;
  if (!*held && job_nlocks == JOB_LOCKS_MAX) {
    tune_error("%s: this process holds %d job locks already", what, JOB_LOCKS_MAX);
    return tune_err_internal;
  }
  return tune_ok;
}

/* The lock at name (open as fd, closed here) is held by another process:
 * say so, naming it. The holder line names the last writer; a reader
 * (another user's job) writes none, so the lock's own holder is asked. */
static tune_result lock_refused(int fd, const char *name, const char *what, int readonly, int err) {
  char holder[300], line[320];
  struct flock who = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  ssize_t n = err == EACCES || err == EAGAIN ? pread(fd, holder, sizeof(holder) - 1, 0) : -1;
  long pid = fcntl(fd, F_GETLK, &who) == 0 && who.l_type != F_UNLCK ? (long)who.l_pid : 0;
  close(fd);
  if (n < 0) {
    tune_error("cannot take the job lock %s: %s", name, strerror(err));
    return tune_err_system;
  }
  holder[n] = '\0';
  holder[strcspn(holder, "\n")] = '\0';
  long named_pid = strncmp(holder, "pid ", 4) == 0 ? strtol(holder + 4, NULL, 10) : 0;
  if (pid != 0 && pid != named_pid)
    snprintf(line, sizeof(line), "pid %ld, another user's", pid);
  else if (pid == 0 && named_pid != 0 && readonly)
    snprintf(line, sizeof(line), "another user's");
  else
    snprintf(line, sizeof(line), "%s", holder[0] ? holder : "holder unknown");
  tune_error("%s is in use by another tune job (%s); wait for it to finish or stop it", what, line);
  return tune_err_arg;
}

/* Take the lock at name (what: the database, or the outputs, it guards,
 * for messages); *taken as tune_store_lock_job's. */
static tune_result lock_take(const char *name, const char *what, int *taken) {
  char holder[300] = "";
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  job_lock_t *lk = &job_locks[job_nlocks]; /* lock_name: there is room */
  struct stat held, named;
  int tries = 0, fd, readonly;
again:
  /* The retries are for a lock file removed by a refused job
   * (tune_store_unlock_job). */
  if (tries++ == 8) {
    tune_error("cannot take the job lock %s: it is there and then it is not", name);
    return tune_err_system;
  }
  fd = lock_open(name, &lk->made, &readonly);
  if (fd == -2) goto again;
  if (fd < 0 && errno == ELOOP) {
    tune_error(
        "%s is a symbolic link, and the job lock of %s goes there; tune leaves it alone: "
        "remove it, or give the database another name",
        name, what);
    return tune_err_arg;
  }
  /* A lock file there that this user cannot even read (another user's,
   * mode 0600) cannot tell whether a job of theirs runs: refused. */
  struct stat there;
  if (fd < 0 && errno == EACCES && lstat(name, &there) == 0) {
    tune_error("cannot take the job lock %s: another user's, unreadable to you: a job of theirs may be writing"
               " %s; ask them, or have the lock removed once none runs",
               name, what);
    return tune_err_arg;
  }
  /* A folder that cannot hold the lock cannot hold the database's -wal
   * either: opening the store says why, in its words. */
  if (fd < 0 && (errno == ENOENT || errno == EACCES || errno == EROFS)) return tune_ok;
  if (fd < 0) {
    tune_error("cannot take the job lock %s: %s", name, strerror(errno));
    return tune_err_system;
  }
  /* An fcntl lock (a write lock; a read lock on another user's file, which
   * keeps out a job of theirs) and an flock, exclusive on any file this
   * user can open: two other users' jobs keep each other out by it. */
  fl.l_type = readonly ? F_RDLCK : F_WRLCK;
  int got = fcntl(fd, F_SETLK, &fl) == 0, err = errno;
  if (got && flock(fd, LOCK_EX | LOCK_NB) != 0) {
    got = errno != EWOULDBLOCK; /* a file system without flock: the fcntl lock alone */
    err = EAGAIN;
  }
  if (!got) return lock_refused(fd, name, what, readonly, err);
  /* Locked after it was removed: no lock. */
  if (fstat(fd, &held) == 0 && (stat(name, &named) != 0 || held.st_ino != named.st_ino || held.st_dev != named.st_dev)) {
    close(fd);
    goto again;
  }
  /* Vetted under the lock: a tune job writes its holder line under it. */
  if (!lk->made && lock_vet(fd, name, what) != tune_ok) {
    close(fd);
    return tune_err_arg;
  }
  lk->prev[0] = '\0';
  if (!readonly) {
    int len = snprintf(holder, sizeof(holder), "pid %ld on host %s\n", (long)getpid(), tune_hostname());
    ssize_t had = lk->made ? 0 : pread(fd, lk->prev, sizeof(lk->prev) - 1, 0);
    lk->prev[had > 0 ? had : 0] = '\0';
    if (ftruncate(fd, 0) != 0 || pwrite(fd, holder, (size_t)len, 0) != len)
      TUNE_WARN(TUNE_DB, "%s: cannot record the job lock's holder: %s", name, strerror(errno));
  }
  lk->fd = fd;
  lk->readonly = readonly;
  snprintf(lk->name, sizeof(lk->name), "%s", name);
  job_nlocks++;
  *taken = 1;
  return tune_ok;
}

tune_result tune_store_lock_job(const char *db_path, int *taken) {
  char name[sizeof(job_locks[0].name)];
  int mine, exists;
  *taken = 0;
  TUNE_CHECK(lock_name(db_path, name, sizeof(name)));
  TUNE_CHECK(lock_held(name, db_path, &mine));
  if (mine) return tune_ok;
  /* A database tune would refuse gets no lock file beside it either. */
  TUNE_CHECK(store_check_name(db_path, 0, &exists));
  return lock_take(name, db_path, taken);
}

tune_result tune_store_lock_file(const char *name, const char *what, int *taken) {
  int mine;
  *taken = 0;
  TUNE_CHECK(lock_held(name, name, &mine));
  return mine ? tune_ok : lock_take(name, what, taken);
}

int tune_store_job_locks(void) { return job_nlocks; }

void tune_store_unlock_job(void) {
  if (job_nlocks == 0) return;
  job_lock_t *lk = &job_locks[--job_nlocks];
  /* Unlinked while held: a process that opened it meanwhile failed to lock
   * it and said so; one that comes later makes a new one. A file that was
   * there gets its line back: a refused job leaves it as it found it. */
  if (lk->made)
    unlink(lk->name);
  else if (!lk->readonly &&
           (ftruncate(lk->fd, 0) != 0 || pwrite(lk->fd, lk->prev, strlen(lk->prev), 0) != (ssize_t)strlen(lk->prev)))
    TUNE_WARN(TUNE_DB, "%s: cannot put back the line it held: %s", lk->name, strerror(errno));
  close(lk->fd);
  lk->name[0] = '\0';
}

/* ---- crossovers, headers, regret, skew -------------------------------------- */

/* The columns a crossovers, regret or pairs row begins with (their
 * statements list them first, in this order): run, op, dtype, world,
 * align, mode and the row's two paths. */
typedef struct {
  int64_t run_id;
  dc_op op;
  dc_dtype dtype;
  int world;
  dc_align align;
  dc_mode mode;
  dc_path path[2];
} row_key;

/* Check k's names (field: their names in messages -- op, dtype, align,
 * mode, then the two paths') and bind k's columns. */
static tune_result bind_row_key(const tune_store *st, binder *b, const char *const field[6],
                                const row_key *k) {
  const named n[] = {
      {field[0], dc_op_name(k->op)},        {field[1], dc_dtype_name(k->dtype)},
      {field[2], dc_align_name(k->align)},  {field[3], dc_mode_name(k->mode)},
      {field[4], dc_path_name(k->path[0])}, {field[5], dc_path_name(k->path[1])},
  };
  TUNE_CHECK(check_names(st, n, NNAMES(n)));
  bind_i64(b, k->run_id);
  bind_text(b, n[0].name);
  bind_text(b, n[1].name);
  bind_i64(b, k->world);
  bind_text(b, n[2].name);
  bind_text(b, n[3].name);
  bind_text(b, n[4].name);
  bind_text(b, n[5].name);
  return tune_ok;
}

tune_result tune_store_put_crossover(tune_store *st, const tune_crossover_row *x) {
  static const char *const field[6] = {"crossover op",   "crossover dtype", "crossover align",
                                       "crossover mode", "crossover below", "crossover above"};
  sqlite3_stmt *s;
  TUNE_CHECK(need_writable(st));
  if (x == NULL) return arg_fail(st, "put_crossover: no row");
  TUNE_CHECK(check_u64(st, x->bytes, "crossover bytes"));
  TUNE_CHECK(check_u64(st, x->lo_bytes, "crossover lo_bytes"));
  TUNE_CHECK(check_u64(st, x->hi_bytes, "crossover hi_bytes"));
  const row_key k = {x->run_id, x->op, x->dtype, x->world, x->align, x->mode, {x->below, x->above}};
  TUNE_CHECK(stmt_get(st, S_CROSSOVER, &s));
  binder b = {s, 0, SQLITE_OK};
  TUNE_CHECK(bind_row_key(st, &b, field, &k));
  bind_i64(&b, x->skew_ns);
  bind_i64(&b, (int64_t)x->bytes);
  bind_i64(&b, (int64_t)x->lo_bytes);
  bind_i64(&b, (int64_t)x->hi_bytes);
  bind_f64(&b, x->diff_ns);
  bind_f64(&b, x->ci_lo_ns);
  bind_f64(&b, x->ci_hi_ns);
  bind_f64(&b, x->confidence);
  bind_i64(&b, x->decided != 0);
  return stmt_run(st, s, b.rc, "inserting a crossover");
}

static tune_result put_header_row(tune_store *st, sqlite3_stmt *s, int64_t header_id, size_t i,
                                  const dc_threshold_row *row) {
  const named n[] = {
      {"header row topo", dc_topo_name(row->topo)},
      {"header row op", dc_op_name(row->op)},
      {"header row dtype", dc_dtype_name(row->dtype)},
      {"header row align", dc_align_name(row->align)},
      {"header row mode", dc_mode_name(row->mode)},
  };
  TUNE_CHECK(check_names(st, n, NNAMES(n)));
  if (row->nseg < 1 || row->nseg > DC_MAX_SEGMENTS)
    return arg_fail(st, "put_header: a row needs 1..DC_MAX_SEGMENTS segments");
  for (int j = 0; j < row->nseg; j++) {
    const char *path = dc_path_name(row->seg[j].path);
    uint64_t max = row->seg[j].max_bytes;
    if (path == NULL) return arg_fail(st, "put_header: invalid segment path");
    if (max != DC_BYTES_MAX) TUNE_CHECK(check_u64(st, max, "header segment max_bytes"));
    binder b = {s, 0, SQLITE_OK};
    bind_i64(&b, header_id);
    bind_i64(&b, (int64_t)i);
    bind_i64(&b, j);
    bind_i64(&b, row->sm);
    bind_i64(&b, row->world);
    for (size_t k = 0; k < NNAMES(n); k++) bind_text(&b, n[k].name);
    bind_i64(&b, row->skew_ns);
    bind_i64(&b, max == DC_BYTES_MAX ? -1 : (int64_t)max);
    bind_text(&b, path);
    TUNE_CHECK(stmt_run(st, s, b.rc, "inserting a header row"));
  }
  return tune_ok;
}

tune_result tune_store_put_header(tune_store *st, int64_t run_id, const char *path, int sim,
                                  int installed, const char *content, const dc_threshold_row *rows,
                                  size_t nrows, int64_t *header_id) {
  char now[32], sha[65];
  sqlite3_stmt *s, *rs;
  int own;
  int64_t id = 0;
  tune_result r;
  TUNE_CHECK(need_writable(st));
  if (path == NULL || content == NULL || (rows == NULL && nrows > 0))
    return arg_fail(st, "put_header: missing path, content or rows");
  /* What tune_store_get_header_rows would refuse is not written. */
  char why[160];
  if (nrows && dc_table_check(rows, nrows, why, sizeof(why)) != 0) {
    tune_error("%s: a header of run %lld is not a table: %s", st->path, (long long)run_id, why);
    return tune_err_arg;
  }
  TUNE_CHECK(stmt_get(st, S_HEADER, &s));
  TUNE_CHECK(stmt_get(st, S_HEADER_ROW, &rs));
  tune_utc_iso(now, sizeof(now));
  sha256_hex(content, strlen(content), sha);
  TUNE_CHECK(tx_begin(st, &own));
  binder b = {s, 0, SQLITE_OK};
  bind_i64(&b, run_id);
  bind_text(&b, now);
  bind_text(&b, path);
  bind_text(&b, sha);
  bind_i64(&b, sim != 0);
  bind_i64(&b, installed != 0);
  bind_text(&b, content);
  TUNE_CHECK_GOTO(stmt_run(st, s, b.rc, "inserting a header"), r, exit);
  id = sqlite3_last_insert_rowid(st->db);
  for (size_t i = 0; i < nrows; i++)
    TUNE_CHECK_GOTO(put_header_row(st, rs, id, i, &rows[i]), r, exit);
exit:
  r = tx_end(st, own, r);
  if (r == tune_ok && header_id != NULL) *header_id = id;
  return r;
}

tune_result tune_store_place_header(tune_store *st, int64_t run_id, const char *path, int installed) {
  sqlite3_stmt *s;
  TUNE_CHECK(need_writable(st));
  if (path == NULL) return arg_fail(st, "place_header: no path");
  TUNE_CHECK(stmt_get(st, S_HEADER_PLACE, &s));
  binder b = {s, 0, SQLITE_OK};
  bind_text(&b, path);
  bind_i64(&b, installed != 0);
  bind_i64(&b, run_id);
  TUNE_CHECK(stmt_run(st, s, b.rc, "recording where a header was written"));
  if (sqlite3_changes(st->db) == 0) return arg_fail(st, "place_header: the run has no header");
  return tune_ok;
}

/* Parsers of the names S_GET_HEADER_ROWS returns from column 6 on. */
static int (*const header_row_parsers[])(const char *) = {
    dc_topo_parse, dc_op_parse, dc_dtype_parse, dc_align_parse, dc_mode_parse, dc_path_parse,
};

/* One header_rows row into the growing table; rows arrive ordered by
 * (row_index, seg_index), both dense from 0. */
static tune_result get_header_row(tune_store *st, sqlite3_stmt *s, dc_threshold_row **rows,
                                  size_t *nrows, size_t *cap) {
  /* Columns 0..5 are integers: row_index, seg_index, sm, world, skew_ns,
   * max_bytes (-1: DC_BYTES_MAX), in the range of their fields; the rest is
   * dc_table_check's, as for any table (put_header's too). */
  static const int64_t lo[6] = {0, 0, INT32_MIN, INT32_MIN, INT64_MIN, -1},
                       hi[6] = {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX, INT64_MAX, INT64_MAX};
  int v[NNAMES(header_row_parsers)];
  for (int k = 0; k < 6; k++)
    if (sqlite3_column_type(s, k) != SQLITE_INTEGER || sqlite3_column_int64(s, k) < lo[k] ||
        sqlite3_column_int64(s, k) > hi[k])
      goto corrupt;
  for (size_t k = 0; k < NNAMES(header_row_parsers); k++) {
    const char *name = (const char *)sqlite3_column_text(s, 6 + (int)k);
    if (name == NULL || (v[k] = header_row_parsers[k](name)) < 0) goto corrupt;
  }
  int64_t ri = sqlite3_column_int64(s, 0), si = sqlite3_column_int64(s, 1);
  if (si == 0) {
    if (ri != (int64_t)*nrows) goto corrupt;
    TUNE_CHECK(tune_grow((void **)rows, cap, *nrows, sizeof(**rows), 16));
    dc_threshold_row *nr = &(*rows)[(*nrows)++];
    memset(nr, 0, sizeof(*nr));
    nr->sm = sqlite3_column_int(s, 2);
    nr->world = sqlite3_column_int(s, 3);
    nr->skew_ns = sqlite3_column_int64(s, 4);
    nr->topo = (dc_topo)v[0];
    nr->op = (dc_op)v[1];
    nr->dtype = (dc_dtype)v[2];
    nr->align = (dc_align)v[3];
    nr->mode = (dc_mode)v[4];
  }
  dc_threshold_row *row = *nrows ? &(*rows)[*nrows - 1] : NULL;
  if (row == NULL || ri != (int64_t)*nrows - 1 || si != row->nseg || si >= DC_MAX_SEGMENTS)
    goto corrupt;
  int64_t max = sqlite3_column_int64(s, 5);
  row->seg[row->nseg].max_bytes = max == -1 ? DC_BYTES_MAX : (uint64_t)max;
  row->seg[row->nseg].path = (dc_path)v[5];
  row->nseg++;
  return tune_ok;
corrupt:
  tune_error("%s: header_rows of header %lld: row %lld segment %lld is not one tune writes; the "
             "database was changed outside tune, or by a newer tune",
             st->path, (long long)sqlite3_column_int64(s, 12), (long long)sqlite3_column_int64(s, 0),
             (long long)sqlite3_column_int64(s, 1));
  return tune_err_db;
}

tune_result tune_store_get_header_rows(tune_store *st, int64_t header_id, dc_threshold_row **rows,
                                       size_t *nrows) {
  sqlite3_stmt *s;
  size_t cap = 0;
  int rc;
  tune_result r = tune_ok;
  if (st == NULL || rows == NULL || nrows == NULL)
    return arg_fail(st, "get_header_rows: no output");
  *rows = NULL;
  *nrows = 0;
  TUNE_CHECK(stmt_get(st, S_GET_HEADER_ROWS, &s));
  if (sqlite3_bind_int64(s, 1, header_id) != SQLITE_OK) return db_fail(st, "reading header rows");
  while ((rc = sqlite3_step(s)) == SQLITE_ROW)
    TUNE_CHECK_GOTO(get_header_row(st, s, rows, nrows, &cap), r, fail);
  if (rc != SQLITE_DONE) {
    r = db_fail(st, "reading header rows");
    goto fail;
  }
  /* Each row well formed, a table as tune writes one (dc_table_check). */
  char why[160];
  if (*nrows && dc_table_check(*rows, *nrows, why, sizeof(why)) != 0) {
    tune_error("%s: header %lld is not a table tune writes (%s); the database was changed outside tune",
               st->path, (long long)header_id, why);
    r = tune_err_db;
    goto fail;
  }
  sqlite3_reset(s);
  return tune_ok;
fail:
  sqlite3_reset(s);
  free(*rows);
  *rows = NULL;
  *nrows = 0;
  return r;
}

tune_result tune_store_put_regret(tune_store *st, const tune_regret_row *x) {
  static const char *const field[6] = {"regret op",   "regret dtype",     "regret align",
                                       "regret mode", "regret auto_path", "regret best_path"};
  sqlite3_stmt *s;
  TUNE_CHECK(need_writable(st));
  if (x == NULL) return arg_fail(st, "put_regret: no row");
  TUNE_CHECK(check_u64(st, x->bytes, "regret bytes"));
  if (!(x->best_ns > 0)) return arg_fail(st, "put_regret: best_ns must be > 0");
  const row_key k = {
      x->run_id, x->op, x->dtype, x->world, x->align, x->mode, {x->auto_path, x->best_path}};
  TUNE_CHECK(stmt_get(st, S_REGRET, &s));
  binder b = {s, 0, SQLITE_OK};
  TUNE_CHECK(bind_row_key(st, &b, field, &k));
  bind_i64(&b, (int64_t)x->bytes);
  bind_f64(&b, x->auto_ns);
  bind_f64(&b, x->best_ns);
  bind_f64(&b, x->auto_ns / x->best_ns);
  return stmt_run(st, s, b.rc, "inserting a regret row");
}

tune_result tune_store_put_pair(tune_store *st, const tune_pair_row *x) {
  static const char *const field[6] = {"pair op",   "pair dtype",    "pair align",
                                       "pair mode", "pair new_path", "pair prev_path"};
  sqlite3_stmt *s;
  TUNE_CHECK(need_writable(st));
  if (x == NULL) return arg_fail(st, "put_pair: no row");
  if (x->impl == NULL) return arg_fail(st, "pair impl is missing");
  TUNE_CHECK(check_u64(st, x->bytes, "pair bytes"));
  double ratio = x->new_ns / x->prev_ns;
  if (!(x->new_ns > 0) || !(x->prev_ns > 0) || !(x->ci_lo > 0 && x->ci_lo <= x->ci_hi) ||
      !isfinite(ratio) || !(x->confidence > 0 && x->confidence < 1) || x->trials < 1 ||
      x->new_config <= 0 || x->prev_config <= 0 || (x->shared != 0 && x->shared != 1))
    return arg_fail(st,
                    "put_pair: medians, interval, confidence, trials or config ids out of range");
  const row_key k = {
      x->run_id, x->op, x->dtype, x->world, x->align, x->mode, {x->new_path, x->prev_path}};
  TUNE_CHECK(stmt_get(st, S_PAIR, &s));
  binder b = {s, 0, SQLITE_OK};
  TUNE_CHECK(bind_row_key(st, &b, field, &k));
  bind_text(&b, x->impl);
  bind_i64(&b, (int64_t)x->bytes);
  bind_i64(&b, x->in_offset);
  bind_i64(&b, x->out_offset);
  bind_i64(&b, x->new_config);
  bind_i64(&b, x->prev_config);
  bind_i64(&b, x->shared);
  bind_i64(&b, x->trials);
  bind_f64(&b, x->new_ns);
  bind_f64(&b, x->prev_ns);
  bind_f64(&b, ratio);
  bind_f64(&b, x->ci_lo);
  bind_f64(&b, x->ci_hi);
  bind_f64(&b, x->confidence);
  return stmt_run(st, s, b.rc, "inserting a pair row");
}

/* The names of a skew row's op, dtype and mode, checked; its sizes checked. */
static tune_result skew_names(const tune_store *st, const char *impl, dc_op op, dc_dtype dtype,
                              dc_mode mode, uint64_t bytes, uint64_t rows, uint64_t cols,
                              named n[3]) {
  const named v[3] = {
      {"skew op", dc_op_name(op)},
      {"skew dtype", dc_dtype_name(dtype)},
      {"skew mode", dc_mode_name(mode)},
  };
  memcpy(n, v, sizeof(v));
  if (impl == NULL) return arg_fail(st, "skew impl is missing");
  TUNE_CHECK(check_names(st, n, 3));
  TUNE_CHECK(check_u64(st, bytes, "skew bytes"));
  TUNE_CHECK(check_u64(st, rows, "skew rows"));
  return check_u64(st, cols, "skew cols");
}

tune_result tune_store_put_skew_summary(tune_store *st, const tune_skew_summary_row *x) {
  named n[3];
  sqlite3_stmt *s;
  TUNE_CHECK(need_writable(st));
  if (x == NULL) return arg_fail(st, "put_skew_summary: no row");
  TUNE_CHECK(skew_names(st, x->impl, x->op, x->dtype, x->mode, x->bytes, x->rows, x->cols, n));
  if (x->trials < 1) return arg_fail(st, "put_skew_summary: trials must be >= 1");
  const tune_skew_stat *stats[] = {&x->max, &x->injected, &x->last, &x->wait, &x->delay};
  for (size_t i = 0; i < NNAMES(stats); i++)
    if (!isfinite(stats[i]->median_ns) || !isfinite(stats[i]->p10_ns) ||
        !isfinite(stats[i]->p90_ns))
      return arg_fail(st, "put_skew_summary: a statistic is not finite");
  TUNE_CHECK(stmt_get(st, S_SKEW_SUMMARY, &s));
  binder b = {s, 0, SQLITE_OK};
  bind_i64(&b, x->config_id);
  bind_i64(&b, x->run_id);
  bind_text(&b, x->impl);
  bind_text(&b, n[0].name);
  bind_text(&b, n[1].name);
  bind_i64(&b, x->world);
  bind_i64(&b, (int64_t)x->bytes);
  bind_i64(&b, (int64_t)x->rows);
  bind_i64(&b, (int64_t)x->cols);
  bind_text(&b, n[2].name);
  bind_i64(&b, x->skew_rank);
  bind_i64(&b, x->requested_ns);
  bind_i64(&b, x->trials);
  for (size_t i = 0; i < NNAMES(stats); i++) {
    bind_f64(&b, stats[i]->median_ns);
    bind_f64(&b, stats[i]->p10_ns);
    bind_f64(&b, stats[i]->p90_ns);
  }
  return stmt_run(st, s, b.rc, "inserting a skew summary");
}

tune_result tune_store_put_skew_fit(tune_store *st, const tune_skew_fit_row *x) {
  named n[3];
  sqlite3_stmt *s;
  TUNE_CHECK(need_writable(st));
  if (x == NULL || x->role == NULL) return arg_fail(st, "put_skew_fit: no row or role");
  TUNE_CHECK(skew_names(st, x->impl, x->op, x->dtype, x->mode, x->bytes, x->rows, x->cols, n));
  const double v[] = {x->slope,        x->intercept,    x->slope_lo, x->slope_hi,
                      x->intercept_lo, x->intercept_hi, x->r2,       x->confidence};
  for (size_t i = 0; i < NNAMES(v); i++)
    if (!isfinite(v[i])) return arg_fail(st, "put_skew_fit: a coefficient is not finite");
  TUNE_CHECK(stmt_get(st, S_SKEW_FIT, &s));
  binder b = {s, 0, SQLITE_OK};
  bind_i64(&b, x->run_id);
  bind_text(&b, x->impl);
  bind_text(&b, n[0].name);
  bind_text(&b, n[1].name);
  bind_i64(&b, x->world);
  bind_i64(&b, (int64_t)x->bytes);
  bind_i64(&b, (int64_t)x->rows);
  bind_i64(&b, (int64_t)x->cols);
  bind_text(&b, n[2].name);
  bind_text(&b, x->role);
  for (size_t i = 0; i + 1 < NNAMES(v); i++) bind_f64(&b, v[i]);
  bind_i64(&b, x->n);
  bind_f64(&b, x->confidence);
  return stmt_run(st, s, b.rc, "inserting a skew fit");
}
