/* util.c: integer parsing, clocks, the seeded PRNG, and output paths:
 * the database-identity check and the output writer every command uses. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db_file.h"
#include "tune.h"
#include "src/git_rev.h"

char *tune_join_args(const char *first, int argc, char **argv) {
  size_t n = (first ? strlen(first) : 0) + 1;
  for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
  char *s = malloc(n);
  if (s == NULL) return NULL;
  snprintf(s, n, "%s", first ? first : "");
  for (int i = 0; i < argc; i++) {
    if (i || first) strcat(s, " ");
    strcat(s, argv[i]);
  }
  return s;
}

double tune_strtod(const char *s, char **end) {
  const char *p = s + (*s == '-' || *s == '+');
  p += *p == '.';
  if (!isdigit((unsigned char)*p) || (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))) {
    *end = (char *)s;
    return 0;
  }
  return strtod(s, end);
}

tune_result tune_parse_tolerance(const char *s, double *frac) {
  char *end;
  errno = 0;
  double v = tune_strtod(s, &end);
  if (errno || end == s || !isfinite(v)) return tune_err_arg;
  if (strcmp(end, "%") == 0)
    v /= 100.0;
  else if (*end != '\0')
    return tune_err_arg;
  else if (v > 1.0)
    v -= 1.0; /* a ratio: 1.05 */
  if (!(v > 0.0 && v < 1.0)) return tune_err_arg;
  *frac = v;
  return tune_ok;
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

static volatile sig_atomic_t interrupt_signal;

static void interrupt_handler(int sig) { interrupt_signal = sig; }

void tune_interrupt_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = interrupt_handler;
  sigemptyset(&sa.sa_mask);
  /* SA_RESTART: SQLite's writes and waitpid go on; the engine polls. */
  sa.sa_flags = SA_RESTART | SA_RESETHAND;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

int tune_interrupt_signal(void) { return interrupt_signal; }

void tune_interrupt_adopt(int sig) {
  if (!interrupt_signal) interrupt_signal = sig;
}

