/* cli.c: the usage-error convention shared by the tune subcommands. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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

int tune_check_list_items(const char *cmd, const char *opt, const char *list) {
  size_t n = strlen(list);
  if (n > 0 && (list[0] == ',' || list[n - 1] == ',' || strstr(list, ",,") != NULL))
    return tune_usage_error(cmd, "%s: '%s' has an empty item", opt, list);
  return 0;
}

int tune_gate_exit_status(tune_result r) {
  return r == tune_ok || r == tune_err_interrupted ? tune_exit_status(r) : TUNE_EXIT_USAGE;
}

tune_result tune_stdout_flush(void) {
  if (fflush(stdout) == 0 && !ferror(stdout)) return tune_ok;
  tune_error("standard output: %s", strerror(errno ? errno : EIO));
  return tune_err_system;
}
