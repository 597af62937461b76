/* sim.c: the sim backend. A seeded latency model per (op, path, world size,
 * bytes per rank, alignment, mode) stands in for the GPU so the whole
 * pipeline -- sweep, database, crossovers, header, report -- runs on machines
 * without one. Everything it produces is marked backend=sim by the engine.
 *
 * Model: t = alpha + alpha_rank * world + traffic * bytes / bandwidth, where
 * traffic is how many times the bytes per rank cross the memory system for
 * that path. Eager mode adds the launch cost; unaligned buffers lose the
 * 16-byte vector copies; bf16/fp16 reductions pay for the upcast. Noise is
 * multiplicative and seeded per configuration, so a configuration measured
 * twice with the same seed gives the same samples. Skew delays one rank
 * before its collective; the others wait for it inside their timed region.
 *
 * detcoll_reg is detcoll on registered buffers: the same paths at the same
 * cost, plus the paths that need registration (direct, copy_engine), and
 * auto dispatch from the table's DC_ALIGN_REG rows. detcoll_prev and
 * detcoll_reg_prev dispatch from the previous table (set_table's
 * TUNE_TABLE_PREVIOUS), with noise of their own.
 *
 * For tests only, TUNE_SIM_DRIFT_PCT=P makes the machine drift between the
 * passes of a job: once a current table has been given (set_table, which
 * the main job does at the start of its after pass), every latency is P%
 * of the model's. A before/after comparison across the passes is then off
 * by that factor; one within the after pass's trials is not.
 * TUNE_SIM_SPELL_PCT=P gives the machine slow spells: each measure() call,
 * a window of trials, runs at P% of the model's with probability 1/2
 * (seeded by the seed and the call's number), the same for every config of
 * the call. Paths measured in separate calls then differ by the spells they
 * met; paths measured in the same trials do not.
 *
 * Under the mpi launcher (mpirun -np N tune --backend sim --launcher mpi)
 * each process is one rank: it models every rank, keeps its own rank's
 * samples and auto dispatch, and takes the others' from them (allgather),
 * so every process holds the samples of the processes that measured them,
 * and ranks whose tables disagree are an error, as they would be on GPUs. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "dc_table_ref.h"
#include "launch.h"
#include "sim.h"

typedef enum { SIM_TRAFFIC_ONE, SIM_TRAFFIC_TWO, SIM_TRAFFIC_WORLD } sim_traffic;

typedef struct {
  dc_op op;
  dc_path path;
  double alpha_ns;      /* fixed start-up cost in graph mode */
  double alpha_rank_ns; /* per rank (flags to poll, peers to read) */
  double gbps;          /* bandwidth at 16-byte alignment */
  sim_traffic traffic;
  double eager_ns; /* extra start-up in eager mode (launches) */
} sim_path_model;

/* Crossings are kept steep enough (latencies >= 3% apart a fifth of the way
 * past them) for a dozen noisy trials to place them. */
