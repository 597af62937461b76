/* dc_all_reduce.cu: all-reduce kernels. Single-block is the one-shot kernel
 * on a grid of one block.
 * - one-shot: block b stages its range of the input, meets block b of every
 *   peer, then folds that range from all W frames (rank order) into recv.
 *   Reads W times the input per rank: latency path.
 * - two-shot: the buffer is cut into W slices (padded to 16 bytes); block b
 *   stages its sub-range of every slice; rank r folds slice r from all
 *   frames (rank order, never rotated) into recv and back into its own frame;
 *   after a second meeting every rank copies the other reduced slices from
 *   their owners' frames. Moves about 5x the input per rank: bandwidth path.
 * - push (messages up to DC_PUSH_MAX_BYTES per rank): no frame, no flag
 *   word, no block barrier. The input is cut into 8-byte lines; thread t of
 *   the grid owns lines t, t + threads, ... on every rank alike. Phase 1: it
 *   reads each of its input lines and stores {payload, flag of call s} with
 *   one 16-byte store into every peer's push slot [my rank], parity s & 1
 *   (line format: dc_device.cuh, "Push lines"). Phase 2: for each of its
 *   lines it polls its own slots [p] until every peer's line carries the
 *   flag (bounded by the watchdog, which names the first missing rank),
 *   clears those lines to 0, folds x[0..W-1] in rank order (its own x from
 *   its input, not a round trip) and writes the output. A line validates
 *   itself (payload and flag in one 64-bit atom), so there is no fence,
 *   release or acquire: the critical path is one store and one poll.
 *   Reuse of a parity buffer: a peer q writes my parity b in call s and
 *   next in call s + 2 (or later). q's call s + 2 starts after q's call
 *   s + 1 finished (stream order), and in call s + 1 q waited for lines (or
 *   flags, on another path) that I only write in my call s + 1, which starts
 *   after my call s finished -- its reads and its clears of parity b
 *   included. So q's call-s+2 stores reach parity b after my call s is done
 *   with it; no end barrier. Relied on: a finished kernel's loads returned
 *   and its stores are performed (at the home of the memory: my own L2 for
 *   my area) before the next kernel of its stream starts, and stores that q
 *   issues after observing a store of my later kernel are ordered after
 *   them (causality through that observation, as NCCL's LL assumes).
 *   Stale lines cannot match: after each call the owner has cleared every
 *   line it read (every line any peer wrote: all ranks use the same count),
 *   so between calls every line is 0, and flags are never 0 (low 32 bits of
 *   s, 0 taken as 1; same-parity calls s and s + 2 differ there too). A
 *   peer that is already in call s + 1 writes the other parity.
 *   In place (send == recv) is safe: a thread reads input line i in both
 *   phases before it writes output line i, and no other thread or rank
 *   reads that line of the user's buffers.
 * All evaluate the same per-element expression (dc_fold_w), so they agree
 * bit for bit. Kernels are instantiated per dtype, world (2, 4, 8 or any)
 * and flag scope. */
#include "dc_device.cuh"

template <class D, int NW, bool SYS>
__global__ void DC_KERNEL_BOUNDS dc_ar_one_shot(dc_kargs a) {
  typedef typename D::T T;
  __shared__ dc_block sh;
  if (!dc_begin(a, &sh)) return;
  const uint64_t s = sh.seq;
  const uint64_t lo = blockIdx.x * a.per;
  const uint64_t len = min(a.n - lo, a.per);
  const uint64_t off = lo * sizeof(T);
  dc_copy(dc_frame(a, a.rank, s) + off, a.in + off, len * sizeof(T));
  dc_signal<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, 0);
  if (!dc_wait<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, 0, &sh)) return;
  dc_reduce<D, NW>(a, s, off, len, reinterpret_cast<T *>(a.out) + lo, nullptr);
}

