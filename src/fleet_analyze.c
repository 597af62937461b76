/* fleet_analyze.c: world rank 0's end of tune fleet -- every node's fate
 * recorded, the finished nodes merged into the fleet database, the
 * hardware majority, the consensus header (the main job's own crossover
 * search replayed over the fleet's per-trial medians), each node's regret
 * under it, the outlier cells, and the report. */
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <unistd.h>
#include <math.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "emit.h"
#include "fleet.h"
#include "fleet_report.h"
#include "stats.h"

/* An outlier: more than this many MADs above the fleet median ... */
static const double fleet_mad_limit = 5.0;
/* ... and this much slower than it. */
static const double fleet_slow_ratio = 1.10;
/* A fleet sample where no node has one: the path loses there. */
static const double fleet_none_ns = 1e15;

/* ---- node statuses and hardware ------------------------------------------ */

static const char *status_name(const tune_fleet_status *s) {
  return s->rc == 0 ? "ok" : s->rc == -1 ? "timeout" : "failed";
}

/* Record every node's fate and merge the ones that finished. */
static tune_result fleet_record(tune_store *st, int64_t fid, const tune_fleet_node *nodes, int n) {
  for (int k = 0; k < n; k++) {
    const tune_fleet_node *x = &nodes[k];
    char host[128], err[600];
    if (tune_interrupt_signal()) return tune_err_interrupted;
    snprintf(host, sizeof(host), "%.*s", (int)strcspn(x->name, "#"), x->name);
    const char *status = status_name(&x->st);
    tune_result r = tune_ok;
    if (x->st.rc == 0) r = tune_fleet_merge_node(st, fid, x->id, x->db, x->st.before, x->st.sweep, x->st.after);
    if (r != tune_ok) {
      status = "failed";
      snprintf(err, sizeof(err), "its database could not be merged: %s", tune_result_str(r));
    } else {
      snprintf(err, sizeof(err), "%s", x->st.error);
    }
    tune_fleet_node_row row = {x->id, x->name, host, x->st.ranks, status, x->st.rc == 0 && r == tune_ok ? NULL : err,
                               x->db};
    TUNE_CHECK(tune_fleet_put_node(st, fid, &row));
    if (strcmp(status, "ok") != 0) printf("node %d (%s): %s: %s\n", x->id, x->name, status, err);
  }
  return tune_ok;
}

static void hw_key(const tune_fleet_hw *h, char *out, size_t len) {
  snprintf(out, len, "%s, %d GPUs, sm %d, %s, driver %s, CUDA %s, NCCL %s", h->gpu_model, h->gpu_count, h->sm,
           h->topo, h->driver, h->cuda, h->nccl);
}

/* The ok nodes of hw[0..n) whose hardware key is a. */
static int hw_votes(const tune_fleet_hw *hw, int n, const char *a) {
  char b[512];
  int votes = 0;
  for (int k = 0; k < n; k++) {
    hw_key(&hw[k], b, sizeof(b));
    votes += strcmp(hw[k].status, "ok") == 0 && strcmp(a, b) == 0;
  }
  return votes;
}

/* The hardware and software most ok nodes share; every ok node with other
 * ones is recorded as a mismatch (and leaves the consensus). *major is the
 * index of a node of the majority, -1 if no node is ok. */
static tune_result fleet_majority(tune_store *st, int64_t fid, tune_fleet_hw *hw, int n, int *major, int *mismatched) {
  int best = 0, tie = 0;
  char a[512] = "", b[512], what[1200];
  *major = -1;
  *mismatched = 0;
  for (int i = 0; i < n; i++) {
    if (strcmp(hw[i].status, "ok") != 0) continue;
    hw_key(&hw[i], b, sizeof(b));
    int votes = hw_votes(hw, n, b);
    /* Another group as large: no majority. The first node's group (the
     * lowest id among them) still makes the consensus, and it is said. */
    if (votes == best && strcmp(a, b) != 0) tie = 1;
    if (votes > best) best = votes, *major = i, tie = 0, snprintf(a, sizeof(a), "%s", b);
  }
  if (*major < 0) return tune_ok;
  if (tie)
    printf("fleet: no hardware majority: groups of %d nodes each; the consensus follows node %d's (%s)\n",
           best, hw[*major].node, hw[*major].name);
  for (int i = 0; i < n; i++) {
    if (strcmp(hw[i].status, "ok") != 0) continue;
    hw_key(&hw[i], b, sizeof(b));
    if (strcmp(a, b) == 0) continue;
    snprintf(what, sizeof(what), "%s; the %s (%d nodes): %s", b,
             tie ? "group of as many, which the consensus follows" : "majority", best, a);
    printf("node %d (%s) differs from the %s: %s\n", hw[i].node, hw[i].name,
           tie ? "nodes the consensus follows (no majority)" : "majority", what);
    TUNE_CHECK(tune_fleet_set_mismatch(st, fid, hw[i].node, what));
    (*mismatched)++;
  }
  return tune_ok;
}

