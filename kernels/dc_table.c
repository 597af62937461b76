/* dc_table.c: names, parsing and threshold lookup for the dc_table.h
 * vocabulary, the table compiled in from thresholds.h, and tables given at
 * run time (checked, parsed from a file, held per comm). Host C only. */
#include "dc_table.h"
#include "dc_table_ref.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "thresholds.h"

const dc_threshold_row *const dc_builtin_thresholds = dc_thresholds;
const size_t dc_builtin_thresholds_count = sizeof(dc_thresholds) / sizeof(dc_thresholds[0]);
const char *const dc_builtin_thresholds_provenance = DC_THRESHOLDS_PROVENANCE;

/* One row per enum value, in enum order: short name, C identifier. */
typedef struct {
  const char *name;
  const char *ident;
} dc_name;

static const dc_name op_names[DC_OP_COUNT] = {
    {"all_gather", "DC_OP_ALL_GATHER"},
    {"all_reduce", "DC_OP_ALL_REDUCE"},
    {"reduce_scatter", "DC_OP_REDUCE_SCATTER"},
};
static const dc_name dtype_names[DC_DTYPE_COUNT] = {
    {"bf16", "DC_DTYPE_BF16"},
    {"fp16", "DC_DTYPE_FP16"},
    {"fp32", "DC_DTYPE_FP32"},
};
static const dc_name path_names[DC_PATH_COUNT] = {
    {"auto", "DC_PATH_AUTO"},
    {"single_block", "DC_PATH_SINGLE_BLOCK"},
    {"fused", "DC_PATH_FUSED"},
    {"multi_block", "DC_PATH_MULTI_BLOCK"},
    {"one_shot", "DC_PATH_ONE_SHOT"},
    {"two_shot", "DC_PATH_TWO_SHOT"},
    {"push", "DC_PATH_PUSH"},
    {"direct", "DC_PATH_DIRECT"},
    {"copy_engine", "DC_PATH_COPY_ENGINE"},
    {"pipeline", "DC_PATH_PIPELINE"},
};
static const dc_name align_names[DC_ALIGN_COUNT] = {
    {"align16", "DC_ALIGN_16"},
    {"unaligned", "DC_ALIGN_ANY"},
    {"reg16", "DC_ALIGN_REG"},
};
static const dc_name mode_names[DC_MODE_COUNT] = {
    {"eager", "DC_MODE_EAGER"},
    {"graph", "DC_MODE_GRAPH"},
};
static const dc_name topo_names[DC_TOPO_COUNT] = {
    {"single_gpu", "DC_TOPO_SINGLE_GPU"},
    {"nvlink", "DC_TOPO_NVLINK"},
    {"pcie", "DC_TOPO_PCIE"},
};

static const size_t dtype_sizes[DC_DTYPE_COUNT] = {2, 2, 4};

/* Forceable paths per op, in the order the tuner sweeps them (the order
 * breaks ties of the coarse grid: the small-message path first). */
static const dc_path op_paths[DC_OP_COUNT][DC_PATH_COUNT] = {
    [DC_OP_ALL_GATHER] = {DC_PATH_PUSH, DC_PATH_SINGLE_BLOCK, DC_PATH_FUSED, DC_PATH_MULTI_BLOCK,
                          DC_PATH_PIPELINE, DC_PATH_DIRECT, DC_PATH_COPY_ENGINE},
    [DC_OP_ALL_REDUCE] = {DC_PATH_PUSH, DC_PATH_SINGLE_BLOCK, DC_PATH_ONE_SHOT, DC_PATH_TWO_SHOT,
                          DC_PATH_PIPELINE, DC_PATH_DIRECT},
    [DC_OP_REDUCE_SCATTER] = {DC_PATH_PUSH, DC_PATH_SINGLE_BLOCK, DC_PATH_MULTI_BLOCK,
                              DC_PATH_DIRECT},
};

/* Per-path size limits in bytes per rank; 0: none beyond the staging
 * capacity. */
#define DC_PUSH_LIMIT \
  { [DC_PATH_PUSH] = DC_PUSH_MAX_BYTES }
