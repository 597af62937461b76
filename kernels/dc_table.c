/* dc_table.c: names, parsing and threshold lookup for the dc_table.h
 * vocabulary, and the table compiled in from thresholds.h. Host C only. */
#include "dc_table.h"

#include <string.h>

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
