/* gpu_errors.c: bad input returns the right dc_result, names the argument
 * and launches nothing (outputs keep their guard pattern, and the next good
 * call still meets its peers: a stray launch would put one rank's sequence
 * out of step). Zero size is a no-op; a forced push above its size limit
 * is a capacity error. Registered windows, in both layouts (virtual ranks;
 * distinct GPUs where there are two): a path that needs registration
 * refuses unregistered or misaligned buffers with a message that says so;
 * overlapping registrations, a window not starting 16-byte aligned,
 * deregistering what is not a window start and
 * more than DC_MAX_WINDOWS windows are refused (all or nothing across the
 * ranks); a deregistered buffer is refused again; and a graph captured on a
 * window still replays exactly after dc_deregister, because in one process
 * nothing is unmapped (across processes the peers' mappings are closed and
 * such a replay reads unmapped memory: detcoll.h). Then the watchdog
 * (single-block, push, two-shot and multi-block paths): one rank of two
 * never calls; the other returns from its kernel within the configured
 * timeout, dc_comm_status reports dc_err_timeout naming the missing rank,
 * later calls are refused, and both comms can be destroyed. dc_topology
 * refuses bad arguments and classifies one GPU, an unseen one and two. */
#include <errno.h>

#include "gpu_common.h"

/* Staging of bad_inputs' comm: above the push path's limit, so a forced
 * push over its limit meets that limit, not the staging capacity. */
#define BAD_STAGING (2 * DC_PUSH_MAX_BYTES)

/* Sets name to value, or unsets it (value NULL); bails out if it cannot. */
static void env_set(const char *name, const char *value) {
  if ((value ? setenv(name, value, 1) : unsetenv(name)) != 0) {
    printf("Bail out! cannot %s %s: %s\n", value ? "set" : "unset", name, strerror(errno));
    exit(1);
  }
}

/* An environment variable's value, to put back with env_restore (NULL:
 * it was not set); bails out if it cannot be copied. */
static char *env_save(const char *name) {
  const char *v = getenv(name);
  char *saved = v ? strdup(v) : NULL;
  if (v && !saved) {
    printf("Bail out! cannot copy %s\n", name);
    exit(1);
  }
  return saved;
}

/* name as env_save found it; frees saved. */
static void env_restore(const char *name, char *saved) {
  env_set(name, saved);
  free(saved);
}

