/* test_emit.c: the thresholds header emitter -- deterministic text whatever
 * the row order, rejection of invalid tables, atomic replacement, a banner
 * that no provenance string can break, and the compile round trip: the
 * header compiled into a small program prints exactly the rows it was made
 * from. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emit.h"
#include "tap.h"

#ifndef TUNE_TEST_CC
#define TUNE_TEST_CC "cc"
#endif
#ifndef TUNE_TEST_KERNELS_DIR
#define TUNE_TEST_KERNELS_DIR "kernels"
#endif

#define NROWS 60

static char scratch[] = "/tmp/test_emit.XXXXXX";

/* A valid row with a fresh random key (not in rows[0..n-1]). */
static void random_row(tune_rng *rng, const dc_threshold_row *rows, int n, dc_threshold_row *r) {
  static const int sms[] = {0, 80, 90, 100}, worlds[] = {2, 4, 8};
  static const int64_t skews[] = {0, 5000, 20000};
  for (;;) {
    memset(r, 0, sizeof(*r));
    r->sm = sms[tune_rng_next(rng) % 4];
    r->world = worlds[tune_rng_next(rng) % 3];
    r->topo = (dc_topo)(tune_rng_next(rng) % DC_TOPO_COUNT);
    r->op = (dc_op)(tune_rng_next(rng) % DC_OP_COUNT);
    r->dtype = (dc_dtype)(tune_rng_next(rng) % DC_DTYPE_COUNT);
    r->align = (dc_align)(tune_rng_next(rng) % DC_ALIGN_COUNT);
    r->mode = (dc_mode)(tune_rng_next(rng) % DC_MODE_COUNT);
    r->skew_ns = skews[tune_rng_next(rng) % 3];
    int dup = 0;
    for (int i = 0; i < n && !dup; i++)
      dup = rows[i].sm == r->sm && rows[i].world == r->world && rows[i].topo == r->topo &&
            rows[i].op == r->op && rows[i].dtype == r->dtype && rows[i].align == r->align &&
            rows[i].mode == r->mode && rows[i].skew_ns == r->skew_ns;
    if (!dup) break;
  }
  dc_path all[DC_PATH_COUNT], paths[DC_PATH_COUNT];
  int np = 0, nall = dc_op_paths(r->op, all);
  for (int i = 0; i < nall; i++)
    if (r->align == DC_ALIGN_REG || !dc_path_needs_reg(r->op, all[i])) paths[np++] = all[i];
  r->nseg = 1 + (int)(tune_rng_next(rng) % DC_MAX_SEGMENTS);
  uint64_t b = 0;
  for (int i = 0; i < r->nseg; i++) {
    b += 16 * (1 + tune_rng_next(rng) % 65536);
    r->seg[i].max_bytes = i + 1 < r->nseg ? b : DC_BYTES_MAX;
    r->seg[i].path = paths[tune_rng_next(rng) % (uint64_t)np];
  }
}

static void shuffle(tune_rng *rng, dc_threshold_row *rows, int n) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)(tune_rng_next(rng) % (uint64_t)(i + 1));
    dc_threshold_row t = rows[i];
    rows[i] = rows[j];
    rows[j] = t;
  }
}

/* The key order the header promises, written independently of emit.c. */
static int cmp_key(const void *pa, const void *pb) {
  const dc_threshold_row *a = pa, *b = pb;
  if (a->sm != b->sm) return a->sm < b->sm ? -1 : 1;
  if (a->world != b->world) return a->world < b->world ? -1 : 1;
  if (a->topo != b->topo) return a->topo < b->topo ? -1 : 1;
  if (a->op != b->op) return a->op < b->op ? -1 : 1;
  if (a->dtype != b->dtype) return a->dtype < b->dtype ? -1 : 1;
  if (a->align != b->align) return a->align < b->align ? -1 : 1;
  if (a->mode != b->mode) return a->mode < b->mode ? -1 : 1;
  if (a->skew_ns != b->skew_ns) return a->skew_ns < b->skew_ns ? -1 : 1;
  return 0;
}

/* The text form both sides print: one line per row. */
#define ROW_FMT "%d %d %d %d %d %d %d %lld %d"
#define SEG_FMT " %llu:%d"

