/* dc_pipe.cu: the pipeline path (DC_PATH_PIPELINE) of all_gather and
 * all_reduce, for large messages in buffers that are not registered. The
 * copies through the frames and the transfers over the link run at once
 * instead of one after the other: the message is cut into pieces (a.per
 * elements; all_reduce: of each two-shot slice) handed on through progress
 * counters (flag kinds PIPE_STAGED and PIPE_REDUCED, words
 * DC_PIPE_PROGRESS(s, steps done)). Block b takes pieces b, b + G, ... (G
 * blocks) and at step i
 * - stages its piece i (all_gather: also into the rank's own place of
 *   recv; all_reduce: the piece of every slice), then raises its counter in
 *   every peer (pull all_reduce: itself too);
 * - all_reduce: folds its piece i - 1 of the rank's own slice, once block b
 *   of every rank staged it, in rank order (the same fold as every other
 *   path) into recv, then raises its second counter in every peer;
 * - reads its piece i - 1 (all_gather: staged input) or i - 2 (all_reduce:
 *   reduced slices) of every peer, once that peer's block b says so, into
 *   recv.
 * Two forms of the same steps, chosen per call by the host:
 * - pull: staging copies the input into the rank's own frame; the fold
 *   reads every frame and writes back into the own one; peers read there.
 * - push (two ranks, when its slots fit in a frame): staging writes each
 *   piece straight into the slot of the receiving peer's frame
 *   (all_gather: every peer, all_reduce: the slice's owner); the fold
 *   reads my own part from send and the peers' from my slots, and writes
 *   its result into my slot of every peer's frame; the read copies out of
 *   my own frame. So nothing is copied locally just to be read across the
 *   link, and every transfer over the link is a store:
 *   on two H200s an SM push moves 364.5 GB/s both ways, a pull 335.2
 *   (bench --p2p, docs/measurements.md).
 * While some blocks copy locally, the others move data over the link. Every
 * wait is on a step that comes earlier in the waited block's order, and
 * every block is resident, so nothing waits forever. On two H200s at 256
 * MiB per rank the pull form's interleaving beat a split into stager and
 * reader blocks for all_gather (842 us against 857-1000 with a quarter or
 * 40% stagers) and matched it within 1% for all_reduce.
 * Frame reuse (dc_device.cuh) holds for both forms: every call has blocks
 * that wait on every peer's progress of this call, so a peer's call s + 2,
 * which writes (push) or is read from (pull) frame s & 1 again, starts
 * after this rank's call s ended. */
#include "dc_device.cuh"

/* Push form: the slot, 0 .. world - 2, of sender q's data in rank r's
 * frame. */
__device__ __forceinline__ uint64_t dc_pipe_slot(int q, int r, int world) {
  return (uint64_t)((q - r - 1 + world) % world);
}

/* all_gather push form: where sender q's chunk starts in rank r's frame
 * (slots of n bytes rounded up to 16). */
__device__ __forceinline__ uint64_t dc_ag_slot(const dc_kargs &a, int q, int r) {
  return dc_pipe_slot(q, r, a.world) * ((a.n + 15) & ~15ull);
}

/* all_gather piece c. Pull: stage into my frame (peers read it there).
 * Push: write it into my slot of every peer's frame. Both: copy it into
 * my own place of recv. */
template <bool PUSH>
__device__ __forceinline__ void dc_ag_stage(const dc_kargs &a, char *mine, uint64_t s, uint64_t c) {
  const uint64_t n = a.n, lo = c * a.per, len = min(n - lo, a.per);
  char *const own = a.out + (uint64_t)a.rank * n;
  if (PUSH) {
    for (int k = 1; k < a.world; k++) {
      const int p = (a.rank + k) % a.world; /* ranks spread over links */
      dc_copy(dc_frame(a, p, s) + dc_ag_slot(a, a.rank, p) + lo, a.in + lo, len);
    }
  } else {
    dc_copy(mine + lo, a.in + lo, len);
  }
  if (own != a.in) dc_copy(own + lo, a.in + lo, len);
}

