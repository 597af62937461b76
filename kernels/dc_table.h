/* dc_table.h: the vocabulary shared by libdetcoll, the tuner and the
 * generated thresholds.h -- ops, dtypes, paths, alignment classes, modes,
 * topologies -- and the threshold table row type. Plain C, no CUDA, so the
 * tuner and its tests build on machines without the toolkit. */
#ifndef DC_TABLE_H
#define DC_TABLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What libdetcoll exports: it is built with hidden visibility, and only
 * declarations marked DC_API (its API) are seen from outside. */
#ifndef DC_API
#define DC_API __attribute__((visibility("default")))
#endif

/* Most ranks in one communicator (a table row's world is 1..DC_MAX_WORLD). */
#define DC_MAX_WORLD 8

/* A macro's value as a string literal: DC_STR(DC_MAX_WORLD) is "8". */
#define DC_STR_(x) #x
#define DC_STR(x) DC_STR_(x)

typedef enum {
  DC_OP_ALL_GATHER = 0,
  DC_OP_ALL_REDUCE,
  DC_OP_REDUCE_SCATTER,
  DC_OP_COUNT
} dc_op;

typedef enum { DC_DTYPE_BF16 = 0, DC_DTYPE_FP16, DC_DTYPE_FP32, DC_DTYPE_COUNT } dc_dtype;

/* DC_PATH_AUTO asks the threshold table; the others force a kernel path.
 * Which paths exist for which op is dc_path_valid(); some paths take only
 * messages up to dc_path_max_bytes(). New paths go at the end (values are
 * stable; tables store paths by name). */
typedef enum {
  DC_PATH_AUTO = 0,
  DC_PATH_SINGLE_BLOCK,
  DC_PATH_FUSED,
  DC_PATH_MULTI_BLOCK,
  DC_PATH_ONE_SHOT,
  DC_PATH_TWO_SHOT,
  DC_PATH_PUSH,        /* data+flag lines pushed into peers (small messages, every op) */
  DC_PATH_DIRECT,      /* registered buffers: peers' user buffers read (and, for
                          all_reduce, written) directly, no staging copy */
  DC_PATH_COPY_ENGINE, /* all_gather, registered send buffers: peer copies by the
                          copy engine between two flag kernels */
  DC_PATH_PIPELINE,    /* all_gather, all_reduce: staging and peer reads at once,
                          piece by piece, by blocks of different roles */
  DC_PATH_COUNT
} dc_path;

/* DC_ALIGN_16: input, output and byte count all 16-byte aligned (every copy
 * vectorizes). DC_ALIGN_ANY: anything else (vector body plus byte tails).
 * DC_ALIGN_REG: DC_ALIGN_16, and both buffers lie in registered windows
 * (dc_register_*), so the paths that need registration may be chosen; a
 * table without DC_ALIGN_REG rows for a key serves such calls from its
 * DC_ALIGN_16 rows. New classes go at the end. */
typedef enum { DC_ALIGN_16 = 0, DC_ALIGN_ANY, DC_ALIGN_REG, DC_ALIGN_COUNT } dc_align;

typedef enum { DC_MODE_EAGER = 0, DC_MODE_GRAPH, DC_MODE_COUNT } dc_mode;

/* DC_TOPO_SINGLE_GPU: virtual ranks sharing one GPU. */
typedef enum { DC_TOPO_SINGLE_GPU = 0, DC_TOPO_NVLINK, DC_TOPO_PCIE, DC_TOPO_COUNT } dc_topo;

/* libdetcoll's version, the package's (configure's PACKAGE_VERSION; the
 * shared library's -version-info counts interface changes apart). */
#define DC_VERSION_MAJOR 0
#define DC_VERSION_MINOR 1
#define DC_VERSION_PATCH 0
#define DC_VERSION "0.1.0"

#define DC_MAX_SEGMENTS 8
#define DC_BYTES_MAX UINT64_MAX
/* Largest bytes per rank (each rank's input) of a call on DC_PATH_PUSH: its
 * receive area, allocated beside every rank's staging frames, holds this
 * much payload per source rank and parity (at twice the size: lines carry
 * flags). 1 MiB (was 256 KiB): on two H200s reduce_scatter at 512 KiB
 * through staging lost to NCCL by 2-3%; at 256 KiB push took 0.67x of the
 * best NCCL's time (docs/results/2026-12-01-2xh200/call2). */