static const sim_path_model sim_models[] = {
    /* push: one store and one poll on the critical path, half-payload lines */
    {DC_OP_ALL_GATHER, DC_PATH_PUSH, 900, 100, 10, SIM_TRAFFIC_WORLD, 3500},
    {DC_OP_ALL_GATHER, DC_PATH_SINGLE_BLOCK, 2000, 200, 25, SIM_TRAFFIC_WORLD, 3500},
    {DC_OP_ALL_GATHER, DC_PATH_FUSED, 3000, 300, 300, SIM_TRAFFIC_WORLD, 3500},
    {DC_OP_ALL_GATHER, DC_PATH_MULTI_BLOCK, 5000, 500, 1500, SIM_TRAFFIC_WORLD, 3500},
    /* pipeline: staging overlapped with the peer reads, piece by piece */
    {DC_OP_ALL_GATHER, DC_PATH_PIPELINE, 7000, 600, 1700, SIM_TRAFFIC_WORLD, 3500},
    /* direct: peers' user buffers read in place, no staging copy */
    {DC_OP_ALL_GATHER, DC_PATH_DIRECT, 2500, 250, 1800, SIM_TRAFFIC_WORLD, 3500},
    /* copy_engine: two flag kernels around the copies; the best rate */
    {DC_OP_ALL_GATHER, DC_PATH_COPY_ENGINE, 9000, 800, 2600, SIM_TRAFFIC_WORLD, 7000},
    {DC_OP_ALL_REDUCE, DC_PATH_PUSH, 1300, 150, 12, SIM_TRAFFIC_WORLD, 3500},
    {DC_OP_ALL_REDUCE, DC_PATH_SINGLE_BLOCK, 2200, 250, 25, SIM_TRAFFIC_WORLD, 3500},
    {DC_OP_ALL_REDUCE, DC_PATH_ONE_SHOT, 3600, 300, 900, SIM_TRAFFIC_WORLD, 3500},
    {DC_OP_ALL_REDUCE, DC_PATH_TWO_SHOT, 7000, 600, 700, SIM_TRAFFIC_TWO, 4500},
    {DC_OP_ALL_REDUCE, DC_PATH_PIPELINE, 9000, 700, 900, SIM_TRAFFIC_TWO, 4500},
    /* direct: two-shot's traffic without its staging copy and barrier */
    {DC_OP_ALL_REDUCE, DC_PATH_DIRECT, 5500, 400, 1400, SIM_TRAFFIC_TWO, 3500},
    {DC_OP_REDUCE_SCATTER, DC_PATH_PUSH, 900, 100, 10, SIM_TRAFFIC_ONE, 3500},
    {DC_OP_REDUCE_SCATTER, DC_PATH_SINGLE_BLOCK, 2000, 200, 25, SIM_TRAFFIC_ONE, 3500},
    {DC_OP_REDUCE_SCATTER, DC_PATH_MULTI_BLOCK, 4000, 500, 1200, SIM_TRAFFIC_ONE, 3500},
    {DC_OP_REDUCE_SCATTER, DC_PATH_DIRECT, 3000, 300, 2000, SIM_TRAFFIC_ONE, 3500},
};

enum { SIM_SM = 90 };
static const double sim_unaligned_bw = 0.7;   /* vector body + byte tails */
static const double sim_unaligned_ns = 200;
static const double sim_lowp_reduce_bw = 0.9; /* bf16/fp16 upcast in reductions */
static const double sim_noise = 0.02;         /* relative, per rank and trial */
static const double sim_outlier_p = 0.01;     /* a rare slow sample */
static const double sim_delay_jitter_ns = 20;

TUNE_PARAM(SimDriftPct, "SIM_DRIFT_PCT", 100, 10, 1000);
TUNE_PARAM(SimSpellPct, "SIM_SPELL_PCT", 100, 100, 1000);

typedef struct {
  tune_backend base;
  int gpus;
  uint64_t seed;
  /* auto dispatch's, as a comm of libdetcoll holds them; the previous one has
   * no rows until set_table gives it */
  dc_table_ref table[TUNE_TABLE_COUNT];
  double drift; /* latency factor once a current table was given (TUNE_SIM_DRIFT_PCT) */
  int drifted;
  double spell;     /* latency factor of a slow spell (TUNE_SIM_SPELL_PCT) */
  uint64_t windows; /* measure() calls so far */
  tune_launcher *launch; /* mpi: one rank per process; NULL: every rank here */
} sim_backend;

static const sim_path_model *sim_model(dc_op op, dc_path path) {
  for (size_t i = 0; i < sizeof(sim_models) / sizeof(sim_models[0]); i++)
    if (sim_models[i].op == op && sim_models[i].path == path) return &sim_models[i];
  return NULL;
}

/* A test setting's slow-down factor (TUNE_SIM_PATH, TUNE_SIM_SLOW_NODE):
 * below 0.01 a model's times round to 0 ns. */
#define SIM_FACTOR_RANGE "0.01..100"
static int sim_factor_ok(double f) { return f >= 0.01 && f <= 100; }

/* For tests only, TUNE_SIM_PATH="OP:PATH*F,OP:PATH=OTHER,OP:PATH!,...":
 * PATH of OP costs F times its model (an injected slowdown), or exactly
 * OTHER's model (two paths tied within noise; each keeps noise of its own),
 * or returns wrong results (every output element, auto dispatch's calls on
 * it too). Read once, by sim_open; a bad value is refused there. */
static struct {
  double scale;
  dc_path as;
  int wrong;
} sim_knob[DC_OP_COUNT][DC_PATH_COUNT];
static int sim_knobs_state; /* 0: not read, 1: read, -1: bad */

