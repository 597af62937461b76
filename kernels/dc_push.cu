/* dc_push.cu: the push path of every op (messages up to DC_PUSH_MAX_BYTES
 * per rank): no frame, no flag word, no block barrier. A source piece is cut
 * into 8-byte lines; thread t of the grid owns lines t, t + threads, ... on
 * every rank alike.
 * - all_reduce: the piece is the whole input; every peer gets every line.
 * - all_gather: the piece is the chunk (bytes); every peer gets every line
 *   and writes it into its output at the source's place.
 * - reduce_scatter: the pieces are the input's W slices; slice q's lines go
 *   to rank q only, which folds them.
 * Phase 1: a thread reads each of its lines and stores {payload, flag of
 * call s} with one 16-byte store into the receiving peer's push slot
 * [my rank], parity s & 1 (line format: dc_device.cuh, "Push lines").
 * Phase 2: for each of its lines it polls its own slots [p] until every
 * peer's line carries the flag (bounded by the watchdog, which names the
 * first missing rank), clears those lines to 0, and folds x[0..W-1] in rank
 * order (its own x read from its input, not a round trip) into the output,
 * or, for all_gather, writes every rank's line in place. A line validates
 * itself (payload and flag in one 64-bit atom), so there is no fence,
 * release or acquire: the critical path is one store and one poll.
 * Reuse of a parity buffer: a peer q writes my parity b in call s and next
 * in call s + 2 (or later). q's call s + 2 starts after q's call s + 1
 * finished (stream order), and in call s + 1 q waited for lines (or flags,
 * on another path) that I only write in my call s + 1, which starts after
 * my call s finished -- its reads and its clears of parity b included. So
 * q's call-s+2 stores reach parity b after my call s is done with it; no
 * end barrier. Relied on: a finished kernel's loads returned and its stores
 * are performed (at the home of the memory: my own L2 for my area) before
 * the next kernel of its stream starts, and stores that q issues after
 * observing a store of my later kernel are ordered after them (causality
 * through that observation, as NCCL's LL assumes). Stale lines cannot
 * match: after each call the owner has cleared every line it read (every
 * line any peer wrote: all ranks use the same count), so between calls
 * every line is 0, and flags are never 0 (low 32 bits of s, 0 taken as 1;
 * same-parity calls s and s + 2 differ there too). A peer that is already
 * in call s + 1 writes the other parity.
 * In place is safe: a thread reads its input lines before it writes the
 * output lines they land in, and no other thread or rank reads them.
 * Reductions evaluate dc_fold_w, the expression of every path.
 * Loading a thread's first line before dc_begin, to overlap the seq read,
 * was tried twice and reverted: flat on two H200s, slower for
 * reduce_scatter (7b12526), and up to 16% slower on virtual ranks
 * (d476837; docs/measurements.md). */
#include "dc_device.cuh"

enum { DC_PUSH_AR, DC_PUSH_AG, DC_PUSH_RS };

/* Line i (8 bytes, elements i * K ..) of a piece of count elements at p
 * (one 8-byte load, or two 4-byte ones at a word offset);
 * elements past the end read as 0 (never written out). */
template <class D>
__device__ __forceinline__ uint2 dc_push_in(const typename D::T *p, uint64_t count, uint64_t i) {
  typedef typename D::T T;
  constexpr int K = 8 / sizeof(T);
  const uint64_t e0 = i * K;
  dc_vec_w<D, uint2> v;
  if (((uintptr_t)(p + e0) & 7) == 0 && e0 + K <= count) {
    v.u = *reinterpret_cast<const uint2 *>(p + e0);
  } else if (((uintptr_t)(p + e0) & 3) == 0 && e0 + K <= count) {
    const unsigned *q = reinterpret_cast<const unsigned *>(p + e0);
    v.u = make_uint2(q[0], q[1]);
  } else {
#pragma unroll
    for (int j = 0; j < K; j++) v.e[j] = e0 + j < count ? p[e0 + j] : T(0);
  }
  return v.u;
}

