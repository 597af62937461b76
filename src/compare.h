/* compare.h: the commands that compare without measuring (issue 14):
 * `tune compare`, a regression gate of one database against a baseline,
 * and `tune compare-headers`, how far two thresholds headers agree. */
#ifndef TUNE_COMPARE_H
#define TUNE_COMPARE_H

/* The subcommands: exit status 0, 1 (compare: a regression; compare-headers
 * --require: below the agreement asked for), 2 (usage, refused input). */
int tune_cmd_compare(int argc, char **argv);
int tune_cmd_compare_headers(int argc, char **argv);

#endif /* TUNE_COMPARE_H */
