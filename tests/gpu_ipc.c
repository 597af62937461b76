/* gpu_ipc.c: the multi-process communicator. Forks one process per rank
 * (before any CUDA call in this process: CUDA does not survive fork; a
 * first child only counts the GPUs), each creates its rank with
 * dc_comm_create_ipc, exchanging handles through a shared-memory allgather
 * (what an MPI launcher does with MPI_Allgather). Layouts: two processes on
 * device 0 (virtual ranks across processes: the GPU time-slices them, slow
 * but correct), then one process per GPU for every world (2, 4, 8 and the
 * device count) the machine has GPUs for, else a skip line.
 *
 * Each rank runs every forced path of every op, and auto, with bf16 data;
 * the paths that need registration (direct, copy_engine) and a second auto
 * call run on buffers registered with dc_register_ipc (16-byte multiple
 * sizes; both windows inside one allocation, neither at its start: a
 * peer's mapping is of the whole allocation), the others on plain buffers.
 * A window past the end of its allocation, or not 16-byte aligned, is
 * refused on every rank; where only the last rank's window is misaligned,
 * or only the last rank names a device that is not there, that rank fails
 * at home and the others hear of it in the exchange (none is left waiting
 * in it). Every rank compares its output,
 * guard bytes included, bit for bit with the CPU fold of every rank's
 * (regenerated) inputs as soon as its own stream is done: a call is
 * complete for a rank when its stream is, peers' writes included. On the
 * registered buffers the call is then captured into a CUDA graph and
 * replayed twice with fresh inputs, each replay checked the same way. */
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_common.h"

#define SLOT 4096
#define EXIT_FEW_GPUS 3

typedef struct {
  pthread_barrier_t bar;
  int world, ndev;
  unsigned char slot[DC_MAX_WORLD][SLOT];
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
  for (int p = 0; p < x->sh->world; p++)
    memcpy((unsigned char *)recv + (size_t)p * bytes, x->sh->slot[p], bytes);
  pthread_barrier_wait(&x->sh->bar);
  return 0;
}

static dc_result call(dc_comm comm, dc_op op, dc_path path, const void *in, void *out, size_t count,
                      cudaStream_t st) {
  if (op == DC_OP_ALL_GATHER) return dc_all_gather(comm, in, out, count, path, st);
  if (op == DC_OP_ALL_REDUCE) return dc_all_reduce(comm, in, out, count, DC_DTYPE_BF16, path, st);
  return dc_reduce_scatter(comm, in, out, count, DC_DTYPE_BF16, path, st);
}

/* One call's buffers on this rank, its inputs for every rank and its
 * expected output. */
typedef struct {
  dc_op op;
  int rank, world;
  size_t count, in_bytes, out_bytes, es;
  unsigned char *h_in[DC_MAX_WORLD], *want, *got;
  char *d_in, *d_out; /* d_out: GT_GUARD, result, GT_GUARD */
  char *block;        /* registered: the one allocation d_in and d_out lie in */
} ipc_case;

/* Fresh inputs from seed (the same on every rank), upload this rank's,
 * guard pattern into the output, the reference. */
static void ipc_fill(ipc_case *c, uint64_t seed) {
  const dc_dtype dt = DC_DTYPE_BF16;
  for (int p = 0; p < c->world; p++)
    gt_fill(c->op, dt, c->h_in[p], c->in_bytes / c->es, seed * 131 + (uint64_t)p, 0);
  if (c->op == DC_OP_ALL_GATHER) {
    for (int p = 0; p < c->world; p++) memcpy(c->want + (size_t)p * c->count, c->h_in[p], c->count);
  } else {
    const size_t base = c->op == DC_OP_REDUCE_SCATTER ? (size_t)c->rank * c->count : 0;
    const void *in[DC_MAX_WORLD];
    for (int p = 0; p < c->world; p++) in[p] = c->h_in[p];
    for (size_t i = 0; i < c->count; i++)
      gt_down(dt, c->want, i, tune_fold_rank_order(dt, in, c->world, base + i));
  }
  GT_CUDA(cudaMemset(c->d_out, GT_PATTERN, c->out_bytes + 2 * GT_GUARD));
  GT_CUDA(cudaMemcpy(c->d_in, c->h_in[c->rank], c->in_bytes, cudaMemcpyHostToDevice));
  GT_CUDA(cudaDeviceSynchronize());
}