/* Line i of a piece of count elements at p, written back (the part inside). */
template <class D>
__device__ __forceinline__ void dc_push_out(typename D::T *p, uint64_t count, uint64_t i, uint2 u) {
  typedef typename D::T T;
  constexpr int K = 8 / sizeof(T);
  const uint64_t e0 = i * K;
  dc_vec_w<D, uint2> v;
  v.u = u;
  if (((uintptr_t)(p + e0) & 7) == 0 && e0 + K <= count) {
    *reinterpret_cast<uint2 *>(p + e0) = v.u;
  } else if (((uintptr_t)(p + e0) & 3) == 0 && e0 + K <= count) {
    unsigned *q = reinterpret_cast<unsigned *>(p + e0);
    q[0] = v.u.x;
    q[1] = v.u.y;
  } else {
#pragma unroll
    for (int j = 0; j < K; j++)
      if (e0 + j < count) p[e0 + j] = v.e[j];
  }
}

/* Phase 1: this thread's lines of its piece (reduce_scatter: of each
 * peer's piece), each with the call's flag, into slot my_slot of every
 * receiving peer's area. */
template <class D, int NW, bool SYS, int OP>
__device__ __forceinline__ void dc_push_send(const dc_kargs a, const typename D::T *in, uint64_t count,
                                             uint64_t nlines, uint64_t first, uint64_t step,
                                             uint64_t my_slot, uint64_t flag, int world) {
  constexpr int MW = NW ? NW : DC_MAX_WORLD;
  for (uint64_t i = first; i < nlines; i += step) {
    uint2 v = make_uint2(0, 0);
    if (OP != DC_PUSH_RS) v = dc_push_in<D>(in, count, i);
#pragma unroll
    for (int p = 0; p < MW; p++) {
      if ((NW || p < world) && p != a.rank) {
        if (OP == DC_PUSH_RS) v = dc_push_in<D>(in + (uint64_t)p * count, count, i);
        dc_push_st<SYS>(a.stage[p] + my_slot + i * DC_PUSH_LINE_BYTES, flag | v.x, flag | v.y);
      }
    }
  }
}

template <class D, int NW, bool SYS, int OP>
__global__ void DC_KERNEL_BOUNDS dc_push(dc_kargs a) {
  typedef typename D::T T;
  constexpr int MW = NW ? NW : DC_MAX_WORLD;
  __shared__ dc_block sh;
  if (!dc_begin(a, &sh)) return;
  const int world = NW ? NW : a.world;
  const uint64_t s = sh.seq, flag = dc_push_flag(s);
  /* Elements of one source piece, and its lines. */
  const uint64_t count = OP == DC_PUSH_RS ? a.slice : a.n;
  const uint64_t nlines = (count * sizeof(T) + 7) / 8;
  const uint64_t step = (uint64_t)gridDim.x * blockDim.x;
  const uint64_t first = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const uint64_t line_off = 2 * a.frame_bytes + (s & 1) * (uint64_t)a.world * DC_PUSH_SLOT_BYTES;
  const T *const in = reinterpret_cast<const T *>(a.in);
  /* Phase 1: my lines into slot [my rank] of every receiving peer. */
  dc_push_send<D, NW, SYS, OP>(a, in, count, nlines, first, step,
                               line_off + (uint64_t)a.rank * DC_PUSH_SLOT_BYTES, flag, world);
  /* Phase 2: every peer's line i from my own area. */
  char *const mine = a.stage[a.rank] + line_off;
  T *const out = reinterpret_cast<T *>(a.out);
  const T *const own_in = OP == DC_PUSH_RS ? in + (uint64_t)a.rank * count : in;
  uint64_t since = 0, seen = 0;
  bool timing = false;
  for (uint64_t i = first; i < nlines; i += step) {
    uint2 x[MW];
    unsigned pending = 0;
#pragma unroll
    for (int p = 0; p < MW; p++) {
      if (p == a.rank)
        x[p] = dc_push_in<D>(own_in, count, i);
      else if (NW || p < world)
        pending |= 1u << p;
    }
    for (;;) {
#pragma unroll
      for (int p = 0; p < MW; p++) {
        if (pending >> p & 1u) {
          uint64_t a0, a1;
          dc_push_ld<SYS>(mine + p * DC_PUSH_SLOT_BYTES + i * DC_PUSH_LINE_BYTES, &a0, &a1);
          if ((a0 & ~0xffffffffull) == flag && (a1 & ~0xffffffffull) == flag) {
            x[p] = make_uint2((unsigned)a0, (unsigned)a1);
            pending &= ~(1u << p);
          } else if (p == __ffs(pending) - 1) {
            seen = a0 >> 32;
          }
        }
      }
      if (!pending) break;
      const uint64_t now = dc_globaltimer();
      if (!timing) {
        since = now;
        timing = true;
      } else if (now - since > a.timeout_ns || *(volatile int *)&sh.abort) {
        if (now - since > a.timeout_ns) {
          dc_watchdog_fire(a.ctrl[a.rank], __ffs(pending) - 1, s, seen,
                           (uint64_t)DC_WATCH_PUSH << 32 | (unsigned)i, since);
          atomicExch(&sh.abort, 1);
        }
        return;
      }
    }
#pragma unroll
    for (int p = 0; p < MW; p++)
      if ((NW || p < world) && p != a.rank)
        dc_push_st<SYS>(mine + p * DC_PUSH_SLOT_BYTES + i * DC_PUSH_LINE_BYTES, 0, 0);
    if constexpr (OP == DC_PUSH_AG) {
#pragma unroll
      for (int p = 0; p < MW; p++)
        if (NW || p < world) dc_push_out<D>(out + (uint64_t)p * count, count, i, x[p]);
    } else {
      dc_push_out<D>(out, count, i, dc_fold_w<D, NW, uint2>(x, world));
    }
  }
}