static const uint64_t path_max_bytes[DC_OP_COUNT][DC_PATH_COUNT] = {
    [DC_OP_ALL_GATHER] = DC_PUSH_LIMIT,
    [DC_OP_ALL_REDUCE] = DC_PUSH_LIMIT,
    [DC_OP_REDUCE_SCATTER] = DC_PUSH_LIMIT,
};

static const char *name_of(const dc_name *t, int n, int v, int ident) {
  if (v < 0 || v >= n) return NULL;
  return ident ? t[v].ident : t[v].name;
}

static int parse_of(const dc_name *t, int n, const char *s) {
  if (s == NULL) return -1;
  for (int i = 0; i < n; i++)
    if (strcmp(s, t[i].name) == 0 || strcmp(s, t[i].ident) == 0) return i;
  return -1;
}

#define DC_NAME_FUNCS(kind, type, table, count)                                          \
  const char *dc_##kind##_name(type v) { return name_of(table, count, (int)v, 0); }      \
  const char *dc_##kind##_enum_name(type v) { return name_of(table, count, (int)v, 1); } \
  int dc_##kind##_parse(const char *s) { return parse_of(table, count, s); }

DC_NAME_FUNCS(op, dc_op, op_names, DC_OP_COUNT)
DC_NAME_FUNCS(dtype, dc_dtype, dtype_names, DC_DTYPE_COUNT)
DC_NAME_FUNCS(path, dc_path, path_names, DC_PATH_COUNT)
DC_NAME_FUNCS(align, dc_align, align_names, DC_ALIGN_COUNT)
DC_NAME_FUNCS(mode, dc_mode, mode_names, DC_MODE_COUNT)
DC_NAME_FUNCS(topo, dc_topo, topo_names, DC_TOPO_COUNT)

size_t dc_dtype_size(dc_dtype dtype) {
  return ((int)dtype >= 0 && dtype < DC_DTYPE_COUNT) ? dtype_sizes[dtype] : 0;
}

int dc_op_paths(dc_op op, dc_path *paths) {
  int n = 0;
  if ((int)op < 0 || op >= DC_OP_COUNT) return 0;
  for (int i = 0; i < DC_PATH_COUNT && op_paths[op][i] != DC_PATH_AUTO; i++) paths[n++] = op_paths[op][i];
  return n;
}

int dc_path_valid(dc_op op, dc_path path) {
  dc_path p[DC_PATH_COUNT];
  int n = dc_op_paths(op, p);
  for (int i = 0; i < n; i++)
    if (p[i] == path) return 1;
  return 0;
}

int dc_path_needs_reg(dc_op op, dc_path path) {
  return dc_path_valid(op, path) && (path == DC_PATH_DIRECT || path == DC_PATH_COPY_ENGINE);
}

uint64_t dc_path_max_bytes(dc_op op, dc_path path) {
  if ((int)op < 0 || op >= DC_OP_COUNT || (int)path < 0 || path >= DC_PATH_COUNT) return DC_BYTES_MAX;
  return path_max_bytes[op][path] ? path_max_bytes[op][path] : DC_BYTES_MAX;
}

dc_align dc_align_class(uintptr_t in, uintptr_t out, uint64_t bytes) {
  return ((in | out | (uintptr_t)bytes) & 15u) == 0 ? DC_ALIGN_16 : DC_ALIGN_ANY;
}

dc_path dc_row_path(const dc_threshold_row *row, uint64_t bytes) {
  for (int i = 0; i < row->nseg && i < DC_MAX_SEGMENTS; i++)
    if (bytes <= row->seg[i].max_bytes) return row->seg[i].path;
  return DC_PATH_AUTO;
}

const dc_threshold_row *dc_table_find(const dc_threshold_row *rows, size_t nrows, int sm, int world,
                                      dc_topo topo, dc_op op, dc_dtype dtype, dc_align align,
                                      dc_mode mode, int64_t skew_ns) {
  const dc_threshold_row *best = NULL;
  dtype = dc_table_dtype(op, dtype);
  for (size_t i = 0; i < nrows; i++) {
    const dc_threshold_row *r = &rows[i];
    if (r->topo != topo || r->op != op || r->dtype != dtype || r->align != align || r->mode != mode ||
        r->sm > sm || r->world > world || (r->skew_ns != skew_ns && r->skew_ns != 0))
      continue;
    /* Prefer, in this order: the newest sm, the largest world, the exact skew. */
    if (best == NULL || r->sm > best->sm || (r->sm == best->sm && r->world > best->world) ||
        (r->sm == best->sm && r->world == best->world && r->skew_ns == skew_ns &&
         best->skew_ns != skew_ns))
      best = r;
  }
  return best;
}

