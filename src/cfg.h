/* cfg.h: what one measured configuration is (op, impl, path, dtype, world,
 * bytes, offsets, mode, skew) and the implementations measured, as rows.
 * Common floor: the database stores configurations, backends measure them,
 * the engine plans them. */
#ifndef TUNE_CFG_H
#define TUNE_CFG_H

#include <stdint.h>

#include "dc_table.h"
#include "tune.h"

/* The largest in and out offset of a configuration, bytes (the slack the
 * gpu backend allocates past each buffer; --offsets takes no more). */
#define TUNE_MAX_OFFSET 255

/* One measured configuration. impl: a tune_impls[] name ("detcoll",
 * "detcoll_reg", "nccl", "nccl_symm"). path: DC_PATH_AUTO or a forced path.
 * skew_rank: -1 none, -2 a random rank each trial. */
typedef struct {
  const char *impl;
  dc_op op;
  dc_path path;
  dc_dtype dtype;
  int world;
  uint64_t bytes;
  int in_offset;
  int out_offset;
  dc_mode mode;
  int64_t skew_ns;
  int skew_rank;
} tune_cfg;

/* What is measured, as rows: libdetcoll on plain buffers and on buffers in
 * registered windows (dc_register_*: the paths dc_path_needs_reg() names
 * may run there, and auto dispatch uses the DC_ALIGN_REG rows), NCCL, and
 * NCCL on symmetric windows. A backend measures the same buffers for every
 * impl; only the registration differs. The *_prev rows are libdetcoll whose
 * auto dispatch reads the job's previous table (TUNE_TABLE_PREVIOUS): the
 * after pass measures them in the same trials as the new table. */
typedef struct {
  const char *name;
  int detcoll;    /* libdetcoll: forced paths, bitwise checks */
  int registered; /* the buffers lie in windows registered with the comm */
  int previous;   /* auto dispatch from the previous table, not the current one */
} tune_impl;

extern const tune_impl tune_impls[];
extern const int tune_nimpls;

/* The row of impl name, or NULL. */
const tune_impl *tune_impl_find(const char *name);

/* The impl measuring the same buffers as detcoll impl name with auto
 * dispatch from the previous table ("detcoll" -> "detcoll_prev",
 * "detcoll_reg" -> "detcoll_reg_prev"); NULL for any other name. */
const char *tune_impl_previous(const char *name);

/* The path libdetcoll's auto dispatch takes for c (its impl decides plain
 * or registered buffers) with table rows[0..n) on a GPU of this sm and
 * topology, as dc_comm's dispatch does it: the row of c's alignment class
 * (a registered call falls back to the DC_ALIGN_16 row), the op's last path
 * the buffers allow where the table has none, one_shot (else that last
 * path) past a size-limited path's limit. */
dc_path tune_table_auto_path(const dc_threshold_row *rows, size_t n, int sm, dc_topo topo,
                             const tune_cfg *c);

/* The alignment class libdetcoll's auto dispatch sees for c: DC_ALIGN_REG
 * for a registered detcoll impl whose offsets and bytes are 16-aligned, else
 * dc_align_class() of the offsets and bytes. Stored as the config's align. */
dc_align tune_cfg_align(const tune_cfg *c);

/* Why libdetcoll would refuse c's forced path (a message), or NULL: a path
 * that is not the op's, or one that needs registration on unregistered
 * buffers, on buffers outside DC_ALIGN_REG, or (reduce_scatter) on slices
 * that are not whole 16-byte vectors. NULL for auto and for NCCL impls. */
const char *tune_cfg_path_unsupported(const tune_cfg *c);

/* Why no backend can run c at its offsets (a message), or NULL: each in
 * 0..TUNE_MAX_OFFSET, and for a reduction whole elements (libdetcoll
 * refuses other pointers). */
const char *tune_cfg_offsets_unsupported(const tune_cfg *c);

#endif /* TUNE_CFG_H */
