/* cfg.c: the table of the implementations measured, and what a
 * configuration's buffers allow (cfg.h). */
#include <stddef.h>
#include <string.h>

#include "cfg.h"

const tune_impl tune_impls[] = {
    {"detcoll", 1, 0, 0},   {"detcoll_reg", 1, 1, 0},  {"nccl", 0, 0, 0},
    {"nccl_symm", 0, 1, 0}, {"detcoll_prev", 1, 0, 1}, {"detcoll_reg_prev", 1, 1, 1},
};
const int tune_nimpls = (int)(sizeof(tune_impls) / sizeof(tune_impls[0]));

const tune_impl *tune_impl_find(const char *name) {
  for (int i = 0; name && i < tune_nimpls; i++)
    if (strcmp(tune_impls[i].name, name) == 0) return &tune_impls[i];
  return NULL;
}

const char *tune_impl_previous(const char *name) {
  const tune_impl *im = tune_impl_find(name);
  if (im == NULL || !im->detcoll || im->previous) return NULL;
  for (int i = 0; i < tune_nimpls; i++)
    if (tune_impls[i].previous && tune_impls[i].registered == im->registered)
      return tune_impls[i].name;
  return NULL;
}

/* The op's last path that c's buffers allow: auto dispatch's answer without a row. */
static dc_path last_path(const tune_cfg *c) {
  dc_path paths[DC_PATH_COUNT];
  int n = dc_op_paths(c->op, paths);
  while (n > 1 && dc_path_needs_reg(c->op, paths[n - 1]) && tune_cfg_align(c) != DC_ALIGN_REG) n--;
  return paths[n - 1];
}

dc_path tune_table_auto_path(const dc_threshold_row *rows, size_t n, int sm, dc_topo topo,
                             const tune_cfg *c) {
  dc_align align = tune_cfg_align(c);
  const dc_threshold_row *row =
      dc_table_find(rows, n, sm, c->world, topo, c->op, c->dtype, align, c->mode, 0);
  if (row == NULL && align == DC_ALIGN_REG)
    row = dc_table_find(rows, n, sm, c->world, topo, c->op, c->dtype, DC_ALIGN_16, c->mode, 0);
  dc_path p = row ? dc_row_path(row, c->bytes) : DC_PATH_AUTO;
  if (p == DC_PATH_AUTO || !dc_path_valid(c->op, p) ||
      (dc_path_needs_reg(c->op, p) && align != DC_ALIGN_REG))
    return last_path(c);
  if (c->bytes > dc_path_max_bytes(c->op, p))
    return dc_path_valid(c->op, DC_PATH_ONE_SHOT) ? DC_PATH_ONE_SHOT : last_path(c);
  return p;
}

dc_align tune_cfg_align(const tune_cfg *c) {
  dc_align a = dc_align_class((uintptr_t)c->in_offset, (uintptr_t)c->out_offset,
                              dc_align_bytes(c->op, c->bytes, c->world));
  const tune_impl *im = tune_impl_find(c->impl);
  return a == DC_ALIGN_16 && im && im->detcoll && im->registered ? DC_ALIGN_REG : a;
}

const char *tune_cfg_offsets_unsupported(const tune_cfg *c) {
  if (c->in_offset < 0 || c->out_offset < 0 || c->in_offset > TUNE_MAX_OFFSET ||
      c->out_offset > TUNE_MAX_OFFSET)
    return "offset out of range (0.." DC_STR(TUNE_MAX_OFFSET) ")";
  int es = (int)dc_dtype_size(c->dtype);
  if (c->op != DC_OP_ALL_GATHER && (c->in_offset % es || c->out_offset % es))
    return "reductions need offsets that are multiples of the element size";
  return NULL;
}

const char *tune_cfg_path_unsupported(const tune_cfg *c) {
  const tune_impl *im = tune_impl_find(c->impl);
  if (im == NULL || !im->detcoll || c->path == DC_PATH_AUTO) return NULL;
  if (!dc_path_valid(c->op, c->path)) return "not a path of this op";
  if (!dc_path_needs_reg(c->op, c->path)) return NULL;
  if (!im->registered) return "the path needs registered buffers (impl detcoll_reg)";
  if (tune_cfg_align(c) != DC_ALIGN_REG) return "the path needs 16-byte aligned buffers and sizes";
  if (c->op == DC_OP_REDUCE_SCATTER && (c->world < 1 || c->bytes % (16 * (uint64_t)c->world) != 0))
    return "the path needs slices of whole 16-byte vectors";
  return NULL;
}