/* ---- tables given at run time -------------------------------------------- */

int dc_row_same_key(const dc_threshold_row *a, const dc_threshold_row *b) {
  return a->sm == b->sm && a->world == b->world && a->topo == b->topo && a->op == b->op &&
         a->dtype == b->dtype && a->align == b->align && a->mode == b->mode && a->skew_ns == b->skew_ns;
}

/* Why row r cannot be looked up, or NULL if it can. */
static const char *dc_row_problem(const dc_threshold_row *r) {
  if (r->sm < 0 || r->world < 1 || r->world > DC_MAX_WORLD || r->skew_ns < 0)
    return "sm, world or skew_ns out of range (world: 1.." DC_STR(DC_MAX_WORLD) ")";
  if ((int)r->topo < 0 || r->topo >= DC_TOPO_COUNT || (int)r->op < 0 || r->op >= DC_OP_COUNT ||
      (int)r->dtype < 0 || r->dtype >= DC_DTYPE_COUNT || (int)r->align < 0 || r->align >= DC_ALIGN_COUNT ||
      (int)r->mode < 0 || r->mode >= DC_MODE_COUNT)
    return "topo, op, dtype, align or mode out of range";
  if (r->nseg < 1 || r->nseg > DC_MAX_SEGMENTS) return "segment count not in 1..DC_MAX_SEGMENTS";
  if (r->seg[r->nseg - 1].max_bytes != DC_BYTES_MAX) return "the last segment does not end at DC_BYTES_MAX";
  for (int i = 0; i < r->nseg; i++) {
    if (!dc_path_valid(r->op, r->seg[i].path)) return "a path that is not one of the op's";
    if (dc_path_needs_reg(r->op, r->seg[i].path) && r->align != DC_ALIGN_REG)
      return "a path that needs registered buffers in a row that is not DC_ALIGN_REG";
    if (i > 0 && r->seg[i].max_bytes <= r->seg[i - 1].max_bytes) return "max_bytes not increasing";
    if (r->seg[i].max_bytes > INT64_MAX && r->seg[i].max_bytes != DC_BYTES_MAX)
      return "a max_bytes past INT64_MAX other than DC_BYTES_MAX (no C integer constant holds it unsuffixed)";
  }
  return NULL;
}

/* dc_table_check, naming a row by the line it starts on where lines is
 * given (a parsed file), else by its index. */
static int table_check(const dc_threshold_row *rows, const int *lines, size_t n, char *why, size_t len) {
  if (rows == NULL || n == 0) {
    snprintf(why, len, "the table has no rows");
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    const char *p = dc_row_problem(&rows[i]);
    if (p != NULL) {
      if (lines)
        snprintf(why, len, "line %d: %s", lines[i], p);
      else
        snprintf(why, len, "row %zu: %s", i, p);
      return -1;
    }
    for (size_t k = 0; k < i; k++)
      if (dc_row_same_key(&rows[k], &rows[i])) {
        if (lines)
          snprintf(why, len, "line %d: the same key as the row of line %d", lines[i], lines[k]);
        else
          snprintf(why, len, "rows %zu and %zu have the same key", k, i);
        return -1;
      }
  }
  return 0;
}

int dc_table_check(const dc_threshold_row *rows, size_t n, char *why, size_t len) {
  return table_check(rows, NULL, n, why, len);
}

/* The table text being parsed: position, line, and where errors go. */
typedef struct {
  const char *p;
  int line;
  char *why;
  size_t len;
  /* The include guards' names: macros the table must not use (the
   * compiler would read their values there). */
  char guard_names[4][64];
  int nguard_names;
} dc_lex;

/* The declaration a whole header holds its rows in. */
#define DC_TABLE_DECL "static const dc_threshold_row dc_thresholds[] = {"

/* Past the block comment x is at, counting its lines; 0 (x where it was)
 * for one that never ends. */
