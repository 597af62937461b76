/* progress.c: the main job's progress on stderr. On a terminal, a bar per
 * phase (percent, elapsed, ETA, what is measured now) redrawn in place and
 * left at its final state when the phase ends. Elsewhere (batch jobs,
 * mpirun, Slurm: a log file), one timestamped line every
 * TUNE_PROGRESS_SECONDS (0: none) and one when a phase ends. A thread
 * ticks five times a second, so a long step -- one large configuration, the
 * rebuild, the report -- still shows. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"
#include "tune.h"

TUNE_PARAM(ProgressSeconds, "PROGRESS_SECONDS", 5, 0, 86400);

static struct {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  pthread_t thread;
  int enabled, tty, ticking, stop, active;
  const char *phase, *unit;
  long done, total, configs;
  int64_t t0, last_line;
  char note[96];
} pg = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

/* A duration as 42s, 3m05s or 1h02m. */
static void fmt_duration(double s, char *buf, size_t len) {
  long t = s < 0 ? 0 : (long)(s + 0.5);
  if (t < 60)
    snprintf(buf, len, "%lds", t);
  else if (t < 3600)
    snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
  else
    snprintf(buf, len, "%ldh%02ldm", t / 3600, t / 60 % 60);
}

/* Percent, elapsed and ETA of the phase now; the ETA assumes the steps
 * left take as long as the ones done ("?" before the first). */
static int phase_figures(int64_t now, char *elapsed, char *eta, size_t len) {
  double el = (double)(now - pg.t0) * 1e-9;
  long total = pg.total > 0 ? pg.total : 1;
  long done = pg.done < total ? pg.done : total;
  fmt_duration(el, elapsed, len);
  if (done > 0)
    fmt_duration(el * (double)(total - done) / (double)done, eta, len);
  else
    snprintf(eta, len, "?");
  return (int)(100 * done / total);
}

/* Call with pg.lock held. */
static void draw_bar(int64_t now) {
  char el[32], eta[32], line[512], counts[64] = "";
  int pct = phase_figures(now, el, eta, sizeof(el));
  char bar[21];
  memset(bar, '.', 20);
  memset(bar, '#', (size_t)(pct / 5));
  bar[20] = '\0';
  if (pg.unit) snprintf(counts, sizeof(counts), " %ld/%ld %s", pg.done, pg.total, pg.unit);
  int n = snprintf(line, sizeof(line), "%-7s [%s] %3d%%%s  %s  ETA %s", pg.phase, bar, pct, counts,
                   el, eta);
  if (pg.note[0] && n > 0 && (size_t)n < sizeof(line))
    snprintf(line + n, sizeof(line) - (size_t)n, "  %s", pg.note);
  /* A line longer than the terminal wraps, and \r then redraws only its
   * last row. */
  struct winsize ws;
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && ws.ws_col < sizeof(line))
    line[ws.ws_col - 1] = '\0';
  fprintf(stderr, "\r\033[K%s", line);
}

/* Call with pg.lock held. */
static void log_line(int64_t now, int ended) {
  char stamp[40], el[32], eta[32], counts[96] = "", left[48] = "";
  int pct = phase_figures(now, el, eta, sizeof(el));
  tune_log_stamp(stamp, sizeof(stamp));
  if (pg.unit)
    snprintf(counts, sizeof(counts), " %ld/%ld %s (%d%%),", pg.done, pg.total, pg.unit, pct);
  if (!ended && pg.unit) snprintf(left, sizeof(left), ", ETA %s", eta);
  /* A phase that ends on a signal stopped; it is not done. */
  const char *how = !ended ? ":" : tune_interrupt_signal() ? " stopped:" : " done:";
  fprintf(stderr, "%s tune: %s%s%s %ld configs measured, elapsed %s%s\n", stamp, pg.phase, how,
          counts, pg.configs, el, left);
  pg.last_line = now;
}

static void *tick(void *arg) {
  (void)arg;
  pthread_mutex_lock(&pg.lock);
  while (!pg.stop) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 200000000;
    if (ts.tv_nsec >= 1000000000) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&pg.wake, &pg.lock, &ts);
    if (pg.stop || !pg.active) continue;
    int64_t now = tune_now_ns(), every = tune_param_get(&tune_param_ProgressSeconds);
    if (pg.tty)
      draw_bar(now);
    else if (every > 0 && now - pg.last_line >= every * 1000000000)
      log_line(now, 0);
  }
  pthread_mutex_unlock(&pg.lock);
  return NULL;
}

void tune_progress_enable(int on) {
  pthread_mutex_lock(&pg.lock);
  pg.enabled = on;
  pg.tty = isatty(STDERR_FILENO);
  pthread_mutex_unlock(&pg.lock);
  (void)tune_param_get(&tune_param_ProgressSeconds);
}

void tune_progress_begin(const char *phase, const char *unit, long total) {
  tune_progress_end();
  pthread_mutex_lock(&pg.lock);
  if (pg.enabled) {
    if (!pg.ticking && pthread_create(&pg.thread, NULL, tick, NULL) == 0) pg.ticking = 1;
    pg.active = 1;
    pg.phase = phase;
    pg.unit = unit;
    pg.total = unit ? total : 1;
    pg.done = 0;
    pg.note[0] = '\0';
    pg.t0 = pg.last_line = tune_now_ns();
    if (pg.tty) draw_bar(pg.t0);
  }
  pthread_mutex_unlock(&pg.lock);
}

void tune_progress_step(long done, long configs) {
  pthread_mutex_lock(&pg.lock);
  pg.done = done;
  pg.configs = configs;
  pthread_mutex_unlock(&pg.lock);
}

void tune_progress_note(const char *what, long configs) {
  pthread_mutex_lock(&pg.lock);
  snprintf(pg.note, sizeof(pg.note), "%s", what);
  pg.configs = configs;
  pthread_mutex_unlock(&pg.lock);
}

void tune_progress_end(void) {
  pthread_mutex_lock(&pg.lock);
  if (pg.active) {
    int64_t now = tune_now_ns();
    pg.note[0] = '\0';
    if (pg.tty) {
      draw_bar(now);
      fputc('\n', stderr);
    } else {
      log_line(now, 1);
    }
    pg.active = 0;
  }
  pthread_mutex_unlock(&pg.lock);
}

void tune_progress_stop(void) {
  tune_progress_end();
  pthread_mutex_lock(&pg.lock);
  int join = pg.ticking;
  pg.stop = 1;
  pg.ticking = 0;
  pthread_cond_signal(&pg.wake);
  pthread_mutex_unlock(&pg.lock);
  if (join) pthread_join(pg.thread, NULL);
}