static void print_rows(FILE *f, const char *prov, const dc_threshold_row *rows, int n) {
  fprintf(f, "%s\n", prov);
  for (int i = 0; i < n; i++) {
    const dc_threshold_row *r = &rows[i];
    fprintf(f, ROW_FMT, r->sm, r->world, (int)r->topo, (int)r->op, (int)r->dtype, (int)r->align,
            (int)r->mode, (long long)r->skew_ns, r->nseg);
    for (int k = 0; k < r->nseg; k++)
      fprintf(f, SEG_FMT, (unsigned long long)r->seg[k].max_bytes, (int)r->seg[k].path);
    fputc('\n', f);
  }
}

static const char *const printer_c =
    "#include <stdio.h>\n"
    "#include \"thresholds.h\"\n"
    "int main(void) {\n"
    "  printf(\"%s\\n\", DC_THRESHOLDS_PROVENANCE);\n"
    "  for (size_t i = 0; i < sizeof(dc_thresholds) / sizeof(dc_thresholds[0]); i++) {\n"
    "    const dc_threshold_row *r = &dc_thresholds[i];\n"
    "    printf(\"" ROW_FMT
    "\", r->sm, r->world, (int)r->topo, (int)r->op, (int)r->dtype,\n"
    "           (int)r->align, (int)r->mode, (long long)r->skew_ns, r->nseg);\n"
    "    for (int k = 0; k < r->nseg; k++)\n"
    "      printf(\"" SEG_FMT
    "\", (unsigned long long)r->seg[k].max_bytes, (int)r->seg[k].path);\n"
    "    printf(\"\\n\");\n"
    "  }\n"
    "  return 0;\n"
    "}\n";

static int write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) return 0;
  int ok = fputs(text, f) >= 0;
  return fclose(f) == 0 && ok;
}

/* Entries in dir other than . and .. */
static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  if (d == NULL) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return n;
}

/* Everything from the row table's comment on: the part two runs of the same
 * rows must agree on. */
static const char *table_part(const char *text) {
  const char *p = strstr(text, "/* sm, world, topo");
  return p ? p : "";
}

static const tune_provenance sim_prov = {.run_id = 42,
                                         .db_path = "/var/tmp/tune.db",
                                         .backend = "sim",
                                         .gpu_model = "NVIDIA H200",
                                         .gpu_count = 8,
                                         .sm = 90,
                                         .topo = "nvlink",
                                         .driver = "550.54.15",
                                         .cuda = "12.4",
                                         .nccl = "2.21.5",
                                         .date = "2026-11-29T09:30:00Z",
                                         .git_rev = "0123456789ab",
                                         .tune_version = "0.1.0"};

static void test_text(const dc_threshold_row *rows, int n, tune_rng *rng) {
  dc_threshold_row *copy = malloc((size_t)n * sizeof(*copy));
  memcpy(copy, rows, (size_t)n * sizeof(*copy));
  char *t1 = NULL, *t2 = NULL, *t3 = NULL;
  tune_result r1 = tune_emit_header(copy, (size_t)n, &sim_prov, &t1);
  shuffle(rng, copy, n);
  tune_result r2 = tune_emit_header(copy, (size_t)n, &sim_prov, &t2);
  tap_ok(r1 == tune_ok && r2 == tune_ok && t1 && t2 && strcmp(t1, t2) == 0,
         "%d rows in two orders give identical text", n);
  tap_ok(
      t1 && strstr(t1, "generated by tune 0.1.0 from run 42 of /var/tmp/tune.db -- do not edit") &&
          strstr(t1, "SIMULATED: not measured on a GPU") && strstr(t1, "NVIDIA H200 x 8 (sm 90)") &&
          strstr(t1,
                 "#define DC_THRESHOLDS_PROVENANCE \"run 42 sim NVIDIA H200 sm90 "
                 "2026-11-29T09:30:00Z\"\n") &&
          strstr(t1, "#ifndef DC_THRESHOLDS_H\n#define DC_THRESHOLDS_H\n") &&
          strstr(t1, "#include \"dc_table.h\"") &&
          strstr(t1, "static const dc_threshold_row dc_thresholds[] = {\n"),
      "banner, SIMULATED mark, provenance string, guard and array present");

  tune_provenance gpu = sim_prov;
  gpu.backend = "gpu";
  gpu.run_id = 43;
  gpu.date = "2026-12-01T10:00:00Z";
  tune_result r3 = tune_emit_header(copy, (size_t)n, &gpu, &t3);
  tap_ok(r3 == tune_ok && t1 && t3 && !strstr(t3, "SIMULATED") && strcmp(t1, t3) != 0 &&
             strcmp(table_part(t1), table_part(t3)) == 0,
         "another run of the same rows differs only in banner and provenance");

  /* Row lines appear in key order, written with enum identifiers. */
  qsort(copy, (size_t)n, sizeof(*copy), cmp_key);
  char first[256];
  snprintf(first, sizeof(first), "  {%d, %d, %s, %s, %s, %s, %s, %lld, %d, {", copy[0].sm,
           copy[0].world, dc_topo_enum_name(copy[0].topo), dc_op_enum_name(copy[0].op),
           dc_dtype_enum_name(copy[0].dtype), dc_align_enum_name(copy[0].align),
           dc_mode_enum_name(copy[0].mode), (long long)copy[0].skew_ns, copy[0].nseg);
  const char *tab = t1 ? strstr(t1, "dc_thresholds[] = {\n") : NULL;
  tap_ok(tab && strncmp(tab + strlen("dc_thresholds[] = {\n"), first, strlen(first)) == 0,
         "the first row line is the smallest key: %s", first);
  free(t1);
  free(t2);
  free(t3);
  free(copy);
}