/* ---- consensus ---------------------------------------------------------------- */

/* Whether two cells are one configuration but for path and bytes (a group
 * of the sweep), or but for nothing (one cell measured on several nodes). */
static int same_group(const tune_cfg *a, const tune_cfg *b) {
  return strcmp(a->impl, b->impl) == 0 && a->op == b->op && a->dtype == b->dtype && a->world == b->world &&
         a->in_offset == b->in_offset && a->out_offset == b->out_offset && a->mode == b->mode &&
         a->skew_ns == b->skew_ns;
}

static int same_cell(const tune_cfg *a, const tune_cfg *b) {
  return same_group(a, b) && a->path == b->path && a->bytes == b->bytes;
}

/* One (path, bytes) of the current group: cells[start, end) are its nodes. */
typedef struct {
  dc_path path;
  uint64_t bytes;
  size_t start, end;
  int given;
} fleet_point;

typedef struct {
  const tune_fleet_cell *cells;
  size_t ncells;
  fleet_point *pts;
  size_t npts, cap;
  double *vals;
} replay_src;

static int src_has_group(void *ctx, const tune_cfg *c) {
  replay_src *x = ctx;
  x->npts = 0;
  for (size_t i = 0; i < x->ncells; i++) {
    if (!same_group(&x->cells[i].c, c)) continue;
    fleet_point *p = x->npts ? &x->pts[x->npts - 1] : NULL;
    if (p && p->path == x->cells[i].c.path && p->bytes == x->cells[i].c.bytes) {
      p->end = i + 1;
      continue;
    }
    if (tune_grow((void **)&x->pts, &x->cap, x->npts, sizeof(*x->pts), 256) != tune_ok) return 0;
    x->pts[x->npts++] = (fleet_point){x->cells[i].c.path, x->cells[i].c.bytes, i, i + 1, 0};
  }
  return x->npts > 0;
}

/* Trial t of the fleet at point p: the median over the nodes that have a
 * trial t of their slowest rank's time (a node whose results were wrong
 * there counts as infinitely slow, as its own sweep counted it). */
static double point_sample(replay_src *x, const fleet_point *p, int t) {
  size_t n = 0;
  for (size_t i = p->start; i < p->end; i++) {
    const tune_fleet_cell *c = &x->cells[i];
    if (c->trials > t) x->vals[n++] = c->wrong_elems ? fleet_none_ns : (double)c->slowest[t];
  }
  return n ? tune_median_select(x->vals, n) : fleet_none_ns;
}

static tune_result src_samples(void *ctx, const tune_cfg *c, int ntrials, double *out) {
  replay_src *x = ctx;
  fleet_point *p = NULL;
  for (size_t i = 0; i < x->npts && p == NULL; i++)
    if (x->pts[i].path == c->path && x->pts[i].bytes == c->bytes) p = &x->pts[i];
  for (int t = 0; t < ntrials; t++) out[t] = p ? point_sample(x, p, p->given + t) : fleet_none_ns;
  if (p) p->given += ntrials;
  return tune_ok;
}

/* Node's median at the current group's path and bytes, or 0 (a point's
 * cells are sorted by node). */
static double node_median(const replay_src *x, int node, dc_path path, uint64_t bytes) {
  for (size_t i = 0; i < x->npts; i++) {
    const fleet_point *p = &x->pts[i];
    if (p->path != path || p->bytes != bytes) continue;
    size_t lo = p->start, hi = p->end;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (x->cells[mid].node < node)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo < p->end && x->cells[lo].node == node && !x->cells[lo].wrong_elems) return x->cells[lo].median_ns;
    return 0;
  }
  return 0;
}

/* Every ok node's own header rows, for agreement and regret. */
typedef struct {
  int node;
  dc_threshold_row *rows;
  size_t n;
} own_header;

static const dc_threshold_row *find_row(const dc_threshold_row *rows, size_t n, const dc_threshold_row *key) {
  for (size_t i = 0; i < n; i++)
    if (dc_row_same_key(&rows[i], key)) return &rows[i];
  return NULL;
}

/* For each size the fleet swept in row r's group: the consensus path, the
 * fleet median there, how many nodes' own headers agree; and each node's
 * regret where its own header chose otherwise. */