/* Sub-range lo..lo+per of slice p, clipped to the slice and the buffer. */
__device__ __forceinline__ void dc_ar_sub(const dc_kargs &a, int p, uint64_t lo, uint64_t *start,
                                          uint64_t *len) {
  const uint64_t base = (uint64_t)p * a.slice;
  const uint64_t st = base + lo;
  const uint64_t end = min(base + min(lo + a.per, a.slice), a.n);
  *start = st;
  *len = st < end ? end - st : 0;
}

template <class D, int NW, bool SYS>
__global__ void DC_KERNEL_BOUNDS dc_ar_two_shot(dc_kargs a) {
  typedef typename D::T T;
  __shared__ dc_block sh;
  if (!dc_begin(a, &sh)) return;
  const int world = NW ? NW : a.world;
  const uint64_t s = sh.seq, e = sizeof(T);
  const uint64_t lo = blockIdx.x * a.per;
  char *mine = dc_frame(a, a.rank, s);
  uint64_t st, len;
  for (int p = 0; p < world; p++) {
    dc_ar_sub(a, p, lo, &st, &len);
    dc_copy(mine + st * e, a.in + st * e, len * e);
  }
  dc_signal<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, 0);
  if (!dc_wait<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, 0, &sh)) return;
  dc_ar_sub(a, a.rank, lo, &st, &len);
  dc_reduce<D, NW>(a, s, st * e, len, reinterpret_cast<T *>(a.out) + st, mine);
  dc_signal<SYS>(a, DC_FLAG_REDUCED, blockIdx.x, s, 0);
  if (!dc_wait<SYS>(a, DC_FLAG_REDUCED, blockIdx.x, s, 0, &sh)) return;
  for (int p = 0; p < world; p++) {
    if (p == a.rank) continue;
    dc_ar_sub(a, p, lo, &st, &len);
    dc_copy(a.out + st * e, dc_frame(a, p, s) + st * e, len * e);
  }
}

/* Input line i (8 bytes, elements i * K ..) of a push call; elements past
 * the end read as 0 (never written out). in8: input 8-byte aligned. */
template <class D>
__device__ __forceinline__ uint2 dc_push_in(const dc_kargs &a, uint64_t i, bool in8) {
  typedef typename D::T T;
  constexpr int K = 8 / sizeof(T);
  const uint64_t e0 = i * K;
  const T *in = reinterpret_cast<const T *>(a.in);
  dc_vec_w<D, uint2> v;
  if (in8 && e0 + K <= a.n) {
    v.u = *reinterpret_cast<const uint2 *>(in + e0);
  } else {
#pragma unroll
    for (int j = 0; j < K; j++) v.e[j] = e0 + j < a.n ? in[e0 + j] : T(0);
  }
  return v.u;
}

