/* fuzz_emit.c: libFuzzer target for the threshold table's checker and its
 * run-time loader. The input is taken as raw rows: tune_emit_header must
 * refuse any the contract in emit.h rules out, and a table it accepts must
 * be usable by dc_table_find / dc_row_path. It is also taken as the text of
 * a table file (DC_THRESHOLDS_FILE, dc_table_parse): a table parsed from it
 * must meet the same contract, and its header parse back to the same rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

/* The contract of tune_emit_header, checked here independently. */
static int rows_valid(const dc_threshold_row *r, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const dc_threshold_row *x = &r[i];
    if ((unsigned)x->op >= DC_OP_COUNT || (unsigned)x->dtype >= DC_DTYPE_COUNT ||
        (unsigned)x->align >= DC_ALIGN_COUNT || (unsigned)x->mode >= DC_MODE_COUNT ||
        (unsigned)x->topo >= DC_TOPO_COUNT || x->world < 1 || x->world > DC_MAX_WORLD || x->sm < 0 ||
        x->skew_ns < 0 ||
        x->nseg < 1 || x->nseg > DC_MAX_SEGMENTS || x->seg[x->nseg - 1].max_bytes != DC_BYTES_MAX)
      return 0;
    for (int k = 0; k < x->nseg; k++)
      if ((unsigned)x->seg[k].path >= DC_PATH_COUNT || !dc_path_valid(x->op, x->seg[k].path) ||
          (dc_path_needs_reg(x->op, x->seg[k].path) && x->align != DC_ALIGN_REG) ||
          (k > 0 && x->seg[k].max_bytes <= x->seg[k - 1].max_bytes) ||
          (x->seg[k].max_bytes > INT64_MAX && x->seg[k].max_bytes != DC_BYTES_MAX))
        return 0;
    for (size_t j = 0; j < i; j++)
      if (x->sm == r[j].sm && x->world == r[j].world && x->topo == r[j].topo && x->op == r[j].op &&
          x->dtype == r[j].dtype && x->align == r[j].align && x->mode == r[j].mode &&
          x->skew_ns == r[j].skew_ns)
        return 0;
  }
  return n > 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  size_t n = size / sizeof(dc_threshold_row);
  dc_threshold_row *rows = malloc((n ? n : 1) * sizeof(*rows));
  if (rows == NULL) return 0;
  memcpy(rows, data, n * sizeof(*rows));
  tune_provenance prov = {.run_id = 1,
                          .backend = "sim",
                          .gpu_model =
                              "fuzz */ ??"
                              "= \"\n",
                          .sm = 90};
  char *text = NULL;
  tune_result r = tune_emit_header(rows, n, &prov, &text);
  int valid = rows_valid(rows, n);
  if ((r == tune_ok) != valid) {
    fprintf(stderr, "fuzz_emit: %zu rows %s but the contract says %s\n", n,
            r == tune_ok ? "accepted" : "refused", valid ? "valid" : "invalid");
    abort();
  }
  if (r == tune_ok) {
    for (size_t i = 0; i < n; i++) {
      const dc_threshold_row *x = &rows[i];
      /* all_gather is looked up by its bf16 rows only (dc_table_dtype, since
       * ee733d2): a row of another dtype is kept but never found. */
      if (dc_table_dtype(x->op, x->dtype) != x->dtype) continue;
      const dc_threshold_row *f = dc_table_find(rows, n, x->sm, x->world, x->topo, x->op, x->dtype,
                                                x->align, x->mode, x->skew_ns);
      if (f == NULL || !dc_path_valid(x->op, dc_row_path(f, x->seg[0].max_bytes))) abort();
    }
    if (strstr(text, "DC_THRESHOLDS_H") == NULL) abort();
  }
  free(text);
  free(rows);

  char *src = malloc(size + 1), why[256];
  size_t np = 0;
  if (src == NULL) return 0;
  memcpy(src, data, size);
  src[size] = '\0';
  rows = NULL;
  if (dc_table_parse(src, &rows, &np, why, sizeof(why)) == 0) {
    dc_threshold_row *again = NULL;
    size_t na = 0;
    text = NULL;
    if (!rows_valid(rows, np) || tune_emit_header(rows, np, &prov, &text) != tune_ok ||
        dc_table_parse(text, &again, &na, why, sizeof(why)) != 0 || na != np ||
        dc_table_hash(again, na) != dc_table_hash(rows, np))
      abort();
    free(again);
    free(text);
    free(rows);
  } else if (why[0] == '\0') {
    abort(); /* a refusal always says why */
  }
  free(src);
  return 0;
}