static tune_result sim_knobs_load(void) {
  if (sim_knobs_state != 0) return sim_knobs_state > 0 ? tune_ok : tune_err_arg;
  const char *env = getenv("TUNE_SIM_PATH");
  for (int o = 0; o < DC_OP_COUNT; o++)
    for (int p = 0; p < DC_PATH_COUNT; p++) {
      sim_knob[o][p].scale = 1.0;
      sim_knob[o][p].as = (dc_path)p;
      sim_knob[o][p].wrong = 0;
    }
  sim_knobs_state = 1;
  for (const char *q = env ? env : ""; *q;) {
    char item[96], *sep, *end;
    const char *start = q;
    size_t w = strcspn(q, ",");
    snprintf(item, sizeof(item), "%.*s", (int)(w < sizeof(item) ? w : sizeof(item) - 1), q);
    q += w + (q[w] == ',');
    char *colon = strchr(item, ':');
    sep = colon ? strpbrk(colon, "*=!") : NULL;
    int op = -1, path = -1, other = -1;
    double f = 1.0;
    char kind = 0;
    if (sep != NULL) {
      kind = *sep;
      *colon = '\0';
      *sep = '\0';
      op = dc_op_parse(item);
      path = dc_path_parse(colon + 1);
      if (kind == '*')
        f = tune_strtod(sep + 1, &end), other = *end == '\0' && sim_factor_ok(f) ? path : -1;
      else if (kind == '!')
        other = sep[1] == '\0' ? path : -1;
      else
        other = dc_path_parse(sep + 1);
    }
    if (w >= sizeof(item) || op < 0 || path <= 0 || other <= 0 || sim_model((dc_op)op, (dc_path)path) == NULL ||
        sim_model((dc_op)op, (dc_path)other) == NULL) {
      tune_error("TUNE_SIM_PATH: '%.*s' is not OP:PATH*FACTOR (" SIM_FACTOR_RANGE
                 "), OP:PATH=OTHER_PATH or OP:PATH! of a path the sim models",
                 (int)w, start);
      sim_knobs_state = -1;
      return tune_err_arg;
    }
    if (kind == '!') {
      sim_knob[op][path].wrong = 1;
    } else {
      sim_knob[op][path].scale = f;
      sim_knob[op][path].as = (dc_path)other;
    }
  }
  return tune_ok;
}

double tune_sim_latency_ns(const tune_cfg *c, dc_path path) {
  double knob = 1.0;
  if ((unsigned)c->op < DC_OP_COUNT && (unsigned)path < DC_PATH_COUNT && sim_knobs_state > 0) {
    knob = sim_knob[c->op][path].scale;
    path = sim_knob[c->op][path].as;
  }
  const sim_path_model *m = sim_model(c->op, path);
  if (m == NULL) return -1;
  double traffic = m->traffic == SIM_TRAFFIC_WORLD ? c->world : m->traffic == SIM_TRAFFIC_TWO ? 2 : 1;
  double bw = m->gbps;
  double alpha = m->alpha_ns + m->alpha_rank_ns * c->world;
  if (tune_cfg_align(c) == DC_ALIGN_ANY) {
    bw *= sim_unaligned_bw;
    alpha += sim_unaligned_ns;
  }
  if (c->op != DC_OP_ALL_GATHER && c->dtype != DC_DTYPE_FP32) bw *= sim_lowp_reduce_bw;
  if (c->mode == DC_MODE_EAGER) alpha += m->eager_ns;
  return knob * (alpha + traffic * (double)c->bytes / bw); /* GB/s == bytes/ns */
}

