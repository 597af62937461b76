/* size.c: byte sizes (tune_parse_size, tune.h), one parser for tune and
 * bench_detcoll. */
#include "tune.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <strings.h>

static const struct {
  const char *suffix;
  unsigned shift;
} size_suffixes[] = {
    {"", 0},     {"B", 0},   {"K", 10}, {"KiB", 10}, {"KB", 10}, {"M", 20},
    {"MiB", 20}, {"MB", 20}, {"G", 30}, {"GiB", 30}, {"GB", 30},
};

tune_result tune_parse_size(const char *s, uint64_t *out) {
  if (s == NULL || !isdigit((unsigned char)s[0])) return tune_err_arg;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0) return tune_err_arg;
  for (size_t i = 0; i < sizeof(size_suffixes) / sizeof(size_suffixes[0]); i++) {
    if (strcasecmp(end, size_suffixes[i].suffix) != 0) continue;
    unsigned sh = size_suffixes[i].shift;
    if (sh > 0 && v > (UINT64_MAX >> sh)) return tune_err_arg;
    *out = (uint64_t)v << sh;
    return tune_ok;
  }
  return tune_err_arg;
}