#define DC_PUSH_MAX_BYTES 1048576

/* A row's segments are ordered by max_bytes: a message of b bytes per rank
 * takes the first segment with b <= max_bytes; the last one is DC_BYTES_MAX.
 * "Bytes per rank" is each rank's input buffer size in bytes. skew_ns is the
 * typical rank skew the row was tuned under (0: the zero-skew row). */
typedef struct {
  uint64_t max_bytes;
  dc_path path;
} dc_segment;

typedef struct {
  int sm;
  int world;
  dc_topo topo;
  dc_op op;
  dc_dtype dtype;
  dc_align align;
  dc_mode mode;
  int64_t skew_ns;
  int nseg;
  dc_segment seg[DC_MAX_SEGMENTS];
} dc_threshold_row;

/* Names: "all_reduce", "bf16", "one_shot", "align16", "graph", "nvlink".
 * The *_enum_name() variants give the C identifier ("DC_PATH_ONE_SHOT") used
 * in generated headers. Unknown values give NULL. */
DC_API const char *dc_op_name(dc_op op);
DC_API const char *dc_dtype_name(dc_dtype dtype);
DC_API const char *dc_path_name(dc_path path);
DC_API const char *dc_align_name(dc_align align);
DC_API const char *dc_mode_name(dc_mode mode);
DC_API const char *dc_topo_name(dc_topo topo);
DC_API const char *dc_op_enum_name(dc_op op);
DC_API const char *dc_dtype_enum_name(dc_dtype dtype);
DC_API const char *dc_path_enum_name(dc_path path);
DC_API const char *dc_align_enum_name(dc_align align);
DC_API const char *dc_mode_enum_name(dc_mode mode);
DC_API const char *dc_topo_enum_name(dc_topo topo);

/* Parse a name as printed by the functions above; -1 if unknown. */
DC_API int dc_op_parse(const char *s);
DC_API int dc_dtype_parse(const char *s);
DC_API int dc_path_parse(const char *s);
DC_API int dc_align_parse(const char *s);
DC_API int dc_mode_parse(const char *s);
DC_API int dc_topo_parse(const char *s);

/* Element size of a dtype in bytes (0 if unknown). */
DC_API size_t dc_dtype_size(dc_dtype dtype);

/* 1 if path is a forceable kernel path of op, else 0 (DC_PATH_AUTO: 0). */
DC_API int dc_path_valid(dc_op op, dc_path path);

/* The forceable paths of op, in table order; returns how many (<= DC_PATH_COUNT). */
DC_API int dc_op_paths(dc_op op, dc_path *paths);

/* 1 if path needs op's buffers in registered windows (DC_ALIGN_REG):
 * DC_PATH_DIRECT and DC_PATH_COPY_ENGINE. */
DC_API int dc_path_needs_reg(dc_op op, dc_path path);

/* The largest bytes per rank path can take for op: DC_PUSH_MAX_BYTES for
 * the push path, DC_BYTES_MAX for paths without a limit of their
 * own (and for unknown ops or paths). A forced call above it fails with
 * dc_err_capacity; auto dispatch never picks the path above it, and the
 * tuner does not measure it there. The comm's staging capacity bounds every
 * path that stages (all but direct and copy_engine on registered windows,
 * which auto dispatch takes past it). */
DC_API uint64_t dc_path_max_bytes(dc_op op, dc_path path);

/* Alignment class of a call: DC_ALIGN_16 iff both pointers and the byte
 * count are multiples of 16. bytes: dc_align_bytes of the call. */
DC_API dc_align dc_align_class(uintptr_t in, uintptr_t out, uint64_t bytes);

/* The byte count an op's alignment class asks to be a multiple of 16: a
 * reduce-scatter's slice (bytes per rank / world: the unit its kernels
 * copy; an in-place call, recv = send + rank * slice, is then of one class
 * on every rank), else bytes per rank. */
static inline uint64_t dc_align_bytes(dc_op op, uint64_t bytes_per_rank, int world) {
  return op == DC_OP_REDUCE_SCATTER && world > 0 ? bytes_per_rank / (uint64_t)world : bytes_per_rank;
}

