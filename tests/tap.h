/* tap.h: the test helpers every C test uses. Tests print TAP-style lines for
 * people and report through their exit status to automake's harness:
 * 0 all passed, 1 something failed, 77 skipped (e.g. no GPU). */
#ifndef TUNE_TAP_H
#define TUNE_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_count, tap_failed;

/* Record one check; prints "ok N - what" or "not ok N - what". Returns cond. */
static inline int tap_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int tap_ok(int cond, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%s %d - ", cond ? "ok" : "not ok", ++tap_count);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  if (!cond) tap_failed++;
  fflush(stdout);
  return cond;
}

/* A comment line ("# ..."). */
static inline void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void tap_diag(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("# ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
}

/* Skip the whole test (exit 77). */
static inline void tap_skip_all(const char *why) {
  printf("1..0 # SKIP %s\n", why);
  exit(77);
}

/* Print the plan and return the exit status for main(). */
static inline int tap_done(void) {
  printf("1..%d\n", tap_count);
  if (tap_failed) printf("# %d of %d checks failed\n", tap_failed, tap_count);
  return tap_failed || tap_count == 0 ? 1 : 0;
}

#endif /* TUNE_TAP_H */
