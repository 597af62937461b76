/* gpu_detcoll.c: libdetcoll as the gpu backend measures it, on plain
 * buffers (detcoll) and on buffers registered as windows (detcoll_reg),
 * each also with auto dispatch from the job's previous table (detcoll_prev,
 * detcoll_reg_prev: comms of their own, which hold that table for good):
 * communicators (in process from the engine's thread, or one per process
 * through CUDA IPC), calls, the watchdog's status, auto dispatch's path,
 * run-time tables, and the virtual-rank watchdog retry.
 *
 * No comm switches tables between calls: a switch (a checked copy of the
 * table) just before a timed eager call made that call about 2% slower in
 * the median on virtual ranks, so auto dispatch measured against the same
 * forced path on the same comm lost at sizes where it took that path
 * (issue 14's regret of a job's first run). The price: a job that measures
 * the previous table holds twice the comms, each with its two staging
 * frames of --max-bytes per rank. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gpu_impl.h"

/* The impls' comm slots (gpu_rank.dc): registered or not, and which table. */
static int dc_slot_reg(int slot) { return slot & 1; }
static int dc_slot_prev(int slot) { return slot >> 1; }
static int dc_is_prev(const gpu_impl_ops *ops) {
  return ops == &gpu_impl_detcoll_prev || ops == &gpu_impl_detcoll_reg_prev;
}
static int dc_slot(const gpu_impl_ops *ops) {
  return (ops == &gpu_impl_detcoll_reg || ops == &gpu_impl_detcoll_reg_prev) | dc_is_prev(ops) << 1;
}

/* The table the comms of slot hold: the previous table or the current one
 * (NULL: the library's default). */
static const dc_threshold_row *dc_slot_table(const gpu_backend *b, int slot, size_t *n) {
  *n = dc_slot_prev(slot) ? b->nprev : b->ntable;
  return dc_slot_prev(slot) ? b->prev : b->table;
}

/* The comm of p's world and slot on this rank. */
static dc_comm dc_of(gpu_rank *rs, const gpu_plan *p, int world) {
  return rs->dc[dc_slot(p->ops)][world - 1];
}

typedef struct {
  gpu_backend *b;
  int world, rank;
} gpu_exchange_ctx;

/* dc_comm_create_ipc's exchange: the launcher's allgather among the world. */
static int gpu_exchange(const void *send, void *recv, size_t bytes, void *ctx) {
  gpu_exchange_ctx *x = ctx;
  return x->b->lops->allgather(x->b->launch, x->world, x->rank, send, recv, bytes) != tune_ok;
}

static dc_config gpu_dc_config(const gpu_backend *b) {
  dc_config cfg = {0};
  cfg.staging_bytes = (size_t)((b->max_bytes + 4095) / 4096 * 4096);
  return cfg;
}

tune_result gpu_detcoll_check(const gpu_backend *b) {
  char why[256];
  dc_config cfg = gpu_dc_config(b);
  if (dc_config_check(&cfg, why, sizeof(why)) == dc_ok) return tune_ok;
  tune_error("libdetcoll: %s", why);
  return tune_err_arg;
}

static const char *dc_unsupported(const gpu_backend *b, const tune_cfg *c) {
  (void)b;
  const char *why = tune_cfg_path_unsupported(c);
  if (why) return why;
  return c->world <= DC_MAX_WORLD ? NULL : "world larger than DC_MAX_WORLD";
}

static const char *dc_prev_unsupported(const gpu_backend *b, const tune_cfg *c) {
  if (b->prev == NULL) return "no previous threshold table was given (set_table)";
  return dc_unsupported(b, c);
}

/* In-process groups are created by the engine's thread, every rank at once,
 * one per slot; a registered slot's windows are every rank's buffers. */
