/* emit.h: writing kernels/thresholds.h -- the generated header libdetcoll
 * is compiled against. The text is deterministic (stable row order, fixed
 * formatting) so that two headers from the same rows differ only in their
 * banner and provenance, and a diff between tunings shows what moved. */
#ifndef TUNE_EMIT_H
#define TUNE_EMIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dc_table.h"
#include "tune.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a table came from. NULL strings print as "unknown". backend "sim"
 * marks the header as simulated, prominently. */
typedef struct {
  int64_t run_id;
  const char *db_path, *backend, *gpu_model;
  int gpu_count, sm;
  const char *topo, *driver, *cuda, *nccl, *date, *git_rev, *tune_version;
} tune_provenance;

/* Sort rows into the order tune_emit_header writes them (sm, world, topo,
 * op, dtype, align, mode, skew_ns), so a caller can store them in the
 * header's own order. */
void tune_emit_sort(dc_threshold_row *rows, size_t nrows);

/* Sort rows (tune_emit_sort) and write them to f, one a line, as the
 * header's initializers: the text a table file (DC_THRESHOLDS_FILE) holds. */
void tune_emit_rows(FILE *f, dc_threshold_row *rows, size_t nrows);

/* Render the header for rows[0..nrows-1] into *text (malloc'd, the caller
 * frees it). Layout, as the checked-in default: a banner comment ("generated
 * by tune <version> from run <id> of <db> -- do not edit", then backend, GPU
 * model x count (sm), topology, driver, CUDA, NCCL, date, git revision; a
 * sim backend adds the line "SIMULATED: not measured on a GPU"), the include
 * guard DC_THRESHOLDS_H, #include "dc_table.h", DC_THRESHOLDS_PROVENANCE
 * "run <id> <backend> <gpu_model> sm<sm> <date>", and the array dc_thresholds
 * with one positional initializer per row written with the enum identifiers
 * and DC_BYTES_MAX. Rows are sorted by (sm, world, topo, op, dtype, align,
 * mode, skew_ns) whatever the input order. Provenance strings are sanitized
 * (no comment terminators, trigraphs, backslashes or control characters in
 * the banner; escaped in the string literal).
 *
 * tune_err_arg, *text untouched: no rows; a NULL argument; a row with an
 * enum out of range, world outside 1..DC_MAX_WORLD, sm or skew_ns < 0, nseg outside
 * 1..DC_MAX_SEGMENTS, max_bytes not strictly increasing, one past
 * INT64_MAX, the last one not DC_BYTES_MAX, a path not valid for the op (dc_path_valid), a path that
 * needs registered buffers (dc_path_needs_reg) in a row not DC_ALIGN_REG; or two rows
 * with the same key. tune_err_system: out of memory. */
tune_result tune_emit_header(const dc_threshold_row *rows, size_t nrows,
                             const tune_provenance *prov, char **text);

/* Write text to path atomically (tune_write_file: a temporary beside it,
 * written, made 0644, fsync'ed, renamed over path, then the folder
 * fsync'ed). On any failure the old file at path is untouched and the
 * temporary is removed (tune_err_system, with the reason). */
tune_result tune_emit_write(const char *path, const char *text);

#ifdef __cplusplus
}
#endif
#endif /* TUNE_EMIT_H */
