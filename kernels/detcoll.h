/* detcoll.h: libdetcoll, deterministic intra-node collectives (all-gather,
 * all-reduce, reduce-scatter) over CUDA peer memory.
 *
 * Determinism contract: every reduction evaluates, per element, the one
 * expression acc = float(x[0]); acc = acc + float(x[1]); ... acc + float(x[W-1])
 * (rank order, round-to-nearest fp32 adds, no FMA contraction, accumulator
 * starting from rank 0's value), rounded once to the dtype. Every path, grid,
 * threshold, mode (eager or CUDA graph) and run gives the same bits, equal to
 * a CPU fold in rank order. NaN inputs give a NaN result (payload unspecified).
 *
 * Ranks: one communicator per rank. In one process (dc_comm_create_local) a
 * rank is a (device, stream) pair; several ranks may share one device
 * ("virtual ranks"). Across processes (dc_comm_create_ipc) staging buffers
 * are shared through CUDA IPC handles exchanged by a caller-given allgather.
 *
 * Calling rules:
 * - Every rank of a communicator makes the same sequence of calls with the
 *   same op, count, dtype and forced path (pointers may differ); zero-size
 *   calls are no-ops and may be skipped by all ranks alike.
 * - Auto dispatch (DC_PATH_AUTO) picks the path on each rank from its own
 *   call, so every rank's call must give the same key: all ranks capture
 *   the call into a graph or none does, and every rank's send and recv are
 *   of one alignment class (dc_align_class of the pointers and
 *   dc_align_bytes; registered or not). The in-place forms below keep one
 *   class. Ranks whose pointers sit at different alignments must force a
 *   path: with differing paths a call returns wrong data or times out.
 * - Calls on one communicator are ordered on one stream (or streams ordered
 *   by events); each rank uses its own stream. Virtual ranks on one device
 *   need distinct streams, and may be driven from one host thread issuing
 *   each rank's call in turn: a kernel only waits for peers' kernels of the
 *   same call.
 * - Co-residency: a waiting block spins until its peers arrive, so every
 *   rank's blocks must be resident at once. The communicator bounds the grid
 *   per rank to (occupancy x SMs - headroom) / (ranks on that device); do not
 *   run other long kernels that fill the device concurrently with virtual
 *   ranks. A peer that never arrives is caught by the watchdog (timeout).
 * - Lazy loading: libdetcoll loads all its kernels when a communicator is
 *   created. A kernel of yours launched for the first time between the
 *   ranks' launches of one call is loaded then, and CUDA may make that load
 *   wait for running kernels -- ranks spinning for the rank being launched.
 *   Warm such kernels up first, or set CUDA_MODULE_LOADING=EAGER.
 * - send and recv may be equal (in place: for all_gather send may be recv +
 *   rank * bytes, for reduce_scatter recv may be send + rank * recvcount);
 *   other overlaps are undefined.
 * - Reductions need send and recv aligned to the element size; all_gather
 *   takes any alignment and byte count. 16-byte aligned pointers and sizes
 *   take the fully vectorized copies (dc_align_class() == DC_ALIGN_16).
 *
 * Thread safety: a communicator is used by one host thread at a time. */
#ifndef DETCOLL_H
#define DETCOLL_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "dc_table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most blocks of one kernel per rank. */
#define DC_MAX_BLOCKS 256

typedef enum {
  dc_ok = 0,
  dc_err_arg,         /* bad argument: null or misaligned pointer, bad dtype/path/world/config */
  dc_err_cuda,        /* a CUDA runtime call failed */
  dc_err_capacity,    /* past the staging capacity or a path's limit, or DC_MAX_WINDOWS */
  dc_err_device,      /* stream or pointer on the wrong device, no peer access, no GPU */
  dc_err_timeout,     /* a watchdog fired: a peer never arrived (dc_comm_status names it) */
  dc_err_unsupported, /* a valid request this build or machine cannot serve */
  dc_err_exchange,    /* the IPC exchange callback failed, or another rank failed */
  dc_err_no_memory,   /* host or device allocation failed */
  dc_result_count
} dc_result;

