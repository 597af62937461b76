/* dc_device.cuh: what every libdetcoll kernel shares -- the control-area
 * layout, the kernel argument block, flags with release/acquire at GPU or
 * system scope, the watchdog wait, the per-op sequence number, vectorized
 * byte copies and the rank-order fold -- plus the launcher entry points the
 * op files export to dc_comm.cu.
 *
 * Protocol of one call (op sequence number s, frame f = s & 1):
 *  1. Prologue: block b reads word b of the rank's seq array (s) and its
 *     status, then writes s + 1 into words b, b + G, b + 2G, ... (G blocks)
 *     up to the comm's largest grid, so after the call every word a call
 *     can read holds s + 1, whatever grid the next call has. No block reads
 *     a word that another block of its call writes: no atomic and no "last
 *     block" counter (on one H200 an acq_rel counter cost 0.27 us per call
 *     at 2 blocks, 0.4 at 128; begin_probe in
 *     docs/results/2026-12-01-h200/call5). The seq lives in device memory
 *     and advances on the device, so graph replays and mixed grids stay
 *     consistent.
 *  2. Stage: each block copies its part of the input into its own rank's
 *     staging frame f (peers can only read staging memory).
 *  3. Signal: bar.sync, then one thread per peer stores s, with release
 *     semantics, into flags[kind][block][my rank] of that peer's control area.
 *     Flags hold sequence values, never increments: a block that did not run
 *     in an earlier call (grid change) can never be fooled by a stale flag.
 *  4. Wait: one thread per peer polls its own control area until the peer's
 *     flag >= s (a peer can be at most one call ahead), bounded by
 *     %globaltimer (watchdog). Then bar.sync, and peers' frames are read.
 * Work is split identically on every rank (same grid and partition from the
 * same arguments), so block b only waits for block b of each peer.
 * Frame reuse: call s writes frame f, which peers read during call s - 2.
 * Call s starts after this rank's call s - 1 finished, and in call s - 1
 * every block waited for every peer's call s - 1 to start, i.e. for every
 * peer's call s - 2 (same stream) to have finished reading. So two frames
 * alternating by s are retired without an end barrier. This needs every
 * call to wait on every peer (all paths do) and no overlap of consecutive
 * kernels of one rank. Programmatic dependent launch (DC_PDL=1, sm_90+
 * code) keeps that: a kernel so launched may be scheduled once every block
 * of the kernel before it exited (none triggers earlier), and its first
 * act, in dc_begin, is griddepcontrol.wait, which returns once that kernel
 * completed and its memory operations are visible; only the launch
 * overlaps.
 *
 * The push path (every op, DC_PATH_PUSH) uses no staging frame and no
 * flag words; see "Push lines" below and dc_push.cu. It waits on every peer
 * in every call like the other paths (each of its lines waits for every
 * peer's line), so the frame-reuse argument above holds across calls of
 * mixed paths, and so does the push area's.
 *
 * The registered paths (DC_PATH_DIRECT, DC_PATH_COPY_ENGINE; dc_direct.cu)
 * use no frame either: peers' user buffers are reached through a.pin and
 * a.pout. Block b meets block b of every peer twice: at the start (flag
 * kind STAGED: every peer's call has begun, so its buffers hold this call's
 * input and its output is free) and at the end (kind REDUCED: every peer is
 * done reading my input and writing my output, so my call may end). They
 * too wait on every peer in every call. */
#ifndef DC_DEVICE_CUH
#define DC_DEVICE_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "detcoll.h"

/* Control area at the start of each rank's staging allocation (dc_ctrl
 * fits: checked in dc_comm.cu). */
#define DC_CTRL_BYTES 131072
/* Slack after each frame: padded slices of reduce-scatter / two-shot. */
#define DC_FRAME_SLACK (DC_MAX_WORLD * 16)

/* Push lines. Each rank's allocation ends with a push receive area after
 * its two frames: [parity s & 1][source rank][line], a slot of
 * DC_PUSH_SLOT_BYTES per source rank. A line is 16 bytes, two 64-bit atoms
 * {low 32 bits: 4 payload bytes, high 32 bits: flag}, written by its source
 * with one 16-byte store (st.relaxed.v2.u64) and read by the owner with one
 * 16-byte load. The PTX memory model makes a vector access one access per
 * element, so what is relied on is that an aligned 64-bit access is
 * single-copy atomic: an atom whose flag is the call's flag holds that
 * call's payload (NCCL's LL protocol rests on the same). Between calls every
 * line is 0: its owner clears it after reading it, and flags are never 0. */
#define DC_PUSH_LINE_BYTES 16
#define DC_PUSH_SLOT_BYTES ((uint64_t)DC_PUSH_MAX_BYTES * 2)
/* Bytes of the push area of one rank of a world-rank communicator. */
#define DC_PUSH_AREA_BYTES(world) (2 * (uint64_t)(world) * DC_PUSH_SLOT_BYTES)

/* PIPE_STAGED and PIPE_REDUCED are the pipeline path's progress counters
 * (dc_pipe.cu), one per block row: they hold DC_PIPE_PROGRESS(s, t), never
 * a bare s. */
enum {
  DC_FLAG_STAGED = 0,
  DC_FLAG_REDUCED = 1,
  DC_FLAG_RANK = 2,
  DC_FLAG_PIPE_STAGED = 3,
  DC_FLAG_PIPE_REDUCED = 4,
  DC_FLAG_KINDS = 5
};
/* Progress word of the pipeline path: call s, t steps done. t stays far
 * below 2^DC_PIPE_SHIFT (a block takes about DC_PIPE_PIECES pieces), so the
 * words of call s + 1 are all above those of call s. */