uint64_t tune_sim_true_crossover(const tune_cfg *c, dc_path below, dc_path above, uint64_t lo,
                                 uint64_t hi) {
  tune_cfg t = *c;
  t.bytes = lo;
  double dlo = tune_sim_latency_ns(&t, above) - tune_sim_latency_ns(&t, below);
  t.bytes = hi;
  double dhi = tune_sim_latency_ns(&t, above) - tune_sim_latency_ns(&t, below);
  if (dlo <= 0 || dhi > 0) return 0;
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    t.bytes = mid;
    if (tune_sim_latency_ns(&t, above) - tune_sim_latency_ns(&t, below) > 0)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* FNV-1a over the configuration's key and the trial number, so each trial
 * has its own noise whatever order the sweep visits it in and however its
 * trials are split into calls. Registered impls get noise of their own
 * (unregistered ones keep the key they always had). */
static uint64_t sim_cfg_hash(const tune_cfg *c, int trial) {
  const tune_impl *im = tune_impl_find(c->impl);
  int64_t impl_key = c->impl[0] + (im && im->registered ? 256 : 0) + (im && im->previous ? 512 : 0);
  const int64_t key[] = {c->op,        c->path,       c->dtype, c->world,   (int64_t)c->bytes,
                         c->in_offset, c->out_offset, c->mode,  c->skew_ns, c->skew_rank,
                         trial,        impl_key};
  uint64_t h = 1469598103934665603ull;
  const unsigned char *p = (const unsigned char *)key;
  for (size_t i = 0; i < sizeof(key); i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static int sim_node = -1;

void tune_sim_set_node(int node) { sim_node = node; }

void tune_sim_model_text(char *out, size_t len) {
  static const char *const knobs[] = {"TUNE_SIM_PATH",      "TUNE_SIM_DRIFT_PCT",   "TUNE_SIM_SPELL_PCT",
                                      "TUNE_SIM_SLOW_NODE", "TUNE_SIM_NODE_DRIVER", "TUNE_SIM_NODE_NOISE"};
  size_t n = 0;
  if (len > 0) out[0] = '\0';
  for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]) && n < len; i++) {
    const char *v = getenv(knobs[i]);
    if (v && *v) n += (size_t)snprintf(out + n, len - n, " %s=%s", knobs[i], v);
  }
}

/* The test-only node knobs (sim.h), read at open. */
static struct {
  int slow_node, fail_node, hang, node_noise, driver_node;
  double slow_factor;
  uint64_t slow_bytes;
  char driver[32];
  int64_t pause_after, forced; /* TUNE_SIM_PAUSE_AFTER (-1: none); forced-path calls so far */
} sim_nodes = {-1, -1, 0, 0, -1, 1.0, 0, "", -1, 0};

static tune_result sim_node_knobs(void) {
  const char *slow = getenv("TUNE_SIM_SLOW_NODE"), *fail = getenv("TUNE_SIM_FAIL_NODE");
  sim_nodes.slow_node = sim_nodes.fail_node = -1;
  if (slow && *slow) {
    char size[32], *end;
    long k = strtol(slow, &end, 10);
    double f = *end == ':' ? tune_strtod(end + 1, &end) : 0;
    int ok = isdigit((unsigned char)slow[0]) && k >= 0 && k < 1000000 && sim_factor_ok(f) &&
             *end == ':' && strlen(end + 1) < sizeof(size);
    if (ok) snprintf(size, sizeof(size), "%s", end + 1);
    if (!ok || tune_parse_size(size, &sim_nodes.slow_bytes) != tune_ok) {
      tune_error("TUNE_SIM_SLOW_NODE: '%s' is not NODE:FACTOR:SIZE (FACTOR in " SIM_FACTOR_RANGE
                 "; e.g. 1:1.2:1M)", slow);
      return tune_err_arg;
    }
    sim_nodes.slow_node = (int)k;
    sim_nodes.slow_factor = f;
  }
  if (fail && *fail) {
    int64_t k;
    char num[16];
    size_t w = strcspn(fail, ":");
    snprintf(num, sizeof(num), "%.*s", (int)(w < sizeof(num) ? w : sizeof(num) - 1), fail);
    sim_nodes.hang = strcmp(fail + w, ":hang") == 0;
    if (w >= sizeof(num) || tune_parse_int(num, 0, 999999, &k) != tune_ok ||
        (fail[w] && !sim_nodes.hang)) {
      tune_error("TUNE_SIM_FAIL_NODE: '%s' is not NODE or NODE:hang", fail);
      return tune_err_arg;
    }
    sim_nodes.fail_node = (int)k;
  }
  const char *drv = getenv("TUNE_SIM_NODE_DRIVER");
  sim_nodes.driver_node = -1;
  if (drv && *drv) {
    char *end;
    long k = strtol(drv, &end, 10);
    if (end == drv || k < 0 || k > 999999 || *end != ':' || end[1] == '\0' ||
        strlen(end + 1) >= sizeof(sim_nodes.driver)) {
      tune_error("TUNE_SIM_NODE_DRIVER: '%s' is not NODE:VERSION", drv);
      return tune_err_arg;
    }
    sim_nodes.driver_node = (int)k;
    snprintf(sim_nodes.driver, sizeof(sim_nodes.driver), "%s", end + 1);
  }
  const char *noise = getenv("TUNE_SIM_NODE_NOISE");
  sim_nodes.node_noise = noise && strcmp(noise, "1") == 0;
  const char *pause = getenv("TUNE_SIM_PAUSE_AFTER");
  sim_nodes.pause_after = -1;
  if (pause && *pause && tune_parse_int(pause, 0, INT64_MAX, &sim_nodes.pause_after) != tune_ok) {
    tune_error("TUNE_SIM_PAUSE_AFTER: '%s' is not a number of measurements", pause);
    return tune_err_arg;
  }
  return tune_ok;
}