/* all_gather piece c of peer p into recv: from its frame (pull) or from its
 * slot of mine (push). */
template <bool PUSH>
__device__ __forceinline__ void dc_ag_read(const dc_kargs &a, const char *mine, int p, uint64_t s,
                                           uint64_t c) {
  const uint64_t n = a.n, lo = c * a.per, len = min(n - lo, a.per);
  const char *src = PUSH ? mine + dc_ag_slot(a, p, a.rank) : dc_frame(a, p, s);
  dc_copy(a.out + (uint64_t)p * n + lo, src + lo, len);
}

template <bool SYS, bool PUSH>
__global__ void DC_KERNEL_BOUNDS dc_ag_pipe(dc_kargs a) {
  __shared__ dc_block sh;
  if (!dc_begin(a, &sh)) return;
  const int world = a.world;
  const uint64_t s = sh.seq, pieces = (a.n + a.per - 1) / a.per;
  char *const mine = dc_frame(a, a.rank, s);
  const uint64_t g = gridDim.x, b = blockIdx.x;
  /* Step i stages my piece b + i G, then reads the peers' piece of step
   * i - 1 (staged by their block b at their step i - 1). */
  for (uint64_t i = 0; b + (i ? i - 1 : 0) * g < pieces; i++) {
    if (b + i * g < pieces) {
      dc_ag_stage<PUSH>(a, mine, s, b + i * g);
      dc_signal<SYS>(a, DC_FLAG_PIPE_STAGED, (int)b, DC_PIPE_PROGRESS(s, i + 1), 0);
    }
    if (i == 0) continue;
    for (int k = 1; k < world; k++) {
      const int p = (a.rank + k) % world; /* ranks spread over links */
      if (!dc_wait_for<SYS>(a, DC_FLAG_PIPE_STAGED, (int)b, DC_PIPE_PROGRESS(s, i), 1u << p, &sh))
        return;
      dc_ag_read<PUSH>(a, mine, p, s, b + (i - 1) * g);
    }
  }
}

/* all_reduce, piece k of slice p: stage it (pull: into my frame; push: into
 * my contribution slot of p's frame); fold it (slice p = mine) in rank
 * order into recv, and (pull) my frame or (push) my result slot of every
 * peer's frame; read it (a peer's reduced slice) into recv from its owner's
 * frame (pull) or its result slot of mine (push).
 * Push frame: world - 1 contribution slots, then world - 1 result slots,
 * each slice elements long (a multiple of 16 bytes); the host checks they
 * fit. The fold reads my part straight from send, as whole vectors when
 * send and recv are 16-byte aligned, else as dc_fold_srcs_any does. */