const char *tune_interrupt_name(void) {
  return interrupt_signal == SIGINT ? "SIGINT" : interrupt_signal == SIGTERM ? "SIGTERM" : "a signal";
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

/* ---- output paths ----------------------------------------------------------- */

/* Where writing to path lands: the symbolic links of its last component
 * followed (relative links from their own folder), the folder resolved.
 * Fills target with that real folder plus the final name, and *dir with the
 * folder's identity; *name points at the final name in target. -1 if the
 * folder does not exist, a link loops, or a name is too long. */
static int path_target(const char *path, char *target, struct stat *dir, const char **name) {
  char cur[PATH_MAX], d[PATH_MAX], real[PATH_MAX], link[PATH_MAX];
  if (snprintf(cur, sizeof(cur), "%s", path) >= (int)sizeof(cur)) return -1;
  /* "rep/" names what "rep" does. */
  for (size_t n = strlen(cur); n > 1 && cur[n - 1] == '/'; n--) cur[n - 1] = '\0';
  for (int hops = 0; hops < 40; hops++) { /* 40: the kernel's own limit on links followed */
    const char *slash = strrchr(cur, '/');
    const char *base = slash ? slash + 1 : cur;
    if (slash == cur)
      snprintf(d, sizeof(d), "/");
    else if (slash)
      snprintf(d, sizeof(d), "%.*s", (int)(slash - cur), cur);
    else
      snprintf(d, sizeof(d), ".");
    if (realpath(d, real) == NULL || stat(real, dir) != 0) return -1;
    size_t rl = strcmp(real, "/") == 0 ? 0 : strlen(real);
    if (snprintf(target, PATH_MAX, "%.*s/%s", (int)rl, real, base) >= PATH_MAX) return -1;
    *name = target + rl + 1;
    ssize_t n = readlink(target, link, sizeof(link) - 1);
    if (n < 0) return 0; /* not a link, or nothing there yet: this is the target */
    link[n] = '\0';
    if (link[0] == '/')
      snprintf(cur, sizeof(cur), "%s", link);
    else if (snprintf(cur, sizeof(cur), "%s/%s", real, link) >= (int)sizeof(cur))
      return -1;
  }
  errno = ELOOP;
  return -1;
}

/* The folder of a path_target target whose final name is name. */
static void target_dir(const char *target, const char *name, char *d, size_t len) {
  snprintf(d, len, "%.*s", name - 1 - target > 0 ? (int)(name - 1 - target) : 1, target);
}

int tune_path_target(const char *path, char *target) {
  struct stat dir;
  const char *name;
  return path_target(path, target, &dir, &name);
}

/* The absolute path path will have once its missing folders are made:
 * its deepest existing folder resolved, then the names after it (none of
 * them a link, as none exists), "." dropped. -1 if it does not fit, nothing
 * of it resolves, or a ".." follows a missing name (the kernel cannot
 * leave a folder that is not there). */
static int future_path(const char *path, char *out, size_t len) {
  char head[PATH_MAX], real[PATH_MAX];
  if (snprintf(head, sizeof(head), "%s", path) >= (int)sizeof(head)) return -1;
  size_t cut = strlen(head);
  /* The longest prefix of whole names that resolves ("." for none). */
  for (;;) {
    char saved = head[cut];
    head[cut] = '\0';
    int ok = realpath(cut ? head : ".", real) != NULL;
    head[cut] = saved;
    if (ok) break;
    if (cut == 0 || (cut == 1 && head[0] == '/')) return -1;
    while (cut > 0 && head[cut - 1] != '/') cut--; /* back over the last name */
    while (cut > 1 && head[cut - 1] == '/') cut--; /* and the slashes before it */
  }
  if (snprintf(out, len, "%s", strcmp(real, "/") == 0 ? "" : real) >= (int)len) return -1;
  for (char *t = head + cut, *next; *t; t = next) {
    while (*t == '/') t++;
    if (!*t) break;
    next = t + strcspn(t, "/");
    size_t n = (size_t)(next - t), o = strlen(out);
    if (n == 1 && t[0] == '.') continue;
    if (n == 2 && t[0] == '.' && t[1] == '.') return -1;
    if (o + 1 + n >= len) return -1;
    out[o] = '/';
    memcpy(out + o + 1, t, n);
    out[o + 1 + n] = '\0';
  }
  if (!out[0]) snprintf(out, len, "/");
  return 0;
}

int tune_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  char ta[PATH_MAX], tb[PATH_MAX];
  const char *na, *nb;
  int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
  if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea != eb) return 0;
  /* Neither exists yet: both would be created as the same name in the same folder? */
  if (path_target(a, ta, &sa, &na) == 0 && path_target(b, tb, &sb, &nb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && strcmp(na, nb) == 0;
  /* A folder of one is not there yet (it is made with the database's): the
   * paths they will have. */
  return future_path(a, ta, sizeof(ta)) == 0 && future_path(b, tb, sizeof(tb)) == 0 &&
         strcmp(ta, tb) == 0;
}

/* tune_check_output's test against one database's files. */
static tune_result check_db_files(const char *what, const char *path, const char *db_path) {
  /* SQLite keeps these beside the database while it is open or after a
   * crash; replacing one loses or corrupts committed data just the same. */
  static const struct {
    const char *suffix, *desc;
  } db_files[] = {{"", "the database"},
                  {"-wal", "the database's write-ahead log"},
                  {"-shm", "the database's shared-memory index"},
                  {"-journal", "the database's rollback journal"},
                  {".lock", "the database's job lock"}};
  char bases[2][PATH_MAX], f[PATH_MAX + 16];
  int nbases = 0;
  snprintf(bases[nbases++], sizeof(bases[0]), "%s", db_path);
  /* SQLite resolves a database reached through a link and keeps its -wal
   * and -shm beside the target. */
  if (realpath(db_path, bases[nbases]) != NULL) nbases++;
  for (int b = 0; b < nbases; b++)
    for (size_t i = 0; i < sizeof(db_files) / sizeof(db_files[0]); i++) {
      if (snprintf(f, sizeof(f), "%s%s", bases[b], db_files[i].suffix) >= (int)sizeof(f)) continue;
      if (!tune_same_file(path, f)) continue;
      tune_error("%s %s is %s (%s); refusing to overwrite it", what, path, db_files[i].desc, f);
      return tune_err_arg;
    }
  return tune_ok;
}

tune_result tune_check_output2(const char *what, const char *path, const char *db_a,
                               const char *db_b) {
  if (path == NULL) return tune_ok;
  if (db_a != NULL) TUNE_CHECK(check_db_files(what, path, db_a));
  if (db_b != NULL) TUNE_CHECK(check_db_files(what, path, db_b));
  /* Nor another database (a second job's, a link to one) or its files. */
  const char *why = db_a != NULL ? tune_database_file(path) : NULL;
  if (why != NULL) {
    tune_error("%s %s: %s; refusing to overwrite it", what, path, why);
    return tune_err_arg;
  }
  return tune_ok;
}

tune_result tune_check_output(const char *what, const char *path, const char *db_path) {
  return tune_check_output2(what, path, db_path, NULL);
}

/* Whether path's name leaves no room for its temporary (NAME.tmp.HOST.PID;
 * a database's NAME-journal) in its folder (NAME_MAX where the folder is
 * not there yet); *why gets the cause. */
static int name_too_long(const char *path, int database, const char **why) {
  static char buf[160];
  struct stat dir;
  char target[PATH_MAX], d[PATH_MAX], pid[24];
  const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  long max = NAME_MAX;
  if (path_target(path, target, &dir, &name) == 0) {
    target_dir(target, name, d, sizeof(d));
    max = pathconf(d, _PC_NAME_MAX);
  }
  snprintf(pid, sizeof(pid), "%d", (int)getpid());
  size_t tmp = strlen(name) + (database ? strlen("-journal")
                                        : strlen(".tmp.") + strlen(tune_hostname()) + 1 + strlen(pid));
  if (max <= 0 || tmp <= (size_t)max) return 0;
  snprintf(buf, sizeof(buf), "its name is %zu bytes; with the suffix of %s, its folder takes at most %ld",
           strlen(name), database ? "SQLite's -journal beside it" : "the temporary it is written as first",
           max - (long)(tmp - strlen(name)));
  *why = buf;
  return 1;
}

/* What no file output may be, whoever writes it (tune_check_writable up
 * front, tune_output_open at the write): a path ending in '/' (it names a
 * folder; without this, "new/" would become a file "new"), an SQLite
 * database (tune_check_output names the job's own), or a name whose
 * temporary (NAME.tmp.HOST.PID; a database's NAME-journal) its folder
 * cannot hold. *why gets the cause. */
static int output_refused(const char *path, int database, const char **why) {
  size_t n = strlen(path);
  *why = NULL;
  if (n > 1 && path[n - 1] == '/') *why = "it ends in '/', which names a folder, not a file";
  if (*why == NULL) *why = tune_database_file(path);
  if (*why == NULL) name_too_long(path, database, why);
  return *why != NULL;
}

tune_result tune_remove_old(const char *who, const char *path) {
  if (unlink(path) == 0 || errno == ENOENT) return tune_ok;
  tune_error("%s: cannot remove the old %s: %s", who, path, strerror(errno));
  return tune_err_system;
}

tune_result tune_check_name_fits(const char *what, const char *path, int database) {
  const char *why;
  if (!name_too_long(path, database, &why)) return tune_ok;
  tune_error("%s %s: %s", what, path, why);
  return tune_err_arg;
}

/* The folder part of path ("." for a bare name, "/" for "/x"). */
static void path_dir(const char *path, char *d, size_t len) {
  const char *slash = strrchr(path, '/');
  if (slash == path)
    snprintf(d, len, "/");
  else if (slash)
    snprintf(d, len, "%.*s", (int)(slash - path), path);
  else
    snprintf(d, len, ".");
}

/* tune_ok if d is an existing folder this process may create files in;
 * else tune_err_arg with one tune_error() line. */
static tune_result check_folder(const char *what, const char *path, const char *d) {
  struct stat st;
  if (stat(d, &st) != 0) {
    tune_error("%s %s: folder %s: %s", what, path, d, strerror(errno));
    return tune_err_arg;
  }
  if (!S_ISDIR(st.st_mode)) {
    tune_error("%s %s: %s is not a folder", what, path, d);
    return tune_err_arg;
  }
  /* access() says yes to root in any folder, /proc's included: only making
   * a file there (and removing it at once) tells. */
  char probe[PATH_MAX];
  int fd = -1;
  if (snprintf(probe, sizeof(probe), "%s/.tune-probe-XXXXXX", d) >= (int)sizeof(probe)) errno = ENAMETOOLONG;
  else fd = mkstemp(probe);
  if (fd < 0) {
    tune_error("%s %s: cannot create files in folder %s: %s", what, path, d, strerror(errno));
    return tune_err_arg;
  }
  close(fd);
  if (unlink(probe) != 0) {
    /* A folder that takes files but lets none go (append-only) would also
     * refuse the rename that puts an output in place. */
    tune_error("%s %s: cannot remove files in folder %s (%s left there): %s", what, path, d, probe,
               strerror(errno));
    return tune_err_arg;
  }
  return tune_ok;
}

tune_result tune_check_writable(const char *what, const char *path, int folder) {
  char d[PATH_MAX], target[PATH_MAX];
  struct stat st, dir;
  const char *name;
  if (path == NULL || path[0] == '\0') {
    tune_error("%s: the path is empty", what);
    return tune_err_arg;
  }
  if (snprintf(d, sizeof(d), "%s", path) >= (int)sizeof(d)) {
    tune_error("%s %.64s...: %s", what, path, strerror(ENAMETOOLONG));
    return tune_err_arg;
  }
  if (folder == TUNE_WRITABLE_FOLDER) {
    /* The nearest folder that exists must take the rest (make_dirs). */
    while (stat(d, &st) != 0) {
      if (errno != ENOENT || strcmp(d, "/") == 0 || strcmp(d, ".") == 0) {
        tune_error("%s %s: %s", what, path, strerror(errno));
        return tune_err_arg;
      }
      if (lstat(d, &st) == 0) { /* a link to nothing: make_dirs could not make it */
        tune_error("%s %s: %s is a symbolic link to something that does not exist", what, path, d);
        return tune_err_arg;
      }
      char up[PATH_MAX];
      path_dir(d, up, sizeof(up));
      snprintf(d, sizeof(d), "%s", up);
    }
    if (!S_ISDIR(st.st_mode) && strcmp(d, path) == 0) {
      tune_error("%s %s is a file, not a folder", what, path);
      return tune_err_arg;
    }
    return check_folder(what, path, d);
  }
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      tune_error("%s %s is a folder, not a file", what, path);
      return tune_err_arg;
    }
    if (!S_ISREG(st.st_mode)) { /* written in place (tune_output_open) */
      if (access(path, W_OK) == 0) return tune_ok;
      tune_error("%s %s: %s", what, path, strerror(errno));
      return tune_err_arg;
    }
  }
  const char *why;
  if (output_refused(path, folder == TUNE_WRITABLE_DB, &why)) {
    tune_error("%s %s: %s", what, path, why);
    return tune_err_arg;
  }
  /* A regular or new file is written as a temporary beside its final
   * target, then renamed: that folder must take new files, and let this
   * user replace the one there (a sticky folder, /tmp's kind, lets only its
   * owner: the rename failed after the measurements). */
  const char *file = path;
  if (path_target(path, target, &dir, &name) != 0) {
    path_dir(path, d, sizeof(d));
  } else {
    target_dir(target, name, d, sizeof(d));
    file = target;
  }
  TUNE_CHECK(check_folder(what, path, d));
  uid_t me = geteuid();
  if (me != 0 && lstat(file, &st) == 0 && stat(d, &dir) == 0 && (dir.st_mode & S_ISVTX) && st.st_uid != me &&
      dir.st_uid != me) {
    tune_error("%s %s is another user's, in a folder (%s, sticky) where only its owner may replace it", what, path, d);
    return tune_err_arg;
  }
  return tune_ok;
}