typedef void (*dc_push_fn)(dc_kargs);

/* [world class: 2, 4, 8, any][sys] */
#define DC_PUSH_W(D, OP)                                       \
  {                                                            \
    {dc_push<D, 2, false, OP>, dc_push<D, 2, true, OP>},       \
        {dc_push<D, 4, false, OP>, dc_push<D, 4, true, OP>},   \
        {dc_push<D, 8, false, OP>, dc_push<D, 8, true, OP>}, { \
      dc_push<D, 0, false, OP>, dc_push<D, 0, true, OP>        \
    }                                                          \
  }
/* [op][dtype][world class][sys]; all_gather moves bytes: one kernel set. */
static dc_push_fn const dc_push_kernels[DC_OP_COUNT][DC_DTYPE_COUNT][4][2] = {
    [DC_OP_ALL_GATHER] = {DC_PUSH_W(dc_t_u8, DC_PUSH_AG), DC_PUSH_W(dc_t_u8, DC_PUSH_AG),
                          DC_PUSH_W(dc_t_u8, DC_PUSH_AG)},
    [DC_OP_ALL_REDUCE] = {DC_PUSH_W(dc_t_bf16, DC_PUSH_AR), DC_PUSH_W(dc_t_fp16, DC_PUSH_AR),
                          DC_PUSH_W(dc_t_fp32, DC_PUSH_AR)},
    [DC_OP_REDUCE_SCATTER] = {DC_PUSH_W(dc_t_bf16, DC_PUSH_RS), DC_PUSH_W(dc_t_fp16, DC_PUSH_RS),
                              DC_PUSH_W(dc_t_fp32, DC_PUSH_RS)},
};

cudaError_t dc_launch_push(const dc_kargs *a, dc_op op, dc_dtype dtype, int sys, int grid,
                           int threads, cudaStream_t st) {
  dc_push_fn k =
      dc_push_kernels[op][op == DC_OP_ALL_GATHER ? 0 : dtype][dc_world_class(a->world)][sys != 0];
  return dc_launch_kernel((const void *)k, grid, threads, a, st);
}

cudaError_t dc_code_version(int *version) {
  cudaFuncAttributes fa;
  cudaError_t e = cudaFuncGetAttributes(&fa, (const void *)dc_push_kernels[0][0][0][0]);
  *version = e == cudaSuccess ? fa.ptxVersion : 0;
  return e;
}

cudaError_t dc_occupancy_push(int threads, int *blocks_per_sm) {
  return dc_occupancy_of((const void *const *)&dc_push_kernels[0][0][0][0],
                         (int)(sizeof(dc_push_kernels) / sizeof(dc_push_fn)), threads,
                         blocks_per_sm);
}
