/* test_report.c: tune report end to end on a seeded fixture database -- every
 * plot drawn in PNG and SVG, report.md embedding them with the right medians
 * and speedups, and the refusals: mismatched pairs, unknown or wrong-kind
 * runs, foreign databases, a missing or failing gnuplot. Skips (77) where no
 * gnuplot is installed. */
#include <ftw.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dc_table.h"
#include "report.h"
#include "store.h"
#include "tap.h"
#include "test_schema_sql.h"
#include "tune.h"

static char tmp_dir[] = "/tmp/test_report.XXXXXX";

enum { BEFORE = 1, SWEEP = 2, AFTER = 3 };
static const dc_op ops[] = {DC_OP_ALL_GATHER, DC_OP_ALL_REDUCE};
static const int64_t worlds[] = {2, 4};
#define NOPS (sizeof(ops) / sizeof(ops[0]))
#define NWORLDS (sizeof(worlds) / sizeof(worlds[0]))
#define NSIZES 11 /* 1K .. 1M */
/* Buffer offsets per alignment class: unaligned has two, so the report has
 * to pick one figure per size (the worst); reg16 is offset 0 in registered
 * windows (detcoll_reg only). */
static const struct {
  const char *align;
  int in_off, out_off;
} offsets[] = {{"align16", 0, 0}, {"unaligned", 2, 0}, {"unaligned", 8, 4}, {"reg16", 0, 0}};
#define NOFFSETS (sizeof(offsets) / sizeof(offsets[0]))

static sqlite3 *db;

static void sql(const char *text) {
  char *err = NULL;
  if (sqlite3_exec(db, text, NULL, NULL, &err) != SQLITE_OK) {
    printf("Bail out! SQL failed: %s\n%s\n", err ? err : "?", text);
    exit(1);
  }
}

/* A median in ns, a seeded function of everything that names the config, so
 * checks can recompute it: alpha + bytes / beta with +-10% noise, scaled per
 * run (the before run slower than after, NCCL slower still). */
static double median_ns(int64_t run, const char *impl, const char *path, dc_op op, int64_t world,
                        int64_t bytes, int off) {
  tune_rng r;
  uint64_t h = 1469598103934665603ull;
  char key[128];
  snprintf(key, sizeof(key), "%lld/%s/%s/%d/%lld/%lld/%d", (long long)run, impl, path, (int)op,
           (long long)world, (long long)bytes, off);
  for (const char *p = key; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  tune_rng_seed(&r, h);
  double alpha = 3000 + 400 * (double)world + 1000 * (double)dc_path_parse(path);
  double beta = 2.0 + (double)(dc_path_parse(path) > 0 ? dc_path_parse(path) : 1);
  double t = (alpha + (double)bytes / beta) * (0.9 + 0.2 * tune_rng_uniform(&r));
  if (strcmp(impl, "nccl") == 0) t = t * 1.6 + 3000;
  if (strcmp(impl, "nccl_symm") == 0) t = t * 1.3 + 2000;
  if (run == BEFORE) t *= 1.25;
  return t;
}

static void add_run(int64_t id, const char *kind, const char *gpu, int64_t parent) {
  char q[1024], par[32] = "NULL";
  if (parent) snprintf(par, sizeof(par), "%lld", (long long)parent);
  snprintf(q, sizeof(q),
           "INSERT INTO runs VALUES (%lld, '%s', '2026-11-29T09:00:00Z', '2026-11-29T09:30:00Z',"
           " 'node1', '%s', 4, 90, 'nvlink', '560.35', '12.6', '2.23.4', 'Open MPI 4.1', 'threads',"
           " 'gpu', 'abc123', 'tune --gpus 4 | tee log', 'default', 42, %s, NULL)",
           (long long)id, kind, gpu, par);
  sql(q);
}

/* Configs of one run: impl and path for every op, world in ws, size and
 * offset of class align (NULL: align16 and unaligned); skip_world/skip_bytes
 * leave one config out (0: none). */
static void add_configs(int64_t run, const char *impl, const char *path, const char *align,
                        const int64_t *ws, size_t nws, int64_t skip_world, int64_t skip_bytes) {
  static const char q[] =
      "INSERT INTO configs (run_id, impl, op, path, chosen_path, dtype, world, bytes, in_offset,"
      " out_offset, align, mode, skew_ns, skew_rank, trials, warmup, wrong_elems, median_ns,"
      " p10_ns, p90_ns) VALUES (?1, ?2, ?3, ?4, ?4, 'bf16', ?5, ?6, ?7, ?8, ?9, 'eager', 0, -1,"
      " 50, 5, 0, ?10, ?10 * 0.95, ?10 * 1.1)";
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) exit(1);
  for (size_t o = 0; o < NOPS; o++)
    for (size_t w = 0; w < nws; w++)
      for (int s = 0; s < NSIZES; s++)
        for (size_t f = 0; f < NOFFSETS; f++) {
          int64_t bytes = (int64_t)1024 << s;
          if (ws[w] == skip_world && bytes == skip_bytes) continue;
          if (align ? strcmp(offsets[f].align, align) != 0
                    : strcmp(offsets[f].align, "reg16") == 0)
            continue;
          sqlite3_bind_int64(st, 1, run);
          sqlite3_bind_text(st, 2, impl, -1, SQLITE_STATIC);
          sqlite3_bind_text(st, 3, dc_op_name(ops[o]), -1, SQLITE_STATIC);
          sqlite3_bind_text(st, 4, path, -1, SQLITE_STATIC);
          sqlite3_bind_int64(st, 5, ws[w]);
          sqlite3_bind_int64(st, 6, bytes);
          sqlite3_bind_int(st, 7, offsets[f].in_off);
          sqlite3_bind_int(st, 8, offsets[f].out_off);
          sqlite3_bind_text(st, 9, offsets[f].align, -1, SQLITE_STATIC);
          sqlite3_bind_double(st, 10, median_ns(run, impl, path, ops[o], ws[w], bytes, (int)f));
          if (sqlite3_step(st) != SQLITE_DONE) {
            printf("Bail out! insert config: %s\n", sqlite3_errmsg(db));
            exit(1);
          }
          sqlite3_reset(st);
        }
  sqlite3_finalize(st);
}

