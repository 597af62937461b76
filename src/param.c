/* param.c: tune_param values, command line over environment over default. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "tune.h"

int64_t tune_param_get(tune_param *p) {
  if (p->state != 0) return p->value;
  p->value = p->def;
  p->state = 1;
  char env[128];
  snprintf(env, sizeof(env), "TUNE_%s", p->env);
  const char *s = getenv(env);
  if (s == NULL) return p->value;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 0);
  if (errno != 0 || end == s || *end != '\0') {
    TUNE_WARN(TUNE_PARAMS, "%s=%s is not an integer; %s stays %" PRId64, env, s, p->name, p->def);
    return p->value;
  }
  p->value = v;
  TUNE_INFO(TUNE_PARAMS, "%s set by environment %s=%" PRId64, p->name, env, p->value);
  return p->value;
}

void tune_param_set(tune_param *p, int64_t v) {
  p->value = v;
  p->state = 2;
  TUNE_INFO(TUNE_PARAMS, "%s set by command line to %" PRId64, p->name, v);
}
