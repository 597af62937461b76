/* dc_reduce_scatter.cu: reduce-scatter kernel; single-block is the same
 * kernel on one block, multi-block on the full grid. Rank r's input holds W
 * slices of recvcount elements; each is staged at a 16-byte padded stride so
 * every slice starts aligned in the frame. Block b stages its sub-range of
 * every slice, meets block b of every peer, then folds its sub-range of
 * slice r from all W frames in rank order (dc_fold: the same expression as
 * every all-reduce path) into recv. */
#include "dc_device.cuh"

template <class D, int NW, bool SYS>
__global__ void DC_KERNEL_BOUNDS dc_rs(dc_kargs a) {
  typedef typename D::T T;
  __shared__ dc_block sh;
  if (!dc_begin(a, &sh)) return;
  const int world = NW ? NW : a.world;
  const uint64_t s = sh.seq, e = sizeof(T), c = a.slice, cs = a.stride;
  const uint64_t lo = blockIdx.x * a.per;
  const uint64_t len = min(c - lo, a.per);
  char *mine = dc_frame(a, a.rank, s);
  for (int p = 0; p < world; p++) dc_copy(mine + ((uint64_t)p * cs + lo) * e, a.in + ((uint64_t)p * c + lo) * e, len * e);
  dc_signal<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, 0);
  if (!dc_wait<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, 0, &sh)) return;
  dc_reduce<D, NW>(a, s, ((uint64_t)a.rank * cs + lo) * e, len, reinterpret_cast<T *>(a.out) + lo, nullptr);
}

typedef void (*dc_rs_fn)(dc_kargs);

/* [dtype][world class: 2, 4, 8, any][sys] */
#define DC_RS_D(D) {{dc_rs<D, 2, false>, dc_rs<D, 2, true>}, {dc_rs<D, 4, false>, dc_rs<D, 4, true>}, \
                    {dc_rs<D, 8, false>, dc_rs<D, 8, true>}, {dc_rs<D, 0, false>, dc_rs<D, 0, true>}}
static dc_rs_fn const dc_rs_kernels[DC_DTYPE_COUNT][4][2] = {
    DC_RS_D(dc_t_bf16), DC_RS_D(dc_t_fp16), DC_RS_D(dc_t_fp32)};

cudaError_t dc_launch_reduce_scatter(const dc_kargs *a, dc_dtype dtype, int sys, int grid, int threads,
                                     cudaStream_t st) {
  dc_rs_fn k = dc_rs_kernels[dtype][dc_world_class(a->world)][sys != 0];
  void *args[] = {(void *)a};
  return cudaLaunchKernel((const void *)k, dim3(grid), dim3(threads), args, 0, st);
}

cudaError_t dc_occupancy_reduce_scatter(int threads, int *blocks_per_sm) {
  return dc_occupancy_of((const void *const *)&dc_rs_kernels[0][0][0],
                         (int)(sizeof(dc_rs_kernels) / sizeof(dc_rs_fn)), threads, blocks_per_sm);
}
