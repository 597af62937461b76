/* dc_direct.cu: the paths that need registered buffers (dc_register_*):
 * peers' user buffers are read (and, for all_reduce, written) in place
 * through a.pin / a.pout, with no staging copy.
 * - all_gather direct: after the start meeting, the grid splits the whole
 *   output evenly (as multi-block does) and each block copies its part from
 *   the owning rank's send buffer.
 * - all_reduce direct: two-shot without frames. Rank r folds its slice
 *   (rank order, never rotated) from every rank's send buffer and writes the
 *   result into its own recv and every peer's recv.
 * - reduce_scatter direct: rank r folds slice r from every rank's send
 *   buffer into its recv.
 * - all_gather copy_engine: a one-block flag kernel meets every peer; the
 *   copy engine then pushes my chunk into every peer's recv, while the own
 *   chunk is copied on a side stream; a second flag kernel meets every peer
 *   again.
 * Start meeting (flag kind STAGED): every peer's call has begun, so its send
 * holds this call's input and its recv is free. End meeting (REDUCED):
 * every peer is done reading my send and writing my recv, so my call may
 * end and the user may touch them. Block b meets block b of every peer; a
 * rank's call ends once all its blocks met. The host has checked that every
 * piece is 16-byte aligned and a multiple of 16 bytes. */
#include "dc_device.cuh"

/* Both meetings of block row `row` for call s (dc_signal, then dc_wait). */
template <bool SYS>
__device__ __forceinline__ int dc_meet(const dc_kargs &a, int kind, int row, uint64_t s,
                                       dc_block *sh) {
  dc_signal<SYS>(a, kind, row, s, 0);
  return dc_wait<SYS>(a, kind, row, s, 0, sh);
}

template <bool SYS>
__global__ void DC_KERNEL_BOUNDS dc_ag_direct(dc_kargs a) {
  __shared__ dc_block sh;
  if (!dc_begin(a, &sh)) return;
  const uint64_t s = sh.seq, n = a.n, total = (uint64_t)a.world * n;
  if (!dc_meet<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, &sh)) return;
  const uint64_t olo = blockIdx.x * a.per_out;
  const uint64_t ohi = min(total, olo + a.per_out);
  for (uint64_t p = olo / n; p < (uint64_t)a.world && p * n < ohi; p++) {
    const uint64_t b = max(olo, p * n), e = min(ohi, (p + 1) * n);
    const char *src = a.pin[p] + (b - p * n);
    if (src != a.out + b) dc_copy_w<uint4>(a.out + b, src, e - b);
  }
  dc_meet<SYS>(a, DC_FLAG_REDUCED, blockIdx.x, s, &sh);
}

template <class D, int NW, bool SYS>
__global__ void DC_KERNEL_BOUNDS dc_ar_direct(dc_kargs a) {
  constexpr int MW = NW ? NW : DC_MAX_WORLD;
  __shared__ dc_block sh;
  if (!dc_begin(a, &sh)) return;
  const uint64_t s = sh.seq, e = sizeof(typename D::T);
  uint64_t st, len;
  if (!dc_meet<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, &sh)) return;
  dc_ar_sub(a, a.rank, blockIdx.x * a.per, &st, &len);
  const char *src[MW];
  char *dst[MW];
#pragma unroll
  for (int p = 0; p < MW; p++) {
    src[p] = a.pin[p] + st * e;
    dst[p] = a.pout[p] + st * e;
  }
  dc_fold_srcs<D, NW>(a, src, len * e, a.out + st * e, dst);
  dc_meet<SYS>(a, DC_FLAG_REDUCED, blockIdx.x, s, &sh);
}

template <class D, int NW, bool SYS>
__global__ void DC_KERNEL_BOUNDS dc_rs_direct(dc_kargs a) {
  constexpr int MW = NW ? NW : DC_MAX_WORLD;
  __shared__ dc_block sh;
  if (!dc_begin(a, &sh)) return;
  const uint64_t s = sh.seq, e = sizeof(typename D::T), c = a.slice;
  if (!dc_meet<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, &sh)) return;
  const uint64_t lo = blockIdx.x * a.per;
  const uint64_t len = lo < c ? min(c - lo, a.per) : 0;
  const char *src[MW];
#pragma unroll
  for (int p = 0; p < MW; p++) src[p] = a.pin[p] + ((uint64_t)a.rank * c + lo) * e;
  dc_fold_srcs<D, NW>(a, src, len * e, a.out + lo * e, nullptr);
  dc_meet<SYS>(a, DC_FLAG_REDUCED, blockIdx.x, s, &sh);
}

/* copy_engine's flag kernels (one block): the start one advances the seq
 * and meets on STAGED; the end one meets on REDUCED with the same seq. */
template <bool SYS>
__global__ void DC_KERNEL_BOUNDS dc_ce_meet(dc_kargs a, int end) {
  __shared__ dc_block sh;
  if (!end) {
    if (!dc_begin(a, &sh)) return;
  } else {
    if (threadIdx.x == 0) {
      const dc_ctrl *c = a.ctrl[a.rank];
      sh.seq = dc_ld_relaxed(&c->seq[0]) - 1;
      sh.abort = dc_ld_relaxed(&c->status) != 0;
    }
    __syncthreads();
    if (sh.abort) return;
  }
  dc_meet<SYS>(a, end ? DC_FLAG_REDUCED : DC_FLAG_STAGED, 0, sh.seq, &sh);
}

