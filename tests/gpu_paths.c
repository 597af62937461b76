/* gpu_paths.c: every op x dtype x path (every forced path -- push, direct
 * and copy_engine included -- and auto) x world (2, 4, 8 and the device
 * count) x layout (virtual ranks on device 0; one rank per GPU where the
 * machine has enough, else a skip line), compared bit for bit with the CPU
 * rank-order fold, guard bytes checked.
 *
 * Unregistered buffers (every path that does not need registration, and
 * auto): sizes 1, 15, 16, 17, 4095, 32K+3, 1M+5 and in/out offsets (0,0),
 * (1,0), (0,3), (5,7) (bytes for all_gather, elements for reductions, which
 * need element alignment; 1M+5 only with (0,0) and (5,7)), out of place and
 * in place (out offsets 0 and 3). A path with a size limit (push) takes,
 * instead of the sizes over it, its limit and its limit less one element.
 *
 * Registered buffers (dc_register_local; the paths that need them, and
 * auto, which may then pick them): the same sizes rounded up to a multiple
 * of 16 bytes per rank result (so 16, 32, 4096, 32K+16, 1M+16: vector
 * tails, not byte tails), byte offsets (0,0), (16,0), (0,48), (80,112), out
 * of place and in place; the other forced paths once at offset (0,0).
 *
 * Misuse on every path that needs registration: unregistered buffers, a
 * send or recv 16-byte misaligned, a byte count (reduce_scatter: slice) not
 * a multiple of 16 -- dc_err_arg on every rank, output untouched, watchdogs
 * clean, and a good call right after is exact.
 *
 * Ranks at different alignments: odd ranks' buffers 4 bytes further, on
 * every path that needs no registration.
 *
 * Then special values (+-0, +-inf, subnormals, huge, NaN), the cancellation
 * 1e8, 1, -1e8, 1, and run-to-run repeats, on every path; last, every path
 * on a grid of at most 3 blocks, where blocks take several parts or pieces. */
#include "gpu_common.h"

static const size_t sizes[] = {1, 15, 16, 17, 4095, 32768 + 3, 1048576 + 5};
static const size_t offs[][2] = {{0, 0}, {1, 0}, {0, 3}, {5, 7}};          /* elements */
static const size_t reg_offs[][2] = {{0, 0}, {16, 0}, {0, 48}, {80, 112}}; /* bytes */

typedef struct {
  gt_pool plain, reg; /* the same sizes; reg's buffers are registered windows */
} pools;

static const char *dt_name(int op, int dt) {
  return op == DC_OP_ALL_GATHER ? "bytes" : dc_dtype_name((dc_dtype)dt);
}

/* One case, eager; adds its wrong count to *bad. */
static void one_case(gt_group *g, gt_pool *pool, dc_op op, dc_dtype dt, dc_path path, size_t count,
                     size_t in_off, size_t out_off, int inplace, uint64_t seed, size_t *bad) {
  gt_case c;
  size_t b;
  gt_case_init(&c, g, pool, op, dt, path, count, in_off, out_off);
  c.inplace = inplace;
  b = gt_case_run(&c, seed);
  if (b) {
    char name[200];
    gt_case_name(&c, name, sizeof(name));
    tap_diag("FAILED: %s: %zu wrong", name, b);
  }
  *bad += b;
  gt_case_free(&c);
}

/* The paths of op to sweep, auto last. */
static int sweep_paths(dc_op op, dc_path *paths) {
  int np = dc_op_paths(op, paths);
  paths[np++] = DC_PATH_AUTO;
  return np;
}

static void sweep(gt_group *g, pools *pl, int registered, uint64_t *seed) {
  for (int op = 0; op < DC_OP_COUNT; op++) {
    dc_path paths[DC_PATH_COUNT + 1];
    int np = sweep_paths((dc_op)op, paths);
    for (int dt = 0; dt < (op == DC_OP_ALL_GATHER ? 1 : DC_DTYPE_COUNT); dt++)
      for (int pi = 0; pi < np; pi++) {
        const int needs = dc_path_needs_reg((dc_op)op, paths[pi]);
        const size_t es = op == DC_OP_ALL_GATHER ? 1 : dc_dtype_size((dc_dtype)dt);
        size_t bad = 0, ncase = 0, over = 0;
        if (needs && !registered) continue;
        for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
          size_t count = gt_count_for((dc_op)op, sizes[si], g->world);
          size_t fit;
          if (registered) count = gt_count_reg((dc_op)op, (dc_dtype)dt, count);
          fit = gt_count_fit((dc_op)op, (dc_dtype)dt, paths[pi], count, g->world);
          if (fit != count) {
            if (over == 2) continue;
            count = fit - over++; /* push: needs no registration, so any size */
          }
          for (int inplace = 0; inplace <= 1; inplace++)
            for (size_t oi = 0; oi < sizeof(offs) / sizeof(offs[0]); oi++) {
              size_t in_off = registered ? reg_offs[oi][0] : offs[oi][0] * es;
              size_t out_off = registered ? reg_offs[oi][1] : offs[oi][1] * es;
              if (sizes[si] > 1000000 && (oi == 1 || oi == 2)) continue; /* keep the suite short */
              if (inplace && (oi == 1 || oi == 3)) continue; /* in place ignores in_off */
              if (registered && !needs && paths[pi] != DC_PATH_AUTO && (oi || inplace)) continue;
              one_case(g, registered ? &pl->reg : &pl->plain, (dc_op)op, (dc_dtype)dt, paths[pi],
                       count, in_off, out_off, inplace, (*seed)++, &bad);
              ncase++;
            }
        }
        tap_ok(bad == 0,
               "%s %s %s world %d (%s), %s buffers: %zu cases bitwise equal to the rank-order fold",
               dc_op_name((dc_op)op), dt_name(op, dt), dc_path_name(paths[pi]), g->world,
               gt_group_layout(g), registered ? "registered" : "unregistered", ncase);
      }
  }
}