static void sim_close(tune_backend *b) {
  sim_backend *s = (sim_backend *)b;
  if (s == NULL) return;
  if (s->launch) s->launch->ops->close(s->launch);
  for (int t = 0; t < TUNE_TABLE_COUNT; t++) dc_table_ref_free(&s->table[t]);
  free(s);
}

static tune_result sim_open(const tune_backend_opts *o, tune_backend **out) {
  TUNE_CHECK(sim_knobs_load());
  TUNE_CHECK(sim_node_knobs());
  sim_backend *s = calloc(1, sizeof(*s));
  char why[256];
  if (s == NULL) return tune_err_system;
  s->base.ops = &tune_backend_sim;
  s->gpus = o->gpus;
  s->seed = o->seed;
  /* Nodes alike but for their noise: a fleet with a real spread. */
  if (sim_nodes.node_noise && sim_node >= 0)
    s->seed ^= 0x9e3779b97f4a7c15ull * (uint64_t)(sim_node + 1);
  if (tune_param_load(&tune_param_SimDriftPct) != tune_ok ||
      tune_param_load(&tune_param_SimSpellPct) != tune_ok) {
    sim_close(&s->base);
    return tune_err_arg;
  }
  s->drift = (double)tune_param_get(&tune_param_SimDriftPct) / 100.0;
  s->spell = (double)tune_param_get(&tune_param_SimSpellPct) / 100.0;
  if (dc_table_ref_default(&s->table[TUNE_TABLE_CURRENT], why, sizeof(why)) != 0) {
    tune_error("%s", why);
    sim_close(&s->base);
    return tune_err_arg;
  }
  if (o->launcher && strcmp(o->launcher, "mpi") == 0) {
    const tune_launcher_ops *lo = tune_launcher_find("mpi");
    tune_result r = lo ? lo->open(o->gpus, &s->launch) : tune_err_arg;
    if (lo == NULL) tune_error("--launcher mpi: this tune was built without MPI");
    if (r != tune_ok) {
      sim_close(&s->base);
      return r;
    }
  }
  *out = &s->base;
  return tune_ok;
}

static void sim_describe(tune_backend *b, tune_machine *m) {
  sim_backend *s = (sim_backend *)b;
  memset(m, 0, sizeof(*m));
  snprintf(m->gpu_model, sizeof(m->gpu_model), "sim H200");
  m->gpu_count = s->gpus;
  m->ranks = s->gpus;
  m->sm = SIM_SM;
  m->topo = DC_TOPO_NVLINK;
  snprintf(m->driver, sizeof(m->driver), "%s",
           sim_node >= 0 && sim_node == sim_nodes.driver_node ? sim_nodes.driver : "sim");
  snprintf(m->cuda, sizeof(m->cuda), "sim");
  snprintf(m->nccl, sizeof(m->nccl), "sim");
  snprintf(m->mpi, sizeof(m->mpi), "none");
  snprintf(m->launcher, sizeof(m->launcher), "%s", s->launch ? "mpi" : "none");
}

static int sim_rank(tune_backend *b) {
  sim_backend *s = (sim_backend *)b;
  return s->launch ? s->launch->ops->process_rank(s->launch) : 0;
}

/* The sim models libdetcoll's paths only (detcoll and detcoll_reg), up to
 * each path's size limit and where libdetcoll would take the call (at the
 * offsets the gpu backend runs); there is no NCCL model. */
static int sim_supports(tune_backend *b, const tune_cfg *c) {
  (void)b;
  const tune_impl *im = tune_impl_find(c->impl);
  return im != NULL && im->detcoll && tune_cfg_path_unsupported(c) == NULL &&
         tune_cfg_offsets_unsupported(c) == NULL &&
         (c->path == DC_PATH_AUTO ||
          (sim_model(c->op, c->path) != NULL && c->bytes <= dc_path_max_bytes(c->op, c->path)));
}

/* The shared, checked copy becomes the slot's table as it is; no rows: the
 * default table (current) or none (previous). */
