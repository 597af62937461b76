/* gpu_sanitize.c: runs itself under compute-sanitizer (memcheck, then
 * racecheck) on a small case: two ranks (on two GPUs where there are two,
 * else virtual ranks on device 0), every path of every op, odd sizes and
 * offsets; the paths that need registration (direct, copy_engine) on
 * windows registered with dc_register_local, 16-byte aligned offsets and a
 * size 16 bytes past a multiple of 64, out of place and in place. Skips (77) without a GPU or
 * without compute-sanitizer (looked up as $COMPUTE_SANITIZER, $CUDA_HOME/bin, /usr/local/cuda/bin,
 * then PATH). The watchdog is raised to 60 s: the tools slow kernels down a lot. */
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_common.h"

static int small_case(void) {
  gt_group g;
  dc_config cfg = {1u << 20, 60000000000ull, 4, 0};
  size_t bad = 0;
  uint64_t seed = 3;
  int dev[2];
  gt_world_devices(2, dev);
  gt_group_init(&g, 2, dev, &cfg);
  for (int op = 0; op < DC_OP_COUNT; op++) {
    dc_path paths[DC_PATH_COUNT];
    int np = dc_op_paths((dc_op)op, paths);
    for (int pi = 0; pi < np; pi++) {
      gt_case c;
      size_t es = op == DC_OP_ALL_GATHER ? 1 : 2;
      size_t count = gt_count_fit((dc_op)op, DC_DTYPE_BF16, paths[pi], 40000 + 3, 2);
      if (count != 40000 + 3) count -= 3; /* odd below a path's size limit too */
      if (dc_path_needs_reg((dc_op)op, paths[pi])) {
        for (int inplace = 0; inplace <= 1; inplace++) {
          gt_case_init(&c, &g, NULL, (dc_op)op, DC_DTYPE_BF16, paths[pi], (40000 + 16) / es, 16,
                       48);
          gt_case_register(&c);
          c.inplace = inplace;
          bad += gt_case_run(&c, seed++);
          gt_case_free(&c);
        }
        continue;
      }
      gt_case_init(&c, &g, NULL, (dc_op)op, DC_DTYPE_BF16, paths[pi], count, 5 * es, 7 * es);
      bad += gt_case_run(&c, seed++);
      gt_case_free(&c);
    }
  }
  gt_group_free(&g);
  printf("small case: %zu wrong\n", bad);
  return bad ? 1 : 0;
}

static const char *find_tool(char *buf, size_t n) {
  const char *env = getenv("COMPUTE_SANITIZER"), *home = getenv("CUDA_HOME");
  if (env && access(env, X_OK) == 0) return env;
  if (home) {
    snprintf(buf, n, "%s/bin/compute-sanitizer", home);
    if (access(buf, X_OK) == 0) return buf;
  }
  if (access("/usr/local/cuda/bin/compute-sanitizer", X_OK) == 0) return "/usr/local/cuda/bin/compute-sanitizer";
  if (system("command -v compute-sanitizer >/dev/null 2>&1") == 0) return "compute-sanitizer";
  return NULL;
}

int main(int argc, char **argv) {
  char buf[512], self[512];
  const char *tool;
  static const char *const tools[] = {"memcheck", "racecheck"};
  ssize_t len;
  if (argc > 1 && strcmp(argv[1], "--small") == 0) return small_case();
  gt_require_gpu();
  if (!(tool = find_tool(buf, sizeof(buf)))) tap_skip_all("compute-sanitizer not found");
  if ((len = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0) tap_skip_all("cannot find own executable");
  self[len] = '\0';
  for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
    char cmd[1400];
    int st;
    snprintf(cmd, sizeof(cmd), "'%s' --tool %s --error-exitcode 99 '%s' --small", tool, tools[i], self);
    st = system(cmd);
    tap_ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "compute-sanitizer %s: exit status %d", tools[i],
           st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  }
  return tap_done();
}