static int lex_block_comment(dc_lex *x) {
  const char *e = strstr(x->p + 2, "*/");
  if (e == NULL) return 0;
  for (const char *q = x->p; q < e; q++) x->line += *q == '\n';
  x->p = e + 2;
  return 1;
}

/* Skip blanks and comments. A '#' (a preprocessor line) and a comment that
 * never ends are left where they are: nothing takes them, and lex_fail
 * names them. */
static void lex_skip(dc_lex *x) {
  for (;;) {
    while (*x->p == ' ' || *x->p == '\t' || *x->p == '\r' || *x->p == '\n' || *x->p == '\f' ||
           *x->p == '\v')
      x->line += *x->p++ == '\n';
    if (x->p[0] == '/' && x->p[1] == '*') {
      if (!lex_block_comment(x)) return;
    } else if (x->p[0] == '/' && x->p[1] == '/') {
      while (*x->p && *x->p != '\n') x->p++;
    } else {
      return;
    }
  }
}

/* The rest of x's line (up to 23 characters) into got. */
static void lex_rest(const dc_lex *x, char *got, size_t cap) {
  size_t k = 0;
  while (x->p[k] && x->p[k] != '\n' && x->p[k] != '\r' && k + 1 < cap) got[k] = x->p[k], k++;
  got[k] = '\0';
}

static int lex_fail(dc_lex *x, const char *expected) {
  char got[24];
  lex_rest(x, got, sizeof(got));
  if (*x->p == '#')
    snprintf(x->why, x->len,
             "line %d: '%s': a preprocessor line among the rows (the compiler would act on it; "
             "the table's reader does not)",
             x->line, got);
  else if (x->p[0] == '/' && x->p[1] == '*')
    snprintf(x->why, x->len, "line %d: a comment that does not end", x->line);
  else
    snprintf(x->why, x->len, "line %d: expected %s, found '%s'", x->line, expected,
             *x->p ? got : "end of text");
  return -1;
}

/* Consume punctuation c (after blanks). */
static int lex_punct(dc_lex *x, char c) {
  char what[4] = {'\'', c, '\'', '\0'};
  lex_skip(x);
  if (*x->p != c) return lex_fail(x, what);
  x->p++;
  return 0;
}

/* A word: an identifier or a number, into w. */
static int lex_word(dc_lex *x, char *w, size_t cap, const char *expected) {
  size_t k = 0;
  lex_skip(x);
  while ((isalnum((unsigned char)x->p[k]) || x->p[k] == '_' || x->p[k] == '-') && k + 1 < cap) k++;
  if (k == 0 || k + 1 >= cap) return lex_fail(x, expected);
  memcpy(w, x->p, k);
  w[k] = '\0';
  for (int g = 0; g < x->nguard_names; g++)
    if (strcmp(w, x->guard_names[g]) == 0) {
      snprintf(
          x->why, x->len,
          "line %d: '%s' is the include guard's name: the compiler reads the guard's value there",
          x->line, w);
      return -1;
    }
  x->p += k;
  return 0;
}

/* A decimal number within [lo, hi] ("DC_BYTES_MAX" where bytes_max). A
 * leading 0 before other digits is refused: C, which compiles the header,
 * reads such a number as octal. */
static int lex_number(dc_lex *x, int64_t lo, uint64_t hi, int bytes_max, const char *expected,
                      uint64_t *v) {
  char w[32], *end;
  lex_skip(x);
  const char *at = x->p;
  if (lex_word(x, w, sizeof(w), expected) != 0) return -1;
  if (bytes_max && strcmp(w, "DC_BYTES_MAX") == 0) {
    *v = DC_BYTES_MAX;
    return 0;
  }
  const char *digits = w + (w[0] == '-');
  if (digits[0] == '0' && isdigit((unsigned char)digits[1])) {
    x->p = at;
    return lex_fail(x, "a number without a leading 0 (C reads one as octal)");
  }
  errno = 0;
  if (w[0] == '-' && lo < 0) {
    long long s = strtoll(w, &end, 10);
    if (errno == 0 && *end == '\0' && s >= lo) {
      *v = (uint64_t)s;
      return 0;
    }
  } else if (isdigit((unsigned char)w[0])) {
    unsigned long long u = strtoull(w, &end, 10);
    if (errno == 0 && *end == '\0' && u <= hi && (lo <= 0 || u >= (uint64_t)lo)) {
      *v = u;
      return 0;
    }
  }
  x->p = at;
  return lex_fail(x, expected);
}

