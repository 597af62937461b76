/* test_store_kill.c: a writer killed mid-batch leaves an intact database.
 * Five times (more only until one kill lands inside a transaction) on the
 * same file, a child process opens the store and writes configs (50 trials
 * x 8 ranks each; every other one as 25 trials plus 25 more through
 * add_samples) until the parent SIGKILLs it at a seeded random moment.
 * After each kill the parent reopens the file and checks: integrity_check
 * is ok, every config has exactly trials * world samples (nothing partial),
 * every config the child reported committed -- in this round and all
 * before -- is there with its exact samples, and find_config (resume)
 * finds them. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store_db.h"
#include "tap.h"

enum {
  ROUNDS = 5,
  EXTRA_ROUNDS = 10,
  TRIALS = 50,
  WORLD = 8,
  NSAMP = TRIALS * WORLD,
  MAX_CONFIGS = 200000
};

/* What the child tells the parent, in order, through a pipe: the run, then
 * per config MSG_PUT before put_config, MSG_ADD before add_samples (odd
 * configs), MSG_DONE once the whole config is committed. */
typedef struct {
  int32_t kind;
  int32_t index;
  int64_t id; /* run id (MSG_RUN) or config id (MSG_ADD, MSG_DONE) */
} msg;
enum { MSG_RUN = 1, MSG_PUT, MSG_ADD, MSG_DONE };

typedef struct {
  int64_t run_id, config_id;
  int round, index;
} committed;

static const tune_run_info run_info = {
    "sweep", "kill-host", "none", 8,         90,    "nvlink", "none",
    "none",  "none",      "none", "threads", "sim", "none",   "test_store_kill",
    "none",  0,           0,      NULL};

/* Samples and key of config index of a round: a pure function, so the
 * parent can recompute what the child wrote. */
static void config_of(int round, int index, int64_t run_id, tune_config_row *c, int64_t *elapsed,
                      int64_t *delay) {
  tune_rng rng;
  tune_rng_seed(&rng, (uint64_t)round * 1000003u + (uint64_t)index);
  *c = (tune_config_row){run_id,
                         "detcoll",
                         (dc_op)(index % DC_OP_COUNT),
                         DC_PATH_AUTO,
                         DC_PATH_TWO_SHOT,
                         DC_DTYPE_BF16,
                         WORLD,
                         1024 + (uint64_t)index * 16,
                         0,
                         0,
                         DC_ALIGN_16,
                         DC_MODE_EAGER,
                         0,
                         -1,
                         TRIALS,
                         3,
                         0,
                         0,
                         0,
                         0};
  for (int i = 0; i < NSAMP; i++) {
    elapsed[i] = 3000 + (int64_t)(tune_rng_next(&rng) % 50000);
    delay[i] = (int64_t)(tune_rng_next(&rng) % 700);
  }
  c->median_ns = (double)elapsed[0];
  c->p10_ns = (double)elapsed[1];
  c->p90_ns = (double)elapsed[2];
}

static void write_msg(int fd, int32_t kind, int32_t index, int64_t id) {
  msg m = {kind, index, id};
  if (write(fd, &m, sizeof(m)) != (ssize_t)sizeof(m)) _exit(3);
}

