/* fleet.h: tune fleet -- the main job on every node of a cluster at once,
 * inside one mpirun, and the fleet's verdict: one consensus header, each
 * node's regret under it, and the nodes that are not like the others. */
#ifndef TUNE_FLEET_H
#define TUNE_FLEET_H

#include "engine.h"
#include "fleet_db.h"
#include "store.h"

/* Exit status of a fleet whose nodes are not all alike: an outlier node,
 * or a node that failed, timed out, dropped out or differs in hardware. */
#define TUNE_FLEET_EXIT_NOT_UNIFORM 3

typedef struct {
  const tune_job *job; /* each node's main job: options, --db (the fleet database), --resume */
  int node_timeout_s;  /* a node not done this long after the start is timed out; 0: none */
} tune_fleet_opts;

/* Run the fleet under mpirun: every process calls it. Returns the
 * process's exit status (0, 1, 2 usage, TUNE_FLEET_EXIT_NOT_UNIFORM,
 * 128 + signal). */
int tune_fleet_run(const tune_fleet_opts *o);

/* ---- rank 0's side: the fleet database once the nodes are done ---------- */

/* What a node's leader reports at the end of its job. */
typedef struct {
  int32_t rc;                   /* tune_result of the node's job; -1: timed out */
  int32_t ranks;
  int32_t sig;                  /* rc tune_err_interrupted: the signal, else 0 */
  int64_t before, sweep, after; /* the node's runs in its database (0: none) */
  char error[512];
} tune_fleet_status;

/* One node as rank 0 sees it at the end. */
typedef struct {
  int id;                 /* node id in the fleet database */
  char name[128], db[4096 + 320];
  tune_fleet_status st;
} tune_fleet_node;

/* The options text of a fleet run (its nodes' main job's and the ranks per
 * node): what --resume and tune merge match. */
void tune_fleet_options(const tune_job *job, char *out, size_t len);

/* Where fleet run fid of the database db_path keeps what: "nodes" (the
 * folder of its node databases: <folder>/<db name>-nodes/fleet-ID),
 * "header" (<db name>-fleet-ID-thresholds.h beside it) or "report"
 * (<db name>-fleet-ID-report), <db name> less its .db: named after the
 * database, so two fleet databases in one folder share them only as
 * D/f.db and D/f do, which tune_fleet_lock keeps apart. */
void tune_fleet_path(const char *db_path, int64_t fid, const char *what, char *out, size_t len);

/* Rank 0 of a fleet, or a merge, before it writes: the job lock of --db
 * and that of its outputs' names (<folder>/.<db name>.fleet-names.lock,
 * <db name> less .db), both where the folder is there, held to the end of
 * the process, so that fleets of --db D/f.db and --db D/f never write the
 * same node databases and header at once. */
tune_result tune_fleet_lock(const char *db_path);

/* Then the fleet database, open for writing (tune_engine_open_store), and
 * the lock of the names where its folder was made just now; refused then,
 * the store is closed (*st NULL) and a database made just now removed. */
tune_result tune_fleet_open(const char *db_path, tune_store **st);

/* Fleet run fid's consensus header and (without --report-dir) its report
 * folder beside --db must not be there before the run begins: they would
 * belong to a fleet run --db no longer records, or not be tune's at all (a
 * node database copied under that name), and be replaced. tune_err_arg with
 * a message. */
tune_result tune_fleet_check_outputs(const tune_job *job, int64_t fid);

/* A node name as a file name (of its database, header and log): anything
 * but [A-Za-z0-9._-] becomes '_'. */
void tune_fleet_file_name(const char *name, char *out, size_t len);

/* Whether nodes names[0..n-1] each get files of their own: two nodes of one
 * host name (containers given the same one), or of names alike as file
 * names, would write one database. tune_err_arg naming both. */
tune_result tune_fleet_check_names(const char *const *names, int n);

/* Begin a fleet run (a runs row of kind 'fleet') of ranks processes. */
tune_result tune_fleet_begin_run(tune_store *st, const tune_job *job, const char *options, int ranks,
                                 int64_t *fleet_id);

/* tune merge: the node databases dbs[0..n) -- each node's newest finished
 * main job of job's options; a database without one is recorded as a
 * failed node -- as one new fleet run in job->db_path, concluded as tune
 * fleet concludes (consensus header and report beside the database, or in
 * report_dir). */
tune_result tune_fleet_merge(const tune_job *job, char *const *dbs, int n, int *not_uniform);

/* Record every node's fate, merge the nodes that finished, find the
 * hardware majority, the consensus header (written to header_path and
 * stored), each node's regret, the outliers, and write the report into
 * report_dir. *not_uniform: whether any node is an outlier, failed or
 * differs. Prints the verdict. */
tune_result tune_fleet_conclude(tune_store *st, int64_t fleet_id, const tune_job *job, const tune_fleet_node *nodes,
                                int n, const char *header_path, const char *report_dir, int *not_uniform);

#endif /* TUNE_FLEET_H */
