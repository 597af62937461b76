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
 * Push and direct live in dc_push.cu and dc_direct.cu.
 * All evaluate the same per-element expression (dc_fold_w), so they agree
 * bit for bit. Kernels are instantiated per dtype, world (2, 4, 8 or any),
 * flag scope, and per DC_OUT_ kind: 16-byte aligned send and recv
 * (dc_copy<true>: no unaligned copy in the kernel), else by recv's
 * alignment (a 4-byte aligned recv, or one 2 bytes past: its own store
 * loop). */
#include "dc_device.cuh"

template <class D, int NW, bool SYS, int K>
__global__ void DC_KERNEL_BOUNDS dc_ar_one_shot(dc_kargs a) {
  typedef typename D::T T;
  __shared__ dc_block sh;
  if (!dc_begin(a, &sh)) return;
  const uint64_t s = sh.seq;
  const uint64_t lo = blockIdx.x * a.per;
  const uint64_t len = min(a.n - lo, a.per);
  const uint64_t off = lo * sizeof(T);
  dc_copy<K == DC_OUT_A16>(dc_frame(a, a.rank, s) + off, a.in + off, len * sizeof(T));
  dc_signal<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, 0);
  if (!dc_wait<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, 0, &sh)) return;
  dc_reduce<D, NW, K>(a, s, off, len, reinterpret_cast<T *>(a.out) + lo, nullptr);
}

template <class D, int NW, bool SYS, int K>
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
    dc_copy<K == DC_OUT_A16>(mine + st * e, a.in + st * e, len * e);
  }
  dc_signal<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, 0);
  if (!dc_wait<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, 0, &sh)) return;
  dc_ar_sub(a, a.rank, lo, &st, &len);
  dc_reduce<D, NW, K>(a, s, st * e, len, reinterpret_cast<T *>(a.out) + st, mine);
  dc_signal<SYS>(a, DC_FLAG_REDUCED, blockIdx.x, s, 0);
  if (!dc_wait<SYS>(a, DC_FLAG_REDUCED, blockIdx.x, s, 0, &sh)) return;
  for (int p = 0; p < world; p++) {
    if (p == a.rank) continue;
    dc_ar_sub(a, p, lo, &st, &len);
    dc_copy<K == DC_OUT_A16>(a.out + st * e, dc_frame(a, p, s) + st * e, len * e);
  }
}

typedef void (*dc_ar_fn)(dc_kargs);

/* [kind: one-shot, two-shot][dtype][world class: 2, 4, 8, any][sys][DC_OUT_ kind] */
#define DC_AR_S(F, D, NW, SYS) \
  {F<D, NW, SYS, DC_OUT_4>, F<D, NW, SYS, DC_OUT_A16>, F<D, NW, SYS, dc_out2<D>()>}
#define DC_AR_W(F, D, NW) {DC_AR_S(F, D, NW, false), DC_AR_S(F, D, NW, true)}
#define DC_AR_D(F, D) {DC_AR_W(F, D, 2), DC_AR_W(F, D, 4), DC_AR_W(F, D, 8), DC_AR_W(F, D, 0)}
static dc_ar_fn const dc_ar_kernels[2][DC_DTYPE_COUNT][4][2][3] = {
    {DC_AR_D(dc_ar_one_shot, dc_t_bf16), DC_AR_D(dc_ar_one_shot, dc_t_fp16),
     DC_AR_D(dc_ar_one_shot, dc_t_fp32)},
    {DC_AR_D(dc_ar_two_shot, dc_t_bf16), DC_AR_D(dc_ar_two_shot, dc_t_fp16),
     DC_AR_D(dc_ar_two_shot, dc_t_fp32)},
};

cudaError_t dc_launch_all_reduce(const dc_kargs *a, dc_path path, dc_dtype dtype, int sys, int grid,
                                 int threads, cudaStream_t st) {
  /* Frames, slices and block steps are 16-byte multiples: with send and
   * recv 16-byte aligned, every copy and store of the call is. */
  const int aligned = (((uintptr_t)a->in | (uintptr_t)a->out) & 15) == 0;
  dc_ar_fn k = dc_ar_kernels[path == DC_PATH_TWO_SHOT][dtype][dc_world_class(a->world)][sys != 0]
                           [dc_out_kind(aligned, a->out)];
  return dc_launch_kernel((const void *)k, grid, threads, a, st);
}

cudaError_t dc_occupancy_all_reduce(int threads, int *blocks_per_sm) {
  return dc_occupancy_of((const void *const *)&dc_ar_kernels[0][0][0][0][0],
                         (int)(sizeof(dc_ar_kernels) / sizeof(dc_ar_fn)), threads, blocks_per_sm);
}
