/* dc_pipe.cu: the pipeline path (DC_PATH_PIPELINE) of all_gather and
 * all_reduce, for large messages in buffers that are not registered. The
 * staging copy and the peer reads run at once instead of one after the
 * other: the message is cut into pieces (a.per elements; all_reduce: of
 * each two-shot slice), handed on through progress counters (flag kinds
 * PIPE_STAGED and PIPE_REDUCED, words DC_PIPE_PROGRESS(s, pieces done)).
 * Per piece:
 * - stage: copy the input into the rank's frame (all_gather: also into the
 *   rank's own place of recv), then raise the counter in every rank
 *   (all_reduce: itself too);
 * - fold (all_reduce, the rank's own slice): once every rank staged the
 *   piece, fold it from every frame in rank order (dc_reduce: the same
 *   expression as every other path) into recv and back into the own frame,
 *   then raise the counter in every peer;
 * - read: once the peer's counter says so, copy the peer's piece (staged
 *   input; all_reduce: its reduced slice) from its frame into recv.
 * Two plans (dc_plan_pipe):
 * - roles (a.pipe_s > 0): a.pipe_s stager blocks, a.pipe_r reducer blocks,
 *   the rest readers. Piece u of a role with m blocks belongs to block
 *   u % m, its (u / m + 1)-th, so a waiter knows which counter to read and
 *   what value to wait for.
 * - interleaved (a.pipe_s == 0): block b takes pieces b, b + G, ... and at
 *   step i stages its piece i, folds its piece i - 1 and reads its piece
 *   i - 1 (all_gather) or i - 2 (all_reduce) of every peer; the counters are
 *   per block row, the same piece on every rank.
 * Every wait is on work that comes earlier in the waited block's order, and
 * every block is resident, so nothing waits forever. Frame reuse
 * (dc_device.cuh) holds: every call has blocks that wait on every peer's
 * progress of this call. */
#include "dc_device.cuh"

/* Block roles: index within the role and the role's block count; index -1
 * when the block does not play it. */
struct dc_pipe_roles {
  int stager, reducer, reader;
  int nstage, nreduce, nread;
};

__device__ __forceinline__ dc_pipe_roles dc_pipe_roles_of(const dc_kargs &a) {
  const int g = (int)gridDim.x, b = (int)blockIdx.x;
  dc_pipe_roles r;
  r.nstage = (int)a.pipe_s;
  r.nreduce = (int)a.pipe_r;
  r.nread = g - r.nstage - r.nreduce;
  r.stager = b < r.nstage ? b : -1;
  r.reducer = b >= r.nstage && b < r.nstage + r.nreduce ? b - r.nstage : -1;
  r.reader = b >= r.nstage + r.nreduce ? b - r.nstage - r.nreduce : -1;
  return r;
}

/* Wait until block (u % m) of every rank in `who` has done its (u / m + 1)
 * pieces of kind, for call s. */
template <bool SYS>
__device__ __forceinline__ int dc_pipe_wait(const dc_kargs &a, int kind, uint64_t u, int m, uint64_t s,
                                            unsigned who, dc_block *sh) {
  return dc_wait_for<SYS>(a, kind, (int)(u % (uint64_t)m), DC_PIPE_PROGRESS(s, u / (uint64_t)m + 1), who,
                          sh);
}

/* Peer of reader unit g: the ranks after mine in turn, so ranks spread
 * over links. */
__device__ __forceinline__ int dc_pipe_peer(const dc_kargs &a, int world, uint64_t g) {
  return (a.rank + 1 + (int)(g % (uint64_t)(world - 1))) % world;
}

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
  if (a.pipe_s == 0) {
    /* Interleaved: step i stages my piece b + i G, then reads the peers'
     * piece of step i - 1 (staged by their block b at their step i - 1). */
    const uint64_t g = gridDim.x, b = blockIdx.x;
    for (uint64_t i = 0; b + (i ? i - 1 : 0) * g < pieces; i++) {
      if (b + i * g < pieces) {
        dc_ag_stage(a, mine, b + i * g);
        dc_signal<SYS>(a, DC_FLAG_PIPE_STAGED, (int)b, DC_PIPE_PROGRESS(s, i + 1), 0);
      }
      if (i == 0) continue;
      for (int k = 1; k < world; k++) {
        const int p = (a.rank + k) % world;
        if (!dc_wait_for<SYS>(a, DC_FLAG_PIPE_STAGED, (int)b, DC_PIPE_PROGRESS(s, i), 1u << p, &sh)) return;
        dc_ag_read(a, p, s, b + (i - 1) * g);
      }
    }
    return;
  }
  const dc_pipe_roles r = dc_pipe_roles_of(a);
  if (r.stager >= 0) {
    uint64_t t = 0;
    for (uint64_t c = r.stager; c < pieces; c += r.nstage) {
      dc_ag_stage(a, mine, c);
      dc_signal<SYS>(a, DC_FLAG_PIPE_STAGED, r.stager, DC_PIPE_PROGRESS(s, ++t), 0);
    }
  }
  if (r.reader < 0 || world < 2) return;
  for (uint64_t g = r.reader; g < pieces * (world - 1); g += r.nread) {
    const uint64_t c = g / (world - 1);
    const int p = dc_pipe_peer(a, world, g);
    if (!dc_pipe_wait<SYS>(a, DC_FLAG_PIPE_STAGED, c, r.nstage, s, 1u << p, &sh)) return;
    dc_ag_read(a, p, s, c);
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
  if (a.pipe_s == 0) {
    /* Interleaved: step i stages piece b + i G of every slice, folds my
     * slice's piece of step i - 1 and reads the peers' reduced pieces of
     * step i - 2 (their block b's work at those steps). */
    const uint64_t g = gridDim.x, b = blockIdx.x;
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
        const int p = (a.rank + k) % world;
        if (!dc_wait_for<SYS>(a, DC_FLAG_PIPE_REDUCED, (int)b, DC_PIPE_PROGRESS(s, i - 1), 1u << p, &sh))
          return;
        P::read(a, p, s, b + (i - 2) * g);
      }
    }
    return;
  }
  const dc_pipe_roles r = dc_pipe_roles_of(a);
  if (r.stager >= 0) {
    /* Unit u: piece u / world of slice u % world, so the first pieces of
     * every slice are staged first. */
    uint64_t t = 0;
    for (uint64_t u = r.stager; u < pieces * world; u += r.nstage) {
      P::stage(a, mine, (int)(u % world), u / world);
      dc_signal<SYS>(a, DC_FLAG_PIPE_STAGED, r.stager, DC_PIPE_PROGRESS(s, ++t), 1);
    }
  }
  if (r.reducer >= 0) {
    uint64_t t = 0;
    for (uint64_t k = r.reducer; k < pieces; k += r.nreduce) {
      if (!dc_pipe_wait<SYS>(a, DC_FLAG_PIPE_STAGED, k * world + a.rank, r.nstage, s, all, &sh)) return;
      P::fold(a, mine, s, k);
      dc_signal<SYS>(a, DC_FLAG_PIPE_REDUCED, r.reducer, DC_PIPE_PROGRESS(s, ++t), 0);
    }
  }
  if (r.reader < 0 || world < 2) return;
  for (uint64_t g = r.reader; g < pieces * (world - 1); g += r.nread) {
    const uint64_t k = g / (world - 1);
    const int p = dc_pipe_peer(a, world, g);
    if (!dc_pipe_wait<SYS>(a, DC_FLAG_PIPE_REDUCED, k, r.nreduce, s, 1u << p, &sh)) return;
    P::read(a, p, s, k);
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
