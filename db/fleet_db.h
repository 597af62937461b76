/* fleet_db.h: tune fleet's tables in the fleet database -- the node list with
 * each node's hardware, software and fate, each node's per-configuration
 * summaries merged from its own database, the consensus, each node's
 * regret under the consensus header, and the outlier cells (full samples
 * copied for those only). A fleet run is a runs row of kind 'fleet'; its
 * consensus header is a headers row of that run. */
#ifndef TUNE_FLEET_DB_H
#define TUNE_FLEET_DB_H

#include <stdint.h>

#include "cfg.h"
#include "dc_table.h"
#include "query.h"
#include "store.h"
#include "tune.h"

/* Create the fleet tables where they are missing (IF NOT EXISTS: an older
 * database gains them, nothing else changes). */
tune_result tune_fleet_db_init(tune_store *st);

/* Remove what an earlier, interrupted conclusion of the fleet run wrote
 * (consensus, regret, outliers and their samples), so a resumed one
 * writes it once. */
tune_result tune_fleet_clear_analysis(tune_store *st, int64_t fleet_id);

/* Remove the fleet run and everything recorded of it (its nodes, cells,
 * analysis, consensus header and runs row), in one transaction: what a
 * tune merge that did not finish leaves. */
tune_result tune_fleet_drop_run(tune_store *st, int64_t fleet_id);

/* Whether the fleet run is the only run st holds (*only 1). */
tune_result tune_fleet_only_run(tune_store *st, int64_t fleet_id, int *only);

/* The newest unfinished fleet run of tune fleet (not of tune merge, which
 * records no ranks) started with options (0: none). */
tune_result tune_fleet_find_run(tune_store *st, const char *options, int64_t *fleet_id);

/* A node of a fleet run. status: running | ok | failed | timeout | missing. */
typedef struct {
  int node;
  const char *name, *host;
  int ranks;
  const char *status, *error, *db;
} tune_fleet_node_row;

/* Insert the node, or update its ranks, status, error and db where the
 * fleet run has it. */
tune_result tune_fleet_put_node(tune_store *st, int64_t fleet_id, const tune_fleet_node_row *n);

/* The id the next run of st will get (tune_store_run_begin), into *id. */
tune_result tune_fleet_next_id(tune_store *st, int64_t *id);

/* The node id of name in the fleet run, or -1. */
tune_result tune_fleet_node_id(tune_store *st, int64_t fleet_id, const char *name, int *node);
/* How many nodes the fleet run lists. */
tune_result tune_fleet_node_count(tune_store *st, int64_t fleet_id, int *n);
/* Mark every node listed with status 'running' whose id is not set in
 * present[0..npresent) as missing (dropped out of a resumed job). */
tune_result tune_fleet_mark_missing(tune_store *st, int64_t fleet_id, const unsigned char *present,
                                    int npresent);

/* Merge node's runs before, sweep and after from its database node_db:
 * the node's hardware and software (from its before run) into its node
 * row, and one summary per configuration (median, p10, p90, trials, wrong
 * elements, and the slowest rank's time of every trial: the node's own
 * summary where it has one, else computed here) into fleet_cells.
 * One transaction; merging a node again replaces its cells. */
tune_result tune_fleet_merge_node(tune_store *st, int64_t fleet_id, int node, const char *node_db, int64_t before,
                                  int64_t sweep, int64_t after);

/* On the node, at the end of its job: its configs' slowest-rank time per
 * trial into its database (table fleet_node_slowest), so that the merge
 * reads one blob per config instead of every sample (the nodes do this
 * work in parallel, not rank 0 alone); and the node's name for the job of
 * before with a mark of this summary (table fleet_node_self), by which
 * tune merge knows a copy of the file. */
tune_result tune_fleet_node_summarize(const char *node_db, const char *node, int64_t before, int64_t sweep,
                                      int64_t after);

/* What a fleet's node wrote into node_db for the job of before
 * (tune_fleet_node_summarize): its name and the summary's own mark (time
 * and process), "NAME, summary MARK", into name; empty where it wrote
 * none (a main job's database, or one of an older tune). */
tune_result tune_fleet_node_self(const char *node_db, int64_t before, char *name, size_t len);

/* A node's hardware and software, as merged. */
typedef struct {
  int node;
  char name[128], status[16];
  char gpu_model[64], topo[16], driver[32], cuda[32], nccl[32];
  int gpu_count, sm;
} tune_fleet_hw;

/* Every node of the fleet run in node order (caller frees *nodes). */
tune_result tune_fleet_get_nodes(tune_store *st, int64_t fleet_id, tune_fleet_hw **nodes, int *n);

