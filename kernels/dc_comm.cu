/* dc_comm.cu: the host side of libdetcoll -- communicator creation (local
 * ranks, virtual ranks, CUDA IPC), argument checking, path choice from the
 * threshold table, partition planning, launch, watchdog status, and error
 * messages. Kernels live in one .cu per collective; this file only fills a
 * dc_kargs block and calls their launchers.
 *
 * Each rank owns one device allocation: a control area (sequence number,
 * status, flags; see dc_device.cuh) followed by two staging frames of
 * staging_bytes + slack and the push area (2 parities x world slots of
 * DC_PUSH_SLOT_BYTES). Peers' allocations are reached by pointer in one
 * process (peer access enabled between distinct devices) or through
 * cudaIpcOpenMemHandle across processes. Everything a rank's kernels need is
 * precomputed in the comm, so a call is checks + table lookup + one launch.
 *
 * Registered windows (dc_register_*) are kept per comm: this rank's range
 * and every rank's address of the same window (peer pointers in one
 * process, cudaIpcOpenMemHandle mappings across processes). A call whose
 * send and recv both lie in windows gets every rank's send and recv
 * address in its kernel arguments (pin/pout), for the paths that need them.
 *
 * Grid bound: blocks of every rank must be resident together (a waiting
 * block spins). The bound is (occupancy x SMs - headroom) / ranks on the
 * device, the same on every rank (the minimum over ranks), because every rank
 * must split work identically. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudaTypedefs.h>

#include "dc_device.cuh"
#include "dc_table_ref.h"

static_assert(sizeof(dc_ctrl) <= DC_CTRL_BYTES, "the control area outgrew DC_CTRL_BYTES");

/* Default capacity, watchdog and block size. */
#define DC_DEFAULT_STAGING ((size_t)64 << 20)
#define DC_DEFAULT_TIMEOUT_NS 5000000000ull
/* An hour: longer is no watchdog. */
#define DC_MAX_TIMEOUT_NS 3600000000000ull
#define DC_DEFAULT_THREADS 512
/* Default grid cap for one rank per device. Public kernels sit at 24-36
 * blocks; on two H200s over NVLink the bandwidth paths gained 10-15% at
 * 256 MiB from 32 to 128 blocks (docs/measurements.md). */
#define DC_GRID_CAP_ONE_RANK 128
/* Block slots left free on a shared device, so small kernels (the skew
 * kernel, a user's kernel) can still start while ranks spin. */
#define DC_HEADROOM_BLOCKS 4
/* A multi-block path gives each block at least this many input bytes. */
#define DC_BLOCK_BYTES 16384
/* The push path gives each block this many input bytes: one 8-byte line
 * per thread at the default 512 threads (latency: more blocks issue more
 * lines at once). */
#define DC_PUSH_BLOCK_BYTES 4096
/* The pipeline path: pieces per block. On two H200s at 256 MiB per rank
 * all_gather took 888 us with 8, 842 with 16, 861 with 32 and 64;
 * all_reduce 874-883 with 8 to 64 (docs/measurements.md). */
#define DC_PIPE_PIECES 16
/* ... and pieces of at least this many bytes (each costs a signal). */
#define DC_PIPE_MIN_PIECE 65536
/* Every block's part (multi-block paths, pipeline pieces) starts a multiple
 * of this many bytes into its buffer: a warp's 16-byte accesses cover 512
 * bytes, 4 lines of 128 where aligned, 5 where not (pipeline pieces cut
 * evenly at 16 bytes ran up to 11% slower than 64 KiB ones). */
#define DC_PART_ALIGN 512
/* A PCI bus id as cudaDeviceGetPCIBusId writes it, with room to spare. */
#define DC_BUS_ID_LEN 32

/* One registered window: this rank's range, every rank's base. */
typedef struct {
  char *base;
  size_t bytes;
  char *peer[DC_MAX_WORLD];
  char *mapped[DC_MAX_WORLD]; /* what cudaIpcOpenMemHandle gave for peer p (its allocation), or NULL */
} dc_window;

struct dc_comm_s {
  int rank, world, device;
  int sm, sms, rod; /* compute capability, SM count, ranks on this device */
  int pdl;          /* kernels launched with programmatic dependent launch */
  int threads, max_grid, sys;
  dc_topo topo;
  size_t staging;        /* accepted bytes per rank */
  uint64_t frame_bytes;  /* staging + slack, rounded */
  uint64_t alloc_bytes;  /* control area, two frames, push area */
  uint64_t timeout_ns;
  char *base;                    /* own allocation */
  char *peer_base[DC_MAX_WORLD]; /* every rank's allocation (own included) */
  int opened[DC_MAX_WORLD];      /* 1 where peer_base came from cudaIpcOpenMemHandle */
  cudaStream_t aux;              /* for reading the status word */
  cudaStream_t side;             /* copy_engine: the own chunk's copy */
  cudaEvent_t fork, join;        /* ... forked from and joined to the call's stream */
  dc_window win[DC_MAX_WINDOWS];
  int nwin;
  int failed, missing;
  dc_kargs kargs;                /* per-call fields left zero */
  dc_table_ref table;            /* auto dispatch's table (dc_comm_set_table) */
  const dc_threshold_row *rows[DC_OP_COUNT][DC_DTYPE_COUNT][DC_ALIGN_COUNT][DC_MODE_COUNT];
  unsigned char looked_up[DC_OP_COUNT][DC_DTYPE_COUNT][DC_ALIGN_COUNT][DC_MODE_COUNT];
  char err[256];
};

static const char *const dc_result_strs[dc_result_count] = {
    [dc_ok] = "success",
    [dc_err_arg] = "invalid argument",
    [dc_err_cuda] = "CUDA error",
    [dc_err_capacity] = "message larger than the staging capacity",
    [dc_err_device] = "wrong device, no GPU, or no peer access",
    [dc_err_timeout] = "timeout: a peer never arrived",
    [dc_err_unsupported] = "unsupported",
    [dc_err_exchange] = "exchange failed, or another rank failed",
    [dc_err_no_memory] = "out of memory",
};

extern "C" const char *dc_result_str(dc_result r) {
  return ((int)r >= 0 && r < dc_result_count) ? dc_result_strs[r] : "unknown result";
}

extern "C" const char *dc_comm_last_error(dc_comm comm) { return comm ? comm->err : ""; }

/* Record a failure message on comm (or stderr when there is no comm and
 * DC_DEBUG is set) and return r. */
static dc_result dc_fail(dc_comm c, dc_result r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static dc_result dc_fail(dc_comm c, dc_result r, const char *fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (c) memcpy(c->err, buf, sizeof(buf));
  if (getenv("DC_DEBUG")) fprintf(stderr, "detcoll: %s: %s\n", dc_result_str(r), buf);
  return r;
}

#define DC_CUDA_GOTO(call, c, res, label)                                                    \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                 \
      cudaGetLastError(); /* the error is the result's, not the caller's next check's */     \
      (res) = dc_fail((c), e_ == cudaErrorMemoryAllocation ? dc_err_no_memory : dc_err_cuda, \
                      "%s: %s", #call, cudaGetErrorString(e_));                              \
      goto label;                                                                            \
    }                                                                                        \
  } while (0)

static uint64_t dc_div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
static uint64_t dc_round_up(uint64_t a, uint64_t m) { return dc_div_up(a, m) * m; }

/* Defaults filled in, values checked; the reason of a refusal into why[len]
 * (why may be NULL) and, with DC_DEBUG set, to stderr. */
#define DC_CONFIG_FAIL(...)                       \
  do {                                            \
    char m_[256];                                 \
    snprintf(m_, sizeof(m_), __VA_ARGS__);        \
    if (why && len) snprintf(why, len, "%s", m_); \
    return dc_fail(NULL, dc_err_arg, "%s", m_);   \
  } while (0)
/* DC_PDL: 1 when set to "1", 0 when unset, empty or "0", -1 otherwise. */
static int dc_env_pdl(void) {
  const char *env = getenv("DC_PDL");
  if (env == NULL || !strcmp(env, "") || !strcmp(env, "0")) return 0;
  return !strcmp(env, "1") ? 1 : -1;
}

