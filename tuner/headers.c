/* headers.c: thresholds headers read back into rows (tune_header_load:
 * libdetcoll's reader, so tune judges the table the
 * library loads) and compared point by point (tune_headers_agree). */
#include "headers.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

tune_result tune_header_load(const char *path, dc_threshold_row **rows, size_t *nrows) {
  char why[768];
  if (path == NULL || rows == NULL || nrows == NULL) return tune_err_arg;
  if (dc_table_read_file(path, rows, nrows, why, sizeof(why)) == 0) return tune_ok;
  tune_error("%s", why);
  return tune_err_arg;
}

static const dc_threshold_row *find_key(const dc_threshold_row *rows, size_t n,
                                        const dc_threshold_row *k) {
  for (size_t i = 0; i < n; i++)
    if (dc_row_same_key(&rows[i], k)) return &rows[i];
  return NULL;
}

tune_result tune_headers_agree(const dc_threshold_row *a, size_t na, const dc_threshold_row *b,
                               size_t nb, const tune_agree_opts *o, tune_agree_fn fn, void *ctx,
                               FILE *detail, tune_agreement *out) {
  if ((a == NULL && na) || (b == NULL && nb) || o == NULL || out == NULL || o->steps < 1 ||
      o->min_bytes < 1 || o->max_bytes < o->min_bytes)
    return tune_err_arg;
  memset(out, 0, sizeof(*out));
  for (size_t i = 0; i < nb; i++)
    if ((o->all_rows || b[i].sm != 0) && find_key(a, na, &b[i]) == NULL) out->only_b++;
  for (size_t i = 0; i < na; i++) {
    const dc_threshold_row *ra = &a[i], *rb;
    if (!o->all_rows && ra->sm == 0) continue;
    if ((rb = find_key(b, nb, ra)) == NULL) {
      out->only_a++;
      continue;
    }
    out->rows++;
    long differ = 0, apart = 0;
    uint64_t first = 0, last = 0;
    for (int k = 0;; k++) {
      double x = (double)o->min_bytes * pow(2.0, (double)k / o->steps);
      if (x > (double)o->max_bytes * (1 + 1e-12)) break;
      uint64_t bytes = (uint64_t)llround(x);
      dc_path pa = dc_row_path(ra, bytes), pb = dc_row_path(rb, bytes);
      out->points++;
      if (pa == pb) {
        out->same++;
        continue;
      }
      if (differ++ == 0) first = bytes;
      last = bytes;
      int w = fn ? fn(ctx, ra, pa, pb, bytes) : -1;
      if (w > 0)
        out->within++;
      else if (w == 0)
        out->apart++, apart++;
      else
        out->unknown++;
    }
    if (detail && differ)
      fprintf(detail,
              "  %-14s %-4s world %d %-9s %-5s%s: %ld points differ (%" PRIu64 "..%" PRIu64 ")%s\n",
              dc_op_name(ra->op), dc_dtype_name(ra->dtype), ra->world, dc_align_name(ra->align),
              dc_mode_name(ra->mode), ra->skew_ns ? " skewed" : "", differ, first, last,
              apart ? ", some not within the tolerance" : "");
  }
  return tune_ok;
}