tune_result tune_hold_folder(const char *who, const char *dir, int *held) {
  /* A report takes seconds: a holder past this is no report of tune's. */
  const int limit_s = 300;
  const int64_t t0 = tune_now_ns();
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  *held = -1;
  if (fd < 0) return tune_ok;
  tune_result r = tune_ok;
  for (int said = 0; flock(fd, LOCK_EX | LOCK_NB) != 0; said = 1) {
    if (errno != EWOULDBLOCK) break; /* no such lock here: written unheld */
    if (tune_interrupt_signal()) {
      r = tune_err_interrupted;
      break;
    }
    if (tune_now_ns() - t0 > (int64_t)limit_s * 1000000000) {
      tune_error("%s: %s has been held by another process for %d s; giving up", who, dir, limit_s);
      r = tune_err_system;
      break;
    }
    if (!said) TUNE_WARN(TUNE_REPORT, "%s: %s is being written by another tune; waiting for it", who, dir);
    usleep(50000);
  }
  if (r == tune_ok && flock(fd, LOCK_EX | LOCK_NB) == 0) {
    *held = fd;
    return tune_ok;
  }
  close(fd);
  return r;
}

tune_result tune_make_dirs(const char *what, const char *path, const char *dir) {
  char p[PATH_MAX];
  struct stat st;
  if (dir[0] == '\0') {
    tune_error("%s: the folder is empty", what);
    return tune_err_arg;
  }
  if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p)) {
    tune_error("%s %.64s...: %s", what, path, strerror(ENAMETOOLONG));
    return tune_err_arg;
  }
  for (char *s = p + 1;; s++) {
    if (*s != '/' && *s != '\0') continue;
    char saved = *s;
    *s = '\0';
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
      tune_error("%s %s: cannot create folder %s: %s", what, path, p, strerror(errno));
      return tune_err_system;
    }
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
      tune_error("%s %s: %s is not a folder", what, path, p);
      return tune_err_system;
    }
    *s = saved;
    if (saved == '\0') return tune_ok;
  }
}