static dc_result dc_resolve_config(const dc_config *in, dc_config *out, char *why, size_t len) {
  dc_config c = {0, 0, 0, 0};
  if (in) c = *in;
  if (dc_env_pdl() < 0) DC_CONFIG_FAIL("DC_PDL '%s': must be 0 or 1", getenv("DC_PDL"));
  if (c.staging_bytes == 0) c.staging_bytes = DC_DEFAULT_STAGING;
  if (c.timeout_ns == 0) {
    /* Set, it must be a bound: "-1" read as 2^64 - 1 would turn the
     * watchdog off, and "5s" the default without a word. */
    const char *env = getenv("DC_TIMEOUT_NS");
    char *end = NULL;
    errno = 0;
    unsigned long long v = env && *env ? strtoull(env, &end, 10) : 0;
    if (env && *env &&
        (*env < '0' || *env > '9' || *end != '\0' || errno != 0 || v > DC_MAX_TIMEOUT_NS))
      DC_CONFIG_FAIL(
          "DC_TIMEOUT_NS '%s': not a whole number of nanoseconds in 0..%llu (0: the default, 5 s)",
          env, (unsigned long long)DC_MAX_TIMEOUT_NS);
    c.timeout_ns = v ? v : DC_DEFAULT_TIMEOUT_NS;
  }
  if (c.timeout_ns > DC_MAX_TIMEOUT_NS)
    DC_CONFIG_FAIL("config timeout_ns %llu: more than an hour (%llu)",
                   (unsigned long long)c.timeout_ns, (unsigned long long)DC_MAX_TIMEOUT_NS);
  if (c.threads == 0) c.threads = DC_DEFAULT_THREADS;
  if (c.threads != 512 && c.threads != 1024)
    DC_CONFIG_FAIL("config threads %d: must be 512 or 1024", c.threads);
  if (c.max_blocks < 0) DC_CONFIG_FAIL("config max_blocks %d < 0", c.max_blocks);
  if (c.staging_bytes > ((size_t)1 << 40))
    DC_CONFIG_FAIL("config staging_bytes %zu too large", c.staging_bytes);
  *out = c;
  return dc_ok;
}
#undef DC_CONFIG_FAIL

extern "C" dc_result dc_config_check(const dc_config *cfg, char *why, size_t len) {
  dc_config c;
  if (why && len) why[0] = '\0';
  return dc_resolve_config(cfg, &c, why, len);
}

/* Device facts, the rank's allocation (zeroed, seq = 1) and its aux stream.
 * Leaves dev current. */
static dc_result dc_setup_rank(dc_comm c, int rank, int world, int dev, const dc_config *cfg) {
  dc_result res = dc_ok;
  int major = 0, minor = 0;
  unsigned long long ones[DC_MAX_BLOCKS];
  c->rank = rank;
  c->world = world;
  c->device = dev;
  c->threads = cfg->threads;
  c->timeout_ns = cfg->timeout_ns;
  c->staging = cfg->staging_bytes;
  c->frame_bytes = dc_round_up((uint64_t)cfg->staging_bytes + DC_FRAME_SLACK, 256);
  c->alloc_bytes = DC_CTRL_BYTES + 2 * c->frame_bytes + DC_PUSH_AREA_BYTES(world);
  if (dc_table_ref_default(&c->table, c->err, sizeof(c->err)) != 0) return dc_fail(c, dc_err_arg, "%s", c->err);
  DC_CUDA_GOTO(cudaSetDevice(dev), c, res, fail);
  DC_CUDA_GOTO(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), c, res, fail);
  DC_CUDA_GOTO(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev), c, res, fail);
  DC_CUDA_GOTO(cudaDeviceGetAttribute(&c->sms, cudaDevAttrMultiProcessorCount, dev), c, res, fail);
  c->sm = major * 10 + minor;
  /* Only where the kernels' code holds griddepcontrol.wait (sm_90 and up). */
  if (dc_env_pdl() == 1 && c->sm >= 90) {
    int code = 0;
    DC_CUDA_GOTO(dc_code_version(&code), c, res, fail);
    c->pdl = code >= 90;
  }
  /* Zeroed: flags, and push lines (a line is 0 between calls). */
  DC_CUDA_GOTO(cudaMalloc((void **)&c->base, c->alloc_bytes), c, res, fail);
  DC_CUDA_GOTO(cudaMemset(c->base, 0, c->alloc_bytes), c, res, fail);
  for (int b = 0; b < DC_MAX_BLOCKS; b++) ones[b] = 1;
  DC_CUDA_GOTO(cudaMemcpy(((dc_ctrl *)c->base)->seq, ones, sizeof(ones), cudaMemcpyHostToDevice), c, res,
               fail);
  DC_CUDA_GOTO(cudaStreamCreateWithFlags(&c->aux, cudaStreamNonBlocking), c, res, fail);
  DC_CUDA_GOTO(cudaStreamCreateWithFlags(&c->side, cudaStreamNonBlocking), c, res, fail);
  DC_CUDA_GOTO(cudaEventCreateWithFlags(&c->fork, cudaEventDisableTiming), c, res, fail);
  DC_CUDA_GOTO(cudaEventCreateWithFlags(&c->join, cudaEventDisableTiming), c, res, fail);
  DC_CUDA_GOTO(dc_delay_preload(), c, res, fail);
  /* The memset runs on the legacy stream; user streams may be non-blocking. */
  DC_CUDA_GOTO(cudaDeviceSynchronize(), c, res, fail);
fail:
  return res;
}

/* Largest grid this rank may use: co-residency bound and default cap. */
static dc_result dc_rank_grid(dc_comm c, int cfg_max_blocks, int *grid) {
  dc_result res = dc_ok;
  int occ = 1 << 30, o = 0;
  DC_CUDA_GOTO(cudaSetDevice(c->device), c, res, fail);
  DC_CUDA_GOTO(dc_occupancy_all_gather(c->threads, &o), c, res, fail);
  occ = o < occ ? o : occ;
  DC_CUDA_GOTO(dc_occupancy_all_reduce(c->threads, &o), c, res, fail);
  occ = o < occ ? o : occ;
  DC_CUDA_GOTO(dc_occupancy_reduce_scatter(c->threads, &o), c, res, fail);
  occ = o < occ ? o : occ;
  DC_CUDA_GOTO(dc_occupancy_push(c->threads, &o), c, res, fail);
  occ = o < occ ? o : occ;
  DC_CUDA_GOTO(dc_occupancy_direct(c->threads, &o), c, res, fail);
  occ = o < occ ? o : occ;
  DC_CUDA_GOTO(dc_occupancy_pipe(c->threads, &o), c, res, fail);
  occ = o < occ ? o : occ;
  if (occ < 1) return dc_fail(c, dc_err_unsupported, "no kernel fits %d threads per block", c->threads);
  {
    int resident = (occ * c->sms - DC_HEADROOM_BLOCKS) / c->rod;
    int def = c->sms / c->rod;
    int g;
    if (c->rod == 1 && def > DC_GRID_CAP_ONE_RANK) def = DC_GRID_CAP_ONE_RANK;
    g = cfg_max_blocks ? cfg_max_blocks : def;
    if (g > resident) g = resident;
    if (g > DC_MAX_BLOCKS) g = DC_MAX_BLOCKS;
    *grid = g < 1 ? 1 : g;
  }
fail:
  return res;
}

/* The argument block every call starts from. */
static void dc_fill_kargs(dc_comm c) {
  memset(&c->kargs, 0, sizeof(c->kargs));
  for (int p = 0; p < c->world; p++) {
    c->kargs.ctrl[p] = (dc_ctrl *)c->peer_base[p];
    c->kargs.stage[p] = c->peer_base[p] + DC_CTRL_BYTES;
  }
  c->kargs.frame_bytes = c->frame_bytes;
  c->kargs.timeout_ns = c->timeout_ns;
  c->kargs.rank = c->rank;
  c->kargs.world = c->world;
  c->kargs.seq_words = c->max_grid; /* no call has more blocks */
  c->kargs.pdl = c->pdl;
  c->sys = c->topo != DC_TOPO_SINGLE_GPU;
}

/* *first = e unless it already holds an error. */
static void dc_keep_first(cudaError_t *first, cudaError_t e) {
  if (*first == cudaSuccess) *first = e;
}

