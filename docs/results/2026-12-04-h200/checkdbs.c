#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include "store.h"
int main(int argc, char **argv) {
  int bad = 0;
  for (int i = 1; i < argc; i++) {
    tune_store *st = NULL;
    if (tune_store_open(argv[i], 1, &st) != tune_ok) { printf("OPEN FAIL %s\n", argv[i]); continue; }
    tune_result r = tune_store_check_rows(st, 0);
    if (r != tune_ok) { printf("BAD %s\n", argv[i]); bad++; }
    tune_store_close(st);
  }
  printf("%d bad of %d\n", bad, argc - 1);
  return 0;
}