#define DC_PIPE_SHIFT 24
#define DC_PIPE_PROGRESS(s, t) (((uint64_t)(s) << DC_PIPE_SHIFT) + (uint64_t)(t))

/* What the wait that fired a rank's watchdog saw, for the error message:
 * enough to tell a peer that started late (since) from one in another call
 * (seq against flag) or on another flag (where). */
typedef struct {
  unsigned long long seq;   /* the waiting call's sequence number */
  unsigned long long flag;  /* the value it last read from the missing peer */
  unsigned long long where; /* kind << 32 | block (DC_WATCH_PUSH: push line) */
  unsigned long long since; /* %globaltimer when the wait began, ns */
} dc_watch;
#define DC_WATCH_PUSH DC_FLAG_KINDS

typedef struct {
  unsigned long long status; /* 0, or (dc_err_timeout << 32) | missing rank */
  dc_watch why;              /* the wait that set status (valid when status != 0) */
  unsigned int arrive;       /* blocks that finished staging (rank barrier) */
  unsigned int pad0;
  unsigned long long pad[10]; /* seq starts a 128-byte line */
  /* seq[b]: sequence number of the next call, as its block b reads it
   * (starts at 1); every word holds the same value between calls. */
  unsigned long long seq[DC_MAX_BLOCKS];
  /* flags[kind][block][source rank] = sequence number of the source's call */
  unsigned long long flags[DC_FLAG_KINDS][DC_MAX_BLOCKS][DC_MAX_WORLD];
} dc_ctrl;

/* Kernel arguments, identical in layout for every op. Sizes are elements
 * for reductions and bytes for all_gather. */
typedef struct {
  char *stage[DC_MAX_WORLD];    /* each rank's frame 0, mapped in this process;
                                   its push area is at stage + 2 * frame_bytes */
  dc_ctrl *ctrl[DC_MAX_WORLD];  /* each rank's control area */
  const char *in;
  char *out;
  uint64_t n;           /* elements (all_gather: bytes) of the input per rank */
  uint64_t frame_bytes; /* distance from frame 0 to frame 1 */
  uint64_t per;         /* block partition step (multiple of 16 bytes) */
  uint64_t per_out;     /* all_gather multi-block: output partition step */
  uint64_t slice;       /* two-shot: slice length; reduce_scatter: recvcount */
  uint64_t stride;      /* reduce_scatter: slice stride in the frame */
  uint64_t timeout_ns;
  int rank, world;
  int seq_words; /* seq words in use: the comm's largest grid */
  int pdl;       /* host only: launch with programmatic stream serialization */
  /* Registered paths: every rank's send and recv of this call (own
   * included), through the comm's windows. */
  const char *pin[DC_MAX_WORLD];
  char *pout[DC_MAX_WORLD];
} dc_kargs;

/* ---- host side: launchers exported by the op files ------------------------ */

/* Plan the partition of a call into a->per/per_out/slice/stride and return
 * the grid; the caller has filled everything else. max_grid >= 1. */
int dc_plan(dc_kargs *a, dc_op op, dc_path path, size_t esize, int max_grid);

cudaError_t dc_launch_all_gather(const dc_kargs *a, dc_path path, int sys, int grid, int threads,
                                 cudaStream_t st);
cudaError_t dc_launch_all_reduce(const dc_kargs *a, dc_path path, dc_dtype dtype, int sys, int grid,
                                 int threads, cudaStream_t st);
cudaError_t dc_launch_reduce_scatter(const dc_kargs *a, dc_dtype dtype, int sys, int grid,
                                     int threads, cudaStream_t st);
/* DC_PATH_PUSH of any op (dc_push.cu). */
cudaError_t dc_launch_push(const dc_kargs *a, dc_op op, dc_dtype dtype, int sys, int grid,
                           int threads, cudaStream_t st);
/* DC_PATH_DIRECT of any op, and all_gather's DC_PATH_COPY_ENGINE
 * (dc_direct.cu); a->pin/pout filled. */
cudaError_t dc_launch_direct(const dc_kargs *a, dc_op op, dc_dtype dtype, int sys, int grid,
                             int threads, cudaStream_t st);
/* copy_engine: side stream and events of the comm for the own chunk. */
cudaError_t dc_launch_copy_engine(const dc_kargs *a, int sys, cudaStream_t st, cudaStream_t side,
                                  cudaEvent_t fork, cudaEvent_t join);
/* DC_PATH_PIPELINE of all_gather and all_reduce (dc_pipe.cu). */
cudaError_t dc_launch_pipe(const dc_kargs *a, dc_op op, dc_dtype dtype, int sys, int grid, int threads,
                           cudaStream_t st);
/* The virtual architecture (x 10) the kernels were compiled for, as they
 * run on the current device: 90 for an sm_90 build, below 90 where the
 * device runs PTX of an older one (which lacks griddepcontrol). */
cudaError_t dc_code_version(int *version);
/* Force the skew kernel to load on the current device (see dc_delay.cu). */
cudaError_t dc_delay_preload(void);
/* Smallest resident-blocks-per-SM over an op's kernels at this block size.
 * Querying every kernel also loads it (CUDA lazy loading would otherwise
 * load a kernel at its first launch, waiting for running kernels: a
 * deadlock when those spin for a rank whose launch is the one waiting). */