/* Close the IPC mappings of window w (none in one process); the first
 * CUDA error. */
static cudaError_t dc_close_window(dc_window *w) {
  cudaError_t e = cudaSuccess;
  for (int p = 0; p < DC_MAX_WORLD; p++)
    if (w->mapped[p]) dc_keep_first(&e, cudaIpcCloseMemHandle(w->mapped[p]));
  memset(w, 0, sizeof(*w));
  return e;
}

/* Release everything of c; the first CUDA error (all is released that can
 * be, and c is freed either way). */
static cudaError_t dc_free_rank(dc_comm c) {
  cudaError_t e = cudaSuccess;
  if (!c) return e;
  if ((e = cudaSetDevice(c->device)) == cudaSuccess) {
    for (int i = 0; i < c->nwin; i++) dc_keep_first(&e, dc_close_window(&c->win[i]));
    for (int p = 0; p < DC_MAX_WORLD; p++)
      if (c->opened[p]) dc_keep_first(&e, cudaIpcCloseMemHandle(c->peer_base[p]));
    if (c->aux) dc_keep_first(&e, cudaStreamDestroy(c->aux));
    if (c->side) dc_keep_first(&e, cudaStreamDestroy(c->side));
    if (c->fork) dc_keep_first(&e, cudaEventDestroy(c->fork));
    if (c->join) dc_keep_first(&e, cudaEventDestroy(c->join));
    if (c->base) dc_keep_first(&e, cudaFree(c->base));
  }
  dc_table_ref_free(&c->table);
  free(c);
  return e;
}

static dc_result dc_check_world(int world) {
  if (world < 1 || world > DC_MAX_WORLD)
    return dc_fail(NULL, dc_err_arg, "world %d: must be 1..%d", world, DC_MAX_WORLD);
  return dc_ok;
}

extern "C" dc_result dc_topology(int n, const char *const *bus_ids, dc_topo *topo) {
  int all_same = 1, pcie = 0;
  if (n < 1 || !bus_ids || !topo) return dc_fail(NULL, dc_err_arg, "dc_topology: n < 1, or bus_ids or topo NULL");
  for (int a = 0; a < n; a++)
    if (!bus_ids[a]) return dc_fail(NULL, dc_err_arg, "dc_topology: bus_ids[%d] is NULL", a);
  for (int a = 0; a < n; a++)
    for (int b = 0; b < a; b++) {
      int da = -1, db = -1, atomics = 1;
      if (strcmp(bus_ids[a], bus_ids[b]) == 0) continue;
      all_same = 0;
      if (cudaDeviceGetByPCIBusId(&da, bus_ids[a]) != cudaSuccess ||
          cudaDeviceGetByPCIBusId(&db, bus_ids[b]) != cudaSuccess ||
          cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, da, db) != cudaSuccess) {
        cudaGetLastError();
        atomics = 1;
      }
      pcie |= !atomics;
    }
  *topo = all_same ? DC_TOPO_SINGLE_GPU : pcie ? DC_TOPO_PCIE : DC_TOPO_NVLINK;
  return dc_ok;
}

extern "C" dc_result dc_comm_create_local(int world, const int *devices, const dc_config *cfg,
                                          dc_comm *comms) {
  dc_result res;
  dc_config conf;
  dc_comm c[DC_MAX_WORLD] = {0};
  int cur = 0, ndev = 0, grid = DC_MAX_BLOCKS, sm = 1 << 30;
  dc_topo topo = DC_TOPO_SINGLE_GPU;
  char bus[DC_MAX_WORLD][DC_BUS_ID_LEN];
  const char *bus_ids[DC_MAX_WORLD] = {0};
  if ((res = dc_check_world(world)) != dc_ok) return res;
  if (!devices || !comms) return dc_fail(NULL, dc_err_arg, "dc_comm_create_local: devices or comms is NULL");
  if ((res = dc_resolve_config(cfg, &conf, NULL, 0)) != dc_ok) return res;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1)
    return dc_fail(NULL, dc_err_device, "dc_comm_create_local: no CUDA device");
  for (int r = 0; r < world; r++)
    if (devices[r] < 0 || devices[r] >= ndev)
      return dc_fail(NULL, dc_err_device, "devices[%d] = %d: not a device (0..%d)", r, devices[r], ndev - 1);
  if (cudaGetDevice(&cur) != cudaSuccess) return dc_fail(NULL, dc_err_cuda, "cudaGetDevice failed");
  for (int r = 0; r < world; r++) {
    if (!(c[r] = (dc_comm)calloc(1, sizeof(struct dc_comm_s)))) {
      res = dc_fail(NULL, dc_err_no_memory, "dc_comm_create_local: out of host memory");
      goto fail;
    }
    if ((res = dc_setup_rank(c[r], r, world, devices[r], &conf)) != dc_ok) goto fail_msg;
    for (int q = 0; q < world; q++) c[r]->rod += devices[q] == devices[r];
    DC_CUDA_GOTO(cudaDeviceGetPCIBusId(bus[r], DC_BUS_ID_LEN, devices[r]), c[r], res, fail_msg);
    bus_ids[r] = bus[r];
  }
  /* Peer access between distinct devices. */
  for (int a = 0; a < world; a++)
    for (int b = 0; b < world; b++) {
      int can = 0;
      if (devices[a] == devices[b]) continue;
      DC_CUDA_GOTO(cudaDeviceCanAccessPeer(&can, devices[a], devices[b]), c[a], res, fail_msg);
      if (!can) {
        res = dc_fail(c[a], dc_err_device, "device %d cannot access device %d", devices[a], devices[b]);
        goto fail_msg;
      }
      DC_CUDA_GOTO(cudaSetDevice(devices[a]), c[a], res, fail_msg);
      {
        cudaError_t e = cudaDeviceEnablePeerAccess(devices[b], 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled)
          cudaGetLastError(); /* clear the non-sticky error this leaves behind */
        else if (e != cudaSuccess) {
          cudaGetLastError();
          res = dc_fail(c[a], dc_err_device, "cudaDeviceEnablePeerAccess(%d -> %d): %s", devices[a], devices[b],
                        cudaGetErrorString(e));
          goto fail_msg;
        }
      }
    }
  if ((res = dc_topology(world, bus_ids, &topo)) != dc_ok) goto fail;
  for (int r = 0; r < world; r++) {
    int g = 0;
    if ((res = dc_rank_grid(c[r], conf.max_blocks, &g)) != dc_ok) goto fail_msg;
    grid = g < grid ? g : grid;
    sm = c[r]->sm < sm ? c[r]->sm : sm;
  }
  for (int r = 0; r < world; r++) {
    c[r]->max_grid = grid;
    c[r]->sm = sm;
    c[r]->topo = topo;
    for (int p = 0; p < world; p++) c[r]->peer_base[p] = c[p]->base;
    dc_fill_kargs(c[r]);
  }
  for (int r = 0; r < world; r++) comms[r] = c[r];
  cudaSetDevice(cur);
  return dc_ok;
fail_msg:
  for (int r = 0; r < world; r++)
    if (c[r] && c[r]->err[0]) dc_fail(NULL, res, "rank %d: %s", r, c[r]->err);
fail:
  for (int r = 0; r < world; r++) dc_free_rank(c[r]);
  cudaSetDevice(cur);
  return res;
}

/* What each rank publishes in the two IPC exchange rounds. */
typedef struct {
  cudaIpcMemHandle_t handle;
  char bus[DC_BUS_ID_LEN];
  uint64_t staging, frame_bytes, timeout_ns;
  int world, threads, ok;
} dc_ipc_hello;

typedef struct {
  int ok, topo, grid, sm;
} dc_ipc_ready;

/* dc_comm_create_ipc's arguments without which no exchange can be made. */
static dc_result dc_ipc_args(int rank, int world, dc_exchange_fn allgather, dc_comm *out) {
  dc_result res;
  if ((res = dc_check_world(world)) != dc_ok) return res;
  if (rank < 0 || rank >= world) return dc_fail(NULL, dc_err_arg, "rank %d not in 0..%d", rank, world - 1);
  if (!allgather || !out) return dc_fail(NULL, dc_err_arg, "dc_comm_create_ipc: allgather or out is NULL");
  return dc_ok;
}

