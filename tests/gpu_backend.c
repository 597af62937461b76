/* gpu_backend.c: the gpu backend on whatever GPU there is, with two virtual
 * ranks on GPU 0 through the threads launcher: every op, bf16 and fp32,
 * eager and graph, auto and every forced path, offsets 0 and 4, checked
 * bitwise by the backend itself (wrong_elems); outputs past 4 MiB; a
 * detcoll + NCCL pair at world 1; the trial order (permutations, odd
 * trials reversing even ones, detcoll and NCCL taking turns to go first,
 * read from the backend's TRACE lines);
 * trials continued by a second call; the previous threshold table beside
 * the current one in the same trials; skew; refused configurations; the
 * machine description, and on two or more GPUs its topology against a
 * detcoll comm's of them all. Skips (77) without a GPU. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "config.h"
#include "detcoll.h"
#include "tap.h"

enum { RANKS = 2, TRIALS = 3, WARMUP = 2, MAX_TRIALS = 16 };

static tune_backend *be;
static int64_t elapsed[4][MAX_TRIALS * RANKS], delay[4][MAX_TRIALS * RANKS];

static tune_cfg cfg(const char *impl, dc_op op, dc_path path, dc_dtype dt, int world,
                    uint64_t bytes, int off, dc_mode mode) {
  tune_cfg c = {impl, op, path, dt, world, bytes, off, off, mode, 0, -1};
  return c;
}

/* Measure nc configurations; returns the result, samples in elapsed/delay. */
static tune_result measure(const tune_cfg *c, int nc, int first, int trials, tune_samples *s) {
  for (int i = 0; i < nc; i++) s[i] = (tune_samples){elapsed[i], delay[i], 0, DC_PATH_AUTO};
  return be->ops->measure(be, c, nc, first, trials, WARMUP, s);
}

/* Shape and sanity of one configuration's samples. */
static int samples_ok(const tune_cfg *c, const tune_samples *s, int trials) {
  for (int k = 0; k < trials * c->world; k++)
    if (s->elapsed_ns[k] <= 0 || (c->skew_ns == 0 && s->delay_ns[k] != 0)) return 0;
  return 1;
}

static void sweep(void) {
  static const dc_dtype dts[] = {DC_DTYPE_BF16, DC_DTYPE_FP32};
  static const int offs[] = {0, 4};
  int n = 0, bad = 0;
  static const char *const impls[] = {"detcoll", "detcoll_reg"};
  for (int op = 0; op < DC_OP_COUNT; op++) {
    dc_path paths[DC_PATH_COUNT + 1] = {DC_PATH_AUTO};
    int np = 1 + dc_op_paths((dc_op)op, paths + 1);
    for (int i = 0; i < 2; i++)
      for (int d = 0; d < 2; d++)
        for (int m = 0; m < DC_MODE_COUNT; m++)
          for (int o = 0; o < 2; o++)
            for (int p = 0; p < np; p++) {
              tune_cfg c = cfg(impls[i], (dc_op)op, paths[p], dts[d], RANKS, 12288 + (o ? 32 : 0),
                               offs[o], (dc_mode)m);
              tune_samples s;
              if (tune_cfg_path_unsupported(&c)) continue; /* e.g. direct on unregistered buffers */
              tune_result r = measure(&c, 1, 0, TRIALS, &s);
              int ok = r == tune_ok && s.wrong_elems == 0 && samples_ok(&c, &s, TRIALS) &&
                       s.chosen_path != DC_PATH_AUTO &&
                       (paths[p] == DC_PATH_AUTO || s.chosen_path == paths[p]);
              if (!ok) {
                tap_diag("%s %s %s %s %s off %d: %s, %llu wrong, chosen %s", c.impl,
                         dc_op_name(c.op), dc_dtype_name(c.dtype), dc_path_name(c.path),
                         dc_mode_name(c.mode), c.in_offset, tune_result_str(r),
                         (unsigned long long)s.wrong_elems, dc_path_name(s.chosen_path));
                bad++;
              }
              n++;
            }
  }
  tap_ok(bad == 0,
         "%d detcoll and detcoll_reg configurations (ops x bf16/fp32 x eager/graph x offsets 0/4 x "
         "paths "
         "each impl can run): exact, "
         "%d samples each",
         n, TRIALS * RANKS);
}