static tune_result fleet_row_verdict(tune_store *st, int64_t fid, replay_src *x, const dc_threshold_row *r,
                                     const own_header *own, int nown, double *max_regret) {
  uint64_t last = 0;
  for (size_t i = 0; i < x->npts; i++) {
    uint64_t b = x->pts[i].bytes;
    int seen = 0;
    for (size_t k = 0; k < i && !seen; k++) seen = x->pts[k].bytes == b;
    if (seen || b == last) continue;
    last = b;
    dc_path fp = dc_row_path(r, b);
    const tune_fleet_size at = {r->op, r->dtype, r->world, r->align, r->mode, b};
    tune_fleet_consensus_row cr = {at, fp, 0, 0, 0};
    double *fleet_vals = x->vals;
    size_t nv = 0;
    for (int k = 0; k < nown; k++) {
      const dc_threshold_row *o = find_row(own[k].rows, own[k].n, r);
      if (o == NULL) continue;
      cr.nodes++;
      dc_path op = dc_row_path(o, b);
      cr.agree += op == fp;
      double fns = node_median(x, own[k].node, fp, b), ons = node_median(x, own[k].node, op, b);
      if (fns > 0) fleet_vals[nv++] = fns;
      if (op == fp || fns <= 0 || ons <= 0) continue;
      tune_fleet_regret_row rr = {own[k].node, at, op, fp, ons, fns};
      TUNE_CHECK(tune_fleet_put_regret(st, fid, &rr));
      if (fns / ons > *max_regret) *max_regret = fns / ons;
    }
    cr.fleet_ns = nv ? tune_median_select(fleet_vals, nv) : 0;
    TUNE_CHECK(tune_fleet_put_consensus(st, fid, &cr));
  }
  return tune_ok;
}

/* The consensus header's text, written to path and stored with the fleet run. */
static tune_result fleet_write_header(tune_store *st, int64_t fid, const tune_job *job, const tune_fleet_hw *hw,
                                      const dc_threshold_row *rows, size_t n, const char *path) {
  char date[32], *text = NULL;
  tune_utc_iso(date, sizeof(date));
  tune_provenance prov = {.run_id = fid, .db_path = job->db_path, .backend = job->backend,
                          .gpu_model = hw->gpu_model, .gpu_count = hw->gpu_count, .sm = hw->sm,
                          .topo = hw->topo, .driver = hw->driver, .cuda = hw->cuda, .nccl = hw->nccl,
                          .date = date, .git_rev = tune_git_rev(),
                          .tune_version = PACKAGE_VERSION};
  TUNE_CHECK(tune_check_output("the consensus header", path, job->db_path));
  TUNE_CHECK(tune_emit_header(rows, n, &prov, &text));
  tune_result r = tune_emit_write(path, text);
  if (r == tune_ok)
    r = tune_store_put_header(st, fid, path, strcmp(job->backend, "sim") == 0, 0, text, rows, n, NULL);
  free(text);
  return r;
}

/* The consensus over the ok, matching nodes' sweeps. */
static tune_result fleet_consensus(tune_store *st, int64_t fid, const tune_job *job, const tune_fleet_hw *major,
                                   const char *header_path, double *max_regret) {
  tune_fleet_cell *cells = NULL;
  size_t ncells = 0, nrows = 0, nmeasured = 0;
  dc_threshold_row *rows = NULL;
  own_header *own = NULL;
  int nown = 0;
  TUNE_CHECK(tune_fleet_get_cells(st, fid, "sweep", 1, &cells, &ncells));
  replay_src x = {cells, ncells, NULL, 0, 0, malloc((ncells + 1) * sizeof(double))};
  tune_result r = x.vals ? tune_ok : tune_err_system;
  int topo = dc_topo_parse(major->topo);
  tune_replay_source src = {src_has_group, src_samples, &x};
  /* The incumbent the nodes' searches kept: their jobs' previous table, as
   * the first node's before run stored it (none stored: this process's). */
  dc_threshold_row *prev = NULL;
  size_t nprev = 0;
  char db0[4096];
  int64_t sweep0 = 0;
  if (r == tune_ok && ncells > 0) r = tune_fleet_node_db(st, fid, cells[0].node, db0, sizeof(db0), &sweep0);
  if (r == tune_ok && ncells > 0) r = tune_fleet_node_previous(db0, sweep0, &prev, &nprev);
  if (r == tune_ok)
    r = tune_engine_replay(job, major->sm, topo < 0 ? DC_TOPO_NVLINK : (dc_topo)topo, &src,
                           nprev ? prev : NULL, nprev, &rows, &nrows, &nmeasured);
  free(prev);
  if (r == tune_ok) r = fleet_write_header(st, fid, job, major, rows, nrows, header_path);
  /* Own headers of the nodes whose cells took part. */
  own = calloc(ncells + 1, sizeof(*own));
  if (own == NULL && r == tune_ok) r = tune_err_system;
  for (size_t i = 0; r == tune_ok && i < ncells; i++) {
    int seen = 0;
    for (int k = 0; k < nown && !seen; k++) seen = own[k].node == cells[i].node;
    if (seen) continue;
    char db[4096];
    int64_t sweep = 0;
    r = tune_fleet_node_db(st, fid, cells[i].node, db, sizeof(db), &sweep);
    if (r == tune_ok) r = tune_fleet_node_header(db, sweep, &own[nown].rows, &own[nown].n);
    if (r == tune_ok) own[nown++].node = cells[i].node;
  }
  TUNE_CHECK_GOTO(r, r, out);
  TUNE_CHECK_GOTO(tune_store_begin(st), r, out);
  for (size_t i = 0; r == tune_ok && i < nrows; i++) {
    const dc_threshold_row *row = &rows[i];
    if (row->sm != major->sm || row->topo != (topo < 0 ? DC_TOPO_NVLINK : (dc_topo)topo)) continue;
    for (size_t k = 0; k < ncells; k++) {
      tune_cfg c = cells[k].c;
      dc_align al = tune_cfg_align(&c);
      if (c.op != row->op || c.dtype != row->dtype || c.world != row->world || c.mode != row->mode ||
          c.skew_ns != row->skew_ns || al != row->align)
        continue;
      if (src_has_group(&x, &c)) r = fleet_row_verdict(st, fid, &x, row, own, nown, max_regret);
      break;
    }
  }
  if (r == tune_ok) r = tune_store_commit(st);
  if (r != tune_ok) tune_store_rollback(st);
  if (r == tune_ok)
    printf("consensus header: %s (%zu rows from %d nodes, %zu kept from the previous table)\n", header_path,
           nmeasured, nown, nrows - nmeasured);
out:
  for (int k = 0; k < nown; k++) free(own[k].rows);
  free(own);
  free(rows);
  free(x.pts);
  free(x.vals);
  tune_fleet_free_cells(cells, ncells);
  return r;
}