static tune_result dc_local_comms(gpu_backend *b, int world, int slot) {
  const int reg = dc_slot_reg(slot);
  size_t ntable;
  const dc_threshold_row *table = dc_slot_table(b, slot, &ntable);
  if (b->local[0].dc[slot][world - 1] != NULL) return tune_ok;
  int devs[DC_MAX_WORLD] = {0};
  dc_comm comms[DC_MAX_WORLD];
  for (int r = 0; r < world; r++) devs[r] = b->local[r].device;
  dc_config cfg = gpu_dc_config(b);
  dc_result res = dc_comm_create_local(world, devs, &cfg, comms);
  if (res != dc_ok) {
    tune_error("dc_comm_create_local (world %d): %s (set DC_DEBUG=1 for details)", world,
               dc_result_str(res));
    return tune_err_detcoll;
  }
  for (int i = 0; reg && i < GPU_WIN_COUNT && res == dc_ok; i++) {
    void *ptrs[DC_MAX_WORLD];
    for (int r = 0; r < world; r++) ptrs[r] = i < 2 ? b->local[r].in[i] : b->local[r].out;
    res = dc_register_local(world, comms, ptrs, i < 2 ? b->in_cap : b->out_cap);
    if (res != dc_ok)
      tune_error("dc_register_local (world %d, buffer %d): %s: %s", world, i, dc_result_str(res),
                 dc_comm_last_error(comms[0]));
  }
  for (int r = 0; r < world && res == dc_ok && table; r++) {
    res = dc_comm_set_table(comms[r], table, ntable);
    if (res != dc_ok) tune_error("dc_comm_set_table: %s", dc_comm_last_error(comms[r]));
  }
  if (res != dc_ok) {
    for (int r = 0; r < world; r++) dc_comm_destroy(comms[r]);
    return tune_err_detcoll;
  }
  for (int r = 0; r < world; r++) b->local[r].dc[slot][world - 1] = comms[r];
  TUNE_INFO(TUNE_BACKEND, "detcoll%s communicators for world %d created%s",
            reg ? " (registered)" : "", world, dc_slot_prev(slot) ? " (previous table)" : "");
  return tune_ok;
}

/* Across processes every rank creates its own, collectively, and (reg)
 * registers its buffers with it, collectively too. In process the engine's
 * thread made them already. */
static void dc_ipc_comm(gpu_backend *b, gpu_rank *rs, int world, int slot) {
  const int reg = dc_slot_reg(slot);
  size_t ntable;
  const dc_threshold_row *table = dc_slot_table(b, slot, &ntable);
  if (b->lops->single_process || rs->dc[slot][world - 1] != NULL) return;
  gpu_exchange_ctx x = {b, world, rs->rank};
  dc_config cfg = gpu_dc_config(b);
  dc_comm comm = NULL;
  if (!GPU_DC(rs, NULL,
              dc_comm_create_ipc(rs->rank, world, rs->device, &cfg, gpu_exchange, &x, &comm)))
    return;
  rs->dc[slot][world - 1] = comm;
  if (table && !GPU_DC(rs, comm, dc_comm_set_table(comm, table, ntable))) return;
  char *bufs[GPU_WIN_COUNT] = {rs->in[0], rs->in[1], rs->out};
  size_t caps[GPU_WIN_COUNT] = {b->in_cap, b->in_cap, b->out_cap};
  for (int i = 0; reg && i < GPU_WIN_COUNT; i++)
    if (!GPU_DC(rs, comm, dc_register_ipc(comm, bufs[i], caps[i], gpu_exchange, &x))) return;
}

static int dc_issue(gpu_rank *rs, const gpu_plan *p, int set) {
  const tune_cfg *c = p->c;
  const char *send = rs->in[set] + c->in_offset;
  char *recv = rs->out + GPU_GUARD + c->out_offset;
  dc_comm comm = dc_of(rs, p, c->world);
  if (c->op == DC_OP_ALL_GATHER)
    return GPU_DC(rs, comm, dc_all_gather(comm, send, recv, p->count, c->path, rs->stream));
  if (c->op == DC_OP_ALL_REDUCE)
    return GPU_DC(rs, comm, dc_all_reduce(comm, send, recv, p->count, c->dtype, c->path, rs->stream));
  return GPU_DC(rs, comm, dc_reduce_scatter(comm, send, recv, p->count, c->dtype, c->path, rs->stream));
}