/* Outputs above the full-check size are checked at their edges and sampled. */
static void big(void) {
  tune_cfg c[] = {cfg("detcoll", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_BF16, RANKS, 6u << 20, 0,
                      DC_MODE_EAGER),
                  cfg("detcoll", DC_OP_ALL_GATHER, DC_PATH_AUTO, DC_DTYPE_FP32, RANKS, 3u << 20, 4,
                      DC_MODE_GRAPH)};
  for (int i = 0; i < 2; i++) {
    tune_samples s;
    tune_result r = measure(&c[i], 1, 0, 2, &s);
    tap_ok(r == tune_ok && s.wrong_elems == 0 && samples_ok(&c[i], &s, 2),
           "%s of %llu bytes per rank (%s): exact", dc_op_name(c[i].op),
           (unsigned long long)c[i].bytes, dc_mode_name(c[i].mode));
  }
}

/* The backend's TRACE lines "run trial T config I <impl> <path> rank R" of rank 0,
 * in order, from the captured stderr file. Returns how many. */
static int read_order(const char *path, int *trial, int *config, int cap) {
  FILE *f = fopen(path, "r");
  char line[1024];
  int n = 0;
  if (f == NULL) return 0;
  while (n < cap && fgets(line, sizeof(line), f)) {
    const char *p = strstr(line, "run trial ");
    int t, i, r;
    char impl[32], pathname[32];
    if (p && sscanf(p, "run trial %d config %d %31s %31s rank %d", &t, &i, impl, pathname, &r) == 5 &&
        r == 0) {
      trial[n] = t;
      config[n++] = i;
    }
  }
  fclose(f);
  return n;
}

/* Runs nc configurations with stderr going to a file; checks the recorded
 * order: trials first .. first + trials - 1, each running every
 * configuration once; an odd trial the reverse of the even one before it;
 * where detcoll and NCCL are measured together, detcoll first on even
 * trials and NCCL first on odd ones. */
static void order(const tune_cfg *c, int nc, int first, int trials, const char *what) {
  char path[] = "/tmp/gpu_backend_XXXXXX";
  int fd = mkstemp(path), saved = dup(STDERR_FILENO);
  tune_samples s[4];
  tune_result r = tune_err_internal;
  int trial[64], config[64], n = 0, ok = 1;
  if (fd >= 0 && saved >= 0) {
    fflush(stderr);
    dup2(fd, STDERR_FILENO);
    r = measure(c, nc, first, trials, s);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    n = read_order(path, trial, config, 64);
  }
  ok = n == nc * trials;
  for (int k = 0; ok && k < n; k += nc) {
    int t = first + k / nc, seen = 0, detcoll_first = strcmp(c[config[k]].impl, "detcoll") == 0;
    for (int i = 0; i < nc; i++) {
      ok &= trial[k + i] == t && config[k + i] >= 0 && config[k + i] < nc;
      if (ok) seen |= 1 << config[k + i];
      /* The reverse of the even trial before it, when this call ran that too. */
      if (ok && t % 2 == 1 && k >= nc) ok = config[k + i] == config[k - 1 - i];
    }
    ok &= seen == (1 << nc) - 1;
    if (strcmp(c[0].impl, "detcoll") == 0 && strcmp(c[nc - 1].impl, "detcoll") != 0)
      ok &= detcoll_first == (t % 2 == 0);
  }
  if (!ok)
    for (int k = 0; k < n; k++) tap_diag("run %d: trial %d config %d", k, trial[k], config[k]);
  tap_ok(
      r == tune_ok && ok,
      "%s: %d runs, each trial a permutation, odd trials the reverse of even ones%s", what, n,
      strcmp(c[nc - 1].impl, "detcoll") != 0 ? ", detcoll first on even trials, NCCL on odd" : "");
  for (int i = 0; i < nc; i++)
    tap_ok(r == tune_ok && s[i].wrong_elems == 0 && samples_ok(&c[i], &s[i], trials),
           "%s: %s samples right", what, c[i].impl);
  if (fd >= 0) close(fd);
  if (saved >= 0) close(saved);
  unlink(path);
}