static void test_invalid(const dc_threshold_row *rows) {
  static const char *const what[] = {
      "nseg 0",
      "nseg 5",
      "non-increasing max_bytes",
      "last segment not DC_BYTES_MAX",
      "path of another op",
      "DC_PATH_AUTO",
      "op out of range",
      "world 0",
      "world 16 (past DC_MAX_WORLD)",
      "a max_bytes past INT64_MAX, not DC_BYTES_MAX",
      "direct in an align16 row",
  };
  int ncases = (int)(sizeof(what) / sizeof(what[0]));
  for (int c = 0; c < ncases; c++) {
    dc_threshold_row bad[2] = {rows[0], rows[1]};
    dc_threshold_row *r = &bad[1];
    r->op = DC_OP_ALL_GATHER;
    r->nseg = 2;
    r->seg[0] = (dc_segment){4096, DC_PATH_SINGLE_BLOCK};
    r->seg[1] = (dc_segment){DC_BYTES_MAX, DC_PATH_MULTI_BLOCK};
    switch (c) {
      case 0:
        r->nseg = 0;
        break;
      case 1:
        r->nseg = DC_MAX_SEGMENTS + 1;
        break;
      case 2:
        r->seg[0].max_bytes = DC_BYTES_MAX;
        break;
      case 3:
        r->seg[1].max_bytes = 1 << 20;
        break;
      case 4:
        r->seg[1].path = DC_PATH_ONE_SHOT;
        break;
      case 5:
        r->seg[0].path = DC_PATH_AUTO;
        break;
      case 6:
        r->op = DC_OP_COUNT;
        break;
      case 7:
        r->world = 0;
        break;
      case 8:
        r->world = 16;
        break;
      case 9:
        r->seg[0].max_bytes = (1ull << 63) + 16;
        break;
      default:
        r->align = DC_ALIGN_16;
        r->seg[1].path = DC_PATH_DIRECT;
        break;
    }
    char sentinel, *text = &sentinel; /* must stay untouched */
    tune_result res = tune_emit_header(bad, 2, &sim_prov, &text);
    tap_ok(res == tune_err_arg && text == &sentinel, "rejected: %s", what[c]);
  }
  dc_threshold_row dup[3] = {rows[0], rows[1], rows[0]};
  dup[2].nseg = 1;
  dup[2].seg[0] = (dc_segment){DC_BYTES_MAX, dup[2].seg[0].path};
  char *text = NULL;
  tap_ok(tune_emit_header(dup, 3, &sim_prov, &text) == tune_err_arg && text == NULL,
         "rejected: duplicate key");
  tap_ok(tune_emit_header(rows, 0, &sim_prov, &text) == tune_err_arg && text == NULL,
         "rejected: no rows");
}

