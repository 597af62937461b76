/* gpu_ipc.c: the multi-process communicator. Forks two processes (before
 * any CUDA call: CUDA does not survive fork), each creates its rank with
 * dc_comm_create_ipc, exchanging handles through a shared-memory allgather
 * (what an MPI launcher does with MPI_Allgather), then runs every path of
 * every op and checks the result against the CPU fold of both ranks'
 * (regenerated) inputs. With one GPU both processes share it (virtual ranks
 * across processes: the GPU time-slices them, slow but correct). */
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_common.h"

#define WORLD 2
#define SLOT 4096

typedef struct {
  pthread_barrier_t bar;
  unsigned char slot[WORLD][SLOT];
} shared_area;

typedef struct {
  shared_area *sh;
  int rank;
} xctx;

static int exchange(const void *send, void *recv, size_t bytes, void *ctx) {
  xctx *x = (xctx *)ctx;
  if (bytes > SLOT) return 1;
  memcpy(x->sh->slot[x->rank], send, bytes);
  pthread_barrier_wait(&x->sh->bar);
  for (int p = 0; p < WORLD; p++) memcpy((unsigned char *)recv + (size_t)p * bytes, x->sh->slot[p], bytes);
  pthread_barrier_wait(&x->sh->bar);
  return 0;
}

/* One rank's whole run; returns the exit status (0, 1, 77). */
static int child(shared_area *sh, int rank) {
  xctx x = {sh, rank};
  int ndev = 0, fails = 0;
  dc_comm comm;
  cudaStream_t st;
  dc_result res;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
    pthread_barrier_wait(&sh->bar); /* keep the peer from waiting forever */
    return 77;
  }
  pthread_barrier_wait(&sh->bar);
  GT_CUDA(cudaSetDevice(rank % ndev));
  res = dc_comm_create_ipc(rank, WORLD, rank % ndev, NULL, exchange, &x, &comm);
  if (res != dc_ok) {
    printf("rank %d: dc_comm_create_ipc: %s\n", rank, dc_result_str(res));
    return 1;
  }
  GT_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  for (int op = 0; op < DC_OP_COUNT; op++) {
    dc_path paths[DC_PATH_COUNT];
    int np = dc_op_paths((dc_op)op, paths);
    for (int pi = 0; pi < np; pi++) {
      const dc_dtype dt = DC_DTYPE_BF16;
      const size_t es = op == DC_OP_ALL_GATHER ? 1 : 2;
      const size_t count = gt_count_fit((dc_op)op, dt, paths[pi], 50001, WORLD);
      const size_t in_elems = op == DC_OP_REDUCE_SCATTER ? WORLD * count : count;
      const size_t out_bytes = op == DC_OP_ALL_GATHER ? WORLD * count : count * es;
      unsigned char *h_in[WORLD], *want = (unsigned char *)malloc(out_bytes), *got = (unsigned char *)malloc(out_bytes);
      char *d_in, *d_out;
      size_t bad = 0;
      uint64_t seed = 1000 + (uint64_t)(op * 10 + pi);
      for (int p = 0; p < WORLD; p++) {
        h_in[p] = (unsigned char *)malloc(in_elems * es);
        gt_fill((dc_op)op, dt, h_in[p], in_elems, seed * 131 + (uint64_t)p, 0);
      }
      if (op == DC_OP_ALL_GATHER) {
        for (int p = 0; p < WORLD; p++) memcpy(want + (size_t)p * count, h_in[p], count);
      } else {
        const size_t base = op == DC_OP_REDUCE_SCATTER ? (size_t)rank * count : 0;
        for (size_t i = 0; i < count; i++) {
          volatile float acc = gt_up(dt, h_in[0], base + i);
          for (int p = 1; p < WORLD; p++) acc = acc + gt_up(dt, h_in[p], base + i);
          gt_down(dt, want, i, acc);
        }
      }
      GT_CUDA(cudaMalloc((void **)&d_in, in_elems * es));
      GT_CUDA(cudaMalloc((void **)&d_out, out_bytes));
      GT_CUDA(cudaMemcpy(d_in, h_in[rank], in_elems * es, cudaMemcpyHostToDevice));
      GT_CUDA(cudaMemset(d_out, GT_PATTERN, out_bytes));
      GT_CUDA(cudaDeviceSynchronize());
      if (op == DC_OP_ALL_GATHER)
        res = dc_all_gather(comm, d_in, d_out, count, paths[pi], st);
      else if (op == DC_OP_ALL_REDUCE)
        res = dc_all_reduce(comm, d_in, d_out, count, dt, paths[pi], st);
      else
        res = dc_reduce_scatter(comm, d_in, d_out, count, dt, paths[pi], st);
      GT_CUDA(cudaStreamSynchronize(st));
      if (res != dc_ok || dc_comm_status(comm, NULL) != dc_ok) bad = 1;
      GT_CUDA(cudaMemcpy(got, d_out, out_bytes, cudaMemcpyDeviceToHost));
      if (memcmp(got, want, out_bytes) != 0) bad = 1;
      printf("%sok - ipc rank %d: %s %s\n", bad ? "not " : "", rank, dc_op_name((dc_op)op), dc_path_name(paths[pi]));
      fails += bad != 0;
      GT_CUDA(cudaFree(d_in));
      GT_CUDA(cudaFree(d_out));
      for (int p = 0; p < WORLD; p++) free(h_in[p]);
      free(want);
      free(got);
    }
  }
  /* The peer may still read this rank's frames until its kernels end. */
  pthread_barrier_wait(&sh->bar);
  GT_CUDA(cudaStreamDestroy(st));
  GT_DC(dc_comm_destroy(comm));
  return fails ? 1 : 0;
}

int main(void) {
  pthread_barrierattr_t attr;
  shared_area *sh = (shared_area *)mmap(NULL, sizeof(shared_area), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  pid_t pid[WORLD];
  int skip = 0, fail = 0;
  if (sh == MAP_FAILED) return 1;
  pthread_barrierattr_init(&attr);
  pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_barrier_init(&sh->bar, &attr, WORLD);
  fflush(stdout);
  for (int r = 0; r < WORLD; r++) {
    if ((pid[r] = fork()) == 0) {
      int st = child(sh, r);
      fflush(stdout);
      _exit(st);
    }
    if (pid[r] < 0) return 1;
  }
  for (int r = 0; r < WORLD; r++) {
    int st = 0;
    waitpid(pid[r], &st, 0);
    if (!WIFEXITED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 77)) fail = 1;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77) skip = 1;
  }
  if (skip && !fail) tap_skip_all("no CUDA GPU");
  tap_ok(!fail, "two processes over CUDA IPC: every path of every op exact");
  return tap_done();
}