template <class D, int NW, bool PUSH>
struct dc_ar_piece {
  typedef typename D::T T;
  static __device__ __forceinline__ uint64_t slot(const dc_kargs &a, int q, int r, int result) {
    const int world = NW ? NW : a.world;
    return ((uint64_t)(result ? world - 1 : 0) + dc_pipe_slot(q, r, world)) * a.slice * sizeof(T);
  }
  static __device__ __forceinline__ void stage(const dc_kargs &a, char *mine, uint64_t s, int p,
                                               uint64_t k) {
    uint64_t st, len;
    dc_ar_sub(a, p, k * a.per, &st, &len);
    if (!PUSH)
      dc_copy(mine + st * sizeof(T), a.in + st * sizeof(T), len * sizeof(T));
    else if (p != a.rank)
      dc_copy(dc_frame(a, p, s) + slot(a, a.rank, p, 0) + (st - (uint64_t)p * a.slice) * sizeof(T),
              a.in + st * sizeof(T), len * sizeof(T));
  }
  static __device__ __forceinline__ void fold(const dc_kargs &a, char *mine, uint64_t s,
                                              uint64_t k) {
    constexpr int MW = NW ? NW : DC_MAX_WORLD;
    const int world = NW ? NW : a.world;
    uint64_t st, len;
    dc_ar_sub(a, a.rank, k * a.per, &st, &len);
    if (!PUSH) {
      dc_reduce<D, NW>(a, s, st * sizeof(T), len, reinterpret_cast<T *>(a.out) + st, mine);
      return;
    }
    const uint64_t rel = (st - (uint64_t)a.rank * a.slice) * sizeof(T), bytes = len * sizeof(T);
    const char *src[MW];
    char *dst[MW];
#pragma unroll
    for (int q = 0; q < MW; q++) {
      if (NW || q < world) {
        src[q] = q == a.rank ? a.in + st * sizeof(T) : mine + slot(a, q, a.rank, 0) + rel;
        dst[q] = q == a.rank ? nullptr : dc_frame(a, q, s) + slot(a, a.rank, q, 1) + rel;
      }
    }
    /* Whole vectors while send and recv are 16-byte aligned (so is every
     * piece: slice and per are multiples of 16 bytes), then the rest. */
    const uint64_t body = (((uintptr_t)a.in | (uintptr_t)a.out) & 15) == 0 ? bytes & ~15ull : 0;
    dc_fold_srcs<D, NW>(a, src, body, a.out + st * sizeof(T), dst);
#pragma unroll
    for (int q = 0; q < MW; q++) {
      if (NW || q < world) {
        src[q] += body;
        if (q != a.rank) dst[q] += body;
      }
    }
    dc_fold_srcs_any<D, NW>(a, src, (bytes - body) / sizeof(T), a.out + st * sizeof(T) + body, dst);
  }
  static __device__ __forceinline__ void read(const dc_kargs &a, const char *mine, int p,
                                              uint64_t s, uint64_t k) {
    uint64_t st, len;
    dc_ar_sub(a, p, k * a.per, &st, &len);
    const char *src = PUSH ? mine + slot(a, p, a.rank, 1) + (st - (uint64_t)p * a.slice) * sizeof(T)
                           : dc_frame(a, p, s) + st * sizeof(T);
    dc_copy(a.out + st * sizeof(T), src, len * sizeof(T));
  }
};

template <class D, int NW, bool SYS, bool PUSH>
__global__ void DC_KERNEL_BOUNDS dc_ar_pipe(dc_kargs a) {
  typedef dc_ar_piece<D, NW, PUSH> P;
  __shared__ dc_block sh;
  if (!dc_begin(a, &sh)) return;
  const int world = NW ? NW : a.world;
  /* The fold waits for every rank's staging (pull: mine too). */
  const unsigned stagers = ((1u << world) - 1u) & ~(PUSH ? 1u << a.rank : 0u);
  const uint64_t s = sh.seq, pieces = (a.slice + a.per - 1) / a.per;
  char *const mine = dc_frame(a, a.rank, s);
  const uint64_t g = gridDim.x, b = blockIdx.x;
  /* Step i stages piece b + i G of every slice, folds my slice's piece of
   * step i - 1 and reads the peers' reduced pieces of step i - 2 (their
   * block b's work at those steps). */
  for (uint64_t i = 0; b + (i > 1 ? i - 2 : 0) * g < pieces; i++) {
    if (b + i * g < pieces) {
      for (int p = 0; p < world; p++) P::stage(a, mine, s, p, b + i * g);
      dc_signal<SYS>(a, DC_FLAG_PIPE_STAGED, (int)b, DC_PIPE_PROGRESS(s, i + 1), !PUSH);
    }
    if (i >= 1 && b + (i - 1) * g < pieces) {
      if (!dc_wait_for<SYS>(a, DC_FLAG_PIPE_STAGED, (int)b, DC_PIPE_PROGRESS(s, i), stagers, &sh))
        return;
      P::fold(a, mine, s, b + (i - 1) * g);
      dc_signal<SYS>(a, DC_FLAG_PIPE_REDUCED, (int)b, DC_PIPE_PROGRESS(s, i), 0);
    }
    if (i < 2) continue;
    for (int k = 1; k < world; k++) {
      const int p = (a.rank + k) % world; /* ranks spread over links */
      if (!dc_wait_for<SYS>(a, DC_FLAG_PIPE_REDUCED, (int)b, DC_PIPE_PROGRESS(s, i - 1), 1u << p,
                            &sh))
        return;
      P::read(a, mine, p, s, b + (i - 2) * g);
    }
  }
}