/* ---- outliers ------------------------------------------------------------------ */

/* One cell measured by nodes cells[0..n): the fleet median, the MAD, and
 * each node standing out stored; its ratio to the median into the map. */
static tune_result fleet_cell_outliers(tune_store *st, int64_t fid, const tune_fleet_cell *cells, size_t n,
                                       double *scratch, tune_fleet_map *map, unsigned char *flagged) {
  for (size_t i = 0; i < n; i++) scratch[i] = cells[i].median_ns;
  double med = tune_median_select(scratch, n);
  for (size_t i = 0; i < n; i++) scratch[i] = fabs(cells[i].median_ns - med);
  double mad = tune_median_select(scratch, n);
  /* Identical nodes (a seeded sim) have no spread at all. */
  double floor_ns = med * 1e-6 > 1e-3 ? med * 1e-6 : 1e-3;
  for (size_t i = 0; i < n; i++) {
    const tune_fleet_cell *c = &cells[i];
    double ratio = med > 0 ? c->median_ns / med : 1, score = (c->median_ns - med) / (mad > floor_ns ? mad : floor_ns);
    TUNE_CHECK(tune_fleet_map_add(map, c->c.op, c->node, c->c.bytes, ratio));
    if (n < 3 || score <= fleet_mad_limit || ratio <= fleet_slow_ratio) continue;
    char db[4096];
    int64_t sweep;
    TUNE_CHECK(tune_fleet_node_db(st, fid, c->node, db, sizeof(db), &sweep));
    tune_fleet_outlier_row o = {c, med, mad, score};
    TUNE_CHECK(tune_fleet_put_outlier(st, fid, &o, db));
    tune_fleet_flag fl = {c->node, c->c, "", c->median_ns, med, ratio, score};
    snprintf(fl.impl, sizeof(fl.impl), "%s", c->impl);
    TUNE_CHECK(tune_fleet_map_flag(map, &fl));
    flagged[c->node] = 1;
  }
  return tune_ok;
}

/* Per cell of the after pass (every impl, auto dispatch), the nodes more
 * than fleet_mad_limit MADs and fleet_slow_ratio above the fleet median.
 * *outliers: how many nodes stand out somewhere. */
static tune_result fleet_outliers(tune_store *st, int64_t fid, int nnodes, tune_fleet_map *map, int *outliers) {
  tune_fleet_cell *cells;
  size_t n;
  *outliers = 0;
  TUNE_CHECK(tune_fleet_get_cells(st, fid, "after", 0, &cells, &n));
  double *scratch = malloc((n + 1) * sizeof(*scratch));
  unsigned char *flagged = calloc((size_t)nnodes + 1, 1);
  tune_result r = scratch && flagged ? tune_store_begin(st) : tune_err_system;
  for (size_t i = 0, j; r == tune_ok && i < n; i = j) {
    for (j = i + 1; j < n && same_cell(&cells[j].c, &cells[i].c); j++) continue;
    r = fleet_cell_outliers(st, fid, &cells[i], j - i, scratch, map, flagged);
  }
  if (r == tune_ok) r = tune_store_commit(st);
  else if (scratch && flagged) tune_store_rollback(st);
  for (int k = 0; k < nnodes; k++) *outliers += flagged[k];
  free(scratch);
  free(flagged);
  tune_fleet_free_cells(cells, n);
  return r;
}