/* The sweep: every forced path at align16 (detcoll, the paths that need no
 * registration) and at reg16 (detcoll_reg, every path), a crossover between
 * each pair of neighbouring paths, and regret rows for the after run. */
static void add_sweep(void) {
  tune_rng r;
  char q[1024];
  tune_rng_seed(&r, 7);
  add_run(SWEEP, "sweep", "NVIDIA H200", BEFORE);
  for (int reg = 0; reg < 2; reg++)
  for (size_t o = 0; o < NOPS; o++) {
    const char *impl = reg ? "detcoll_reg" : "detcoll", *align = reg ? "reg16" : "align16";
    dc_path all[DC_PATH_COUNT], paths[DC_PATH_COUNT];
    int np = 0, nall = dc_op_paths(ops[o], all);
    for (int p = 0; p < nall; p++)
      if (reg || !dc_path_needs_reg(ops[o], all[p])) paths[np++] = all[p];
    for (int p = 0; p < np; p++)
      for (size_t w = 0; w < NWORLDS; w++)
        for (int s = 0; s < NSIZES; s++) {
          int64_t bytes = (int64_t)1024 << s;
          snprintf(q, sizeof(q),
                   "INSERT INTO configs (run_id, impl, op, path, chosen_path, dtype, world, bytes,"
                   " in_offset, out_offset, align, mode, skew_ns, skew_rank, trials, warmup,"
                   " wrong_elems, median_ns, p10_ns, p90_ns) VALUES (%d, '%s', '%s', '%s',"
                   " '%s', 'bf16', %lld, %lld, 0, 0, '%s', 'eager', 0, -1, 50, 5, 0, %.3f,"
                   " %.3f, %.3f)",
                   SWEEP, impl, dc_op_name(ops[o]), dc_path_name(paths[p]), dc_path_name(paths[p]),
                   (long long)worlds[w], (long long)bytes, align,
                   median_ns(SWEEP, impl, dc_path_name(paths[p]), ops[o], worlds[w], bytes, 0),
                   1.0, 2.0);
          sql(q);
        }
    for (int p = 0; p + 1 < np; p++)
      for (size_t w = 0; w < NWORLDS; w++) {
        int64_t bytes = (int64_t)1024 << (reg ? 2 + 2 * p + (int)w : 3 + 3 * p + (int)w);
        double diff = -500 - 1000 * tune_rng_uniform(&r);
        snprintf(
            q, sizeof(q),
            "INSERT INTO crossovers (run_id, op, dtype, world, align, mode, skew_ns, path_below,"
            " path_above, bytes, lo_bytes, hi_bytes, diff_ns, ci_lo_ns, ci_hi_ns, confidence,"
            " decided) VALUES (%d, '%s', 'bf16', %lld, '%s', 'eager', 0, '%s', '%s', %lld,"
            " %lld, %lld, %.3f, %.3f, %.3f, 0.95, 1)",
            SWEEP, dc_op_name(ops[o]), (long long)worlds[w], align, dc_path_name(paths[p]),
            dc_path_name(paths[p + 1]), (long long)bytes, (long long)bytes,
            (long long)(bytes + bytes / 2), diff, diff * 1.3, diff * 0.7);
        sql(q);
      }
    for (size_t w = 0; w < NWORLDS; w++)
      for (int s = 0; s < NSIZES; s++) {
        double regret = 1.0 + 0.3 * tune_rng_uniform(&r);
        snprintf(q, sizeof(q),
                 "INSERT INTO regret VALUES (%d, '%s', 'bf16', %lld, '%s', 'eager', %lld,"
                 " '%s', '%s', %.3f, %.3f, %.6f)",
                 AFTER, dc_op_name(ops[o]), (long long)worlds[w], align, (long long)1024 << s,
                 dc_path_name(paths[0]), dc_path_name(paths[s % 3 ? np - 1 : 0]), 5000.0 * regret,
                 5000.0, regret);
        sql(q);
      }
  }
}