const char *tune_hostname(void) {
  static char host[256];
  if (host[0] == '\0' && gethostname(host, sizeof(host)) != 0) snprintf(host, sizeof(host), "unknown");
  host[sizeof(host) - 1] = '\0';
  return host;
}

const char *tune_build_git_rev(void) { return TUNE_BUILD_GIT_REV; }

const char *tune_git_rev(void) {
  static int said;
  const char *rev = getenv("TUNE_GIT_REV");
  if (!(rev && *rev)) return TUNE_BUILD_GIT_REV;
  if (!said && strcmp(rev, TUNE_BUILD_GIT_REV) != 0)
    TUNE_INFO(TUNE_PARAMS, "TUNE_GIT_REV=%s overrides the revision this tune was built from (%s)", rev,
              TUNE_BUILD_GIT_REV);
  said = 1;
  return rev;
}

/* Remove NAME.tmp.HOST.PID files beside target (whose last component is
 * name) that a writer killed before its rename left: HOST is this host and
 * PID no live process here. Another host's (a shared folder) stay. */
static void remove_stale_tmps(const char *target, const char *name) {
  char d[PATH_MAX], prefix[PATH_MAX];
  target_dir(target, name, d, sizeof(d));
  const int pl = snprintf(prefix, sizeof(prefix), "%s.tmp.%s.", name, tune_hostname());
  DIR *dir = pl > 0 && pl < (int)sizeof(prefix) ? opendir(d) : NULL;
  if (dir == NULL) return;
  for (struct dirent *e; (e = readdir(dir)) != NULL;) {
    const char *p = e->d_name;
    if (strncmp(p, prefix, (size_t)pl) != 0 || !isdigit((unsigned char)p[pl])) continue;
    char *end;
    errno = 0;
    long pid = strtol(p + pl, &end, 10);
    if (*end == '\0' && errno == 0 && pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 &&
        errno == ESRCH)
      unlinkat(dirfd(dir), p, 0);
  }
  closedir(dir);
}

