/* headers.c: thresholds headers read back into rows (tune_header_parse) and
 * compared point by point (tune_headers_agree). */
#include "headers.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

/* Largest header read: the generated ones are tens of KiB. */
#define HEADER_MAX_BYTES (16u << 20)

/* The value of an enum identifier among count names, or -1. */
static int enum_value(const char *tok, int count, const char *(*name)(int)) {
  for (int v = 0; v < count; v++) {
    const char *n = name(v);
    if (n != NULL && strcmp(n, tok) == 0) return v;
  }
  return -1;
}

static const char *topo_name(int v) { return dc_topo_enum_name((dc_topo)v); }
static const char *op_name(int v) { return dc_op_enum_name((dc_op)v); }
static const char *dtype_name(int v) { return dc_dtype_enum_name((dc_dtype)v); }
static const char *align_name(int v) { return dc_align_enum_name((dc_align)v); }
static const char *mode_name(int v) { return dc_mode_enum_name((dc_mode)v); }
static const char *path_name(int v) { return dc_path_enum_name((dc_path)v); }

static int parse_u64(const char *tok, uint64_t *v) {
  if (strcmp(tok, "DC_BYTES_MAX") == 0) {
    *v = DC_BYTES_MAX;
    return 0;
  }
  char *end;
  errno = 0;
  if (tok[0] < '0' || tok[0] > '9') return -1;
  unsigned long long x = strtoull(tok, &end, 10);
  if (errno || *end != '\0') return -1;
  *v = x;
  return 0;
}

/* One row line: "{sm, world, TOPO, OP, DTYPE, ALIGN, MODE, skew, nseg,
 * {{max, PATH}, ...}}," split on braces, commas and blanks. */
static int parse_row(char *line, dc_threshold_row *r) {
  char *tok[4 + 9 + 2 * DC_MAX_SEGMENTS], *save = NULL;
  int n = 0;
  for (char *t = strtok_r(line, " \t\r{},", &save); t != NULL;
       t = strtok_r(NULL, " \t\r{},", &save)) {
    if (n == (int)(sizeof(tok) / sizeof(tok[0]))) return -1;
    tok[n++] = t;
  }
  uint64_t sm, world, skew, nseg;
  memset(r, 0, sizeof(*r));
  if (n < 11 || parse_u64(tok[0], &sm) || parse_u64(tok[1], &world) || parse_u64(tok[7], &skew) ||
      parse_u64(tok[8], &nseg) || sm > INT32_MAX || world > INT32_MAX || skew > INT64_MAX ||
      nseg < 1 || nseg > DC_MAX_SEGMENTS || n != 9 + 2 * (int)nseg)
    return -1;
  int topo = enum_value(tok[2], DC_TOPO_COUNT, topo_name),
      op = enum_value(tok[3], DC_OP_COUNT, op_name),
      dtype = enum_value(tok[4], DC_DTYPE_COUNT, dtype_name),
      align = enum_value(tok[5], DC_ALIGN_COUNT, align_name),
      mode = enum_value(tok[6], DC_MODE_COUNT, mode_name);
  if (topo < 0 || op < 0 || dtype < 0 || align < 0 || mode < 0) return -1;
  *r = (dc_threshold_row){(int)sm, (int)world, topo,          op,        dtype,
                          align,   mode,       (int64_t)skew, (int)nseg, {{0}}};
  for (int k = 0; k < (int)nseg; k++) {
    int p = enum_value(tok[9 + 2 * k + 1], DC_PATH_COUNT, path_name);
    if (p < 0 || parse_u64(tok[9 + 2 * k], &r->seg[k].max_bytes)) return -1;
    r->seg[k].path = (dc_path)p;
  }
  return 0;
}

tune_result tune_header_parse(const char *text, const char *name, dc_threshold_row **rows,
                              size_t *nrows) {
  if (text == NULL || name == NULL || rows == NULL || nrows == NULL) return tune_err_arg;
  size_t cap = 64, n = 0;
  dc_threshold_row *out = malloc(cap * sizeof(*out));
  char *line = malloc(strlen(text) + 1);
  tune_result res = tune_ok;
  if (out == NULL || line == NULL) {
    res = tune_err_system;
    goto fail;
  }
  int lineno = 0;
  for (const char *p = text; *p;) {
    size_t w = strcspn(p, "\n");
    lineno++;
    memcpy(line, p, w);
    line[w] = '\0';
    p += w + (p[w] == '\n');
    const char *s = line + strspn(line, " \t");
    /* Row lines are the only ones that open with a brace and a number. */
    if (s[0] != '{' || s[1] < '0' || s[1] > '9') continue;
    if (n == cap) {
      dc_threshold_row *grown = realloc(out, 2 * cap * sizeof(*out));
      if (grown == NULL) {
        res = tune_err_system;
        goto fail;
      }
      out = grown;
      cap *= 2;
    }
    if (parse_row(line, &out[n]) != 0) {
      tune_error("%s:%d: not a threshold row of a generated header", name, lineno);
      res = tune_err_arg;
      goto fail;
    }
    n++;
  }
  if (n == 0) {
    tune_error("%s: no threshold rows (not a thresholds header written by tune?)", name);
    res = tune_err_arg;
    goto fail;
  }
  /* The emitter's own checks: a table it would refuse is no table. */
  tune_provenance prov = {0};
  char *check = NULL;
  res = tune_emit_header(out, n, &prov, &check);
  free(check);
  if (res != tune_ok) {
    if (res == tune_err_arg)
      tune_error(
          "%s: its threshold rows are not a valid table (paths not valid for their op, "
          "thresholds out of order, or two rows of one key)",
          name);
    goto fail;
  }
  free(line);
  *rows = out;
  *nrows = n;
  return tune_ok;
fail:
  free(out);
  free(line);
  return res;
}

tune_result tune_header_load(const char *path, dc_threshold_row **rows, size_t *nrows) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    tune_error("%s: %s", path, strerror(errno));
    return tune_err_arg;
  }
  char *text = malloc(HEADER_MAX_BYTES + 1);
  size_t len = text ? fread(text, 1, HEADER_MAX_BYTES + 1, f) : 0;
  int bad = text == NULL || ferror(f) || len > HEADER_MAX_BYTES;
  fclose(f);
  if (bad) {
    tune_error("%s: %s", path,
               text == NULL             ? "out of memory"
               : len > HEADER_MAX_BYTES ? "over 16 MiB, not a thresholds header"
                                        : "read error");
    free(text);
    return text == NULL ? tune_err_system : tune_err_arg;
  }
  text[len] = '\0';
  if (strlen(text) != len) {
    tune_error("%s: holds NUL bytes, not a thresholds header", path);
    free(text);
    return tune_err_arg;
  }
  tune_result r = tune_header_parse(text, path, rows, nrows);
  free(text);
  return r;
}

static int same_key(const dc_threshold_row *a, const dc_threshold_row *b) {
  return a->sm == b->sm && a->world == b->world && a->topo == b->topo && a->op == b->op &&
         a->dtype == b->dtype && a->align == b->align && a->mode == b->mode &&
         a->skew_ns == b->skew_ns;
}

static const dc_threshold_row *find_key(const dc_threshold_row *rows, size_t n,
                                        const dc_threshold_row *k) {
  for (size_t i = 0; i < n; i++)
    if (same_key(&rows[i], k)) return &rows[i];
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