static void test_write(void) {
  char dir[512], path[600], sub[600], bad[700], keep[800];
  snprintf(dir, sizeof(dir), "%s/write", scratch);
  snprintf(path, sizeof(path), "%s/thresholds.h", dir);
  if (mkdir(dir, 0755) != 0) {
    tap_ok(0, "mkdir %s: %s", dir, strerror(errno));
    return;
  }
  write_file(path, "old contents\n");
  tune_result r = tune_emit_write(path, "new contents\n");
  char *got = tap_slurp(path, NULL);
  struct stat st;
  int st_ok = stat(path, &st) == 0;
  tap_ok(r == tune_ok && got && strcmp(got, "new contents\n") == 0 && count_entries(dir) == 1,
         "write replaces the file and leaves no temporary");
  tap_ok(st_ok && (st.st_mode & 0777) == 0644, "written file is 0644");
  free(got);

  snprintf(sub, sizeof(sub), "%s/missing", dir);
  snprintf(bad, sizeof(bad), "%s/thresholds.h", sub);
  r = tune_emit_write(bad, "x\n");
  tap_ok(r == tune_err_system && access(sub, F_OK) != 0 && count_entries(dir) == 1,
         "write into a missing directory fails and creates nothing");

  /* A target rename cannot replace (a non-empty directory): the write fails
   * after the temporary was written, which must be removed, and what stood at
   * the path stays as it was. */
  snprintf(bad, sizeof(bad), "%s/blocked.h", dir);
  snprintf(keep, sizeof(keep), "%s/keep", bad);
  mkdir(bad, 0755);
  write_file(keep, "kept\n");
  r = tune_emit_write(bad, "x\n");
  got = tap_slurp(keep, NULL);
  tap_ok(r == tune_err_system && got && strcmp(got, "kept\n") == 0 && count_entries(dir) == 2 &&
             count_entries(bad) == 1,
         "a failed rename leaves the old target and no temporary behind");
  free(got);
  unlink(keep);
  rmdir(bad);
}

/* The banner: a missing or empty provenance string reads "unknown", and no
 * string can end or nest the comment, splice a line (a backslash), start a
 * trigraph or put a control character or DEL in it. */
static void test_banner(const dc_threshold_row *rows, int n) {
  static const char nasty[] = "a\tb\x7f" "c\\d?\?=e*/f/*g\rh";
  tune_provenance p = sim_prov;
  p.driver = NULL;
  p.cuda = "";
  p.topo = p.nccl = p.git_rev = p.db_path = nasty;
  char *text = NULL;
  if (!tap_ok(tune_emit_header(rows, (size_t)n, &p, &text) == tune_ok && text, "a header of nasty provenance")) return;
  const char *end = strstr(text, "\n */\n");
  size_t len = end ? (size_t)(end - text) + 4 : 0;
  int clean = len > 0, opens = 0, closes = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)text[i];
    clean &= (c >= 0x20 && c < 0x7f && c != '\\') || c == '\n';
    clean &= !(c == '?' && text[i + 1] == '?');
    opens += c == '/' && text[i + 1] == '*';
    closes += c == '*' && text[i + 1] == '/';
  }
  tap_ok(clean && opens == 1 && closes == 1,
         "the banner holds no control byte, DEL, backslash or ??, and one comment (%d opened, %d closed)", opens,
         closes);
  tap_ok(strstr(text, " * driver:   unknown\n") && strstr(text, " * CUDA:     unknown\n"),
         "a missing or empty provenance string reads unknown");
  free(text);
}

static void test_compile(const dc_threshold_row *rows, int n) {
  /* Provenance strings a careless emitter would break the build with. */
  tune_provenance hostile = sim_prov;
  hostile.gpu_model = "GPU \"quoted\" */ /* ?\?= \\ back\nslash";
  hostile.db_path = "/tmp/a*/b.db";
  char dir[512], header[600], prog_c[600], prog[600], out[600], cmd[4096];
  snprintf(dir, sizeof(dir), "%s/compile", scratch);
  snprintf(header, sizeof(header), "%s/thresholds.h", dir);
  snprintf(prog_c, sizeof(prog_c), "%s/printer.c", dir);
  snprintf(prog, sizeof(prog), "%s/printer", dir);
  snprintf(out, sizeof(out), "%s/out.txt", dir);
  char *text = NULL;
  if (mkdir(dir, 0755) != 0 || tune_emit_header(rows, (size_t)n, &hostile, &text) != tune_ok ||
      tune_emit_write(header, text) != tune_ok || !write_file(prog_c, printer_c)) {
    tap_ok(0, "compile round trip: setting up %s", dir);
    free(text);
    return;
  }
  snprintf(cmd, sizeof(cmd), "%s -std=c11 -Wall -Wextra -Werror -I'%s' -I'%s' -o '%s' '%s'",
           TUNE_TEST_CC, dir, TUNE_TEST_KERNELS_DIR, prog, prog_c);
  tap_diag("%s", cmd);
  int st = system(cmd);
  if (!tap_ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "the header compiles cleanly")) {
    tap_diag("header was:\n%s", text);
    free(text);
    return;
  }
  snprintf(cmd, sizeof(cmd), "'%s' > '%s'", prog, out);
  st = system(cmd);
  tap_ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "the printer runs");

  dc_threshold_row *sorted = malloc((size_t)n * sizeof(*sorted));
  memcpy(sorted, rows, (size_t)n * sizeof(*sorted));
  qsort(sorted, (size_t)n, sizeof(*sorted), cmp_key);
  char *want = NULL, prov[512];
  size_t wlen = 0;
  FILE *m = open_memstream(&want, &wlen);
  snprintf(prov, sizeof(prov), "run %lld %s %s sm%d %s", (long long)hostile.run_id, hostile.backend,
           hostile.gpu_model, hostile.sm, hostile.date);
  print_rows(m, prov, sorted, n);
  fclose(m);
  char *got = tap_slurp(out, NULL);
  tap_ok(got && strcmp(got, want) == 0,
         "compiled table and provenance equal the in-memory rows (%d rows)", n);
  if (got && strcmp(got, want) != 0) tap_diag("got:\n%s\nwant:\n%s", got, want);
  free(got);
  free(want);
  free(sorted);
  free(text);
}

