/* gpu_random.c: 10,000 random calls (op, dtype, path forced -- push, direct
 * and copy_engine included -- or auto, sizes log-uniform up to 64 KiB per
 * rank, in/out offsets up to 15 bytes for all_gather and 7 elements for
 * reductions, one call in six in place) with guard bytes, spread over long
 * lived communicators of every world (2, 4, 8 and the device count) in both
 * layouts (virtual ranks on device 0; one rank per GPU where there are
 * enough, else a skip line), each with an unregistered and a registered
 * pair of pooled buffers. A path that needs registration always runs on the
 * registered pair with 16-byte aligned offsets and 16-byte multiple sizes
 * (reduce_scatter: slices); auto runs on either pair, aligned on the
 * registered one, so it may pick those paths. One such call in sixteen is
 * misuse instead (unregistered buffers or a misaligned pointer or size) and
 * must return dc_err_arg with nothing launched. Then 300 calls with fresh
 * data where a random rank is delayed by a random 0..50 us before its call,
 * to catch reads of stale staging frames (and of peers' user buffers). */
#include "gpu_common.h"

typedef struct {
  gt_group g;
  gt_pool plain, reg;
  size_t calls, bad, failed, registered, inplace, refused;
} world_state;

static size_t random_case(world_state *ws, uint64_t *rng, uint64_t seed, int skew) {
  gt_group *g = &ws->g;
  gt_case c;
  dc_path paths[DC_PATH_COUNT];
  dc_op op = (dc_op)gt_range(rng, 0, DC_OP_COUNT - 1);
  dc_dtype dt = (dc_dtype)gt_range(rng, 0, DC_DTYPE_COUNT - 1);
  int np = dc_op_paths(op, paths);
  int pick = (int)gt_range(rng, 0, (uint64_t)np); /* np: auto */
  dc_path path = pick == np ? DC_PATH_AUTO : paths[pick];
  const int needs = dc_path_needs_reg(op, path);
  const int registered = needs || gt_range(rng, 0, 1);
  const int misuse = needs && !skew && gt_range(rng, 0, 15) == 0;
  const int inplace = gt_range(rng, 0, 5) == 0;
  size_t es = op == DC_OP_ALL_GATHER ? 1 : dc_dtype_size(dt);
  size_t bytes = (size_t)1 << gt_range(rng, 0, 16);
  size_t count, b, in_off, out_off;
  bytes = (size_t)gt_range(rng, 1, bytes);
  count = bytes / es ? bytes / es : 1;
  if (op == DC_OP_REDUCE_SCATTER) count = count / (size_t)g->world ? count / (size_t)g->world : 1;
  count = gt_count_fit(op, dt, path, count, g->world);
  if (registered) {
    const size_t per_rank = (op == DC_OP_REDUCE_SCATTER ? (size_t)g->world : 1) * es;
    count = gt_count_reg(op, dt, count);
    if ((uint64_t)count * per_rank > dc_path_max_bytes(op, path))
      count -= 16 / es; /* back under push's limit */
    in_off = 16 * gt_range(rng, 0, 3);
    out_off = 16 * gt_range(rng, 0, 3);
  } else {
    in_off = gt_range(rng, 0, op == DC_OP_ALL_GATHER ? 15 : 7) * es;
    out_off = gt_range(rng, 0, op == DC_OP_ALL_GATHER ? 15 : 7) * es;
  }
  if (misuse) {
    const int how = (int)gt_range(rng, 0, 3); /* unregistered, send, recv, size */
    gt_case_init(&c, g, how == 0 ? &ws->plain : &ws->reg, op, dt, path,
                 how == 3 ? count + 1 : count, in_off + (how == 1 ? es : 0),
                 out_off + (how == 2 ? es : 0));
    ws->refused++;
    b = gt_case_refused(&c, seed, dc_err_arg);
  } else {
    gt_case_init(&c, g, registered ? &ws->reg : &ws->plain, op, dt, path, count, in_off, out_off);
    c.inplace = inplace;
    ws->registered += (size_t)registered;
    ws->inplace += (size_t)inplace;
    if (!skew) {
      b = gt_case_run(&c, seed);
    } else {
      int late = (int)gt_range(rng, 0, (uint64_t)g->world - 1);
      uint64_t ns = gt_range(rng, 0, 50000);
      gt_case_fill(&c, seed);
      for (int r = 0; r < g->world; r++) {
        GT_CUDA(cudaSetDevice(g->dev[r]));
        if (r == late) GT_DC(dc_delay(g->st[r], ns, NULL));
        GT_DC(gt_case_issue(&c, r));
      }
      GT_CUDA(cudaSetDevice(g->dev[0]));
      gt_group_sync(g);
      b = gt_group_status(g) ? 1 : gt_case_check(&c);
    }
  }
  if (b) {
    char name[200];
    gt_case_name(&c, name, sizeof(name));
    tap_diag("FAILED (seed %llu%s%s): %s", (unsigned long long)seed, skew ? ", skewed" : "",
             misuse ? ", misuse" : "", name);
  }
  ws->calls++;
  ws->bad += b;
  ws->failed += b != 0;
  gt_case_free(&c);
  return b;
}

static void report(world_state *ws, int n, const char *what) {
  for (int i = 0; i < n; i++) {
    tap_ok(ws[i].bad == 0,
           "world %d (%s): %zu %s exact with guards intact (%zu failed; %zu registered, %zu in "
           "place, %zu misuse "
           "refused)",
           ws[i].g.world, gt_group_layout(&ws[i].g), ws[i].calls, what, ws[i].failed,
           ws[i].registered, ws[i].inplace, ws[i].refused);
    ws[i].calls = ws[i].bad = ws[i].failed = ws[i].registered = ws[i].inplace = ws[i].refused = 0;
  }
}

int main(void) {
  static world_state ws[2 * 4];
  int worlds[4], nw, n = 0, dev[DC_MAX_WORLD];
  dc_config cfg = {1u << 20, 0, 0, 0};
  uint64_t rng = 2024;
  double t0;
  gt_require_gpu();
  nw = gt_worlds(gt_device_count(), worlds);
  for (int l = 0; l < GT_LAYOUT_COUNT; l++)
    for (int i = 0; i < nw; i++) {
      const size_t max_in = 70000 + 64, max_out = (size_t)worlds[i] * 70000 + 64;
      if (!gt_layout_devices((gt_layout)l, worlds[i], dev)) continue;
      gt_group_init(&ws[n].g, worlds[i], dev, &cfg);
      gt_pool_init(&ws[n].plain, &ws[n].g, max_in, max_out);
      gt_pool_init(&ws[n].reg, &ws[n].g, max_in, max_out);
      gt_pool_register(&ws[n].reg);
      n++;
    }
  t0 = gt_now();
  for (int it = 0; it < 10000; it++) random_case(&ws[it % n], &rng, (uint64_t)it + 1, 0);
  tap_diag("10000 random calls in %.1f s", gt_now() - t0);
  report(ws, n, "random calls");
  t0 = gt_now();
  for (int it = 0; it < 300; it++) random_case(&ws[it % n], &rng, (uint64_t)it + 100001, 1);
  tap_diag("300 skewed calls in %.1f s", gt_now() - t0);
  report(ws, n, "randomly skewed calls with fresh data");
  for (int i = 0; i < n; i++) {
    gt_pool_free(&ws[i].reg);
    gt_pool_free(&ws[i].plain);
    gt_group_free(&ws[i].g);
  }
  return tap_done();
}