static void pairs(void) {
  tune_cfg dd[] = {
      cfg("detcoll", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_BF16, RANKS, 4096, 0, DC_MODE_EAGER),
      cfg("detcoll", DC_OP_ALL_REDUCE, DC_PATH_ONE_SHOT, DC_DTYPE_BF16, RANKS, 4096, 0,
          DC_MODE_EAGER)};
  order(dd, 2, 0, 4, "detcoll auto + one_shot, world 2");
  order(dd, 2, 4, 3, "the same, continued at trial 4 (no warm-up)");
#ifdef HAVE_NCCL
  tune_cfg dn[] = {
      cfg("detcoll", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_BF16, 1, 65536, 0, DC_MODE_GRAPH),
      cfg("nccl", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_BF16, 1, 65536, 0, DC_MODE_GRAPH),
      cfg("nccl_symm", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_BF16, 1, 65536, 0, DC_MODE_GRAPH)};
  int symm = be->ops->supports(be, &dn[2]);
  tap_diag("nccl_symm %s",
           symm ? "supported: measured beside detcoll and nccl" : "not supported by this NCCL");
  order(dn, symm ? 3 : 2, 0, 4,
        symm ? "detcoll + nccl + nccl_symm, world 1, graph" : "detcoll + nccl, world 1, graph");
  static const dc_op ops[] = {DC_OP_ALL_GATHER, DC_OP_REDUCE_SCATTER};
  for (int k = 0; k < 2; k++) {
    tune_cfg c[] = {
        cfg("detcoll", ops[k], DC_PATH_AUTO, DC_DTYPE_FP32, 1, 8192, 4, DC_MODE_EAGER),
        cfg("nccl", ops[k], DC_PATH_AUTO, DC_DTYPE_FP32, 1, 8192, 4, DC_MODE_EAGER),
        cfg("nccl_symm", ops[k], DC_PATH_AUTO, DC_DTYPE_FP32, 1, 8192, 4, DC_MODE_EAGER)};
    tune_samples s[3];
    tune_result r = measure(c, symm ? 3 : 2, 0, TRIALS, s);
    tap_ok(r == tune_ok && s[0].wrong_elems == 0 && s[1].wrong_elems == 0 &&
               (!symm || s[2].wrong_elems == 0) && s[1].chosen_path == DC_PATH_AUTO,
           "detcoll + nccl%s %s fp32 world 1: right", symm ? " + nccl_symm" : "",
           dc_op_name(ops[k]));
  }
#endif
}

static void skew(void) {
  tune_cfg c =
      cfg("detcoll", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_FP32, RANKS, 4096, 0, DC_MODE_EAGER);
  tune_samples s;
  c.skew_ns = 50000;
  c.skew_rank = 1;
  tune_result r = measure(&c, 1, 0, TRIALS, &s);
  int ok = r == tune_ok && s.wrong_elems == 0;
  for (int t = 0; ok && t < TRIALS; t++)
    ok = s.delay_ns[t * RANKS + 1] >= c.skew_ns && s.delay_ns[t * RANKS] == 0 &&
         s.elapsed_ns[t * RANKS] > c.skew_ns / 2;
  tap_ok(ok, "skew on rank 1: its measured delay >= %lld ns, rank 0 waits inside its timed region",
         (long long)c.skew_ns);
  c.skew_rank = -2;
  r = measure(&c, 1, 0, 8, &s);
  ok = r == tune_ok && s.wrong_elems == 0;
  for (int t = 0; ok && t < 8; t++)
    ok = (s.delay_ns[t * RANKS] > 0) + (s.delay_ns[t * RANKS + 1] > 0) == 1;
  tap_ok(ok, "skew on a random rank: exactly one rank delayed per trial");
}

static void refused(void) {
  tune_cfg c = cfg("detcoll", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_BF16, RANKS + 1, 4096, 0,
                   DC_MODE_EAGER);
  tune_samples s;
  tap_ok(!be->ops->supports(be, &c) && measure(&c, 1, 0, 1, &s) == tune_err_arg,
         "world > ranks: refused");
  c = cfg("nccl", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_BF16, 2, 4096, 0, DC_MODE_EAGER);
  tap_ok(!be->ops->supports(be, &c) && measure(&c, 1, 0, 1, &s) == tune_err_arg,
         "nccl at world 2 on virtual ranks: refused");
  c.impl = "nccl_symm";
  tap_ok(!be->ops->supports(be, &c), "nccl_symm at world 2 on virtual ranks: refused");
  c = cfg("nccl", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_BF16, 1, 4096, 0, DC_MODE_EAGER);
#ifdef HAVE_NCCL
  tap_ok(be->ops->supports(be, &c), "nccl at world 1: supported");
#else
  tap_ok(!be->ops->supports(be, &c), "nccl without NCCL built in: refused");
#endif
  c = cfg("detcoll", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_FP32, 2, 4096, 2, DC_MODE_EAGER);
  tap_ok(!be->ops->supports(be, &c), "fp32 reduction at offset 2: refused");
  c = cfg("detcoll", DC_OP_ALL_REDUCE, DC_PATH_FUSED, DC_DTYPE_FP32, 2, 4096, 0, DC_MODE_EAGER);
  tap_ok(!be->ops->supports(be, &c), "a path of another op: refused");
  c = cfg("mystery", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_FP32, 2, 4096, 0, DC_MODE_EAGER);
  tap_ok(!be->ops->supports(be, &c), "unknown impl: refused");
  c = cfg("detcoll", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_FP32, 2, 16u << 20, 0, DC_MODE_EAGER);
  tap_ok(measure(&c, 1, 0, 1, &s) == tune_err_arg, "bytes above max_bytes: refused");
  c = cfg("detcoll", DC_OP_REDUCE_SCATTER, DC_PATH_AUTO, DC_DTYPE_FP32, 2, 4100, 0, DC_MODE_EAGER);
  tap_ok(measure(&c, 1, 0, 1, &s) == tune_err_arg,
         "reduce_scatter bytes not a whole slice per rank: refused");
  tune_cfg two[] = {
      cfg("detcoll", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_FP32, 2, 4096, 0, DC_MODE_EAGER),
      cfg("detcoll", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_FP32, 2, 8192, 0, DC_MODE_EAGER)};
  tune_samples s2[2];
  tap_ok(measure(two, 2, 0, 1, s2) == tune_err_arg, "a pair of different sizes: refused");
  /* The backend still works after refusals. */
  c = cfg("detcoll", DC_OP_ALL_GATHER, DC_PATH_AUTO, DC_DTYPE_BF16, 2, 4096, 0, DC_MODE_EAGER);
  tune_result r = measure(&c, 1, 0, 2, &s);
  tap_ok(r == tune_ok && s.wrong_elems == 0, "measures again after refusals");
}