typedef struct dc_comm_s *dc_comm;

/* Communicator settings. Zero fields take defaults.
 * One more setting comes from the environment only: DC_PDL=1 (0 or unset:
 * off; any other value is dc_err_arg) launches every kernel but
 * copy_engine's flag kernels with programmatic dependent launch on sm_90+
 * devices, so its launch overlaps the end of the kernel ahead of it in the
 * stream. Results and stream order are unchanged: each kernel waits for
 * that one to complete before it touches memory. */
typedef struct {
  size_t staging_bytes; /* capacity in bytes per rank per call (0: 64 MiB); two
                           frames of this size are allocated per rank */
  uint64_t timeout_ns;  /* watchdog bound on every wait, at most an hour (0:
                           env DC_TIMEOUT_NS, else 5 s; a DC_TIMEOUT_NS that
                           is not a number of ns in that range, 0 for the
                           default, is dc_err_arg) */
  int max_blocks;       /* most blocks per rank for multi-block paths (0: about
                           SMs / ranks on the device, at most 128 for one rank per
                           device); always bounded by co-residency */
  int threads;          /* threads per block: 512 or 1024 (0: 512) */
} dc_config;

/* The exchange a multi-process launcher provides (e.g. MPI_Allgather on
 * MPI_BYTE): every rank passes bytes_per_rank bytes in send and receives all
 * ranks' contributions, in rank order, in recv. Returns 0 on success. */
typedef int (*dc_exchange_fn)(const void *send, void *recv, size_t bytes_per_rank, void *ctx);

/* A short description of r ("timeout: a peer never arrived"); never NULL. */
DC_API const char *dc_result_str(dc_result r);

/* The message of the last failed call on comm, naming the offending argument
 * (e.g. "dc_all_reduce: recv is not 2-byte aligned"); "" if none. Messages of
 * failed creations go to stderr when DC_DEBUG is set. */
DC_API const char *dc_comm_last_error(dc_comm comm);

/* Check cfg (NULL: every default) and the environment it falls back on
 * (DC_TIMEOUT_NS, DC_PDL) as creating a communicator would, touching no GPU: dc_ok,
 * or dc_err_arg with the reason in why[len] (why may be NULL). For a
 * program that wants to refuse bad settings before it starts its work. */
DC_API dc_result dc_config_check(const dc_config *cfg, char *why, size_t len);

/* Create world communicators in this process, one per rank: devices[r] is
 * rank r's device; a repeated device makes virtual ranks on it. Every pair of
 * distinct devices must have peer access (enabled here). cfg may be NULL.
 * On success comms[0..world-1] are set; on failure none are and the result
 * says why. 1 <= world <= DC_MAX_WORLD. Leaves the current device as it was. */
DC_API dc_result dc_comm_create_local(int world, const int *devices, const dc_config *cfg, dc_comm *comms);

/* The topology a communicator over these GPUs has, given by PCI bus id as
 * cudaDeviceGetPCIBusId writes it (every rank's GPU, repeats allowed): the
 * key auto dispatch looks its rows up by. DC_TOPO_SINGLE_GPU where all are
 * one GPU; DC_TOPO_PCIE where any two distinct GPUs lack native peer atomics
 * (peer access alone holds over PCIe too); DC_TOPO_NVLINK otherwise, a GPU
 * this process cannot see counted as NVLink-connected. Both ways of
 * creating a communicator find theirs by it. n >= 1; every id non-NULL. */
DC_API dc_result dc_topology(int n, const char *const *bus_ids, dc_topo *topo);

/* Create this process's rank of a world-rank communicator spanning processes
 * (one process per rank, or several on one device). Collective: every rank
 * calls it with the same world and cfg; allgather(ctx) carries the IPC
 * handles. If any rank fails, every rank fails: a rank that failed itself
 * returns its own error (after taking part in the exchange), the others
 * dc_err_exchange. Only a bad rank, world, allgather or out returns at
 * once (no exchange can be made with them). */
DC_API dc_result dc_comm_create_ipc(int rank, int world, int device, const dc_config *cfg,
                             dc_exchange_fn allgather, void *ctx, dc_comm *out);