/* The nodes that returned wrong results, each named with its first such
 * configuration: their cells stay out of the consensus and the outlier
 * statistics (a node's main job would fail on them), and the fleet fails
 * its gate as for an outlier. *wrong: how many nodes. */
static tune_result fleet_wrong(tune_store *st, int64_t fid, int *wrong) {
  tune_fleet_wrong_node *w = NULL;
  size_t n = 0;
  TUNE_CHECK(tune_fleet_wrong_nodes(st, fid, &w, &n));
  for (size_t i = 0; i < n; i++) {
    char first[512];
    tune_wrong_config_text(&w[i].first, first, sizeof(first));
    printf("node %" PRId64 " (%s) returned wrong results in %" PRId64
           " configuration%s, the first: %s; its database holds them all (configs.wrong_elems)\n",
           w[i].node, w[i].name, w[i].configs, w[i].configs == 1 ? "" : "s", first);
  }
  free(w);
  *wrong = (int)n;
  return tune_ok;
}

tune_result tune_fleet_conclude(tune_store *st, int64_t fid, const tune_job *job, const tune_fleet_node *nodes,
                                int n, const char *header_path, const char *report_dir, int *not_uniform) {
  tune_fleet_hw *hw = NULL;
  tune_fleet_map map = {0};
  int nhw, major, mismatched, outliers = 0, bad = 0, wrong = 0;
  double max_regret = 1.0;
  int64_t t0 = tune_now_ns();
  TUNE_CHECK(tune_fleet_clear_analysis(st, fid));
  TUNE_CHECK(fleet_record(st, fid, nodes, n));
  int64_t tm = tune_now_ns();
  TUNE_CHECK(tune_fleet_get_nodes(st, fid, &hw, &nhw));
  tune_result r = fleet_majority(st, fid, hw, nhw, &major, &mismatched);
  for (int k = 0; k < nhw; k++) bad += strcmp(hw[k].status, "ok") != 0;
  if (r == tune_ok && major < 0) {
    tune_error("no node of the fleet finished its job; see each node's log in its folder");
    r = tune_err_system;
  }
  if (r == tune_ok) r = fleet_consensus(st, fid, job, &hw[major], header_path, &max_regret);
  int64_t t1 = tune_now_ns();
  if (r == tune_ok) r = fleet_outliers(st, fid, nhw, &map, &outliers);
  if (r == tune_ok) r = fleet_wrong(st, fid, &wrong);
  int64_t t2 = tune_now_ns();
  if (r == tune_ok && tune_interrupt_signal()) r = tune_err_interrupted;
  if (r == tune_ok && !job->no_report) r = tune_fleet_report(fid, hw, nhw, &map, header_path, report_dir, job->db_path);
  if (r == tune_ok) {
    printf("fleet: %d nodes, %d ok, %d failed or missing, %d differing from the majority, %d outlier%s,"
           " %d with wrong results; largest regret of the consensus on a node %.3f\n",
           nhw, nhw - bad, bad, mismatched, outliers, outliers == 1 ? "" : "s", wrong, max_regret);
    printf("fleet: merge %.2f s, consensus %.2f s, outliers %.2f s\n", (double)(tm - t0) * 1e-9,
           (double)(t1 - tm) * 1e-9, (double)(t2 - t1) * 1e-9);
  }
  *not_uniform = bad + mismatched + outliers + wrong > 0;
  tune_fleet_map_free(&map);
  free(hw);
  return r;
}

/* ---- the fleet run, and tune merge ------------------------------------------ */

void tune_fleet_path(const char *db_path, int64_t fid, const char *what, char *out, size_t len) {
  char d[PATH_MAX], b[PATH_MAX];
  snprintf(d, sizeof(d), "%s", db_path);
  snprintf(b, sizeof(b), "%s", db_path);
  const char *dir = dirname(d), *base = basename(b);
  size_t n = strlen(base);
  if (n > 3 && strcmp(base + n - 3, ".db") == 0) n -= 3;
  if (strcmp(what, "nodes") == 0)
    snprintf(out, len, "%s/%.*s-nodes/fleet-%" PRId64, dir, (int)n, base, fid);
  else
    snprintf(out, len, "%s/%.*s-fleet-%" PRId64 "%s", dir, (int)n, base, fid,
             strcmp(what, "header") == 0 ? "-thresholds.h" : "-report");
}

/* The job lock of the fleet outputs' names (.<db name>.fleet-names.lock
 * beside --db, <db name> less .db), where the folder is there. */
