/* gpu_graph.c: CUDA graphs, for every world (2, 4, 8 and the device count)
 * in both layouts (virtual ranks on device 0; one rank per GPU where there
 * are enough, else a skip line). Each rank captures its own stream into its
 * own graph of K calls that mix ops, dtypes, paths (forced -- push for every
 * op, pipeline, direct and copy_engine on registered buffers -- and auto, on
 * unregistered and registered buffers, so the auto choice uses the graph
 * rows of both alignment classes), sizes (so grids change inside one graph)
 * and in-place calls; the graphs are replayed with fresh inputs,
 * interleaved with eager calls (staging and direct) on the same
 * communicators, and every output is compared bit for bit with the CPU
 * fold. Sequence numbers live on the device, so replays stay in step. */
#include "gpu_common.h"

typedef struct {
  dc_op op;
  dc_dtype dtype;
  dc_path path;
  size_t size, in_off, out_off; /* offsets in elements (bytes for all_gather) */
  int reg, inplace;             /* registered buffers (offsets then 16-byte multiples); in place */
} spec;

static const spec graph_calls[] = {
    {DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_AUTO, 100, 0, 0, 0, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_TWO_SHOT, 300001, 1, 0, 0, 0},
    {DC_OP_ALL_GATHER, DC_DTYPE_BF16, DC_PATH_FUSED, 777, 1, 0, 0, 0},
    {DC_OP_REDUCE_SCATTER, DC_DTYPE_FP32, DC_PATH_MULTI_BLOCK, 5000, 0, 3, 0, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_FP16, DC_PATH_SINGLE_BLOCK, 33, 5, 7, 0, 0},
    {DC_OP_ALL_GATHER, DC_DTYPE_BF16, DC_PATH_MULTI_BLOCK, 1048576 + 5, 0, 0, 0, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_FP32, DC_PATH_AUTO, 70000, 0, 0, 0, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_ONE_SHOT, 1, 0, 0, 0, 0},
    {DC_OP_REDUCE_SCATTER, DC_DTYPE_BF16, DC_PATH_AUTO, 16, 0, 0, 0, 0},
    {DC_OP_ALL_GATHER, DC_DTYPE_BF16, DC_PATH_AUTO, 4096, 0, 0, 0, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_PUSH, 20001, 3, 1, 0, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_FP32, DC_PATH_PUSH, 255, 0, 0, 0, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_FP16, DC_PATH_PUSH, 7, 1, 2, 0, 0},
    {DC_OP_ALL_GATHER, DC_DTYPE_BF16, DC_PATH_PUSH, 3001, 1, 0, 0, 0},
    {DC_OP_REDUCE_SCATTER, DC_DTYPE_FP32, DC_PATH_PUSH, 1001, 0, 1, 0, 0},
    {DC_OP_REDUCE_SCATTER, DC_DTYPE_BF16, DC_PATH_PUSH, 99, 0, 0, 0, 1},
    {DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_DIRECT, 4096 + 8, 8, 0, 1, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_FP32, DC_PATH_DIRECT, 300004, 0, 4, 1, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_FP16, DC_PATH_DIRECT, 1000, 0, 8, 1, 1},
    {DC_OP_ALL_GATHER, DC_DTYPE_BF16, DC_PATH_COPY_ENGINE, 1048576 + 16, 16, 32, 1, 0},
    {DC_OP_ALL_GATHER, DC_DTYPE_BF16, DC_PATH_DIRECT, 4112, 0, 0, 1, 0},
    {DC_OP_ALL_GATHER, DC_DTYPE_BF16, DC_PATH_DIRECT, 784, 0, 48, 1, 1},
    {DC_OP_ALL_GATHER, DC_DTYPE_BF16, DC_PATH_COPY_ENGINE, 160, 0, 0, 1, 1},
    {DC_OP_REDUCE_SCATTER, DC_DTYPE_BF16, DC_PATH_DIRECT, 5000, 8, 16, 1, 0},
    {DC_OP_REDUCE_SCATTER, DC_DTYPE_FP16, DC_PATH_DIRECT, 40000, 0, 0, 1, 1},
    {DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_AUTO, 70000, 0, 0, 1, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_AUTO, 512, 0, 0, 1, 1},
    {DC_OP_ALL_GATHER, DC_DTYPE_BF16, DC_PATH_AUTO, 65536, 0, 0, 1, 0},
    {DC_OP_REDUCE_SCATTER, DC_DTYPE_FP32, DC_PATH_AUTO, 8192, 0, 0, 1, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_TWO_SHOT, 20001, 0, 0, 0, 1},
    {DC_OP_REDUCE_SCATTER, DC_DTYPE_BF16, DC_PATH_MULTI_BLOCK, 5000, 0, 3, 0, 1},
    {DC_OP_ALL_GATHER, DC_DTYPE_BF16, DC_PATH_MULTI_BLOCK, 777, 0, 5, 0, 1},
    {DC_OP_ALL_GATHER, DC_DTYPE_BF16, DC_PATH_PIPELINE, 1048576 + 5, 3, 1, 0, 0},
    {DC_OP_ALL_GATHER, DC_DTYPE_BF16, DC_PATH_PIPELINE, 20000, 0, 0, 0, 1},
    {DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_PIPELINE, 300001, 1, 3, 0, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_FP32, DC_PATH_PIPELINE, 5000, 0, 0, 0, 1},
};
/* Eager calls between replays: staging paths, pipeline and direct. */
static const spec eager_calls[] = {
    {DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_TWO_SHOT, 300001, 1, 0, 0, 0},
    {DC_OP_ALL_GATHER, DC_DTYPE_BF16, DC_PATH_MULTI_BLOCK, 1048576 + 5, 0, 0, 0, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_DIRECT, 65536 + 8, 0, 0, 1, 0},
    {DC_OP_ALL_GATHER, DC_DTYPE_BF16, DC_PATH_COPY_ENGINE, 65536 + 16, 0, 0, 1, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_FP16, DC_PATH_PIPELINE, 2000003, 0, 0, 0, 0},
};
#define NE (sizeof(eager_calls) / sizeof(eager_calls[0]))
#define K (sizeof(graph_calls) / sizeof(graph_calls[0]))

