/* gpu_random.c: 10,000 random calls (op, dtype, path forced or auto,
 * world 2/4/8, sizes log-uniform up to 64 KiB per rank, in/out offsets up
 * to 15 bytes for all_gather and 7 elements for reductions) with guard
 * bytes, on long-lived communicators and pooled buffers; then 300 calls
 * with fresh data where a random rank is delayed by a random 0..50 us
 * before its call, to catch reads of stale staging frames. */
#include "gpu_common.h"

static size_t random_case(gt_group *g, gt_pool *pool, uint64_t *rng, uint64_t seed, int skew) {
  gt_case c;
  dc_path paths[DC_PATH_COUNT];
  dc_op op = (dc_op)gt_range(rng, 0, DC_OP_COUNT - 1);
  dc_dtype dt = (dc_dtype)gt_range(rng, 0, DC_DTYPE_COUNT - 1);
  int np = dc_op_paths(op, paths);
  int pick = (int)gt_range(rng, 0, (uint64_t)np); /* np: auto */
  size_t es = op == DC_OP_ALL_GATHER ? 1 : dc_dtype_size(dt);
  size_t bytes = (size_t)1 << gt_range(rng, 0, 16);
  size_t count, b;
  bytes = (size_t)gt_range(rng, 1, bytes);
  count = bytes / es ? bytes / es : 1;
  if (op == DC_OP_REDUCE_SCATTER) count = count / (size_t)g->world ? count / (size_t)g->world : 1;
  gt_case_init(&c, g, pool, op, dt, pick == np ? DC_PATH_AUTO : paths[pick], count,
               gt_range(rng, 0, op == DC_OP_ALL_GATHER ? 15 : 7) * es, gt_range(rng, 0, op == DC_OP_ALL_GATHER ? 15 : 7) * es);
  if (!skew) {
    b = gt_case_run(&c, seed);
  } else {
    int late = (int)gt_range(rng, 0, (uint64_t)g->world - 1);
    uint64_t ns = gt_range(rng, 0, 50000);
    gt_case_fill(&c, seed);
    for (int r = 0; r < g->world; r++) {
      if (r == late) GT_DC(dc_delay(g->st[r], ns, NULL));
      GT_DC(gt_case_issue(&c, r));
    }
    gt_group_sync(g);
    b = gt_group_status(g) ? 1 : gt_case_check(&c);
  }
  if (b) {
    char name[160];
    gt_case_name(&c, name, sizeof(name));
    tap_diag("FAILED (seed %llu%s): %s", (unsigned long long)seed, skew ? ", skewed" : "", name);
  }
  gt_case_free(&c);
  return b;
}

int main(void) {
  static const int worlds[] = {2, 4, 8};
  gt_group g[3];
  gt_pool pool[3];
  dc_config cfg = {1u << 20, 0, 0, 0};
  uint64_t rng = 2024;
  size_t bad = 0, bad_skew = 0, nb = 0;
  double t0;
  gt_require_gpu();
  for (int i = 0; i < 3; i++) {
    gt_group_init(&g[i], worlds[i], NULL, &cfg);
    gt_pool_init(&pool[i], &g[i], 70000 + 64, (size_t)worlds[i] * 70000 + 64);
  }
  t0 = gt_now();
  for (int it = 0; it < 10000; it++) {
    size_t b = random_case(&g[it % 3], &pool[it % 3], &rng, (uint64_t)it + 1, 0);
    bad += b;
    nb += b != 0;
  }
  tap_ok(bad == 0, "10000 random calls exact with guards intact (%zu failed) in %.1f s", nb, gt_now() - t0);
  t0 = gt_now();
  nb = 0;
  for (int it = 0; it < 300; it++) {
    size_t b = random_case(&g[it % 3], &pool[it % 3], &rng, (uint64_t)it + 100001, 1);
    bad_skew += b;
    nb += b != 0;
  }
  tap_ok(bad_skew == 0, "300 randomly skewed calls with fresh data exact (%zu failed) in %.1f s", nb, gt_now() - t0);
  for (int i = 0; i < 3; i++) {
    gt_pool_free(&pool[i]);
    gt_group_free(&g[i]);
  }
  return tap_done();
}
