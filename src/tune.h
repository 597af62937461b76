/* tune.h: conventions every layer of the tune toolkit shares -- the one
 * result type and its check macros, the logger, and the parameter mechanism
 * (command line over environment over default). */
#ifndef TUNE_H
#define TUNE_H

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  tune_ok = 0,
  tune_err_cuda,     /* a CUDA runtime call failed, or no device */
  tune_err_nccl,     /* an NCCL call failed */
  tune_err_mpi,      /* an MPI call failed */
  tune_err_db,       /* SQLite failed, or the file is not ours / too new */
  tune_err_system,   /* an OS call failed (files, processes, memory) */
  tune_err_arg,      /* bad input from the user or the caller */
  tune_err_detcoll,  /* libdetcoll returned an error */
  tune_err_wrong,    /* a result failed its correctness check */
  tune_err_internal, /* a bug: an invariant did not hold */
  /* SIGINT or SIGTERM arrived; what was committed stays committed */
  tune_err_interrupted
} tune_result;

/* A short name for a result ("db error"); never NULL. */
const char *tune_result_str(tune_result r);

/* ---- logging --------------------------------------------------------------
 * TUNE_DEBUG=WARN|INFO|TRACE picks the level (default WARN);
 * TUNE_DEBUG_SUBSYS=DB,SWEEP,... (or ALL, the default) the subsystems.
 * Lines go to stderr as "host:pid [sub] LEVEL file:line message". */
typedef enum { TUNE_LOG_NONE = 0, TUNE_LOG_WARN, TUNE_LOG_INFO, TUNE_LOG_TRACE } tune_log_level;

/* The regret target: auto dispatch at most this much slower than the best
 * forced path. The after pass measures each size against it until decided
 * (engine.c), and the job's summary counts the sizes that meet it; tune
 * verify's and compare-headers' --tolerance default to it. 1 + 0.03 is
 * the double 1.03 exactly. */
#define TUNE_REGRET_TOLERANCE 0.03
#define TUNE_REGRET_TARGET (1 + TUNE_REGRET_TOLERANCE)
/* The after pass's trials cap, in units of --max-trials, for a size whose
 * regret is undecided (engine_regret_trials). */
#define TUNE_REGRET_TRIALS_FACTOR 4

enum {
  TUNE_INIT = 1u << 0,
  TUNE_DB = 1u << 1,
  TUNE_SWEEP = 1u << 2,
  TUNE_TUNER = 1u << 3,
  TUNE_REPORT = 1u << 4,
  TUNE_BACKEND = 1u << 5,
  TUNE_LAUNCH = 1u << 6,
  TUNE_PARAMS = 1u << 7,
  TUNE_ALL = ~0u
};

void tune_log(tune_log_level level, unsigned subsys, const char *file, int line, const char *fmt,
              ...) __attribute__((format(printf, 5, 6)));
/* Now, as an ISO 8601 UTC time with milliseconds: the stamp of every log
 * line and of the progress lines of a job whose stderr is not a terminal. */
void tune_log_stamp(char *buf, size_t len);
/* 1 if a message at level for subsys would be printed. */
int tune_log_enabled(tune_log_level level, unsigned subsys);

#define TUNE_WARN(sub, ...) tune_log(TUNE_LOG_WARN, (sub), __FILE__, __LINE__, __VA_ARGS__)
#define TUNE_INFO(sub, ...) tune_log(TUNE_LOG_INFO, (sub), __FILE__, __LINE__, __VA_ARGS__)
#define TUNE_TRACE(sub, ...) tune_log(TUNE_LOG_TRACE, (sub), __FILE__, __LINE__, __VA_ARGS__)

/* A message for the user, always printed: "tune: error: ...". Use for the
 * one line that explains why a command failed. */
void tune_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* How many tune_error() lines this process has printed. */
unsigned tune_errors_said(void);
/* The last tune_error() message of this process ("" if none): what tune
 * fleet records as a failed node's error. */
void tune_last_error(char *out, size_t len);