/* A registered case's buffers are carved (into *sub) from the group's one
 * registered pool: two windows per rank for all of them. */
static void make(gt_case *c, gt_pool *sub, gt_pool *reg, gt_group *g, const spec *s) {
  size_t es = s->op == DC_OP_ALL_GATHER ? 1 : dc_dtype_size(s->dtype);
  size_t count =
      gt_count_fit(s->op, s->dtype, s->path, gt_count_for(s->op, s->size, g->world), g->world);
  if (s->reg) {
    gt_case sz;
    memset(&sz, 0, sizeof(sz));
    count = gt_count_reg(s->op, s->dtype, count);
    sz.g = g;
    sz.op = s->op;
    sz.dtype = s->dtype;
    sz.count = count;
    gt_case_sizes(&sz);
    gt_pool_carve(sub, reg, sz.in_bytes + s->in_off * es,
                  (sz.in_bytes > sz.out_bytes ? sz.in_bytes : sz.out_bytes) + s->out_off * es);
  }
  gt_case_init(c, g, s->reg ? sub : NULL, s->op, s->dtype, s->path, count, s->in_off * es,
               s->out_off * es);
  c->inplace = s->inplace;
}

static void one_world(int world, const int *dev, uint64_t *seed) {
  gt_group g;
  gt_case cs[K], eager[NE];
  gt_pool reg, sub[K + NE];
  cudaGraph_t graph[DC_MAX_WORLD];
  cudaGraphExec_t exec[DC_MAX_WORLD];
  dc_config cfg = {8u << 20, 0, 0, 0};
  size_t bad_capture = 0, bad_replay = 0, bad_eager = 0;
  gt_group_init(&g, world, dev, &cfg);
  gt_pool_init(&reg, &g, 8u << 20, (size_t)world * (2u << 20) + (8u << 20));
  gt_pool_register(&reg);
  for (size_t k = 0; k < K; k++) make(&cs[k], &sub[k], &reg, &g, &graph_calls[k]);
  for (size_t e = 0; e < NE; e++) make(&eager[e], &sub[K + e], &reg, &g, &eager_calls[e]);
  /* Warm eager round, so the graph starts from a non-initial sequence. */
  bad_eager += gt_case_run(&eager[0], (*seed)++);
  for (int r = 0; r < world; r++) {
    GT_CUDA(cudaSetDevice(g.dev[r]));
    GT_CUDA(cudaStreamBeginCapture(g.st[r], cudaStreamCaptureModeThreadLocal));
    for (size_t k = 0; k < K; k++) {
      dc_result res = gt_case_issue(&cs[k], r);
      if (res != dc_ok) {
        tap_diag("capture rank %d call %zu: %s: %s", r, k, dc_result_str(res), dc_comm_last_error(g.comm[r]));
        bad_capture++;
      }
    }
    GT_CUDA(cudaStreamEndCapture(g.st[r], &graph[r]));
    GT_CUDA(cudaGraphInstantiate(&exec[r], graph[r], 0));
  }
  GT_CUDA(cudaSetDevice(g.dev[0]));
  tap_ok(bad_capture == 0, "world %d (%s): %zu calls captured per rank", world, gt_group_layout(&g),
         (size_t)K);
  for (int rep = 0; rep < 4; rep++) {
    for (size_t k = 0; k < K; k++) gt_case_fill(&cs[k], (*seed)++);
    for (int r = 0; r < world; r++) {
      GT_CUDA(cudaSetDevice(g.dev[r]));
      GT_CUDA(cudaGraphLaunch(exec[r], g.st[r]));
    }
    GT_CUDA(cudaSetDevice(g.dev[0]));
    gt_group_sync(&g);
    bad_replay += (size_t)gt_group_status(&g);
    for (size_t k = 0; k < K; k++) {
      size_t b = gt_case_check(&cs[k]);
      if (b) {
        char name[200];
        gt_case_name(&cs[k], name, sizeof(name));
        tap_diag("replay %d call %zu (%s): %zu wrong", rep, k, name, b);
      }
      bad_replay += b;
    }
    /* Eager calls between replays, on the same communicators. */
    for (size_t e = 0; e < NE; e++)
      if ((size_t)rep % 2 == e % 2) bad_eager += gt_case_run(&eager[e], (*seed)++);
  }
  tap_ok(bad_replay == 0, "world %d (%s): 4 replays with fresh data are exact", world,
         gt_group_layout(&g));
  tap_ok(bad_eager == 0, "world %d (%s): eager calls interleaved with replays are exact", world,
         gt_group_layout(&g));
  for (int r = 0; r < world; r++) {
    GT_CUDA(cudaGraphExecDestroy(exec[r]));
    GT_CUDA(cudaGraphDestroy(graph[r]));
  }
  for (size_t k = 0; k < K; k++) gt_case_free(&cs[k]);
  for (size_t e = 0; e < NE; e++) gt_case_free(&eager[e]);
  for (size_t k = 0; k < K + NE; k++)
    if (k < K ? graph_calls[k].reg : eager_calls[k - K].reg) gt_pool_free(&sub[k]);
  gt_pool_free(&reg);
  gt_group_free(&g);
}

int main(void) {
  int worlds[4], nw, dev[DC_MAX_WORLD];
  uint64_t seed = 99;
  gt_require_gpu();
  nw = gt_worlds(gt_device_count(), worlds);
  for (int l = 0; l < GT_LAYOUT_COUNT; l++)
    for (int i = 0; i < nw; i++)
      if (gt_layout_devices((gt_layout)l, worlds[i], dev)) one_world(worlds[i], dev, &seed);
  return tap_done();
}
