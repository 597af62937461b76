/* dc_all_gather.cu: all-gather kernels (bytes, any alignment).
 * - fused (and single-block = fused on one block): block b stages its range
 *   of the chunk, meets block b of every peer (pairwise flags), then copies
 *   that range of every rank's chunk (rank order) into recv.
 * - multi-block: stage as above, then a rank-wide meeting (the last of this
 *   rank's blocks to finish staging tells every rank once), so the gather
 *   can split the whole output evenly over the grid, independent of the
 *   staging split: contiguous writes and balanced blocks for big messages.
 * Copies use 16-byte accesses whatever the relative alignment of source and
 * destination (dc_copy). */
#include "dc_device.cuh"

template <bool SYS, bool RANK_BARRIER>
__global__ void DC_KERNEL_BOUNDS dc_ag(dc_kargs a) {
  __shared__ dc_block sh;
  if (!dc_begin(a, &sh)) return;
  const uint64_t s = sh.seq, n = a.n;
  const uint64_t lo = blockIdx.x * a.per;
  const uint64_t len = min(n - lo, a.per);
  dc_copy(dc_frame(a, a.rank, s) + lo, a.in + lo, len);
  if (!RANK_BARRIER) {
    dc_signal<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, 0);
    if (!dc_wait<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, 0, &sh)) return;
    for (int p = 0; p < a.world; p++) dc_copy(a.out + (uint64_t)p * n + lo, dc_frame(a, p, s) + lo, len);
    return;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    dc_ctrl *c = a.ctrl[a.rank];
    /* acq_rel: the last arriver sees every block's staging before it
     * releases the rank flag to all ranks (itself included). */
    if (dc_atom_add_acq_rel(&c->arrive, 1u) == gridDim.x - 1) {
      dc_st_relaxed32(&c->arrive, 0u);
      for (int q = 0; q < a.world; q++) dc_st_release<SYS>(&a.ctrl[q]->flags[DC_FLAG_RANK][0][a.rank], s);
    }
  }
  if (!dc_wait<SYS>(a, DC_FLAG_RANK, 0, s, 1, &sh)) return;
  const uint64_t total = (uint64_t)a.world * n;
  const uint64_t olo = blockIdx.x * a.per_out;
  const uint64_t ohi = min(total, olo + a.per_out);
  if (olo >= ohi) return;
  for (uint64_t p = olo / n; p < (uint64_t)a.world && p * n < ohi; p++) {
    const uint64_t b = max(olo, p * n), e = min(ohi, (p + 1) * n);
    dc_copy(a.out + b, dc_frame(a, (int)p, s) + (b - p * n), e - b);
  }
}

typedef void (*dc_ag_fn)(dc_kargs);

/* [multi_block][sys] */
static dc_ag_fn const dc_ag_kernels[2][2] = {
    {dc_ag<false, false>, dc_ag<true, false>},
    {dc_ag<false, true>, dc_ag<true, true>},
};

cudaError_t dc_launch_all_gather(const dc_kargs *a, dc_path path, int sys, int grid, int threads,
                                 cudaStream_t st) {
  dc_ag_fn k = dc_ag_kernels[path == DC_PATH_MULTI_BLOCK][sys != 0];
  void *args[] = {(void *)a};
  return cudaLaunchKernel((const void *)k, dim3(grid), dim3(threads), args, 0, st);
}

cudaError_t dc_occupancy_all_gather(int threads, int *blocks_per_sm) {
  return dc_occupancy_of((const void *const *)&dc_ag_kernels[0][0], 4, threads, blocks_per_sm);
}