/* This rank's config (*conf, resolved from cfg) and device: a problem
 * there fails the rank, which still takes part in the exchange. */
static dc_result dc_ipc_local(int device, const dc_config *cfg, dc_config *conf) {
  dc_result res;
  int ndev = 0;
  if ((res = dc_resolve_config(cfg, conf, NULL, 0)) != dc_ok) return res;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
    cudaGetLastError();
    return dc_fail(NULL, dc_err_device, "dc_comm_create_ipc: no CUDA device");
  }
  if (device < 0 || device >= ndev) return dc_fail(NULL, dc_err_device, "device %d: not a device", device);
  return dc_ok;
}

/* Round 1's answers: every rank set up, with this rank's world and config. */
static dc_result dc_ipc_check_hellos(dc_comm c, const dc_ipc_hello *all, const dc_ipc_hello *me,
                                     int world) {
  for (int p = 0; p < world; p++) {
    if (!all[p].ok) return dc_fail(c, dc_err_exchange, "rank %d failed to set up", p);
    if (all[p].world != world || all[p].staging != me->staging || all[p].threads != me->threads ||
        all[p].timeout_ns != me->timeout_ns)
      return dc_fail(c, dc_err_arg, "rank %d has a different world or config", p);
  }
  return dc_ok;
}

/* Map every peer's staging memory through the handles of round 1 and find
 * the topology among the ranks' devices (*topo). */
static dc_result dc_ipc_map_peers(dc_comm c, int rank, int world, const dc_ipc_hello *all,
                                  const dc_ipc_hello *me, dc_topo *topo) {
  const char *bus_ids[DC_MAX_WORLD] = {0};
  for (int p = 0; p < world; p++) {
    c->rod += strcmp(all[p].bus, me->bus) == 0;
    bus_ids[p] = all[p].bus;
  }
  c->peer_base[rank] = c->base;
  for (int p = 0; p < world; p++) {
    if (p == rank) continue;
    if (cudaIpcOpenMemHandle((void **)&c->peer_base[p], all[p].handle, cudaIpcMemLazyEnablePeerAccess) !=
        cudaSuccess) {
      cudaGetLastError();
      return dc_fail(c, dc_err_device, "cudaIpcOpenMemHandle of rank %d failed", p);
    }
    c->opened[p] = 1;
  }
  return dc_topology(world, bus_ids, topo);
}

/* Round 2's answers into c: every rank's smallest grid and SM, and the
 * slowest topology any rank found. */
static void dc_ipc_agree(dc_comm c, const dc_ipc_ready *rall, int world) {
  c->max_grid = rall[0].grid;
  c->sm = rall[0].sm;
  c->topo = (dc_topo)rall[0].topo;
  for (int p = 1; p < world; p++) {
    c->max_grid = rall[p].grid < c->max_grid ? rall[p].grid : c->max_grid;
    c->sm = rall[p].sm < c->sm ? rall[p].sm : c->sm;
    c->topo = rall[p].topo > (int)c->topo ? (dc_topo)rall[p].topo : c->topo;
  }
}

extern "C" dc_result dc_comm_create_ipc(int rank, int world, int device, const dc_config *cfg,
                                        dc_exchange_fn allgather, void *ctx, dc_comm *out) {
  dc_result res;
  dc_config conf;
  dc_comm c = NULL;
  dc_ipc_hello me, all[DC_MAX_WORLD];
  dc_ipc_ready ready, rall[DC_MAX_WORLD];
  int cur = -1, local_ok = 1;
  dc_topo topo = DC_TOPO_SINGLE_GPU;
  memset(&me, 0, sizeof(me));
  memset(&conf, 0, sizeof(conf));
  memset(&ready, 0, sizeof(ready));
  if ((res = dc_ipc_args(rank, world, allgather, out)) != dc_ok) return res;
  /* Every rank takes part in both exchange rounds even after a local
   * failure, so no rank is left waiting in the launcher's allgather. */
  if ((res = dc_ipc_local(device, cfg, &conf)) != dc_ok) local_ok = 0;
  if (local_ok && cudaGetDevice(&cur) != cudaSuccess) {
    cudaGetLastError();
    cur = -1;
    res = dc_fail(NULL, dc_err_cuda, "dc_comm_create_ipc: cudaGetDevice failed");
    local_ok = 0;
  }
  if (local_ok && !(c = (dc_comm)calloc(1, sizeof(struct dc_comm_s)))) {
    res = dc_fail(NULL, dc_err_no_memory, "dc_comm_create_ipc: out of host memory");
    local_ok = 0;
  }
  if (local_ok && (res = dc_setup_rank(c, rank, world, device, &conf)) != dc_ok) local_ok = 0;
  if (local_ok && (cudaIpcGetMemHandle(&me.handle, c->base) != cudaSuccess ||
                   cudaDeviceGetPCIBusId(me.bus, sizeof(me.bus), device) != cudaSuccess)) {
    cudaGetLastError();
    res = dc_fail(c, dc_err_cuda, "cudaIpcGetMemHandle or cudaDeviceGetPCIBusId failed");
    local_ok = 0;
  }
  me.staging = conf.staging_bytes;
  me.frame_bytes = c ? c->frame_bytes : 0;
  me.timeout_ns = conf.timeout_ns;
  me.world = world;
  me.threads = conf.threads;
  me.ok = local_ok;
  if (allgather(&me, all, sizeof(me), ctx) != 0) {
    res = dc_fail(c, dc_err_exchange, "exchange round 1 failed");
    goto fail;
  }
  if (local_ok && (res = dc_ipc_check_hellos(c, all, &me, world)) != dc_ok) local_ok = 0;
  if (local_ok && (res = dc_ipc_map_peers(c, rank, world, all, &me, &topo)) != dc_ok) local_ok = 0;
  if (local_ok && (res = dc_rank_grid(c, conf.max_blocks, &ready.grid)) != dc_ok) local_ok = 0;
  ready.ok = local_ok;
  ready.topo = (int)topo;
  ready.sm = c ? c->sm : 0;
  if (allgather(&ready, rall, sizeof(ready), ctx) != 0) {
    res = dc_fail(c, dc_err_exchange, "exchange round 2 failed");
    goto fail;
  }
  for (int p = 0; p < world; p++)
    if (!rall[p].ok) {
      if (local_ok) res = dc_fail(c, dc_err_exchange, "rank %d failed to map its peers", p);
      goto fail;
    }
  dc_ipc_agree(c, rall, world);
  dc_fill_kargs(c);
  *out = c;
  cudaSetDevice(cur);
  return dc_ok;
fail:
  if (c && c->err[0]) dc_fail(NULL, res, "rank %d: %s", rank, c->err);
  dc_free_rank(c);
  if (cur >= 0) cudaSetDevice(cur);
  return res;
}

extern "C" dc_result dc_comm_destroy(dc_comm comm) {
  int cur = 0;
  cudaError_t e;
  if (!comm) return dc_ok;
  if (cudaGetDevice(&cur) != cudaSuccess) cur = -1;
  e = dc_free_rank(comm);
  if (cur >= 0) cudaSetDevice(cur);
  if (e == cudaSuccess) return dc_ok;
  cudaGetLastError();
  return dc_fail(NULL, dc_err_cuda, "dc_comm_destroy: %s (the communicator is freed)", cudaGetErrorString(e));
}

extern "C" dc_result dc_comm_get_info(dc_comm comm, dc_comm_info *info) {
  if (!comm || !info) return dc_err_arg;
  info->rank = comm->rank;
  info->world = comm->world;
  info->device = comm->device;
  info->sm = comm->sm;
  info->topo = comm->topo;
  info->ranks_on_device = comm->rod;
  info->staging_bytes = comm->staging;
  info->max_blocks = comm->max_grid;
  info->threads = comm->threads;
  info->timeout_ns = comm->timeout_ns;
  info->pdl = comm->pdl;
  return dc_ok;
}

/* ---- registered windows ------------------------------------------------- */