/* The child: write configs until killed. Exit codes say where it failed. */
static void child(const char *path, int round, int fd) {
  tune_store *st = NULL;
  int64_t run_id, elapsed[NSAMP], delay[NSAMP];
  tune_run_info info = run_info;
  info.seed = round;
  if (tune_store_open(path, 0, &st) != tune_ok) _exit(4);
  if (tune_store_run_begin(st, &info, &run_id) != tune_ok) _exit(5);
  write_msg(fd, MSG_RUN, round, run_id);
  for (int index = 0; index < MAX_CONFIGS; index++) {
    tune_config_row c;
    int64_t id;
    config_of(round, index, run_id, &c, elapsed, delay);
    write_msg(fd, MSG_PUT, index, 0);
    if (index % 2 == 0) {
      if (tune_store_put_config(st, &c, elapsed, delay, &id) != tune_ok) _exit(6);
    } else {
      /* Half now, half as more trials: two transactions, as bisection does. */
      tune_config_row half = c;
      half.trials = TRIALS / 2;
      if (tune_store_put_config(st, &half, elapsed, delay, &id) != tune_ok) _exit(6);
      write_msg(fd, MSG_ADD, index, id);
      if (tune_store_add_samples(st, id, &c, TRIALS / 2, TRIALS - TRIALS / 2,
                                 elapsed + TRIALS / 2 * WORLD,
                                 delay + TRIALS / 2 * WORLD) != tune_ok)
        _exit(6);
    }
    write_msg(fd, MSG_DONE, index, id);
  }
  _exit(7); /* never killed: the parent reports it */
}

static int read_msg(int fd, msg *m) {
  size_t got = 0;
  while (got < sizeof(*m)) {
    ssize_t n = read(fd, (char *)m + got, sizeof(*m) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    got += (size_t)n;
  }
  return 1;
}

static int samples_exact(sqlite3 *db, int64_t id, const int64_t *elapsed, const int64_t *delay) {
  sqlite3_stmt *s;
  int n = 0, ok = 1;
  if (sqlite3_prepare_v2(db,
                         "SELECT trial, rank, elapsed_ns, delay_ns FROM samples"
                         " WHERE config_id = ? ORDER BY trial, rank",
                         -1, &s, NULL) != SQLITE_OK)
    return 0;
  sqlite3_bind_int64(s, 1, id);
  while (sqlite3_step(s) == SQLITE_ROW) {
    int i = n++;
    ok &= i < NSAMP && sqlite3_column_int(s, 0) == i / WORLD &&
          sqlite3_column_int(s, 1) == i % WORLD && sqlite3_column_int64(s, 2) == elapsed[i] &&
          sqlite3_column_int64(s, 3) == delay[i];
  }
  sqlite3_finalize(s);
  return ok && n == NSAMP;
}

static int64_t q_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *s;
  int64_t v = -999;
  if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) return v;
  if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  return v;
}

/* Check the file after a kill against everything reported committed so
 * far, and classify the kill by the child's last message: 1 inside a
 * transaction (its effect is absent: rolled back), 0 after a commit it had
 * not reported yet, -1 between transactions. */
static int check_file(const char *path, int round, int64_t run_id, const msg *last,
                      const committed *done, size_t ndone) {
  tune_store *st = NULL;
  int64_t elapsed[NSAMP], delay[NSAMP];
  char sql[128];
  if (!tap_ok(tune_store_open(path, 0, &st) == tune_ok,
              "round %d: the database reopens after SIGKILL", round))
    return -1;
  sqlite3 *db = tune_store_db(st);
  char ic[64] = "(none)";
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, NULL) == SQLITE_OK) {
    if (sqlite3_step(s) == SQLITE_ROW) snprintf(ic, sizeof(ic), "%s", sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
  }
  tap_ok(strcmp(ic, "ok") == 0, "round %d: integrity_check says %s", round, ic);
  tap_ok(q_int(db,
               "SELECT count(*) FROM configs c WHERE (SELECT count(*) FROM samples s"
               " WHERE s.config_id = c.id) != c.trials * c.world") == 0,
         "round %d: every config has exactly trials * world samples", round);
  tap_ok(q_int(db,
               "SELECT count(*) FROM samples WHERE config_id NOT IN (SELECT id FROM configs)") == 0,
         "round %d: no sample without its config", round);
  int64_t nconf = q_int(db, "SELECT count(*) FROM configs");
  /* The kill can land after a commit and before its report: at most one more. */
  tap_ok(nconf >= (int64_t)ndone && nconf <= (int64_t)ndone + round + 1,
         "round %d: %" PRId64 " configs stored, %zu reported committed", round, nconf, ndone);
  int all = 1, resumable = 1;
  for (size_t i = 0; i < ndone; i++) {
    tune_config_row c;
    int64_t found = 0;
    config_of(done[i].round, done[i].index, done[i].run_id, &c, elapsed, delay);
    all &= samples_exact(db, done[i].config_id, elapsed, delay);
    resumable &= tune_store_find_config(st, &c, &found) == tune_ok && found == done[i].config_id;
  }
  tap_ok(all, "round %d: all %zu committed configs of rounds 0..%d have their exact samples", round,
         ndone, round);
  tap_ok(resumable, "round %d: find_config finds every committed config (resume)", round);
  int state = -1;
  if (last->kind == MSG_PUT) {
    tune_config_row c;
    int64_t found = -1;
    config_of(round, last->index, run_id, &c, elapsed, delay);
    if (tune_store_find_config(st, &c, &found) == tune_ok) state = found == 0;
  } else if (last->kind == MSG_ADD) {
    snprintf(sql, sizeof(sql), "SELECT trials FROM configs WHERE id = %" PRId64, last->id);
    state = q_int(db, sql) == TRIALS / 2;
  }
  tune_store_close(st);
  return state;
}