cudaError_t dc_occupancy_all_gather(int threads, int *blocks_per_sm);
cudaError_t dc_occupancy_all_reduce(int threads, int *blocks_per_sm);
cudaError_t dc_occupancy_reduce_scatter(int threads, int *blocks_per_sm);
cudaError_t dc_occupancy_push(int threads, int *blocks_per_sm);
cudaError_t dc_occupancy_direct(int threads, int *blocks_per_sm);
cudaError_t dc_occupancy_pipe(int threads, int *blocks_per_sm);

/* Index of a world size among the kernels' compile-time worlds: 2, 4, 8,
 * else 3 (any, read at run time). */
static inline int dc_world_class(int world) {
  return world == 2 ? 0 : world == 4 ? 1 : world == 8 ? 2 : 3;
}

/* What a reducing kernel (one_shot, two_shot, reduce_scatter) is built to
 * assume of its call's buffers; its launcher picks the instantiation.
 * DC_OUT_4: recv 4-byte aligned. DC_OUT_A16: send and recv 16-byte aligned
 * (and whatever byte-count condition the launcher adds): no unaligned copy
 * in the kernel. DC_OUT_2: recv 2 bytes past a 4-byte boundary (2-byte
 * types): only dc_reduce_shifted's store loop. DC_OUT_ANY: decided per call
 * at run time (the pipeline kernel). Each kernel holds only the store loop
 * its calls use: one kernel with both loops spilled more (two_shot bf16:
 * 268 bytes against 172 without the shifted loop). */
enum { DC_OUT_4, DC_OUT_A16, DC_OUT_2, DC_OUT_ANY };

/* The instantiation a reducing launcher picks: aligned says whether the
 * call meets DC_OUT_A16's conditions. */
static inline int dc_out_kind(int aligned, const void *recv) {
  return aligned ? DC_OUT_A16 : ((uintptr_t)recv & 3) ? DC_OUT_2 : DC_OUT_4;
}

/* Launch kernel k(*a) on grid x threads in st; with a->pdl, the launch
 * may begin before the kernel ahead of it in st has completed (k starts
 * with dc_grid_wait). */
static inline cudaError_t dc_launch_kernel(const void *k, int grid, int threads, const dc_kargs *a,
                                           cudaStream_t st) {
  void *args[] = {(void *)a};
  if (!a->pdl) return cudaLaunchKernel(k, dim3(grid), dim3(threads), args, 0, st);
  cudaLaunchAttribute attr[1] = {};
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(threads);
  cfg.stream = st;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelExC(&cfg, k, args);
}

/* Smallest resident-blocks-per-SM over n kernels (also loads them). */
static inline cudaError_t dc_occupancy_of(const void *const *kernels, int n, int threads,
                                          int *blocks_per_sm) {
  int best = 1 << 30;
  for (int i = 0; i < n; i++) {
    int b = 0;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernels[i], threads, 0);
    if (e != cudaSuccess) return e;
    if (b < best) best = b;
  }
  *blocks_per_sm = best;
  return cudaSuccess;
}

/* ---- device side ------------------------------------------------------------ */
#ifdef __CUDACC__

#define DC_KERNEL_BOUNDS __launch_bounds__(1024)

__device__ __forceinline__ uint64_t dc_globaltimer(void) {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/* Flags: system scope when ranks span devices, GPU scope for virtual ranks. */
template <bool SYS>
__device__ __forceinline__ uint64_t dc_ld_acquire(const unsigned long long *p) {
  uint64_t v;
  if (SYS)
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  else
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

template <bool SYS>
__device__ __forceinline__ void dc_st_release(unsigned long long *p, uint64_t v) {
  if (SYS)
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  else
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ unsigned dc_atom_add_acq_rel(unsigned int *p, unsigned v) {
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}

__device__ __forceinline__ uint64_t dc_ld_relaxed(const unsigned long long *p) {
  uint64_t v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void dc_st_relaxed64(unsigned long long *p, uint64_t v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ void dc_st_relaxed32(unsigned int *p, unsigned v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* One push line (two 64-bit atoms, see "Push lines") at p, 16-aligned,
 * with one 16-byte access at the comm's flag scope. */
template <bool SYS>
__device__ __forceinline__ void dc_push_st(char *p, uint64_t a0, uint64_t a1) {
  if (SYS)
    asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a0), "l"(a1) : "memory");
  else
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a0), "l"(a1) : "memory");
}

template <bool SYS>
__device__ __forceinline__ void dc_push_ld(const char *p, uint64_t *a0, uint64_t *a1) {
  uint64_t x, y;
  if (SYS)
    asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];" : "=l"(x), "=l"(y) : "l"(p) : "memory");
  else
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(x), "=l"(y) : "l"(p) : "memory");
  *a0 = x;
  *a1 = y;
}

/* Wait until the kernel before this one in the stream has completed and
 * its memory operations are visible: at once unless this kernel was
 * launched with programmatic stream serialization (dc_launch_kernel). Every
 * kernel so launched runs it before any other memory access. */
__device__ __forceinline__ void dc_grid_wait(void) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* Per-block state shared by the threads of a block. */
struct dc_block {
  uint64_t seq;
  int abort;
};

/* Prologue, called by every thread: sets sh->seq from the block's seq
 * word, advances the block's words (b, b + G, ... below a.seq_words: so
 * every word a call may read is advanced once per call, whatever the grid)
 * after it was read, and returns 0 if the communicator already failed (a watchdog fired
 * before) so the block must do nothing. */