static void open_fixture(const char *path) {
  char q[128];
  if (sqlite3_open(path, &db) != SQLITE_OK) {
    printf("Bail out! open %s\n", path);
    exit(1);
  }
  sql(tune_test_schema_sql);
  snprintf(q, sizeof(q), "PRAGMA application_id = %d; PRAGMA user_version = %d;",
           TUNE_STORE_APPLICATION_ID, TUNE_STORE_VERSION);
  sql(q);
  sql("PRAGMA journal_mode = WAL");
}

static int exists(const char *dir, const char *name) {
  char path[512];
  struct stat st;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  return stat(path, &st) == 0;
}

/* PNG and SVG of figure base exist and look like what they claim to be. */
static void check_images(const char *dir, const char *base, const char *md) {
  static const unsigned char png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  char path[512], png[256];
  snprintf(path, sizeof(path), "%s/%s.png", dir, base);
  char *data = tap_slurp(path, NULL);
  tap_ok(data && memcmp(data, png_magic, 8) == 0, "%s.png is a PNG", base);
  free(data);
  snprintf(path, sizeof(path), "%s/%s.svg", dir, base);
  data = tap_slurp(path, NULL);
  tap_ok(data && (strncmp(data, "<?xml", 5) == 0 || strncmp(data, "<svg", 4) == 0) &&
             strstr(data, "</svg>"),
         "%s.svg is an SVG", base);
  free(data);
  snprintf(png, sizeof(png), "(%s.png)", base);
  tap_ok(md && strstr(md, png), "report.md embeds %s.png", base);
}

static tune_result report(int64_t before, int64_t after, const char *dir) {
  char out[512];
  tune_report_opts o;
  char db_path[512];
  snprintf(db_path, sizeof(db_path), "%s/tune.db", tmp_dir);
  snprintf(out, sizeof(out), "%s/%s", tmp_dir, dir);
  o.db_path = db_path;
  o.before_run = before;
  o.after_run = after;
  o.out_dir = out;
  return tune_report_run(&o);
}

/* The table line report.md must carry for one latency point of class align,
 * recomputed from the fixture's model (worst offset within the class; reg16
 * figures: detcoll_reg, beside NCCL and NCCL symm of the align16 buffers;
 * NCCL symm ran at align16 only). */
static void expected_line(dc_op op, int64_t world, int s, const char *align, char *buf,
                          size_t len) {
  int64_t bytes = (int64_t)1024 << s;
  int reg = strcmp(align, "reg16") == 0;
  double v[4] = {0, 0, 0, 0};
  const int64_t runs[4] = {BEFORE, AFTER, AFTER, AFTER};
  const char *dc = reg ? "detcoll_reg" : "detcoll";
  const char *impls[4] = {dc, dc, "nccl", "nccl_symm"};
  char size[32], us[4][32], ratio[3][32];
  for (int k = 0; k < 4; k++) {
    const char *cls = k >= 2 && reg ? "align16" : align;
    for (size_t f = 0; f < NOFFSETS; f++)
      if (strcmp(offsets[f].align, cls) == 0 && (k < 3 || f == 0))
        v[k] = fmax(v[k], median_ns(runs[k], impls[k], "auto", op, world, bytes, (int)f));
    if (v[k] > 0)
      snprintf(us[k], sizeof(us[k]), "%.2f", v[k] * 1e-3);
    else
      snprintf(us[k], sizeof(us[k]), "-");
  }
  for (int k = 0; k < 3; k++) {
    double num = v[k == 0 ? 0 : k + 1];
    if (num > 0)
      snprintf(ratio[k], sizeof(ratio[k]), "%.2fx", num / v[1]);
    else
      snprintf(ratio[k], sizeof(ratio[k]), "-");
  }
  /* algbw and busbw by nccl-tests' formula (S per op, bus factor per op). */
  double S = (double)bytes * (op == DC_OP_ALL_GATHER ? (double)world : 1.0);
  double bus = (op == DC_OP_ALL_REDUCE ? 2.0 : 1.0) * (double)(world - 1) / (double)world;
  char bw[3][32];
  snprintf(bw[0], sizeof(bw[0]), "%.2f", S / v[1]);
  snprintf(bw[1], sizeof(bw[1]), "%.2f", S / v[1] * bus);
  if (v[2] > 0)
    snprintf(bw[2], sizeof(bw[2]), "%.2f", S / v[2] * bus);
  else
    snprintf(bw[2], sizeof(bw[2]), "-");
  tune_format_size((uint64_t)bytes, size, sizeof(size));
  snprintf(buf, len, "| %lld | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |",
           (long long)world, size, us[0], us[1], us[2], us[3], bw[0], bw[1], bw[2], ratio[0],
           ratio[1], ratio[2]);
}

