/* test_table.c: threshold tables given at run time (dc_table.h): the
 * checker, the parser of table files (a whole header or its rows alone),
 * with a clear reason for every malformed one, the content hash, and the
 * table a comm holds (dc_table_ref: a checked copy, the default from
 * DC_THRESHOLDS_FILE or the compiled-in table), and a backend's two
 * table slots (set_table). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* A header as tune writes it, up to its array (5 lines), and two rows. */
#define DECL "static const dc_threshold_row dc_thresholds[] = {\n"
#define HDR                                                                \
  "/* thresholds.h */\n#ifndef DC_THRESHOLDS_H\n#define DC_THRESHOLDS_H\n" \
  "#include \"dc_table.h\"\n" DECL
#define ROW_EAGER \
  "  {90, 2, nvlink, all_reduce, bf16, align16, eager, 0, 1, {{DC_BYTES_MAX, one_shot}}}"
#define ROW_GRAPH \
  "  {90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, push}}}"

static void test_malformed(void) {
  static const struct {
    const char *text, *why;
  } bad[] = {
      {"", "no rows"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 2, {{100, push}, {50, one_shot}}}",
       "DC_BYTES_MAX"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 2, {{100, push}, {100, one_shot}}}",
       "DC_BYTES_MAX"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 2, {{100, push}, {DC_BYTES_MAX, "
       "direct}}}",
       "registered"},
      {"{90, 2, nvlink, all_gather, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, one_shot}}}",
       "not one of the op"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, foo}}}",
       "line 1: expected a path"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 9, {{DC_BYTES_MAX, push}}}",
       "segment count"},
      {"{90, 0, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, push}}}",
       "world size"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, -1, 1, {{DC_BYTES_MAX, push}}}",
       "skew_ns"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, push}}",
       "expected '}'"},
      {"\n\n{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, push}}} x",
       "line 3"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, push}}},"
       "{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, one_shot}}}",
       "same key"},
      {"static const dc_threshold_row dc_thresholds[] = {\n"
       "{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, push}}},\n",
       "expected '}'"},
      /* What the compiler reads differently is refused, naming the line:
       * rows it skips (#if 0, a spliced // comment, a spliced block
       * comment's end), numbers it reads otherwise (octal, no signed
       * type), text after the array, macros that change the rows. */
      {HDR ROW_EAGER ",\n#if 0\n" ROW_GRAPH ",\n#endif\n};\n",
       "line 7: '#if 0': a preprocessor line"},
      {HDR "#ifdef X\n" ROW_GRAPH ",\n#endif\n};\n", "line 6: '#ifdef X': a preprocessor line"},
      {"#if 0\n" ROW_GRAPH "\n#endif\n", "line 1: '#if 0': a preprocessor line"},
      {ROW_EAGER ",\n#define X\n" ROW_GRAPH "\n", "line 2: '#define X': a preprocessor line"},
      {HDR ROW_EAGER ", // a comment \\\n" ROW_GRAPH ",\n};\n", "line 6: a backslash at the end"},
      {HDR ROW_EAGER ", // a comment ?\?/\n" ROW_GRAPH ",\n};\n", "line 6: a trigraph"},
      {HDR "/* *\\  \n/ " ROW_EAGER ", */\n};\n", "line 6: a backslash at the end"},
      {HDR ROW_EAGER ", // a comment \\\f\n" ROW_GRAPH ",\n};\n", "line 6: a backslash at the end"},
      {HDR "// a comment\r" ROW_EAGER ",\n};\n", "line 6: a carriage return not followed by a line feed"},
      {HDR ROW_EAGER ",\n};\n" ROW_GRAPH ",\n",
       "line 8: expected nothing but comments after the table's '};'"},
      {HDR ROW_EAGER ",\n}\n", "expected ';'"},
      {HDR ROW_EAGER ",\n}; int x;\n", "line 7: expected nothing but comments"},
      {HDR ROW_EAGER ",\n};\n#endif\n#endif\n",
       "line 9: '#endif': only the include guard's #endif"},
      {"#ifndef G\n#define G\n" DECL ROW_EAGER "\n};\n", "the include guard's #endif is missing"},
      {"#ifndef G\n#define H\n" DECL ROW_EAGER "\n};\n#endif\n", "line 2: '#define H': an #ifndef"},
      {"#include <stdio.h>\n" DECL ROW_EAGER "\n};\n", "line 1: '#include <stdio.h>': a header"},
      {"#define DC_MODE_GRAPH DC_MODE_EAGER\n" DECL ROW_GRAPH "\n};\n",
       "line 1: '#define DC_MODE_GRA"},
      {"#define X 1\n{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, "
       "push}}}",
       "line 1: '#define X 1'"},
      {"#pragma once\n" DECL ROW_EAGER "\n};\n", "line 1: '#pragma once'"},
      {"static const int dc_thresholds[] = {" ROW_EAGER "};\n", "expected the declaration"},
      {"/* dc_thresholds[] = { */ int x;\n" ROW_EAGER "\n", "line 1: expected the declaration"},
      {HDR "/* " ROW_EAGER ",\n};\n", "line 6: a comment that does not end"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{010000, push}, {DC_BYTES_MAX, "
       "one_shot}}}",
       "line 1: expected a number without a leading 0"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 2, {{0x10, push}, {DC_BYTES_MAX, "
       "one_shot}}}",
       "line 1: expected max_bytes"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 2, {{18446744073709551614, push}, "
       "{DC_BYTES_MAX, one_shot}}}",
       "line 1: expected max_bytes (up to INT64_MAX, or DC_BYTES_MAX), found "
       "'18446744073709551614"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{18446744073709551615, push}}}",
       "expected max_bytes"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 2, {{16, push}, {DC_BYTES_MAX, "
       "one_shot}}},,\n"
       "{90, 2, nvlink, all_reduce, bf16, align16, eager, 0, 1, {{DC_BYTES_MAX, one_shot}}}",
       "expected '{'"},
      {"{90, 16, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, push}}}",
       "line 1: expected a world size (1..8), found '16"},
      /* Row meanings: the line the row starts on, not its index. */
      {"\n\n{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 2, {{100, push}, {50, one_shot}}}",
       "line 3: the last segment does not end at DC_BYTES_MAX"},
      {"{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, push}}},\n\n"
       "{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, one_shot}}}",
       "line 3: the same key as the row of line 1"},
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

/* What the compiler reads alike is read alike: blanks anywhere, comments
 * and strings holding the declaration's text, the limits themselves. */
static void test_accepted(void) {
  static const struct {
    const char *text, *what;
  } good[] = {
      {HDR "  { 90 , 2,nvlink ,all_reduce, bf16, align16, eager, 0, 1, {{ DC_BYTES_MAX , one_shot "
           "} } },\n"
           "  {90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 1, {{DC_BYTES_MAX, push}}}\n};\n"
           "#endif /* DC_THRESHOLDS_H */\n// done\n",
       "blanks inside a row, the last row without a comma, comments after the #endif"},
      {"/* static const dc_threshold_row dc_thresholds[] = { */\n#define DC_THRESHOLDS_PROVENANCE "
       "\"dc_thresholds[] = {\\\" */\"\n" DECL "// dc_thresholds[] = {\n" ROW_EAGER ",\n" ROW_GRAPH
       "};\n",
       "the declaration's text in comments and a string is not the declaration"},
      {"/* dc_thresholds[] = { */ " ROW_EAGER ",\n// dc_thresholds[] =\n" ROW_GRAPH,
       "rows alone, the declaration's text in comments"},
      {"/* a backslash inside a line \\ is no splice */ " ROW_EAGER ",\n" ROW_GRAPH "\n",
       "a backslash that does not end a line"},
  };
  for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
    dc_threshold_row *rows = NULL;
    size_t n = 0;
    char why[256] = "";
    int ok = dc_table_parse(good[i].text, &rows, &n, why, sizeof(why)) == 0 && n == 2 &&
             rows[0].mode == DC_MODE_EAGER && rows[0].seg[0].path == DC_PATH_ONE_SHOT &&
             rows[1].mode == DC_MODE_GRAPH && rows[1].seg[0].path == DC_PATH_PUSH;
    tap_ok(ok, "read: %s %s", good[i].what, why);
    free(rows);
  }
  /* The limits: world DC_MAX_WORLD, max_bytes INT64_MAX; and an all_gather
   * row of another dtype than bf16, which no lookup finds but headers made
   * before dc_table_dtype hold (docs/results), so they still load. */
  const char *limits =
      "{90, 8, nvlink, all_reduce, bf16, align16, graph, 0, 2, {{9223372036854775807, push}, "
      "{DC_BYTES_MAX, one_shot}}},\n"
      "{90, 2, nvlink, all_gather, fp32, align16, graph, 0, 1, {{DC_BYTES_MAX, multi_block}}}\n";
  dc_threshold_row *rows = NULL;
  size_t n = 0;
  char why[256] = "";
  int ok = dc_table_parse(limits, &rows, &n, why, sizeof(why)) == 0 && n == 2;
  tap_ok(ok && rows[0].world == DC_MAX_WORLD && rows[0].seg[0].max_bytes == INT64_MAX &&
             rows[1].dtype == DC_DTYPE_FP32,
         "world %d, max_bytes INT64_MAX and an fp32 all_gather row are read %s", DC_MAX_WORLD, why);
  free(rows);

  /* A header tune writes, whatever its provenance holds (the database path
   * goes into its banner), reads back as its rows. */
  dc_threshold_row two[2] = {{90,
                              2,
                              DC_TOPO_NVLINK,
                              DC_OP_ALL_REDUCE,
                              DC_DTYPE_BF16,
                              DC_ALIGN_16,
                              DC_MODE_EAGER,
                              0,
                              1,
                              {{DC_BYTES_MAX, DC_PATH_ONE_SHOT}}},
                             {90,
                              2,
                              DC_TOPO_NVLINK,
                              DC_OP_ALL_REDUCE,
                              DC_DTYPE_BF16,
                              DC_ALIGN_16,
                              DC_MODE_GRAPH,
                              0,
                              1,
                              {{DC_BYTES_MAX, DC_PATH_PUSH}}}};
  tune_provenance prov = {.run_id = 5,
                          .backend = "sim",
                          .gpu_model = "dc_thresholds[] = { \\",
                          .db_path = "/x/dc_thresholds[] = y/tune.db",
                          .git_rev = "abc\\",
                          .date = "#if 0"};
  char *text = NULL;
  rows = NULL;
  ok = tune_emit_header(two, 2, &prov, &text) == tune_ok &&
       dc_table_parse(text, &rows, &n, why, sizeof(why)) == 0;
  tap_ok(ok && same_table(rows, n, two, 2),
         "a header whose provenance holds 'dc_thresholds[] = {', '#if 0' and line-ending "
         "backslashes reads back as its rows %s",
         why);
  free(rows);
  free(text);
}

/* A file is read whole: a NUL byte (where a C string would end the text)
 * is refused with its offset, not taken as the end of the table. */
static void test_nul(void) {
  char path[] = "/tmp/test_table_XXXXXX", why[256] = "";
  static const char text[] = ROW_EAGER ",\n\0" ROW_GRAPH "\n";
  int fd = mkstemp(path);
  FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
  if (f) fwrite(text, 1, sizeof(text) - 1, f);
  if (f) fclose(f);
  dc_threshold_row *rows = (dc_threshold_row *)&rows;
  size_t n = 77;
  char want[64];
  snprintf(want, sizeof(want), "a NUL byte at offset %zu (line 2)", strlen(ROW_EAGER) + 2);
  tap_ok(f && dc_table_read_file(path, &rows, &n, why, sizeof(why)) == -1 &&
             rows == (dc_threshold_row *)&rows && n == 77 && strstr(why, path) && strstr(why, want),
         "a NUL byte is refused: %s", why);
  unlink(path);
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
  test_accepted();
  test_nul();
  test_ref();
  test_backend_slots();
  return tap_done();
}