tune_result tune_output_open(const char *path, tune_output *o) {
  struct stat st, dir;
  const char *name;
  int fd = -1;
  memset(o, 0, sizeof(*o));
  o->path = path;
  if (strcmp(path, "-") == 0) {
    o->f = stdout;
    return tune_ok;
  }
  int exists = stat(path, &st) == 0;
  const char *why;
  if (exists && S_ISDIR(st.st_mode)) {
    tune_error("cannot write %s: it is a folder", path);
    return tune_err_arg;
  }
  if (exists && !S_ISREG(st.st_mode)) {
    /* A device, FIFO or socket replaced by a regular file would be broken
     * for every other user of it (as root, --out /dev/null would replace
     * the system's /dev/null): write to it in place. A FIFO waits for a
     * reader, as for any writer, but polled, so SIGINT or SIGTERM (whose
     * handler restarts a blocking open) ends the wait. */
    for (int said = 0; (fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK)) < 0 && errno == ENXIO &&
                       S_ISFIFO(st.st_mode);) {
      if (tune_interrupt_signal()) {
        tune_error("cannot write %s: %s while waiting for a process to read the FIFO", path,
                   tune_interrupt_name());
        return tune_err_system;
      }
      if (!said++) fprintf(stderr, "tune: waiting for a process to read the FIFO %s\n", path);
      nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    }
    if (fd < 0 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 ||
        (o->f = fdopen(fd, "w")) == NULL)
      goto fail;
    return tune_ok;
  }
  if (output_refused(path, 0, &why)) {
    tune_error("cannot write %s: %s", path, why);
    return tune_err_arg;
  }
  /* Beside the final target, not beside the link, so the rename replaces
   * the file the link leads to and the link stays. */
  errno = ENAMETOOLONG; /* what a failure that sets no errno (a name too long) means */
  if (path_target(path, o->target, &dir, &name) != 0) goto fail;
  if (snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.%s.%d", o->target, tune_hostname(), (int)getpid()) >=
      (int)sizeof(o->tmp)) {
    errno = ENAMETOOLONG;
    goto fail;
  }
  remove_stale_tmps(o->target, name);
  fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) goto fail;
  o->replace = 1;
  o->existed = exists;
  /* The replacement keeps the permissions of the file it replaces. */
  if ((exists && fchmod(fd, st.st_mode & 07777) != 0) || (o->f = fdopen(fd, "w")) == NULL)
    goto fail;
  return tune_ok;