/* The window of c that holds [p, p + len), or NULL. */
static const dc_window *dc_window_of(dc_comm c, const void *p, uint64_t len) {
  const char *q = (const char *)p;
  for (int i = 0; i < c->nwin; i++) {
    const dc_window *w = &c->win[i];
    if (q >= w->base && len <= w->bytes && (uint64_t)(q - w->base) <= w->bytes - len) return w;
  }
  return NULL;
}

/* This rank's side of a new window: room, no overlap, device memory of the
 * comm's device, a 16-byte aligned start (calls pass every rank's pointers
 * at one offset into its window: with every start aligned, every rank's
 * are of one alignment class). */
static dc_result dc_check_window(dc_comm c, const char *fn, const void *ptr, size_t bytes) {
  cudaPointerAttributes at;
  const char *q = (const char *)ptr;
  if (!ptr) return dc_fail(c, dc_err_arg, "%s: rank %d: ptr is NULL", fn, c->rank);
  if ((uintptr_t)ptr % 16)
    return dc_fail(c, dc_err_arg, "%s: rank %d: %p is not 16-byte aligned (a window starts so)", fn, c->rank,
                   ptr);
  if (bytes == 0) return dc_fail(c, dc_err_arg, "%s: rank %d: bytes is 0", fn, c->rank);
  if (c->nwin >= DC_MAX_WINDOWS)
    return dc_fail(c, dc_err_capacity, "%s: rank %d already has %d windows (DC_MAX_WINDOWS)", fn,
                   c->rank, DC_MAX_WINDOWS);
  for (int i = 0; i < c->nwin; i++)
    if (q < c->win[i].base + c->win[i].bytes && c->win[i].base < q + bytes)
      return dc_fail(c, dc_err_arg, "%s: rank %d: [%p, +%zu) overlaps the window [%p, +%zu)", fn,
                     c->rank, ptr, bytes, (void *)c->win[i].base, c->win[i].bytes);
  if (cudaPointerGetAttributes(&at, ptr) != cudaSuccess) {
    cudaGetLastError();
    return dc_fail(c, dc_err_arg, "%s: rank %d: %p is not a CUDA allocation", fn, c->rank, ptr);
  }
  if (at.type != cudaMemoryTypeDevice || at.device != c->device)
    return dc_fail(c, dc_err_device, "%s: rank %d: %p is not device memory of device %d", fn,
                   c->rank, ptr, c->device);
  return dc_ok;
}

extern "C" dc_result dc_register_local(int world, const dc_comm *comms, void *const *ptrs,
                                       size_t bytes) {
  dc_result res;
  if ((res = dc_check_world(world)) != dc_ok) return res;
  if (!comms || !ptrs) return dc_fail(NULL, dc_err_arg, "dc_register_local: comms or ptrs is NULL");
  for (int r = 0; r < world; r++) {
    const dc_comm c = comms[r];
    if (!c) return dc_fail(NULL, dc_err_arg, "dc_register_local: comms[%d] is NULL", r);
    if (c->world != world || c->rank != r || c->peer_base[0] != comms[0]->peer_base[0])
      return dc_fail(c, dc_err_arg,
                     "dc_register_local: comms[%d] is not rank %d of this local group of %d", r, r,
                     world);
    for (int p = 0; p < world; p++)
      if (c->opened[p])
        return dc_fail(c, dc_err_arg,
                       "dc_register_local: comms[%d] spans processes: use dc_register_ipc", r);
    if ((res = dc_check_window(c, "dc_register_local", ptrs[r], bytes)) != dc_ok) return res;
  }
  for (int r = 0; r < world; r++) {
    dc_window *w = &comms[r]->win[comms[r]->nwin++];
    w->base = (char *)ptrs[r];
    w->bytes = bytes;
    for (int p = 0; p < world; p++) w->peer[p] = (char *)ptrs[p];
  }
  return dc_ok;
}

/* What each rank publishes when it registers a window across processes:
 * the handle of the allocation holding it, and its offset there. */
typedef struct {
  cudaIpcMemHandle_t handle;
  uint64_t bytes, offset;
  int ok;
} dc_ipc_window;

/* ptr's offset into its CUDA allocation and the bytes from ptr to the
 * allocation's end, by cuMemGetAddressRange (through the runtime's driver
 * entry point: libdetcoll does not link libcuda). An IPC handle is the
 * whole allocation's, whatever pointer into it it was taken from. */
static cudaError_t dc_alloc_range(const void *ptr, uint64_t *offset, uint64_t *room) {
  void *fn = NULL;
  cudaDriverEntryPointQueryResult q;
  CUdeviceptr base = 0;
  size_t size = 0;
  cudaError_t e = cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fn, 12000, cudaEnableDefault, &q);
  if (e != cudaSuccess) return e;
  if (q != cudaDriverEntryPointSuccess || !fn) return cudaErrorNotSupported;
  if (((PFN_cuMemGetAddressRange_v3020)fn)(&base, &size, (CUdeviceptr)(uintptr_t)ptr) != CUDA_SUCCESS)
    return cudaErrorInvalidValue;
  *offset = (uint64_t)((uintptr_t)ptr - base);
  *room = (uint64_t)(base + size - (uintptr_t)ptr);
  return cudaSuccess;
}

