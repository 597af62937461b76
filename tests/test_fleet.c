/* test_fleet.c: a fleet's node names as file names. Every node's database,
 * header and log are named after its node (its host name), so two nodes
 * whose names give one file name would write one database: refused. */
#include <string.h>

#include "fleet.h"
#include "tap.h"

static int distinct(const char *a, const char *b) {
  const char *names[3] = {"gpu-node-01", a, b};
  return tune_fleet_check_names(names, 3) == tune_ok;
}

int main(void) {
  char out[32];
  tune_fleet_file_name("node 7/a#1", out, sizeof(out));
  tap_ok(strcmp(out, "node_7_a_1") == 0, "a name as a file name: only [A-Za-z0-9._-] kept (%s)", out);
  tune_fleet_file_name("abcdefgh", out, 5);
  tap_ok(strcmp(out, "abcd") == 0, "cut to its room (%s)", out);
  tap_ok(distinct("gpu-node-02", "gpu-node-03"), "three host names: three nodes");
  tap_ok(!distinct("gpu-node-02", "gpu-node-02"), "two nodes of one host name (containers): refused");
  tap_ok(!distinct("rack 1", "rack_1"), "two names alike as file names: refused");
  tap_ok(!distinct("gpu-node-01", "x"), "the first and second alike: refused");
  tap_ok(distinct("gpu-node-1", "gpu-node-10"), "a name that begins another: two nodes");
  return tap_done();
}