typedef void (*dc_direct_fn)(dc_kargs);
typedef void (*dc_meet_fn)(dc_kargs, int);

#define DC_DIRECT_W(K, D)                                             \
  {                                                                   \
    {K<D, 2, false>, K<D, 2, true>}, {K<D, 4, false>, K<D, 4, true>}, \
        {K<D, 8, false>, K<D, 8, true>}, {                            \
      K<D, 0, false>, K<D, 0, true>                                   \
    }                                                                 \
  }
/* Reductions: [op: all_reduce, reduce_scatter][dtype][world class][sys]. */
static dc_direct_fn const dc_red_direct[2][DC_DTYPE_COUNT][4][2] = {
    {DC_DIRECT_W(dc_ar_direct, dc_t_bf16), DC_DIRECT_W(dc_ar_direct, dc_t_fp16),
     DC_DIRECT_W(dc_ar_direct, dc_t_fp32)},
    {DC_DIRECT_W(dc_rs_direct, dc_t_bf16), DC_DIRECT_W(dc_rs_direct, dc_t_fp16),
     DC_DIRECT_W(dc_rs_direct, dc_t_fp32)},
};
static dc_direct_fn const dc_ag_direct_k[2] = {dc_ag_direct<false>, dc_ag_direct<true>};
static dc_meet_fn const dc_ce_meet_k[2] = {dc_ce_meet<false>, dc_ce_meet<true>};

cudaError_t dc_launch_direct(const dc_kargs *a, dc_op op, dc_dtype dtype, int sys, int grid,
                             int threads, cudaStream_t st) {
  dc_direct_fn k =
      op == DC_OP_ALL_GATHER
          ? dc_ag_direct_k[sys != 0]
          : dc_red_direct[op == DC_OP_REDUCE_SCATTER][dtype][dc_world_class(a->world)][sys != 0];
  return dc_launch_kernel((const void *)k, grid, threads, a, st);
}

/* Between the meetings, the copy engine pushes my chunk into its place in
 * every peer's recv (peers in turn, starting after me, so ranks spread over
 * links; a pull, the source on the peer's device, stalled graphs driven
 * from one process), and my own chunk is copied on the side stream when
 * there is one (fork/join by events, so it works under capture too; NULL
 * with virtual ranks, whose streams already share the device's queues). */
cudaError_t dc_launch_copy_engine(const dc_kargs *a, int sys, cudaStream_t st, cudaStream_t side,
                                  cudaEvent_t fork, cudaEvent_t join) {
  const uint64_t n = a->n;
  char *const own = a->out + (uint64_t)a->rank * n;
  const int fork_own = own != a->in && side != NULL;
  int start = 0, end = 1;
  void *args0[] = {(void *)a, &start}, *args1[] = {(void *)a, &end};
  const void *meet = (const void *)dc_ce_meet_k[sys != 0];
  cudaError_t e = cudaSuccess, j;
  int forked = 0;
  if (fork_own && (e = cudaEventRecord(fork, st)) == cudaSuccess &&
      (e = cudaStreamWaitEvent(side, fork, 0)) == cudaSuccess) {
    /* From here the side stream joins back whatever fails (a capture left
     * forked could not end). */
    forked = 1;
    e = cudaMemcpyAsync(own, a->in, n, cudaMemcpyDeviceToDevice, side);
    if ((j = cudaEventRecord(join, side)) != cudaSuccess && e == cudaSuccess) e = j;
  }
  if (e == cudaSuccess) e = cudaLaunchKernel(meet, dim3(1), dim3(32), args0, 0, st);
  for (int k = 1; k < a->world && e == cudaSuccess; k++) {
    const int p = (a->rank + k) % a->world;
    e = cudaMemcpyAsync(a->pout[p] + (uint64_t)a->rank * n, a->in, n, cudaMemcpyDeviceToDevice, st);
  }
  if (e == cudaSuccess && own != a->in && !fork_own)
    e = cudaMemcpyAsync(own, a->in, n, cudaMemcpyDeviceToDevice, st);
  if (forked && (j = cudaStreamWaitEvent(st, join, 0)) != cudaSuccess && e == cudaSuccess) e = j;
  return e == cudaSuccess ? cudaLaunchKernel(meet, dim3(1), dim3(32), args1, 0, st) : e;
}

cudaError_t dc_occupancy_direct(int threads, int *blocks_per_sm) {
  int a = 0, b = 0, c = 0;
  cudaError_t e;
  if ((e = dc_occupancy_of((const void *const *)&dc_red_direct[0][0][0][0],
                           (int)(sizeof(dc_red_direct) / sizeof(dc_direct_fn)), threads, &a)) !=
          cudaSuccess ||
      (e = dc_occupancy_of((const void *const *)dc_ag_direct_k, 2, threads, &b)) != cudaSuccess ||
      (e = dc_occupancy_of((const void *const *)dc_ce_meet_k, 2, 32, &c)) != cudaSuccess)
    return e;
  *blocks_per_sm = a < b ? a : b;
  return cudaSuccess;
}
