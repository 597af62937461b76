/* compare.h: the commands that compare without measuring (issue 14):
 * `tune compare`, a regression gate of one database against a baseline,
 * and `tune compare-headers`, how far two thresholds headers agree. */
#ifndef TUNE_COMPARE_H
#define TUNE_COMPARE_H

#include "tune.h"

/* A tolerance as "5%", "0.05" or "1.05" into *frac (0.05); tune_err_arg
 * unless strictly between 0 and 100%. */
tune_result tune_parse_tolerance(const char *s, double *frac);

/* Option values of the commands here and of tune verify: 0, or a usage
 * error naming cmd and opt (TUNE_EXIT_USAGE). A size in 1..64G, a
 * tolerance as above, a confidence in 0.5..0.9999. */
int tune_opt_size(const char *cmd, const char *opt, const char *arg, uint64_t *out);
int tune_opt_tolerance(const char *cmd, const char *opt, const char *arg, double *frac);
int tune_opt_confidence(const char *cmd, const char *opt, const char *arg, double *out);

/* The subcommands: exit status 0, 1 (compare: a regression; compare-headers
 * --require: below the agreement asked for), 2 (usage, refused input). */
int tune_cmd_compare(int argc, char **argv);
int tune_cmd_compare_headers(int argc, char **argv);

#endif /* TUNE_COMPARE_H */
