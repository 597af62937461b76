/* test_util.c: size parsing, integer parsing, growing arrays, size
 * formatting, parameters (command line over environment over default) and
 * the seeded PRNG. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "tune.h"

TUNE_PARAM(TestKnob, "TEST_KNOB", 7, 0, 100);
TUNE_PARAM(TestBad, "TEST_BAD", 3, 0, 100);
TUNE_PARAM(TestCli, "TEST_CLI", 5, 0, 100);

int main(void) {
  static const struct {
    const char *s;
    uint64_t v;
  } good[] = {{"0", 0},          {"1", 1},           {"4096", 4096},        {"1K", 1024},
              {"1k", 1024},      {"3KiB", 3072},     {"2M", 2u << 20},      {"256MiB", 256u << 20},
              {"1G", 1ull << 30}, {"64GiB", 64ull << 30}, {"17B", 17},     {"5MB", 5u << 20}};
  for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
    uint64_t v = 0;
    tune_result r = tune_parse_size(good[i].s, &v);
    tap_ok(r == tune_ok && v == good[i].v, "size '%s' = %" PRIu64 " (got %" PRIu64 ")", good[i].s, good[i].v, v);
  }
  static const char *const bad[] = {"", "K", "-1", "+5", "1X", "1.5M", "1 K", "1KiBB", "99999999999999999999",
                                    "17179869184G", " 1"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    uint64_t v = 12345;
    tune_result r = tune_parse_size(bad[i], &v);
    tap_ok(r == tune_err_arg && v == 12345, "size '%s' rejected, output untouched", bad[i]);
  }
  tap_ok(tune_parse_size(NULL, &(uint64_t){0}) == tune_err_arg, "NULL size rejected");

  int64_t iv = 0;
  tap_ok(tune_parse_int("42", 0, 100, &iv) == tune_ok && iv == 42, "int 42");
  tap_ok(tune_parse_int("-3", -5, 5, &iv) == tune_ok && iv == -3, "int -3");
  tap_ok(tune_parse_int("101", 0, 100, &iv) == tune_err_arg, "int over range rejected");
  tap_ok(tune_parse_int("7a", 0, 100, &iv) == tune_err_arg, "int with junk rejected");
  tap_ok(tune_parse_int("", 0, 100, &iv) == tune_err_arg, "empty int rejected");

  /* tune_grow: room for one more, doubling, the contents kept. */
  int *items = NULL;
  size_t nitems = 0, cap = 0, caps = 0;
  int grew = 1;
  for (int i = 0; i < 100 && grew; i++) {
    size_t was = cap;
    grew = tune_grow((void **)&items, &cap, nitems, sizeof(*items), 4) == tune_ok && cap > nitems;
    caps += cap != was;
    if (grew) items[nitems++] = i;
  }
  for (size_t i = 0; i < nitems && grew; i++) grew = items[i] == (int)i;
  tap_ok(grew && nitems == 100 && cap == 128 && caps == 6,
         "tune_grow: 100 items kept, room 4 -> 128 in 6 steps");
  free(items);

  char buf[32];
  tap_ok(strcmp(tune_format_size(4096, buf, sizeof(buf)), "4K") == 0, "format 4096 -> 4K");
  tap_ok(strcmp(tune_format_size(256u << 20, buf, sizeof(buf)), "256M") == 0, "format 256 MiB -> 256M");
  tap_ok(strcmp(tune_format_size(1536, buf, sizeof(buf)), "1536") == 0, "format 1536 stays exact");

  /* Parameters: default, environment, command line over environment, bad environment. */
  unsetenv("TUNE_TEST_KNOB");
  setenv("TUNE_TEST_BAD", "12abc", 1);
  setenv("TUNE_TEST_CLI", "9", 1);
  tap_ok(tune_param_get(&tune_param_TestKnob) == 7, "param default");
  tap_ok(tune_param_load(&tune_param_TestBad) == tune_err_arg,
         "malformed environment value is an error");
  tap_ok(tune_param_get(&tune_param_TestBad) == 3, "malformed environment value keeps the default");
  tap_ok(tune_param_get(&tune_param_TestCli) == 9, "environment overrides default");
  tap_ok(tune_param_set_str(&tune_param_TestCli, "11") == tune_ok, "command line value accepted");
  tap_ok(tune_param_get(&tune_param_TestCli) == 11, "command line overrides environment");
  setenv("TUNE_TEST_KNOB", "0x10", 1);
  tune_param TestFresh = {"TestFresh", "TEST_KNOB", 7, 0, 100, 0, 0};
  tap_ok(tune_param_load(&TestFresh) == tune_err_arg && tune_param_get(&TestFresh) == 7,
         "hex is refused, as by every number tune reads");
  /* Decimal whatever the leading zeros: not octal. */
  tap_ok(tune_param_set_str(&tune_param_TestCli, "010") == tune_ok && tune_param_get(&tune_param_TestCli) == 10,
         "010 is ten");
  tap_ok(tune_param_set_str(&tune_param_TestCli, "09") == tune_ok && tune_param_get(&tune_param_TestCli) == 9,
         "09 is nine");
  /* One range for both (issue 16): below it, negative, wrapping past 32 bits. */
  static const char *const out_of_range[] = {"2", "0", "-5", "4294967299", "101"};
  for (size_t i = 0; i < sizeof(out_of_range) / sizeof(out_of_range[0]); i++) {
    tune_param env = {"TestRange", "TEST_RANGE", 5, 3, 100, 0, 0}, cli = env;
    setenv("TUNE_TEST_RANGE", out_of_range[i], 1);
    tap_ok(tune_param_load(&env) == tune_err_arg && tune_param_get(&env) == 5,
           "environment value %s outside 3..100 refused", out_of_range[i]);
    tap_ok(tune_param_set_str(&cli, out_of_range[i]) == tune_err_arg,
           "command line value %s outside 3..100 refused", out_of_range[i]);
  }

  /* PRNG: same seed, same stream; different seeds differ; uniform mean and normal variance sane. */
  tune_rng a, b, c;
  tune_rng_seed(&a, 42);
  tune_rng_seed(&b, 42);
  tune_rng_seed(&c, 43);
  int same = 1, diff = 0;
  for (int i = 0; i < 1000; i++) {
    uint64_t x = tune_rng_next(&a), y = tune_rng_next(&b), z = tune_rng_next(&c);
    same &= x == y;
    diff += x != z;
  }
  tap_ok(same, "same seed gives the same stream");
  tap_ok(diff > 990, "different seeds give different streams");
  double sum = 0, sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; i++) {
    double u = tune_rng_uniform(&a), g = tune_rng_normal(&a);
    sum += u;
    sq += g * g;
  }
  tap_ok(fabs(sum / n - 0.5) < 0.005, "uniform mean %.4f near 0.5", sum / n);
  tap_ok(fabs(sq / n - 1.0) < 0.02, "normal variance %.4f near 1", sq / n);
  return tap_done();
}
