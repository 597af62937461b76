/* gpu_graph.c: CUDA graphs. Each rank captures its own stream into its own
 * graph of K calls that mix ops, dtypes, paths (forced and auto, so the auto
 * choice uses the graph rows) and sizes (so grids change inside one graph);
 * the graphs are replayed with fresh inputs, interleaved with eager calls on
 * the same communicators, and every output is compared bit for bit with the
 * CPU fold. Sequence numbers live on the device, so replays stay in step. */
#include "gpu_common.h"

typedef struct {
  dc_op op;
  dc_dtype dtype;
  dc_path path;
  size_t size, in_off, out_off; /* offsets in elements (bytes for all_gather) */
} spec;

static const spec graph_calls[] = {
    {DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_AUTO, 100, 0, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_TWO_SHOT, 300001, 1, 0},
    {DC_OP_ALL_GATHER, DC_DTYPE_BF16, DC_PATH_FUSED, 777, 1, 0},
    {DC_OP_REDUCE_SCATTER, DC_DTYPE_FP32, DC_PATH_MULTI_BLOCK, 5000, 0, 3},
    {DC_OP_ALL_REDUCE, DC_DTYPE_FP16, DC_PATH_SINGLE_BLOCK, 33, 5, 7},
    {DC_OP_ALL_GATHER, DC_DTYPE_BF16, DC_PATH_MULTI_BLOCK, 1048576 + 5, 0, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_FP32, DC_PATH_AUTO, 70000, 0, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_ONE_SHOT, 1, 0, 0},
    {DC_OP_REDUCE_SCATTER, DC_DTYPE_BF16, DC_PATH_AUTO, 16, 0, 0},
    {DC_OP_ALL_GATHER, DC_DTYPE_BF16, DC_PATH_AUTO, 4096, 0, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_PUSH, 20001, 3, 1},
    {DC_OP_ALL_REDUCE, DC_DTYPE_FP32, DC_PATH_PUSH, 255, 0, 0},
    {DC_OP_ALL_REDUCE, DC_DTYPE_FP16, DC_PATH_PUSH, 7, 1, 2},
};
#define K (sizeof(graph_calls) / sizeof(graph_calls[0]))

static void make(gt_case *c, gt_group *g, const spec *s) {
  size_t es = s->op == DC_OP_ALL_GATHER ? 1 : dc_dtype_size(s->dtype);
  gt_case_init(c, g, NULL, s->op, s->dtype, s->path, gt_count_for(s->op, s->size, g->world), s->in_off * es,
               s->out_off * es);
}

static void one_world(int world, uint64_t *seed) {
  gt_group g;
  gt_case cs[K], eager[2];
  cudaGraph_t graph[DC_MAX_WORLD];
  cudaGraphExec_t exec[DC_MAX_WORLD];
  dc_config cfg = {8u << 20, 0, 0, 0};
  size_t bad_capture = 0, bad_replay = 0, bad_eager = 0;
  gt_group_init(&g, world, NULL, &cfg);
  for (size_t k = 0; k < K; k++) make(&cs[k], &g, &graph_calls[k]);
  make(&eager[0], &g, &graph_calls[1]);
  make(&eager[1], &g, &graph_calls[5]);
  /* Warm eager round, so the graph starts from a non-initial sequence. */
  bad_eager += gt_case_run(&eager[0], (*seed)++);
  for (int r = 0; r < world; r++) {
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
  tap_ok(bad_capture == 0, "world %d: %zu calls captured per rank", world, (size_t)K);
  for (int rep = 0; rep < 4; rep++) {
    for (size_t k = 0; k < K; k++) gt_case_fill(&cs[k], (*seed)++);
    for (int r = 0; r < world; r++) GT_CUDA(cudaGraphLaunch(exec[r], g.st[r]));
    gt_group_sync(&g);
    bad_replay += (size_t)gt_group_status(&g);
    for (size_t k = 0; k < K; k++) {
      size_t b = gt_case_check(&cs[k]);
      if (b) tap_diag("world %d replay %d call %zu: %zu wrong", world, rep, k, b);
      bad_replay += b;
    }
    /* Eager calls between replays, on the same communicators. */
    bad_eager += gt_case_run(&eager[rep & 1], (*seed)++);
  }
  tap_ok(bad_replay == 0, "world %d: 4 replays with fresh data are exact", world);
  tap_ok(bad_eager == 0, "world %d: eager calls interleaved with replays are exact", world);
  for (int r = 0; r < world; r++) {
    GT_CUDA(cudaGraphExecDestroy(exec[r]));
    GT_CUDA(cudaGraphDestroy(graph[r]));
  }
  for (size_t k = 0; k < K; k++) gt_case_free(&cs[k]);
  gt_case_free(&eager[0]);
  gt_case_free(&eager[1]);
  gt_group_free(&g);
}

int main(void) {
  static const int worlds[] = {2, 4, 8};
  uint64_t seed = 99;
  gt_require_gpu();
  for (size_t i = 0; i < sizeof(worlds) / sizeof(worlds[0]); i++) one_world(worlds[i], &seed);
  return tap_done();
}
