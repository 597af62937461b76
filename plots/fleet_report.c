/* fleet_report.c: tune fleet's report (see fleet_report.h). The heatmap
 * template is plots/fleet.gp, compiled in as the other templates are. */
#include "fleet_report.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fleet_gp.h"
#include "report.h"

tune_result tune_fleet_map_add(tune_fleet_map *m, dc_op op, int node, uint64_t bytes, double ratio) {
  TUNE_CHECK(tune_grow((void **)&m->heat, &m->capheat, m->nheat, sizeof(*m->heat), 4096));
  m->heat[m->nheat++] = (tune_fleet_heat){op, node, bytes, ratio};
  return tune_ok;
}

tune_result tune_fleet_map_flag(tune_fleet_map *m, const tune_fleet_flag *f) {
  TUNE_CHECK(tune_grow((void **)&m->flags, &m->capflags, m->nflags, sizeof(*m->flags), 64));
  tune_fleet_flag *g = &m->flags[m->nflags++];
  *g = *f;
  g->c.impl = NULL;
  return tune_ok;
}

void tune_fleet_map_free(tune_fleet_map *m) {
  free(m->heat);
  free(m->flags);
  memset(m, 0, sizeof(*m));
}

static int cmp_heat(const void *a, const void *b) {
  const tune_fleet_heat *x = a, *y = b;
  if (x->op != y->op) return x->op < y->op ? -1 : 1;
  if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
  return (x->node > y->node) - (x->node < y->node);
}

/* gnuplot -d -c fleet.gp BASE TITLE NSIZES NNODES in dir; 0 if it drew
 * BASE.png (an older one goes first, so it cannot pass for it). */
static int fleet_gnuplot(const char *gnuplot, const char *dir, const char *base, const char *title, int nsizes,
                         int nnodes) {
  char ns[16], nn[16], png[PATH_MAX];
  snprintf(ns, sizeof(ns), "%d", nsizes);
  snprintf(nn, sizeof(nn), "%d", nnodes);
  snprintf(png, sizeof(png), "%s/%s.png", dir, base);
  if (tune_remove_old("fleet report", png) != tune_ok) return -1;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (chdir(dir) != 0) _exit(127);
    FILE *f = freopen("gnuplot.log", "a", stderr);
    (void)f;
    char *argv[] = {(char *)gnuplot, "-d", "-c", "fleet.gp", (char *)base, (char *)title, ns, nn, NULL};
    execv(gnuplot, argv);
    _exit(127);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  struct stat sb;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 && stat(png, &sb) == 0 && sb.st_size > 0 ? 0 : -1;
}

/* The files the report writes in dir, or has gnuplot write: fleet.gp,
 * report.md, gnuplot.log and each op's heatmap_OP.{dat,png} and
 * heatmap_OP_tics.gp. File i of FLEET_REPORT_FILES into out. */
enum { FLEET_REPORT_FIXED = 3, FLEET_REPORT_FILES = FLEET_REPORT_FIXED + 3 * DC_OP_COUNT };
static void fleet_report_file(const char *dir, int i, char out[static PATH_MAX]) {
  static const char *const fixed[FLEET_REPORT_FIXED] = {"fleet.gp", "report.md", "gnuplot.log"};
  static const char *const heat[3] = {"%s/heatmap_%s.dat", "%s/heatmap_%s.png", "%s/heatmap_%s_tics.gp"};
  if (i < FLEET_REPORT_FIXED)
    snprintf(out, PATH_MAX, "%s/%s", dir, fixed[i]);
  else
    snprintf(out, PATH_MAX, heat[(i - FLEET_REPORT_FIXED) % 3], dir,
             dc_op_name((dc_op)((i - FLEET_REPORT_FIXED) / 3)));
}

/* None may be the database by any name (a link in the folder to it, a
 * hard link): each is written whole over its target. */
tune_result tune_fleet_report_check(const char *dir, const char *db_path) {
  char path[PATH_MAX];
  for (int i = 0; i < FLEET_REPORT_FILES; i++) {
    fleet_report_file(dir, i, path);
    TUNE_CHECK(tune_check_output("fleet report file", path, db_path));
  }
  return tune_ok;
}

struct tune_fleet_report_prior {
  int dir_there;
  struct {
    int there;
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
  } file[FLEET_REPORT_FILES];
};

tune_fleet_report_prior *tune_fleet_report_note(const char *dir) {
  char path[PATH_MAX];
  struct stat sb;
  tune_fleet_report_prior *p = calloc(1, sizeof(*p));
  if (p == NULL) return NULL;
  p->dir_there = lstat(dir, &sb) == 0;
  for (int i = 0; i < FLEET_REPORT_FILES; i++) {
    fleet_report_file(dir, i, path);
    if (lstat(path, &sb) != 0) continue;
    p->file[i].there = 1;
    p->file[i].dev = sb.st_dev;
    p->file[i].ino = sb.st_ino;
    p->file[i].mtime = sb.st_mtim;
  }
  return p;
}