static tune_result sim_set_table(tune_backend *b, tune_table_slot slot,
                                 const dc_threshold_row *rows, size_t nrows) {
  sim_backend *s = (sim_backend *)b;
  dc_threshold_row *copy;
  size_t n;
  char why[256];
  dc_table_ref t = {NULL, 0, NULL};
  TUNE_CHECK(tune_launcher_share_table(s->launch, slot, rows, nrows, &copy, &n));
  if (copy != NULL)
    t = (dc_table_ref){copy, n, copy};
  else if (slot == TUNE_TABLE_CURRENT && dc_table_ref_default(&t, why, sizeof(why)) != 0)
    return tune_table_refused(slot, why);
  dc_table_ref_free(&s->table[slot]);
  s->table[slot] = t;
  if (slot == TUNE_TABLE_CURRENT) s->drifted = 1;
  return tune_ok;
}

/* The table c's impl dispatches from; NULL: the previous one, not given. */
static const dc_table_ref *sim_table_of(const sim_backend *s, const tune_cfg *c) {
  const tune_impl *im = tune_impl_find(c->impl);
  const dc_table_ref *prev = &s->table[TUNE_TABLE_PREVIOUS];
  if (im && im->previous) return prev->rows ? prev : NULL;
  return &s->table[TUNE_TABLE_CURRENT];
}

static dc_path sim_auto_path(tune_backend *b, const tune_cfg *c) {
  const dc_table_ref *t = sim_table_of((const sim_backend *)b, c);
  return t ? tune_table_auto_path(t->rows, t->n, SIM_SM, DC_TOPO_NVLINK, c) : DC_PATH_AUTO;
}

/* One configuration; the sim has no cross-configuration effects, so the
 * order of configurations within a trial does not matter. */
static tune_result sim_measure_one(sim_backend *s, const tune_cfg *c, int first_trial, int trials,
                                   double spell, tune_samples *out) {
  if (!sim_supports(&s->base, c)) {
    tune_error("the sim backend models detcoll's paths up to their size limits only, not %s %s at %llu bytes",
               c->impl, dc_path_name(c->path), (unsigned long long)c->bytes);
    return tune_err_arg;
  }
  dc_path path = c->path == DC_PATH_AUTO ? sim_auto_path(&s->base, c) : c->path;
  if (path == DC_PATH_AUTO) {
    tune_error("the sim backend holds no previous threshold table for %s", c->impl);
    return tune_err_internal;
  }
  double base = tune_sim_latency_ns(c, path) * (s->drifted ? s->drift : 1.0) * spell;
  if (sim_node >= 0 && sim_node == sim_nodes.slow_node && c->bytes >= sim_nodes.slow_bytes)
    base *= sim_nodes.slow_factor;
  for (int t = 0; t < trials; t++) {
    tune_rng rng;
    tune_rng_seed(&rng, s->seed ^ sim_cfg_hash(c, first_trial + t));
    int delayed = c->skew_rank == -2 ? (int)(tune_rng_next(&rng) % (uint64_t)c->world) : c->skew_rank;
    double delay = 0;
    if (c->skew_ns > 0 && delayed >= 0)
      delay = (double)c->skew_ns + fabs(tune_rng_normal(&rng)) * sim_delay_jitter_ns;
    for (int r = 0; r < c->world; r++) {
      double v = base * (1 + sim_noise * tune_rng_normal(&rng));
      if (tune_rng_uniform(&rng) < sim_outlier_p) v *= 1.5;
      if (delayed >= 0 && r != delayed) v += delay;
      out->elapsed_ns[(size_t)t * c->world + r] = (int64_t)llround(v);
      out->delay_ns[(size_t)t * c->world + r] = r == delayed ? (int64_t)llround(delay) : 0;
    }
  }
  /* TUNE_SIM_PATH's OP:PATH!: a bytes-per-rank's worth of elements wrong */
  out->wrong_elems =
      sim_knobs_state > 0 && sim_knob[c->op][path].wrong ? c->bytes / dc_dtype_size(c->dtype) : 0;
  out->chosen_path = path;
  return tune_ok;
}

/* One measure() call as the ranks of the mpi launcher exchange it. */
typedef struct {
  sim_backend *s;
  const tune_cfg *c;
  int nc, trials;
  tune_samples *out;
} sim_exchange;

/* Rank `rank` keeps its column of every configuration's samples and its
 * chosen path; the allgather gives every process every rank's, and a rank
 * whose auto dispatch chose another path than rank 0's fails the call. */