/* A watchdog timeout names the path and the host's timing of the run. */
static void dc_status(gpu_rank *rs, const gpu_plan *p, const int64_t host_ns[2]) {
  dc_comm comm = dc_of(rs, p, p->c->world);
  dc_result r = dc_comm_status(comm, NULL);
  if (r != dc_err_timeout) {
    GPU_DC(rs, comm, r);
    return;
  }
  char why[512];
  snprintf(why, sizeof(why), "%s path %s, %" PRIu64 " bytes: %s; host: launched after %.1f us, "
           "second barrier left after %.1f us", dc_mode_name(p->c->mode), dc_path_name(p->c->path),
           p->c->bytes, dc_comm_last_error(comm), host_ns[0] / 1e3, host_ns[1] / 1e3);
  gpu_fail(rs, tune_err_detcoll, dc_op_name(p->c->op), why);
}

static dc_path dc_chosen(gpu_rank *rs, const gpu_plan *p, dc_mode mode) {
  dc_path chosen = p->c->path;
  if (chosen != DC_PATH_AUTO) return chosen;
  dc_comm comm = dc_of(rs, p, p->c->world);
  GPU_DC(rs, comm,
         dc_query_path(comm, p->c->op, p->c->dtype, rs->in[0] + p->c->in_offset,
                       rs->out + GPU_GUARD + p->c->out_offset, p->c->bytes, mode, &chosen));
  return chosen;
}

static double dc_tolerance(const tune_cfg *c) {
  (void)c;
  return 0; /* the determinism contract: bitwise */
}

/* Peers' mappings of this rank's windows close with them. In process the
 * engine's thread destroys the groups (gpu_detcoll_destroy_local). */
static void dc_disconnect(gpu_backend *b, gpu_rank *rs, int slot) {
  char *bufs[GPU_WIN_COUNT] = {rs->in[0], rs->in[1], rs->out};
  for (int w = 0; w < DC_MAX_WORLD && !b->lops->single_process; w++) {
    dc_comm comm = rs->dc[slot][w];
    if (comm == NULL) continue;
    for (int k = 0; dc_slot_reg(slot) && k < GPU_WIN_COUNT; k++)
      GPU_DC(rs, comm, dc_deregister(comm, bufs[k]));
    GPU_DC(rs, NULL, dc_comm_destroy(comm)); /* freed either way: no message to read from it */
    rs->dc[slot][w] = NULL;
  }
}

/* Each impl's hooks, on its own slot. */
#define DC_SLOT_HOOKS(sfx, slot)                                                                   \
  static tune_result dc_connect_local_##sfx(gpu_backend *b, int world) {                         \
    return dc_local_comms(b, world, slot);                                                       \
  }                                                                                              \
  static void dc_connect_##sfx(gpu_backend *b, gpu_rank *rs, int world) {                        \
    dc_ipc_comm(b, rs, world, slot);                                                             \
  }                                                                                              \
  static void dc_disconnect_##sfx(gpu_backend *b, gpu_rank *rs) { dc_disconnect(b, rs, slot); }
DC_SLOT_HOOKS(plain, 0)
DC_SLOT_HOOKS(reg, 1)
DC_SLOT_HOOKS(plain_prev, 2)
DC_SLOT_HOOKS(reg_prev, 3)
#undef DC_SLOT_HOOKS

#define DC_OPS(nm, sfx, unsup)                                                               \
  {                                                                                          \
    .name = nm, .detcoll = 1, .unsupported = unsup, .connect_local = dc_connect_local_##sfx, \
    .connect = dc_connect_##sfx, .issue = dc_issue, .status = dc_status,                     \
    .chosen = dc_chosen, .tolerance = dc_tolerance, .disconnect = dc_disconnect_##sfx,       \
  }
