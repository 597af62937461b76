/* dc_pipe.cu: the pipeline path (DC_PATH_PIPELINE) of all_gather and
 * all_reduce, for large messages in buffers that are not registered. The
 * staging copy and the peer reads run at once instead of one after the
 * other: the grid is split into roles that hand pieces of the message on
 * through progress counters (flag kinds PIPE_STAGED and PIPE_REDUCED, words
 * DC_PIPE_PROGRESS(s, pieces done)).
 * - Stagers (a.pipe_s blocks) copy the input into the rank's frame, one
 *   piece after another, and after each piece raise their counter in every
 *   rank (all_reduce: themselves too). all_gather's stagers also copy the
 *   piece into the rank's own place of recv.
 * - all_reduce's reducers (a.pipe_r blocks) take the pieces of the rank's
 *   own slice (two-shot slices): once every rank staged a piece, they fold it
 *   from every frame in rank order (dc_reduce: the same expression as every
 *   other path) into recv and back into the own frame, then raise their
 *   counter in every peer.
 * - Readers (the other blocks) copy each peer's pieces, as soon as that
 *   peer's counter says so, from its frame into recv: staged input for
 *   all_gather, reduced slices for all_reduce.
 * Piece u of a role with m blocks belongs to block u % m, its (u / m + 1)-th,
 * so a waiter knows which counter to read and what value to wait for. Roles
 * only wait on roles before them (readers on reducers or stagers, reducers
 * on stagers, stagers on nobody), and every block is resident, so nothing
 * waits forever. A grid too small for disjoint roles (pipe_s == grid) gives
 * every block every role, played in that order; its stagers then signal
 * once, when all their pieces are staged (nobody reads before).
 * Frame reuse (dc_device.cuh) holds: every call has blocks that wait on every
 * peer's progress of this call. */
#include "dc_device.cuh"

/* Block roles: index within the role and the role's block count; index -1
 * when the block does not play it. */
struct dc_pipe_roles {
  int stager, reducer, reader;
  int nstage, nreduce, nread;
  bool shared; /* every block plays every role */
};

__device__ __forceinline__ dc_pipe_roles dc_pipe_roles_of(const dc_kargs &a) {
  const int g = (int)gridDim.x, b = (int)blockIdx.x;
  dc_pipe_roles r;
  r.shared = (int)a.pipe_s >= g;
  if (r.shared) {
    r.stager = r.reader = b;
    r.reducer = a.pipe_r ? b : -1;
    r.nstage = r.nread = g;
    r.nreduce = a.pipe_r ? g : 0;
    return r;
  }
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

template <bool SYS>
__global__ void DC_KERNEL_BOUNDS dc_ag_pipe(dc_kargs a) {
  __shared__ dc_block sh;
  if (!dc_begin(a, &sh)) return;
  const dc_pipe_roles r = dc_pipe_roles_of(a);
  const uint64_t s = sh.seq, n = a.n, per = a.per, pieces = (n + per - 1) / per;
  char *const mine = dc_frame(a, a.rank, s), *const own = a.out + (uint64_t)a.rank * n;
  if (r.stager >= 0) {
    uint64_t t = 0;
    for (uint64_t c = r.stager; c < pieces; c += r.nstage) {
      const uint64_t lo = c * per, len = min(n - lo, per);
      dc_copy(mine + lo, a.in + lo, len);
      if (own != a.in) dc_copy(own + lo, a.in + lo, len);
      ++t;
      if (!r.shared || c + r.nstage >= pieces)
        dc_signal<SYS>(a, DC_FLAG_PIPE_STAGED, r.stager, DC_PIPE_PROGRESS(s, t), 0);
    }
  }
  if (r.reader < 0 || a.world < 2) return;
  for (uint64_t g = r.reader; g < pieces * (a.world - 1); g += r.nread) {
    const uint64_t c = g / (a.world - 1);
    const int p = dc_pipe_peer(a, a.world, g);
    if (!dc_pipe_wait<SYS>(a, DC_FLAG_PIPE_STAGED, c, r.nstage, s, 1u << p, &sh)) return;
    const uint64_t lo = c * per, len = min(n - lo, per);
    dc_copy(a.out + (uint64_t)p * n + lo, dc_frame(a, p, s) + lo, len);
  }
}

template <class D, int NW, bool SYS>
__global__ void DC_KERNEL_BOUNDS dc_ar_pipe(dc_kargs a) {
  typedef typename D::T T;
  __shared__ dc_block sh;
  if (!dc_begin(a, &sh)) return;
  const int world = NW ? NW : a.world;
  const dc_pipe_roles r = dc_pipe_roles_of(a);
  const uint64_t s = sh.seq, e = sizeof(T), per = a.per, pieces = (a.slice + per - 1) / per;
  char *const mine = dc_frame(a, a.rank, s);
  uint64_t st, len;
  if (r.stager >= 0) {
    /* Unit u: piece u / world of slice u % world, so the first pieces of
     * every slice are staged first. */
    uint64_t t = 0;
    for (uint64_t u = r.stager; u < pieces * world; u += r.nstage) {
      dc_ar_sub(a, (int)(u % world), (u / world) * per, &st, &len);
      dc_copy(mine + st * e, a.in + st * e, len * e);
      ++t;
      if (!r.shared || u + r.nstage >= pieces * world)
        dc_signal<SYS>(a, DC_FLAG_PIPE_STAGED, r.stager, DC_PIPE_PROGRESS(s, t), 1);
    }
  }
  if (r.reducer >= 0) {
    uint64_t t = 0;
    for (uint64_t k = r.reducer; k < pieces; k += r.nreduce) {
      if (!dc_pipe_wait<SYS>(a, DC_FLAG_PIPE_STAGED, k * world + a.rank, r.nstage, s, (1u << world) - 1u,
                             &sh))
        return;
      dc_ar_sub(a, a.rank, k * per, &st, &len);
      dc_reduce<D, NW>(a, s, st * e, len, reinterpret_cast<T *>(a.out) + st, mine);
      dc_signal<SYS>(a, DC_FLAG_PIPE_REDUCED, r.reducer, DC_PIPE_PROGRESS(s, ++t), 0);
    }
  }
  if (r.reader < 0 || world < 2) return;
  for (uint64_t g = r.reader; g < pieces * (world - 1); g += r.nread) {
    const uint64_t k = g / (world - 1);
    const int p = dc_pipe_peer(a, world, g);
    if (!dc_pipe_wait<SYS>(a, DC_FLAG_PIPE_REDUCED, k, r.nreduce, s, 1u << p, &sh)) return;
    dc_ar_sub(a, p, k * per, &st, &len);
    dc_copy(a.out + st * e, dc_frame(a, p, s) + st * e, len * e);
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
