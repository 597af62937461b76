/* fleet.c: tune fleet's processes -- `mpirun -np 8K --map-by ppr:8:node
 * tune fleet --gpus 8 ...`. Processes are grouped by node
 * (MPI_Comm_split_type SHARED; for tests TUNE_FLEET_NODE_SIZE=N groups
 * ranks by rank / N), and each node runs the whole main job -- before,
 * sweep, header, after -- on its own GPUs through the mpi launcher spanning
 * its own processes only (or, with one process per node and more than one
 * GPU, on its threads): every collective stays inside the node, and the
 * nodes meet only at the fleet's boundaries (the start, where the fleet
 * run and node ids are set, and the end, where every node reports).
 *
 * Storage: one database per node (<db folder>/<db name>-nodes/fleet-ID/
 * NODE.db),
 * written by the node's leader as it measures -- the main job's own
 * per-config commits, so a killed fleet keeps every committed sample on
 * every node and --resume continues each node's job where it stopped -- and
 * merged by world rank 0 at the end into the fleet database (--db): the node
 * list, hardware, per-config summaries, consensus, regret and outliers.
 * The --db folder must be one every node can write (a shared file system);
 * nothing but statuses travels over MPI.
 *
 * Failure: a node whose job fails reports its error and is excluded; one
 * that has not reported --node-timeout seconds after the start is recorded
 * as timed out, and rank 0 concludes without it, then ends the processes
 * still hanging (MPI_Abort) instead of waiting for them. */
#include "fleet.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "launch.h"
#include "query.h"
#include "sim.h"

TUNE_PARAM(FleetNodeSize, "FLEET_NODE_SIZE", 0, 0, 1 << 20);

#define FLEET_NAME 128
/* A node's file: the fleet's folder, the node's name and a suffix. */
#define FLEET_PATH (PATH_MAX + 320)

typedef struct {
  const tune_fleet_opts *o;
  int rank, size;                 /* in MPI_COMM_WORLD */
  MPI_Comm node;                  /* this node's processes */
  int node_rank, node_size, index; /* index: the node's place among the nodes */
  int nnodes;
  int *leader;                      /* [nnodes]: each node's leader's world rank */
  char (*names)[FLEET_NAME];        /* [nnodes], rank 0 */
  int *ids;                         /* [nnodes]: node ids in the fleet database */
  int64_t fleet_id;
  char options[1200];
  char dir[PATH_MAX + 160];         /* tune_fleet_path "nodes" */
  int64_t t0;
  int started; /* fleet_start succeeded (alike on every process) */
} fleet;