void tune_fleet_report_undo(const char *dir, tune_fleet_report_prior *p) {
  char path[PATH_MAX];
  struct stat sb;
  if (p == NULL) return;
  for (int i = 0; i < FLEET_REPORT_FILES; i++) {
    fleet_report_file(dir, i, path);
    if (lstat(path, &sb) != 0) continue;
    int same = p->file[i].there && sb.st_dev == p->file[i].dev && sb.st_ino == p->file[i].ino &&
               sb.st_mtim.tv_sec == p->file[i].mtime.tv_sec && sb.st_mtim.tv_nsec == p->file[i].mtime.tv_nsec;
    if (!same) unlink(path);
  }
  if (!p->dir_there) rmdir(dir);
  free(p);
}

/* One op's heatmap: data, tics, and the PNG. heat[0..n) are the op's,
 * sorted by size then node. */
static tune_result fleet_heatmap(const char *gnuplot, const char *dir, dc_op op, const tune_fleet_heat *heat,
                                 size_t n, int nnodes, FILE *md) {
  char base[64], path[PATH_MAX], sz[32];
  snprintf(base, sizeof(base), "heatmap_%s", dc_op_name(op));
  snprintf(path, sizeof(path), "%s/%s.dat", dir, base);
  tune_output o;
  TUNE_CHECK(tune_output_open(path, &o));
  FILE *f = o.f;
  char tics[8192] = "set xtics (";
  size_t used = strlen(tics);
  int nsizes = 0;
  for (size_t i = 0, j; i < n; i = j) {
    /* Per node, the largest ratio over the op's configurations here. */
    for (j = i; j < n && heat[j].bytes == heat[i].bytes; j++) continue;
    for (size_t k = i, e; k < j; k = e) {
      double worst = heat[k].ratio;
      for (e = k; e < j && heat[e].node == heat[k].node; e++)
        if (heat[e].ratio > worst) worst = heat[e].ratio;
      fprintf(f, "%d %d %.6f\n", nsizes, heat[k].node, worst);
    }
    if (used + 48 < sizeof(tics))
      used += (size_t)snprintf(tics + used, sizeof(tics) - used, "%s\"%s\" %d", nsizes ? ", " : "",
                               tune_format_size(heat[i].bytes, sz, sizeof(sz)), nsizes);
    nsizes++;
  }
  TUNE_CHECK(tune_output_close(&o, tune_ok)); /* which reports a failed write */
  snprintf(tics + used, sizeof(tics) - used, ") rotate by 45 right\n");
  snprintf(path, sizeof(path), "%s/%s_tics.gp", dir, base);
  TUNE_CHECK(tune_write_file(path, tics, 0644));
  char title[96];
  snprintf(title, sizeof(title), "%s: node median / fleet median (after pass)", dc_op_name(op));
  if (gnuplot && fleet_gnuplot(gnuplot, dir, base, title, nsizes, nnodes) == 0)
    fprintf(md, "![%s](%s.png)\n\n", title, base);
  else
    fprintf(md, "(%s: no gnuplot, or it failed -- see gnuplot.log; the data is %s.dat)\n\n", title, base);
  return tune_ok;
}

static void fleet_md_nodes(FILE *md, const tune_fleet_hw *hw, int nhw) {
  fprintf(md, "## Nodes\n\n| node | name | status | GPU | driver | CUDA | NCCL | topology |\n"
              "| ---: | --- | --- | --- | --- | --- | --- | --- |\n");
  for (int k = 0; k < nhw; k++) {
    /* Node names come from hosts and, in a merge, from file names. */
    char t[7][2 * sizeof(hw[k].name)];
    fprintf(md, "| %d | %s | %s | %s x%d (sm %d) | %s | %s | %s | %s |\n", hw[k].node,
            tune_md_text(t[0], sizeof(t[0]), hw[k].name), tune_md_text(t[1], sizeof(t[1]), hw[k].status),
            tune_md_text(t[2], sizeof(t[2]), hw[k].gpu_model), hw[k].gpu_count, hw[k].sm,
            tune_md_text(t[3], sizeof(t[3]), hw[k].driver), tune_md_text(t[4], sizeof(t[4]), hw[k].cuda),
            tune_md_text(t[5], sizeof(t[5]), hw[k].nccl), tune_md_text(t[6], sizeof(t[6]), hw[k].topo));
  }
  fprintf(md, "\nErrors of failed nodes, and what sets a node apart from the majority: the fleet_nodes table"
              " (error, mismatch).\n\n");
}