__device__ __forceinline__ int dc_begin(const dc_kargs &a, dc_block *sh) {
  dc_grid_wait();
  dc_ctrl *c = a.ctrl[a.rank];
  if (threadIdx.x == 0) {
    sh->seq = dc_ld_relaxed(&c->seq[blockIdx.x]);
    sh->abort = dc_ld_relaxed(&c->status) != 0;
  }
  __syncthreads();
  for (unsigned w = blockIdx.x + threadIdx.x * gridDim.x; w < (unsigned)a.seq_words;
       w += blockDim.x * gridDim.x)
    dc_st_relaxed64(&c->seq[w], sh->seq + 1);
  return !sh->abort;
}

/* Store seq s into flags[kind][row][my rank] of every rank (self too when
 * self != 0) after the whole block's prior writes. */
template <bool SYS>
__device__ __forceinline__ void dc_signal(const dc_kargs &a, int kind, int row, uint64_t s, int self) {
  __syncthreads();
  const int t = threadIdx.x;
  if (t < a.world && (self || t != a.rank)) dc_st_release<SYS>(&a.ctrl[t]->flags[kind][row][a.rank], s);
}

/* Record a watchdog timeout in the rank's status word, and what the wait
 * saw in its `why` if this is the rank's first timeout. */
__device__ __forceinline__ void dc_watchdog_fire(dc_ctrl *c, int missing, uint64_t s, uint64_t flag,
                                                 uint64_t where, uint64_t since) {
  if (atomicCAS(&c->status, 0ull, ((unsigned long long)dc_err_timeout << 32) | (unsigned)missing) == 0ull) {
    c->why.seq = s;
    c->why.flag = flag;
    c->why.where = where;
    c->why.since = since;
  }
}

/* Wait until every rank t with bit t of `who` set has stored a value >= v
 * into this rank's flags[kind][row][t]. One thread per rank; bounded by the
 * watchdog. Returns 0 (all threads alike) on timeout, after recording
 * {dc_err_timeout, missing rank} in the rank's status word. */
template <bool SYS>
__device__ __forceinline__ int dc_wait_for(const dc_kargs &a, int kind, int row, uint64_t v, unsigned who,
                                           dc_block *sh) {
  const int t = threadIdx.x;
  if (t < a.world && (who >> t & 1u)) {
    dc_ctrl *c = a.ctrl[a.rank];
    const unsigned long long *f = &c->flags[kind][row][t];
    if (dc_ld_acquire<SYS>(f) < v) {
      const uint64_t since = dc_globaltimer();
      uint64_t x;
      while ((x = dc_ld_acquire<SYS>(f)) < v) {
        if (dc_globaltimer() - since > a.timeout_ns) {
          dc_watchdog_fire(c, t, v, x, (uint64_t)kind << 32 | (unsigned)row, since);
          atomicExch(&sh->abort, 1);
          break;
        }
      }
    }
  }
  __syncthreads();
  return !sh->abort;
}

/* dc_wait_for on every peer (and self when self != 0) for call s. */
template <bool SYS>
__device__ __forceinline__ int dc_wait(const dc_kargs &a, int kind, int row, uint64_t s, int self,
                                       dc_block *sh) {
  const unsigned all = (1u << a.world) - 1u;
  return dc_wait_for<SYS>(a, kind, row, s, self ? all : all & ~(1u << a.rank), sh);
}

/* The flag of call s in a line's high half: s's low 32 bits, never 0 (0 is
 * a cleared line). */
__device__ __forceinline__ uint64_t dc_push_flag(uint64_t s) {
  const unsigned f = (unsigned)s;
  return (uint64_t)(f ? f : 1u) << 32;
}

/* All-reduce slices: sub-range lo..lo+per of slice p, clipped to the
 * slice and the buffer. */
__device__ __forceinline__ void dc_ar_sub(const dc_kargs &a, int p, uint64_t lo, uint64_t *start,
                                          uint64_t *len) {
  const uint64_t base = (uint64_t)p * a.slice;
  const uint64_t st = base + lo;
  const uint64_t end = min(base + min(lo + a.per, a.slice), a.n);
  *start = st;
  *len = st < end ? end - st : 0;
}

/* Frame of rank p for call s. */
__device__ __forceinline__ char *dc_frame(const dc_kargs &a, int p, uint64_t s) {
  return a.stage[p] + (s & 1) * a.frame_bytes;
}

/* Below this many bytes a copy's body starts at V's alignment, at or above
 * it at a 256-byte aligned dst (dc_copy_w). */
#define DC_COPY_ALIGN_MIN (256u << 10)

/* Copy n bytes with the whole block using V-wide accesses: dst and src must
 * be congruent modulo sizeof(V). Head bytes, V body (four accesses in
 * flight per thread), byte tail. The head aligns dst to V's size, or for a
 * copy of DC_COPY_ALIGN_MIN bytes or more to 256 bytes: a warp's stores
 * then cover whole 32-byte sectors and lines, whatever src's alignment (2
 * virtual ranks on one H200, 128 MiB per rank: all_gather direct 270 ->
 * 233 us, multi_block 403 -> 368, fused 395 -> 368 with a chunk of an odd
 * number of 16-byte vectors). A small copy keeps V's alignment, so an
 * aligned call has no head: a head's threads wait for its bytes before
 * they start the body, and only large copies were measured to gain.
 * blockDim.x >= 16 (the tail). */