static tune_result fleet_lock_names(const char *db_path) {
  char d[PATH_MAX], b[PATH_MAX], name[2 * PATH_MAX + 32], what[2 * PATH_MAX + 160];
  int taken;
  snprintf(d, sizeof(d), "%s", db_path);
  snprintf(b, sizeof(b), "%s", db_path);
  const char *dir = dirname(d), *base = basename(b);
  int n = (int)strlen(base);
  if (n > 3 && strcmp(base + n - 3, ".db") == 0) n -= 3;
  /* A name no database's job lock (<db>.lock) is likely to have. One too
   * long for the folder goes without: the header's name, longer, is
   * refused (tune_fleet_check_outputs). */
  if (n + (int)strlen("..fleet-names.lock") > NAME_MAX) return tune_ok;
  snprintf(name, sizeof(name), "%s/.%.*s.fleet-names.lock", dir, n, base);
  snprintf(what, sizeof(what), "the fleet outputs named after %s/%.*s (%.*s-nodes/, %.*s-fleet-*), which fleets of"
           " --db %.*s and of --db %.*s.db share,", dir, n, base, n, base, n, base, n, base, n, base);
  return tune_store_lock_file(name, what, &taken);
}

tune_result tune_fleet_lock(const char *db_path) {
  int taken;
  TUNE_CHECK(tune_store_lock_job(db_path, &taken));
  return fleet_lock_names(db_path);
}

tune_result tune_fleet_open(const char *db_path, tune_store **st) {
  TUNE_CHECK(tune_engine_open_store(db_path, st));
  /* A folder made just now holds the lock of the names only now; refused
   * then, the database made just now (one holding no run) goes. */
  tune_result r = fleet_lock_names(db_path);
  if (r == tune_ok) return tune_ok;
  int empty = 0;
  if (tune_fleet_only_run(*st, 0, &empty) != tune_ok) empty = 0;
  tune_store_close(*st);
  *st = NULL;
  if (empty) tune_store_remove(db_path);
  return r;
}

tune_result tune_fleet_check_outputs(const tune_job *job, int64_t fid) {
  char path[PATH_MAX + 64];
  struct stat sb;
  for (int i = 0; i < 2; i++) {
    if (i == 1 && job->report_dir) break;
    tune_fleet_path(job->db_path, fid, i == 0 ? "header" : "report", path, sizeof(path));
    if (i == 0 && job->report_dir && !job->no_report && tune_same_file(path, job->report_dir)) {
      tune_error("--report-dir %s is where the fleet's consensus header goes; give another folder", job->report_dir);
      return tune_err_arg;
    }
    /* Named after --db: a name that cannot be written is said now, not
     * after every node has measured. */
    TUNE_CHECK(tune_check_name_fits(i == 0 ? "the fleet's consensus header" : "the fleet's report folder", path, 0));
    if (lstat(path, &sb) != 0) continue;
    tune_error("%s is already there, of a fleet run %s does not record (fleet run %" PRId64
               " is its next); tune leaves it alone: move it away, or give another --db",
               path, job->db_path, fid);
    return tune_err_arg;
  }
  return tune_ok;
}

void tune_fleet_file_name(const char *name, char *out, size_t len) {
  size_t i = 0;
  for (; name[i] && i + 1 < len; i++) {
    char c = name[i];
    int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                c == '-' || c == '_';
    out[i] = plain ? c : '_';
  }
  out[i] = '\0';
}

tune_result tune_fleet_check_names(const char *const *names, int n) {
  char a[256], b[256];
  for (int k = 0; k < n; k++)
    for (int j = 0; j < k; j++) {
      tune_fleet_file_name(names[j], a, sizeof(a));
      tune_fleet_file_name(names[k], b, sizeof(b));
      if (strcmp(a, b) != 0) continue;
      tune_error("nodes %d and %d are named '%s' and '%s': both would write the node database %s.db (a node is"
                 " named after its host); give every node a host name of its own",
                 j, k, names[j], names[k], a);
      return tune_err_arg;
    }
  return tune_ok;
}

/* The id the next fleet run of --db will have (1 where there is no --db
 * yet), read without writing it. */
static tune_result merge_next_id(const char *db_path, int64_t *fid) {
  struct stat sb;
  tune_store *st = NULL;
  *fid = 1;
  if (stat(db_path, &sb) != 0) return tune_ok;
  TUNE_CHECK(tune_store_open(db_path, TUNE_STORE_LOOK, &st));
  tune_result r = tune_fleet_next_id(st, fid);
  tune_store_close(st);
  return r;
}

void tune_fleet_options(const tune_job *job, char *out, size_t len) {
  tune_job_options(job, out, len);
  size_t n = strlen(out);
  if (n + 32 < len) snprintf(out + n, len - n, " fleet_nodes_of=%d", job->gpus);
}