static void fleet_md_flags(FILE *md, const tune_fleet_map *m, int nok) {
  fprintf(md, "## Outlier nodes\n\nA node stands out at a configuration when its median is more than 5 median"
              " absolute deviations above the fleet median and more than 10%% slower than it.\n\n");
  if (nok < 3) {
    fprintf(md, "Not judged: %d node%s finished, and with fewer than 3 each is as far from their median as"
                " the other.\n\n", nok, nok == 1 ? "" : "s");
    return;
  }
  if (m->nflags == 0) {
    fprintf(md, "None.\n\n");
    return;
  }
  fprintf(md, "| node | impl | op | dtype | world | mode | bytes | node us | fleet us | ratio | MADs |\n"
              "| ---: | --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n");
  for (size_t i = 0; i < m->nflags; i++) {
    const tune_fleet_flag *f = &m->flags[i];
    fprintf(md, "| %d | %s | %s | %s | %d | %s | %" PRIu64 " | %.2f | %.2f | %.3f | %.1f |\n", f->node, f->impl,
            dc_op_name(f->c.op), dc_dtype_name(f->c.dtype), f->c.world, dc_mode_name(f->c.mode), f->c.bytes,
            f->node_ns * 1e-3, f->fleet_ns * 1e-3, f->ratio, f->score);
  }
  fprintf(md, "\n");
}

/* tune_fleet_report once its folder is there and held. */
static tune_result fleet_report_write(int64_t fleet_id, const tune_fleet_hw *hw, int nhw, const tune_fleet_map *m,
                                      const char *header_path, const char *dir) {
  char path[PATH_MAX], gnuplot[PATH_MAX];
  snprintf(path, sizeof(path), "%s/fleet.gp", dir);
  TUNE_CHECK(tune_write_file(path, tune_gp_fleet, 0644));
  int have_gnuplot = tune_report_find_gnuplot(gnuplot, sizeof(gnuplot)) == tune_ok;
  tune_fleet_heat *heat = malloc((m->nheat + 1) * sizeof(*heat));
  if (heat == NULL) return tune_err_system;
  memcpy(heat, m->heat, m->nheat * sizeof(*heat));
  qsort(heat, m->nheat, sizeof(*heat), cmp_heat);
  snprintf(path, sizeof(path), "%s/report.md", dir);
  tune_output o;
  tune_result r = tune_output_open(path, &o);
  if (r != tune_ok) {
    free(heat);
    return r;
  }
  FILE *md = o.f;
  fprintf(md, "# Fleet run %" PRId64 "\n\nConsensus header: `%s`.\n\n", fleet_id, header_path);
  fleet_md_nodes(md, hw, nhw);
  int nok = 0;
  for (int k = 0; k < nhw; k++) nok += strcmp(hw[k].status, "ok") == 0;
  fleet_md_flags(md, m, nok);
  fprintf(md, "## Heatmaps\n\n");
  for (size_t i = 0, j; r == tune_ok && i < m->nheat; i = j) {
    for (j = i; j < m->nheat && heat[j].op == heat[i].op; j++) continue;
    r = fleet_heatmap(have_gnuplot ? gnuplot : NULL, dir, heat[i].op, heat + i, j - i, nhw, md);
  }
  r = tune_output_close(&o, r);
  free(heat);
  for (size_t i = 0; r == tune_ok && i < m->nflags; i++) {
    int first = 1;
    for (size_t k = 0; k < i && first; k++) first = m->flags[k].node != m->flags[i].node;
    for (int k = 0; first && k < nhw; k++)
      if (hw[k].node == m->flags[i].node) printf("outlier node %d (%s)\n", hw[k].node, hw[k].name);
  }
  if (r == tune_ok && nok < 3)
    printf("outlier nodes not judged: %d node%s finished, fewer than 3\n", nok, nok == 1 ? "" : "s");
  if (r == tune_ok) printf("fleet report: %s/report.md\n", dir);
  return r;
}

tune_result tune_fleet_report(int64_t fleet_id, const tune_fleet_hw *hw, int nhw, const tune_fleet_map *m,
                              const char *header_path, const char *dir, const char *db_path) {
  TUNE_CHECK(tune_fleet_report_check(dir, db_path));
  TUNE_CHECK(tune_make_dirs("the fleet report", dir, dir));
  /* Another report into this folder finishes first: none mixes files. */
  int hold;
  TUNE_CHECK(tune_hold_folder("fleet report", dir, &hold));
  tune_result r = fleet_report_write(fleet_id, hw, nhw, m, header_path, dir);
  if (hold >= 0) close(hold);
  return r;
}
