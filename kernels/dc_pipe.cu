/* dc_pipe.cu: the pipeline path (DC_PATH_PIPELINE) of all_gather and
 * all_reduce, for large messages in buffers that are not registered. The
 * staging copy and the peer reads run at once instead of one after the
 * other: the message is cut into pieces (a.per elements; all_reduce: of
 * each two-shot slice) handed on through progress counters (flag kinds
 * PIPE_STAGED and PIPE_REDUCED, words DC_PIPE_PROGRESS(s, steps done)).
 * Block b takes pieces b, b + G, ... (G blocks) and at step i
 * - stages its piece i: copies the input into the rank's frame
 *   (all_gather: also into the rank's own place of recv; all_reduce: the
 *   piece of every slice), then raises its counter in every rank
 *   (all_reduce: itself too);
 * - all_reduce: folds its piece i - 1 of the rank's own slice, once block b
 *   of every rank staged it, from every frame in rank order (dc_reduce: the
 *   same expression as every other path) into recv and back into the own
 *   frame, then raises its second counter in every peer;
 * - reads its piece i - 1 (all_gather: staged input) or i - 2 (all_reduce:
 *   reduced slices) of every peer, once that peer's block b says so, from
 *   the peer's frame into recv.
 * So while some blocks copy locally, the others read over the link. Every
 * wait is on a step that comes earlier in the waited block's order, and
 * every block is resident, so nothing waits forever. On two H200s at 256
 * MiB per rank this interleaving beat a split into stager and reader blocks
 * for all_gather (842 us against 857-1000 with a quarter or 40% stagers)
 * and matched it within 1% for all_reduce (docs/measurements.md).
 * Frame reuse (dc_device.cuh) holds: every call has blocks that wait on
 * every peer's progress of this call. */
#include "dc_device.cuh"

/* all_gather piece c: into my frame and my own place of recv. */
__device__ __forceinline__ void dc_ag_stage(const dc_kargs &a, char *mine, uint64_t c) {
  const uint64_t n = a.n, lo = c * a.per, len = min(n - lo, a.per);
  char *const own = a.out + (uint64_t)a.rank * n;
  dc_copy(mine + lo, a.in + lo, len);
  if (own != a.in) dc_copy(own + lo, a.in + lo, len);
}

/* all_gather piece c of peer p, from its frame into recv. */
__device__ __forceinline__ void dc_ag_read(const dc_kargs &a, int p, uint64_t s, uint64_t c) {
  const uint64_t n = a.n, lo = c * a.per, len = min(n - lo, a.per);
  dc_copy(a.out + (uint64_t)p * n + lo, dc_frame(a, p, s) + lo, len);
}

template <bool SYS>
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
      dc_ag_stage(a, mine, b + i * g);
      dc_signal<SYS>(a, DC_FLAG_PIPE_STAGED, (int)b, DC_PIPE_PROGRESS(s, i + 1), 0);
    }
    if (i == 0) continue;
    for (int k = 1; k < world; k++) {
      const int p = (a.rank + k) % world; /* ranks spread over links */
      if (!dc_wait_for<SYS>(a, DC_FLAG_PIPE_STAGED, (int)b, DC_PIPE_PROGRESS(s, i), 1u << p, &sh)) return;
      dc_ag_read(a, p, s, b + (i - 1) * g);
    }
  }
}

/* all_reduce, piece k of slice p: stage it into my frame; fold it (slice p
 * = mine) from every frame into recv and my frame; read it (a peer's
 * reduced slice) from its owner's frame into recv. */
template <class D, int NW>
struct dc_ar_piece {
  typedef typename D::T T;
  static __device__ __forceinline__ void stage(const dc_kargs &a, char *mine, int p, uint64_t k) {
    uint64_t st, len;
    dc_ar_sub(a, p, k * a.per, &st, &len);
    dc_copy(mine + st * sizeof(T), a.in + st * sizeof(T), len * sizeof(T));
  }
  static __device__ __forceinline__ void fold(const dc_kargs &a, char *mine, uint64_t s, uint64_t k) {
    uint64_t st, len;
    dc_ar_sub(a, a.rank, k * a.per, &st, &len);
    dc_reduce<D, NW>(a, s, st * sizeof(T), len, reinterpret_cast<T *>(a.out) + st, mine);
  }
  static __device__ __forceinline__ void read(const dc_kargs &a, int p, uint64_t s, uint64_t k) {
    uint64_t st, len;
    dc_ar_sub(a, p, k * a.per, &st, &len);
    dc_copy(a.out + st * sizeof(T), dc_frame(a, p, s) + st * sizeof(T), len * sizeof(T));
  }
};

