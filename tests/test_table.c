/* test_table.c: threshold tables given at run time (dc_table.h): the
 * checker, the parser of table files (a whole header or its rows alone),
 * with a clear reason for every malformed one, the content hash, and the
 * table a comm holds (dc_table_ref: a checked copy, the default from
 * DC_THRESHOLDS_FILE or the compiled-in table), and a backend's two
 * table slots (set_table). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "config.h"
#include "dc_table.h"
#include "dc_table_ref.h"
#include "emit.h"
#include "tap.h"

/* A comm's-eye view of equality: same key, same segments, in any order. */
static int same_table(const dc_threshold_row *a, size_t na, const dc_threshold_row *b, size_t nb) {
  if (na != nb) return 0;
  for (size_t i = 0; i < na; i++) {
    const dc_threshold_row *m = NULL;
    for (size_t k = 0; k < nb && m == NULL; k++)
      if (dc_row_same_key(&a[i], &b[k])) m = &b[k];
    if (m == NULL || m->nseg != a[i].nseg) return 0;
    for (int s = 0; s < m->nseg; s++)
      if (m->seg[s].max_bytes != a[i].seg[s].max_bytes || m->seg[s].path != a[i].seg[s].path) return 0;
  }
  return 1;
}

static void test_header_round_trip(void) {
  tune_provenance prov = {.run_id = 3, .backend = "sim", .gpu_model = "test", .sm = 90};
  char *text = NULL, why[256] = "";
  dc_threshold_row *rows = NULL;
  size_t n = 0;
  int ok = tune_emit_header(dc_builtin_thresholds, dc_builtin_thresholds_count, &prov, &text) == tune_ok &&
           dc_table_parse(text, &rows, &n, why, sizeof(why)) == 0;
  tap_ok(ok && same_table(rows, n, dc_builtin_thresholds, dc_builtin_thresholds_count),
         "a header tune writes parses back to its table (%zu rows) %s", n, why);
  tap_ok(ok && dc_table_hash(rows, n) == dc_table_hash(dc_builtin_thresholds, dc_builtin_thresholds_count),
         "and hashes alike");
  free(rows);
  free(text);
  /* The rows alone, as tune table prints them (names or identifiers). */
  const char *list =
      "/* two rows */ {90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 2, {{4096, push}, {DC_BYTES_MAX, "
      "DC_PATH_TWO_SHOT}}},\n {90, 2, DC_TOPO_NVLINK, DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_ALIGN_16, eager, 0, 1, "
      "{{DC_BYTES_MAX, one_shot}}}\n";
  ok = dc_table_parse(list, &rows, &n, why, sizeof(why)) == 0;
  tap_ok(ok && n == 2 && rows[0].seg[0].max_bytes == 4096 && rows[0].seg[1].path == DC_PATH_TWO_SHOT &&
             rows[1].mode == DC_MODE_EAGER && rows[1].seg[0].path == DC_PATH_ONE_SHOT,
         "a list of rows parses, names and identifiers alike %s", why);
  if (ok) {
    dc_threshold_row swapped[2] = {rows[1], rows[0]};
    uint64_t h = dc_table_hash(rows, 2);
    tap_ok(h == dc_table_hash(swapped, 2), "the hash does not depend on row order");
    swapped[1].seg[0].max_bytes = 4112;
    tap_ok(h != dc_table_hash(swapped, 2), "a moved threshold changes the hash");
  }
  free(rows);
}

static void test_malformed(void) {
  static const struct {
    const char *text, *why;
  } bad[] = {
      {"", "no rows"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 2, {{100, push}, {50, one_shot}}}", "DC_BYTES_MAX"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 2, {{100, push}, {100, one_shot}}}", "DC_BYTES_MAX"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 2, {{100, push}, {DC_BYTES_MAX, direct}}}",
       "registered"},
      {"{90, 2, nvlink, all_gather, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, one_shot}}}", "not one of the op"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, foo}}}", "line 1: expected a path"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 9, {{DC_BYTES_MAX, push}}}", "segment count"},
      {"{90, 0, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, push}}}", "world size"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, -1, 1, {{DC_BYTES_MAX, push}}}", "skew_ns"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, push}}", "expected '}'"},
      {"\n\n{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, push}}} x", "line 3"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, push}}},"
       "{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, one_shot}}}",
       "same key"},
      {"static const dc_threshold_row dc_thresholds[] = {\n"
       "{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, push}}},\n",
       "expected '}'"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    dc_threshold_row *rows = (dc_threshold_row *)&rows; /* must stay untouched */
    size_t n = 77;
    char why[256] = "";
    int r = dc_table_parse(bad[i].text, &rows, &n, why, sizeof(why));
    tap_ok(r == -1 && rows == (dc_threshold_row *)&rows && n == 77 && strstr(why, bad[i].why) != NULL,
           "malformed table %zu refused: %s", i, why);
  }
}