#define FLEET_MPI(call)                                \
  do {                                                 \
    int e_ = (call);                                   \
    if (e_ != MPI_SUCCESS) return tune_launcher_mpi_fail(#call, e_); \
  } while (0)

/* This process's node name: the host, and under the test grouping the
 * group's number too ("host#3"), so names stay unique. */
static void fleet_name(const fleet *f, int grouped, char *out) {
  char host[FLEET_NAME - 16];
  snprintf(host, sizeof(host), "%s", tune_hostname());
  if (grouped)
    snprintf(out, FLEET_NAME, "%s#%d", host, f->index);
  else
    snprintf(out, FLEET_NAME, "%s", host);
}

/* Every process must be given one fleet: mpirun hands each process its own
 * command line and environment, and a node run with other options would be
 * merged as if it were alike (or, grouped otherwise, wait forever in
 * another split). The fleet's options (TUNE_ variables included), --db,
 * --node-timeout and the grouping are compared with rank 0's on every
 * process before anything is written (two broadcasts and a reduction: no
 * process holds every process's text); rank 0 names the first process
 * that differs. */
static tune_result fleet_agree(const fleet *f) {
  enum { len = sizeof(f->options) + PATH_MAX + 1120 };
  char mine[len], zero[len], sim[1024] = "", table[24] = "unreadable";
  int me, first, loaded;
  uint64_t hash;
  /* The table a node's auto dispatch would hold (DC_THRESHOLDS_FILE's or
   * the compiled-in one), as a job's processes compare it. One that does
   * not load (said here) differs from every table: the comparison, which
   * every process must reach, names the process. */
  if ((loaded = tune_engine_table_hash(&hash) == tune_ok))
    snprintf(table, sizeof(table), "%016" PRIx64, hash);
  memset(mine, 0, sizeof(mine));
  if (strcmp(f->o->job->backend, "sim") == 0) tune_sim_model_text(sim, sizeof(sim));
  /* --db as every process finds it: a relative one from another working
   * folder is another file (a node would measure into a database rank 0
   * never reads). */
  char cwd[PATH_MAX] = "";
  const char *db = f->o->job->db_path;
  if (db[0] != '/' && getcwd(cwd, sizeof(cwd)) == NULL) cwd[0] = '\0';
  snprintf(mine, sizeof(mine), "%s db=%s%s%s node_timeout=%d TUNE_FLEET_NODE_SIZE=%d table=%s%s",
           f->options, cwd, cwd[0] ? "/" : "", db, f->o->node_timeout_s,
           (int)tune_param_get(&tune_param_FleetNodeSize), table, sim);
  memcpy(zero, mine, sizeof(zero));
  FLEET_MPI(MPI_Bcast(zero, len, MPI_CHAR, 0, MPI_COMM_WORLD));
  me = memcmp(zero, mine, sizeof(mine)) != 0 ? f->rank : INT_MAX;
  FLEET_MPI(MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  /* Alike, but a table that loaded nowhere (said on every process). */
  if (first == INT_MAX) return loaded ? tune_ok : tune_err_arg;
  FLEET_MPI(MPI_Bcast(mine, len, MPI_CHAR, first, MPI_COMM_WORLD));
  return f->rank == 0 ? tune_launcher_options_refused(first, zero, mine) : tune_err_arg;
}

/* Group the processes by node; every node's leader (node rank 0) and its
 * place among the nodes; the names on rank 0. */
static tune_result fleet_group(fleet *f) {
  MPI_Comm leaders;
  int grouped = (int)tune_param_get(&tune_param_FleetNodeSize);
  if (grouped > 0)
    FLEET_MPI(MPI_Comm_split(MPI_COMM_WORLD, f->rank / grouped, f->rank, &f->node));
  else
    FLEET_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, f->rank, MPI_INFO_NULL, &f->node));
  FLEET_MPI(MPI_Comm_set_errhandler(f->node, MPI_ERRORS_RETURN));
  FLEET_MPI(MPI_Comm_rank(f->node, &f->node_rank));
  FLEET_MPI(MPI_Comm_size(f->node, &f->node_size));
  FLEET_MPI(MPI_Comm_split(MPI_COMM_WORLD, f->node_rank == 0 ? 0 : MPI_UNDEFINED, f->rank, &leaders));
  if (f->node_rank == 0) {
    FLEET_MPI(MPI_Comm_rank(leaders, &f->index));
    FLEET_MPI(MPI_Comm_size(leaders, &f->nnodes));
    FLEET_MPI(MPI_Comm_free(&leaders));
  }
  FLEET_MPI(MPI_Bcast(&f->index, 1, MPI_INT, 0, f->node));
  FLEET_MPI(MPI_Bcast(&f->nnodes, 1, MPI_INT, 0, MPI_COMM_WORLD));
  int *all = malloc((size_t)f->size * sizeof(int));
  f->leader = malloc((size_t)f->nnodes * sizeof(int));
  f->ids = calloc((size_t)f->nnodes, sizeof(int));
  f->names = calloc((size_t)f->size, FLEET_NAME);
  if (all == NULL || f->leader == NULL || f->ids == NULL || f->names == NULL) {
    free(all);
    return tune_err_system;
  }
  int me = f->node_rank == 0 ? f->index : -1, rc = MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 0; rc == MPI_SUCCESS && r < f->size; r++)
    if (all[r] >= 0) f->leader[all[r]] = r;
  free(all);
  if (rc != MPI_SUCCESS) return tune_launcher_mpi_fail("MPI_Allgather", rc);
  char name[FLEET_NAME];
  fleet_name(f, grouped > 0, name);
  /* Gathered by world rank: rank 0 reads each leader's. */
  FLEET_MPI(MPI_Gather(name, FLEET_NAME, MPI_CHAR, f->names, FLEET_NAME, MPI_CHAR, 0, MPI_COMM_WORLD));
  if (f->rank == 0)
    for (int k = 0; k < f->nnodes; k++) memmove(f->names[k], f->names[f->leader[k]], FLEET_NAME);
  return tune_ok;
}