static void describe(void) {
  tune_machine m;
  be->ops->describe(be, &m);
  tap_diag("%s x%d sm%d %s driver %s cuda %s nccl %s mpi %s launcher %s", m.gpu_model, m.gpu_count,
           m.sm, dc_topo_name(m.topo), m.driver, m.cuda, m.nccl, m.mpi, m.launcher);
  tap_ok(m.gpu_model[0] != '\0' && m.gpu_count == 1 && m.sm >= 70 && m.topo == DC_TOPO_SINGLE_GPU,
         "describe: model, one GPU, sm, single_gpu topology");
  tap_ok(strchr(m.driver, '.') && strchr(m.cuda, '.') && strcmp(m.launcher, "threads") == 0 &&
             strcmp(m.mpi, "none") == 0,
         "describe: driver, CUDA, launcher threads, no MPI");
#ifdef HAVE_NCCL
  tap_ok(strncmp(m.nccl, "2.", 2) == 0 && strchr(m.nccl + 2, '.'), "describe: NCCL version %s",
         m.nccl);
#endif
  tap_ok(be->ops->rank(be) == 0, "rank 0 in a one-process launcher");
  tap_ok(be->ops->set_table(be, TUNE_TABLE_CURRENT, NULL, 0) == tune_ok,
         "set_table(NULL) accepted");
  tap_ok(be->ops->set_table(be, TUNE_TABLE_CURRENT, dc_builtin_thresholds,
                            dc_builtin_thresholds_count) == tune_ok,
         "set_table(rows) accepted: auto dispatch from a table given at run time");
  dc_threshold_row bad = dc_builtin_thresholds[0];
  bad.nseg = 0;
  tap_ok(be->ops->set_table(be, TUNE_TABLE_PREVIOUS, &bad, 1) == tune_err_arg,
         "set_table(previous, malformed row) refused");
}

/* The previous table beside the current one, in the same trials: a
 * previous table that sends every all_reduce of the key to single_block
 * and a current one that sends it to one_shot; each config runs (and
 * reports) its own table's path, exact; auto_path predicts both. */
