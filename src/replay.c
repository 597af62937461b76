/* replay.c: `tune replay` (replay.h). The samples of each group come from
 * the sweep run's configs of that group (tune_query_group, then the store's
 * samples), handed out in trial order, so a search that asks for what the
 * job's own search asked for sees what it saw. */
#include "replay.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "query.h"
#include "stats.h"

/* What a trial counts as where the database cannot stand in for it: the
 * path loses there (the replay source's contract, engine.h). */
static const double replay_none_ns = 1e15;

/* One config of the current group: its samples once read, and the trials
 * handed out so far. */
typedef struct {
  tune_group_config c;
  double *slowest; /* NULL until read */
  int trials, given;
} replay_point;

typedef struct {
  tune_store *st;
  int64_t sweep;
  replay_point *pts; /* the group's configs, by path then bytes, then sizes
                        the database lacks (config_id 0) */
  size_t npts, cap;
  long asked, reused, between, lost; /* trials asked for; of those the database
                                        lacks: stood in by its trials at that size,
                                        by the sizes either side, by the path losing */
  tune_result err;                   /* the first error the source met */
} replay_db;

static void replay_clear(replay_db *x) {
  for (size_t i = 0; i < x->npts; i++) free(x->pts[i].slowest);
  free(x->pts);
  x->pts = NULL;
  x->npts = x->cap = 0;
}

/* The sweep's configs of c's group, which the source answers from now on. */
static int replay_has_group(void *ctx, const tune_cfg *c) {
  replay_db *x = ctx;
  tune_group_config *g = NULL;
  size_t n = 0;
  replay_clear(x);
  if (x->err == tune_ok) x->err = tune_query_group(x->st, x->sweep, c, &g, &n);
  if (x->err == tune_ok && n > 0 && (x->pts = calloc(x->cap = n, sizeof(*x->pts))) == NULL)
    x->err = tune_err_system;
  for (size_t i = 0; x->err == tune_ok && i < n; i++) x->pts[x->npts++].c = g[i];
  free(g);
  return x->err == tune_ok && x->npts > 0;
}

/* Point p's samples, read on first use. */
static tune_result replay_read(replay_db *x, replay_point *p) {
  int64_t *el = NULL, *de = NULL;
  int world = 0;
  if (p->slowest || p->c.wrong_elems || p->c.config_id == 0) return tune_ok;
  TUNE_CHECK(tune_store_get_samples(x->st, p->c.config_id, &p->trials, &world, &el, &de));
  tune_result r = (p->slowest = malloc((size_t)p->trials * sizeof(*p->slowest) + 1))
                      ? tune_ok
                      : tune_err_system;
  if (r == tune_ok) tune_slowest_per_trial(el, p->trials, world, p->slowest);
  free(el);
  free(de);
  return r;
}

/* Trial t of path at bytes, which the database lacks: the live job would
 * have measured it. The trials it holds there, if any, stand in again
 * (trial t modulo their count); else the path's nearest sizes either side,
 * interpolated log-log, each side's trial t (modulo its count); with no
 * size on one side, the path loses there. */
static tune_result replay_stand_in(replay_db *x, replay_point *own, int t, double *v) {
  replay_point *lo = NULL, *hi = NULL;
  if (own->trials > 0) {
    *v = own->slowest[t % own->trials];
    x->reused++;
    return tune_ok;
  }
  for (size_t i = 0; i < x->npts; i++) {
    replay_point *p = &x->pts[i];
    if (p->c.path != own->c.path || p->c.wrong_elems || p->c.config_id == 0) continue;
    TUNE_CHECK(replay_read(x, p));
    if (p->c.bytes < own->c.bytes) lo = p;
    if (p->c.bytes > own->c.bytes && hi == NULL) hi = p;
  }
  if (lo == NULL || hi == NULL) {
    x->lost++;
    *v = replay_none_ns;
    return tune_ok;
  }
  double w = log((double)own->c.bytes / (double)lo->c.bytes) /
             log((double)hi->c.bytes / (double)lo->c.bytes),
         a = lo->slowest[t % lo->trials], b = hi->slowest[t % hi->trials];
  *v = exp(log(a) + w * (log(b) - log(a)));
  x->between++;
  return tune_ok;
}

