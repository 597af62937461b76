/* cli.h: what every tune subcommand shares: the usage-error convention
 * (exit status 2, a message naming the bad argument) and list parsing. */
#ifndef TUNE_CLI_H
#define TUNE_CLI_H

#include "tune.h"

/* Ranges every subcommand gives the options they share. */
#define TUNE_TRIALS_MIN 3
#define TUNE_TRIALS_MAX 100000
#define TUNE_WARMUP_MAX 100000

/* Exit status of a usage error. */
#define TUNE_EXIT_USAGE 2

/* Print "tune CMD: <message> (see 'tune CMD --help')" to stderr and return
 * TUNE_EXIT_USAGE, for `return tune_usage_error(...)` in a subcommand. */
int tune_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The exit status for a subcommand's result: 0, TUNE_EXIT_USAGE for
 * tune_err_arg, 128 + the signal for tune_err_interrupted (130 for SIGINT,
 * 143 for SIGTERM, as a shell reports), else 1. */
int tune_exit_status(tune_result r);

/* The exit status of a gate (compare, compare-headers), whose verdict is
 * exit 1: 0 for tune_ok, 128 + the signal for tune_err_interrupted, and
 * TUNE_EXIT_USAGE for every other error, so that a failure is never read
 * as the verdict. */
int tune_gate_exit_status(tune_result r);

/* A usage error (TUNE_EXIT_USAGE) if a comma list has an empty item ("2,",
 * ",2", "2,,4": often a shell variable that was not set), else 0. */
int tune_check_list_items(const char *cmd, const char *opt, const char *list);

/* Flush standard output: tune_ok, or tune_err_system with one tune_error()
 * line (a full disk, a closed pipe). A command whose answer is its output
 * calls it last. */
tune_result tune_stdout_flush(void);

#endif /* TUNE_CLI_H */
