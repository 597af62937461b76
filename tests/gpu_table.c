/* gpu_table.c: threshold tables given at run time. dc_comm_set_table makes
 * auto dispatch follow the given rows (dc_query_path, and eager auto calls
 * exact at the sizes on both sides of a threshold); a malformed table is
 * dc_err_arg with a message and leaves the comm's table as it was; NULL
 * restores the compiled-in table; DC_THRESHOLDS_FILE gives new comms their
 * table, and a malformed file fails comm creation with dc_err_arg. An
 * in-place reduce_scatter keeps every rank in one alignment class; past
 * the staging capacity, registered calls take a path that stages nothing. */
#include <stdlib.h>

#include "gpu_common.h"

enum { TABLE_BYTES = 4096 };

/* One row per op, dtype, alignment class and mode for the comm's key: the
 * op's first path up to TABLE_BYTES, its last unregistered one above. */
static size_t make_table(const dc_comm_info *info, int world, dc_threshold_row *rows) {
  size_t n = 0;
  for (int op = 0; op < DC_OP_COUNT; op++) {
    dc_path p[DC_PATH_COUNT];
    int np = dc_op_paths((dc_op)op, p);
    while (np > 1 && dc_path_needs_reg((dc_op)op, p[np - 1])) np--;
    for (int dt = 0; dt < DC_DTYPE_COUNT; dt++)
      for (int al = 0; al < 2; al++)
        for (int m = 0; m < DC_MODE_COUNT; m++)
          rows[n++] = (dc_threshold_row){info->sm, world, info->topo, (dc_op)op, (dc_dtype)dt, (dc_align)al,
                                         (dc_mode)m, 0, 2, {{TABLE_BYTES, p[0]}, {DC_BYTES_MAX, p[np - 1]}}};
  }
  return n;
}

/* Whether all_reduce bf16 auto dispatch on g follows rows at TABLE_BYTES and
 * twice that, by query and by exact eager calls. */
static int follows(gt_group *g, gt_pool *pool, const dc_comm_info *info, const dc_threshold_row *rows, size_t n,
                   uint64_t *seed) {
  int ok = 1;
  for (size_t bytes = TABLE_BYTES; bytes <= 2 * TABLE_BYTES; bytes *= 2) {
    const dc_threshold_row *row = dc_table_find(rows, n, info->sm, g->world, info->topo, DC_OP_ALL_REDUCE,
                                                DC_DTYPE_BF16, DC_ALIGN_16, DC_MODE_EAGER, 0);
    gt_case c;
    dc_path got = DC_PATH_AUTO, want = row ? dc_row_path(row, bytes) : DC_PATH_AUTO;
    gt_case_init(&c, g, pool, DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_AUTO, bytes / 2, 0, 0);
    GT_DC(dc_query_path(g->comm[0], DC_OP_ALL_REDUCE, DC_DTYPE_BF16, gt_case_send(&c, 0), gt_case_recv(&c, 0),
                        bytes, DC_MODE_EAGER, &got));
    if (got != want) tap_diag("%zu bytes: auto dispatch took %s, the table says %s", bytes, dc_path_name(got),
                              dc_path_name(want));
    ok &= got == want && gt_case_run(&c, (*seed)++) == 0;
    gt_case_free(&c);
  }
  return ok;
}

/* An in-place reduce_scatter whose slices are not whole 16-byte vectors
 * while its whole input is: rank 0's recv is its 16-byte aligned send,
 * rank 1's lies a slice (8 mod 16 bytes) further. Rows that name another
 * path for each class must not split the ranks (detcoll.h's calling
 * rules): both take the unaligned row's path, and the call is exact. */