template <typename V>
__device__ __forceinline__ void dc_copy_w(char *dst, const char *src, uint64_t n) {
  const unsigned w = sizeof(V);
  const uint64_t t = threadIdx.x, nt = blockDim.x;
  const uint64_t align = n >= DC_COPY_ALIGN_MIN ? 256 : w;
  uint64_t head = (uint64_t)((0 - (uintptr_t)dst) & (align - 1));
  if (head > n) head = n;
  for (uint64_t k = t; k < head; k += nt) dst[k] = src[k];
  dst += head;
  src += head;
  n -= head;
  const uint64_t nv = n / w; /* w is a constant power of two: a shift */
  V *d = reinterpret_cast<V *>(dst);
  const V *s = reinterpret_cast<const V *>(src);
  uint64_t i = t;
  for (; i + 3 * nt < nv; i += 4 * nt) {
    V v0 = s[i], v1 = s[i + nt], v2 = s[i + 2 * nt], v3 = s[i + 3 * nt];
    d[i] = v0;
    d[i + nt] = v1;
    d[i + 2 * nt] = v2;
    d[i + 3 * nt] = v3;
  }
  /* The last round, fewer than four vectors a thread: all loaded before
   * any is stored, as in the loop above. One at a time they cost a round
   * trip each (pipeline pieces of any length: 28.7 us instead of 24.5 at 16
   * MiB per rank on two virtual ranks, 25.3 with this round). */
  if (i < nv) {
    V v[3];
#pragma unroll
    for (int u = 0; u < 3; u++)
      if (i + u * nt < nv) v[u] = s[i + u * nt];
#pragma unroll
    for (int u = 0; u < 3; u++)
      if (i + u * nt < nv) d[i + u * nt] = v[u];
  }
  const uint64_t body = nv * w;
  if (t < n - body) dst[body + t] = src[body + t];
}

/* The 16 bytes that start 4 Q + r bytes into the 32 bytes a then b
 * (r = 0..3): word j is word Q + j shifted down by r bytes, its high bytes
 * from word Q + j + 1. Q is a template constant, so the words are picked at
 * compile time; r costs a funnel shift per word. */
template <int Q>
__device__ __forceinline__ uint4 dc_shifted(const uint4 &a, const uint4 &b, unsigned r) {
  const unsigned w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
  const unsigned sh = 8 * r;
  unsigned o[4];
#pragma unroll
  for (int j = 0; j < 4; j++) o[j] = __funnelshift_r(w[Q + j], w[Q + j + 1], sh);
  return make_uint4(o[0], o[1], o[2], o[3]);
}

/* Copy n bytes when src sits b = 4 Q + r bytes past a 16-byte boundary
 * once dst is aligned (b = 1..15): dst's head bytes up to 16-byte
 * alignment, then every aligned 16-byte dst vector is put together from the
 * two aligned src vectors it straddles (both hold bytes of the copy, so
 * nothing outside it is read), byte tail. */
template <int Q>
__device__ __forceinline__ void dc_copy_shift(char *dst, const char *src, uint64_t n, unsigned r) {
  const uint64_t t = threadIdx.x, nt = blockDim.x;
  uint64_t head = (uint64_t)((0 - (uintptr_t)dst) & 15);
  if (head > n) head = n;
  if (t < head) dst[t] = src[t];
  dst += head;
  src += head;
  n -= head;
  const uint64_t nv = n / 16;
  uint4 *d = reinterpret_cast<uint4 *>(dst);
  const uint4 *s = reinterpret_cast<const uint4 *>(src - 4 * Q - r);
  uint64_t i = t;
  /* Four vectors in flight per thread, as dc_copy_w keeps. */
  for (; i + 3 * nt < nv; i += 4 * nt) {
    uint4 a[4], b[4];
#pragma unroll
    for (int u = 0; u < 4; u++) {
      a[u] = s[i + u * nt];
      b[u] = s[i + u * nt + 1];
    }
#pragma unroll
    for (int u = 0; u < 4; u++) d[i + u * nt] = dc_shifted<Q>(a[u], b[u], r);
  }
  /* The last round as dc_copy_w's: every load before any store. */
  if (i < nv) {
    uint4 a[3], b[3];
#pragma unroll
    for (int u = 0; u < 3; u++)
      if (i + u * nt < nv) {
        a[u] = s[i + u * nt];
        b[u] = s[i + u * nt + 1];
      }
#pragma unroll
    for (int u = 0; u < 3; u++)
      if (i + u * nt < nv) d[i + u * nt] = dc_shifted<Q>(a[u], b[u], r);
  }
  const uint64_t body = nv * 16;
  if (t < n - body) dst[body + t] = src[body + t];
}

/* dc_copy for addresses not congruent modulo 16: src sits b = 1..15 bytes
 * past a 16-byte boundary once dst is aligned. 16 bytes per access at every
 * b; the 2- and 1-byte accesses used before ran up to 2.4 times slower
 * (two virtual ranks, bf16 buffers 2 bytes off). One function, not inlined:
 * inlined copies change how the callers' aligned loops are scheduled (8
 * virtual ranks' one-shot all_reduce ran 20% slower with one inlined).
 * Even not inlined and never taken, its call slowed the kernels that hold
 * it (two virtual ranks' fused all_gather, 0.6 to 1.5 us up to 3 MiB; the
 * call's register and stack setup, most likely), so aligned calls run
 * kernels without it (dc_copy<true>). */
