/* compare_read.h: typed readers of what `tune compare` and `tune
 * compare-headers` read from a database (issue 14): the configurations of
 * a run or of the newest run of each kind, their samples, and the sweep
 * medians around a size. Only db/ runs SQL. */
#ifndef TUNE_COMPARE_READ_H
#define TUNE_COMPARE_READ_H

#include "store.h"

/* One configuration of one side: the pairing key, its samples' id and the
 * elements its last output got wrong. */
typedef struct {
  char key[256];
  char kind[16], impl[32], op[24], path[24], dtype[8], mode[8];
  int world, skew_rank;
  int64_t bytes, in_off, out_off, skew_ns, config_id, wrong;
} tune_cmp_cell;

/* What a side's runs hold, each a comma-separated line of distinct values. */
typedef struct {
  char backends[64], models[256], worlds[128], runs[256];
} tune_cmp_summary;

typedef struct tune_cmp_reader tune_cmp_reader;

/* A reader of the runs of st that compare: run (> 0), or the newest run of
 * each kind that holds configurations (0). label names st in messages. */
tune_result tune_cmp_reader_open(tune_store *st, const char *label, int64_t run,
                                 tune_cmp_reader **out);
void tune_cmp_reader_close(tune_cmp_reader *r);

/* Every configuration (wrong results too: cell.wrong), sorted by key; the key holds
 * the run's kind when with_kind. *cells is malloc'd. tune_err_db on a
 * configuration twice. */
tune_result tune_cmp_read_cells(tune_cmp_reader *r, int with_kind, tune_cmp_cell **cells,
                                size_t *n);
tune_result tune_cmp_read_summary(tune_cmp_reader *r, tune_cmp_summary *s);

/* The slowest rank of each trial of a configuration into *x (malloc'd), *n
 * trials (0: its samples were trimmed away). */
tune_result tune_cmp_read_slowest(tune_cmp_reader *r, int64_t config_id, double **x, size_t *n);

/* One measurement of auto dispatch with a side's previous table -- the
 * table its job began with (tune compare's run-to-run drift, issue 18): an
 * auto config of a compared before run, or the previous table's trials of a
 * pairing of a compared after run. key pairs the two sides. */
typedef struct {
  char key[192];
  char kind[16], op[24], dtype[8], mode[8], align[12];
  int world;
  int64_t bytes, job; /* job: the job's before run */
  double median_ns;
} tune_cmp_prev;

/* The measurements of the reader's runs with their jobs' previous tables,
 * sorted by key, into *out (malloc'd). A database without the pairs table
 * (older than schema 5) has only the before runs'. */
tune_result tune_cmp_read_previous(tune_cmp_reader *r, tune_cmp_prev **out, size_t *n);

/* The content hash (dc_table_hash) of the previous table stored with job
 * (a before run) into *hash; *has 0 when it stored none (a job begun by a
 * tune older than schema 5). */
tune_result tune_cmp_previous_hash(tune_cmp_reader *r, int64_t job, uint64_t *hash, int *has);

/* The sweep medians of st (configs of every sweep run, averaged per size). */
typedef struct tune_sweep_reader tune_sweep_reader;
tune_result tune_sweep_reader_open(tune_store *st, tune_sweep_reader **out);
void tune_sweep_reader_close(tune_sweep_reader *r);
/* The backends, GPU models and world sizes of st's sweep runs into s (its
 * runs left as they are); label names st in messages. */
tune_result tune_sweep_summary(tune_store *st, const char *label, tune_cmp_summary *s);

/* For row's key and path, the measured sizes nearest bytes from below
 * (lo[0] bytes, lo[1] median ns) and from above (hi); a bound not measured
 * has bytes -1. */
tune_result tune_sweep_around(tune_sweep_reader *r, const dc_threshold_row *row, dc_path path,
                              uint64_t bytes, double lo[2], double hi[2]);

#endif /* TUNE_COMPARE_READ_H */
