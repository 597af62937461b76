/* bench_args.c: bench_detcoll's option parsing (kernels/bench_opts.c) on a
 * machine without a GPU: prints the world, the offset, the sizes, the trials
 * (timed, warm-up), the check and the dtype bench_parse made of argv, one
 * line each, for tests/bench_args.sh. */
#include <stdio.h>

#include "bench_opts.h"

int main(int argc, char **argv) {
  bench_opts o;
  bench_parse(argc, argv, &o);
  printf("world %d\noffset %d\nsizes", o.world, o.offset);
  for (int i = 0; i < o.nsizes; i++) printf(" %zu", o.sizes[i]);
  printf("\ntrials %d %d\ncheck %d\ndtype %s\n", o.iters, o.warmup, o.check,
         dc_dtype_name(o.dtype));
  return 0;
}