static void remove_tree(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0) tap_diag("could not remove %s", dir);
}

int main(void) {
  if (mkdtemp(scratch) == NULL) {
    tap_ok(0, "mkdtemp: %s", strerror(errno));
    return tap_done();
  }
  tune_rng rng;
  tune_rng_seed(&rng, 20261129);
  static dc_threshold_row rows[NROWS];
  for (int i = 0; i < NROWS; i++) random_row(&rng, rows, i, &rows[i]);
  /* The largest boundary below DC_BYTES_MAX a row may hold, INT64_MAX. */
  dc_path paths[DC_PATH_COUNT];
  dc_op_paths(rows[0].op, paths);
  rows[0].nseg = 2;
  rows[0].seg[0] = (dc_segment){INT64_MAX, paths[0]};
  rows[0].seg[1] = (dc_segment){DC_BYTES_MAX, paths[1]};
  /* A registered (reg16) row with the paths that need registration; sm 70
   * keeps its key apart from the random ones. */
  rows[1] = (dc_threshold_row){
      70,
      2,
      DC_TOPO_NVLINK,
      DC_OP_ALL_GATHER,
      DC_DTYPE_BF16,
      DC_ALIGN_REG,
      DC_MODE_GRAPH,
      0,
      3,
      {{8192, DC_PATH_PUSH}, {16u << 20, DC_PATH_DIRECT}, {DC_BYTES_MAX, DC_PATH_COPY_ENGINE}}};
  shuffle(&rng, rows, NROWS);
  int seen_align[DC_ALIGN_COUNT] = {0}, seen_path[DC_PATH_COUNT] = {0}, all_seen = 1;
  for (int i = 0; i < NROWS; i++) {
    seen_align[rows[i].align] = 1;
    for (int k = 0; k < rows[i].nseg; k++) seen_path[rows[i].seg[k].path] = 1;
  }
  for (int a = 0; a < DC_ALIGN_COUNT; a++) all_seen &= seen_align[a];
  for (int p = DC_PATH_AUTO + 1; p < DC_PATH_COUNT; p++) all_seen &= seen_path[p];
  tap_ok(all_seen,
         "the rows use every alignment class and every path (the compile round trip covers them)");
  char *reg_text = NULL;
  tap_ok(tune_emit_header(rows, NROWS, &sim_prov, &reg_text) == tune_ok && reg_text &&
             strstr(reg_text,
                    "  {70, 2, DC_TOPO_NVLINK, DC_OP_ALL_GATHER, DC_DTYPE_BF16, DC_ALIGN_REG, "
                    "DC_MODE_GRAPH, "
                    "0, 3, {{8192, DC_PATH_PUSH}, {16777216, DC_PATH_DIRECT}, {DC_BYTES_MAX, "
                    "DC_PATH_COPY_ENGINE}}},\n"),
         "a reg16 row is written with DC_ALIGN_REG, DC_PATH_DIRECT and DC_PATH_COPY_ENGINE");
  free(reg_text);

  test_text(rows, NROWS, &rng);
  test_invalid(rows);
  test_write();
  test_banner(rows, NROWS);
  test_compile(rows, NROWS);
  remove_tree(scratch);
  return tap_done();
}