/* Every path that needs registration refuses unregistered or misaligned
 * buffers (dc_err_arg, nothing launched); a good call right after is exact. */
static void misuse(gt_group *g, pools *pl, uint64_t *seed) {
  for (int op = 0; op < DC_OP_COUNT; op++) {
    dc_path paths[DC_PATH_COUNT];
    int np = dc_op_paths((dc_op)op, paths);
    for (int pi = 0; pi < np; pi++) {
      if (!dc_path_needs_reg((dc_op)op, paths[pi])) continue;
      for (int dt = 0; dt < (op == DC_OP_ALL_GATHER ? 1 : DC_DTYPE_COUNT); dt++) {
        const size_t es = op == DC_OP_ALL_GATHER ? 1 : dc_dtype_size((dc_dtype)dt);
        const size_t count =
            gt_count_reg((dc_op)op, (dc_dtype)dt, gt_count_for((dc_op)op, 40000, g->world));
        size_t bad = 0, good = 0;
        gt_case c;
        /* unregistered, misaligned send, misaligned recv, odd size */
        gt_case_init(&c, g, &pl->plain, (dc_op)op, (dc_dtype)dt, paths[pi], count, 0, 0);
        bad += gt_case_refused(&c, (*seed)++, dc_err_arg);
        gt_case_init(&c, g, &pl->reg, (dc_op)op, (dc_dtype)dt, paths[pi], count, es, 0);
        bad += gt_case_refused(&c, (*seed)++, dc_err_arg);
        gt_case_init(&c, g, &pl->reg, (dc_op)op, (dc_dtype)dt, paths[pi], count, 0, es);
        bad += gt_case_refused(&c, (*seed)++, dc_err_arg);
        if (16 / es > 1) {
          gt_case_init(&c, g, &pl->reg, (dc_op)op, (dc_dtype)dt, paths[pi], count + 1, 0, 0);
          bad += gt_case_refused(&c, (*seed)++, dc_err_arg);
        }
        one_case(g, &pl->reg, (dc_op)op, (dc_dtype)dt, paths[pi], count, 0, 0, 0, (*seed)++, &good);
        tap_ok(bad == 0 && good == 0,
               "%s %s %s world %d (%s): unregistered, misaligned and odd-size calls refused with "
               "dc_err_arg, "
               "nothing launched; a good call after them exact",
               dc_op_name((dc_op)op), dt_name(op, dt), dc_path_name(paths[pi]), g->world,
               gt_group_layout(g));
      }
    }
  }
}

/* The pool and count for a path: registered buffers and a 16-byte multiple
 * where the path needs them. */
static gt_pool *pool_for(pools *pl, dc_op op, dc_dtype dt, dc_path path, size_t *count) {
  if (!dc_path_needs_reg(op, path)) return &pl->plain;
  *count = gt_count_reg(op, dt, *count);
  return &pl->reg;
}

/* Ranks at different alignments (the calling rules let pointers differ):
 * odd ranks' send and recv 4 bytes further than even ranks', on every
 * forced path that needs no registration, at sizes that take several
 * blocks and pieces. */
