/* util.c: size and integer parsing, clocks, and the seeded PRNG. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "tune.h"

static const struct {
  const char *suffix;
  unsigned shift;
} size_suffixes[] = {
    {"", 0},   {"B", 0},    {"K", 10},   {"KiB", 10}, {"KB", 10}, {"M", 20},
    {"MiB", 20}, {"MB", 20}, {"G", 30},   {"GiB", 30}, {"GB", 30},
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

tune_result tune_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  if (s == NULL || !(isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1]))))
    return tune_err_arg;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return tune_err_arg;
  *out = v;
  return tune_ok;
}

const char *tune_format_size(uint64_t bytes, char *buf, size_t len) {
  static const char *const units[] = {"", "K", "M", "G"};
  unsigned u = 0;
  uint64_t v = bytes;
  while (u < 3 && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    u++;
  }
  snprintf(buf, len, "%" PRIu64 "%s", v, units[u]);
  return buf;
}

int64_t tune_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void tune_utc_iso(char *buf, size_t len) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void tune_rng_seed(tune_rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t tune_rng_next(tune_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double tune_rng_uniform(tune_rng *r) { return (double)(tune_rng_next(r) >> 11) * 0x1.0p-53; }

double tune_rng_normal(tune_rng *r) {
  double u1 = tune_rng_uniform(r), u2 = tune_rng_uniform(r);
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
