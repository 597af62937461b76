/* replay.c: `tune replay` (replay.h). The samples come from the sweep run
 * through the store's config lookup, in trial order, so a search that asks
 * for what the job's own search asked for sees what it saw. */
#include "replay.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "query.h"
#include "stats.h"

/* What a trial the database does not hold counts as: the path loses
 * there (the replay source's contract, engine.h). */
static const double replay_none_ns = 1e15;

/* Trials handed out so far of one (path, bytes) of the current group. */
typedef struct {
  dc_path path;
  uint64_t bytes;
  int given;
} replay_point;

typedef struct {
  tune_store *st;
  int64_t sweep;
  replay_point *pts;
  size_t npts, cap;
  long asked, missing; /* trials asked for, and those the database lacks */
  tune_result err;     /* the first error the source met */
} replay_db;

static int replay_has_group(void *ctx, const tune_cfg *c) {
  replay_db *x = ctx;
  int found = 0;
  x->npts = 0;
  if (x->err == tune_ok) x->err = tune_query_has_group(x->st, x->sweep, c, &found);
  return x->err == tune_ok && found;
}

/* The point of (path, bytes), added with nothing handed out yet. */
static replay_point *replay_find(replay_db *x, dc_path path, uint64_t bytes) {
  for (size_t i = 0; i < x->npts; i++)
    if (x->pts[i].path == path && x->pts[i].bytes == bytes) return &x->pts[i];
  if (x->npts == x->cap) {
    size_t cap = x->cap ? 2 * x->cap : 256;
    replay_point *g = realloc(x->pts, cap * sizeof(*g));
    if (g == NULL) return NULL;
    x->pts = g;
    x->cap = cap;
  }
  x->pts[x->npts] = (replay_point){path, bytes, 0};
  return &x->pts[x->npts++];
}

static tune_result replay_samples(void *ctx, const tune_cfg *c, int ntrials, double *out) {
  replay_db *x = ctx;
  tune_config_row key = {.run_id = x->sweep,
                         .impl = c->impl,
                         .op = c->op,
                         .path = c->path,
                         .dtype = c->dtype,
                         .world = c->world,
                         .bytes = c->bytes,
                         .in_offset = c->in_offset,
                         .out_offset = c->out_offset,
                         .mode = c->mode,
                         .skew_ns = c->skew_ns,
                         .skew_rank = c->skew_rank};
  int64_t id = 0, *el = NULL, *de = NULL;
  int trials = 0, world = 0;
  uint64_t wrong = 0;
  double *slowest = NULL;
  replay_point *p = replay_find(x, c->path, c->bytes);
  if (p == NULL) return tune_err_system;
  TUNE_CHECK(tune_store_find_config(x->st, &key, &id));
  if (id != 0) TUNE_CHECK(tune_store_get_samples(x->st, id, &trials, &world, &el, &de));
  tune_result r = id != 0 ? tune_query_wrong(x->st, id, &wrong) : tune_ok;
  if (r == tune_ok && trials > 0 && (slowest = malloc((size_t)trials * sizeof(*slowest))) == NULL)
    r = tune_err_system;
  if (r == tune_ok && slowest) tune_slowest_per_trial(el, trials, world, slowest);
  for (int t = 0; r == tune_ok && t < ntrials; t++) {
    int k = p->given + t;
    out[t] = k < trials && !wrong ? slowest[k] : replay_none_ns;
    x->missing += k >= trials;
  }
  x->asked += ntrials;
  p->given += ntrials;
  free(slowest);
  free(el);
  free(de);
  return r;
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
      tune_error("replay: %s has no run %" PRId64 " of a main job%s%s", job->db_path, run,
                 kind[0] ? " (it is a run of kind " : "", kind[0] ? kind : "");
      return tune_err_arg;
    }
    TUNE_CHECK(tune_query_chain(st, strcmp(kind, "before") == 0 ? run : parent, ch));
    if (!ch->sweep_done) {
      tune_error("replay: the job of run %" PRId64 " has no finished sweep", run);
      return tune_err_arg;
    }
    if (!ch->has_options || strcmp(ch->options, want) != 0) {
      tune_error("replay: run %" PRId64 "'s job was run with other options: %s; give them as it was run",
                 run, ch->has_options ? ch->options : "(not stored: a database older than schema 4)");
      return tune_err_arg;
    }
    return tune_ok;
  }
  for (int64_t below = 0;; below = ch->before) {
    TUNE_CHECK(tune_query_chain_below(st, below, ch));
    if (ch->before == 0) {
      tune_error("replay: %s holds no finished sweep of these options (%s)", job->db_path, want);
      return tune_err_arg;
    }
    if (ch->sweep_done && ch->has_options && strcmp(ch->options, want) == 0) return tune_ok;
  }
}