#define TUNE_CHECK(call)                                         \
  do {                                                           \
    tune_result r_ = (call);                                     \
    if (r_ != tune_ok) {                                         \
      TUNE_INFO(TUNE_ALL, "%s -> %s", #call, tune_result_str(r_)); \
      return r_;                                                 \
    }                                                            \
  } while (0)

#define TUNE_CHECK_GOTO(call, res, label)                        \
  do {                                                           \
    (res) = (call);                                              \
    if ((res) != tune_ok) {                                      \
      TUNE_INFO(TUNE_ALL, "%s -> %s", #call, tune_result_str(res)); \
      goto label;                                                \
    }                                                            \
  } while (0)

/* ---- parameters -----------------------------------------------------------
 * TUNE_PARAM(Name, "ENV", default, lo, hi) defines a tune_param named
 * tune_param_Name whose value comes from the command line if set there
 * (tune_param_set_str), else from the environment variable TUNE_ENV, else the
 * default. Both take the same syntax and the range lo..hi (issue 16: an
 * environment value must not skip the command line's checks). Each override
 * is logged once at INFO. */
typedef struct {
  const char *name;
  const char *env; /* without the TUNE_ prefix */
  int64_t def;
  int64_t lo, hi;
  int64_t value;
  int state; /* 0: not loaded, 1: loaded, 2: set from the command line */
} tune_param;

#define TUNE_PARAM(name, env, deflt, lo, hi) \
  tune_param tune_param_##name = {#name, env, (deflt), (lo), (hi), 0, 0}
#define TUNE_PARAM_DECL(name) extern tune_param tune_param_##name

/* Load the environment value once: tune_err_arg, with one tune_error() line
 * naming the variable and the range, if it is not a number in lo..hi (the
 * default then stands). Call it before anything is measured. */
tune_result tune_param_load(tune_param *p);
/* The current value (loads the environment on first use; a bad value there
 * leaves the default, after tune_param_load's message). */
int64_t tune_param_get(tune_param *p);
/* Set from the command line: the same syntax and range as the environment;
 * tune_err_arg (nothing printed: the caller names its option) if s is not a
 * number in lo..hi. Wins over the environment. */
tune_result tune_param_set_str(tune_param *p, const char *s);

/* ---- small shared helpers ------------------------------------------------- */

/* Parse a byte size: digits with an optional suffix K, M, G, KiB, MiB, GiB,
 * KB, MB, GB (all binary, any case) or B. Rejects empty input, signs, junk
 * and overflow; the caller bounds the value (src/size.c, which
 * bench_detcoll compiles too). */
tune_result tune_parse_size(const char *s, uint64_t *out);

/* This host's name (gethostname; "unknown" where it fails), cached. */
const char *tune_hostname(void);
/* The git revision of runs and headers: TUNE_GIT_REV when set (a tree
 * copied without .git), else the one this tune was built from
 * (build-aux/git-rev: "-dirty" for uncommitted changes, or "unknown"). */
const char *tune_git_rev(void);
/* The revision this tune was built from, whatever TUNE_GIT_REV says. */
const char *tune_build_git_rev(void);
/* argv[0..argc) joined by spaces after first (when not NULL), for the runs
 * table; malloc'd, NULL when out of memory. */
char *tune_join_args(const char *first, int argc, char **argv);
/* Parse a tolerance, "5%", "0.05" or "1.05", into *frac (0.05); tune_err_arg
 * unless strictly between 0 and 100%. */
tune_result tune_parse_tolerance(const char *s, double *frac);

/* strtod for a number written in decimal: a digit first, after an optional
 * sign and '.'. Blanks, hex, inf and nan are not: *end = s and 0, so the
 * caller's end == s check refuses them. */
double tune_strtod(const char *s, char **end);
/* s as a JSON string, quotes included, into out: always valid JSON (RFC
 * 8259 requires UTF-8), well-formed UTF-8 kept, each byte of an ill-formed
 * sequence U+FFFD. */
void tune_json_string(FILE *out, const char *s);
/* Parse a non-negative integer (no suffix) in [lo, hi]. */
tune_result tune_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);
/* Format bytes as "4K", "1M", "1536" (exact, binary suffixes when they divide). */
const char *tune_format_size(uint64_t bytes, char *buf, size_t len);

/* SIGINT and SIGTERM, caught: the handler only records the signal, so a
 * job stops between configurations with everything measured committed. The
 * handler resets itself: a second signal ends the process at once. */
void tune_interrupt_install(void);
/* The signal caught since tune_interrupt_install (SIGINT, SIGTERM), or 0. */
int tune_interrupt_signal(void);
/* Its name for a message: "SIGINT", "SIGTERM" or "a signal". */
const char *tune_interrupt_name(void);
/* Another process of the job caught sig: this one stops as if it had
 * (the first signal stays). */
void tune_interrupt_adopt(int sig);

/* Wall clock and monotonic clock, ns. */
int64_t tune_now_ns(void);
/* UTC time as ISO 8601 ("2026-11-29T09:30:00Z") into buf (>= 21 bytes). */
void tune_utc_iso(char *buf, size_t len);

/* ---- output paths ----------------------------------------------------------
 * An output that is the database would destroy it (issue 16), and a name
 * compare misses links, "./" and hard links: files are compared by identity. */

/* 1 if writing to a would reach the file b names: the same device and inode
 * after following symbolic links; for a file that does not exist yet, the
 * same folder (by device and inode) and final name, links followed. */
int tune_same_file(const char *a, const char *b);

/* Where writing to path lands, in target (PATH_MAX bytes): the links of its
 * last component followed, its folder resolved. 0, or -1 if the folder does
 * not exist, a link loops or a name is too long. */
int tune_path_target(const char *path, char *target);

/* tune_err_arg, with one tune_error() line naming what (an option such as
 * "--out"), if path is the database at db_path, its -wal, -shm or -journal
 * file or its job lock (beside the path given or beside the file its links
 * lead to), or any other SQLite database. Call it before anything is
 * measured or written. */
tune_result tune_check_output(const char *what, const char *path, const char *db_path);
/* The same against two databases (tune compare's): the files of both, then
 * any other database. */
tune_result tune_check_output2(const char *what, const char *path, const char *db_a,
                               const char *db_b);

/* tune_err_arg, with one tune_error() line starting with what (an option
 * such as "--header") and naming the cause, unless path can be written
 * before anything is measured: a file (TUNE_WRITABLE_FILE) must not be a
 * folder, end in '/' or be an SQLite database, and its final target's
 * folder must exist and take new files (it is replaced through a
 * temporary, whose name must fit); a device or FIFO must be writable. A
 * new database (TUNE_WRITABLE_DB) likewise, its -journal's name fitting
 * instead. A folder (TUNE_WRITABLE_FOLDER) must be one if it exists (not
 * a link to nothing), else the nearest existing folder above it must take
 * new folders. An empty path is refused. */
enum { TUNE_WRITABLE_FILE = 0, TUNE_WRITABLE_FOLDER = 1, TUNE_WRITABLE_DB = 2 };
tune_result tune_check_writable(const char *what, const char *path, int folder);

/* An older output at path removed before it is made again (a missing one
 * is fine), so that it cannot pass for the new one; else a message from who
 * ("report", "compare") and tune_err_system. */
tune_result tune_remove_old(const char *who, const char *path);

/* Of tune_check_writable's checks only the name's: tune_err_arg, with one
 * line (what, path, why), where a file to be written later at path (a
 * database where database is 1) leaves its folder no room for the name of
 * its temporary; a folder not made yet is taken to hold NAME_MAX. */
tune_result tune_check_name_fits(const char *what, const char *path, int database);

/* mkdir -p dir, for the file or folder path that what (an option such as
 * "--db") names: tune_err_system with one tune_error() line naming the
 * folder that could not be made and why (tune_err_arg for an empty dir).
 * The database's folder and the report folder are made here. */
tune_result tune_make_dirs(const char *what, const char *path, const char *dir);

/* Hold the folder dir (made) for this process alone while it writes
 * there: an flock on the folder itself, waited for (saying so, as who)
 * while another tune holds it, so two reports into one folder never mix
 * their files. *held: the descriptor to close when done, or -1 where the
 * file system takes no such lock (written unheld, as before).
 * tune_err_interrupted on a signal while waiting; tune_err_system, said,
 * after 300 s of waiting. */
tune_result tune_hold_folder(const char *who, const char *dir, int *held);

/* An output file opened by tune_output_open: "-" is standard output; a
 * device, FIFO or socket is written in place; anything else -- a regular
 * file, a new file, or a symbolic link to either -- is written to a
 * temporary beside the link's final target and renamed over it on success,
 * so a failure leaves the old file whole. This is the toolkit's one atomic
 * writer: exports, skew JSON, the thresholds header and report.md. */
typedef struct {
  FILE *f;
  const char *path; /* as given, for messages */
  int replace;      /* 1: f is tmp, renamed over target on success */
  int existed;      /* replace: target existed (tmp has its permissions) */
  char target[PATH_MAX];
  char tmp[PATH_MAX];
} tune_output;

/* Open path for writing; a folder, or a path tune_check_writable refuses,
 * is tune_err_arg, a path that cannot be written tune_err_system (each with
 * one tune_error() line). A FIFO waits for its reader (saying so; SIGINT or
 * SIGTERM ends the wait). */
tune_result tune_output_open(const char *path, tune_output *o);
/* Finish an output opened by tune_output_open. written is the result of
 * writing it: tune_ok commits (flush, fsync, rename for a replaced file,
 * and fsync of its folder so the rename survives a crash), anything else
 * discards the temporary. A write that failed on the stream (its error
 * flag) fails the close with one tune_error() line, so a writer may pass
 * tune_ok and leave that to it. Returns written, or the error finishing
 * it met. */
tune_result tune_output_close(tune_output *o, tune_result written);

/* text as the whole content of path, through tune_output_open/close; mode
 * (e.g. 0644), unless 0, is given to a new file written through a
 * temporary (else it gets 0666 less the umask); a replaced file keeps its
 * permissions. */
tune_result tune_write_file(const char *path, const char *text, unsigned mode);

/* Room for one more element in the array *items of n elements of elem
 * bytes, *cap of them allocated: doubled when full (first: the first
 * allocation). Out of memory: one tune_error() line, tune_err_system,
 * *items and *cap unchanged. */
tune_result tune_grow(void **items, size_t *cap, size_t n, size_t elem, size_t first);

/* Deterministic PRNG (splitmix64 seeding xoshiro256**). */
typedef struct {
  uint64_t s[4];
} tune_rng;
void tune_rng_seed(tune_rng *r, uint64_t seed);
uint64_t tune_rng_next(tune_rng *r);
/* Uniform in [0, 1). */
double tune_rng_uniform(tune_rng *r);
/* Standard normal (Box-Muller). */
double tune_rng_normal(tune_rng *r);

#ifdef __cplusplus
}
#endif
#endif /* TUNE_H */