static int inplace_rs_one_class(gt_group *g, gt_pool *pool, const dc_comm_info *info, uint64_t *seed) {
  dc_path p[DC_PATH_COUNT], got[2] = {DC_PATH_AUTO, DC_PATH_AUTO};
  dc_threshold_row rows[2];
  gt_case c;
  int np = dc_op_paths(DC_OP_REDUCE_SCATTER, p), ok;
  while (np > 1 && dc_path_needs_reg(DC_OP_REDUCE_SCATTER, p[np - 1])) np--;
  for (int al = 0; al < 2; al++)
    rows[al] = (dc_threshold_row){info->sm, g->world, info->topo, DC_OP_REDUCE_SCATTER, DC_DTYPE_BF16,
                                  (dc_align)al, DC_MODE_EAGER, 0, 1,
                                  {{DC_BYTES_MAX, al == DC_ALIGN_16 ? p[0] : p[np - 1]}}};
  for (int r = 0; r < g->world; r++) GT_DC(dc_comm_set_table(g->comm[r], rows, 2));
  gt_case_init(&c, g, pool, DC_OP_REDUCE_SCATTER, DC_DTYPE_BF16, DC_PATH_AUTO, 4100, 0, 0);
  c.inplace = 1;
  for (int r = 0; r < 2; r++)
    GT_DC(dc_query_path(g->comm[r], DC_OP_REDUCE_SCATTER, DC_DTYPE_BF16, gt_case_send(&c, r),
                        gt_case_recv(&c, r), c.in_bytes, DC_MODE_EAGER, &got[r]));
  ok = got[0] == p[np - 1] && got[1] == p[np - 1];
  if (!ok)
    tap_diag("in-place reduce_scatter, %zu-byte slices: rank 0 takes %s, rank 1 %s, want %s", c.out_bytes,
             dc_path_name(got[0]), dc_path_name(got[1]), dc_path_name(p[np - 1]));
  ok &= gt_case_run(&c, (*seed)++) == 0;
  gt_case_free(&c);
  for (int r = 0; r < g->world; r++) GT_DC(dc_comm_set_table(g->comm[r], NULL, 0));
  return ok;
}

/* Past the staging capacity (twice it), under a table whose registered
 * row names one_shot, which stages: auto dispatch on registered windows
 * takes a path that stages nothing and is exact; on plain buffers the call
 * is refused with dc_err_capacity, nothing launched. */
static int past_staging(gt_group *g, const dc_comm_info *info, uint64_t *seed) {
  const dc_threshold_row row = {info->sm, g->world, info->topo, DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_ALIGN_REG,
                                DC_MODE_EAGER, 0, 1, {{DC_BYTES_MAX, DC_PATH_ONE_SHOT}}};
  dc_path got = DC_PATH_AUTO;
  gt_case c;
  int ok;
  for (int r = 0; r < g->world; r++) GT_DC(dc_comm_set_table(g->comm[r], &row, 1));
  gt_case_init(&c, g, NULL, DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_AUTO, info->staging_bytes, 0, 0);
  ok = gt_case_refused(&c, (*seed)++, dc_err_capacity) == 0;
  gt_case_register(&c);
  GT_DC(dc_query_path(g->comm[0], DC_OP_ALL_REDUCE, DC_DTYPE_BF16, gt_case_send(&c, 0), gt_case_recv(&c, 0),
                      c.in_bytes, DC_MODE_EAGER, &got));
  if (!dc_path_needs_reg(DC_OP_ALL_REDUCE, got)) tap_diag("registered, past the staging: auto takes %s", dc_path_name(got));
  ok &= dc_path_needs_reg(DC_OP_ALL_REDUCE, got) && gt_case_run(&c, (*seed)++) == 0;
  gt_case_free(&c);
  for (int r = 0; r < g->world; r++) GT_DC(dc_comm_set_table(g->comm[r], NULL, 0));
  return ok;
}

