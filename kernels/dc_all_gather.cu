/* dc_all_gather.cu: all-gather kernels (bytes, any alignment).
 * - fused (and single-block = fused on one block): block b stages its range
 *   of the chunk, meets block b of every peer (pairwise flags), then copies
 *   that range of every rank's chunk (rank order) into recv.
 * - multi-block: stage as above, then a rank-wide meeting (the last of this
 *   rank's blocks to finish staging tells every rank once), so the gather
 *   can split the whole output evenly over the grid, independent of the
 *   staging split: contiguous writes and balanced blocks for big messages.
 * Copies use 16-byte accesses whatever the relative alignment of source and
 * destination (dc_copy). Every kernel comes twice: for any alignment, and
 * for calls whose copies are all 16-byte aligned, without the unaligned
 * copy's call (two virtual ranks, fused, 64 KiB to 3 MiB: 0.6 to 1.5 us
 * faster than the kernel of any alignment). */
#include "dc_device.cuh"

template <bool SYS, bool RANK_BARRIER, bool ALIGNED>
__global__ void DC_KERNEL_BOUNDS dc_ag(dc_kargs a) {
  __shared__ dc_block sh;
  if (!dc_begin(a, &sh)) return;
  const uint64_t s = sh.seq, n = a.n;
  const uint64_t lo = blockIdx.x * a.per;
  const uint64_t len = min(n - lo, a.per);
  dc_copy<ALIGNED>(dc_frame(a, a.rank, s) + lo, a.in + lo, len);
  if (!RANK_BARRIER) {
    dc_signal<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, 0);
    if (!dc_wait<SYS>(a, DC_FLAG_STAGED, blockIdx.x, s, 0, &sh)) return;
    for (int p = 0; p < a.world; p++)
      dc_copy<ALIGNED>(a.out + (uint64_t)p * n + lo, dc_frame(a, p, s) + lo, len);
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
    dc_copy<ALIGNED>(a.out + b, dc_frame(a, (int)p, s) + (b - p * n), e - b);
  }
}

typedef void (*dc_ag_fn)(dc_kargs);

/* [multi_block][sys][aligned] */
#define DC_AG_K(RB, SYS) {dc_ag<SYS, RB, false>, dc_ag<SYS, RB, true>}
static dc_ag_fn const dc_ag_kernels[2][2][2] = {
    {DC_AG_K(false, false), DC_AG_K(false, true)},
    {DC_AG_K(true, false), DC_AG_K(true, true)},
};

cudaError_t dc_launch_all_gather(const dc_kargs *a, dc_path path, int sys, int grid, int threads,
                                 cudaStream_t st) {
  /* Frames and the partition steps (per, per_out) are multiples of 16
   * bytes, so 16-byte aligned send and recv and a chunk of whole 16-byte
   * vectors make every copy of the call aligned. */
  const int aligned = dc_align_class((uintptr_t)a->in, (uintptr_t)a->out, a->n) == DC_ALIGN_16;
  dc_ag_fn k = dc_ag_kernels[path == DC_PATH_MULTI_BLOCK][sys != 0][aligned];
  return dc_launch_kernel((const void *)k, grid, threads, a, st);
}

cudaError_t dc_occupancy_all_gather(int threads, int *blocks_per_sm) {
  return dc_occupancy_of((const void *const *)&dc_ag_kernels[0][0][0],
                         (int)(sizeof(dc_ag_kernels) / sizeof(dc_ag_fn)), threads, blocks_per_sm);
}
