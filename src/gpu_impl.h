/* gpu_impl.h: what the gpu backend's trial loop (gpu.c) shares with the
 * implementations it measures -- libdetcoll (gpu_detcoll.c: plain and
 * registered buffers, each with the current or the previous table) and NCCL
 * (gpu_nccl.c: plain and registered buffers) -- and the ops
 * table each of them fills. The loop never asks which one it runs. Private
 * to the gpu backend; built only with CUDA. */
#ifndef TUNE_GPU_IMPL_H
#define TUNE_GPU_IMPL_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "backend.h"
#include "config.h"
#include "detcoll.h"
#include "launch.h"
#include "topo.h"

#ifdef HAVE_NCCL
#include <nccl.h>
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
#define GPU_HAVE_SYMM 1
#endif
#endif

enum {
  GPU_GUARD = 64,       /* poisoned bytes before and after every output */
  GPU_PATTERN = 0xA5,   /* the poison */
  GPU_MAX_OFFSET = TUNE_MAX_OFFSET + 1, /* in/out offsets stay below it, bytes */
  GPU_MAX_NC = 8,       /* configurations measured together */
  GPU_GRAPHS = 8,       /* captured configurations kept per rank */
  GPU_BUSID = 32,
  GPU_DC_SLOTS = 4,     /* detcoll comms per world: plain, registered, each per table */
};

typedef struct gpu_impl_ops gpu_impl_ops;

/* The buffers a window is registered on (detcoll_reg, nccl_symm): inputs
 * A, B, output. */
enum { GPU_WIN_COUNT = 3 };

/* One configuration of a measure() call, with its call's sizes. */
typedef struct {
  const tune_cfg *c;
  const gpu_impl_ops *ops;
  size_t count; /* the call's count: all_gather bytes, all_reduce count, reduce_scatter recvcount */
  size_t out_bytes; /* one rank's output */
  size_t out_esize; /* all_gather 1 (bytes), else the dtype size */
} gpu_plan;

/* A captured configuration: one graph per input set. */
typedef struct {
  int used;
  const gpu_impl_ops *ops;
  tune_cfg key; /* impl pointer unused: ops above (graphs are keyed by table too) */
  cudaGraphExec_t exec[2];
  uint64_t last_use;
} gpu_graph;

typedef struct {
  int rank, device;
  char busid[GPU_BUSID];
  cudaStream_t stream;
  cudaEvent_t ev_a, ev_b;
  char *in[2], *out;        /* inputs A/B and the output with its guards */
  int nccl_mem;             /* the buffers came from ncclMemAlloc */
  uint64_t *d_delay;        /* the skew kernel's measured delay */
  unsigned long long *d_check; /* the output check's counts */
  int loaded;               /* dtype of the inputs on the device; -1 none */
  /* [slot][world - 1]; slot = registered | previous table << 1 (gpu_detcoll.c) */
  dc_comm dc[GPU_DC_SLOTS][DC_MAX_WORLD];
#ifdef HAVE_NCCL
  ncclComm_t nccl[2][DC_MAX_WORLD]; /* [symm][world - 1] */
#ifdef GPU_HAVE_SYMM
  ncclWindow_t win[DC_MAX_WORLD][GPU_WIN_COUNT];
#endif
#endif
  gpu_graph graphs[GPU_GRAPHS];
  uint64_t clock;
  int skip_once;   /* fault injection: skip the next eligible call (TUNE_MISSING_RANK) */
  tune_result err; /* sticky: the first failure of the current job */
} gpu_rank;

typedef struct {
  tune_backend base;
  const tune_launcher_ops *lops;
  tune_launcher *launch;
  tune_topo *topo;
  int ranks, first_local, nlocal;
  int ndev;                            /* CUDA devices this process sees */
  char busid[DC_MAX_WORLD][GPU_BUSID]; /* every rank's GPU */
  gpu_rank *local;                     /* [nlocal] */
  uint64_t seed;
  uint64_t max_bytes;
  int graph_calls;
  size_t in_cap, out_cap;
  tune_result fits; /* gpu_check_memory's answer in this process; each rank acts on it at open */
  int data_dtype; /* the dtype the inputs hold; decided alike in every process */
  int symm;       /* every rank can run nccl_symm */
  int virtual_ranks;
  dc_threshold_row *table; /* auto dispatch's, once set_table gave one; NULL: the default */
  size_t ntable;
  dc_threshold_row *prev; /* the previous table (detcoll_prev, detcoll_reg_prev); NULL: none */
  size_t nprev;
  tune_machine mach;
} gpu_backend;

