/* cli.c: the usage-error convention shared by the tune subcommands. */
#include "cli.h"

#include <stdio.h>

int tune_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "tune %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, " (see 'tune %s --help')\n", cmd);
  va_end(ap);
  return TUNE_EXIT_USAGE;
}

int tune_exit_status(tune_result r) {
  if (r == tune_err_interrupted) return 128 + tune_interrupt_signal();
  return r == tune_ok ? 0 : r == tune_err_arg ? TUNE_EXIT_USAGE : 1;
}
