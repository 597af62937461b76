/* topo.h: CPU affinity for rank threads and processes. A rank runs on the
 * cores local to its GPU: hwloc (I/O discovery on) finds the GPU's PCI
 * device and the cpuset of its nearest non-I/O ancestor (a NUMA node or
 * package). Where the GPU is not in the topology (a VM with one NUMA node,
 * no PCI information), or where this process may not run on those cores (a
 * cgroup), the rank may use every core it may run on. Pinning is best effort:
 * a failure is a warning, never an error. CUDA-free: the caller passes the
 * GPU's PCI bus id ("0000:18:00.0", as cudaDeviceGetPCIBusId writes it). */
#ifndef TUNE_TOPO_H
#define TUNE_TOPO_H

#include <stddef.h>

#include "tune.h"

typedef struct tune_topo tune_topo;

/* Load the machine's topology. Never fails: without hwloc, or when hwloc
 * cannot load, *out is a topology that pins nothing (and says so once). */
tune_result tune_topo_open(tune_topo **out);

/* Pin the calling thread to the cores local to the GPU at busid; logs the
 * cores at INFO as "rank N: GPU busid -> cores 0-15". */
void tune_topo_pin_thread(tune_topo *t, const char *busid, int rank);

/* The cores tune_topo_pin_thread pins a rank of the GPU at busid to, as a
 * list ("0-3,8-11") in buf[0..n): 1 where hwloc knows the GPU (the cores
 * of its nearest non-I/O ancestor that this process may run on), 0 where
 * it does not, 2 where the process may run on none of them (a cgroup) --
 * both every core the process may run on -- and -1 where nothing is pinned
 * (no hwloc, or no topology; buf is ""). */
int tune_topo_gpu_cores(tune_topo *t, const char *busid, char *buf, size_t n);

/* NULL is a no-op. */
void tune_topo_close(tune_topo *t);

#endif /* TUNE_TOPO_H */
