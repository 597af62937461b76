/* db_file.c: see db_file.h. */
#include "db_file.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* 1 if path is (or leads to) a regular file that begins as an SQLite
 * database does. */
static int is_sqlite(const char *path) {
  struct stat st;
  char head[16];
  int yes = 0;
  FILE *f = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? fopen(path, "rb") : NULL;
  if (f != NULL) {
    yes = fread(head, 1, sizeof(head), f) == sizeof(head) && memcmp(head, "SQLite format 3", sizeof(head)) == 0;
    fclose(f);
  }
  return yes;
}

const char *tune_database_file(const char *path) {
  static const char *const companions[] = {"-wal", "-shm", "-journal"};
  char stem[PATH_MAX];
  size_t n = strlen(path);
  if (is_sqlite(path)) return "it is an SQLite database, which tune writes only as --db";
  for (size_t i = 0; i < sizeof(companions) / sizeof(companions[0]); i++) {
    size_t k = strlen(companions[i]);
    if (n <= k || n - k >= sizeof(stem) || strcmp(path + n - k, companions[i]) != 0) continue;
    snprintf(stem, sizeof(stem), "%.*s", (int)(n - k), path);
    if (is_sqlite(stem))
      return "it is the -wal, -shm or -journal file SQLite keeps beside a database, which holds "
             "that database's data";
  }
  return NULL;
}