static void test_ref(void) {
  char path[] = "/tmp/test_table_XXXXXX", why[256] = "";
  dc_table_ref t = {0};
  dc_threshold_row row = {90, 2, DC_TOPO_NVLINK, DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_ALIGN_16, DC_MODE_GRAPH,
                          0, 1, {{DC_BYTES_MAX, DC_PATH_ONE_SHOT}}};
  unsetenv(DC_THRESHOLDS_FILE_ENV);
  tap_ok(dc_table_ref_default(&t, why, sizeof(why)) == 0 && t.rows == dc_builtin_thresholds,
         "default table: the compiled-in one");
  tap_ok(dc_table_ref_set(&t, &row, 1, why, sizeof(why)) == 0 && t.n == 1 && t.rows != &row, "a table is copied");
  row.seg[0].path = DC_PATH_TWO_SHOT;
  tap_ok(t.rows[0].seg[0].path == DC_PATH_ONE_SHOT, "changing the caller's rows afterwards changes nothing");
  row.nseg = 0;
  tap_ok(dc_table_ref_set(&t, &row, 1, why, sizeof(why)) == -1 && t.n == 1 &&
             t.rows[0].seg[0].path == DC_PATH_ONE_SHOT,
         "a malformed table is refused (%s), the table kept", why);
  int fd = mkstemp(path);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (f) fputs("{90, 4, nvlink, reduce_scatter, fp32, unaligned, eager, 0, 1, {{DC_BYTES_MAX, multi_block}}}\n", f);
  if (f) fclose(f);
  setenv(DC_THRESHOLDS_FILE_ENV, path, 1);
  tap_ok(dc_table_ref_set(&t, NULL, 0, why, sizeof(why)) == 0 && t.n == 1 && t.rows[0].world == 4,
         "NULL: the default, from DC_THRESHOLDS_FILE");
  unlink(path);
  tap_ok(dc_table_ref_default(&t, why, sizeof(why)) == -1 && strstr(why, DC_THRESHOLDS_FILE_ENV) && t.n == 1,
         "a missing file is refused by name (%s), the table kept", why);
  unsetenv(DC_THRESHOLDS_FILE_ENV);
  dc_table_ref_free(&t);
}

/* A backend's table slots (the sim's, as every backend's): a malformed
 * table is refused and the slot keeps its table; the previous slot has no
 * table until one is given, and NULL takes it away again. */
static void test_backend_slots(void) {
  const tune_backend_opts o = {.gpus = 2, .seed = 1, .max_bytes = 1 << 20, .graph_calls = 1};
  tune_backend *be = NULL;
  dc_threshold_row row = {90,
                          2,
                          DC_TOPO_NVLINK,
                          DC_OP_ALL_REDUCE,
                          DC_DTYPE_BF16,
                          DC_ALIGN_16,
                          DC_MODE_GRAPH,
                          0,
                          1,
                          {{DC_BYTES_MAX, DC_PATH_TWO_SHOT}}};
  tune_cfg cur = {
      "detcoll", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_BF16, 2, 1024, 0, 0, DC_MODE_GRAPH, 0,
      -1};
  tune_cfg prev = cur;
  prev.impl = "detcoll_prev";
  unsetenv(DC_THRESHOLDS_FILE_ENV);
  if (tune_backend_sim.open(&o, &be) != tune_ok) {
    tap_ok(0, "the sim backend opens");
    return;
  }
  dc_path builtin = be->ops->auto_path(be, &cur);
  tap_ok(builtin != DC_PATH_AUTO && builtin != DC_PATH_TWO_SHOT &&
             be->ops->auto_path(be, &prev) == DC_PATH_AUTO,
         "before set_table: the compiled-in table (%s at 1 KiB), no previous table",
         dc_path_name(builtin));
  tap_ok(be->ops->set_table(be, TUNE_TABLE_PREVIOUS, &row, 1) == tune_ok &&
             be->ops->auto_path(be, &prev) == DC_PATH_TWO_SHOT &&
             be->ops->auto_path(be, &cur) == builtin,
         "the previous table is given to its slot only");
  dc_threshold_row bad = row;
  bad.nseg = 0;
  for (int slot = 0; slot < TUNE_TABLE_COUNT; slot++)
    tap_ok(be->ops->set_table(be, (tune_table_slot)slot, &bad, 1) == tune_err_arg &&
               be->ops->auto_path(be, &prev) == DC_PATH_TWO_SHOT &&
               be->ops->auto_path(be, &cur) == builtin,
           "a malformed %s table is refused, both tables kept", slot ? "previous" : "current");
  tap_ok(be->ops->set_table(be, TUNE_TABLE_PREVIOUS, NULL, 0) == tune_ok &&
             be->ops->auto_path(be, &prev) == DC_PATH_AUTO,
         "NULL takes the previous table away");
  be->ops->close(be);
}

int main(void) {
  tap_ok(strcmp(DC_VERSION, PACKAGE_VERSION) == 0 &&
             DC_VERSION_MAJOR * 10000 + DC_VERSION_MINOR * 100 + DC_VERSION_PATCH > 0,
         "DC_VERSION %s is the package's version %s", DC_VERSION, PACKAGE_VERSION);
  test_header_round_trip();
  test_malformed();
  test_ref();
  test_backend_slots();
  return tap_done();
}
