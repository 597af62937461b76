/* store.h: the tune database -- one SQLite file holding runs with their
 * provenance, measured configs with every rank's every trial, crossovers,
 * emitted headers, auto-dispatch regret and skew calibration summaries and
 * fits, and the after pass's before/after pairings (db/schema.sql). The store owns
 * the file format: application_id, schema version and migrations, WAL mode,
 * and one transaction per config so a killed writer loses at most the
 * config in flight. A tune_store is used by one thread at a time. */
#ifndef TUNE_STORE_H
#define TUNE_STORE_H

#include <stdint.h>
#include <stdio.h>

#include "dc_table.h"
#include "tune.h"

#ifdef __cplusplus
extern "C" {
#endif

/* PRAGMA application_id of a tune database: "DCOL". */
#define TUNE_STORE_APPLICATION_ID 0x44434f4c
/* PRAGMA user_version this program writes; older files are migrated. */
#define TUNE_STORE_VERSION 5
/* The oldest version a read-only open accepts: version 4 only added
 * constraints and runs.options, which nothing read-only needs, and version
 * 5 the pairs table, whose absence a report states. */
#define TUNE_STORE_READ_VERSION 3
/* The largest time a sample may hold (one hour); schema.sql repeats it. */
#define TUNE_STORE_MAX_NS INT64_C(3600000000000)

typedef struct tune_store tune_store;

/* Open (readonly = 0: create if missing, migrate if older) or open for
 * reading only (readonly = 1: never creates, migrates or writes). Refuses,
 * with one tune_error() line naming the file, tune_err_db and nothing
 * written: a file that is not SQLite, an SQLite file of another
 * application, a schema version newer than TUNE_STORE_VERSION, a read-only
 * open of an older version (it must be opened for writing once), and for
 * writing a write-protected file (any mode without write bits, even for
 * root), a file with more than one name (hard links: SQLite's -wal and
 * tune's job lock go by name, so two names would let two jobs write at
 * once) or a path that cannot be created. A bad argument is tune_err_arg. */
tune_result tune_store_open(const char *path, int readonly, tune_store **out);

/* tune_store_open's readonly for a look before writing (--resume finds its
 * job so before the file is migrated): as 1, but it refuses what an open
 * for writing refuses (and takes a version older than
 * TUNE_STORE_READ_VERSION, which only tune_store_version may be asked of),
 * and a file whose -wal holds no frames is read as immutable, so that no
 * -wal or -shm is left beside it. */
#define TUNE_STORE_LOOK 2

/* For a read-only open of path where its folder cannot hold a -shm:
 * *uri = "file:<path>?immutable=1" (open it with SQLITE_OPEN_URI, then
 * sqlite3_free it); else *uri = NULL and path opens as it is. A -wal with
 * data in such a folder cannot be read: tune_err_db with a message. */
tune_result tune_store_readonly_name(const char *path, char **uri);

/* tune_ok if SQLite can ATTACH the database at path (tune merge reads node
 * databases so): its folder can hold the -shm of a WAL file. Else a message
 * naming path and tune_err_arg (tune_err_db from tune_store_readonly_name). */
tune_result tune_store_check_attachable(const char *path);

/* Finalize every statement and close the file. NULL is a no-op. */
void tune_store_close(tune_store *st);

/* The path the store was opened with. */
const char *tune_store_path(const tune_store *st);

/* The schema version of the file as it is open (TUNE_STORE_VERSION once
 * opened for writing). */
int64_t tune_store_version(const tune_store *st);

/* tune_err_db, with one line, where SQLite cannot open a database at path:
 * its absolute path too long for SQLite's VFS (its -journal's included). */
tune_result tune_store_check_path(const char *path);

/* Group several writes into one transaction (BEGIN IMMEDIATE): the put
 * functions below then join it instead of committing one by one. */
tune_result tune_store_begin(tune_store *st);
tune_result tune_store_commit(tune_store *st);
/* Undo everything since tune_store_begin; nothing to do where a failed
 * tune_store_commit has undone it already (a full disk: one message, the
 * commit's). */
tune_result tune_store_rollback(tune_store *st);

/* Provenance of a run. Every string is required (NULL is tune_err_arg);
 * parent_run 0 means none. */
typedef struct {
  const char *kind; /* before | sweep | after | skew | bench */
  const char *host, *gpu_model;
  int gpu_count, sm;
  const char *topo, *driver, *cuda, *nccl, *mpi, *launcher, *backend, *git_rev, *command_line,
      *thresholds;
  int64_t seed, parent_run;
  const char *options; /* main job: its parsed options for --resume; NULL: none */
} tune_run_info;

/* Insert a run started now (UTC); its id into *run_id. */
tune_result tune_store_run_begin(tune_store *st, const tune_run_info *info, int64_t *run_id);
/* Mark a run finished now. An unknown run_id is tune_err_arg. */
tune_result tune_store_run_finish(tune_store *st, int64_t run_id);

/* One measured configuration (a row of configs). */
typedef struct {
  int64_t run_id;
  const char *impl; /* detcoll | nccl */
  dc_op op;
  dc_path path, chosen_path;
  dc_dtype dtype;
  int world;
  uint64_t bytes;
  int in_offset, out_offset;
  dc_align align;
  dc_mode mode;
  int64_t skew_ns;
  int skew_rank, trials, warmup;
  uint64_t wrong_elems;
  double median_ns, p10_ns, p90_ns;
} tune_config_row;

/* Store a config and its trials * world samples in one transaction (or as
 * part of the caller's, see tune_store_begin): either all of it is
 * committed or none. elapsed_ns and delay_ns are [trials * world] arrays
 * indexed trial * world + rank; delay_ns NULL stores zeros. trials and world
 * must be >= 1. The new id into *config_id (may be NULL). A config with the
 * same key (configs_key) already in the run is tune_err_db. */
tune_result tune_store_put_config(tune_store *st, const tune_config_row *c,
                                  const int64_t *elapsed_ns, const int64_t *delay_ns,
                                  int64_t *config_id);

/* More trials for a committed config (bisection asks for more samples), in
 * one transaction: trials more trials * world samples, numbered from
 * first_trial, and the config's summary updated from c (trials, which must
 * be first_trial + trials, chosen_path, median_ns, p10_ns, p90_ns; the key
 * columns are not touched). c->wrong_elems counts the new trials' wrong
 * elements and is added to the stored count. elapsed_ns/delay_ns are
 * [trials * world] indexed (trial - first_trial) * world + rank. A config
 * that does not hold exactly first_trial trials of c->world ranks is
 * tune_err_arg and nothing is written. */
tune_result tune_store_add_samples(tune_store *st, int64_t config_id, const tune_config_row *c,
                                   int first_trial, int trials, const int64_t *elapsed_ns,
                                   const int64_t *delay_ns);

/* Resume support: the id of the committed config of key->run_id with the
 * same key (impl, op, path, dtype, world, bytes, offsets, mode, skew_ns,
 * skew_rank) into *config_id, or 0 if there is none. */
tune_result tune_store_find_config(tune_store *st, const tune_config_row *key, int64_t *config_id);

/* Every sample of a committed config, for resuming: *trials and *world from
 * its row, *elapsed_ns and *delay_ns malloc'd [trials * world] arrays in
 * (trial, rank) order that the caller frees. A config whose samples do not
 * match its row is tune_err_db. */
tune_result tune_store_get_samples(tune_store *st, int64_t config_id, int *trials, int *world,
                                  int64_t **elapsed_ns, int64_t **delay_ns);

/* Refuse stored data that --resume would read back: what
 * tune_store_check_rows refuses, then the first sample of
 * run_id (0: of every run) that is not an integer time in
 * 0..TUNE_STORE_MAX_NS, or the first config whose summary is not such a time
 * or whose samples are not exactly its trials x world, named in one
 * tune_error() line; tune_err_db then. Reads only. */
tune_result tune_store_check_run(tune_store *st, int64_t run_id);

/* Refuse rows of run_id (0: of every run) that tune never writes, before
 * a reader acts on them, the first one named in one tune_error() line;
 * tune_err_db then. In its runs row, configs, crossovers, regret, pairs and
 * headers: a name outside its closed set (a kind, op, dtype, path,
 * alignment class, mode, topology, backend or impl that tune does not
 * write), a count out of range (a world of 0, a negative size) or a time
 * that is not a finite number in range. Across rows: a parent_run naming
 * no other run, or given to a run that is not the sweep or after run of
 * its job, a skew_rank outside its world, a crossover's reversed
 * interval or threshold outside its bracket, a repeated regret or pairs
 * row, a pair naming a missing config, and a header whose rows are not a
 * table (tune_store_get_header_rows). The samples are
 * tune_store_check_run's (which checks these rows too). A table an older
 * tune's database lacks is skipped. Reads only. */
tune_result tune_store_check_rows(tune_store *st, int64_t run_id);

/* Take the job lock of the database at db_path: an fcntl write lock on
 * "<db_path>.lock" (beside the file db_path reaches) holding the holder's
 * pid and host, kept until the process exits (a rebuilt tune exec'd for the
 * after pass keeps it: same process). A process may hold the locks of a
 * few databases (a fleet's rank 0: the fleet's and its node's); asking
 * again for one it holds takes nothing: *taken is 1 only when this call
 * took it. Another process holding it is
 * tune_err_arg, with a message naming it. The database is checked first, as
 * tune_store_open checks it for writing: one it would refuse (not a regular
 * file, write-protected, more than one name) is tune_err_db, no lock made. */
tune_result tune_store_lock_job(const char *db_path, int *taken);

/* Remove the database file at path with its -wal, -shm and -journal: one
 * this process made and closed, that must leave nothing. */
void tune_store_remove(const char *path);

/* tune_store_lock_job's lock at the file name itself, guarding what
 * (named in messages) rather than a database: no database is checked. */
tune_result tune_store_lock_file(const char *name, const char *what, int *taken);

/* Give back the lock the last tune_store_lock_job call took (*taken) after
 * its database was refused: the lock file goes too if this process made it, so
 * a refusal leaves nothing beside the database. */
void tune_store_unlock_job(void);

/* How many job locks this process holds: tune_store_unlock_job until it
 * is back to an earlier count gives back the ones taken since. */
int tune_store_job_locks(void);

/* One crossover: path below runs for sizes <= bytes. */
typedef struct {
  int64_t run_id;
  dc_op op;
  dc_dtype dtype;
  int world;
  dc_align align;
  dc_mode mode;
  int64_t skew_ns;
  dc_path below, above;
  uint64_t bytes, lo_bytes, hi_bytes;
  double diff_ns, ci_lo_ns, ci_hi_ns, confidence;
  int decided;
} tune_crossover_row;

/* Insert a crossover. */
tune_result tune_store_put_crossover(tune_store *st, const tune_crossover_row *x);

/* Record an emitted header: its text (with the SHA-256 of content, computed
 * here) and one header_rows row per table row and segment, in one
 * transaction. Every row needs 1..DC_MAX_SEGMENTS segments; a max_bytes of
 * DC_BYTES_MAX is stored as -1, other values must fit in int64. sim and
 * installed are 0 or 1. The new id into *header_id (may be NULL). */
tune_result tune_store_put_header(tune_store *st, int64_t run_id, const char *path, int sim,
                                  int installed, const char *content, const dc_threshold_row *rows,
                                  size_t nrows, int64_t *header_id);

/* Record that the newest header of run run_id now lies at path (a
 * resumed job writes it where that job's header goes), installed (1) or
 * not (0). tune_err_arg when the run has no header. */
tune_result tune_store_place_header(tune_store *st, int64_t run_id, const char *path, int installed);

/* Read back the table rows of an emitted header, in row order. *rows is
 * malloc'ed (NULL when there are none); the caller frees it. A header with
 * no rows gives *nrows = 0. Rows tune does not write (a name this program
 * does not know, a number out of range, segments that do not make a table
 * dc_table_check passes) are tune_err_db, named. */
tune_result tune_store_get_header_rows(tune_store *st, int64_t header_id, dc_threshold_row **rows,
                                       size_t *nrows);

/* Auto dispatch against the best forced path at one size. */
typedef struct {
  int64_t run_id;
  dc_op op;
  dc_dtype dtype;
  int world;
  dc_align align;
  dc_mode mode;
  uint64_t bytes;
  dc_path auto_path, best_path;
  double auto_ns, best_ns;
} tune_regret_row;

/* Insert a regret row; regret = auto_ns / best_ns is computed here
 * (best_ns must be > 0). */
tune_result tune_store_put_regret(tune_store *st, const tune_regret_row *r);

/* One pairing of the after pass (a row of pairs): auto dispatch with the
 * new table (new_config, of impl detcoll or detcoll_reg) and with the
 * previous table (prev_config) at one size, measured in the same trials;
 * shared: both tables chose one path, measured once (prev_config =
 * new_config). ratio = new_ns / prev_ns, CI [ci_lo, ci_hi] at confidence. */
typedef struct {
  int64_t run_id;
  const char *impl;
  dc_op op;
  dc_dtype dtype;
  int world;
  uint64_t bytes;
  int in_offset, out_offset;
  dc_align align;
  dc_mode mode;
  int64_t new_config, prev_config;
  dc_path new_path, prev_path;
  int shared, trials;
  double new_ns, prev_ns, ci_lo, ci_hi, confidence;
} tune_pair_row;

/* Insert a pairing; ratio = new_ns / prev_ns is computed here. Both
 * medians > 0, 0 < ci_lo <= ci_hi, confidence in (0, 1), trials >= 1
 * and config ids > 0 (else tune_err_arg, nothing written). */
tune_result tune_store_put_pair(tune_store *st, const tune_pair_row *x);

/* Median, p10 and p90 over the trials of one per-trial quantity, ns. */
typedef struct {
  double median_ns, p10_ns, p90_ns;
} tune_skew_stat;

/* The skew summary of one config (a row of skew_summaries): per trial,
 * max is the slowest rank's residence, injected the delayed rank's, last
 * the smallest (the rank that arrived last and waited least), wait max -
 * last, delay the injected rank's measured delay. rows x cols is the shape
 * asked for, in elements. */
typedef struct {
  int64_t config_id, run_id;
  const char *impl;
  dc_op op;
  dc_dtype dtype;
  int world;
  uint64_t bytes, rows, cols;
  dc_mode mode;
  int skew_rank; /* -2: a random rank each trial */
  int64_t requested_ns;
  int trials;
  tune_skew_stat max, injected, last, wait, delay;
} tune_skew_summary_row;

/* Insert a skew summary. config_id must be a committed config (one summary
 * each: a second is tune_err_db); every statistic must be finite and trials
 * >= 1 (else tune_err_arg, nothing written). */
tune_result tune_store_put_skew_summary(tune_store *st, const tune_skew_summary_row *x);

/* One sensitivity fit: residence of role ("max", "injected", "last",
 * "wait") = intercept + slope * measured delay over n trials of one (impl,
 * op, dtype, world, shape, mode) of run_id; intervals at confidence. */
typedef struct {
  int64_t run_id;
  const char *impl;
  dc_op op;
  dc_dtype dtype;
  int world;
  uint64_t bytes, rows, cols;
  dc_mode mode;
  const char *role;
  double slope, intercept, slope_lo, slope_hi, intercept_lo, intercept_hi, r2;
  int64_t n;
  double confidence;
} tune_skew_fit_row;

/* Insert a skew fit; a non-finite coefficient is tune_err_arg. */
tune_result tune_store_put_skew_fit(tune_store *st, const tune_skew_fit_row *x);

/* Write every table (table NULL, in schema order) or one named table to out
 * in format "csv" or "json", from one consistent snapshot.
 * csv: a header line of column names, then one line per row; fields with a
 * comma, quote, CR or LF are quoted with quotes doubled (RFC 4180); NULL is
 * an empty field; lines end in LF. One CSV holds one table: csv without a
 * table is tune_err_arg.
 * json: one object mapping each table name to an array of row objects;
 * integers and reals as numbers (reals round-trip, %.17g), NULL, NaN and
 * infinities as null, text as escaped strings (each byte of ill-formed UTF-8
 * as U+FFFD), blobs as hex strings.
 * An unknown table or format is tune_err_arg (nothing written); a write
 * error on out is tune_err_system. */
tune_result tune_store_export(tune_store *st, const char *table, const char *format, FILE *out);

#ifdef __cplusplus
}
#endif
#endif /* TUNE_STORE_H */
