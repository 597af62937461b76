/* test_topo.c: which cores a rank is pinned to (topo.h), on topologies
 * loaded from hwloc XML, as on a node this machine is not: two packages of
 * four cores (two hyperthreads each, Linux's numbering: package 0 holds
 * PUs 0-3 and 8-11), eight GPUs at a DGX H100/H200's bus ids, four behind
 * each package's host bridge. Each GPU's ranks get their own package's
 * cores, whatever the width of the bus id's domain and the case of its hex
 * digits (CUDA writes "0000:9A:00.0", nvidia-smi "00000000:9A:00.0"); a GPU
 * hwloc does not know gets every core; where the process may not run on its
 * package (a cgroup), every core it may run on. Skips (77) without hwloc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "tap.h"
#include "topo.h"

/* A DGX H100's GPUs: package 0 holds the first four. */
static const char *const gpus[8] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                                    "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};

/* One package: its NUMA node, four cores of two PUs, and a host bridge with
 * four GPUs, each behind a PCIe switch port. *gp numbers the objects. */
static void xml_package(FILE *f, int pkg, int *gp) {
  const unsigned mask = 0x0fu << (4 * pkg) | 0x0f00u << (4 * pkg);
  fprintf(f,
          "<object type=\"Package\" os_index=\"%d\" cpuset=\"0x%08x\" complete_cpuset=\"0x%08x\" "
          "nodeset=\"0x%x\" complete_nodeset=\"0x%x\" gp_index=\"%d\">\n",
          pkg, mask, mask, 1 << pkg, 1 << pkg, (*gp)++);
  fprintf(
      f,
      "<object type=\"NUMANode\" os_index=\"%d\" cpuset=\"0x%08x\" complete_cpuset=\"0x%08x\" "
      "nodeset=\"0x%x\" complete_nodeset=\"0x%x\" gp_index=\"%d\" local_memory=\"1073741824\"/>\n",
      pkg, mask, mask, 1 << pkg, 1 << pkg, (*gp)++);
  for (int c = 0; c < 4; c++) {
    int pu = 4 * pkg + c;
    unsigned cm = 1u << pu | 1u << (pu + 8);
    fprintf(f,
            "<object type=\"Core\" os_index=\"%d\" cpuset=\"0x%08x\" complete_cpuset=\"0x%08x\" "
            "gp_index=\"%d\">\n",
            pu, cm, cm, (*gp)++);
    for (int h = 0; h < 2; h++)
      fprintf(f,
              "<object type=\"PU\" os_index=\"%d\" cpuset=\"0x%08x\" complete_cpuset=\"0x%08x\" "
              "gp_index=\"%d\"/>\n",
              pu + 8 * h, 1u << (pu + 8 * h), 1u << (pu + 8 * h), (*gp)++);
    fprintf(f, "</object>\n");
  }
  fprintf(f,
          "<object type=\"Bridge\" gp_index=\"%d\" bridge_type=\"0-1\" depth=\"0\" "
          "bridge_pci=\"0000:[%02x-%02x]\">\n",
          (*gp)++, pkg ? 0x80 : 0x00, pkg ? 0xff : 0x7f);
  for (int g = 4 * pkg; g < 4 * pkg + 4; g++) {
    unsigned bus = (unsigned)strtoul(gpus[g] + 5, NULL, 16);
    fprintf(f,
            "<object type=\"Bridge\" gp_index=\"%d\" bridge_type=\"1-1\" depth=\"1\" "
            "bridge_pci=\"0000:[%02x-%02x]\" "
            "pci_busid=\"0000:%02x:00.0\" pci_type=\"0604 [1000:c030] [1000:a064] b0\" "
            "pci_link_speed=\"0\">\n",
            (*gp)++, bus, bus, bus - 1);
    fprintf(f,
            "<object type=\"PCIDev\" gp_index=\"%d\" pci_busid=\"%s\" "
            "pci_type=\"0302 [10de:2335] [10de:18be] a1\" pci_link_speed=\"0\"/>\n",
            (*gp)++, gpus[g]);
    fprintf(f, "</object>\n");
  }
  fprintf(f, "</object>\n</object>\n");
}

/* The node as hwloc XML at path, the process allowed the PUs of mask
 * `allowed` (a cgroup's, a container's); 0 on success. */