static tune_result sim_rank_exchange(void *ctx, int rank) {
  sim_exchange *x = ctx;
  const int world = x->c[0].world;
  if (rank >= world) return tune_ok;
  const size_t per = 1 + 2 * (size_t)x->trials, n = per * (size_t)x->nc;
  int64_t *mine = malloc(n * sizeof(*mine)), *all = malloc(n * (size_t)world * sizeof(*all));
  tune_result r = tune_ok;
  if (mine == NULL || all == NULL) {
    r = tune_err_system;
    goto out;
  }
  for (int i = 0; i < x->nc; i++) {
    int64_t *m = mine + (size_t)i * per;
    m[0] = x->out[i].chosen_path;
    for (int t = 0; t < x->trials; t++) {
      m[1 + t] = x->out[i].elapsed_ns[(size_t)t * world + rank];
      m[1 + x->trials + t] = x->out[i].delay_ns[(size_t)t * world + rank];
    }
  }
  TUNE_CHECK_GOTO(x->s->launch->ops->allgather(x->s->launch, world, rank, mine, all, n * sizeof(*mine)), r, out);
  for (int p = 0; p < world; p++)
    for (int i = 0; i < x->nc; i++) {
      const int64_t *m = all + (size_t)p * n + (size_t)i * per;
      if (m[0] != all[(size_t)i * per]) {
        tune_error("sim rank %d chose %s where rank 0 chose %s (%s %s %llu bytes): the ranks' tables differ", p,
                   dc_path_name((dc_path)m[0]), dc_path_name((dc_path)all[(size_t)i * per]), x->c[i].impl,
                   dc_op_name(x->c[i].op), (unsigned long long)x->c[i].bytes);
        r = tune_err_internal;
        goto out;
      }
      for (int t = 0; t < x->trials; t++) {
        x->out[i].elapsed_ns[(size_t)t * world + p] = m[1 + t];
        x->out[i].delay_ns[(size_t)t * world + p] = m[1 + x->trials + t];
      }
    }
out:
  free(mine);
  free(all);
  return r;
}

static tune_result sim_measure(tune_backend *b, const tune_cfg *c, int nc, int first_trial, int trials,
                               int warmup, tune_samples *out) {
  sim_backend *s = (sim_backend *)b;
  (void)warmup;
  if (sim_node >= 0 && sim_node == sim_nodes.fail_node && c[0].path != DC_PATH_AUTO) {
    while (sim_nodes.hang) sleep(1);
    tune_error("sim: node %d fails here (TUNE_SIM_FAIL_NODE)", sim_node);
    return tune_err_system;
  }
  /* A forced path in the call: the sweep's, the after pass's and verify's
   * calls (whose first config is auto), not the before pass's. */
  int forced = 0;
  for (int k = 0; k < nc; k++) forced |= c[k].path != DC_PATH_AUTO;
  if (forced && sim_nodes.pause_after >= 0 && sim_nodes.forced++ >= sim_nodes.pause_after) {
    while (!tune_interrupt_signal()) usleep(10000);
    return tune_err_interrupted;
  }
  tune_rng rng;
  tune_rng_seed(&rng, s->seed ^ 0x5e11ull ^ 0x9e3779b97f4a7c15ull * ++s->windows);
  double spell = tune_rng_uniform(&rng) < 0.5 ? s->spell : 1.0;
  for (int i = 0; i < nc; i++) TUNE_CHECK(sim_measure_one(s, &c[i], first_trial, trials, spell, &out[i]));
  if (s->launch == NULL) return tune_ok;
  sim_exchange x = {s, c, nc, trials, out};
  return s->launch->ops->run(s->launch, sim_rank_exchange, &x);
}

static tune_result sim_share(tune_backend *b, void *buf, size_t bytes) {
  return tune_launcher_share_bytes(((sim_backend *)b)->launch, buf, bytes);
}

static tune_result sim_agree(tune_backend *b, const void *mine, void *theirs, size_t bytes, int *differs) {
  return tune_launcher_agree(((sim_backend *)b)->launch, mine, theirs, bytes, differs);
}

const tune_backend_ops tune_backend_sim = {
    "sim",         sim_open,      sim_describe, sim_rank,  sim_supports,
    sim_set_table, sim_auto_path, sim_measure,  sim_close, sim_share,
    sim_agree,
};
