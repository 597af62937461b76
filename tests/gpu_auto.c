/* gpu_auto.c: automatic path choice. For every builtin threshold row that
 * applies to virtual ranks on this GPU (world 2, 4, 8; both alignment
 * classes; eager and graph), at every segment boundary -16, -1, 0, +1, +16
 * (bytes for all_gather; elements for reductions, whose sizes are element
 * multiples), dc_query_path must name the row's path, and an eager call
 * with DC_PATH_AUTO must give the rank-order fold bit for bit. */
#include "gpu_common.h"

static const long deltas[] = {-16, -1, 0, 1, 16};

/* The path the row gives, found independently of dc_row_path. */
static dc_path expect(const dc_threshold_row *row, uint64_t bytes) {
  for (int i = 0; i < row->nseg; i++)
    if (bytes <= row->seg[i].max_bytes) return row->seg[i].path;
  return DC_PATH_AUTO;
}

int main(void) {
  static const int worlds[] = {2, 4, 8};
  uint64_t seed = 7;
  gt_require_gpu();
  for (size_t wi = 0; wi < sizeof(worlds) / sizeof(worlds[0]); wi++) {
    const int world = worlds[wi];
    dc_config cfg = {4u << 20, 0, 0, 0};
    dc_comm_info info;
    gt_group g;
    gt_pool pool;
    size_t nq = 0, badq = 0, nrun = 0, badrun = 0;
    gt_group_init(&g, world, NULL, &cfg);
    GT_DC(dc_comm_get_info(g.comm[0], &info));
    gt_pool_init(&pool, &g, 4u << 20, (size_t)world * (4u << 20));
    for (int op = 0; op < DC_OP_COUNT; op++)
      for (int dt = 0; dt < DC_DTYPE_COUNT; dt++)
        for (int al = 0; al < DC_ALIGN_COUNT; al++)
          for (int mode = 0; mode < DC_MODE_COUNT; mode++) {
            const dc_threshold_row *row =
                dc_table_find(dc_builtin_thresholds, dc_builtin_thresholds_count, info.sm, world, info.topo,
                              (dc_op)op, (dc_dtype)dt, (dc_align)al, (dc_mode)mode, 0);
            const size_t es = op == DC_OP_ALL_GATHER ? 1 : dc_dtype_size((dc_dtype)dt);
            const size_t unit = op == DC_OP_REDUCE_SCATTER ? es * (size_t)world : es;
            if (!row || (op == DC_OP_ALL_GATHER && dt != DC_DTYPE_BF16)) continue; /* all_gather: bf16 rows */
            for (int sgi = 0; sgi + 1 < row->nseg; sgi++)
              for (size_t di = 0; di < sizeof(deltas) / sizeof(deltas[0]); di++) {
                /* count in API units near the boundary; bytes per rank from it */
                long long cnt = (long long)(row->seg[sgi].max_bytes / unit) + deltas[di];
                size_t count, in_off = al == DC_ALIGN_16 ? 0 : es, bytes;
                dc_path want, got = DC_PATH_AUTO;
                gt_case c;
                if (cnt < 1) continue;
                count = (size_t)cnt;
                bytes = count * unit;
                if (bytes > info.staging_bytes) continue;
                if (al == DC_ALIGN_16 && dc_align_bytes((dc_op)op, bytes, world) % 16) continue; /* not in this class */
                want = expect(row, bytes);
                gt_case_init(&c, &g, &pool, (dc_op)op, (dc_dtype)dt, DC_PATH_AUTO, count, in_off, 0);
                GT_DC(dc_query_path(g.comm[0], (dc_op)op, (dc_dtype)dt, gt_case_send(&c, 0), gt_case_recv(&c, 0), bytes,
                                    (dc_mode)mode, &got));
                nq++;
                if (got != want) {
                  badq++;
                  tap_diag("query %s %s %s %s world %d bytes %zu: got %s want %s", dc_op_name((dc_op)op),
                           dc_dtype_name((dc_dtype)dt), dc_align_name((dc_align)al), dc_mode_name((dc_mode)mode),
                           world, bytes, dc_path_name(got), dc_path_name(want));
                }
                if (mode == DC_MODE_EAGER) {
                  nrun++;
                  badrun += gt_case_run(&c, seed++) != 0;
                }
                gt_case_free(&c);
              }
          }
    tap_ok(nq > 0 && badq == 0, "world %d: dc_query_path follows the threshold table at %zu boundary sizes", world, nq);
    tap_ok(nrun > 0 && badrun == 0, "world %d: %zu auto-path calls at thresholds -16/-1/0/+1/+16 are exact", world, nrun);
    gt_pool_free(&pool);
    gt_group_free(&g);
  }
  return tap_done();
}