/* One measure() call as the ranks see it. Rank blocks are int64 words:
 * [status, chosen[nc], wrong[nc], elapsed[nc][trials], delay[nc][trials]]. */
typedef struct {
  gpu_backend *b;
  gpu_plan plan[GPU_MAX_NC];
  int nc, world, first_trial, trials, warmup;
  dc_mode mode;
  size_t words;
  int64_t **send, **recv; /* [nlocal]: this rank's block; every rank's blocks */
} gpu_job;

/* ---- sticky failures (gpu.c) ---------------------------------------------- */

/* Record the rank's first failure (a tune_error naming call and why);
 * returns 0, for `ok = ok && GPU_...` chains. */
int gpu_fail(gpu_rank *rs, tune_result r, const char *call, const char *why);
int gpu_cuda_ok(gpu_rank *rs, cudaError_t e, const char *call);
int gpu_dc_ok(gpu_rank *rs, dc_comm comm, dc_result r, const char *call);
#define GPU_CUDA(rs, call) gpu_cuda_ok((rs), (call), #call)
#define GPU_DC(rs, comm, call) gpu_dc_ok((rs), (comm), (call), #call)
#ifdef HAVE_NCCL
int gpu_nccl_ok(gpu_rank *rs, ncclResult_t r, const char *call);
#define GPU_NCCL(rs, call) gpu_nccl_ok((rs), (call), #call)
#endif

/* The rank's state in this process. */
static inline gpu_rank *gpu_local(gpu_backend *b, int rank) { return &b->local[rank - b->first_local]; }

/* Forget a captured graph (gpu.c). */
void gpu_graph_drop(gpu_graph *g);

/* ---- the implementations ----------------------------------------------------- */

/* One implementation measured: a row per impl name of cfg.h's tune_impls. */
struct gpu_impl_ops {
  const char *name; /* "detcoll", "detcoll_reg", "nccl", "nccl_symm" */
  int detcoll;      /* libdetcoll: forced paths, bitwise-checked results */
  /* Why this impl cannot measure c here (beyond what every impl checks), or NULL. */
  const char *(*unsupported)(const gpu_backend *b, const tune_cfg *c);
  /* Single-process launchers, on the engine's thread before the ranks run:
   * the world's communicators of every rank at once; NULL: none needed. */
  tune_result (*connect_local)(gpu_backend *b, int world);
  /* On the rank, collectively over the world: its communicator, made on
   * first use (a failure is sticky on rs). */
  void (*connect)(gpu_backend *b, gpu_rank *rs, int world);
  /* One call of p on the rank's stream, eager or into a capture; 0 on failure. */
  int (*issue)(gpu_rank *rs, const gpu_plan *p, int set);
  /* After a run: a watchdog timeout or an asynchronous error, made sticky. */
  void (*status)(gpu_rank *rs, const gpu_plan *p, const int64_t host_ns[2]);
  /* The path the call takes (auto resolved), DC_PATH_AUTO where there are none. */
  dc_path (*chosen)(gpu_rank *rs, const gpu_plan *p, dc_mode mode);
  /* The output check's relative tolerance (0: bitwise). */
  double (*tolerance)(const tune_cfg *c);
  /* On the rank at close: its communicators of every world. */
  void (*disconnect)(gpu_backend *b, gpu_rank *rs);
};

extern const gpu_impl_ops gpu_impl_detcoll, gpu_impl_detcoll_reg, gpu_impl_detcoll_prev,
    gpu_impl_detcoll_reg_prev, gpu_impl_nccl, gpu_impl_nccl_symm;

/* libdetcoll beyond the ops (gpu_detcoll.c). set_table's work on each rank:
 * ctx a gpu_table_ctx; the comms of the table in slot take it (b->table or
 * b->prev), and its captured auto-dispatch graphs are dropped. */
typedef struct {
  gpu_backend *b;
  tune_table_slot slot;
} gpu_table_ctx;
tune_result gpu_detcoll_set_table(void *ctx, int rank);
/* After a failed measure() of world: 1 when it was a watchdog timeout under
 * virtual ranks and the world's comms were made afresh for one more try. */
int gpu_detcoll_retry_watchdog(gpu_backend *b, int world);
/* libdetcoll's settings as this backend's comms will have them, the
 * environment's (DC_TIMEOUT_NS) included, checked before anything starts:
 * tune_err_arg with one tune_error() line. */
tune_result gpu_detcoll_check(const gpu_backend *b);
/* Single-process launchers, at close on the engine's thread. */
void gpu_detcoll_destroy_local(gpu_backend *b);

#endif /* TUNE_GPU_IMPL_H */