/* Every node must have --gpus processes (its ranks, joined by the mpi
 * launcher), or every node one (its ranks are threads of it, as
 * nccl-tests' -g): checked on every process, before anything is written. */
static tune_result fleet_check_sizes(const fleet *f) {
  const int gpus = f->o->job->gpus;
  int lo, hi;
  FLEET_MPI(MPI_Allreduce(&f->node_size, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  FLEET_MPI(MPI_Allreduce(&f->node_size, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  if (lo == hi && (lo == gpus || lo == 1)) return tune_ok;
  if (f->rank == 0)
    tune_error("--gpus %d, but the nodes have %d to %d processes: start --gpus processes on every node"
               " (mpirun -np <nodes x %d> --map-by ppr:%d:node tune fleet --gpus %d ...), or one"
               " (--map-by ppr:1:node)",
               gpus, lo, hi, gpus, gpus, gpus);
  return tune_err_arg;
}

/* The node's database, header and log under f->dir; a path too long for
 * len is cut (and then refused where it is opened). */
static void fleet_node_paths(const fleet *f, const char *name, char *db, char *header, char *log, size_t len) {
  char base[FLEET_NAME];
  tune_fleet_file_name(name, base, sizeof(base));
  snprintf(db, len, "%s/%s.db", f->dir, base);
  snprintf(header, len, "%s/%s-thresholds.h", f->dir, base);
  snprintf(log, len, "%s/%s.log", f->dir, base);
}

/* 1 if folder dir holds a database that is not empty (an empty one holds
 * no job: a node starts afresh in it). */
static int fleet_dir_has_data(const char *dir) {
  DIR *d = opendir(dir);
  if (d == NULL) return 0;
  int found = 0;
  for (struct dirent *e; !found && (e = readdir(d)) != NULL;) {
    size_t n = strlen(e->d_name);
    char path[FLEET_PATH];
    struct stat sb;
    if (n < 4 || strcmp(e->d_name + n - 3, ".db") != 0) continue;
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    found = stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0;
  }
  closedir(d);
  return found;
}

/* What refuses a fleet run, given the run --resume continues (0: none
 * found) and the id a new run gets: --resume with nothing to resume; node
 * databases or a file already where the new run's node folder goes; its
 * header or report already there. Sets f->fleet_id for --resume. */
static tune_result fleet_refusals(fleet *f, int64_t resume_id, int64_t next) {
  const tune_job *job = f->o->job;
  f->fleet_id = resume_id;
  if (job->resume) {
    if (resume_id != 0) return tune_ok;
    tune_error("--resume: %s holds no unfinished fleet run of these options; nothing to resume",
               job->db_path);
    return tune_err_arg;
  }
  /* Node databases already where this run's would go belong to another
   * fleet (one whose database was removed): its finished jobs would pass
   * for this run's. */
  tune_fleet_path(job->db_path, next, "nodes", f->dir, sizeof(f->dir));
  if (fleet_dir_has_data(f->dir)) {
    tune_error(
        "%s already holds node databases, of a fleet run %s no longer records; move it "
        "away, or give another --db",
        f->dir, job->db_path);
    return tune_err_arg;
  }
  TUNE_CHECK(tune_check_writable("the fleet's node folder", f->dir, TUNE_WRITABLE_FOLDER));
  /* Each node's files: a name or path none can write fails every node at
   * once, after the fleet database holds the run. */
  for (int k = 0; k < f->nnodes; k++) {
    char db[FLEET_PATH], header[FLEET_PATH], log[FLEET_PATH];
    fleet_node_paths(f, f->names[k], db, header, log, sizeof(db));
    TUNE_CHECK(tune_check_name_fits("a node's database", db, 1));
    TUNE_CHECK(tune_check_name_fits("a node's header", header, 0));
    if (tune_store_check_path(db) != tune_ok) return tune_err_arg;
  }
  return tune_fleet_check_outputs(job, next);
}

/* fleet_refusals over st: the run --resume continues and the next id. */
static tune_result fleet_refusals_in(fleet *f, tune_store *st) {
  int64_t next = 1, resume_id = 0;
  TUNE_CHECK(tune_fleet_next_id(st, &next));
  if (f->o->job->resume) TUNE_CHECK(tune_fleet_find_run(st, f->options, &resume_id));
  return fleet_refusals(f, resume_id, next);
}

/* Rank 0, before the fleet database is opened for writing (or made), under
 * its job lock: fleet_refusals on a look at it, so that a refused fleet
 * changes and creates nothing. *done: they were decided here; not for a
 * file the look cannot read (an SQLite file without tune's tables) or one
 * of an older schema (migrated first), which fleet_begin checks once open,
 * as the main job's --resume does. */
static tune_result fleet_precheck(fleet *f, int *done) {
  const tune_job *job = f->o->job;
  struct stat sb;
  tune_store *st = NULL;
  *done = 1;
  if (stat(job->db_path, &sb) != 0 || sb.st_size == 0) return fleet_refusals(f, 0, 1);
  if (tune_store_open(job->db_path, TUNE_STORE_LOOK, &st) != tune_ok ||
      tune_store_version(st) < TUNE_STORE_VERSION) {
    tune_store_close(st);
    *done = 0;
    return tune_ok;
  }
  tune_result r = fleet_refusals_in(f, st);
  tune_store_close(st);
  return r;
}

/* Rank 0: begin the fleet run (or take up the one --resume continues) and
 * give every node present an id; nodes of a resumed run not present now
 * are recorded as missing. checked: fleet_precheck decided the refusals. */
static tune_result fleet_begin(fleet *f, tune_store *st, int checked) {
  const tune_job *job = f->o->job;
  if (!checked) TUNE_CHECK(fleet_refusals_in(f, st));
  TUNE_CHECK(tune_fleet_db_init(st));
  if (job->resume)
    printf("resuming fleet run %" PRId64 "\n", f->fleet_id);
  else
    TUNE_CHECK(tune_fleet_begin_run(st, job, f->options, f->nnodes * job->gpus, &f->fleet_id));
  int count;
  TUNE_CHECK(tune_fleet_node_count(st, f->fleet_id, &count));
  TUNE_CHECK(tune_store_begin(st));
  tune_result r = tune_ok;
  unsigned char *present = calloc((size_t)count + (size_t)f->nnodes + 1, 1);
  for (int k = 0; r == tune_ok && k < f->nnodes; k++) {
    char db[FLEET_PATH], header[FLEET_PATH], log[FLEET_PATH];
    if (present == NULL) r = tune_err_system;
    if (r == tune_ok) r = tune_fleet_node_id(st, f->fleet_id, f->names[k], &f->ids[k]);
    if (r == tune_ok && f->ids[k] < 0) f->ids[k] = count++;
    snprintf(f->dir, sizeof(f->dir), "%s", "");
    if (r != tune_ok) break;
    present[f->ids[k]] = 1;
    tune_fleet_path(job->db_path, f->fleet_id, "nodes", f->dir, sizeof(f->dir));
    fleet_node_paths(f, f->names[k], db, header, log, sizeof(db));
    char host[FLEET_NAME];
    snprintf(host, sizeof(host), "%.*s", (int)strcspn(f->names[k], "#"), f->names[k]);
    tune_fleet_node_row row = {f->ids[k], f->names[k], host, job->gpus, "running", NULL, db};
    r = tune_fleet_put_node(st, f->fleet_id, &row);
  }
  if (r == tune_ok) r = tune_fleet_mark_missing(st, f->fleet_id, present, count);
  free(present);
  if (r == tune_ok) return tune_store_commit(st);
  tune_store_rollback(st);
  return r;
}

/* Point stdout and stderr at the node's log (appended), keeping the old
 * ones in saved[2]. */
static tune_result fleet_redirect(const char *log, int saved[2]) {
  fflush(stdout);
  fflush(stderr);
  int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) {
    tune_error("%s: %s", log, strerror(errno));
    return tune_err_system;
  }
  saved[0] = dup(1);
  saved[1] = dup(2);
  int ok = saved[0] >= 0 && saved[1] >= 0 && dup2(fd, 1) >= 0 && dup2(fd, 2) >= 0;
  close(fd);
  return ok ? tune_ok : tune_err_system;
}

static void fleet_restore(int saved[2]) {
  fflush(stdout);
  fflush(stderr);
  for (int i = 0; i < 2; i++)
    if (saved[i] >= 0) {
      dup2(saved[i], i + 1);
      close(saved[i]);
    }
}

/* This node's main job, on its own processes; the leader fills *s. */
static void fleet_node_job(fleet *f, const char *name, tune_fleet_status *s) {
  char db[FLEET_PATH], header[FLEET_PATH], log[FLEET_PATH];
  int id = f->ids[f->index], mode = TUNE_FLEET_FRESH, saved[2] = {-1, -1};
  tune_chain ch;
  memset(s, 0, sizeof(*s));
  s->ranks = f->o->job->gpus; /* its processes, or its threads */
  tune_fleet_path(f->o->job->db_path, f->fleet_id, "nodes", f->dir, sizeof(f->dir));
  fleet_node_paths(f, name, db, header, log, sizeof(db));
  tune_job job = *f->o->job;
  /* One process per node for more than one GPU: its ranks are threads
   * (fleet_check_sizes). With --gpus 1 the mpi launcher stays: it gives
   * each process its local rank's GPU, so test nodes on one host
   * (TUNE_FLEET_NODE_SIZE=1) do not share one. */
  const int threads = f->node_size == 1 && f->o->job->gpus > 1;
  job.launcher = threads ? "threads" : "mpi";
  job.db_path = db;
  job.header_path = header;
  job.no_report = 1;
  job.srcdir = job.build_dir = NULL;
  job.resume_run = 0;
  /* No command line of its own: interrupted, the node's job would print
   * the fleet's command with the node's process count (-np), which
   * continues one node; the fleet prints the command that continues it. */
  job.argv = NULL;
  job.argc = 0;
  char opts[1200];
  tune_job_options(&job, opts, sizeof(opts));
  tune_result r = tune_ok;
  if (f->node_rank == 0) {
    r = tune_make_dirs("--db", db, f->dir);
    if (r == tune_ok) r = tune_fleet_node_chain(db, opts, &mode, &ch);
  }
  int32_t sh[2] = {(int32_t)r, mode};
  if (MPI_Bcast(sh, 2, MPI_INT32_T, 0, f->node) != MPI_SUCCESS) sh[0] = tune_err_mpi;
  r = (tune_result)sh[0];
  mode = sh[1];
  job.resume = mode == TUNE_FLEET_RESUME;
  if (r == tune_ok && mode != TUNE_FLEET_DONE) r = fleet_redirect(log, saved);
  /* This process alone failed to open the node's log: the node's others
   * would wait for it where their launcher opens. */
  if (r != tune_ok && sh[0] == tune_ok && !threads) tune_launcher_mpi_stop_unopened(&f->node, r);
  if (r == tune_ok && mode != TUNE_FLEET_DONE) {
    if (!threads) tune_launcher_mpi_set_comm(&f->node);
    tune_sim_set_node(id);
    r = tune_job_run(&job);
    /* Wrong results (named in the node's log) fail a job; in a fleet the
     * node's cells of them stay out of the consensus, and the conclusion
     * names the node and fails the fleet (fleet_wrong). */
    if (r == tune_err_wrong) r = tune_ok;
    /* Failed before its launcher opened: the node's other processes wait
     * there for this one. */
    if (r != tune_ok && !threads) tune_launcher_mpi_stop_unopened(&f->node, r);
    if (!threads) tune_launcher_mpi_set_comm(NULL);
  }
  if (r != tune_ok) tune_last_error(s->error, sizeof(s->error));
  fleet_restore(saved);
  if (r != tune_ok && s->error[0] == '\0') snprintf(s->error, sizeof(s->error), "%s", tune_result_str(r));
  s->rc = r;
  s->sig = r == tune_err_interrupted ? tune_interrupt_signal() : 0;
  if (f->node_rank == 0 && r == tune_ok) {
    r = tune_fleet_node_chain(db, opts, &mode, &ch);
    if (r == tune_ok) r = tune_fleet_node_summarize(db, name, ch.before, ch.sweep, ch.after);
    if (r != tune_ok) tune_last_error(s->error, sizeof(s->error));
    s->rc = r;
    s->before = ch.before;
    s->sweep = ch.sweep;
    s->after = ch.after;
  }
}

/* How long rank 0, stopped while it waits for the nodes, waits on for
 * their answers before it ends them. */
static const int64_t fleet_stop_grace_ns = 10 * 1000000000LL;

/* Rank 0: every leader's status, or a timeout for those not in by the
 * deadline (--node-timeout, or the grace after a signal). *hung: some node
 * never reported (the fleet ends it). */
static tune_result fleet_collect(fleet *f, const tune_fleet_status *mine, tune_fleet_status *all, int *hung) {
  MPI_Request *req = calloc((size_t)f->nnodes, sizeof(*req));
  if (req == NULL) return tune_err_system;
  *hung = 0;
  for (int k = 0; k < f->nnodes; k++) {
    req[k] = MPI_REQUEST_NULL;
    if (f->leader[k] == 0)
      all[k] = *mine;
    else if (MPI_Irecv(&all[k], (int)sizeof(all[k]), MPI_BYTE, f->leader[k], 15, MPI_COMM_WORLD, &req[k]) !=
             MPI_SUCCESS) {
      free(req);
      return tune_err_mpi;
    }
  }
  int64_t deadline = f->o->node_timeout_s > 0 ? f->t0 + (int64_t)f->o->node_timeout_s * 1000000000 : 0;
  int stopping = 0;
  for (;;) {
    int done = 1;
    for (int k = 0; k < f->nnodes; k++) {
      int flag = 1;
      if (req[k] != MPI_REQUEST_NULL && MPI_Test(&req[k], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        all[k].rc = tune_err_mpi;
        snprintf(all[k].error, sizeof(all[k].error), "its status could not be received");
        req[k] = MPI_REQUEST_NULL;
      }
      done &= flag;
    }
    if (done) break;
    /* Stopped (a signal to this process alone, or to every process, as
     * mpirun forwards one): the nodes get fleet_stop_grace_ns to answer,
     * having stopped too, and the ones that do not are ended with the
     * fleet, as hung ones are. */
    if (tune_interrupt_signal() && !stopping) {
      int64_t end = tune_now_ns() + fleet_stop_grace_ns;
      if (!deadline || end < deadline) deadline = end;
      stopping = 1;
    }
    if (deadline && tune_now_ns() > deadline) {
      for (int k = 0; k < f->nnodes; k++)
        if (req[k] != MPI_REQUEST_NULL) {
          MPI_Cancel(&req[k]);
          memset(&all[k], 0, sizeof(all[k]));
          all[k].rc = stopping ? tune_err_interrupted : -1;
          if (stopping)
            snprintf(all[k].error, sizeof(all[k].error), "ended unfinished: the fleet was stopped (%s)",
                     tune_interrupt_name());
          else
            snprintf(all[k].error, sizeof(all[k].error), "no answer %d s after the fleet started (--node-timeout)",
                     f->o->node_timeout_s);
          *hung = 1;
        }
      break;
    }
    usleep(20000);
  }
  free(req);
  return tune_ok;
}

/* Rank 0: every node gets files of its own (tune_fleet_check_names). */
static tune_result fleet_check_names(const fleet *f) {
  const char **names = malloc((size_t)f->nnodes * sizeof(*names));
  if (names == NULL) return tune_err_system;
  for (int k = 0; k < f->nnodes; k++) names[k] = f->names[k];
  tune_result r = tune_fleet_check_names(names, f->nnodes);
  free(names);
  return r;
}

/* The fleet database (rank 0) or nothing; every process learns the fleet
 * run id and the node ids, or the error that stops every process. */
static tune_result fleet_start(fleet *f, tune_store **st) {
  tune_result r = tune_ok;
  *st = NULL;
  if (f->rank == 0) {
    const char *db = f->o->job->db_path;
    int checked = 0, locks = tune_store_job_locks();
    r = fleet_check_names(f);
    if (r == tune_ok) r = tune_fleet_lock(db);
    if (r == tune_ok) r = fleet_precheck(f, &checked);
    if (r == tune_ok) r = tune_fleet_open(db, st);
    if (r == tune_ok) r = fleet_begin(f, *st, checked);
    while (r != tune_ok && *st == NULL && tune_store_job_locks() > locks) tune_store_unlock_job();
  }
  int64_t sh[2] = {r, f->fleet_id};
  FLEET_MPI(MPI_Bcast(sh, 2, MPI_INT64_T, 0, MPI_COMM_WORLD));
  FLEET_MPI(MPI_Bcast(f->ids, f->nnodes, MPI_INT, 0, MPI_COMM_WORLD));
  f->fleet_id = sh[1];
  return (tune_result)sh[0];
}

/* Everything between MPI_Init and MPI_Finalize; *code the exit status. */
static tune_result fleet_main(fleet *f, int *code, int *hung) {
  tune_store *st = NULL;
  tune_fleet_options(f->o->job, f->options, sizeof(f->options));
  TUNE_CHECK(fleet_agree(f));
  TUNE_CHECK(fleet_group(f));
  TUNE_CHECK(fleet_check_sizes(f));
  tune_result r = fleet_start(f, &st);
  if (r != tune_ok) {
    tune_store_close(st);
    return r;
  }
  f->started = 1;
  if (f->rank == 0)
    printf("fleet run %" PRId64 ": %d nodes of %d ranks%s; each node's log and database in %s\n",
           f->fleet_id, f->nnodes, f->o->job->gpus, f->node_size == 1 ? " (threads)" : "", f->dir);
  fflush(stdout);
  tune_fleet_status mine;
  char name[FLEET_NAME];
  fleet_name(f, tune_param_get(&tune_param_FleetNodeSize) > 0, name);
  fleet_node_job(f, name, &mine);
  if (f->node_rank == 0 && f->rank != 0) FLEET_MPI(MPI_Send(&mine, (int)sizeof(mine), MPI_BYTE, 0, 15, MPI_COMM_WORLD));
  if (f->rank != 0) return tune_ok;
  tune_fleet_status *all = calloc((size_t)f->nnodes, sizeof(*all));
  tune_fleet_node *nodes = calloc((size_t)f->nnodes, sizeof(*nodes));
  if (all == NULL || nodes == NULL) r = tune_err_system;
  if (r == tune_ok) r = fleet_collect(f, &mine, all, hung);
  int interrupted = 0;
  for (int k = 0; r == tune_ok && k < f->nnodes; k++) {
    nodes[k].id = f->ids[k];
    nodes[k].st = all[k];
    snprintf(nodes[k].name, sizeof(nodes[k].name), "%s", f->names[k]);
    char header[FLEET_PATH], log[FLEET_PATH];
    fleet_node_paths(f, f->names[k], nodes[k].db, header, log, sizeof(header));
    interrupted |= all[k].rc == tune_err_interrupted;
    /* A node's signal is the fleet's exit status (128 + signal). */
    if (all[k].rc == tune_err_interrupted && all[k].sig) tune_interrupt_adopt(all[k].sig);
  }
  if (r == tune_ok && (interrupted || tune_interrupt_signal())) r = tune_err_interrupted;
  if (r == tune_ok) {
    char header[FLEET_PATH], report[FLEET_PATH];
    tune_fleet_path(f->o->job->db_path, f->fleet_id, "header", header, sizeof(header));
    if (f->o->job->report_dir)
      snprintf(report, sizeof(report), "%s", f->o->job->report_dir);
    else
      tune_fleet_path(f->o->job->db_path, f->fleet_id, "report", report, sizeof(report));
    int not_uniform = 0;
    r = tune_fleet_conclude(st, f->fleet_id, f->o->job, nodes, f->nnodes, header, report, &not_uniform);
    /* Stopped while it concluded (drawing the report): not finished. */
    if (r == tune_ok && tune_interrupt_signal()) r = tune_err_interrupted;
    if (r == tune_ok) r = tune_store_run_finish(st, f->fleet_id);
    *code = r == tune_ok && not_uniform ? TUNE_FLEET_EXIT_NOT_UNIFORM : 0;
  }
  if (r == tune_err_interrupted)
    fprintf(stderr, "tune: fleet interrupted: every configuration measured so far is committed; to continue,"
                    " run the same command with --resume\n");
  free(all);
  free(nodes);
  tune_store_close(st);
  return r;
}

int tune_fleet_run(const tune_fleet_opts *o) {
  fleet f = {.o = o, .node = MPI_COMM_NULL};
  int provided, code = 0, hung = 0;
  tune_interrupt_install();
  if (tune_param_load(&tune_param_FleetNodeSize) != tune_ok) return TUNE_EXIT_USAGE;
  if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    tune_error("MPI_Init_thread failed: tune fleet runs under mpirun (or srun)");
    return 1;
  }
  f.t0 = tune_now_ns();
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &f.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &f.size);
  tune_result r = fleet_main(&f, &code, &hung);
  if (r != tune_ok) code = tune_exit_status(r);
  fflush(stdout);
  fflush(stderr);
  /* Processes of a hung node would never reach the end: end them all. */
  if (hung) MPI_Abort(MPI_COMM_WORLD, code ? code : TUNE_FLEET_EXIT_NOT_UNIFORM);
  /* Past the start only rank 0 can fail (it concludes): every process
   * takes its exit status, so none waits for a rank 0 that has given up. */
  if (f.started && MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS && code == 0) code = 1;
  /* A node whose processes stopped apart left a collective of its
   * launcher unfinished, which MPI_Finalize would wait for: rank 0 is
   * done (the broadcast), so it ends the fleet. */
  int abandoned = tune_launcher_mpi_abandoned();
  if (f.started &&
      MPI_Allreduce(MPI_IN_PLACE, &abandoned, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
    abandoned = 1;
  if (abandoned) tune_launcher_mpi_end(code ? code : 1);
  if (f.node != MPI_COMM_NULL) MPI_Comm_free(&f.node);
  free(f.leader);
  free(f.ids);
  free(f.names);
  MPI_Finalize();
  return code;
}
