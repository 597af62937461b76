/* tap.h: the test helpers every C test uses. Tests print TAP-style lines for
 * people and report through their exit status to automake's harness:
 * 0 all passed, 1 something failed, 77 skipped (e.g. no GPU). */
#ifndef TUNE_TAP_H
#define TUNE_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

/* The whole file at path, NUL-terminated, malloc'd (NULL if unreadable);
 * its length in *len when len is not NULL. */
static inline char *tap_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  long n;
  if (len) *len = 0;
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (buf = malloc((size_t)n + 1)) != NULL) {
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
      free(buf);
      buf = NULL;
    } else {
      buf[n] = '\0';
      if (len) *len = (size_t)n;
    }
  }
  fclose(f);
  return buf;
}

/* The test's scratch folder, made by tap_scratch_open("name") as
 * $TMPDIR/name.XXXXXX and removed by tap_scratch_close() when the test
 * passed (a failed test leaves it for a look). */
static char tap_scratch[256];

/* 0 once the folder exists; -1 (after a "Bail out!" line) if it cannot. */
static inline int tap_scratch_open(const char *name) {
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  snprintf(tap_scratch, sizeof(tap_scratch), "%s/%s.XXXXXX", tmp, name);
  if (mkdtemp(tap_scratch) == NULL) {
    printf("Bail out! mkdtemp %s\n", tap_scratch);
    return -1;
  }
  tap_diag("scratch directory %s", tap_scratch);
  return 0;
}

/* Remove the scratch folder if status (tap_done()'s) says the test passed. */
static inline void tap_scratch_close(int status) {
  char cmd[600];
  if (status != 0) return;
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tap_scratch);
  if (system(cmd) != 0) tap_diag("could not remove %s", tap_scratch);
}

/* name inside the scratch folder; the last 8 results stay valid. */
static inline const char *tap_path(const char *name) {
  static char buf[8][512];
  static int next;
  char *p = buf[next++ % 8];
  snprintf(p, 512, "%s/%s", tap_scratch, name);
  return p;
}

static inline int tap_file_exists(const char *path) { return access(path, F_OK) == 0; }

/* Print the plan and return the exit status for main(). */
static inline int tap_done(void) {
  printf("1..%d\n", tap_count);
  if (tap_failed) printf("# %d of %d checks failed\n", tap_failed, tap_count);
  return tap_failed || tap_count == 0 ? 1 : 0;
}

#endif /* TUNE_TAP_H */
