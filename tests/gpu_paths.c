/* gpu_paths.c: every op x dtype x forced path x world (2, 4, 8 virtual
 * ranks on device 0, and every GPU when more than one is present), sizes
 * 1, 15, 16, 17, 4095, 32K+3, 1M+5 and in/out offsets (0,0), (1,0), (0,3),
 * (5,7) (bytes for all_gather, elements for reductions, which need element
 * alignment; 1M+5 only with (0,0) and (5,7)), compared bit for bit with the CPU rank-order fold, guard bytes
 * checked. A path with a size limit (push) takes, instead of the sizes over
 * it, its limit and its limit less one element. Then special values (+-0, +-inf, subnormals, huge, NaN) and the
 * cancellation 1e8, 1, -1e8, 1, and run-to-run repeats. */
#include "gpu_common.h"

static const size_t sizes[] = {1, 15, 16, 17, 4095, 32768 + 3, 1048576 + 5};
static const size_t offs[][2] = {{0, 0}, {1, 0}, {0, 3}, {5, 7}};

static void sweep(gt_group *g, gt_pool *pool, uint64_t *seed) {
  for (int op = 0; op < DC_OP_COUNT; op++) {
    dc_path paths[DC_PATH_COUNT];
    int np = dc_op_paths((dc_op)op, paths);
    for (int dt = 0; dt < (op == DC_OP_ALL_GATHER ? 1 : DC_DTYPE_COUNT); dt++)
      for (int pi = 0; pi < np; pi++) {
        size_t bad = 0, ncase = 0, over = 0;
        for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
          size_t count = gt_count_for((dc_op)op, sizes[si], g->world);
          const size_t fit = gt_count_fit((dc_op)op, (dc_dtype)dt, paths[pi], count, g->world);
          if (fit != count) {
            if (over == 2) continue;
            count = fit - over++;
          }
          for (size_t oi = 0; oi < sizeof(offs) / sizeof(offs[0]); oi++) {
            gt_case c;
            size_t es = op == DC_OP_ALL_GATHER ? 1 : dc_dtype_size((dc_dtype)dt);
            size_t b;
            if (sizes[si] > 1000000 && (oi == 1 || oi == 2)) continue; /* keep the suite short */
            gt_case_init(&c, g, pool, (dc_op)op, (dc_dtype)dt, paths[pi], count, offs[oi][0] * es, offs[oi][1] * es);
            b = gt_case_run(&c, (*seed)++);
            if (b) {
              char name[160];
              gt_case_name(&c, name, sizeof(name));
              tap_diag("FAILED: %s: %zu wrong", name, b);
            }
            bad += b;
            ncase++;
            gt_case_free(&c);
          }
        }
        tap_ok(bad == 0, "%s %s %s world %d: %zu cases bitwise equal to the rank-order fold", dc_op_name((dc_op)op),
               op == DC_OP_ALL_GATHER ? "bytes" : dc_dtype_name((dc_dtype)dt), dc_path_name(paths[pi]), g->world,
               ncase);
      }
  }
}

/* Special values through every reduction path; NaN must stay NaN. */
static void specials(gt_group *g, gt_pool *pool, uint64_t *seed) {
  for (int op = DC_OP_ALL_REDUCE; op < DC_OP_COUNT; op++)
    for (int dt = 0; dt < DC_DTYPE_COUNT; dt++) {
      dc_path paths[DC_PATH_COUNT];
      int np = dc_op_paths((dc_op)op, paths);
      size_t bad = 0;
      for (int pi = 0; pi < np; pi++)
        for (int nan = 1; nan <= 2; nan++) {
          gt_case c;
          gt_case_init(&c, g, pool, (dc_op)op, (dc_dtype)dt, paths[pi],
                       gt_count_fit((dc_op)op, (dc_dtype)dt, paths[pi], gt_count_for((dc_op)op, 40000, g->world),
                                    g->world),
                       0, 0);
          c.specials = nan;
          bad += gt_case_run(&c, (*seed)++);
          gt_case_free(&c);
        }
      tap_ok(bad == 0, "%s %s world %d: special values follow the contract on every path", dc_op_name((dc_op)op),
             dc_dtype_name((dc_dtype)dt), g->world);
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
      gt_case_fill(&c, 1);
      for (int r = 0; r < 4; r++) {
        for (size_t i = 0; i < n; i++) gt_down((dc_dtype)dt, c.h_in[r], i, v[r]);
        GT_CUDA(cudaMemcpy(gt_case_send(&c, r), c.h_in[r], c.in_bytes, cudaMemcpyHostToDevice));
      }
      gt_case_reference(&c);
      for (int r = 0; r < 4; r++) GT_DC(gt_case_issue(&c, r));
      gt_group_sync(g);
      bad += gt_case_check(&c);
      for (size_t i = 0; i < n; i++) bad += gt_up((dc_dtype)dt, c.ref, i) != 1.0f;
      tap_ok(bad == 0, "cancellation 1e8,1,-1e8,1 gives exactly 1 (%s %s)", dc_dtype_name((dc_dtype)dt),
             dc_path_name(paths[pi]));
      gt_case_free(&c);
    }
  }
}

/* Same inputs twice on every path: same bits (and equal to the reference). */
static void repeats(gt_group *g, gt_pool *pool) {
  size_t bad = 0;
  for (int op = 0; op < DC_OP_COUNT; op++) {
    dc_path paths[DC_PATH_COUNT];
    int np = dc_op_paths((dc_op)op, paths);
    for (int pi = 0; pi < np; pi++)
      for (int rep = 0; rep < 3; rep++) {
        gt_case c;
        gt_case_init(&c, g, pool, (dc_op)op, DC_DTYPE_BF16, paths[pi],
                     gt_count_fit((dc_op)op, DC_DTYPE_BF16, paths[pi], gt_count_for((dc_op)op, 70001, g->world),
                                  g->world),
                     0, 0);
        bad += gt_case_run(&c, 4242);
        gt_case_free(&c);
      }
  }
  tap_ok(bad == 0, "world %d: repeated runs with the same inputs give the same bits on every path", g->world);
}

static void one_world(int world, const int *dev, uint64_t *seed) {
  dc_config cfg = {8u << 20, 0, 0, 0};
  gt_group g;
  gt_pool pool;
  double t0 = gt_now();
  gt_group_init(&g, world, dev, &cfg);
  gt_pool_init(&pool, &g, 5u << 20, (size_t)world * (2u << 20) + (5u << 20));
  sweep(&g, &pool, seed);
  specials(&g, &pool, seed);
  cancellation(&g);
  repeats(&g, &pool);
  gt_pool_free(&pool);
  gt_group_free(&g);
  tap_diag("world %d done in %.1f s", world, gt_now() - t0);
}

int main(void) {
  int ndev = gt_require_gpu();
  uint64_t seed = 1;
  static const int worlds[] = {2, 4, 8};
  for (size_t i = 0; i < sizeof(worlds) / sizeof(worlds[0]); i++) one_world(worlds[i], NULL, &seed);
  if (ndev > 1) {
    int dev[DC_MAX_WORLD], w = ndev < DC_MAX_WORLD ? ndev : DC_MAX_WORLD;
    for (int r = 0; r < w; r++) dev[r] = r;
    tap_diag("%d GPUs: one rank per GPU", w);
    one_world(w, dev, &seed);
  } else {
    tap_diag("one GPU: real multi-GPU worlds not run");
  }
  return tap_done();
}
