/* dc_reduce_scatter.cu: reduce-scatter kernel; single-block is the same
 * kernel on one block, multi-block on the full grid. Rank r's input holds W
 * slices of recvcount elements; each is staged at a 16-byte padded stride so
 * every slice starts aligned in the frame. Block b stages its sub-range of
 * every slice, meets block b of every peer, then folds its sub-range of
 * slice r from all W frames in rank order (dc_fold: the same expression as
 * every all-reduce path) into recv. Instantiated per dtype, world, flag
 * scope, and per DC_OUT_ kind (as all-reduce's). */
#include "dc_device.cuh"

template <class D, int NW, bool SYS, int K>
__global__ void DC_KERNEL_BOUNDS dc_rs(dc_kargs a) {
  typedef typename D::T T;
  __shared__ dc_block sh;
  if (!dc_begin(a, &sh)) return;
  const int world = NW ? NW : a.world;
  const uint64_t s = sh.seq, e = sizeof(T), c = a.slice, cs = a.stride;
  const uint64_t lo = blockIdx.x * a.per;
  const uint64_t len = min(c - lo, a.per);
  char *mine = dc_frame(a, a.rank, s);
  for (int p = 0; p < world; p++)
    dc_copy<K == DC_OUT_A16>(mine + ((uint64_t)p * cs + lo) * e, a.in + ((uint64_t)p * c + lo) * e,
                     len * e);
  dc_signal<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, 0);
  if (!dc_wait<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, 0, &sh)) return;
  dc_reduce<D, NW, K>(a, s, ((uint64_t)a.rank * cs + lo) * e, len,
                            reinterpret_cast<T *>(a.out) + lo, nullptr);
}

typedef void (*dc_rs_fn)(dc_kargs);

/* [dtype][world class: 2, 4, 8, any][sys][DC_OUT_ kind] */
#define DC_RS_S(D, NW, SYS) \
  {dc_rs<D, NW, SYS, DC_OUT_4>, dc_rs<D, NW, SYS, DC_OUT_A16>, dc_rs<D, NW, SYS, dc_out2<D>()>}
#define DC_RS_W(D, NW) {DC_RS_S(D, NW, false), DC_RS_S(D, NW, true)}
#define DC_RS_D(D) {DC_RS_W(D, 2), DC_RS_W(D, 4), DC_RS_W(D, 8), DC_RS_W(D, 0)}
static dc_rs_fn const dc_rs_kernels[DC_DTYPE_COUNT][4][2][3] = {
    DC_RS_D(dc_t_bf16), DC_RS_D(dc_t_fp16), DC_RS_D(dc_t_fp32)};

cudaError_t dc_launch_reduce_scatter(const dc_kargs *a, dc_dtype dtype, int sys, int grid, int threads,
                                     cudaStream_t st) {
  /* Slices are staged at 16-byte multiples: with send and recv 16-byte
   * aligned and slices of whole 16-byte vectors, every copy and store of
   * the call is aligned. */
  const int aligned = dc_align_class((uintptr_t)a->in, (uintptr_t)a->out,
                                     a->slice * dc_dtype_size(dtype)) == DC_ALIGN_16;
  dc_rs_fn k =
      dc_rs_kernels[dtype][dc_world_class(a->world)][sys != 0][dc_out_kind(aligned, a->out)];
  return dc_launch_kernel((const void *)k, grid, threads, a, st);
}

cudaError_t dc_occupancy_reduce_scatter(int threads, int *blocks_per_sm) {
  return dc_occupancy_of((const void *const *)&dc_rs_kernels[0][0][0][0],
                         (int)(sizeof(dc_rs_kernels) / sizeof(dc_rs_fn)), threads, blocks_per_sm);
}