tune_result tune_fleet_begin_run(tune_store *st, const tune_job *job, const char *options, int ranks,
                                 int64_t *fleet_id) {
  tune_run_info info = {.kind = "fleet", .host = tune_hostname(), .gpu_model = "fleet (see fleet_nodes)",
                        .gpu_count = ranks, .topo = "fleet", .driver = "", .cuda = "", .nccl = "",
                        .mpi = "Open MPI", .launcher = "mpi", .backend = job->backend,
                        .git_rev = tune_git_rev(), .command_line = job->command_line,
                        .thresholds = "", .seed = (int64_t)job->seed, .options = options};
  TUNE_CHECK(tune_fleet_db_init(st));
  return tune_store_run_begin(st, &info, fleet_id);
}

enum { MERGE_JOB = 512 };

/* Node k of a merge: its name (the file's, less .db) and state, read from
 * its database (which must open); job: the fleet node's job it merges
 * (the node a fleet ran it as and its summary's mark, tune_fleet_node_self),
 * empty for none or a database no fleet node wrote (two main jobs of one
 * seed on one host in one second look alike). */
static tune_result merge_node(const char *options, const char *db, int k, tune_fleet_node *x,
                              char job[static MERGE_JOB]) {
  char b[PATH_MAX];
  int state;
  tune_chain ch;
  snprintf(b, sizeof(b), "%s", db);
  const char *base = basename(b);
  size_t len = strlen(base);
  snprintf(x->name, sizeof(x->name), "%.*s", (int)(len > 3 && strcmp(base + len - 3, ".db") == 0 ? len - 3 : len),
           base);
  snprintf(x->db, sizeof(x->db), "%s", db);
  x->id = k;
  TUNE_CHECK(tune_fleet_node_chain(db, options, &state, &ch));
  job[0] = '\0';
  if (state == TUNE_FLEET_DONE) {
    char self[192];
    x->st.before = ch.before, x->st.sweep = ch.sweep, x->st.after = ch.after;
    TUNE_CHECK(tune_fleet_node_self(db, ch.before, self, sizeof(self)));
    if (*self) snprintf(job, MERGE_JOB, "fleet node %s, on %s", self, ch.host);
  } else {
    x->st.rc = tune_err_arg;
    snprintf(x->st.error, sizeof(x->st.error), "%s holds no finished main job of these options", db);
  }
  return tune_ok;
}

/* What was there before a merge wrote anything, for merge_undo. */
typedef struct {
  int db_there;                  /* --db existed */
  char made[PATH_MAX];           /* the outermost folder of --db's that the merge makes, or "" */
  tune_fleet_report_prior *report; /* the report's files where it goes, once the run has its id */
  int header_free;               /* the header's name was checked free for the run's id */
  int locks;                     /* the job locks held before the merge took its own */
} merge_prior;

static void merge_note(const tune_job *job, merge_prior *p) {
  char d[PATH_MAX];
  struct stat sb;
  p->db_there = lstat(job->db_path, &sb) == 0;
  p->made[0] = '\0';
  snprintf(d, sizeof(d), "%s", job->db_path);
  for (char *dir = dirname(d); lstat(dir, &sb) != 0 && strcmp(dir, ".") != 0 && strcmp(dir, "/") != 0;
       dir = dirname(dir))
    snprintf(p->made, sizeof(p->made), "%s", dir);
}

/* A merge that failed or was stopped leaves nothing it made: its fleet
 * run dropped from --db (or --db removed, with its folders, where the
 * merge made it), its header (its name checked free) and the report's
 * files it wrote (tune_fleet_report_undo) removed. A rerun gets the same
 * run id. Fleet tables made in a --db that had none stay, empty. */
static void merge_undo(tune_store **st, const tune_job *job, int64_t fid, merge_prior *p, const char *header,
                       const char *report) {
  int gone = 1, only = 0;
  if (p->header_free) unlink(header);
  tune_fleet_report_undo(report, p->report);
  p->report = NULL;
  /* Another job may have made --db between the look and the lock: a
   * database holding runs of its own stays. */
  if (!p->db_there && (tune_fleet_only_run(*st, fid, &only) != tune_ok || !only)) p->db_there = 1;
  if (p->db_there) {
    gone = tune_fleet_drop_run(*st, fid) == tune_ok;
  } else {
    char d[PATH_MAX];
    tune_store_close(*st);
    *st = NULL;
    tune_store_remove(job->db_path);
    while (tune_store_job_locks() > p->locks) tune_store_unlock_job();
    snprintf(d, sizeof(d), "%s", job->db_path);
    if (p->made[0])
      for (char *dir = dirname(d); rmdir(dir) == 0 && strcmp(dir, p->made) != 0;) dir = dirname(dir);
  }
  const char *how = tune_interrupt_signal() ? "interrupted" : "failed";
  if (!gone)
    fprintf(stderr, "tune: merge %s: fleet run %" PRId64 " of %s stays unfinished; run the merge again\n", how,
            fid, job->db_path);
  else if (p->db_there)
    fprintf(stderr, "tune: merge %s: fleet run %" PRId64 " removed from %s, with the header and report it wrote;"
            " run the merge again\n", how, fid, job->db_path);
  else
    fprintf(stderr, "tune: merge %s: %s, which it made, removed, with the header and report it wrote; run the"
            " merge again\n", how, job->db_path);
}

