/* cfg.c: the table of the implementations measured, and what a
 * configuration's buffers allow (cfg.h). */
#include <string.h>

#include "cfg.h"

const tune_impl tune_impls[] = {
    {"detcoll", 1, 0},
    {"detcoll_reg", 1, 1},
    {"nccl", 0, 0},
    {"nccl_symm", 0, 1},
};
const int tune_nimpls = (int)(sizeof(tune_impls) / sizeof(tune_impls[0]));

const tune_impl *tune_impl_find(const char *name) {
  for (int i = 0; name && i < tune_nimpls; i++)
    if (strcmp(tune_impls[i].name, name) == 0) return &tune_impls[i];
  return NULL;
}

dc_align tune_cfg_align(const tune_cfg *c) {
  dc_align a = dc_align_class((uintptr_t)c->in_offset, (uintptr_t)c->out_offset, c->bytes);
  const tune_impl *im = tune_impl_find(c->impl);
  return a == DC_ALIGN_16 && im && im->detcoll && im->registered ? DC_ALIGN_REG : a;
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