/* Wrong bytes of the output, guards included. */
static size_t ipc_check(ipc_case *c) {
  size_t bad = 0;
  GT_CUDA(cudaMemcpy(c->got, c->d_out, c->out_bytes + 2 * GT_GUARD, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < GT_GUARD; i++)
    bad += (c->got[i] != GT_PATTERN) + (c->got[GT_GUARD + c->out_bytes + i] != GT_PATTERN);
  for (size_t i = 0; i < c->out_bytes; i++) bad += c->got[GT_GUARD + i] != c->want[i];
  return bad;
}

/* One path on this rank: eager, then (registered) two graph replays.
 * Returns the failures it printed. */
static int one_path(dc_comm comm, cudaStream_t st, xctx *x, int world, dc_op op, dc_path path,
                    int reg) {
  ipc_case c;
  int fails = 0;
  char what[120];
  dc_result res;
  const dc_dtype dt = DC_DTYPE_BF16;
  const uint64_t seed = 1000 + (uint64_t)(op * 100 + path * 2 + reg);
  memset(&c, 0, sizeof(c));
  c.op = op;
  c.rank = x->rank;
  c.world = world;
  c.es = op == DC_OP_ALL_GATHER ? 1 : 2;
  c.count = gt_count_fit(op, dt, path, gt_count_for(op, 50001, world), world);
  if (reg) c.count = gt_count_reg(op, dt, c.count);
  c.in_bytes = (op == DC_OP_REDUCE_SCATTER ? (size_t)world : 1) * c.count * c.es;
  c.out_bytes = op == DC_OP_ALL_GATHER ? (size_t)world * c.count : c.count * c.es;
  for (int p = 0; p < world; p++)
    if (!(c.h_in[p] = (unsigned char *)malloc(c.in_bytes))) exit(1);
  if (!(c.want = (unsigned char *)malloc(c.out_bytes)) ||
      !(c.got = (unsigned char *)malloc(c.out_bytes + 2 * GT_GUARD)))
    exit(1);
  if (reg) {
    const size_t in_room = (c.in_bytes + 255) / 256 * 256;
    GT_CUDA(cudaMalloc((void **)&c.block, 256 + in_room + c.out_bytes + 2 * GT_GUARD));
    c.d_in = c.block + 256;
    c.d_out = c.d_in + in_room;
  } else {
    GT_CUDA(cudaMalloc((void **)&c.d_in, c.in_bytes));
    GT_CUDA(cudaMalloc((void **)&c.d_out, c.out_bytes + 2 * GT_GUARD));
  }
  snprintf(what, sizeof(what), "ipc world %d rank %d: %s %s%s", world, x->rank, dc_op_name(op),
           dc_path_name(path), reg ? " registered" : "");
  if (reg) {
    res = dc_register_ipc(comm, c.d_in, c.in_bytes, exchange, x);
    if (res == dc_ok) res = dc_register_ipc(comm, c.d_out, c.out_bytes + 2 * GT_GUARD, exchange, x);
    if (res != dc_ok) {
      printf("Bail out! %s: dc_register_ipc: %s: %s\n", what, dc_result_str(res),
             dc_comm_last_error(comm));
      exit(1); /* the peers bail out alike: registration fails on every rank */
    }
  }
  ipc_fill(&c, seed);
  res = call(comm, op, path, c.d_in, c.d_out + GT_GUARD, c.count, st);
  GT_CUDA(cudaStreamSynchronize(st));
  fails += !tap_ok(res == dc_ok && dc_comm_status(comm, NULL) == dc_ok && ipc_check(&c) == 0,
                   "%s: eager exact (%s)", what, res == dc_ok ? "ok" : dc_comm_last_error(comm));
  pthread_barrier_wait(&x->sh->bar); /* the peers are done with this rank's buffers */
  if (reg) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    size_t bad = 0;
    GT_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    res = call(comm, op, path, c.d_in, c.d_out + GT_GUARD, c.count, st);
    GT_CUDA(cudaStreamEndCapture(st, &graph));
    GT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int rep = 0; rep < 2; rep++) { /* every rank meets both barriers, failed or not */
      if (res == dc_ok) {
        ipc_fill(&c, seed + 7 * (uint64_t)(rep + 1));
        GT_CUDA(cudaGraphLaunch(exec, st));
        GT_CUDA(cudaStreamSynchronize(st));
        bad += dc_comm_status(comm, NULL) != dc_ok;
        bad += ipc_check(&c);
      }
      pthread_barrier_wait(&x->sh->bar);
    }
    fails += !tap_ok(res == dc_ok && bad == 0,
                     "%s: captured, 2 graph replays with fresh inputs exact", what);
    GT_CUDA(cudaGraphExecDestroy(exec));
    GT_CUDA(cudaGraphDestroy(graph));
    GT_DC(dc_deregister(comm, c.d_in));
    GT_DC(dc_deregister(comm, c.d_out));
    pthread_barrier_wait(&x->sh->bar); /* every rank closed its mappings before the memory goes */
  }
  if (reg) {
    GT_CUDA(cudaFree(c.block));
  } else {
    GT_CUDA(cudaFree(c.d_in));
    GT_CUDA(cudaFree(c.d_out));
  }
  for (int p = 0; p < world; p++) free(c.h_in[p]);
  free(c.want);
  free(c.got);
  return fails;
}