/* An enum value by name or identifier, with its parser. */
static int lex_enum(dc_lex *x, int (*parse)(const char *), const char *expected, int *v) {
  char w[48];
  lex_skip(x);
  const char *at = x->p;
  if (lex_word(x, w, sizeof(w), expected) != 0) return -1;
  if ((*v = parse(w)) >= 0) return 0;
  x->p = at;
  return lex_fail(x, expected);
}

/* One row: {sm, world, topo, op, dtype, align, mode, skew_ns, nseg, {{max_bytes, path}, ...}}.
 * A max_bytes above INT64_MAX other than DC_BYTES_MAX is refused: C gives
 * such a constant no signed type (it warns), and no message is that large. */
static int lex_row(dc_lex *x, dc_threshold_row *r) {
  uint64_t sm, world, skew, nseg;
  int topo, op, dtype, align, mode;
  memset(r, 0, sizeof(*r));
  if (lex_punct(x, '{') || lex_number(x, 0, INT32_MAX, 0, "an sm", &sm) || lex_punct(x, ',') ||
      lex_number(x, 1, DC_MAX_WORLD, 0, "a world size (1.." DC_STR(DC_MAX_WORLD) ")", &world) ||
      lex_punct(x, ',') || lex_enum(x, dc_topo_parse, "a topology", &topo) || lex_punct(x, ',') ||
      lex_enum(x, dc_op_parse, "an op", &op) || lex_punct(x, ',') ||
      lex_enum(x, dc_dtype_parse, "a dtype", &dtype) || lex_punct(x, ',') ||
      lex_enum(x, dc_align_parse, "an alignment class", &align) || lex_punct(x, ',') ||
      lex_enum(x, dc_mode_parse, "a mode", &mode) || lex_punct(x, ',') ||
      lex_number(x, 0, INT64_MAX, 0, "skew_ns", &skew) || lex_punct(x, ',') ||
      lex_number(x, 1, DC_MAX_SEGMENTS, 0, "a segment count (1..8)", &nseg) || lex_punct(x, ',') ||
      lex_punct(x, '{'))
    return -1;
  *r = (dc_threshold_row){(int)sm,         (int)world,         (dc_topo)topo, (dc_op)op,
                          (dc_dtype)dtype, (dc_align)align,    (dc_mode)mode, (int64_t)skew,
                          (int)nseg,       {{0, DC_PATH_AUTO}}};
  for (int i = 0; i < r->nseg; i++) {
    int path;
    if ((i > 0 && lex_punct(x, ',')) || lex_punct(x, '{') ||
        lex_number(x, 0, INT64_MAX, 1, "max_bytes (up to INT64_MAX, or DC_BYTES_MAX)",
                   &r->seg[i].max_bytes) ||
        lex_punct(x, ',') || lex_enum(x, dc_path_parse, "a path", &path) || lex_punct(x, '}'))
      return -1;
    r->seg[i].path = (dc_path)path;
  }
  return lex_punct(x, '}') || lex_punct(x, '}');
}

/* Refuse where the compiler's lines differ from this reader's, anywhere
 * in text: a line splice -- a backslash (or the trigraph ??/, which
 * -std=c11 reads as one) at the end of a line, blanks between, joins the
 * next line to it before C sees comments or directives, so a row after a
 * // comment or a directive would be one line to the compiler and two to
 * this reader -- and a carriage return alone, a line end to the compiler. */
static int lex_no_splice(const char *text, char *why, size_t len) {
  int line = 1;
  for (const char *p = text; *p; p++) {
    if (*p == '\n') line++;
    if (p[0] == '\r' && p[1] != '\n') {
      snprintf(why, len, "line %d: a carriage return not followed by a line feed", line);
      return -1;
    }
    size_t k = *p == '\\' ? 1 : (p[0] == '?' && p[1] == '?' && p[2] == '/') ? 3 : 0;
    if (k == 0) continue;
    const char *q = p + k;
    while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\f' || *q == '\v') q++;
    if (*q == '\n' || *q == '\0') {
      snprintf(why, len, "line %d: a %s at the end of the line: C joins the next line to it", line,
               k == 1 ? "backslash" : "trigraph ?\?/ (a backslash)");
      return -1;
    }
  }
  return 0;
}