static __device__ __noinline__ void dc_copy_unaligned(char *dst, const char *src, uint64_t n,
                                                      unsigned b) {
  if (b < 4)
    dc_copy_shift<0>(dst, src, n, b);
  else if (b < 8)
    dc_copy_shift<1>(dst, src, n, b - 4);
  else if (b < 12)
    dc_copy_shift<2>(dst, src, n, b - 8);
  else
    dc_copy_shift<3>(dst, src, n, b - 12);
}

/* Block-wide copy of n bytes between any two addresses: dc_copy_w when
 * they are congruent modulo 16 (frames are 16-aligned), else
 * dc_copy_unaligned. ALIGNED: the launcher has checked that every call's
 * dst and src are congruent modulo 16, so the kernel holds no unaligned
 * copy at all. */
template <bool ALIGNED = false>
__device__ __forceinline__ void dc_copy(char *dst, const char *src, uint64_t n) {
  /* Once dst is aligned, src sits b bytes past an aligned address. */
  const unsigned b = (unsigned)(((uintptr_t)src - (uintptr_t)dst) & 15);
  if (ALIGNED || b == 0)
    dc_copy_w<uint4>(dst, src, n);
  else
    dc_copy_unaligned(dst, src, n, b);
}

/* Dtype traits: storage type, upcast to fp32, round-once downcast, elements
 * per 16-byte vector. */