/* One rank's whole run; returns the exit status (0, 1, 77, EXIT_FEW_GPUS). */
static int child(shared_area *sh, int rank, int distinct) {
  xctx x = {sh, rank};
  const int world = sh->world;
  int ndev = 0, fails = 0, dev;
  dc_comm comm;
  cudaStream_t st;
  dc_result res;
  alarm(900); /* a rank that dies leaves its peers in a barrier: end them too */
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1 || (distinct && ndev < world)) {
    pthread_barrier_wait(&sh->bar); /* every rank sees the same and leaves */
    return ndev < 1 ? 77 : EXIT_FEW_GPUS;
  }
  pthread_barrier_wait(&sh->bar);
  dev = distinct ? rank : 0;
  GT_CUDA(cudaSetDevice(dev));
  res = dc_comm_create_ipc(rank, world, dev, NULL, exchange, &x, &comm);
  if (res != dc_ok) {
    printf("Bail out! rank %d: dc_comm_create_ipc: %s\n", rank, dc_result_str(res));
    return 1;
  }
  GT_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  for (int op = 0; op < DC_OP_COUNT; op++) {
    dc_path paths[DC_PATH_COUNT];
    int np = dc_op_paths((dc_op)op, paths);
    for (int pi = 0; pi < np; pi++)
      fails += one_path(comm, st, &x, world, (dc_op)op, paths[pi],
                        dc_path_needs_reg((dc_op)op, paths[pi]));
    for (int reg = 0; reg <= 1; reg++)
      fails += one_path(comm, st, &x, world, (dc_op)op, DC_PATH_AUTO, reg);
  }
  {
    /* Refused on every rank alike, nothing left registered: a window that
     * runs past its allocation (whatever the allocation was rounded up
     * to), and one that does not start 16-byte aligned. Last, so that a
     * registration wrongly taken leaves no window in the paths' way. */
    char *buf;
    GT_CUDA(cudaMalloc((void **)&buf, 2u << 20));
    dc_result past = dc_register_ipc(comm, buf + 256, 2u << 20, exchange, &x);
    dc_result odd = dc_register_ipc(comm, buf + 8, 4096, exchange, &x);
    fails += !tap_ok(past == dc_err_arg && odd == dc_err_arg && dc_deregister(comm, buf + 256) == dc_err_arg &&
                         dc_deregister(comm, buf + 8) == dc_err_arg,
                     "ipc world %d rank %d: a window past its allocation -> %s, one not 16-byte aligned -> %s",
                     world, rank, dc_result_str(past), dc_result_str(odd));
    /* Only the last rank's window is misaligned: it fails at home, still
     * takes part in both rounds, and every other rank hears of it. */
    char *mine = rank == world - 1 ? buf + 8 : buf;
    dc_result one = dc_register_ipc(comm, mine, 4096, exchange, &x);
    dc_result want = rank == world - 1 ? dc_err_arg : dc_err_exchange;
    fails += !tap_ok(one == want && dc_deregister(comm, mine) == dc_err_arg,
                     "ipc world %d rank %d: only rank %d's window misaligned -> %s (want %s), nothing registered",
                     world, rank, world - 1, dc_result_str(one), dc_result_str(want));
    GT_CUDA(cudaFree(buf));
  }
  /* The peers may still read this rank's frames until their kernels end. */
  pthread_barrier_wait(&sh->bar);
  GT_CUDA(cudaStreamDestroy(st));
  GT_DC(dc_comm_destroy(comm));
  return fails ? 1 : 0;
}