/* The incumbent rows the job's search kept paths of were those compiled
 * into its tune; the replay's are this tune's: they must be the same
 * table (its stored previous table, else its provenance, says which). */
static tune_result replay_same_incumbent(tune_store *st, const tune_chain *ch) {
  dc_threshold_row *prev = NULL;
  size_t n = 0;
  TUNE_CHECK(tune_query_previous_table(st, ch->before, &prev, &n));
  uint64_t here = dc_table_hash(dc_builtin_thresholds, dc_builtin_thresholds_count);
  int same = prev ? dc_table_hash(prev, n) == here
                  : strcmp(ch->thresholds, dc_builtin_thresholds_provenance) == 0;
  free(prev);
  if (same) return tune_ok;
  tune_error("replay: job %" PRId64 " started from the table \"%s\", this tune compiles in \"%s\"; "
             "the incumbent rules would keep other paths (replay with a tune built on that table)",
             ch->before, ch->thresholds, dc_builtin_thresholds_provenance);
  return tune_err_arg;
}

tune_result tune_replay(const tune_job *job, int64_t run, const char *out) {
  tune_store *st = NULL;
  tune_chain ch;
  replay_db x = {0};
  dc_threshold_row *rows = NULL;
  size_t nrows = 0, nmeasured = 0;
  tune_output o;
  TUNE_CHECK(tune_check_output(strcmp(out, "-") == 0 ? "standard output" : "--header",
                               strcmp(out, "-") == 0 ? "/dev/stdout" : out, job->db_path));
  TUNE_CHECK(tune_store_open(job->db_path, 1, &st));
  tune_result r = replay_job(st, job, run, &ch);
  if (r == tune_ok && !job->no_incumbent) r = replay_same_incumbent(st, &ch);
  int topo = dc_topo_parse(ch.topo);
  if (r == tune_ok && topo < 0) {
    tune_error("replay: run %" PRId64 " has an unknown topology '%s'", ch.before, ch.topo);
    r = tune_err_db;
  }
  x.st = st;
  x.sweep = ch.sweep;
  tune_replay_source src = {replay_has_group, replay_samples, &x};
  if (r == tune_ok) r = tune_engine_replay(job, ch.sm, (dc_topo)topo, &src, &rows, &nrows, &nmeasured);
  if (r == tune_ok) r = x.err;
  if (r == tune_ok) r = tune_output_open(out, &o);
  if (r == tune_ok) {
    tune_emit_rows(o.f, rows, nrows);
    r = tune_output_close(&o, ferror(o.f) ? tune_err_system : tune_ok);
  }
  if (r == tune_ok)
    fprintf(stderr,
            "tune replay: run %" PRId64 " of %s: %zu rows searched again (%zu in the table); "
            "%ld trials asked for, %ld of them not in the database (counted as the path losing)\n",
            ch.sweep, job->db_path, nmeasured, nrows, x.asked, x.missing);
  free(rows);
  free(x.pts);
  tune_store_close(st);
  return r;
}