/* Past the rest of a directive's line (its strings, character constants
 * and comments, which may run past the line's end). A comment's opening
 * inside a string or a character constant opens none, as in C. */
static void lex_directive_end(dc_lex *x) {
  while (*x->p && *x->p != '\n') {
    if (*x->p == '"' || *x->p == '\'') {
      const char q = *x->p;
      for (x->p++; *x->p && *x->p != q && *x->p != '\n'; x->p++)
        if (*x->p == '\\' && x->p[1] != '\0' && x->p[1] != '\n') x->p++;
      if (*x->p == q) x->p++;
    } else if (x->p[0] == '/' && (x->p[1] == '*' || x->p[1] == '/')) {
      if (x->p[1] == '/' || !lex_block_comment(x)) return;
    } else {
      x->p++;
    }
  }
}

/* The preprocessor lines a header may hold around its array, as tune
 * writes them: an include guard (#ifndef G, then #define G, and one #endif
 * after the array), #include "dc_table.h", #define DC_THRESHOLDS_PROVENANCE.
 * Any other could hide rows from the compiler or change what they mean
 * (#if 0, a #define of a name the rows use), so it is refused, naming its
 * line. x is at the '#'; after == 1: past the array, where only the guard's
 * #endif may stand. *guards counts the guards open. */
static int lex_directive(dc_lex *x, int after, int *guards, char *guard, size_t gcap) {
  char name[16], arg[64], got[24];
  const char *at = x->p;
  int line = x->line;
  lex_rest(x, got, sizeof(got));
  x->p++;
  while (*x->p == ' ' || *x->p == '\t') x->p++;
  size_t k = 0;
  while (isalpha((unsigned char)x->p[k]) && k + 1 < sizeof(name)) name[k] = x->p[k], k++;
  name[k] = '\0';
  x->p += k;
  while (*x->p == ' ' || *x->p == '\t') x->p++;
  k = 0;
  while ((isalnum((unsigned char)x->p[k]) || strchr("_\".<>", x->p[k]) != NULL) && x->p[k] &&
         k + 1 < sizeof(arg))
    arg[k] = x->p[k], k++;
  arg[k] = '\0';
  const char *why = NULL;
  if (after) {
    if (strcmp(name, "endif") != 0 || *guards == 0)
      why = "only the include guard's #endif may follow the table";
    else
      --*guards;
  } else if (guard[0] != '\0') {
    if (strcmp(name, "define") != 0 || strcmp(arg, guard) != 0)
      why = "an #ifndef that is not an include guard (#ifndef G, then #define G)";
    else if (x->nguard_names == (int)(sizeof(x->guard_names) / sizeof(x->guard_names[0])))
      why = "more include guards than a header needs";
    else
      snprintf(x->guard_names[x->nguard_names++], sizeof(x->guard_names[0]), "%s", guard);
    guard[0] = '\0';
  } else if (strcmp(name, "ifndef") == 0 && arg[0] != '\0' && strlen(arg) < gcap) {
    snprintf(guard, gcap, "%s", arg);
    ++*guards;
  } else if (strcmp(name, "include") == 0) {
    if (strcmp(arg, "\"dc_table.h\"") != 0 && strcmp(arg, "<dc_table.h>") != 0)
      why = "a header includes dc_table.h only";
  } else if (strcmp(name, "define") != 0 || strcmp(arg, "DC_THRESHOLDS_PROVENANCE") != 0) {
    why = "a preprocessor line that could hide rows or change what they mean";
  }
  if (why != NULL) {
    x->p = at;
    snprintf(x->why, x->len, "line %d: '%s': %s", line, got, why);
    return -1;
  }
  lex_directive_end(x);
  return 0;
}

/* Up to a whole header's array: its directives, then the declaration
 * DC_TABLE_DECL, x after its '{'. Returns 1 there, 0 for a file of rows
 * alone (no directive, and a '{' or nothing first; x where it started), -1
 * on error. The declaration is found as C sees it, so its text inside a
 * comment or a string counts for nothing. */