typedef void (*dc_pipe_fn)(dc_kargs);

#define DC_PIPE_S(D, NW, PUSH)                                           \
  {                                                                      \
    {dc_ar_pipe<D, NW, false, false>, dc_ar_pipe<D, NW, false, PUSH>}, { \
      dc_ar_pipe<D, NW, true, false>, dc_ar_pipe<D, NW, true, PUSH>      \
    }                                                                    \
  }
#define DC_PIPE_W(D) \
  { DC_PIPE_S(D, 2, true), DC_PIPE_S(D, 4, false), DC_PIPE_S(D, 8, false), DC_PIPE_S(D, 0, false) }
/* all_reduce: [dtype][world class][sys][push] (push: two ranks only, see
 * dc_pipe_push). */
static dc_pipe_fn const dc_ar_pipe_k[DC_DTYPE_COUNT][4][2][2] = {
    DC_PIPE_W(dc_t_bf16), DC_PIPE_W(dc_t_fp16), DC_PIPE_W(dc_t_fp32)};
/* all_gather: [sys][push]. */
static dc_pipe_fn const dc_ag_pipe_k[2][2] = {{dc_ag_pipe<false, false>, dc_ag_pipe<false, true>},
                                              {dc_ag_pipe<true, false>, dc_ag_pipe<true, true>}};

/* The push form for two ranks when its slots fit in a frame; the pull
 * form otherwise. Every rank decides alike: world, sizes and frames are
 * the same everywhere, while pointers and their alignment may differ from
 * rank to rank, so they must not count (a pushing rank writes where a
 * pulling one stages). Only two: with more ranks every peer's piece costs one more local copy, and
 * on one H200's virtual ranks 8 ranks ran the push form 13-71% slower
 * (docs/results/2026-12-01-h200/call6); the 4- and 8-GPU machines, where the
 * link might pay for it, were not lent. */
static int dc_pipe_push(const dc_kargs *a, dc_op op, size_t esize) {
  const uint64_t peers = (uint64_t)a->world - 1;
  if (a->world != 2) return 0;
  if (op == DC_OP_ALL_GATHER) return peers * ((a->n + 15) & ~(uint64_t)15) <= a->frame_bytes;
  return 2 * peers * a->slice * esize <= a->frame_bytes;
}

cudaError_t dc_launch_pipe(const dc_kargs *a, dc_op op, dc_dtype dtype, int sys, int grid,
                           int threads, cudaStream_t st) {
  const int push = dc_pipe_push(a, op, dc_dtype_size(dtype));
  dc_pipe_fn k = op == DC_OP_ALL_GATHER
                     ? dc_ag_pipe_k[sys != 0][push]
                     : dc_ar_pipe_k[dtype][dc_world_class(a->world)][sys != 0][push];
  return dc_launch_kernel((const void *)k, grid, threads, a, st);
}

cudaError_t dc_occupancy_pipe(int threads, int *blocks_per_sm) {
  int a = 0, b = 0;
  cudaError_t e;
  if ((e = dc_occupancy_of((const void *const *)&dc_ar_pipe_k[0][0][0][0],
                           (int)(sizeof(dc_ar_pipe_k) / sizeof(dc_pipe_fn)), threads, &a)) !=
          cudaSuccess ||
      (e = dc_occupancy_of((const void *const *)&dc_ag_pipe_k[0][0],
                           (int)(sizeof(dc_ag_pipe_k) / sizeof(dc_pipe_fn)), threads, &b)) !=
          cudaSuccess)
    return e;
  *blocks_per_sm = a < b ? a : b;
  return cudaSuccess;
}