fail:
  tune_error("cannot write %s: %s", path, strerror(errno));
  if (fd >= 0) close(fd);
  if (o->replace) unlink(o->tmp);
  memset(o, 0, sizeof(*o));
  return tune_err_system;
}

/* fsync the folder holding path, so a rename into it is durable too. */
static int sync_dir(const char *path) {
  char d[PATH_MAX];
  path_dir(path, d, sizeof(d));
  int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int r = fd >= 0 && fsync(fd) == 0 ? 0 : -1;
  if (fd >= 0) close(fd);
  return r;
}

tune_result tune_output_close(tune_output *o, tune_result written) {
  tune_result r = written;
  if (o->f == NULL) return r;
  /* A write that failed earlier (a full disk) leaves the stream's error set. */
  int failed = ferror(o->f) || fflush(o->f) != 0 || (o->replace && fsync(fileno(o->f)) != 0);
  if (o->f != stdout && fclose(o->f) != 0) failed = 1;
  o->f = NULL;
  if (!failed && r == tune_ok && o->replace && rename(o->tmp, o->target) != 0) failed = 1;
  if (failed && r == tune_ok) {
    tune_error("cannot write %s: %s", strcmp(o->path, "-") == 0 ? "standard output" : o->path, strerror(errno));
    r = tune_err_system;
  }
  if (o->replace && r != tune_ok) unlink(o->tmp);
  if (o->replace && r == tune_ok && sync_dir(o->target) != 0) {
    tune_error("cannot write %s: syncing its folder: %s", o->path, strerror(errno));
    r = tune_err_system;
  }
  return r;
}