static void mixed_offsets(gt_group *g, pools *pl, uint64_t *seed) {
  static const size_t mixed_sizes[] = {32768 + 3, 1048576 + 5};
  for (int op = 0; op < DC_OP_COUNT; op++) {
    dc_path paths[DC_PATH_COUNT];
    int np = dc_op_paths((dc_op)op, paths);
    size_t bad = 0, ncase = 0;
    for (int dt = 0; dt < (op == DC_OP_ALL_GATHER ? 1 : DC_DTYPE_COUNT); dt++)
      for (int pi = 0; pi < np; pi++) {
        if (dc_path_needs_reg((dc_op)op, paths[pi])) continue;
        for (size_t si = 0; si < sizeof(mixed_sizes) / sizeof(mixed_sizes[0]); si++) {
          gt_case c;
          size_t count = gt_count_fit((dc_op)op, (dc_dtype)dt, paths[pi],
                                      gt_count_for((dc_op)op, mixed_sizes[si], g->world), g->world);
          gt_case_init(&c, g, &pl->plain, (dc_op)op, (dc_dtype)dt, paths[pi], count, 0, 0);
          c.odd_off = 4;
          size_t b = gt_case_run(&c, (*seed)++);
          if (b) {
            char name[240];
            gt_case_name(&c, name, sizeof(name));
            tap_diag("FAILED: %s: %zu wrong", name, b);
          }
          bad += b;
          ncase++;
          gt_case_free(&c);
        }
      }
    tap_ok(bad == 0,
           "%s world %d (%s): ranks at different alignments, every unregistered path: %zu cases",
           dc_op_name((dc_op)op), g->world, gt_group_layout(g), ncase);
  }
}

/* Special values through every reduction path; NaN must stay NaN. */
static void specials(gt_group *g, pools *pl, uint64_t *seed) {
  for (int op = DC_OP_ALL_REDUCE; op < DC_OP_COUNT; op++)
    for (int dt = 0; dt < DC_DTYPE_COUNT; dt++) {
      dc_path paths[DC_PATH_COUNT];
      int np = dc_op_paths((dc_op)op, paths);
      size_t bad = 0;
      for (int pi = 0; pi < np; pi++)
        for (int nan = 1; nan <= 2; nan++) {
          gt_case c;
          size_t count = gt_count_fit((dc_op)op, (dc_dtype)dt, paths[pi],
                                      gt_count_for((dc_op)op, 40000, g->world), g->world);
          gt_pool *pool = pool_for(pl, (dc_op)op, (dc_dtype)dt, paths[pi], &count);
          gt_case_init(&c, g, pool, (dc_op)op, (dc_dtype)dt, paths[pi], count, 0, 0);
          c.specials = nan;
          bad += gt_case_run(&c, (*seed)++);
          gt_case_free(&c);
        }
      tap_ok(bad == 0, "%s %s world %d (%s): special values follow the contract on every path",
             dc_op_name((dc_op)op), dc_dtype_name((dc_dtype)dt), g->world, gt_group_layout(g));
    }
}

/* 1e8, 1, -1e8, 1 in rank order: exactly 1 in fp32 and bf16 (1e8 rounds to
 * a bf16 value that still cancels); world 4 only. */
static void cancellation(gt_group *g) {
  static const float v[4] = {1e8f, 1.0f, -1e8f, 1.0f};
  if (g->world != 4) return;
  for (int dt = 0; dt < DC_DTYPE_COUNT; dt++) {
    dc_path paths[DC_PATH_COUNT];
    int np = dc_op_paths(DC_OP_ALL_REDUCE, paths);
    if (dt == DC_DTYPE_FP16) continue; /* 1e8 is inf in fp16 */
    for (int pi = 0; pi < np; pi++) {
      gt_case c;
      size_t n = 1000, bad = 0;
      gt_case_init(&c, g, NULL, DC_OP_ALL_REDUCE, (dc_dtype)dt, paths[pi], n, 0, 0);
      if (dc_path_needs_reg(DC_OP_ALL_REDUCE, paths[pi])) gt_case_register(&c);
      gt_case_fill(&c, 1);
      for (int r = 0; r < 4; r++) {
        for (size_t i = 0; i < n; i++) gt_down((dc_dtype)dt, c.h_in[r], i, v[r]);
        GT_CUDA(cudaSetDevice(g->dev[r]));
        GT_CUDA(cudaMemcpy(gt_case_send(&c, r), c.h_in[r], c.in_bytes, cudaMemcpyHostToDevice));
      }
      GT_CUDA(cudaSetDevice(g->dev[0]));
      gt_case_reference(&c);
      for (int r = 0; r < 4; r++) GT_DC(gt_case_issue(&c, r));
      gt_group_sync(g);
      bad += gt_case_check(&c);
      for (size_t i = 0; i < n; i++) bad += gt_up((dc_dtype)dt, c.ref, i) != 1.0f;
      tap_ok(bad == 0, "cancellation 1e8,1,-1e8,1 gives exactly 1 (%s %s, %s)",
             dc_dtype_name((dc_dtype)dt), dc_path_name(paths[pi]), gt_group_layout(g));
      gt_case_free(&c);
    }
  }
}