static void previous_table(void) {
  tune_machine m;
  be->ops->describe(be, &m);
  dc_threshold_row row = {m.sm,
                          RANKS,
                          m.topo,
                          DC_OP_ALL_REDUCE,
                          DC_DTYPE_BF16,
                          DC_ALIGN_16,
                          DC_MODE_EAGER,
                          0,
                          1,
                          {{DC_BYTES_MAX, DC_PATH_SINGLE_BLOCK}}};
  dc_threshold_row cur = row;
  cur.seg[0].path = DC_PATH_ONE_SHOT;
  for (int m2 = 0; m2 < DC_MODE_COUNT; m2++) {
    row.mode = cur.mode = (dc_mode)m2;
    tune_cfg c[2] = {
        cfg("detcoll", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_BF16, RANKS, 16384, 0, (dc_mode)m2),
        cfg("detcoll_prev", DC_OP_ALL_REDUCE, DC_PATH_AUTO, DC_DTYPE_BF16, RANKS, 16384, 0,
            (dc_mode)m2)};
    tune_samples s[2];
    tune_result r1 = be->ops->set_table(be, TUNE_TABLE_PREVIOUS, &row, 1);
    tune_result r2 = be->ops->set_table(be, TUNE_TABLE_CURRENT, &cur, 1);
    tune_result r = r1 == tune_ok && r2 == tune_ok ? measure(c, 2, 0, TRIALS, s)
                    : r1 != tune_ok                ? r1
                                                   : r2;
    tap_ok(r == tune_ok && s[0].chosen_path == DC_PATH_ONE_SHOT &&
               s[1].chosen_path == DC_PATH_SINGLE_BLOCK && s[0].wrong_elems == 0 &&
               s[1].wrong_elems == 0 && samples_ok(&c[0], &s[0], TRIALS) &&
               samples_ok(&c[1], &s[1], TRIALS),
           "%s: detcoll (current table) and detcoll_prev (previous table) in the same trials: %s "
           "and %s, exact",
           dc_mode_name((dc_mode)m2),
           r == tune_ok ? dc_path_name(s[0].chosen_path) : tune_result_str(r),
           r == tune_ok ? dc_path_name(s[1].chosen_path) : "-");
    tap_ok(be->ops->auto_path(be, &c[0]) == DC_PATH_ONE_SHOT &&
               be->ops->auto_path(be, &c[1]) == DC_PATH_SINGLE_BLOCK,
           "%s: auto_path predicts both tables' paths", dc_mode_name((dc_mode)m2));
  }
  tap_ok(be->ops->set_table(be, TUNE_TABLE_CURRENT, NULL, 0) == tune_ok,
         "set_table(NULL) restores the default");
}

/* With a GPU per rank (two or more GPUs), the topology the backend records
 * for the job's rows is the one libdetcoll's comm of every rank looks its
 * rows up by (over PCIe peer access holds too; an NVLink of the first two
 * GPUs says nothing of the others). */
static void machine_topo(const tune_backend_opts *o, int ndev) {
  const int n = ndev < DC_MAX_WORLD ? ndev : DC_MAX_WORLD;
  int devs[DC_MAX_WORLD];
  dc_comm comms[DC_MAX_WORLD];
  dc_comm_info info = {0};
  tune_backend_opts all = *o;
  tune_backend *b = NULL;
  tune_machine m;
  if (n < 2) {
    tap_diag("one GPU: the topology of a GPU per rank is not checked");
    return;
  }
  all.gpus = n;
  all.virtual_ranks = 0;
  if (!tap_ok(tune_backend_gpu.open(&all, &b) == tune_ok, "open: a rank on each of %d GPUs", n)) return;
  b->ops->describe(b, &m);
  for (int r = 0; r < n; r++) devs[r] = r;
  if (tap_ok(dc_comm_create_local(n, devs, NULL, comms) == dc_ok, "a detcoll comm of the %d GPUs", n)) {
    /* Asked before tap_ok, whose arguments are evaluated in no set order. */
    const dc_result got = dc_comm_get_info(comms[0], &info);
    tap_ok(got == dc_ok && info.topo == m.topo, "the backend's topology (%s) is the comm's (%s)",
           dc_topo_name(m.topo), got == dc_ok ? dc_topo_name(info.topo) : dc_result_str(got));
    for (int r = 0; r < n; r++) dc_comm_destroy(comms[r]);
  }
  b->ops->close(b);
}

int main(void) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) tap_skip_all("no CUDA GPU");
  /* The trial order is read from the backend's TRACE lines. */
  setenv("TUNE_DEBUG", "TRACE", 1);
  setenv("TUNE_DEBUG_SUBSYS", "BACKEND", 1);
  tune_backend_opts o = {.gpus = RANKS,
                         .seed = 42,
                         .launcher = "threads",
                         .virtual_ranks = 1,
                         .max_bytes = 8u << 20,
                         .graph_calls = 4};
  tune_backend_opts too_many = o;
  too_many.virtual_ranks = 0;
  too_many.gpus = ndev + 1;
  tune_backend *b2 = NULL;
  tap_ok(tune_backend_gpu.open(&too_many, &b2) == tune_err_arg,
         "--gpus above the GPUs present without virtual ranks: refused");
  tune_result r = tune_backend_gpu.open(&o, &be);
  if (!tap_ok(r == tune_ok, "open: %d virtual ranks on GPU 0", RANKS)) return tap_done();
  describe();
  refused();
  sweep();
  big();
  pairs();
  previous_table();
  skew();
  be->ops->close(be);
  machine_topo(&o, ndev);
  return tap_done();
}