template <class D, int NW, bool SYS>
__global__ void DC_KERNEL_BOUNDS dc_ar_pipe(dc_kargs a) {
  typedef dc_ar_piece<D, NW> P;
  __shared__ dc_block sh;
  if (!dc_begin(a, &sh)) return;
  const int world = NW ? NW : a.world;
  const unsigned all = (1u << world) - 1u;
  const uint64_t s = sh.seq, pieces = (a.slice + a.per - 1) / a.per;
  char *const mine = dc_frame(a, a.rank, s);
  const uint64_t g = gridDim.x, b = blockIdx.x;
  /* Step i stages piece b + i G of every slice, folds my slice's piece of
   * step i - 1 and reads the peers' reduced pieces of step i - 2 (their
   * block b's work at those steps). */
  for (uint64_t i = 0; b + (i > 1 ? i - 2 : 0) * g < pieces; i++) {
    if (b + i * g < pieces) {
      for (int p = 0; p < world; p++) P::stage(a, mine, p, b + i * g);
      dc_signal<SYS>(a, DC_FLAG_PIPE_STAGED, (int)b, DC_PIPE_PROGRESS(s, i + 1), 1);
    }
    if (i >= 1 && b + (i - 1) * g < pieces) {
      if (!dc_wait_for<SYS>(a, DC_FLAG_PIPE_STAGED, (int)b, DC_PIPE_PROGRESS(s, i), all, &sh)) return;
      P::fold(a, mine, s, b + (i - 1) * g);
      dc_signal<SYS>(a, DC_FLAG_PIPE_REDUCED, (int)b, DC_PIPE_PROGRESS(s, i), 0);
    }
    if (i < 2) continue;
    for (int k = 1; k < world; k++) {
      const int p = (a.rank + k) % world; /* ranks spread over links */
      if (!dc_wait_for<SYS>(a, DC_FLAG_PIPE_REDUCED, (int)b, DC_PIPE_PROGRESS(s, i - 1), 1u << p, &sh))
        return;
      P::read(a, p, s, b + (i - 2) * g);
    }
  }
}

typedef void (*dc_pipe_fn)(dc_kargs);

#define DC_PIPE_W(D)                                                                  \
  {                                                                                   \
    {dc_ar_pipe<D, 2, false>, dc_ar_pipe<D, 2, true>},                                \
        {dc_ar_pipe<D, 4, false>, dc_ar_pipe<D, 4, true>},                            \
        {dc_ar_pipe<D, 8, false>, dc_ar_pipe<D, 8, true>}, {                          \
      dc_ar_pipe<D, 0, false>, dc_ar_pipe<D, 0, true>                                 \
    }                                                                                 \
  }
/* all_reduce: [dtype][world class][sys]. */
static dc_pipe_fn const dc_ar_pipe_k[DC_DTYPE_COUNT][4][2] = {DC_PIPE_W(dc_t_bf16), DC_PIPE_W(dc_t_fp16),
                                                              DC_PIPE_W(dc_t_fp32)};
static dc_pipe_fn const dc_ag_pipe_k[2] = {dc_ag_pipe<false>, dc_ag_pipe<true>};

cudaError_t dc_launch_pipe(const dc_kargs *a, dc_op op, dc_dtype dtype, int sys, int grid, int threads,
                           cudaStream_t st) {
  dc_pipe_fn k = op == DC_OP_ALL_GATHER ? dc_ag_pipe_k[sys != 0]
                                        : dc_ar_pipe_k[dtype][dc_world_class(a->world)][sys != 0];
  void *args[] = {(void *)a};
  return cudaLaunchKernel((const void *)k, dim3(grid), dim3(threads), args, 0, st);
}

cudaError_t dc_occupancy_pipe(int threads, int *blocks_per_sm) {
  int a = 0, b = 0;
  cudaError_t e;
  if ((e = dc_occupancy_of((const void *const *)&dc_ar_pipe_k[0][0][0],
                           (int)(sizeof(dc_ar_pipe_k) / sizeof(dc_pipe_fn)), threads, &a)) != cudaSuccess ||
      (e = dc_occupancy_of((const void *const *)dc_ag_pipe_k, 2, threads, &b)) != cudaSuccess)
    return e;
  *blocks_per_sm = a < b ? a : b;
  return cudaSuccess;
}