static tune_result replay_samples(void *ctx, const tune_cfg *c, int ntrials, double *out) {
  replay_db *x = ctx;
  replay_point *p = NULL;
  for (size_t i = 0; i < x->npts && p == NULL; i++)
    if (x->pts[i].c.path == c->path && x->pts[i].c.bytes == c->bytes) p = &x->pts[i];
  if (p == NULL) {
    if (x->npts == x->cap) {
      size_t cap = x->cap ? 2 * x->cap : 64;
      replay_point *g = realloc(x->pts, cap * sizeof(*g));
      if (g == NULL) return tune_err_system;
      x->pts = g;
      x->cap = cap;
    }
    p = &x->pts[x->npts++];
    *p = (replay_point){.c = {c->path, c->bytes, 0, 0}};
  }
  TUNE_CHECK(replay_read(x, p));
  for (int t = 0; t < ntrials; t++) {
    if (p->c.wrong_elems)
      out[t] = replay_none_ns;
    else if (p->given + t < p->trials)
      out[t] = p->slowest[p->given + t];
    else
      TUNE_CHECK(replay_stand_in(x, p, p->given + t, &out[t]));
  }
  x->asked += ntrials;
  p->given += ntrials;
  return tune_ok;
}

/* The word of list (key=value words, as tune_job_options writes them)
 * whose key is the klen bytes at key: its value and length, or NULL. */
static const char *option_value(const char *list, const char *key, size_t klen, size_t *vlen) {
  for (const char *w = list; *w; w += strcspn(w, " "), w += strspn(w, " "))
    if (strncmp(w, key, klen) == 0 && w[klen] == '=') {
      *vlen = strcspn(w + klen + 1, " ");
      return w + klen + 1;
    }
  return NULL;
}

/* The options that stored and given hold otherwise, "key=stored (given:
 * value)" with "none" for one that is not there, into out. */
static void options_diff(const char *given, const char *stored, char *out, size_t len) {
  const char *lists[2] = {stored, given};
  size_t n = 0;
  out[0] = '\0';
  for (int side = 0; side < 2; side++)
    for (const char *w = lists[side]; *w; w += strcspn(w, " "), w += strspn(w, " ")) {
      size_t kl = strcspn(w, "= "), sl, gl;
      if (w[kl] != '=') continue;
      const char *sv = option_value(stored, w, kl, &sl), *gv = option_value(given, w, kl, &gl);
      /* Each key once: from stored, or from given where stored lacks it. */
      if ((side == 1 && sv != NULL) || (sv && gv && sl == gl && strncmp(sv, gv, sl) == 0))
        continue;
      int k = snprintf(out + n, len - n, "%s%.*s=%.*s (given: %.*s)", n ? ", " : "", (int)kl, w,
                       sv ? (int)sl : 4, sv ? sv : "none", gv ? (int)gl : 4, gv ? gv : "none");
      if (k < 0 || (size_t)k >= len - n) return;
      n += (size_t)k;
    }
}

/* The job of run (0: the newest with a finished sweep of job's options)
 * into *ch; tune_err_arg with a message when there is none. */
static tune_result replay_job(tune_store *st, const tune_job *job, int64_t run, tune_chain *ch) {
  char want[1024], kind[16];
  int64_t parent;
  tune_job_options(job, want, sizeof(want));
  if (run != 0) {
    TUNE_CHECK(tune_query_run_kind(st, run, kind, sizeof(kind), &parent));
    if (strcmp(kind, "before") != 0 && strcmp(kind, "sweep") != 0 && strcmp(kind, "after") != 0) {
      tune_error("replay: %s has no run %" PRId64 " of a main job%s%s%s", job->db_path, run,
                 kind[0] ? " (it is a run of kind " : "", kind[0] ? kind : "", kind[0] ? ")" : "");
      return tune_err_arg;
    }
    TUNE_CHECK(tune_query_chain(st, strcmp(kind, "before") == 0 ? run : parent, ch));
    if (!ch->sweep_done) {
      tune_error("replay: the job of run %" PRId64 " has no finished sweep", run);
      return tune_err_arg;
    }
    if (!ch->has_options || strcmp(ch->options, want) != 0) {
      char diff[1024] = "(not stored: a database older than schema 4)";
      if (ch->has_options) options_diff(want, ch->options, diff, sizeof(diff));
      tune_error("replay: run %" PRId64 "'s job was run with other options: %s; give them as it "
                 "was run",
                 run, diff);
      return tune_err_arg;
    }
    return tune_ok;
  }
  char newest[1024] = "";
  for (int64_t below = 0;; below = ch->before) {
    TUNE_CHECK(tune_query_chain_below(st, below, ch));
    if (ch->before == 0) {
      char diff[1024];
      options_diff(want, newest, diff, sizeof(diff));
      tune_error("replay: %s holds no finished sweep of these options%s%s%s", job->db_path,
                 newest[0] ? "; its newest finished job was run with " : " (",
                 newest[0] ? diff : want, newest[0] ? "" : ")");
      return tune_err_arg;
    }
    if (ch->sweep_done && ch->has_options && !newest[0])
      snprintf(newest, sizeof(newest), "%s", ch->options);
    if (ch->sweep_done && ch->has_options && strcmp(ch->options, want) == 0) return tune_ok;
  }
}