static int write_node(const char *path, unsigned allowed) {
  FILE *f = fopen(path, "w");
  int gp = 1;
  if (f == NULL) return -1;
  fprintf(
      f,
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
      "<topology version=\"2.0\">\n<object type=\"Machine\" os_index=\"0\" cpuset=\"0x0000ffff\" "
      "complete_cpuset=\"0x0000ffff\" allowed_cpuset=\"0x%08x\" nodeset=\"0x3\" "
      "complete_nodeset=\"0x3\" allowed_nodeset=\"0x3\" gp_index=\"%d\">\n",
      allowed, gp++);
  for (int pkg = 0; pkg < 2; pkg++) xml_package(f, pkg, &gp);
  fprintf(f, "</object>\n</topology>\n");
  return fclose(f) == 0 ? 0 : -1;
}

/* The GPU's bus id as another tool spells it: upper-case hex digits, an
 * eight-digit domain, or no domain at all. */
static void respell(const char *busid, int how, char *out, size_t n) {
  if (how == 1)
    snprintf(out, n, "0000%s", busid);
  else if (how == 2)
    snprintf(out, n, "%s", busid + 5);
  else
    snprintf(out, n, "%s", busid);
  for (char *p = out; how == 0 && *p; p++)
    if (*p >= 'a' && *p <= 'f') *p = (char)(*p - 'a' + 'A');
}

static void check_gpus(tune_topo *t) {
  static const char *const spelling[3] = {"upper-case hex", "eight-digit domain", "no domain"};
  for (int g = 0; g < 8; g++) {
    const char *want = g < 4 ? "0-3,8-11" : "4-7,12-15";
    char cores[64], id[32];
    int found = tune_topo_gpu_cores(t, gpus[g], cores, sizeof(cores));
    tap_ok(found == 1 && strcmp(cores, want) == 0,
           "GPU %d (%s): package %d's cores %s (got %d, %s)", g, gpus[g], g / 4, want, found,
           cores);
    for (int how = 0; how < 3; how++) {
      respell(gpus[g], how, id, sizeof(id));
      found = tune_topo_gpu_cores(t, id, cores, sizeof(cores));
      tap_ok(found == 1 && strcmp(cores, want) == 0, "GPU %d spelt %s (%s): %s (got %d, %s)", g,
             spelling[how], id, want, found, cores);
    }
  }
  char cores[64];
  int found = tune_topo_gpu_cores(t, "0000:c1:00.0", cores, sizeof(cores));
  tap_ok(found == 0 && strcmp(cores, "0-15") == 0,
         "a GPU hwloc does not know: every core (got %d, %s)", found, cores);
}

/* A job given package 1's cores alone (a Slurm cgroup, a container's
 * cpuset) on all eight GPUs: package 0's GPUs get the cores the job may
 * use, never an empty set (a bind that fails, leaving the rank unpinned). */
static void check_restricted(tune_topo *t) {
  for (int g = 0; g < 8; g += 4) {
    char cores[64];
    int found = tune_topo_gpu_cores(t, gpus[g], cores, sizeof(cores));
    tap_ok(found == (g < 4 ? 2 : 1) && strcmp(cores, "4-7,12-15") == 0,
           "only package 1 allowed: GPU %d's ranks get its cores 4-7,12-15 (got %d, %s)", g, found,
           cores);
  }
}

/* Load the node from XML (the PUs of mask allowed allowed) and run check. */
static void with_node(const char *path, unsigned allowed, void (*check)(tune_topo *)) {
  if (!tap_ok(write_node(path, allowed) == 0, "XML of a two-package node with eight GPUs written"))
    return;
  setenv("HWLOC_XMLFILE", path, 1);
  tune_topo *t = NULL;
  if (tap_ok(tune_topo_open(&t) == tune_ok && t != NULL, "topology opened")) {
    char cores[64];
    if (tap_ok(tune_topo_gpu_cores(t, gpus[0], cores, sizeof(cores)) >= 0, "hwloc loaded the XML"))
      check(t);
  }
  tune_topo_close(t);
}

int main(void) {
#ifndef HAVE_HWLOC
  tap_skip_all("built without hwloc");
#endif
  char dir[] = "/tmp/test_topo.XXXXXX", path[64];
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  snprintf(path, sizeof(path), "%s/node.xml", dir);
  with_node(path, 0xffff, check_gpus);
  with_node(path, 0xf0f0, check_restricted);
  unlink(path);
  rmdir(dir);
  printf("1..%d\n", tap_count);
  return tap_failed ? 1 : 0;
}