/* The path a row assigns to bytes per rank (DC_PATH_AUTO if the row is empty). */
DC_API dc_path dc_row_path(const dc_threshold_row *row, uint64_t bytes);

/* The dtype of op's rows: all_gather moves bytes, so its rows are keyed
 * bf16 whatever dtype a caller names, and its rows of other dtypes are
 * never looked up. Every other op's rows are keyed by its own dtype. */
static inline dc_dtype dc_table_dtype(dc_op op, dc_dtype dtype) {
  return op == DC_OP_ALL_GATHER ? DC_DTYPE_BF16 : dtype;
}

/* Look up the row for a key in a table. topo, op, dtype (as dc_table_dtype
 * keys it), align and mode match exactly; sm takes the largest row sm <=
 * the asked one (a newer GPU uses the newest table it can), world likewise
 * the largest row world <= the asked one, and skew_ns the row with exactly
 * that skew, else the zero-skew row. Returns NULL when nothing matches. */
DC_API const dc_threshold_row *dc_table_find(const dc_threshold_row *rows, size_t nrows, int sm, int world,
                                      dc_topo topo, dc_op op, dc_dtype dtype, dc_align align,
                                      dc_mode mode, int64_t skew_ns);

/* ---- tables given at run time ---------------------------------------------
 *
 * A table need not be compiled in: dc_comm_set_table gives a comm one, and
 * the environment variable DC_THRESHOLDS_FILE names a file every comm
 * created afterwards takes its default table from (the compiled-in table
 * when unset). The file is a thresholds header as tune writes it, or just
 * its rows: positional initializers {sm, world, topo, op, dtype, align,
 * mode, skew_ns, nseg, {{max_bytes, path}, ...}}, separated by commas, with
 * enum identifiers (DC_OP_ALL_REDUCE) or short names (all_reduce). */

/* The environment variable naming a table file. */
#define DC_THRESHOLDS_FILE_ENV "DC_THRESHOLDS_FILE"

/* 1 if a and b have the same key (sm, world, topo, op, dtype, align, mode,
 * skew_ns): a table holds at most one row per key. */
DC_API int dc_row_same_key(const dc_threshold_row *a, const dc_threshold_row *b);

/* Check rows[0..n): each row's enums in range, world 1..DC_MAX_WORLD, sm and skew_ns
 * >= 0, nseg 1..DC_MAX_SEGMENTS, max_bytes strictly increasing, each at
 * most INT64_MAX but the last, DC_BYTES_MAX, every path valid for the op (dc_path_valid) and one
 * that needs registered buffers only in a DC_ALIGN_REG row; no two rows
 * with the same key; n >= 1. Returns 0, or -1 with the reason (naming the
 * row) in why[0..len). */
DC_API int dc_table_check(const dc_threshold_row *rows, size_t n, char *why, size_t len);

/* Parse a table file's text (see above) into *rows (malloc'd; the caller
 * frees it), *n rows, checked by dc_table_check. The text is read as the
 * compiler reads it, or refused: decimal numbers without a leading 0,
 * max_bytes at most INT64_MAX unless DC_BYTES_MAX; no preprocessor line
 * but the include guard, #include "dc_table.h" and #define
 * DC_THRESHOLDS_PROVENANCE; no backslash line joins; nothing but comments
 * after the array's '};' (dc_table_read_file also refuses a NUL byte).
 * Returns 0, or -1 with the reason (line and what was expected) in why,
 * *rows untouched. */
DC_API int dc_table_parse(const char *text, dc_threshold_row **rows, size_t *n, char *why, size_t len);

/* dc_table_parse of the file at path. */
DC_API int dc_table_read_file(const char *path, dc_threshold_row **rows, size_t *n, char *why, size_t len);

/* A hash of a table's content, independent of row order (FNV-1a over each
 * row's fields, combined by addition): two tables with the same rows hash
 * alike. For telling whether a compiled-in table is the one measured. */
DC_API uint64_t dc_table_hash(const dc_threshold_row *rows, size_t n);

/* The table compiled in from kernels/thresholds.h, its row count and its
 * provenance string. */
extern DC_API const dc_threshold_row *const dc_builtin_thresholds;
extern DC_API const size_t dc_builtin_thresholds_count;
extern DC_API const char *const dc_builtin_thresholds_provenance;

#ifdef __cplusplus
}
#endif
#endif /* DC_TABLE_H */