static void check_full_report(const char *dir) {
  char path[512], svg_path[640], base[128], line[512];
  snprintf(path, sizeof(path), "%s/%s/report.md", tmp_dir, dir);
  char *md = tap_slurp(path, NULL);
  snprintf(path, sizeof(path), "%s/%s", tmp_dir, dir);
  tap_ok(md != NULL, "%s/report.md written", dir);
  for (size_t o = 0; o < NOPS; o++) {
    static const char *const aligns[] = {"align16", "unaligned", "reg16"};
    for (int a = 0; a < 3; a++) {
      snprintf(base, sizeof(base), "latency_%s_bf16_eager_%s", dc_op_name(ops[o]), aligns[a]);
      check_images(path, base, md);
    }
    for (int a = 0; a < 3; a += 2) {
      snprintf(base, sizeof(base), "crossover_%s_bf16_eager_%s", dc_op_name(ops[o]), aligns[a]);
      check_images(path, base, md);
    }
  }
  check_images(path, "regret", md);
  snprintf(svg_path, sizeof(svg_path), "%s/crossover_all_reduce_bf16_eager_align16.svg", path);
  char *svg = tap_slurp(svg_path, NULL);
  tap_ok(svg && strstr(svg, "push/single_block 8K") && strstr(svg, "one_shot/two_shot 1M"),
         "crossover plot marks the sweep's thresholds");
  free(svg);
  snprintf(svg_path, sizeof(svg_path), "%s/crossover_all_reduce_bf16_eager_reg16.svg", path);
  svg = tap_slurp(svg_path, NULL);
  tap_ok(svg && strstr(svg, "pipeline/direct 1M") && !strstr(svg, "one_shot/two_shot 1M"),
         "reg16 crossover plot marks the registered sweep's thresholds, not align16's");
  free(svg);
  snprintf(svg_path, sizeof(svg_path), "%s/latency_all_reduce_bf16_eager_reg16.dat", path);
  char *dat = tap_slurp(svg_path, NULL);
  tap_ok(dat && strstr(dat, "# bytes before after NCCL NCCL_symm"),
         "reg16 latency data has the NCCL symm series");
  free(dat);
  snprintf(svg_path, sizeof(svg_path), "%s/latency_all_reduce_bf16_eager_align16.dat", path);
  dat = tap_slurp(svg_path, NULL);
  tap_ok(
      dat &&
          strstr(
              dat,
              " NCCL_symm before_paired after/before_paired after/before_unpaired after/best_NCCL"
              " paired_CI_lo paired_CI_hi\n"),
      "latency data has the ratio columns after/before paired and unpaired, after/best NCCL, the "
      "CI");
  tap_ok(dat && strstr(dat, "\n# yrange ") && strstr(dat, " ratio_yrange ") &&
             strstr(dat, "# world 2") && strstr(dat, "# world 4"),
         "one y range (and one ratio range) for both world panels");
  free(dat);
  snprintf(svg_path, sizeof(svg_path), "%s/latency_all_reduce_bf16_eager_align16.svg", path);
  svg = tap_slurp(svg_path, NULL);
  tap_ok(svg && strstr(svg, "after/best_NCCL") && strstr(svg, "ratio (&lt;1: after faster)") &&
             !strstr(svg, "SIMULATED"),
         "latency figure draws a ratio panel; a gpu run is not marked SIMULATED");
  free(svg);
  snprintf(svg_path, sizeof(svg_path), "%s/crossover_all_reduce_bf16_eager_align16.dat", path);
  dat = tap_slurp(svg_path, NULL);
  tap_ok(dat && strstr(dat, "# thresholds") &&
             strstr(dat, " 2 8192 8192 12288 push/single\\_block 8K 8K..12K"),
         "crossover data holds each threshold's bracket (the band) and its escaped label");
  free(dat);
  snprintf(svg_path, sizeof(svg_path), "%s/crossover_all_reduce_bf16_eager_align16.svg", path);
  svg = tap_slurp(svg_path, NULL);
  tap_ok(svg && strstr(svg, "1  push/single_block 8K  (bracket 8K..12K)") &&
             strstr(svg, "2  single_block/one_shot 64K  (bracket 64K..96K)"),
         "threshold labels are numbered lines of a table under the plot, not overlapping");
  free(svg);
  snprintf(svg_path, sizeof(svg_path), "%s/regret.dat", path);
  dat = tap_slurp(svg_path, NULL);
  tap_ok(dat && strstr(dat, "# worst point (world bytes regret): ") && strstr(dat, "# yrange "),
         "regret data names its worst point and its fitted y range");
  free(dat);
  snprintf(svg_path, sizeof(svg_path), "%s/regret.svg", path);
  svg = tap_slurp(svg_path, NULL);
  tap_ok(svg && strstr(svg, "worst: all_") && strstr(svg, " eager ") && strstr(svg, "(auto "),
         "regret plot names the worst configuration");
  free(svg);
  tap_ok(!exists(path, "crossover_all_reduce_bf16_eager_unaligned.png"),
         "no crossover plot for the unaligned class");
  tap_ok(!exists(path, "report.md.tmp"), "no temporary report left behind");
  expected_line(DC_OP_ALL_REDUCE, 4, 6, "align16", line, sizeof(line));
  tap_ok(md && strstr(md, line), "align16 row has the fixture's medians and speedups: %s", line);
  expected_line(DC_OP_ALL_GATHER, 2, 10, "unaligned", line, sizeof(line));
  tap_ok(md && strstr(md, line), "unaligned row takes the worst offset: %s", line);
  expected_line(DC_OP_ALL_REDUCE, 2, 3, "reg16", line, sizeof(line));
  tap_ok(md && strstr(md, line), "reg16 row: detcoll_reg beside NCCL and NCCL symm: %s", line);
  tap_ok(md && strstr(md, "| all_gather | bf16 | eager | reg16 | 2 | 0 | direct -> copy_engine |"),
         "crossover table lists the registered sweep's direct -> copy_engine");
  tap_ok(
      md &&
          strstr(md,
                 "| all_reduce | bf16 | eager | align16 | 2 | 0 | single_block -> one_shot | 64K |"),
      "crossover table lists the sweep's thresholds");
  tap_ok(md && strstr(md, "## Auto-dispatch regret (after run 3)"), "regret section present");
  /* The summary's share of sizes at the regret target, counted here by SQL
   * of its own; the fixture has sizes on both sides of it. */
  sqlite3_stmt *st = NULL;
  long long within = -1, sizes = -1;
  if (sqlite3_prepare_v2(db, "SELECT SUM(regret <= 1.03), COUNT(*) FROM regret WHERE run_id = 3", -1,
                         &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    within = sqlite3_column_int64(st, 0);
    sizes = sqlite3_column_int64(st, 1);
  }
  sqlite3_finalize(st);
  snprintf(line, sizeof(line), "at most 1.03x at %lld of %lld sizes (eager %lld of %lld); max 1.",
           within, sizes, within, sizes);
  tap_ok(within > 0 && within < sizes && md && strstr(md, line), "the summary's regret share: %s", line);
  /* ... and of the sizes over it, those where auto ran the best path. */
  long long same = -1;
  if (sqlite3_prepare_v2(db,
                         "SELECT SUM(regret > 1.03 AND auto_path = best_path) FROM regret WHERE run_id = 3",
                         -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    same = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  snprintf(line, sizeof(line), "; auto ran the best path itself at %lld of the %lld sizes over 1.03x", same,
           sizes - within);
  tap_ok(same > 0 && same < sizes - within && md && strstr(md, line), "the summary's same-path share: %s", line);
  tap_ok(md && strstr(md, "tune --gpus 4 \\| tee log"), "a '|' in provenance is escaped");
  free(md);
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(p);
}

int main(void) {
  char gp[4096], path[512];
  const int64_t two[] = {2};
  if (tune_report_find_gnuplot(gp, sizeof(gp)) != tune_ok) tap_skip_all("gnuplot is not installed");
  tap_diag("gnuplot: %s", gp);
  if (!mkdtemp(tmp_dir)) {
    printf("Bail out! mkdtemp\n");
    return 1;
  }
  snprintf(path, sizeof(path), "%s/tune.db", tmp_dir);
  open_fixture(path);
  add_run(BEFORE, "before", "NVIDIA H200", 0);
  add_configs(BEFORE, "detcoll", "auto", NULL, worlds, NWORLDS, 0, 0);
  add_configs(BEFORE, "detcoll_reg", "auto", "reg16", worlds, NWORLDS, 0, 0);
  add_configs(BEFORE, "nccl", "auto", NULL, worlds, NWORLDS, 0, 0);
  add_configs(BEFORE, "nccl_symm", "auto", "align16", worlds, NWORLDS, 0, 0);
  add_sweep();
  add_run(AFTER, "after", "NVIDIA H200", SWEEP);
  add_configs(AFTER, "detcoll", "auto", NULL, worlds, NWORLDS, 0, 0);
  add_configs(AFTER, "detcoll_reg", "auto", "reg16", worlds, NWORLDS, 0, 0);
  add_configs(AFTER, "nccl", "auto", NULL, worlds, NWORLDS, 0, 0);
  add_configs(AFTER, "nccl_symm", "auto", "align16", worlds, NWORLDS, 0, 0);

  tap_ok(report(BEFORE, AFTER, "explicit") == tune_ok, "report on runs 1 and 3");
  check_full_report("explicit");
  snprintf(path, sizeof(path), "%s/explicit/report.md", tmp_dir);
  char *md = tap_slurp(path, NULL);
  tap_ok(md && !strstr(md, "SIMULATED"), "a gpu pair is not marked simulated");
  free(md);

  /* Issue 18: pairings of the after run whose previous-table trials ran
   * 10% slower than the before pass (a drift): the report's speedups are
   * the paired ones, with CIs, the unpaired ones beside them, and the
   * drift is stated. */
  char ins[2048];
  snprintf(
      ins, sizeof(ins),
      "INSERT INTO pairs SELECT a.run_id, a.impl, a.op, a.dtype, a.world, a.bytes, a.in_offset,"
      " a.out_offset, a.align, a.mode, a.id, a.id, a.chosen_path, b.chosen_path, 0, a.trials, "
      "a.median_ns,"
      " 1.1 * b.median_ns, a.median_ns / (1.1 * b.median_ns), 0.95 * a.median_ns / (1.1 * "
      "b.median_ns),"
      " 1.05 * a.median_ns / (1.1 * b.median_ns), 0.95 FROM configs a JOIN configs b ON b.run_id = "
      "%d"
      " AND b.impl = a.impl AND b.path = 'auto' AND b.op = a.op AND b.dtype = a.dtype AND b.world "
      "= a.world"
      " AND b.bytes = a.bytes AND b.in_offset = a.in_offset AND b.mode = a.mode"
      " WHERE a.run_id = %d AND a.impl IN ('detcoll', 'detcoll_reg') AND a.path = 'auto'",
      (int)BEFORE, (int)AFTER);
  sql(ins);
  tap_ok(report(BEFORE, AFTER, "paired") == tune_ok, "report on a paired after run");
  snprintf(path, sizeof(path), "%s/paired/report.md", tmp_dir);
  md = tap_slurp(path, NULL);
  tap_ok(
      md && strstr(md, "| before/after paired (x) | paired CI (x) | before/after unpaired (x) |") &&
          strstr(md, "paired median (x)") && strstr(md, "unpaired median (x)"),
      "paired: the tables and the summary show paired speedups beside unpaired ones");
  tap_ok(md && strstr(md, "all_reduce eager: median +10.0%, mean |drift| 10.0%, largest +10.0%"),
         "paired: the report states the 10%% drift it measured");
  {
    /* One point, recomputed: before/after paired = 1.1 * before / after. */
    double b = median_ns(BEFORE, "detcoll", "auto", DC_OP_ALL_REDUCE, 2, 4096, 0);
    double a = median_ns(AFTER, "detcoll", "auto", DC_OP_ALL_REDUCE, 2, 4096, 0);
    char cell[96];
    snprintf(cell, sizeof(cell), "| %.2fx | [%.2f, %.2f] | %.2fx |", 1.1 * b / a,
             1.1 * b / a / 1.05, 1.1 * b / a / 0.95, b / a);
    tap_ok(md && strstr(md, cell), "paired: the speedup and its CI of one point (%s)", cell);
  }
  free(md);
  snprintf(path, sizeof(path), "%s/paired/latency_all_reduce_bf16_eager_align16.svg", tmp_dir);
  md = tap_slurp(path, NULL);
  tap_ok(md && strstr(md, "paired CI"), "paired: the ratio panel draws the CI");
  free(md);
  /* Beside a before run of another job the pairings say nothing: the
   * report is unpaired and says why. */
  add_run(7, "before", "NVIDIA H200", 0);
  add_configs(7, "detcoll", "auto", NULL, worlds, NWORLDS, 0, 0);
  add_configs(7, "detcoll_reg", "auto", "reg16", worlds, NWORLDS, 0, 0);
  tap_ok(report(7, AFTER, "other_before") == tune_ok,
         "report on the after run beside another job's before run");
  snprintf(path, sizeof(path), "%s/other_before/report.md", tmp_dir);
  md = tap_slurp(path, NULL);
  tap_ok(
      md && !strstr(md, "paired (x)") &&
          strstr(md, "its pairings are with the table of its own job's before run 1, not of run 7"),
      "other job's before run: unpaired, and it says why");
  free(md);
  sql("DELETE FROM configs WHERE run_id = 7; DELETE FROM runs WHERE id = 7; DELETE FROM pairs");

  /* A sweep whose crossovers were not kept: the marks come from the
   * segment boundaries of the header it emitted. */
  sql("DELETE FROM crossovers;"
      "INSERT INTO headers VALUES (1, 2, '2026-11-29T09:20:00Z', 'kernels/thresholds.h', 'f00d', 0,"
      " 0, '/* generated */');"
      "INSERT INTO header_rows VALUES (1, 0, 0, 90, 4, 'nvlink', 'all_reduce', 'bf16', 'align16',"
      " 'eager', 0, 32768, 'single_block'), (1, 0, 1, 90, 4, 'nvlink', 'all_reduce', 'bf16',"
      " 'align16', 'eager', 0, -1, 'two_shot');");
  tap_ok(report(BEFORE, AFTER, "header") == tune_ok, "report on a sweep without crossovers");
  snprintf(path, sizeof(path), "%s/header/crossover_all_reduce_bf16_eager_align16.svg", tmp_dir);
  md = tap_slurp(path, NULL);
  tap_ok(md && strstr(md, "single_block/two_shot 32K") && !strstr(md, "one_shot/two_shot"),
         "thresholds marked from the emitted header");
  free(md);
  snprintf(path, sizeof(path), "%s/header/report.md", tmp_dir);
  md = tap_slurp(path, NULL);
  tap_ok(md && strstr(md, "No crossovers recorded for run 2."),
         "report says no crossovers recorded");
  free(md);

  tap_ok(report(0, 0, "latest/nested") == tune_ok,
         "latest before and after picked, nested dir made");
  snprintf(path, sizeof(path), "%s/latest/nested", tmp_dir);
  tap_ok(exists(path, "report.md"), "default runs: report.md written");

  /* Refusals: nothing may be written. */
  add_run(4, "before", "NVIDIA H200", 0);
  add_configs(4, "detcoll", "auto", NULL, two, 1, 0, 0);
  tap_ok(report(4, AFTER, "worlds") == tune_err_arg, "different world sizes refused");
  snprintf(path, sizeof(path), "%s/worlds", tmp_dir);
  tap_ok(!exists(path, "report.md") && !exists(tmp_dir, "worlds"),
         "nothing written for a mismatch");
  add_run(5, "after", "NVIDIA A100-SXM4-80GB", 0);
  add_configs(5, "detcoll", "auto", NULL, worlds, NWORLDS, 0, 0);
  tap_ok(report(BEFORE, 5, "gpu") == tune_err_arg, "different GPU models refused");
  tap_ok(!exists(tmp_dir, "gpu"), "nothing written for a GPU mismatch");
  add_run(6, "before", "NVIDIA H200", 0);
  add_configs(6, "detcoll", "auto", NULL, worlds, NWORLDS, 4, 64 * 1024);
  tap_ok(report(6, AFTER, "grid") == tune_err_arg, "a size missing at one world size refused");
  tap_ok(report(0, 0, "latest_bad") == tune_err_arg, "latest runs (6 and 5) are checked too");
  tap_ok(report(99, AFTER, "x") == tune_err_arg, "unknown run refused");
  tap_ok(report(SWEEP, AFTER, "x") == tune_err_arg, "a sweep run as the before run refused");
  tap_ok(report(-1, AFTER, "x") == tune_err_arg, "negative run id refused");
  tap_ok(!exists(tmp_dir, "x"), "nothing written for bad run ids");

  tap_ok(setenv("GNUPLOT", "/nonexistent/gnuplot", 1) == 0, "GNUPLOT=/nonexistent");
  tap_ok(report(BEFORE, AFTER, "nognuplot") == tune_err_system, "missing gnuplot is an error");
  tap_ok(!exists(tmp_dir, "nognuplot"), "nothing written without gnuplot");
  tap_ok(setenv("GNUPLOT", "/bin/false", 1) == 0, "GNUPLOT=/bin/false");
  tap_ok(report(BEFORE, AFTER, "false") == tune_err_system, "a failing gnuplot is detected");
  snprintf(path, sizeof(path), "%s/false", tmp_dir);
  tap_ok(!exists(path, "report.md") && !exists(path, "report.md.tmp"),
         "no report.md after a failed plot");
  tap_ok(setenv("GNUPLOT", "/bin/true", 1) == 0, "GNUPLOT=/bin/true");
  tap_ok(report(BEFORE, AFTER, "true") == tune_err_system,
         "a gnuplot that draws nothing is detected");
  tap_ok(unsetenv("GNUPLOT") == 0, "GNUPLOT unset");

  /* A path the sweep pruned: its curve stops early, and the plot says why. */
  sql("DELETE FROM configs WHERE run_id = 2 AND op = 'all_reduce' AND align = 'align16'"
      " AND path = 'single_block' AND world = 2 AND bytes > 65536");
  sql("UPDATE runs SET backend = 'sim' WHERE id IN (1, 2, 3)");
  tap_ok(report(BEFORE, AFTER, "sim") == tune_ok, "report on simulated runs");
  snprintf(path, sizeof(path), "%s/sim/report.md", tmp_dir);
  md = tap_slurp(path, NULL);
  tap_ok(md && strncmp(md, "# detcoll tune report -- SIMULATED", 34) == 0 &&
             strstr(md, "Run(s) 1, 3, 2"),
         "simulated runs marked at the top");
  free(md);
  {
    static const char *const figs[] = {"latency_all_reduce_bf16_eager_align16",
                                       "crossover_all_reduce_bf16_eager_align16", "regret"};
    for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]); i++) {
      snprintf(path, sizeof(path), "%s/sim/%s.svg", tmp_dir, figs[i]);
      char *svg = tap_slurp(path, NULL);
      tap_ok(svg && strstr(svg, ">SIMULATED<") && strstr(svg, "SIMULATED (sim backend"),
             "%s: sim run carries a SIMULATED mark and title", figs[i]);
      /* '_' is an enhanced-text special (a subscript): drawn as written, the
       * title's names show that database text reaches gnuplot escaped. */
      if (i == 0)
        tap_ok(svg && strstr(svg, "all_reduce bf16 eager align16"),
               "database text with enhanced-text specials is drawn as written");
      free(svg);
    }
    snprintf(path, sizeof(path), "%s/sim/crossover_all_reduce_bf16_eager_align16.dat",
             tmp_dir);
    char *dat = tap_slurp(path, NULL);
    tap_ok(dat && strstr(dat, "# pruned (world column bytes us ratio_to_best): 2 2 65536 "),
           "the pruned single_block curve is found where it stops");
    free(dat);
    snprintf(path, sizeof(path), "%s/sim/crossover_all_reduce_bf16_eager_align16.svg",
             tmp_dir);
    char *svg = tap_slurp(path, NULL);
    tap_ok(svg && (strstr(svg, "pruned: ") || strstr(svg, "not measured above")),
           "the plot says why the pruned curve stops");
    free(svg);
    snprintf(path, sizeof(path), "%s/sim/figures.gp", tmp_dir);
    dat = tap_slurp(path, NULL);
    tap_ok(dat && strstr(dat, "tune_simulated = 1"), "figures.gp marks the figures simulated");
    free(dat);
  }
  sql("UPDATE runs SET backend = 'gpu' WHERE id = 1");
  tap_ok(report(BEFORE, AFTER, "mixed") == tune_err_arg, "a gpu/sim pair refused");

  /* Foreign and empty databases. */
  sql("PRAGMA application_id = 1234");
  tap_ok(report(BEFORE, AFTER, "foreign") == tune_err_db, "foreign application_id refused");
  sql("PRAGMA application_id = 1145261900; PRAGMA user_version = 99");
  tap_ok(report(BEFORE, AFTER, "newer") == tune_err_db, "other schema version refused");
  sqlite3_close(db);
  snprintf(path, sizeof(path), "%s/tune.db", tmp_dir);
  tap_ok(remove(path) == 0, "fixture removed");
  open_fixture(path);
  tap_ok(report(0, 0, "empty") == tune_err_arg, "a database without runs refused");
  add_run(BEFORE, "before", "NVIDIA H200", 0);
  tap_ok(report(0, 0, "nodata") == tune_err_arg, "a before run without measurements refused");
  add_configs(BEFORE, "detcoll", "auto", NULL, worlds, NWORLDS, 0, 0);
  tap_ok(report(0, 0, "onesided") == tune_ok, "a before run alone gives a one-sided report");
  snprintf(path, sizeof(path), "%s/onesided/report.md", tmp_dir);
  md = tap_slurp(path, NULL);
  tap_ok(md && strstr(md, "(latency_all_reduce_bf16_eager_unaligned.png)") &&
             strstr(md, "| 2 | 1K | ") && strstr(md, "NCCL was not measured, so there are no") &&
             !strstr(md, "NCCL (us)") && strstr(md, "No sweep run on this GPU model.") &&
             !strstr(md, "## Auto-dispatch regret") && strstr(md, "- regret: none (no after run)"),
         "one-sided report: before column only, no NCCL column, no sweep, no regret");
  free(md);
  sqlite3_close(db);
  {
    tune_report_opts o = {"/nonexistent/dir/tune.db", 0, 0, "/tmp"};
    tap_ok(tune_report_run(&o) == tune_err_db, "missing database file refused");
  }

  if (tap_failed == 0)
    nftw(tmp_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  else
    tap_diag("left %s for inspection", tmp_dir);
  return tap_done();
}