/* Use rows[0..n) as comm's threshold table for auto dispatch from now on,
 * as FFTW imports wisdom: no rebuild is needed to try a table. The rows are
 * checked (dc_table_check) and copied; a malformed table is dc_err_arg with
 * the reason in dc_comm_last_error, and the comm keeps its table. rows NULL
 * and n 0 restore the default: the file named by DC_THRESHOLDS_FILE when
 * that is set (dc_table_read_file; a comm is created with it, and creation
 * fails with dc_err_arg when the file is malformed), else the table
 * compiled in. Not concurrently with a collective on comm; graphs captured
 * before keep the paths they captured. */
DC_API dc_result dc_comm_set_table(dc_comm comm, const dc_threshold_row *rows, size_t n);

/* Free comm's resources. Call once no kernel of any rank of the group can
 * still touch them (after synchronizing every rank's stream, or after a
 * timeout). Local groups: destroy every rank's comm. NULL is a no-op.
 * dc_err_cuda if a CUDA call failed on the way (comm is freed anyway: do
 * not pass it to dc_comm_last_error; with DC_DEBUG set the reason goes to
 * stderr). */
DC_API dc_result dc_comm_destroy(dc_comm comm);

/* ---- registered windows ----------------------------------------------------
 *
 * A window is a device buffer of the same size on every rank, registered
 * with every rank's communicator, so that peers' kernels (and copy engines)
 * reach the user's buffers directly: the paths that need it
 * (dc_path_needs_reg: DC_PATH_DIRECT, DC_PATH_COPY_ENGINE) skip the staging
 * copy. Like NCCL's symmetric windows, a call on registered buffers must
 * pass, on every rank, pointers at the same offset into its window of the
 * same registration (in-place all_gather, send = recv + rank * bytes, is
 * understood as such); auto dispatch then uses the table's DC_ALIGN_REG rows
 * (when send and recv both lie in windows and are 16-byte aligned, with a
 * byte count a multiple of 16). Unregistered buffers take the other paths.
 *
 * Windows must be device memory of the comm's device starting 16-byte
 * aligned: in one process any (cudaMalloc, ncclMemAlloc); across processes
 * memory that cudaIpcGetMemHandle exports (cudaMalloc, not cuMem/VMM
 * allocations). A range that overlaps a window of the comm is refused. At most
 * DC_MAX_WINDOWS per comm. Works in CUDA graphs: a captured call keeps the
 * peers' addresses it was launched with.
 *
 * dc_deregister removes a window on one rank; every rank deregisters its own.
 * In one process nothing is unmapped (the memory is the owner's to free);
 * across processes the peers' mappings of it are closed, so a graph captured
 * with that window that is replayed afterwards reads unmapped memory (an
 * illegal-address error on the device). Deregister only once no captured
 * call that uses the window will run again. */
#define DC_MAX_WINDOWS 16

/* Register ptrs[r] (bytes each) with comms[r], for every rank of a local
 * group at once (as dc_comm_create_local made it). All or nothing. */
DC_API dc_result dc_register_local(int world, const dc_comm *comms, void *const *ptrs, size_t bytes);

/* Register ptr (bytes) with this rank of an IPC communicator. Collective:
 * every rank calls it with the same bytes; allgather(ctx) carries the IPC
 * handles. ptr may lie anywhere in a cudaMalloc allocation (peers map the
 * allocation and add ptr's offset); [ptr, ptr + bytes) must not run past
 * its end. Fails on every rank if any rank fails, as dc_comm_create_ipc. */
DC_API dc_result dc_register_ipc(dc_comm comm, void *ptr, size_t bytes, dc_exchange_fn allgather,
                          void *ctx);

/* Remove the window that starts at ptr from comm. dc_err_arg if none does. */
DC_API dc_result dc_deregister(dc_comm comm, const void *ptr);

/* All-gather: recv[p * bytes_per_rank .. +bytes_per_rank) = send of rank p.
 * recv holds world * bytes_per_rank bytes. Any alignment, any byte count
 * (direct and copy_engine: send and recv registered, 16-byte aligned,
 * bytes a multiple of 16). Paths: push (at most DC_PUSH_MAX_BYTES per
 * rank), single_block, fused, multi_block, pipeline, direct, copy_engine.
 * path: DC_PATH_AUTO (threshold table) or a forced path of DC_OP_ALL_GATHER.
 * Returns without launching on any error. */