static void bad_inputs(void) {
  gt_group g;
  gt_case c;
  dc_config cfg = {BAD_STAGING, 0, 0, 0};
  dc_comm x;
  char *in, *out;
  cudaStream_t st;
  dc_path p;
  int n = 0;
  gt_group_init(&g, 2, NULL, &cfg);
  x = g.comm[0];
  st = g.st[0];
  gt_case_init(&c, &g, NULL, DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_AUTO, 1000, 0, 0);
  gt_case_fill(&c, 5);
  in = (char *)gt_case_send(&c, 0);
  out = (char *)gt_case_recv(&c, 0);
#define EXPECT(call, want, what)                                                                       \
  do {                                                                                                 \
    dc_result r_ = (call);                                                                             \
    tap_ok(r_ == (want), "%s -> %s (%s)", what, dc_result_str(r_), dc_comm_last_error(x));            \
    n++;                                                                                               \
  } while (0)
  EXPECT(dc_all_reduce(x, NULL, out, 1000, DC_DTYPE_BF16, DC_PATH_AUTO, st), dc_err_arg, "null send");
  tap_ok(strstr(dc_comm_last_error(x), "send") != NULL, "message names the argument: %s", dc_comm_last_error(x));
  EXPECT(dc_all_reduce(x, in, NULL, 1000, DC_DTYPE_BF16, DC_PATH_AUTO, st), dc_err_arg, "null recv");
  EXPECT(dc_all_reduce(x, in + 1, out, 999, DC_DTYPE_BF16, DC_PATH_AUTO, st), dc_err_arg, "bf16 send at odd address");
  EXPECT(dc_all_reduce(x, in, out + 1, 999, DC_DTYPE_BF16, DC_PATH_AUTO, st), dc_err_arg, "bf16 recv at odd address");
  EXPECT(dc_all_reduce(x, in + 2, out, 400, DC_DTYPE_FP32, DC_PATH_AUTO, st), dc_err_arg, "fp32 send 2-byte aligned");
  EXPECT(dc_reduce_scatter(x, in, out + 2, 100, DC_DTYPE_FP32, DC_PATH_AUTO, st), dc_err_arg,
         "reduce_scatter fp32 recv 2-byte aligned");
  EXPECT(dc_all_gather(x, NULL, out, 10, DC_PATH_AUTO, st), dc_err_arg, "all_gather null send");
  EXPECT(dc_all_reduce(x, in, out, 1000, DC_DTYPE_COUNT, DC_PATH_AUTO, st), dc_err_arg, "unknown dtype");
  EXPECT(dc_all_reduce(x, in, out, 1000, (dc_dtype)-1, DC_PATH_AUTO, st), dc_err_arg, "negative dtype");
  EXPECT(dc_all_reduce(x, in, out, 1000, DC_DTYPE_BF16, DC_PATH_FUSED, st), dc_err_arg, "fused is no all_reduce path");
  EXPECT(dc_all_gather(x, in, out, 10, DC_PATH_TWO_SHOT, st), dc_err_arg, "two_shot is no all_gather path");
  EXPECT(dc_reduce_scatter(x, in, out, 10, DC_DTYPE_BF16, DC_PATH_ONE_SHOT, st), dc_err_arg,
         "one_shot is no reduce_scatter path");
  EXPECT(dc_all_reduce(x, in, out, 1000, DC_DTYPE_BF16, (dc_path)77, st), dc_err_arg, "path out of range");
  EXPECT(dc_all_gather(x, in, out, BAD_STAGING + 1, DC_PATH_AUTO, st), dc_err_capacity, "all_gather over capacity");
  EXPECT(dc_all_reduce(x, in, out, BAD_STAGING / 2 + 1, DC_DTYPE_BF16, DC_PATH_AUTO, st), dc_err_capacity,
         "all_reduce over capacity");
  EXPECT(dc_reduce_scatter(x, in, out, BAD_STAGING / 4 + 1, DC_DTYPE_BF16, DC_PATH_AUTO, st), dc_err_capacity,
         "reduce_scatter input over capacity");
  {
    char limit[32];
    snprintf(limit, sizeof(limit), "%llu", (unsigned long long)DC_PUSH_MAX_BYTES);
    EXPECT(dc_all_reduce(x, in, out, DC_PUSH_MAX_BYTES / 2 + 1, DC_DTYPE_BF16, DC_PATH_PUSH, st), dc_err_capacity,
           "forced push over its size limit");
    tap_ok(strstr(dc_comm_last_error(x), limit) != NULL && strstr(dc_comm_last_error(x), "push") != NULL,
           "message names the push limit: %s", dc_comm_last_error(x));
    EXPECT(dc_query_path(x, DC_OP_ALL_REDUCE, DC_DTYPE_BF16, in, out, DC_PUSH_MAX_BYTES + 2, DC_MODE_GRAPH, &p), dc_ok,
           "query above the push limit");
    tap_ok(p != DC_PATH_PUSH, "auto dispatch does not pick push above its limit (%s)", dc_path_name(p));
  }
  EXPECT(dc_all_reduce(x, in, out, SIZE_MAX / 2, DC_DTYPE_FP32, DC_PATH_AUTO, st), dc_err_arg, "count overflows");
  EXPECT(dc_all_reduce(NULL, in, out, 10, DC_DTYPE_BF16, DC_PATH_AUTO, st), dc_err_arg, "null comm");
  EXPECT(dc_all_reduce(x, in, out, 0, DC_DTYPE_BF16, DC_PATH_AUTO, st), dc_ok, "zero count is a no-op");
  EXPECT(dc_all_gather(x, NULL, NULL, 0, DC_PATH_AUTO, st), dc_ok, "zero-byte all_gather is a no-op");
  EXPECT(dc_reduce_scatter(x, in, out, 0, DC_DTYPE_FP16, DC_PATH_MULTI_BLOCK, st), dc_ok, "zero reduce_scatter no-op");
  EXPECT(dc_query_path(x, DC_OP_ALL_REDUCE, DC_DTYPE_BF16, in, out, 100, DC_MODE_COUNT, &p), dc_err_arg,
         "query with bad mode");
  EXPECT(dc_query_path(x, DC_OP_COUNT, DC_DTYPE_BF16, in, out, 100, DC_MODE_EAGER, &p), dc_err_arg, "query bad op");
  {
    /* all_gather moves bytes: its dtype is ignored (detcoll.h), whatever it is. */
    dc_path p16 = DC_PATH_AUTO, pany = DC_PATH_AUTO; /* auto dispatch never answers auto */
    EXPECT(dc_query_path(x, DC_OP_ALL_GATHER, DC_DTYPE_BF16, in, out, 4096, DC_MODE_EAGER, &p16), dc_ok,
           "all_gather query, bf16");
    EXPECT(dc_query_path(x, DC_OP_ALL_GATHER, (dc_dtype)77, in, out, 4096, DC_MODE_EAGER, &pany), dc_ok,
           "all_gather query, a dtype that is none");
    tap_ok(p16 == pany && p16 != DC_PATH_AUTO, "the same path either way (%s, %s)", dc_path_name(p16),
           dc_path_name(pany));
    EXPECT(dc_query_path(x, DC_OP_ALL_REDUCE, (dc_dtype)77, in, out, 4096, DC_MODE_EAGER, &p), dc_err_arg,
           "all_reduce query, a dtype that is none");
  }
  {
    int ndev = 0;
    GT_CUDA(cudaGetDeviceCount(&ndev));
    if (ndev > 1) {
      cudaStream_t other;
      GT_CUDA(cudaSetDevice(1));
      GT_CUDA(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
      GT_CUDA(cudaSetDevice(0));
      EXPECT(dc_all_reduce(x, in, out, 1000, DC_DTYPE_BF16, DC_PATH_AUTO, other), dc_err_device,
             "stream on another device");
      GT_CUDA(cudaStreamDestroy(other));
    } else {
      tap_diag("one GPU: the wrong-device stream case needs two");
    }
  }
  gt_group_sync(&g);
  tap_ok(gt_case_untouched(&c), "no bad or zero-size call wrote any output byte");
  tap_ok(gt_case_run(&c, 6) == 0, "a good call afterwards meets its peer and is exact (nothing was launched)");
  gt_case_free(&c);
  gt_group_free(&g);
  /* Creation errors. */
  {
    dc_comm cs[DC_MAX_WORLD];
    int dev[DC_MAX_WORLD + 1] = {0};
    dc_config bad = {0, 0, 0, 256};
    tap_ok(dc_comm_create_local(0, dev, NULL, cs) == dc_err_arg, "world 0 refused");
    tap_ok(dc_comm_create_local(DC_MAX_WORLD + 1, dev, NULL, cs) == dc_err_arg, "world > DC_MAX_WORLD refused");
    tap_ok(dc_comm_create_local(2, dev, &bad, cs) == dc_err_arg, "256 threads refused");
    dc_config forever = {0, 3600000000001ull, 0, 0};
    tap_ok(dc_comm_create_local(2, dev, &forever, cs) == dc_err_arg,
           "a timeout over an hour refused");
    /* DC_TIMEOUT_NS: what is not a bound is refused, not read as none or
     * as the default. */
    static const char *const bad_env[] = {"-1",           "abc", "5s", " 5", "18446744073709551616",
                                          "3600000000001"};
    char *saved = env_save("DC_TIMEOUT_NS");
    for (size_t i = 0; i < sizeof(bad_env) / sizeof(bad_env[0]); i++) {
      env_set("DC_TIMEOUT_NS", bad_env[i]);
      tap_ok(dc_comm_create_local(2, dev, NULL, cs) == dc_err_arg, "DC_TIMEOUT_NS '%s' refused",
             bad_env[i]);
    }
    env_restore("DC_TIMEOUT_NS", saved);
    /* DC_PDL: 0 or 1, nothing else. */
    static const char *const bad_pdl[] = {"2", "yes", " 1", "1 ", "-1"};
    saved = env_save("DC_PDL");
    for (size_t i = 0; i < sizeof(bad_pdl) / sizeof(bad_pdl[0]); i++) {
      char why[256] = "";
      env_set("DC_PDL", bad_pdl[i]);
      tap_ok(dc_config_check(NULL, why, sizeof(why)) == dc_err_arg && strstr(why, "DC_PDL") != NULL &&
                 dc_comm_create_local(2, dev, NULL, cs) == dc_err_arg,
             "DC_PDL '%s' refused (%s)", bad_pdl[i], why);
    }
    /* Taken where the device and the build are sm_90+ (this build is). */
    for (int on = 0; on < 2; on++) {
      dc_comm_info info = {0};
      env_set("DC_PDL", on ? "1" : "0");
      GT_DC(dc_comm_create_local(2, dev, NULL, cs));
      GT_DC(dc_comm_get_info(cs[0], &info));
      tap_ok(info.pdl == (on && info.sm >= 90), "DC_PDL=%d on sm %d: pdl %d", on, info.sm, info.pdl);
      for (int r = 0; r < 2; r++) GT_DC(dc_comm_destroy(cs[r]));
    }
    env_restore("DC_PDL", saved);
    dev[1] = 999;
    tap_ok(dc_comm_create_local(2, dev, NULL, cs) == dc_err_device, "unknown device refused");
  }
  for (int r = 0; r < dc_result_count; r++) tap_ok(dc_result_str((dc_result)r) != NULL, "dc_result_str(%d)", r);
#undef EXPECT
}

/* Every (op, path) that needs registration refuses c's unregistered
 * buffers: dc_err_arg on every rank, a message about registration, nothing
 * launched. */
static void unregistered(gt_group *g, uint64_t seed) {
  for (int op = 0; op < DC_OP_COUNT; op++) {
    dc_path paths[DC_PATH_COUNT];
    int np = dc_op_paths((dc_op)op, paths);
    for (int pi = 0; pi < np; pi++) {
      gt_case c;
      size_t bad;
      const char *msg;
      if (!dc_path_needs_reg((dc_op)op, paths[pi])) continue;
      gt_case_init(&c, g, NULL, (dc_op)op, DC_DTYPE_BF16, paths[pi], 4096, 0, 0);
      bad = gt_case_refused(&c, seed++, dc_err_arg);
      msg = dc_comm_last_error(g->comm[0]);
      tap_ok(bad == 0 && strcasestr(msg, "regist") != NULL,
             "%s %s (%s): unregistered buffers -> dc_err_arg, nothing launched: %s",
             dc_op_name((dc_op)op), dc_path_name(paths[pi]), gt_group_layout(g), msg);
      gt_case_free(&c);
    }
  }
}

/* Capture c's call on every rank into its own graph. */
static void capture(gt_case *c, cudaGraphExec_t *exec) {
  for (int r = 0; r < c->g->world; r++) {
    cudaGraph_t graph;
    GT_CUDA(cudaSetDevice(c->g->dev[r]));
    GT_CUDA(cudaStreamBeginCapture(c->g->st[r], cudaStreamCaptureModeThreadLocal));
    GT_DC(gt_case_issue(c, r));
    GT_CUDA(cudaStreamEndCapture(c->g->st[r], &graph));
    GT_CUDA(cudaGraphInstantiate(&exec[r], graph, 0));
    GT_CUDA(cudaGraphDestroy(graph));
  }
  GT_CUDA(cudaSetDevice(c->g->dev[0]));
}

/* Replay every rank's graph with fresh inputs; wrong count. */
static size_t replay(gt_case *c, cudaGraphExec_t *exec, uint64_t seed) {
  gt_case_fill(c, seed);
  for (int r = 0; r < c->g->world; r++) {
    GT_CUDA(cudaSetDevice(c->g->dev[r]));
    GT_CUDA(cudaGraphLaunch(exec[r], c->g->st[r]));
  }
  GT_CUDA(cudaSetDevice(c->g->dev[0]));
  gt_group_sync(c->g);
  return (size_t)gt_group_status(c->g) + gt_case_check(c);
}

static void registration(gt_layout layout) {
  gt_group g;
  gt_case c;
  dc_config cfg = {1u << 20, 0, 0, 0};
  int dev[2];
  void *p[2], *q[2];
  char *spare[2], *many[2][DC_MAX_WINDOWS + 1];
  dc_result res;
  const char *lay;
  cudaGraphExec_t exec[2];
  if (!gt_layout_devices(layout, 2, dev)) return;
  gt_group_init(&g, 2, dev, &cfg);
  lay = gt_group_layout(&g);
  unregistered(&g, 30);

  /* The windows are managed by hand here: c.reg stays 0. */
  gt_case_init(&c, &g, NULL, DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_PATH_DIRECT, 4096, 0, 0);
  gt_register(&g, c.d_in, c.in_cap);
  tap_ok(gt_case_refused(&c, 40, dc_err_arg) == 0 &&
             strcasestr(dc_comm_last_error(g.comm[0]), "recv") != NULL,
         "all_reduce direct with only send registered -> dc_err_arg naming recv (%s): %s", lay,
         dc_comm_last_error(g.comm[0]));
  gt_register(&g, c.d_out, c.out_cap);
  tap_ok(gt_case_run(&c, 41) == 0, "all_reduce direct on registered windows exact (%s)", lay);
  c.in_off = 2;
  tap_ok(gt_case_refused(&c, 42, dc_err_arg) == 0 &&
             strcasestr(dc_comm_last_error(g.comm[0]), "align") != NULL,
         "direct with send 2 bytes past 16-byte alignment -> dc_err_arg about alignment (%s): %s",
         lay, dc_comm_last_error(g.comm[0]));
  c.in_off = 0;

  /* Overlaps: the same range again, a range inside it, and one rank's
   * overlap refusing the whole call (rank 0's fresh buffer not kept). */
  for (int r = 0; r < 2; r++) {
    p[r] = c.d_out[r];
    q[r] = c.d_out[r] + 4096;
  }
  res = dc_register_local(2, g.comm, p, c.out_cap);
  tap_ok(res == dc_err_arg, "registering a window again -> %s (%s): %s", dc_result_str(res), lay,
         dc_comm_last_error(g.comm[0]));
  res = dc_register_local(2, g.comm, q, 1024);
  tap_ok(res == dc_err_arg, "registering a range inside a window -> %s (%s): %s",
         dc_result_str(res), lay, dc_comm_last_error(g.comm[0]));
  for (int r = 0; r < 2; r++) {
    GT_CUDA(cudaSetDevice(g.dev[r]));
    GT_CUDA(cudaMalloc((void **)&spare[r], 4096));
  }
  GT_CUDA(cudaSetDevice(g.dev[0]));
  q[0] = spare[0];
  res = dc_register_local(2, g.comm, q, 1024);
  tap_ok(res == dc_err_arg, "an overlap on rank 1 only -> %s (%s): %s", dc_result_str(res), lay,
         dc_comm_last_error(g.comm[1]));
  tap_ok(dc_deregister(g.comm[0], spare[0]) == dc_err_arg,
         "... and rank 0's buffer was not registered (%s)", lay);
  /* A window that does not start 16-byte aligned on one rank: that rank's
   * pointers at the window's offsets would be of another alignment class. */
  q[0] = spare[0];
  q[1] = spare[1] + 8;
  res = dc_register_local(2, g.comm, q, 1024);
  tap_ok(res == dc_err_arg && strstr(dc_comm_last_error(g.comm[1]), "16-byte") != NULL,
         "a window 8 bytes past alignment on rank 1 -> %s (%s): %s", dc_result_str(res), lay,
         dc_comm_last_error(g.comm[1]));
  tap_ok(dc_deregister(g.comm[0], spare[0]) == dc_err_arg, "... and rank 0's buffer was not registered (%s)",
         lay);

  /* Deregister what is not a window start. */
  res = dc_deregister(g.comm[0], c.d_out[0] + 16);
  tap_ok(res == dc_err_arg, "deregister inside a window -> %s (%s): %s", dc_result_str(res), lay,
         dc_comm_last_error(g.comm[0]));
  tap_ok(dc_deregister(g.comm[0], NULL) == dc_err_arg, "deregister NULL -> dc_err_arg (%s)", lay);
  tap_ok(dc_deregister(g.comm[0], spare[0]) == dc_err_arg,
         "deregister a never registered buffer -> dc_err_arg (%s)", lay);

  /* A graph captured on the windows, then dc_deregister on every rank: in
   * one process nothing is unmapped, so the graph, which keeps the peers'
   * addresses it was captured with, still replays exactly. Eager forced
   * direct calls on the buffers are refused from then on. */
  capture(&c, exec);
  tap_ok(replay(&c, exec, 43) == 0, "direct all_reduce graph replays exactly (%s)", lay);
  gt_deregister(&g, c.d_in);
  gt_deregister(&g, c.d_out);
  tap_ok(replay(&c, exec, 44) == 0,
         "after dc_deregister the captured graph still replays exactly in one process (%s)", lay);
  tap_ok(gt_case_refused(&c, 45, dc_err_arg) == 0,
         "after dc_deregister a forced direct call is refused (%s): %s", lay,
         dc_comm_last_error(g.comm[0]));
  for (int r = 0; r < 2; r++) GT_CUDA(cudaGraphExecDestroy(exec[r]));
  c.path = DC_PATH_ONE_SHOT;
  tap_ok(gt_case_run(&c, 46) == 0, "a good call afterwards meets its peer and is exact (%s)", lay);

  /* DC_MAX_WINDOWS per comm (none registered now). */
  {
    char limit[16];
    int ok = 1;
    snprintf(limit, sizeof(limit), "%d", DC_MAX_WINDOWS);
    for (int r = 0; r < 2; r++) {
      GT_CUDA(cudaSetDevice(g.dev[r]));
      for (int k = 0; k <= DC_MAX_WINDOWS; k++) GT_CUDA(cudaMalloc((void **)&many[r][k], 4096));
    }
    GT_CUDA(cudaSetDevice(g.dev[0]));
    for (int k = 0; k < DC_MAX_WINDOWS; k++) {
      p[0] = many[0][k];
      p[1] = many[1][k];
      ok &= dc_register_local(2, g.comm, p, 4096) == dc_ok;
    }
    tap_ok(ok, "%d windows registered (%s)", DC_MAX_WINDOWS, lay);
    p[0] = many[0][DC_MAX_WINDOWS];
    p[1] = many[1][DC_MAX_WINDOWS];
    res = dc_register_local(2, g.comm, p, 4096);
    tap_ok((res == dc_err_arg || res == dc_err_capacity) &&
               strstr(dc_comm_last_error(g.comm[0]), limit) != NULL,
           "window %d -> %s, the message names the limit (%s): %s", DC_MAX_WINDOWS + 1,
           dc_result_str(res), lay, dc_comm_last_error(g.comm[0]));
    gt_deregister(&g, (char *const[]){many[0][0], many[1][0]});
    tap_ok(dc_register_local(2, g.comm, p, 4096) == dc_ok,
           "after one dc_deregister the next window fits (%s)", lay);
    gt_deregister(&g, (char *const[]){many[0][DC_MAX_WINDOWS], many[1][DC_MAX_WINDOWS]});
    for (int k = 1; k < DC_MAX_WINDOWS; k++)
      gt_deregister(&g, (char *const[]){many[0][k], many[1][k]});
    for (int r = 0; r < 2; r++) {
      GT_CUDA(cudaSetDevice(g.dev[r]));
      for (int k = 0; k <= DC_MAX_WINDOWS; k++) GT_CUDA(cudaFree(many[r][k]));
      GT_CUDA(cudaFree(spare[r]));
    }
    GT_CUDA(cudaSetDevice(g.dev[0]));
  }
  gt_case_free(&c);
  gt_group_free(&g);
}

/* One rank never calls: the other must time out naming it. */
static void watchdog(dc_op op, dc_path path, size_t count) {
  gt_group g;
  gt_case c;
  dc_config cfg = {4u << 20, 200000000ull, 0, 0};
  int missing = -1;
  double t0, dt;
  dc_result st;
  gt_group_init(&g, 2, NULL, &cfg);
  gt_case_init(&c, &g, NULL, op, DC_DTYPE_BF16, path, count, 0, 0);
  gt_case_fill(&c, 11);
  /* One good call first, so the failure is not at sequence 1. */
  for (int r = 0; r < 2; r++) GT_DC(gt_case_issue(&c, r));
  gt_group_sync(&g);
  t0 = gt_now();
  GT_DC(gt_case_issue(&c, 0));
  GT_CUDA(cudaStreamSynchronize(g.st[0]));
  dt = gt_now() - t0;
  st = dc_comm_status(g.comm[0], &missing);
  tap_ok(st == dc_err_timeout && missing == 1, "%s %s: rank 0 reports timeout naming rank 1 (got %s, %d)",
         dc_op_name(op), dc_path_name(path), dc_result_str(st), missing);
  {
    /* The message says what the wait saw: call 2, and rank 1's flag still
     * at call 1 (push lines are cleared after each call: 0). */
    const char *msg = dc_comm_last_error(g.comm[0]);
    const char *want = path == DC_PATH_PUSH ? "last saw 0;" : "last saw 1;";
    tap_ok(strstr(msg, "(call 2 waited on") != NULL && strstr(msg, want) != NULL,
           "%s %s: the message tells the call and the flag seen: %s", dc_op_name(op), dc_path_name(path), msg);
  }
  tap_ok(dt >= 0.15 && dt < 3.0, "%s %s: rank 0 returned after %.3f s (timeout 0.2 s)", dc_op_name(op),
         dc_path_name(path), dt);
  tap_ok(dc_comm_status(g.comm[1], &missing) == dc_ok, "rank 1 (never called) reports no failure");
  tap_ok(gt_case_issue(&c, 0) == dc_err_timeout, "a failed comm refuses further calls");
  gt_case_free(&c);
  gt_group_free(&g); /* exits on any destroy error */
  tap_ok(1, "%s %s: both comms destroyed after the timeout", dc_op_name(op), dc_path_name(path));
}

/* The topology of given GPUs (dc_topology): bad arguments refused with
 * the answer untouched; one GPU, named once or three times, is single_gpu; a GPU
 * this process cannot see counts as NVLink; and a comm of GPUs 0 and 1
 * (where there are two) finds what dc_topology says of them. */
static void topology(int ndev) {
  char bus[2][32];
  const char *one[1] = {bus[0]}, *same[3] = {bus[0], bus[0], bus[0]}, *unseen[2] = {bus[0], "0000:ff:1f.7"};
  const char *with_null[2] = {bus[0], NULL};
  dc_topo t = DC_TOPO_COUNT;
  GT_CUDA(cudaDeviceGetPCIBusId(bus[0], sizeof(bus[0]), 0));
  tap_ok(dc_topology(0, one, &t) == dc_err_arg && dc_topology(1, NULL, &t) == dc_err_arg &&
             dc_topology(1, one, NULL) == dc_err_arg && dc_topology(2, with_null, &t) == dc_err_arg &&
             t == DC_TOPO_COUNT,
         "dc_topology: no GPU, NULL ids, a NULL id or a NULL answer -> invalid argument, answer untouched");
  /* Each answer is asked for before tap_ok, whose arguments are evaluated
   * in no set order. */
  const struct {
    int n;
    const char *const *ids;
    dc_topo want;
    const char *what;
  } cases[] = {{1, one, DC_TOPO_SINGLE_GPU, "one GPU"},
               {3, same, DC_TOPO_SINGLE_GPU, "one GPU named three times"},
               {2, unseen, DC_TOPO_NVLINK, "with a GPU this process cannot see"}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    t = DC_TOPO_COUNT;
    const dc_result r = dc_topology(cases[i].n, cases[i].ids, &t);
    tap_ok(r == dc_ok && t == cases[i].want, "dc_topology: %s (%s) -> %s (%s)", cases[i].what, bus[0],
           r == dc_ok && t < DC_TOPO_COUNT ? dc_topo_name(t) : "no answer", dc_result_str(r));
  }
  if (ndev < 2) {
    gt_skip("dc_topology of two GPUs against a comm's: one GPU here");
    return;
  }
  const int devs[2] = {0, 1};
  const char *two[2] = {bus[0], bus[1]};
  dc_comm c[2];
  dc_comm_info info = {0};
  GT_CUDA(cudaDeviceGetPCIBusId(bus[1], sizeof(bus[1]), 1));
  GT_DC(dc_topology(2, two, &t));
  GT_DC(dc_comm_create_local(2, devs, NULL, c));
  GT_DC(dc_comm_get_info(c[1], &info));
  tap_ok(t != DC_TOPO_SINGLE_GPU && info.topo == t, "dc_topology of GPUs 0 and 1 (%s) is their comm's (%s)",
         dc_topo_name(t), dc_topo_name(info.topo)); /* both set by the GT_DC calls above */
  for (int r = 0; r < 2; r++) GT_DC(dc_comm_destroy(c[r]));
}

int main(void) {
  const int ndev = gt_require_gpu();
  bad_inputs();
  topology(ndev);
  for (int l = 0; l < GT_LAYOUT_COUNT; l++) registration((gt_layout)l);
  watchdog(DC_OP_ALL_REDUCE, DC_PATH_SINGLE_BLOCK, 1000);
  watchdog(DC_OP_ALL_REDUCE, DC_PATH_PUSH, 30000);
  watchdog(DC_OP_ALL_REDUCE, DC_PATH_TWO_SHOT, 1u << 20);
  watchdog(DC_OP_ALL_GATHER, DC_PATH_MULTI_BLOCK, 3u << 20);
  watchdog(DC_OP_REDUCE_SCATTER, DC_PATH_MULTI_BLOCK, 100000);
  return tap_done();
}
