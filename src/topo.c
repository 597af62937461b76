/* topo.c: hwloc-based CPU affinity (see topo.h). */
#include "topo.h"

#include <stdio.h>
#include <stdlib.h>

#include "config.h"

#ifdef HAVE_HWLOC
#include <hwloc.h>
#endif

struct tune_topo {
#ifdef HAVE_HWLOC
  hwloc_topology_t hw; /* NULL: hwloc did not load */
#else
  int none; /* C has no empty structs */
#endif
};

tune_result tune_topo_open(tune_topo **out) {
  tune_topo *t = calloc(1, sizeof(*t));
  if (t == NULL) return tune_err_system;
#ifdef HAVE_HWLOC
  if (hwloc_topology_init(&t->hw) != 0) {
    TUNE_WARN(TUNE_LAUNCH, "hwloc_topology_init failed: rank threads are not pinned");
    t->hw = NULL;
  } else if (hwloc_topology_set_io_types_filter(t->hw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0 ||
             hwloc_topology_load(t->hw) != 0) {
    TUNE_WARN(TUNE_LAUNCH, "hwloc could not load the topology: rank threads are not pinned");
    hwloc_topology_destroy(t->hw);
    t->hw = NULL;
  }
#else
  TUNE_INFO(TUNE_LAUNCH, "built without hwloc: rank threads are not pinned");
#endif
  *out = t;
  return tune_ok;
}

#ifdef HAVE_HWLOC
/* The cpuset a rank of the GPU at busid runs on (malloc'd: the caller
 * frees it; NULL out of memory): its nearest non-I/O ancestor's cores that
 * this process may run on. *how: 1 those, 0 the GPU is not in the topology,
 * 2 none of its cores is allowed (a cgroup, a container's cpuset, where hwloc
 * keeps the package with an empty cpuset) -- in both, every allowed core. */
static hwloc_bitmap_t topo_gpu_set(tune_topo *t, const char *busid, int *how) {
  hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(t->hw, busid);
  hwloc_obj_t near = pci ? hwloc_get_non_io_ancestor_obj(t->hw, pci) : NULL;
  hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(t->hw);
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (set == NULL) return NULL;
  if (near && near->cpuset && hwloc_bitmap_and(set, near->cpuset, allowed) == 0 &&
      !hwloc_bitmap_iszero(set)) {
    *how = 1;
    return set;
  }
  *how = pci ? 2 : 0;
  if (hwloc_bitmap_copy(set, allowed) != 0) {
    hwloc_bitmap_free(set);
    return NULL;
  }
  return set;
}
#endif

int tune_topo_gpu_cores(tune_topo *t, const char *busid, char *buf, size_t n) {
  if (n > 0) buf[0] = '\0';
#ifdef HAVE_HWLOC
  if (t == NULL || t->hw == NULL) return -1;
  int how = 0;
  hwloc_bitmap_t set = topo_gpu_set(t, busid, &how);
  if (set == NULL) return -1;
  if (n > 0 && hwloc_bitmap_list_snprintf(buf, n, set) < 0) buf[0] = '\0';
  hwloc_bitmap_free(set);
  return how;
#else
  (void)t;
  (void)busid;
  return -1;
#endif
}

void tune_topo_pin_thread(tune_topo *t, const char *busid, int rank) {
#ifdef HAVE_HWLOC
  static const char *const why[3] = {
      " (GPU not in the hwloc topology: all cores)", "",
      " (none of the GPU's cores is allowed to this process: all it may use)"};
  if (t == NULL || t->hw == NULL) return;
  int how = 0;
  hwloc_bitmap_t set = topo_gpu_set(t, busid, &how);
  char *list = NULL;
  if (set == NULL || hwloc_bitmap_list_asprintf(&list, set) < 0) list = NULL;
  if (set == NULL || hwloc_set_cpubind(t->hw, set, HWLOC_CPUBIND_THREAD) != 0)
    TUNE_WARN(TUNE_LAUNCH, "rank %d: could not pin to cores %s", rank, list ? list : "?");
  else
    TUNE_INFO(TUNE_LAUNCH, "rank %d: GPU %s -> cores %s%s", rank, busid, list ? list : "?",
              why[how]);
  free(list);
  hwloc_bitmap_free(set);
#else
  (void)t;
  (void)busid;
  (void)rank;
#endif
}

void tune_topo_close(tune_topo *t) {
  if (t == NULL) return;
#ifdef HAVE_HWLOC
  if (t->hw) hwloc_topology_destroy(t->hw);
#endif
  free(t);
}