int main(void) {
  static dc_threshold_row rows[DC_OP_COUNT * DC_DTYPE_COUNT * 2 * DC_MODE_COUNT];
  uint64_t seed = 11;
  dc_config cfg = {1u << 20, 0, 0, 0};
  dc_comm_info info;
  gt_group g;
  gt_pool pool;
  gt_require_gpu();
  unsetenv(DC_THRESHOLDS_FILE_ENV);
  gt_group_init(&g, 2, NULL, &cfg);
  GT_DC(dc_comm_get_info(g.comm[0], &info));
  gt_pool_init(&pool, &g, 1u << 20, 2u << 20);
  size_t n = make_table(&info, 2, rows);
  for (int r = 0; r < 2; r++) GT_DC(dc_comm_set_table(g.comm[r], rows, n));
  tap_ok(follows(&g, &pool, &info, rows, n, &seed), "dc_comm_set_table: auto dispatch follows the table given");

  dc_threshold_row bad = rows[0];
  bad.seg[1].max_bytes = 16; /* not increasing, and not ending at DC_BYTES_MAX */
  dc_result r = dc_comm_set_table(g.comm[0], &bad, 1);
  tap_ok(r == dc_err_arg && dc_comm_last_error(g.comm[0])[0] != '\0',
         "a malformed table is dc_err_arg: %s", dc_comm_last_error(g.comm[0]));
  tap_ok(follows(&g, &pool, &info, rows, n, &seed), "and the comm keeps the table it had");

  for (int k = 0; k < 2; k++) GT_DC(dc_comm_set_table(g.comm[k], NULL, 0));
  tap_ok(follows(&g, &pool, &info, dc_builtin_thresholds, dc_builtin_thresholds_count, &seed),
         "NULL restores the compiled-in table");
  tap_ok(inplace_rs_one_class(&g, &pool, &info, &seed),
         "in-place reduce_scatter with slices of 8 mod 16 bytes: every rank of one class, exact");
  tap_ok(past_staging(&g, &info, &seed),
         "all_reduce of twice the staging capacity: registered, auto takes a path that stages nothing, "
         "exact; unregistered, dc_err_capacity");
  gt_pool_free(&pool);
  gt_group_free(&g);

  /* The same table from a file, as a list of rows. */
  char path[] = "/tmp/gpu_table_XXXXXX";
  int fd = mkstemp(path);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (f == NULL) {
    printf("Bail out! cannot make a temporary file\n");
    return 1;
  }
  for (size_t i = 0; i < n; i++)
    fprintf(f, "{%d, %d, %s, %s, %s, %s, %s, 0, 2, {{%d, %s}, {DC_BYTES_MAX, %s}}},\n", rows[i].sm, rows[i].world,
            dc_topo_enum_name(rows[i].topo), dc_op_name(rows[i].op), dc_dtype_name(rows[i].dtype),
            dc_align_enum_name(rows[i].align), dc_mode_name(rows[i].mode), TABLE_BYTES,
            dc_path_name(rows[i].seg[0].path), dc_path_enum_name(rows[i].seg[1].path));
  fclose(f);
  setenv(DC_THRESHOLDS_FILE_ENV, path, 1);
  gt_group_init(&g, 2, NULL, &cfg);
  gt_pool_init(&pool, &g, 1u << 20, 2u << 20);
  tap_ok(follows(&g, &pool, &info, rows, n, &seed), "DC_THRESHOLDS_FILE: new comms follow the file's table");
  gt_pool_free(&pool);
  gt_group_free(&g);

  f = fopen(path, "a");
  if (f) fputs("{90, 2, nvlink, all_reduce}\n", f);
  if (f) fclose(f);
  dc_comm c[2] = {NULL, NULL};
  r = dc_comm_create_local(2, (const int[]){0, 0}, &cfg, c);
  tap_ok(r == dc_err_arg && c[0] == NULL, "a malformed DC_THRESHOLDS_FILE fails comm creation with dc_err_arg (%s)",
         dc_result_str(r));
  unlink(path);
  unsetenv(DC_THRESHOLDS_FILE_ENV);
  return tap_done();
}
