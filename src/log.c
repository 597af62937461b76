/* log.c: the one logger (TUNE_DEBUG level, TUNE_DEBUG_SUBSYS mask) and the
 * result names. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "tune.h"

static const char *const result_names[] = {
    [tune_ok] = "ok",
    [tune_err_cuda] = "CUDA error",
    [tune_err_nccl] = "NCCL error",
    [tune_err_mpi] = "MPI error",
    [tune_err_db] = "database error",
    [tune_err_system] = "system error",
    [tune_err_arg] = "invalid argument",
    [tune_err_detcoll] = "detcoll error",
    [tune_err_wrong] = "wrong result",
    [tune_err_internal] = "internal error",
    [tune_err_interrupted] = "interrupted",
};

const char *tune_result_str(tune_result r) {
  if ((int)r < 0 || (size_t)r >= sizeof(result_names) / sizeof(result_names[0])) return "unknown result";
  return result_names[r];
}

static const struct {
  const char *name;
  unsigned mask;
} subsys_names[] = {
    {"INIT", TUNE_INIT},     {"DB", TUNE_DB},         {"SWEEP", TUNE_SWEEP},
    {"TUNER", TUNE_TUNER},   {"REPORT", TUNE_REPORT}, {"BACKEND", TUNE_BACKEND},
    {"LAUNCH", TUNE_LAUNCH}, {"PARAMS", TUNE_PARAMS}, {"ALL", TUNE_ALL},
};

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static tune_log_level log_level = TUNE_LOG_WARN;
static unsigned log_mask = TUNE_ALL;
static char log_host[64];
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void log_init(void) {
  const char *lv = getenv("TUNE_DEBUG");
  if (lv != NULL) {
    if (strcasecmp(lv, "NONE") == 0) log_level = TUNE_LOG_NONE;
    else if (strcasecmp(lv, "WARN") == 0) log_level = TUNE_LOG_WARN;
    else if (strcasecmp(lv, "INFO") == 0) log_level = TUNE_LOG_INFO;
    else if (strcasecmp(lv, "TRACE") == 0) log_level = TUNE_LOG_TRACE;
    else fprintf(stderr, "tune: warning: TUNE_DEBUG=%s is not NONE, WARN, INFO or TRACE; using WARN\n", lv);
  }
  const char *sub = getenv("TUNE_DEBUG_SUBSYS");
  if (sub != NULL) {
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", sub);
    log_mask = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      size_t i;
      for (i = 0; i < sizeof(subsys_names) / sizeof(subsys_names[0]); i++)
        if (strcasecmp(tok, subsys_names[i].name) == 0) break;
      if (i == sizeof(subsys_names) / sizeof(subsys_names[0]))
        fprintf(stderr, "tune: warning: TUNE_DEBUG_SUBSYS: unknown subsystem '%s'\n", tok);
      else
        log_mask |= subsys_names[i].mask;
    }
  }
  if (gethostname(log_host, sizeof(log_host)) != 0) snprintf(log_host, sizeof(log_host), "?");
  log_host[sizeof(log_host) - 1] = '\0';
}

int tune_log_enabled(tune_log_level level, unsigned subsys) {
  pthread_once(&log_once, log_init);
  /* The mask picks the INFO and TRACE lines to see; a warning is for the
   * user whatever it names (as NCCL_DEBUG_SUBSYS leaves WARN lines). */
  return level != TUNE_LOG_NONE && level <= log_level &&
         (level == TUNE_LOG_WARN || (subsys & log_mask) != 0);
}

static const char *subsys_name(unsigned subsys) {
  for (size_t i = 0; i < sizeof(subsys_names) / sizeof(subsys_names[0]); i++)
    if (subsys_names[i].mask == subsys) return subsys_names[i].name;
  return "ALL";
}

void tune_log_stamp(char *buf, size_t len) {
  struct timespec ts;
  struct tm tm;
  char sec[32];
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf, len, "%s.%03ldZ", sec, ts.tv_nsec / 1000000);
}

void tune_log(tune_log_level level, unsigned subsys, const char *file, int line, const char *fmt, ...) {
  static const char *const level_names[] = {"", "WARN", "INFO", "TRACE"};
  if (!tune_log_enabled(level, subsys)) return;
  const char *base = strrchr(file, '/');
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  char stamp[40];
  tune_log_stamp(stamp, sizeof(stamp));
  pthread_mutex_lock(&log_lock);
  fprintf(stderr, "%s %s:%d [%s] %s %s:%d %s\n", stamp, log_host, (int)getpid(),
          subsys_name(subsys), level_names[level], base ? base + 1 : file, line, msg);
  pthread_mutex_unlock(&log_lock);
}

/* Room for two paths of PATH_MAX and the words around them: a long path
 * must not push the reason off the end of the message. */
#define LOG_ERROR_MAX (3 * 4096)
static char log_last_error[LOG_ERROR_MAX];
static unsigned log_errors; /* tune_error() lines so far */

void tune_error(const char *fmt, ...) {
  char msg[LOG_ERROR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&log_lock);
  fprintf(stderr, "tune: error: %s\n", msg);
  memcpy(log_last_error, msg, sizeof(msg));
  log_errors++;
  pthread_mutex_unlock(&log_lock);
}

unsigned tune_errors_said(void) {
  pthread_mutex_lock(&log_lock);
  unsigned n = log_errors;
  pthread_mutex_unlock(&log_lock);
  return n;
}

void tune_last_error(char *out, size_t len) {
  pthread_mutex_lock(&log_lock);
  snprintf(out, len, "%s", log_last_error);
  pthread_mutex_unlock(&log_lock);
}