/* A node of a fleet run whose results were wrong: the name, how many of
 * its merged configurations, and the first of them (its node's config id). */
typedef struct {
  int64_t node, configs;
  char name[128];
  tune_wrong_config first; /* its run_id 0: fleet_cells keep none */
} tune_fleet_wrong_node;

/* The nodes of fleet run fleet_id with a merged configuration whose results
 * were wrong, in node order: *rows malloc'd (NULL for none; the caller
 * frees it), *n rows. */
tune_result tune_fleet_wrong_nodes(tune_store *st, int64_t fleet_id, tune_fleet_wrong_node **rows, size_t *n);

/* Record what sets a node apart from the majority (NULL: nothing). */
tune_result tune_fleet_set_mismatch(tune_store *st, int64_t fleet_id, int node, const char *what);

/* One configuration of one node, as merged. slowest: trials times, ns. */
typedef struct {
  int node;
  int64_t config_id; /* in the node's database */
  tune_cfg c;        /* c.impl points into impl */
  char impl[32];
  dc_path chosen_path;
  int trials;
  uint64_t wrong_elems;
  double median_ns;
  float *slowest; /* with_slowest only */
} tune_fleet_cell;

/* Cells of the fleet run from runs of kind ("before", "sweep", "after") of
 * the nodes with status ok and no mismatch, ordered by key (impl, op,
 * dtype, world, offsets, mode, skew, path, bytes) then node; *cells
 * malloc'd, free with tune_fleet_free_cells. */
tune_result tune_fleet_get_cells(tune_store *st, int64_t fleet_id, const char *kind, int with_slowest,
                                 tune_fleet_cell **cells, size_t *n);
void tune_fleet_free_cells(tune_fleet_cell *cells, size_t n);

/* One size of one header row (a row's key and a size). */
typedef struct {
  dc_op op;
  dc_dtype dtype;
  int world;
  dc_align align;
  dc_mode mode;
  uint64_t bytes;
} tune_fleet_size;

/* One size of a consensus row: the path chosen, the fleet median there,
 * and how many of the nodes' own headers choose the same path. */
typedef struct {
  tune_fleet_size at;
  dc_path path;
  double fleet_ns;
  int nodes, agree;
} tune_fleet_consensus_row;
tune_result tune_fleet_put_consensus(tune_store *st, int64_t fleet_id, const tune_fleet_consensus_row *r);

/* A node's cost of the consensus path against its own header's path at a
 * size (its own sweep medians): regret = fleet_ns / own_ns. */
typedef struct {
  int node;
  tune_fleet_size at;
  dc_path own_path, fleet_path;
  double own_ns, fleet_ns;
} tune_fleet_regret_row;
tune_result tune_fleet_put_regret(tune_store *st, int64_t fleet_id, const tune_fleet_regret_row *r);

/* A cell where a node stands out: its median against the fleet's, the
 * median absolute deviation, score = (node - fleet) / mad. Its full
 * samples are copied from the node's database (node_db, config_id). */
typedef struct {
  const tune_fleet_cell *cell;
  double fleet_ns, mad_ns, score;
} tune_fleet_outlier_row;
tune_result tune_fleet_put_outlier(tune_store *st, int64_t fleet_id, const tune_fleet_outlier_row *r,
                                   const char *node_db);

/* Node's database and sweep run, as the fleet run records them. */
tune_result tune_fleet_node_db(tune_store *st, int64_t fleet_id, int node, char *db, size_t len, int64_t *sweep);

/* How a node's job stands in its database: no job of these options
 * (fresh), an unfinished one (resume), a finished one (done). */
enum { TUNE_FLEET_FRESH, TUNE_FLEET_RESUME, TUNE_FLEET_DONE };

/* The newest main job of options in the database at db (which need not
 * exist, or may be empty: fresh): *state and its runs into *found. Reads
 * only. */
tune_result tune_fleet_node_chain(const char *db, const char *options, int *state, tune_chain *found);

/* The node's own header rows (its sweep run's), from its database. */
tune_result tune_fleet_node_header(const char *node_db, int64_t sweep, dc_threshold_row **rows, size_t *n);

/* The previous table of the node's job (the one its before run stored, the
 * incumbent of its sweep's searches), from its database; *n = 0 if the job
 * stored none. */
tune_result tune_fleet_node_previous(const char *node_db, int64_t sweep, dc_threshold_row **rows, size_t *n);

#endif /* TUNE_FLEET_DB_H */