int main(void) {
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char dir[256], path[320];
  snprintf(dir, sizeof(dir), "%s/test_store_kill.XXXXXX", tmp);
  if (mkdtemp(dir) == NULL) {
    printf("Bail out! mkdtemp %s\n", dir);
    return 1;
  }
  snprintf(path, sizeof(path), "%s/kill.sqlite", dir);
  tap_diag("database %s", path);
  tune_rng rng;
  tune_rng_seed(&rng, 0xdead10cc);
  committed *done = calloc(MAX_CONFIGS, sizeof(*done));
  size_t ndone = 0;
  int mid_batch = 0;
  /* Extra rounds only while no kill has yet landed inside a transaction: a
   * commit's auto-checkpoint (fsync) can make the after-commit window long
   * on a busy disk. */
  int round = 0;
  for (; done != NULL && (round < ROUNDS || (mid_batch == 0 && round < ROUNDS + EXTRA_ROUNDS));
       round++) {
    int fds[2];
    if (pipe(fds) != 0) {
      printf("Bail out! pipe\n");
      return 1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
      printf("Bail out! fork\n");
      return 1;
    }
    if (pid == 0) {
      close(fds[0]);
      child(path, round, fds[1]);
    }
    close(fds[1]);
    /* Kill at a random moment once the child is writing configs. */
    msg m;
    int64_t run_id = 0;
    int started = read_msg(fds[0], &m) && m.kind == MSG_RUN;
    run_id = started ? m.id : 0;
    long delay_ms = 5 + (long)(tune_rng_next(&rng) % 80);
    struct timespec ts = {0, delay_ms * 1000000L};
    if (started) nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    tap_ok(started && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
           "round %d: the writer was killed by SIGKILL after %ld ms (status %#x)", round, delay_ms,
           status);
    msg last = {0, 0, 0};
    int reports = 0;
    while (read_msg(fds[0], &m)) {
      last = m;
      if (m.kind != MSG_DONE || ndone >= MAX_CONFIGS) continue;
      done[ndone++] = (committed){run_id, m.id, round, m.index};
      reports++;
    }
    close(fds[0]);
    tap_ok(reports > 0, "round %d: the writer committed configs before the kill", round);
    int state = check_file(path, round, run_id, &last, done, ndone);
    mid_batch += state == 1;
    tap_diag("round %d: %d configs reported committed; killed %s", round, reports,
             state == 1   ? (last.kind == MSG_PUT ? "inside put_config (rolled back)"
                                                  : "inside add_samples (rolled back)")
             : state == 0 ? "after a commit, before its report"
                          : "between transactions");
  }
  tap_ok(mid_batch > 0, "%d of %d kills landed inside a transaction", mid_batch, round);
  free(done);
  int status = tap_done();
  if (status == 0) {
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0) tap_diag("could not remove %s", dir);
  }
  return status;
}
