/* fuzz_size.c: libFuzzer target for tune_parse_size and tune_parse_int: any
 * string either fails or gives a value that is in range and, for sizes,
 * survives tune_format_size and parsing back. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (s == NULL) return 0;
  memcpy(s, data, size);
  s[size] = '\0';
  uint64_t b, back;
  if (tune_parse_size(s, &b) == tune_ok) {
    char text[32];
    tune_format_size(b, text, sizeof(text));
    if (tune_parse_size(text, &back) != tune_ok || back != b) {
      fprintf(stderr, "fuzz_size: '%s' -> %" PRIu64 " -> '%s' does not parse back\n", s, b, text);
      abort();
    }
  }
  static const int64_t bounds[][2] = {{0, INT64_MAX}, {1, 1024}, {-5, 5}, {INT64_MIN, INT64_MAX}};
  for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++) {
    int64_t v;
    if (tune_parse_int(s, bounds[i][0], bounds[i][1], &v) == tune_ok &&
        (v < bounds[i][0] || v > bounds[i][1])) {
      fprintf(stderr, "fuzz_size: '%s' -> %" PRId64 " is outside its bounds\n", s, v);
      abort();
    }
  }
  free(s);
  return 0;
}