/* One rank of a world whose last rank names a device that is not there:
 * it fails at home and still takes part in both exchange rounds, so every
 * rank returns (an error) instead of waiting for it. 0 when so. */
static int child_bad_device(shared_area *sh, int rank, int distinct) {
  xctx x = {sh, rank};
  int ndev = 0;
  dc_comm comm = NULL;
  (void)distinct;
  alarm(120); /* a rank left in the exchange is the failure this looks for */
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) return 77;
  int dev = rank == sh->world - 1 ? ndev : 0;
  dc_result res = dc_comm_create_ipc(rank, sh->world, dev, NULL, exchange, &x, &comm);
  dc_result want = rank == sh->world - 1 ? dc_err_device : dc_err_exchange;
  return !tap_ok(res == want && comm == NULL, "ipc rank %d of %d on device %d: %s (want %s)", rank,
                 sh->world, dev, dc_result_str(res), dc_result_str(want));
}

/* Fork world processes running fn (child, child_bad_device); returns the
 * worst status: 0, 1, 77 or EXIT_FEW_GPUS. */
static int round_of(shared_area *sh, int world, int distinct, int (*fn)(shared_area *, int, int)) {
  pthread_barrierattr_t attr;
  pid_t pid[DC_MAX_WORLD];
  int skip = 0, few = 0, fail = 0;
  sh->world = world;
  pthread_barrierattr_init(&attr);
  pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_barrier_init(&sh->bar, &attr, (unsigned)world);
  fflush(stdout);
  for (int r = 0; r < world; r++) {
    if ((pid[r] = fork()) == 0) {
      int st = fn(sh, r, distinct);
      fflush(stdout);
      _exit(st);
    }
    if (pid[r] < 0) return 1;
  }
  for (int r = 0; r < world; r++) {
    int st = 0;
    waitpid(pid[r], &st, 0);
    if (!WIFEXITED(st) ||
        (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 77 && WEXITSTATUS(st) != EXIT_FEW_GPUS))
      fail = 1;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77) skip = 1;
    if (WIFEXITED(st) && WEXITSTATUS(st) == EXIT_FEW_GPUS) few = 1;
  }
  pthread_barrier_destroy(&sh->bar);
  return fail ? 1 : skip ? 77 : few ? EXIT_FEW_GPUS : 0;
}

int main(void) {
  shared_area *sh = (shared_area *)mmap(NULL, sizeof(shared_area), PROT_READ | PROT_WRITE,
                                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  int worlds[4], nw, st;
  pid_t pid;
  if (sh == MAP_FAILED) return 1;
  fflush(stdout);
  if ((pid = fork()) == 0) { /* CUDA only in children */
    int n = 0;
    sh->ndev = cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
    _exit(0);
  }
  if (pid < 0 || waitpid(pid, &st, 0) != pid) return 1;
  if (sh->ndev < 1) tap_skip_all("no CUDA GPU");
  st = round_of(sh, 2, 0, child);
  if (st == 77) tap_skip_all("no CUDA GPU");
  tap_ok(st == 0, "2 processes on device 0 over CUDA IPC: every path of every op exact");
  tap_ok(round_of(sh, 2, 0, child_bad_device) == 0,
         "2 processes, the second on a device that is not there: both return, both fail");
  nw = gt_worlds(sh->ndev, worlds);
  for (int i = 0; i < nw; i++) {
    if (sh->ndev < worlds[i]) {
      gt_skip("%d processes on distinct GPUs: %d GPU%s here", worlds[i], sh->ndev,
              sh->ndev == 1 ? "" : "s");
      continue;
    }
    st = round_of(sh, worlds[i], 1, child);
    tap_ok(st == 0, "%d processes on distinct GPUs over CUDA IPC: every path of every op exact",
           worlds[i]);
  }
  return tap_done();
}