const gpu_impl_ops gpu_impl_detcoll = DC_OPS("detcoll", plain, dc_unsupported);
const gpu_impl_ops gpu_impl_detcoll_reg = DC_OPS("detcoll_reg", reg, dc_unsupported);
const gpu_impl_ops gpu_impl_detcoll_prev = DC_OPS("detcoll_prev", plain_prev, dc_prev_unsupported);
const gpu_impl_ops gpu_impl_detcoll_reg_prev = DC_OPS("detcoll_reg_prev", reg_prev, dc_prev_unsupported);
#undef DC_OPS

tune_result gpu_detcoll_set_table(void *ctx, int rank) {
  const gpu_table_ctx *x = ctx;
  gpu_backend *b = x->b;
  gpu_rank *rs = gpu_local(b, rank);
  for (int slot = 0; slot < GPU_DC_SLOTS; slot++) {
    if (dc_slot_prev(slot) != (x->slot == TUNE_TABLE_PREVIOUS)) continue; /* the other table's comms */
    size_t n;
    const dc_threshold_row *table = dc_slot_table(b, slot, &n);
    for (int w = 0; w < DC_MAX_WORLD; w++)
      if (rs->dc[slot][w] && !GPU_DC(rs, rs->dc[slot][w], dc_comm_set_table(rs->dc[slot][w], table, n)))
        return rs->err;
  }
  /* Graphs of auto dispatch from the table that changed froze its paths;
   * forced paths, and the other table's graphs, keep theirs. */
  for (int i = 0; i < GPU_GRAPHS; i++)
    if (rs->graphs[i].used && rs->graphs[i].ops->detcoll &&
        rs->graphs[i].key.path == DC_PATH_AUTO &&
        dc_is_prev(rs->graphs[i].ops) == (x->slot == TUNE_TABLE_PREVIOUS))
      gpu_graph_drop(&rs->graphs[i]);
  return tune_ok;
}

/* Virtual ranks rest on CUDA running every rank's kernel at once, which
 * CUDA does not promise (seen: a rank's kernel held back for the whole 5 s
 * timeout although every rank launched within 0.1 ms); ranks on GPUs of
 * their own do not, and are never retried. */
int gpu_detcoll_retry_watchdog(gpu_backend *b, int world) {
  int timeouts = 0, made[GPU_DC_SLOTS] = {0};
  if (!b->virtual_ranks || !b->lops->single_process) return 0;
  for (int slot = 0; slot < GPU_DC_SLOTS; slot++) {
    made[slot] = b->local[0].dc[slot][world - 1] != NULL;
    for (int r = 0; r < world && made[slot]; r++)
      timeouts += dc_comm_status(b->local[r].dc[slot][world - 1], NULL) == dc_err_timeout;
  }
  if (timeouts == 0) return 0;
  TUNE_WARN(TUNE_BACKEND,
            "world %d: watchdog timeout with virtual ranks (CUDA held a rank's kernel back); measuring "
            "again once on fresh communicators",
            world);
  for (int r = 0; r < world; r++) {
    gpu_rank *rs = &b->local[r];
    for (int i = 0; i < GPU_GRAPHS; i++)
      if (rs->graphs[i].used && rs->graphs[i].ops->detcoll && rs->graphs[i].key.world == world)
        gpu_graph_drop(&rs->graphs[i]);
    for (int slot = 0; slot < GPU_DC_SLOTS; slot++) {
      dc_comm_destroy(rs->dc[slot][world - 1]);
      rs->dc[slot][world - 1] = NULL;
    }
  }
  for (int slot = 0; slot < GPU_DC_SLOTS; slot++)
    if (made[slot] && dc_local_comms(b, world, slot) != tune_ok) return 0;
  return 1;
}

void gpu_detcoll_destroy_local(gpu_backend *b) {
  for (int l = 0; b->local && b->lops->single_process && l < b->nlocal; l++)
    for (int w = 0; w < DC_MAX_WORLD; w++)
      for (int slot = 0; slot < GPU_DC_SLOTS; slot++)
        if (b->local[l].dc[slot][w]) dc_comm_destroy(b->local[l].dc[slot][w]);
}
