/* backends.c: the table of measurement backends. */
#include <string.h>

#include "backend.h"

static const tune_backend_ops *const backends[] = {&tune_backend_sim, &tune_backend_gpu};

const tune_backend_ops *tune_backend_find(const char *name) {
  for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
    if (strcmp(backends[i]->name, name) == 0) return backends[i];
  return NULL;
}