/* Same inputs twice on every path: same bits (and equal to the reference). */
static void repeats(gt_group *g, pools *pl) {
  size_t bad = 0;
  for (int op = 0; op < DC_OP_COUNT; op++) {
    dc_path paths[DC_PATH_COUNT];
    int np = dc_op_paths((dc_op)op, paths);
    for (int pi = 0; pi < np; pi++)
      for (int rep = 0; rep < 3; rep++) {
        gt_case c;
        size_t count = gt_count_fit((dc_op)op, DC_DTYPE_BF16, paths[pi],
                                    gt_count_for((dc_op)op, 70001, g->world), g->world);
        gt_pool *pool = pool_for(pl, (dc_op)op, DC_DTYPE_BF16, paths[pi], &count);
        gt_case_init(&c, g, pool, (dc_op)op, DC_DTYPE_BF16, paths[pi], count, 0, 0);
        bad += gt_case_run(&c, 4242);
        gt_case_free(&c);
      }
  }
  tap_ok(bad == 0,
         "world %d (%s): repeated runs with the same inputs give the same bits on every path",
         g->world, gt_group_layout(g));
}

/* A group of world ranks on dev with at most max_blocks blocks a call (0:
 * the default), and its plain and registered pools, large enough for every
 * size here. */
static void open_world(gt_group *g, pools *pl, int world, const int *dev, int max_blocks) {
  dc_config cfg = {8u << 20, 0, max_blocks, 0};
  const size_t max_in = 5u << 20, max_out = (size_t)world * (2u << 20) + (5u << 20);
  gt_group_init(g, world, dev, &cfg);
  gt_pool_init(&pl->plain, g, max_in, max_out);
  gt_pool_init(&pl->reg, g, max_in, max_out);
  gt_pool_register(&pl->reg);
}

static void close_world(gt_group *g, pools *pl) {
  gt_pool_free(&pl->reg);
  gt_pool_free(&pl->plain);
  gt_group_free(g);
}

/* A grid bound of 3 blocks: every block of a multi-block path takes a large
 * part, and the pipeline's blocks several pieces each (up to 11 at 1M+5 and
 * world 2), which the default grid of tens of blocks reaches only at several
 * MiB per rank. Every path at 40000 and 1M+5, in registered buffers where
 * the path needs them. */
static void few_blocks(int world, const int *dev, uint64_t *seed) {
  static const size_t few_sizes[] = {40000, 1048576 + 5};
  gt_group g;
  pools pl;
  open_world(&g, &pl, world, dev, 3);
  for (int op = 0; op < DC_OP_COUNT; op++) {
    dc_path paths[DC_PATH_COUNT];
    int np = dc_op_paths((dc_op)op, paths);
    size_t bad = 0, ncase = 0;
    for (int dt = 0; dt < (op == DC_OP_ALL_GATHER ? 1 : DC_DTYPE_COUNT); dt++)
      for (int pi = 0; pi < np; pi++)
        for (size_t si = 0; si < sizeof(few_sizes) / sizeof(few_sizes[0]); si++) {
          size_t count = gt_count_fit((dc_op)op, (dc_dtype)dt, paths[pi],
                                      gt_count_for((dc_op)op, few_sizes[si], world), world);
          gt_pool *pool = pool_for(&pl, (dc_op)op, (dc_dtype)dt, paths[pi], &count);
          one_case(&g, pool, (dc_op)op, (dc_dtype)dt, paths[pi], count, 0, 0, 0, (*seed)++, &bad);
          ncase++;
        }
    tap_ok(bad == 0,
           "%s world %d (%s), 3 blocks at most: %zu cases bitwise equal to the rank-order fold",
           dc_op_name((dc_op)op), world, gt_group_layout(&g), ncase);
  }
  close_world(&g, &pl);
}

static void one_world(int world, const int *dev, uint64_t *seed) {
  gt_group g;
  pools pl;
  double t0 = gt_now();
  open_world(&g, &pl, world, dev, 0);
  sweep(&g, &pl, 0, seed);
  sweep(&g, &pl, 1, seed);
  misuse(&g, &pl, seed);
  mixed_offsets(&g, &pl, seed);
  specials(&g, &pl, seed);
  cancellation(&g);
  repeats(&g, &pl);
  close_world(&g, &pl);
  few_blocks(world, dev, seed);
  tap_diag("world %d (%s) done in %.1f s", world, gt_group_layout(&g), gt_now() - t0);
}

int main(void) {
  int worlds[4], nw, dev[DC_MAX_WORLD];
  uint64_t seed = 1;
  gt_require_gpu();
  nw = gt_worlds(gt_device_count(), worlds);
  for (int l = 0; l < GT_LAYOUT_COUNT; l++)
    for (int i = 0; i < nw; i++)
      if (gt_layout_devices((gt_layout)l, worlds[i], dev)) one_world(worlds[i], dev, &seed);
  return tap_done();
}
