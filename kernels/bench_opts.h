/* bench_opts.h: the command line of bench_detcoll -- its options as one
 * table, parsed without CUDA so that tests/bench_args checks them on any
 * machine. */
#ifndef BENCH_OPTS_H
#define BENCH_OPTS_H

#include <stddef.h>

#include "dc_table.h"

enum {
  BENCH_MAX_SIZES = 64,
  BENCH_AUTO_REG = DC_PATH_COUNT, /* bit of --paths for auto_reg (DC_PATH_AUTO's bit: auto) */
  BENCH_MAX_WORLD = 8,            /* DC_MAX_WORLD (asserted in bench_detcoll.c) */
  BENCH_MAX_BLOCKS = 256,         /* DC_MAX_BLOCKS (asserted in bench_detcoll.c) */
};

typedef enum {
  BENCH_DETCOLL = 0,
  BENCH_NCCL,
  BENCH_NCCL_SYMM,
  BENCH_FLOOR,
  BENCH_IMPL_COUNT
} bench_impl_id;

typedef struct {
  int world, iters, warmup, graph_calls, threads, max_blocks, check, p2p;
  int offset; /* bytes from each buffer's allocation to the call's pointer */
  int op; /* -1: every op */
  dc_dtype dtype;
  int eager, graph;
  unsigned impls; /* bit per bench_impl_id */
  unsigned paths; /* bit per dc_path, DC_PATH_AUTO's bit for auto, BENCH_AUTO_REG's for auto_reg */
  size_t sizes[BENCH_MAX_SIZES];
  int nsizes;
  /* nccl-tests' -b/-e/-f: sizes from begin to end, times factor each step */
  size_t begin_bytes, end_bytes;
  int factor;
  int range_given, sizes_given;
  size_t p2p_bytes;
  const char *out_path;
} bench_opts;

/* Parse argv into o. On a bad option prints what is wrong (and for an
 * unknown one the usage) to stderr and exits 2: nothing has touched a GPU
 * yet. --help prints the usage to stdout and exits 0. */
void bench_parse(int argc, char **argv, bench_opts *o);

#endif /* BENCH_OPTS_H */