/* Every node database of a merge, read before the fleet database is
 * touched: one that does not open, one given twice, or none with a
 * finished main job of these options (node_options) writes nothing. */
static tune_result merge_read_nodes(const char *node_options, char *const *dbs, int n, tune_fleet_node *nodes) {
  tune_result r = tune_ok;
  int done = 0;
  char (*jobs)[MERGE_JOB] = calloc((size_t)n, sizeof(*jobs));
  if (jobs == NULL) r = tune_err_system;
  for (int k = 0; r == tune_ok && k < n; k++) {
    r = merge_node(node_options, dbs[k], k, &nodes[k], jobs[k]);
    done += r == tune_ok && nodes[k].st.rc == tune_ok;
  }
  /* A node counted twice would outvote the others: a file given twice
   * under two names (a copy) holds the very same job. */
  for (int k = 0; r == tune_ok && k < n; k++)
    for (int j = 0; r == tune_ok && j < k; j++)
      if (strcmp(nodes[j].name, nodes[k].name) == 0) {
        tune_error("merge: %s and %s are both node %s (a node is named after its database's file): give each"
                   " node once",
                   dbs[j], dbs[k], nodes[k].name);
        r = tune_err_arg;
      } else if (jobs[k][0] && strcmp(jobs[j], jobs[k]) == 0) {
        tune_error("merge: %s and %s hold the same job (%s): one node's database given twice, a copy "
                   "under another name; give each node once",
                   dbs[j], dbs[k], jobs[k]);
        r = tune_err_arg;
      }
  free(jobs);
  if (r == tune_ok && done == 0) {
    tune_error("merge: no node database holds a finished main job of these options (%s)", node_options);
    r = tune_err_arg;
  }
  return r;
}

tune_result tune_fleet_merge(const tune_job *job, char *const *dbs, int n, int *not_uniform) {
  char options[1200], node_options[1200], header[PATH_MAX + 64], report[PATH_MAX + 64];
  tune_store *st = NULL;
  int64_t fid;
  tune_fleet_node *nodes = calloc((size_t)n, sizeof(*nodes));
  if (nodes == NULL) return tune_err_system;
  tune_interrupt_install();
  tune_fleet_options(job, options, sizeof(options));
  tune_job_options(job, node_options, sizeof(node_options));
  tune_result r = merge_read_nodes(node_options, dbs, n, nodes);
  int64_t checked = 0;
  merge_prior prior = {0};
  merge_note(job, &prior);
  if (r == tune_ok) r = merge_next_id(job->db_path, &checked);
  if (r == tune_ok) r = tune_fleet_check_outputs(job, checked);
  if (r == tune_ok && tune_interrupt_signal()) r = tune_err_interrupted;
  const int locks = tune_store_job_locks();
  if (r == tune_ok) r = tune_fleet_lock(job->db_path);
  if (r == tune_ok) r = tune_fleet_open(job->db_path, &st);
  prior.locks = locks;
  if (r == tune_ok) r = tune_fleet_begin_run(st, job, options, 0, &fid);
  const int begun = r == tune_ok;
  if (begun) {
    tune_fleet_path(job->db_path, fid, "header", header, sizeof(header));
    if (job->report_dir)
      snprintf(report, sizeof(report), "%s", job->report_dir);
    else
      tune_fleet_path(job->db_path, fid, "report", report, sizeof(report));
    /* Another merge may have taken the id checked before the lock. */
    if (fid != checked) r = tune_fleet_check_outputs(job, fid);
    prior.header_free = r == tune_ok;
    if (r == tune_ok && (prior.report = tune_fleet_report_note(report)) == NULL) r = tune_err_system;
  }
  for (int k = 0; r == tune_ok && k < n; k++) {
    tune_fleet_node_row row = {k, nodes[k].name, nodes[k].name, 0, "running", NULL, nodes[k].db};
    r = tune_fleet_put_node(st, fid, &row);
  }
  if (r == tune_ok) r = tune_fleet_conclude(st, fid, job, nodes, n, header, report, not_uniform);
  if (r == tune_ok && tune_interrupt_signal()) r = tune_err_interrupted;
  if (r == tune_ok) r = tune_store_run_finish(st, fid);
  if (r != tune_ok && begun) merge_undo(&st, job, fid, &prior, header, report);
  while (r != tune_ok && st == NULL && tune_store_job_locks() > locks) tune_store_unlock_job();
  if (r == tune_err_interrupted && !begun) fprintf(stderr, "tune: merge interrupted: nothing written\n");
  free(prior.report);
  tune_store_close(st);
  free(nodes);
  return r;
}