extern "C" dc_result dc_register_ipc(dc_comm comm, void *ptr, size_t bytes,
                                     dc_exchange_fn allgather, void *ctx) {
  dc_result res = dc_ok;
  dc_ipc_window me, all[DC_MAX_WORLD];
  dc_window w;
  uint64_t room = 0;
  int ok[DC_MAX_WORLD], cur = -1, local_ok = 1;
  if (!comm || !allgather)
    return dc_fail(comm, dc_err_arg, "dc_register_ipc: comm or allgather is NULL");
  memset(&me, 0, sizeof(me));
  memset(&w, 0, sizeof(w));
  /* Every rank takes part in both exchange rounds even after a local
   * failure, so no rank is left waiting in the launcher's allgather. */
  if ((res = dc_check_window(comm, "dc_register_ipc", ptr, bytes)) != dc_ok) local_ok = 0;
  if (local_ok && (cudaGetDevice(&cur) != cudaSuccess || cudaSetDevice(comm->device) != cudaSuccess ||
                   cudaIpcGetMemHandle(&me.handle, ptr) != cudaSuccess ||
                   dc_alloc_range(ptr, &me.offset, &room) != cudaSuccess)) {
    cudaGetLastError();
    res = dc_fail(comm, dc_err_cuda, "dc_register_ipc: rank %d: no IPC handle of %p (cudaMalloc memory?)",
                  comm->rank, ptr);
    local_ok = 0;
  }
  if (local_ok && room < bytes) {
    res = dc_fail(comm, dc_err_arg, "dc_register_ipc: rank %d: [%p, +%zu) runs %llu bytes past its allocation",
                  comm->rank, ptr, bytes, (unsigned long long)(bytes - room));
    local_ok = 0;
  }
  me.bytes = bytes;
  me.ok = local_ok;
  if (allgather(&me, all, sizeof(me), ctx) != 0) {
    res = dc_fail(comm, dc_err_exchange, "dc_register_ipc: exchange round 1 failed");
    goto out;
  }
  w.base = (char *)ptr;
  w.bytes = bytes;
  w.peer[comm->rank] = (char *)ptr;
  for (int p = 0; p < comm->world && local_ok; p++) {
    if (!all[p].ok || all[p].bytes != bytes) {
      res = dc_fail(comm, dc_err_exchange, "dc_register_ipc: rank %d %s", p,
                    all[p].ok ? "registers another size" : "could not register");
      local_ok = 0;
    } else if (p != comm->rank) {
      /* A handle this process opened already (another window in the same
       * allocation) gives the same mapping again, counted. */
      if (cudaIpcOpenMemHandle((void **)&w.mapped[p], all[p].handle,
                               cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
        cudaGetLastError();
        w.mapped[p] = NULL;
        res = dc_fail(comm, dc_err_device,
                      "dc_register_ipc: cudaIpcOpenMemHandle of rank %d failed", p);
        local_ok = 0;
      } else {
        w.peer[p] = w.mapped[p] + all[p].offset;
      }
    }
  }
  if (allgather(&local_ok, ok, sizeof(int), ctx) != 0) {
    res = dc_fail(comm, dc_err_exchange, "dc_register_ipc: exchange round 2 failed");
    local_ok = 0;
  }
  for (int p = 0; p < comm->world && local_ok; p++)
    if (!ok[p]) {
      res = dc_fail(comm, dc_err_exchange,
                    "dc_register_ipc: rank %d failed to map its peers' windows", p);
      local_ok = 0;
    }
  if (local_ok)
    comm->win[comm->nwin++] = w;
  else
    dc_close_window(&w);
out:
  if (cur >= 0) cudaSetDevice(cur);
  return local_ok ? dc_ok : res;
}

extern "C" dc_result dc_deregister(dc_comm comm, const void *ptr) {
  if (!comm) return dc_err_arg;
  for (int i = 0; i < comm->nwin; i++) {
    if (comm->win[i].base != (const char *)ptr) continue;
    int cur = 0;
    if (cudaGetDevice(&cur) != cudaSuccess)
      return dc_fail(comm, dc_err_cuda, "cudaGetDevice failed");
    if (cudaSetDevice(comm->device) != cudaSuccess)
      return dc_fail(comm, dc_err_cuda, "cudaSetDevice failed");
    dc_close_window(&comm->win[i]);
    cudaSetDevice(cur);
    memmove(&comm->win[i], &comm->win[i + 1], (size_t)(comm->nwin - i - 1) * sizeof(dc_window));
    comm->nwin--;
    return dc_ok;
  }
  return dc_fail(comm, dc_err_arg, "dc_deregister: no window of rank %d starts at %p", comm->rank,
                 ptr);
}

/* The watchdog's message: the missing peer, and what the wait saw. */
static void dc_watchdog_message(dc_comm c, const dc_watch *w, uint64_t next_seq) {
  static const char *const kinds[] = {"staged", "reduced", "rank", "pipeline staged", "pipeline reduced",
                                      "push line"};
  const unsigned kind = (unsigned)(w->where >> 32);
  /* The pipeline's waits hold progress words: call, then steps done. */
  const int pipe = kind == DC_FLAG_PIPE_STAGED || kind == DC_FLAG_PIPE_REDUCED;
  const unsigned long long call = pipe ? w->seq >> DC_PIPE_SHIFT : w->seq;
  const unsigned long long want = pipe ? w->seq & ((1ull << DC_PIPE_SHIFT) - 1) : 0;
  const unsigned long long saw = pipe && w->flag >> DC_PIPE_SHIFT == call ? w->flag & ((1ull << DC_PIPE_SHIFT) - 1)
                                                                         : w->flag;
  char what[64] = "";
  if (pipe) snprintf(what, sizeof(what), " for %llu steps", want);
  dc_fail(c, dc_err_timeout,
          "watchdog: rank %d never arrived (call %llu waited on its %s flag %u%s from device time %llu ns, "
          "last saw %llu; next call %llu)",
          c->missing, call, kind <= DC_WATCH_PUSH ? kinds[kind] : "?", (unsigned)w->where, what, w->since, saw,
          (unsigned long long)next_seq);
}

extern "C" dc_result dc_comm_status(dc_comm comm, int *missing_rank) {
  dc_result res = dc_ok;
  /* The control area's head: status, why, ..., and seq[0]. */
  unsigned long long head[offsetof(dc_ctrl, seq) / sizeof(unsigned long long) + 1];
  unsigned long long st = 0, seq = 0;
  int cur = 0;
  if (!comm) return dc_err_arg;
  if (!comm->failed) {
    DC_CUDA_GOTO(cudaGetDevice(&cur), comm, res, out);
    DC_CUDA_GOTO(cudaSetDevice(comm->device), comm, res, out);
    DC_CUDA_GOTO(cudaMemcpyAsync(head, comm->base, sizeof(head), cudaMemcpyDeviceToHost, comm->aux), comm, res,
                 restore);
    DC_CUDA_GOTO(cudaStreamSynchronize(comm->aux), comm, res, restore);
    memcpy(&st, (char *)head + offsetof(dc_ctrl, status), sizeof(st));
    memcpy(&seq, (char *)head + offsetof(dc_ctrl, seq), sizeof(seq));
    if (st != 0) {
      dc_watch why;
      memcpy(&why, (char *)head + offsetof(dc_ctrl, why), sizeof(why));
      comm->failed = 1;
      comm->missing = (int)(st & 0xffffffffu);
      dc_watchdog_message(comm, &why, seq);
    }
  restore:
    cudaSetDevice(cur);
  }
out:
  if (res != dc_ok) return res;
  if (missing_rank) *missing_rank = comm->failed ? comm->missing : -1;
  return comm->failed ? dc_err_timeout : dc_ok;
}

/* ---- path choice and planning ------------------------------------------- */

/* The path taken where the table has none: op's last (bandwidth) path
 * among those the call's buffers allow. */
static dc_path dc_last_path(dc_op op, int reg) {
  dc_path p[DC_PATH_COUNT];
  int n = dc_op_paths(op, p);
  while (n > 0 && !reg && dc_path_needs_reg(op, p[n - 1])) n--;
  return n > 0 ? p[n - 1] : DC_PATH_AUTO;
}

/* The threshold-table path for a key (cached per comm until
 * dc_comm_set_table replaces the comm's table). */
/* The skew whose threshold rows auto dispatch uses: 0, the zero-skew rows,
 * unless the build asks for skew-aware thresholds (configure
 * --with-dispatch-skew-us=D); a table without rows for that skew falls back
 * to its zero-skew rows (dc_table_find). */
#ifndef DC_DISPATCH_SKEW_NS
#define DC_DISPATCH_SKEW_NS 0
#endif

/* A table without DC_ALIGN_REG rows for a key serves registered calls from
 * its DC_ALIGN_16 rows. */
static dc_path dc_auto_path(dc_comm c, dc_op op, dc_dtype dtype, dc_align align, dc_mode mode, uint64_t bytes) {
  const dc_threshold_row *row;
  const int reg = align == DC_ALIGN_REG;
  dc_path p;
  dtype = dc_table_dtype(op, dtype);
  if (!c->looked_up[op][dtype][align][mode]) {
    row = dc_table_find(c->table.rows, c->table.n, c->sm, c->world, c->topo, op, dtype, align, mode,
                        DC_DISPATCH_SKEW_NS);
    if (!row && reg)
      row = dc_table_find(c->table.rows, c->table.n, c->sm, c->world, c->topo, op, dtype, DC_ALIGN_16,
                          mode, DC_DISPATCH_SKEW_NS);
    c->rows[op][dtype][align][mode] = row;
    c->looked_up[op][dtype][align][mode] = 1;
  }
  row = c->rows[op][dtype][align][mode];
  p = row ? dc_row_path(row, bytes) : DC_PATH_AUTO;
  if (p == DC_PATH_AUTO || !dc_path_valid(op, p) || (!reg && dc_path_needs_reg(op, p)))
    return dc_last_path(op, reg);
  /* A row may name a size-limited path (push) past its limit: a table from
   * another build, or a segment that ends between measured sizes. */
  if (bytes > dc_path_max_bytes(op, p))
    p = dc_path_valid(op, DC_PATH_ONE_SHOT) ? DC_PATH_ONE_SHOT : dc_last_path(op, reg);
  /* Past the staging capacity, registered buffers take the op's last
   * path, which stages nothing (unregistered ones are refused). */
  if (reg && bytes > c->staging && !dc_path_needs_reg(op, p)) p = dc_last_path(op, reg);
  return p;
}

extern "C" dc_result dc_comm_set_table(dc_comm comm, const dc_threshold_row *rows, size_t n) {
  char why[sizeof(comm->err)];
  if (!comm) return dc_fail(NULL, dc_err_arg, "dc_comm_set_table: comm is NULL");
  if (dc_table_ref_set(&comm->table, rows, n, why, sizeof(why)) != 0)
    return dc_fail(comm, dc_err_arg, "dc_comm_set_table: %s", why);
  memset(comm->looked_up, 0, sizeof(comm->looked_up));
  return dc_ok;
}

int dc_plan(dc_kargs *a, dc_op op, dc_path path, size_t esize, int max_grid) {
  const uint64_t v = 16 / esize; /* elements per 16-byte vector */
  const uint64_t q = DC_PART_ALIGN / esize;
  const uint64_t w = (uint64_t)a->world;
  const uint64_t bytes = a->n * esize;
  uint64_t g0 = 1, grid;
  if (path == DC_PATH_COPY_ENGINE) return 1; /* flag kernels of one block */
  if (path == DC_PATH_PUSH) {
    /* Threads own whole 8-byte lines of one source piece (reduce_scatter:
     * a slice); no partition fields are used. */
    grid = dc_div_up(op == DC_OP_REDUCE_SCATTER ? a->slice * esize : bytes, DC_PUSH_BLOCK_BYTES);
    return (int)(grid < (uint64_t)max_grid ? grid : (uint64_t)max_grid);
  }
  if (path != DC_PATH_SINGLE_BLOCK) {
    g0 = dc_div_up(bytes, DC_BLOCK_BYTES);
    if (g0 > (uint64_t)max_grid) g0 = (uint64_t)max_grid;
    if (g0 < 1) g0 = 1;
  }
  /* all_reduce's two-shot slices (two_shot, direct, pipeline). */
  if (op == DC_OP_ALL_REDUCE && path != DC_PATH_SINGLE_BLOCK && path != DC_PATH_ONE_SHOT)
    a->slice = dc_round_up(dc_div_up(a->n, w), v);
  if (path == DC_PATH_PIPELINE) {
    /* As many pieces (all_reduce: of its slice) as DC_PIPE_MIN_PIECE bytes
     * allow, at most DC_PIPE_PIECES a block, cut evenly: the busiest block
     * takes k pieces, and so does every other one with work. Pieces of
     * DC_PIPE_MIN_PIECE each left a few blocks one piece more than the
     * rest just past every multiple of g0 pieces, and the call waited on
     * them (two virtual ranks, graph: 17.7 us at 9.5 MiB per rank, 11.8 at
     * 8 MiB). */
    const uint64_t len = op == DC_OP_ALL_REDUCE ? a->slice : a->n;
    uint64_t pieces = dc_div_up(len * esize, DC_PIPE_MIN_PIECE);
    if (pieces > g0 * DC_PIPE_PIECES) pieces = g0 * DC_PIPE_PIECES;
    const uint64_t k = dc_div_up(pieces, g0);
    a->per = dc_round_up(dc_div_up(len, (pieces < g0 ? pieces : g0) * k), q);
    return (int)g0;
  }
  if (op == DC_OP_REDUCE_SCATTER) {
    const uint64_t c = a->slice;
    a->stride = dc_round_up(c, v);
    a->per = dc_round_up(dc_div_up(c, g0), q);
    grid = dc_div_up(c, a->per);
  } else if (path == DC_PATH_TWO_SHOT || (op == DC_OP_ALL_REDUCE && path == DC_PATH_DIRECT)) {
    const uint64_t c = a->slice;
    a->per = dc_round_up(dc_div_up(c, g0), q);
    grid = dc_div_up(c, a->per);
  } else {
    a->per = dc_round_up(dc_div_up(a->n, g0), q);
    grid = dc_div_up(a->n, a->per);
    a->per_out = dc_round_up(dc_div_up(w * a->n, grid), 16);
  }
  return (int)grid;
}

/* ---- calls --------------------------------------------------------------- */

/* Checks shared by the three collectives, none of which touches the GPU.
 * count is in elements of esize bytes; bytes_per_rank is the capacity
 * measure. Sets *noop for zero-size calls (dc_ok, nothing to launch). */
static dc_result dc_check_call(dc_comm c, const char *fn, dc_op op, const void *send,
                               const void *recv, size_t count, size_t esize, uint64_t bytes_per_rank,
                               dc_path *path, int *noop) {
  *noop = 0;
  if (c->failed)
    return dc_fail(c, dc_err_timeout, "%s: communicator failed earlier (rank %d never arrived)", fn, c->missing);
  if ((int)*path < 0 || *path >= DC_PATH_COUNT || (*path != DC_PATH_AUTO && !dc_path_valid(op, *path)))
    return dc_fail(c, dc_err_arg, "%s: path %d is not a path of %s", fn, (int)*path, dc_op_name(op));
  if (count == 0) {
    *noop = 1;
    return dc_ok;
  }
  if (!send) return dc_fail(c, dc_err_arg, "%s: send is NULL", fn);
  if (!recv) return dc_fail(c, dc_err_arg, "%s: recv is NULL", fn);
  if ((uintptr_t)send % esize) return dc_fail(c, dc_err_arg, "%s: send is not %zu-byte aligned", fn, esize);
  if ((uintptr_t)recv % esize) return dc_fail(c, dc_err_arg, "%s: recv is not %zu-byte aligned", fn, esize);
  if (*path != DC_PATH_AUTO && bytes_per_rank > dc_path_max_bytes(op, *path))
    return dc_fail(c, dc_err_capacity, "%s: %llu bytes per rank exceed the %s path's limit of %llu", fn,
                   (unsigned long long)bytes_per_rank, dc_path_name(*path),
                   (unsigned long long)dc_path_max_bytes(op, *path));
  return dc_ok;
}

/* 1, with *wi and *wo set, when a call of op with in_bytes of input per
 * rank is of the DC_ALIGN_REG class on c: send and recv lie in windows of
 * c, 16-byte aligned, with every piece (all_gather: the chunk; all_reduce:
 * the buffer; reduce_scatter: a slice) a multiple of 16 bytes. */
static int dc_reg_windows(dc_comm c, dc_op op, const void *in, const void *out, uint64_t in_bytes,
                          const dc_window **wi, const dc_window **wo) {
  const uint64_t out_bytes = op == DC_OP_ALL_GATHER   ? in_bytes * (uint64_t)c->world
                             : op == DC_OP_ALL_REDUCE ? in_bytes
                                                      : in_bytes / (uint64_t)c->world;
  const uint64_t piece = dc_align_bytes(op, in_bytes, c->world);
  return c->nwin > 0 && (((uintptr_t)in | (uintptr_t)out | (uintptr_t)piece) & 15u) == 0 &&
         (*wi = dc_window_of(c, in, in_bytes)) != NULL &&
         (*wo = dc_window_of(c, out, out_bytes)) != NULL;
}

/* dc_reg_windows for a call's arguments, and every rank's send and recv
 * (a->pin/pout) when it holds. */
static int dc_reg_args(dc_comm c, dc_op op, dc_kargs *a, size_t esize) {
  const uint64_t in_bytes = a->n * esize;
  const dc_window *wi, *wo;
  if (!dc_reg_windows(c, op, a->in, a->out, in_bytes, &wi, &wo)) return 0;
  for (int p = 0; p < c->world; p++) {
    a->pin[p] = wi->peer[p] + (a->in - wi->base);
    a->pout[p] = wo->peer[p] + (a->out - wo->base);
  }
  /* In-place all_gather: rank p's chunk sits at its own place p of its recv,
   * a different offset on every rank. */
  if (op == DC_OP_ALL_GATHER && a->in == a->out + (uint64_t)c->rank * in_bytes)
    for (int p = 0; p < c->world; p++) a->pin[p] = a->pout[p] + (uint64_t)p * in_bytes;
  return 1;
}

/* Stream checks and mode; then the launch on the comm's device. */
static dc_result dc_launch(dc_comm c, const char *fn, dc_op op, dc_dtype dtype, dc_kargs *a, size_t esize,
                           uint64_t bytes_per_rank, dc_path path, cudaStream_t st) {
  int dev = -1, cur = -1, grid;
  const int reg = dc_reg_args(c, op, a, esize);
  cudaError_t e;
  enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
  dc_mode mode;
  if ((e = cudaStreamIsCapturing(st, &cap)) != cudaSuccess)
    return dc_fail(c, dc_err_cuda, "%s: cudaStreamIsCapturing: %s", fn, cudaGetErrorString(e));
  mode = cap == cudaStreamCaptureStatusActive ? DC_MODE_GRAPH : DC_MODE_EAGER;
  /* cudaStreamGetDevice is refused on a capturing stream; there a stream of
   * another device makes the launch itself fail (dc_err_cuda). */
  if (mode == DC_MODE_EAGER) {
    if ((e = cudaStreamGetDevice(st, &dev)) != cudaSuccess)
      return dc_fail(c, dc_err_cuda, "%s: cudaStreamGetDevice: %s", fn, cudaGetErrorString(e));
    if (dev != c->device)
      return dc_fail(c, dc_err_device, "%s: stream is on device %d, the comm on device %d", fn, dev, c->device);
  }
  if (path == DC_PATH_AUTO)
    path = dc_auto_path(
        c, op, dtype,
        reg ? DC_ALIGN_REG
            : dc_align_class((uintptr_t)a->in, (uintptr_t)a->out, dc_align_bytes(op, bytes_per_rank, c->world)),
        mode, bytes_per_rank);
  else if (!reg && dc_path_needs_reg(op, path))
    return dc_fail(
        c, dc_err_arg,
        "%s: the %s path needs send and recv inside registered windows (dc_register_*), 16-byte "
        "aligned, with a multiple of 16 bytes per %s",
        fn, dc_path_name(path), op == DC_OP_REDUCE_SCATTER ? "slice" : "rank");
  if (bytes_per_rank > c->staging && !dc_path_needs_reg(op, path))
    return dc_fail(c, dc_err_capacity, "%s: %llu bytes per rank exceed the staging capacity %zu (the %s path)", fn,
                   (unsigned long long)bytes_per_rank, c->staging, dc_path_name(path));
  grid = dc_plan(a, op, path, esize, c->max_grid);
  if ((e = cudaGetDevice(&cur)) != cudaSuccess)
    return dc_fail(c, dc_err_cuda, "%s: cudaGetDevice: %s", fn, cudaGetErrorString(e));
  if (cur != c->device && (e = cudaSetDevice(c->device)) != cudaSuccess)
    return dc_fail(c, dc_err_cuda, "%s: cudaSetDevice: %s", fn, cudaGetErrorString(e));
  if (path == DC_PATH_PUSH)
    e = dc_launch_push(a, op, dtype, c->sys, grid, c->threads, st);
  else if (path == DC_PATH_DIRECT)
    e = dc_launch_direct(a, op, dtype, c->sys, grid, c->threads, st);
  else if (path == DC_PATH_PIPELINE)
    e = dc_launch_pipe(a, op, dtype, c->sys, grid, c->threads, st);
  else if (path == DC_PATH_COPY_ENGINE)
    e = dc_launch_copy_engine(a, c->sys, st, c->rod == 1 ? c->side : NULL, c->fork, c->join);
  else if (op == DC_OP_ALL_GATHER)
    e = dc_launch_all_gather(a, path, c->sys, grid, c->threads, st);
  else if (op == DC_OP_ALL_REDUCE)
    e = dc_launch_all_reduce(a, path, dtype, c->sys, grid, c->threads, st);
  else
    e = dc_launch_reduce_scatter(a, dtype, c->sys, grid, c->threads, st);
  if (cur != c->device) cudaSetDevice(cur);
  if (e != cudaSuccess) return dc_fail(c, dc_err_cuda, "%s: launch: %s", fn, cudaGetErrorString(e));
  return dc_ok;
}

extern "C" dc_result dc_all_gather(dc_comm comm, const void *send, void *recv, size_t bytes_per_rank,
                                   dc_path path, cudaStream_t stream) {
  dc_result res;
  dc_kargs a;
  int noop = 0;
  if (!comm) return dc_err_arg;
  if ((res = dc_check_call(comm, "dc_all_gather", DC_OP_ALL_GATHER, send, recv, bytes_per_rank, 1,
                           bytes_per_rank, &path, &noop)) != dc_ok || noop)
    return res;
  if (bytes_per_rank > SIZE_MAX / (size_t)comm->world)
    return dc_fail(comm, dc_err_arg, "dc_all_gather: world * bytes_per_rank overflows");
  a = comm->kargs;
  a.in = (const char *)send;
  a.out = (char *)recv;
  a.n = bytes_per_rank;
  return dc_launch(comm, "dc_all_gather", DC_OP_ALL_GATHER, DC_DTYPE_BF16, &a, 1, bytes_per_rank, path, stream);
}

extern "C" dc_result dc_all_reduce(dc_comm comm, const void *send, void *recv, size_t count, dc_dtype dtype,
                                   dc_path path, cudaStream_t stream) {
  dc_result res;
  dc_kargs a;
  size_t es;
  int noop = 0;
  if (!comm) return dc_err_arg;
  if ((es = dc_dtype_size(dtype)) == 0) return dc_fail(comm, dc_err_arg, "dc_all_reduce: unknown dtype %d", (int)dtype);
  if (count > SIZE_MAX / es) return dc_fail(comm, dc_err_arg, "dc_all_reduce: count * element size overflows");
  if ((res = dc_check_call(comm, "dc_all_reduce", DC_OP_ALL_REDUCE, send, recv, count, es, count * es, &path,
                           &noop)) != dc_ok || noop)
    return res;
  a = comm->kargs;
  a.in = (const char *)send;
  a.out = (char *)recv;
  a.n = count;
  return dc_launch(comm, "dc_all_reduce", DC_OP_ALL_REDUCE, dtype, &a, es, count * es, path, stream);
}

extern "C" dc_result dc_reduce_scatter(dc_comm comm, const void *send, void *recv, size_t recvcount,
                                       dc_dtype dtype, dc_path path, cudaStream_t stream) {
  dc_result res;
  dc_kargs a;
  size_t es;
  int noop = 0;
  if (!comm) return dc_err_arg;
  if ((es = dc_dtype_size(dtype)) == 0)
    return dc_fail(comm, dc_err_arg, "dc_reduce_scatter: unknown dtype %d", (int)dtype);
  if (recvcount > SIZE_MAX / es / (size_t)comm->world)
    return dc_fail(comm, dc_err_arg, "dc_reduce_scatter: world * recvcount * element size overflows");
  if ((res = dc_check_call(comm, "dc_reduce_scatter", DC_OP_REDUCE_SCATTER, send, recv, recvcount, es,
                           (uint64_t)recvcount * es * comm->world, &path, &noop)) != dc_ok ||
      noop)
    return res;
  a = comm->kargs;
  a.in = (const char *)send;
  a.out = (char *)recv;
  a.slice = recvcount;
  a.n = (uint64_t)recvcount * comm->world;
  return dc_launch(comm, "dc_reduce_scatter", DC_OP_REDUCE_SCATTER, dtype, &a, es,
                   (uint64_t)recvcount * es * comm->world, path, stream);
}

extern "C" dc_result dc_query_path(dc_comm comm, dc_op op, dc_dtype dtype, const void *send, const void *recv,
                                   size_t bytes_per_rank, dc_mode mode, dc_path *path) {
  if (!comm) return dc_err_arg;
  if ((int)op < 0 || op >= DC_OP_COUNT) return dc_fail(comm, dc_err_arg, "dc_query_path: unknown op %d", (int)op);
  if (op == DC_OP_ALL_GATHER) dtype = dc_table_dtype(op, dtype); /* ignored, as detcoll.h says */
  if ((int)dtype < 0 || dtype >= DC_DTYPE_COUNT)
    return dc_fail(comm, dc_err_arg, "dc_query_path: unknown dtype %d", (int)dtype);
  if ((int)mode < 0 || mode >= DC_MODE_COUNT)
    return dc_fail(comm, dc_err_arg, "dc_query_path: unknown mode %d", (int)mode);
  if (!path) return dc_fail(comm, dc_err_arg, "dc_query_path: path is NULL");
  if (op == DC_OP_ALL_GATHER && bytes_per_rank > SIZE_MAX / (size_t)comm->world)
    return dc_fail(comm, dc_err_arg, "dc_query_path: world * bytes_per_rank overflows");
  {
    const dc_window *wi, *wo;
    const dc_align al = dc_reg_windows(comm, op, send, recv, bytes_per_rank, &wi, &wo)
                            ? DC_ALIGN_REG
                            : dc_align_class((uintptr_t)send, (uintptr_t)recv,
                                             dc_align_bytes(op, bytes_per_rank, comm->world));
    *path = dc_auto_path(comm, op, dtype, al, mode, bytes_per_rank);
  }
  return dc_ok;
}