/* The previous table of the job, whose paths its searches kept (and whose
 * other rows its header kept): *rows (malloc'd, *n rows) from the file
 * given, else the one the job's before run stored. A job begun by an older
 * tune stored none: its table was the one compiled into its tune (the
 * sweep run records that table's provenance), which must be this tune's
 * (*rows NULL: the replay takes this tune's). */
static tune_result replay_incumbent(tune_store *st, const tune_job *job, const tune_chain *ch,
                                    const char *file, dc_threshold_row **rows, size_t *n) {
  char why[512];
  *rows = NULL;
  *n = 0;
  if (file) {
    if (dc_table_read_file(file, rows, n, why, sizeof(why)) == 0) return tune_ok;
    tune_error("--incumbent: %s", why);
    return tune_err_arg;
  }
  TUNE_CHECK(tune_query_previous_table(st, ch->before, rows, n));
  if (*n > 0 || job->no_incumbent ||
      strcmp(ch->sweep_thresholds, dc_builtin_thresholds_provenance) == 0)
    return tune_ok;
  tune_error("replay: the sweep of job %" PRId64
             " ran with the table \"%s\", this tune "
             "has \"%s\" compiled in, and the database holds no copy of the job's table: the "
             "incumbent rules would keep other paths (replay with --incumbent FILE naming that "
             "table, a tune built on it, or a job run with --no-incumbent)",
             ch->before, ch->sweep_thresholds, dc_builtin_thresholds_provenance);
  return tune_err_arg;
}

tune_result tune_replay(const tune_job *job, int64_t run, const char *incumbent, const char *out) {
  tune_store *st = NULL;
  tune_chain ch = {0};
  replay_db x = {0};
  dc_threshold_row *rows = NULL, *prev = NULL;
  size_t nrows = 0, nmeasured = 0, nprev = 0;
  tune_output o;
  TUNE_CHECK(tune_check_output(strcmp(out, "-") == 0 ? "standard output" : "--header",
                               strcmp(out, "-") == 0 ? "/dev/stdout" : out, job->db_path));
  if (strcmp(out, "-") != 0) TUNE_CHECK(tune_check_writable("--header", out, 0));
  TUNE_CHECK(tune_store_open(job->db_path, 1, &st));
  tune_result r = replay_job(st, job, run, &ch);
  /* The samples are read as the search asks for them, and the runs' names
   * pick the groups: damage is named before the first is read. */
  if (r == tune_ok) r = tune_store_check_rows(st, ch.before);
  if (r == tune_ok) r = tune_store_check_run(st, ch.sweep);
  if (r == tune_ok) r = replay_incumbent(st, job, &ch, incumbent, &prev, &nprev);
  x.st = st;
  x.sweep = ch.sweep;
  tune_replay_source src = {replay_has_group, replay_samples, &x};
  if (r == tune_ok)
    r = tune_engine_replay(job, ch.sm, (dc_topo)dc_topo_parse(ch.topo), &src,
                           prev ? prev : dc_builtin_thresholds,
                           prev ? nprev : dc_builtin_thresholds_count, &rows, &nrows, &nmeasured);
  if (r == tune_ok) r = x.err;
  if (r == tune_ok && nmeasured == 0) {
    tune_error("replay: the sweep of run %" PRId64 " holds none of the job's groups; the database "
               "was changed outside tune",
               ch.sweep);
    r = tune_err_db;
  }
  if (r == tune_ok) r = tune_output_open(out, &o);
  if (r == tune_ok) {
    tune_emit_rows(o.f, rows, nrows);
    r = tune_output_close(&o, tune_ok); /* which says so if a write failed */
  }
  if (r == tune_ok)
    fprintf(stderr,
            "tune replay: run %" PRId64
            " of %s: %zu rows searched again (%zu in the table); "
            "%ld trials asked for; of those the database lacks, %ld stood in by its trials at that "
            "size, %ld by the sizes either side, %ld by the path losing\n",
            ch.sweep, job->db_path, nmeasured, nrows, x.asked, x.reused, x.between, x.lost);
  free(rows);
  free(prev);
  replay_clear(&x);
  tune_store_close(st);
  return r;
}