template <class D, int NW, bool SYS>
__global__ void DC_KERNEL_BOUNDS dc_ar_push(dc_kargs a) {
  typedef typename D::T T;
  constexpr int MW = NW ? NW : DC_MAX_WORLD;
  constexpr int K = 8 / sizeof(T);
  __shared__ dc_block sh;
  if (!dc_begin(a, &sh)) return;
  const int world = NW ? NW : a.world;
  const uint64_t s = sh.seq, flag = dc_push_flag(s);
  const uint64_t nlines = (a.n + K - 1) / K;
  const uint64_t step = (uint64_t)gridDim.x * blockDim.x;
  const uint64_t first = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const bool in8 = ((uintptr_t)a.in & 7) == 0, out8 = ((uintptr_t)a.out & 7) == 0;
  const uint64_t line_off = 2 * a.frame_bytes + (s & 1) * (uint64_t)a.world * DC_PUSH_SLOT_BYTES;
  /* Phase 1: my lines into slot [my rank] of every peer. */
  const uint64_t my_slot = line_off + (uint64_t)a.rank * DC_PUSH_SLOT_BYTES;
  for (uint64_t i = first; i < nlines; i += step) {
    const uint2 v = dc_push_in<D>(a, i, in8);
    const uint64_t a0 = flag | v.x, a1 = flag | v.y;
#pragma unroll
    for (int p = 0; p < MW; p++)
      if ((NW || p < world) && p != a.rank) dc_push_st<SYS>(a.stage[p] + my_slot + i * DC_PUSH_LINE_BYTES, a0, a1);
  }
  /* Phase 2: every peer's line i from my own area, then fold and write. */
  char *const mine = a.stage[a.rank] + line_off;
  T *const out = reinterpret_cast<T *>(a.out);
  uint64_t since = 0, seen = 0;
  bool timing = false;
  for (uint64_t i = first; i < nlines; i += step) {
    uint2 x[MW];
    unsigned pending = 0;
    const uint2 own = dc_push_in<D>(a, i, in8);
#pragma unroll
    for (int p = 0; p < MW; p++) {
      if (p == a.rank) x[p] = own;
      else if (NW || p < world) pending |= 1u << p;
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
    dc_vec_w<D, uint2> r;
    r.u = dc_fold_w<D, NW, uint2>(x, world);
    const uint64_t e0 = i * K;
    if (out8 && e0 + K <= a.n) {
      *reinterpret_cast<uint2 *>(out + e0) = r.u;
    } else {
#pragma unroll
      for (int j = 0; j < K; j++)
        if (e0 + j < a.n) out[e0 + j] = r.e[j];
    }
  }
}

typedef void (*dc_ar_fn)(dc_kargs);

/* [kind: one-shot, two-shot, push][dtype][world class: 2, 4, 8, any][sys] */
#define DC_AR_D(K, D) {{K<D, 2, false>, K<D, 2, true>}, {K<D, 4, false>, K<D, 4, true>}, \
                       {K<D, 8, false>, K<D, 8, true>}, {K<D, 0, false>, K<D, 0, true>}}
static dc_ar_fn const dc_ar_kernels[3][DC_DTYPE_COUNT][4][2] = {
    {DC_AR_D(dc_ar_one_shot, dc_t_bf16), DC_AR_D(dc_ar_one_shot, dc_t_fp16),
     DC_AR_D(dc_ar_one_shot, dc_t_fp32)},
    {DC_AR_D(dc_ar_two_shot, dc_t_bf16), DC_AR_D(dc_ar_two_shot, dc_t_fp16),
     DC_AR_D(dc_ar_two_shot, dc_t_fp32)},
    {DC_AR_D(dc_ar_push, dc_t_bf16), DC_AR_D(dc_ar_push, dc_t_fp16), DC_AR_D(dc_ar_push, dc_t_fp32)},
};
#define DC_AR_KINDS (sizeof(dc_ar_kernels) / sizeof(dc_ar_kernels[0]))

static int dc_world_class(int world) { return world == 2 ? 0 : world == 4 ? 1 : world == 8 ? 2 : 3; }

cudaError_t dc_launch_all_reduce(const dc_kargs *a, dc_path path, dc_dtype dtype, int sys, int grid,
                                 int threads, cudaStream_t st) {
  const int kind = path == DC_PATH_TWO_SHOT ? 1 : path == DC_PATH_PUSH ? 2 : 0;
  dc_ar_fn k = dc_ar_kernels[kind][dtype][dc_world_class(a->world)][sys != 0];
  void *args[] = {(void *)a};
  return cudaLaunchKernel((const void *)k, dim3(grid), dim3(threads), args, 0, st);
}

cudaError_t dc_occupancy_all_reduce(int threads, int *blocks_per_sm) {
  int best = 1 << 30;
  for (int i = 0; i < (int)DC_AR_KINDS * DC_DTYPE_COUNT * 4 * 2; i++) {
    int n = 0;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &n, (const void *)(&dc_ar_kernels[0][0][0][0])[i], threads, 0);
    if (e != cudaSuccess) return e;
    if (n < best) best = n;
  }
  *blocks_per_sm = best;
  return cudaSuccess;
}