static int lex_preamble(dc_lex *x, int *guards, char *guard, size_t gcap) {
  int directives = 0;
  for (lex_skip(x); *x->p == '#'; lex_skip(x), directives++)
    if (lex_directive(x, 0, guards, guard, gcap) != 0) return -1;
  if (guard[0] != '\0') return lex_fail(x, "the include guard's #define");
  if (directives == 0 && (*x->p == '{' || *x->p == '\0')) return 0;
  char w[24];
  int seen_type = 0;
  for (;;) {
    const char *at = x->p;
    if (lex_word(x, w, sizeof(w), "the declaration '" DC_TABLE_DECL "'") != 0) return -1;
    if (strcmp(w, "dc_thresholds") == 0 && seen_type) break;
    if (strcmp(w, "dc_threshold_row") == 0 && !seen_type) {
      seen_type = 1;
    } else if (strcmp(w, "static") != 0 && strcmp(w, "const") != 0) {
      x->p = at;
      return lex_fail(x, "the declaration '" DC_TABLE_DECL "'");
    }
    lex_skip(x);
  }
  if (lex_punct(x, '[') || lex_punct(x, ']') || lex_punct(x, '=') || lex_punct(x, '{')) return -1;
  return 1;
}

/* After a whole header's array: its '};', then only blanks, comments and
 * the include guard's #endif. */
static int lex_postamble(dc_lex *x, int guards) {
  char guard[1] = "";
  if (lex_punct(x, '}') || lex_punct(x, ';')) return -1;
  for (lex_skip(x); *x->p != '\0'; lex_skip(x)) {
    if (*x->p != '#') return lex_fail(x, "nothing but comments after the table's '};'");
    if (lex_directive(x, 1, &guards, guard, sizeof(guard)) != 0) return -1;
  }
  if (guards > 0) {
    snprintf(x->why, x->len, "line %d: the include guard's #endif is missing", x->line);
    return -1;
  }
  return 0;
}

int dc_table_parse(const char *text, dc_threshold_row **rows, size_t *n, char *why, size_t len) {
  dc_lex x = {text, 1, why, len, {{0}}, 0};
  dc_threshold_row *t = NULL;
  int *lines = NULL, guards = 0;
  char guard[64] = "";
  size_t nt = 0, cap = 0;
  if (text == NULL || rows == NULL || n == NULL) {
    snprintf(why, len, "no text or no place for the rows");
    return -1;
  }
  if (lex_no_splice(text, why, len) != 0) return -1;
  int header = lex_preamble(&x, &guards, guard, sizeof(guard));
  if (header < 0) return -1;
  for (;;) {
    lex_skip(&x);
    if (*x.p == '\0' || (header && *x.p == '}')) break;
    if (nt == cap) {
      cap = cap ? 2 * cap : 64;
      dc_threshold_row *g = (dc_threshold_row *)realloc(t, cap * sizeof(*t));
      int *gl = g ? (int *)realloc(lines, cap * sizeof(*lines)) : NULL;
      if (g) t = g;
      if (gl) lines = gl;
      if (g == NULL || gl == NULL) {
        snprintf(why, len, "out of memory");
        goto fail;
      }
    }
    lines[nt] = x.line;
    if (lex_row(&x, &t[nt]) != 0) goto fail;
    nt++;
    lex_skip(&x);
    if (*x.p == ',')
      x.p++;
    else if (*x.p != '\0' && !(header && *x.p == '}')) {
      lex_fail(&x, "',' between rows");
      goto fail;
    }
  }
  if (header && lex_postamble(&x, guards) != 0) goto fail;
  if (table_check(t, lines, nt, why, len) != 0) goto fail;
  free(lines);
  *rows = t;
  *n = nt;
  return 0;
fail:
  free(lines);
  free(t);
  return -1;
}

