/* param.c: tune_param values, command line over environment over default,
 * both parsed by one parser against one range. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "tune.h"

/* A decimal integer in [p->lo, p->hi], as every number tune reads; no sign
 * but a leading '-', no spaces, no junk, no overflow. */
static tune_result param_parse(const tune_param *p, const char *s, int64_t *out) {
  if (s == NULL || !(isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1]))))
    return tune_err_arg;
  char *end;
  /* Base 10, not 0, which would read 010 as octal and 0x10 as hex. */
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < p->lo || v > p->hi) return tune_err_arg;
  *out = v;
  return tune_ok;
}

tune_result tune_param_load(tune_param *p) {
  if (p->state != 0) return tune_ok;
  p->value = p->def;
  p->state = 1;
  char env[128];
  snprintf(env, sizeof(env), "TUNE_%s", p->env);
  const char *s = getenv(env);
  if (s == NULL) return tune_ok;
  int64_t v;
  if (param_parse(p, s, &v) != tune_ok) {
    tune_error("%s='%s' is not a number in %" PRId64 "..%" PRId64, env, s, p->lo, p->hi);
    return tune_err_arg;
  }
  p->value = v;
  TUNE_INFO(TUNE_PARAMS, "%s set by environment %s=%" PRId64, p->name, env, p->value);
  return tune_ok;
}

int64_t tune_param_get(tune_param *p) {
  (void)tune_param_load(p);
  return p->value;
}

tune_result tune_param_set_str(tune_param *p, const char *s) {
  int64_t v;
  TUNE_CHECK(param_parse(p, s, &v));
  p->value = v;
  p->state = 2;
  TUNE_INFO(TUNE_PARAMS, "%s set by command line to %" PRId64, p->name, v);
  return tune_ok;
}