struct dc_t_bf16 {
  typedef unsigned short T;
  enum { V = 8 };
  static __device__ __forceinline__ float up(T h) { return __uint_as_float((unsigned)h << 16); }
  static __device__ __forceinline__ T down(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
};
struct dc_t_fp16 {
  typedef unsigned short T;
  enum { V = 8 };
  static __device__ __forceinline__ float up(T h) { return __half2float(__ushort_as_half(h)); }
  static __device__ __forceinline__ T down(float f) { return __half_as_ushort(__float2half_rn(f)); }
};
/* all_gather's push lines: bytes (never folded). */
struct dc_t_u8 {
  typedef unsigned char T;
  enum { V = 16 };
};
struct dc_t_fp32 {
  typedef float T;
  enum { V = 4 };
  static __device__ __forceinline__ float up(T h) { return h; }
  static __device__ __forceinline__ T down(float f) { return f; }
};

/* DC_OUT_2 for 2-byte types; a 4-byte type's recv is 4-byte aligned, so
 * its tables name the DC_OUT_4 kernel there. */
template <class D>
constexpr int dc_out2() {
  return sizeof(typename D::T) < 4 ? DC_OUT_2 : DC_OUT_4;
}

/* A vector of type W (uint4: 16 bytes, uint2: 8) seen as elements. */
template <class D, class W>
union dc_vec_w {
  W u;
  typename D::T e[sizeof(W) / sizeof(typename D::T)];
};

template <class D>
using dc_vec = dc_vec_w<D, uint4>;

/* The determinism contract for one vector of type W: acc = x[0], then
 * acc = acc + x[p] in rank order with round-to-nearest adds, round once.
 * Every path folds through here. */
template <class D, int NW, class W>
__device__ __forceinline__ W dc_fold_w(const W *x, int world) {
  constexpr int K = sizeof(W) / sizeof(typename D::T);
  dc_vec_w<D, W> v, r;
  float acc[K];
  v.u = x[0];
#pragma unroll
  for (int j = 0; j < K; j++) acc[j] = D::up(v.e[j]);
#pragma unroll
  for (int p = 1; p < (NW ? NW : DC_MAX_WORLD); p++) {
    if (NW || p < world) {
      v.u = x[p];
#pragma unroll
      for (int j = 0; j < K; j++) acc[j] = __fadd_rn(acc[j], D::up(v.e[j]));
    }
  }
#pragma unroll
  for (int j = 0; j < K; j++) r.e[j] = D::down(acc[j]);
  return r.u;
}

template <class D, int NW>
__device__ __forceinline__ uint4 dc_fold(const uint4 *x, int world) {
  return dc_fold_w<D, NW, uint4>(x, world);
}

/* x[u][p] = the 16-byte vector k0 + u nt of every source p (rank order),
 * for the u with k0 + u nt < nvec: U vectors of every rank in flight. */
template <int NW, int U>
__device__ __forceinline__ void dc_load_vecs(uint4 (&x)[U][NW ? NW : DC_MAX_WORLD],
                                             const char *const *src, uint64_t k0, uint64_t nt,
                                             uint64_t nvec, int world) {
#pragma unroll
  for (int u = 0; u < U; u++) {
    const uint64_t k = k0 + u * nt;
    if (k < nvec) {
#pragma unroll
      for (int p = 0; p < (NW ? NW : DC_MAX_WORLD); p++)
        if (NW || p < world) x[u][p] = *reinterpret_cast<const uint4 *>(src[p] + k * 16);
    }
  }
}

/* Fold `bytes` (a multiple of 16) of the W sources src[p] (rank order,
 * 16-aligned) into out (16-aligned), and into every peer's dst[p] when dst
 * is given. A thread keeps 8 vectors in flight whatever the world size. */
template <class D, int NW>
__device__ __forceinline__ void dc_fold_srcs(const dc_kargs &a, const char *const *src,
                                               uint64_t bytes, char *out, char *const *dst) {
  constexpr int MW = NW ? NW : DC_MAX_WORLD;
  constexpr int U = NW ? 8 / NW : 1;
  const int world = NW ? NW : a.world;
  const uint64_t nt = blockDim.x, nvec = bytes / 16;
  for (uint64_t k0 = threadIdx.x; k0 < nvec; k0 += U * nt) {
    uint4 x[U][MW];
    dc_load_vecs<NW, U>(x, src, k0, nt, nvec, world);
#pragma unroll
    for (int u = 0; u < U; u++) {
      const uint64_t k = k0 + u * nt;
      if (k < nvec) {
        const uint4 r = dc_fold<D, NW>(x[u], world);
        *reinterpret_cast<uint4 *>(out + k * 16) = r;
        if (dst) {
#pragma unroll
          for (int p = 0; p < MW; p++)
            if ((NW || p < world) && p != a.rank) *reinterpret_cast<uint4 *>(dst[p] + k * 16) = r;
        }
      }
    }
  }
}

/* Elements e0 .. e0 + V - 1 of a fold's result r into out, never past
 * len: one 16-byte store where out16 (out 16-byte aligned), four 4-byte
 * ones where out4, else element by element. */
template <class D>
__device__ __forceinline__ void dc_store_out(typename D::T *out, uint64_t e0, uint64_t len,
                                             const dc_vec<D> &r, bool out16, bool out4) {
  if (out16 && e0 + D::V <= len) {
    *reinterpret_cast<uint4 *>(out + e0) = r.u;
  } else if (out4 && e0 + D::V <= len) {
    unsigned *o = reinterpret_cast<unsigned *>(out + e0);
    o[0] = r.u.x;
    o[1] = r.u.y;
    o[2] = r.u.z;
    o[3] = r.u.w;
  } else {
#pragma unroll
    for (int j = 0; j < D::V; j++)
      if (e0 + j < len) out[e0 + j] = r.e[j];
  }
}

/* dc_fold_srcs for len elements whose own source src[a.rank] and out may
 * sit at any element alignment and end anywhere (a user's send and recv):
 * those are read and written 4 bytes at a time where 4-aligned, else
 * element by element, never past len; the peers' sources and dst[p]
 * (16-aligned, with room for whole vectors) as vectors. Every vector folds
 * through dc_fold, so the bits are every path's. */
template <class D, int NW>
__device__ __forceinline__ void dc_fold_srcs_any(const dc_kargs &a, const char *const *src,
                                                 uint64_t len, char *out, char *const *dst) {
  typedef typename D::T T;
  constexpr int MW = NW ? NW : DC_MAX_WORLD;
  const int world = NW ? NW : a.world;
  const T *const own = reinterpret_cast<const T *>(src[a.rank]);
  T *const o = reinterpret_cast<T *>(out);
  const bool own4 = ((uintptr_t)own & 3) == 0, out4 = ((uintptr_t)o & 3) == 0;
  const uint64_t nvec = (len + D::V - 1) / D::V;
  for (uint64_t k = threadIdx.x; k < nvec; k += blockDim.x) {
    const uint64_t e0 = k * D::V;
    const bool whole = e0 + D::V <= len;
    uint4 x[MW];
#pragma unroll
    for (int p = 0; p < MW; p++) {
      if (!(NW || p < world)) continue;
      if (p != a.rank) {
        x[p] = *reinterpret_cast<const uint4 *>(src[p] + k * 16);
      } else if (own4 && whole) {
        const unsigned *w = reinterpret_cast<const unsigned *>(own + e0);
        x[p] = make_uint4(w[0], w[1], w[2], w[3]);
      } else {
        dc_vec<D> v;
        v.u = make_uint4(0u, 0u, 0u, 0u);
        for (int j = 0; j < D::V; j++)
          if (e0 + j < len) v.e[j] = own[e0 + j];
        x[p] = v.u;
      }
    }
    dc_vec<D> r;
    r.u = dc_fold<D, NW>(x, world);
    dc_store_out<D>(o, e0, len, r, false, out4);
#pragma unroll
    for (int p = 0; p < MW; p++)
      if ((NW || p < world) && p != a.rank) *reinterpret_cast<uint4 *>(dst[p] + k * 16) = r.u;
  }
}

/* Word i (0..7, at run time) of the 8 words a then b. */
__device__ __forceinline__ unsigned dc_word8(const uint4 &a, const uint4 &b, unsigned i) {
  const uint4 &v = i < 4 ? a : b;
  const unsigned j = i & 3;
  return j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w;
}

/* dc_reduce's loop for an out m bytes past a 16-byte boundary, m = 2 mod 4
 * (2-byte types): vector k's result covers the m-misaligned bytes [16 k,
 * 16 k + 16) of out, its first 16 - m bytes up to a boundary. Its last m
 * bytes and vector k + 1's first 16 - m make one aligned 16-byte vector,
 * which the lane that folded k stores, with k + 1's result from the next
 * lane (a warp shuffle). A warp's first lane stores its first 16 - m bytes
 * and its last lane its last m element by element, as do the lanes of the
 * call's partial last vector and the one before it. Every lane of a warp
 * runs the loop the same number of times (leaving it together once the
 * whole warp is past the end), so each shuffle has the whole warp
 * (blockDim.x is a multiple of 32). At worlds 2 and 4 a thread keeps 4
 * vectors in flight, not dc_reduce's 8 (world 8 and a world known only at
 * run time load one vector of every rank, as there): with 8 the
 * neighbour's result and the shifted words spilled in the loop (two_shot
 * bf16 world 2: 138 local loads against 77).
 * Two virtual ranks, bf16 at 2 bytes off, graph, 64 KiB to 256 MiB, over
 * element stores (cf22ba0): one_shot 0.55 to 0.83 of the time, two_shot
 * 0.71 to 0.90, reduce_scatter 0.66 to 0.93; 8 in flight without the
 * early exit was up to 1.09 (docs/measurements.md). At 4 bytes off, four
 * 4-byte stores a vector beat this loop (one_shot 613 us against 990 at
 * 256 MiB), so a 4-aligned out keeps them. */
template <class D, int NW>
__device__ __forceinline__ void dc_reduce_shifted(const dc_kargs &a, const char *const *fr,
                                                  uint64_t len, typename D::T *out, char *wb) {
  constexpr int MW = NW ? NW : DC_MAX_WORLD;
  constexpr int U = NW && NW <= 4 ? 4 / NW : 1;
  const int world = NW ? NW : a.world;
  const uint64_t nt = blockDim.x, nvec = (len + D::V - 1) / D::V, nwhole = len / D::V;
  const unsigned lane = threadIdx.x & 31, b = 16 - (unsigned)((uintptr_t)out & 15);
  const unsigned hv = b / sizeof(typename D::T); /* elements up to the boundary */
  char *const ob = reinterpret_cast<char *>(out);
  for (uint64_t k0 = threadIdx.x; k0 - lane < nvec; k0 += U * nt) {
    uint4 x[U][MW];
    dc_load_vecs<NW, U>(x, fr, k0, nt, nvec, world);
#pragma unroll
    for (int u = 0; u < U; u++) {
      if (k0 - lane + u * nt >= nvec) break; /* the whole warp is past the end */
      const uint64_t k = k0 + u * nt, e0 = k * D::V;
      dc_vec<D> r;
      r.u = make_uint4(0u, 0u, 0u, 0u);
      if (k < nvec) {
        r.u = dc_fold<D, NW>(x[u], world);
        if (wb) *reinterpret_cast<uint4 *>(wb + k * 16) = r.u;
      }
      const unsigned all = 0xffffffffu;
      const uint4 nx = make_uint4(__shfl_down_sync(all, r.u.x, 1), __shfl_down_sync(all, r.u.y, 1),
                                  __shfl_down_sync(all, r.u.z, 1), __shfl_down_sync(all, r.u.w, 1));
      if (k >= nvec) continue;
      /* k + 1 < nwhole: k and k + 1 are whole vectors. */
      const bool pair = lane < 31 && k + 1 < nwhole, paired_by_prev = lane > 0 && k < nwhole;
      if (pair) {
        const unsigned q = b >> 2, sh = 8 * (b & 3);
        unsigned w[4];
#pragma unroll
        for (unsigned j = 0; j < 4; j++)
          w[j] = __funnelshift_r(dc_word8(r.u, nx, q + j), dc_word8(r.u, nx, q + j + 1), sh);
        *reinterpret_cast<uint4 *>(ob + k * 16 + b) = make_uint4(w[0], w[1], w[2], w[3]);
      }
      /* The bytes no aligned store covers, element by element (constant
       * indices keep r in registers). */
      if (!pair || !paired_by_prev) {
#pragma unroll
        for (int j = 0; j < D::V; j++)
          if (((unsigned)j < hv ? !paired_by_prev : !pair) && e0 + j < len) out[e0 + j] = r.e[j];
      }
    }
  }
}

/* Reduce len elements at byte offset off of every rank's frame (rank order)
 * into out (element aligned; as K, a DC_OUT_ kind, says: dc_reduce_shifted's
 * loop when not 4-byte aligned), optionally also into wb + off
 * (16-aligned). NW: world size when known at compile time (0: runtime, <=
 * DC_MAX_WORLD); a thread keeps 8 vectors in flight whatever the world
 * size (dc_reduce_shifted: 4 at worlds 2 and 4). */
template <class D, int NW, int K = DC_OUT_ANY>
__device__ __forceinline__ void dc_reduce(const dc_kargs &a, uint64_t s, uint64_t off, uint64_t len,
                                          typename D::T *out, char *wb) {
  typedef typename D::T T;
  constexpr int MW = NW ? NW : DC_MAX_WORLD;
  constexpr int U = NW ? 8 / NW : 1;
  const int world = NW ? NW : a.world;
  const uint64_t nt = blockDim.x;
  const uint64_t nvec = (len + D::V - 1) / D::V;
  const char *fr[MW];
#pragma unroll
  for (int p = 0; p < MW; p++) fr[p] = (NW || p < world) ? dc_frame(a, p, s) + off : nullptr;
  if (K == DC_OUT_2 || (K == DC_OUT_ANY && ((uintptr_t)out & 3) != 0)) {
    dc_reduce_shifted<D, NW>(a, fr, len, out, wb ? wb + off : nullptr);
    return;
  }
  const bool out16 = K == DC_OUT_A16 || ((uintptr_t)out & 15) == 0;
  for (uint64_t k0 = threadIdx.x; k0 < nvec; k0 += U * nt) {
    uint4 x[U][MW];
    dc_load_vecs<NW, U>(x, fr, k0, nt, nvec, world);
#pragma unroll
    for (int u = 0; u < U; u++) {
      const uint64_t k = k0 + u * nt;
      if (k < nvec) {
        dc_vec<D> r;
        r.u = dc_fold<D, NW>(x[u], world);
        if (wb) *reinterpret_cast<uint4 *>(wb + off + k * 16) = r.u;
        dc_store_out<D>(out, k * D::V, len, r, out16, true);
      }
    }
  }
}

#endif /* __CUDACC__ */
#endif /* DC_DEVICE_CUH */