tune_result tune_write_file(const char *path, const char *text, unsigned mode) {
  tune_output o;
  TUNE_CHECK(tune_output_open(path, &o));
  tune_result r = fputs(text, o.f) < 0 ? tune_err_system : tune_ok;
  if (r == tune_ok && o.replace && !o.existed && mode != 0 && fchmod(fileno(o.f), (mode_t)mode) != 0)
    r = tune_err_system;
  if (r != tune_ok)
    tune_error("cannot write %s: %s", strcmp(path, "-") == 0 ? "standard output" : path,
               strerror(errno));
  return tune_output_close(&o, r);
}

tune_result tune_grow(void **items, size_t *cap, size_t n, size_t elem, size_t first) {
  if (n < *cap) return tune_ok;
  size_t ncap = *cap ? 2 * *cap : first;
  void *grown = realloc(*items, ncap * elem);
  if (grown == NULL) {
    tune_error("out of memory");
    return tune_err_system;
  }
  *items = grown;
  *cap = ncap;
  return tune_ok;
}

/* ---- json ------------------------------------------------------------------- */

/* Bytes of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * forms, surrogates or code points above U+10FFFF), or 0. */
static int utf8_length(const unsigned char *p) {
  /* Per lead byte: length, and the range of the first continuation byte. */
  static const struct {
    unsigned char lo, hi, len, next_lo, next_hi;
  } leads[] = {
      {0xc2, 0xdf, 2, 0x80, 0xbf}, {0xe0, 0xe0, 3, 0xa0, 0xbf}, {0xe1, 0xec, 3, 0x80, 0xbf},
      {0xed, 0xed, 3, 0x80, 0x9f}, {0xee, 0xef, 3, 0x80, 0xbf}, {0xf0, 0xf0, 4, 0x90, 0xbf},
      {0xf1, 0xf3, 4, 0x80, 0xbf}, {0xf4, 0xf4, 4, 0x80, 0x8f},
  };
  for (size_t i = 0; i < sizeof(leads) / sizeof(leads[0]); i++) {
    if (p[0] < leads[i].lo || p[0] > leads[i].hi) continue;
    if (p[1] < leads[i].next_lo || p[1] > leads[i].next_hi) return 0;
    for (int k = 2; k < leads[i].len; k++)
      if (p[k] < 0x80 || p[k] > 0xbf) return 0;
    return leads[i].len;
  }
  return 0;
}

/* Text columns and paths hold whatever bytes a host name, command line or
 * folder had: well-formed UTF-8 passes as it is, each byte of an
 * ill-formed sequence becomes U+FFFD. */
void tune_json_string(FILE *out, const char *v) {
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
    int n;
    if (*p >= 0x80) {
      if ((n = utf8_length(p)) == 0) {
        fputs("\\ufffd", out);
      } else {
        fwrite(p, 1, (size_t)n, out);
        p += n - 1;
      }
    } else if (*p == '"' || *p == '\\')
      fprintf(out, "\\%c", *p);
    else if (*p == '\n')
      fputs("\\n", out);
    else if (*p == '\t')
      fputs("\\t", out);
    else if (*p == '\r')
      fputs("\\r", out);
    else if (*p < 0x20)
      fprintf(out, "\\u%04x", *p);
    else
      fputc(*p, out);
  }
  fputc('"', out);
}