DC_API dc_result dc_all_gather(dc_comm comm, const void *send, void *recv, size_t bytes_per_rank,
                        dc_path path, cudaStream_t stream);

/* All-reduce (sum) of count elements of dtype, folded in rank order.
 * Paths: single_block, one_shot, two_shot, push (data+flag lines written
 * into every peer; at most DC_PUSH_MAX_BYTES per rank, beyond which a forced
 * push is dc_err_capacity and auto dispatch takes one_shot), pipeline
 * (copies and link transfers overlapped piece by piece), and direct
 * (registered send and recv: each rank folds its slice from every rank's
 * send and writes it into every rank's recv).
 * A forced path that needs registration, called with a buffer outside the
 * comm's windows (or not 16-byte aligned), is dc_err_arg, nothing launched. */
DC_API dc_result dc_all_reduce(dc_comm comm, const void *send, void *recv, size_t count, dc_dtype dtype,
                        dc_path path, cudaStream_t stream);

/* Reduce-scatter (sum): send holds world * recvcount elements; rank r gets
 * the rank-order fold of every rank's slice r in recv (recvcount elements).
 * Paths: push, single_block, multi_block, direct.
 * direct: registered send and recv, each rank folds its slice from every
 * rank's send (16-byte aligned, slices a multiple of 16 bytes). */
DC_API dc_result dc_reduce_scatter(dc_comm comm, const void *send, void *recv, size_t recvcount,
                            dc_dtype dtype, dc_path path, cudaStream_t stream);

/* The path a call would take, without launching: bytes_per_rank is each
 * rank's input size in bytes (all_gather: its chunk; all_reduce: the buffer;
 * reduce_scatter: its whole input), send/recv only give the alignment class
 * (DC_ALIGN_REG when both lie in the comm's windows); all_gather ignores
 * dtype (its table rows are bf16's: dc_table_dtype). mode picks the
 * table's eager or graph rows (the calls use graph rows while their stream
 * is capturing). Never returns DC_PATH_AUTO in *path. */
DC_API dc_result dc_query_path(dc_comm comm, dc_op op, dc_dtype dtype, const void *send, const void *recv,
                        size_t bytes_per_rank, dc_mode mode, dc_path *path);

/* Watchdog state. Call after synchronizing the comm's stream. dc_ok, or
 * dc_err_timeout with *missing_rank (may be NULL) set to the rank that never
 * arrived; the comm then refuses further calls and can only be destroyed. */
DC_API dc_result dc_comm_status(dc_comm comm, int *missing_rank);

/* Facts about a communicator into *info (dc_err_arg if comm or info is NULL). */
typedef struct {
  int rank, world, device;
  int sm;               /* compute capability as 10 * major + minor */
  dc_topo topo;         /* DC_TOPO_SINGLE_GPU when every rank is on one device */
  int ranks_on_device;  /* ranks sharing this rank's device */
  size_t staging_bytes; /* largest bytes per rank of a call that stages (direct and
                           copy_engine on registered windows take more) */
  int max_blocks;       /* grid bound of multi-block paths (same on every rank) */
  int threads;
  uint64_t timeout_ns;
  int pdl;              /* 1: kernels are launched with programmatic dependent
                           launch (DC_PDL=1 on an sm_90+ device and build) */
} dc_comm_info;

DC_API dc_result dc_comm_get_info(dc_comm comm, dc_comm_info *info);

/* Skew injection: enqueue on stream a one-thread kernel that spins on
 * %globaltimer for ns nanoseconds and, if d_measured_ns (a device pointer)
 * is not NULL, stores the delay it actually produced there. Works under
 * graph capture. */
DC_API dc_result dc_delay(cudaStream_t stream, uint64_t ns, uint64_t *d_measured_ns);

#ifdef __cplusplus
}
#endif
#endif /* DETCOLL_H */