int dc_table_read_file(const char *path, dc_threshold_row **rows, size_t *n, char *why, size_t len) {
  FILE *f = path ? fopen(path, "rb") : NULL;
  char *text = NULL, msg[200];
  size_t got = 0;
  if (f == NULL) {
    snprintf(why, len, "cannot open %s: %s", path ? path : "(null)", strerror(errno));
    return -1;
  }
  struct stat sb;
  if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) { /* it opens, and fails at the first read */
    fclose(f);
    snprintf(why, len, "%s is a folder, not a header", path);
    return -1;
  }
  /* Read to the end, a pipe too (compare-headers A.h <(...)): no seeking. */
  const size_t limit = (size_t)1 << 26;
  size_t cap = 65536;
  int eno = 0;
  errno = 0;
  text = (char *)malloc(cap);
  while (text != NULL) {
    size_t k = fread(text + got, 1, cap - 1 - got, f);
    got += k;
    if (k == 0) break;
    if (got + 1 < cap) continue;
    char *more = cap < limit ? (char *)realloc(text, 2 * cap) : NULL;
    if (more == NULL) {
      eno = cap < limit ? ENOMEM : EFBIG;
      break;
    }
    text = more;
    cap *= 2;
  }
  int err = text == NULL || ferror(f) || eno;
  if (!eno) eno = text == NULL ? ENOMEM : errno;
  fclose(f);
  if (err) {
    snprintf(why, len, "cannot read %s: %s", path, eno == EFBIG ? "larger than 64 MiB" : strerror(eno ? eno : EIO));
    free(text);
    return -1;
  }
  text[got] = '\0';
  /* The parser reads up to the first NUL; the compiler reads past it. */
  const char *nul = (const char *)memchr(text, '\0', got);
  if (nul != NULL) {
    int line = 1;
    for (const char *q = text; q < nul; q++) line += *q == '\n';
    snprintf(why, len, "%s: a NUL byte at offset %zu (line %d): not a table file", path,
             (size_t)(nul - text), line);
    free(text);
    return -1;
  }
  int r = dc_table_parse(text, rows, n, msg, sizeof(msg));
  free(text);
  if (r != 0) snprintf(why, len, "%s: %s", path, msg);
  return r;
}

static uint64_t fnv1a(uint64_t h, uint64_t v) {
  for (int i = 0; i < 8; i++) h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ull;
  return h;
}

uint64_t dc_table_hash(const dc_threshold_row *rows, size_t n) {
  uint64_t sum = 0;
  for (size_t i = 0; i < n; i++) {
    const dc_threshold_row *r = &rows[i];
    const int64_t f[] = {r->sm, r->world, r->topo, r->op, r->dtype, r->align, r->mode, r->skew_ns, r->nseg};
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++) h = fnv1a(h, (uint64_t)f[k]);
    for (int s = 0; s < r->nseg && s < DC_MAX_SEGMENTS; s++)
      h = fnv1a(fnv1a(h, r->seg[s].max_bytes), (uint64_t)r->seg[s].path);
    sum += h;
  }
  return sum;
}

int dc_table_ref_default(dc_table_ref *t, char *why, size_t len) {
  const char *path = getenv(DC_THRESHOLDS_FILE_ENV);
  dc_threshold_row *rows;
  size_t n;
  if (path == NULL || *path == '\0') {
    dc_table_ref_free(t);
    *t = (dc_table_ref){dc_builtin_thresholds, dc_builtin_thresholds_count, NULL};
    return 0;
  }
  char msg[240];
  if (dc_table_read_file(path, &rows, &n, msg, sizeof(msg)) != 0) {
    snprintf(why, len, "%s: %s", DC_THRESHOLDS_FILE_ENV, msg);
    return -1;
  }
  dc_table_ref_free(t);
  *t = (dc_table_ref){rows, n, rows};
  return 0;
}

int dc_table_ref_set(dc_table_ref *t, const dc_threshold_row *rows, size_t n, char *why, size_t len) {
  if (rows == NULL && n == 0) return dc_table_ref_default(t, why, len);
  if (dc_table_check(rows, n, why, len) != 0) return -1;
  dc_threshold_row *copy = (dc_threshold_row *)malloc(n * sizeof(*copy));
  if (copy == NULL) {
    snprintf(why, len, "out of memory");
    return -1;
  }
  memcpy(copy, rows, n * sizeof(*copy));
  dc_table_ref_free(t);
  *t = (dc_table_ref){copy, n, copy};
  return 0;
}

void dc_table_ref_free(dc_table_ref *t) {
  free(t->owned);
  *t = (dc_table_ref){NULL, 0, NULL};
}
