/* headers.h: a generated thresholds header read back into table rows, and
 * how far two headers agree on a fine size grid (tune compare-headers, tune
 * verify --header). */
#ifndef TUNE_HEADERS_H
#define TUNE_HEADERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dc_table.h"
#include "tune.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The rows of the thresholds header (or rows alone) at path into *rows
 * (malloc'd, the caller frees) and *nrows: libdetcoll's dc_table_read_file,
 * so tune reads a header as the library loads it (DC_THRESHOLDS_FILE).
 * Anything it refuses (a row that does not parse, a preprocessor line
 * among the rows, text after the array, a table dc_table_check refuses, no
 * rows, a file that cannot be read, holds a NUL byte or is over 64 MiB) is
 * tune_err_arg with one tune_error() line naming the file and the line. */
tune_result tune_header_load(const char *path, dc_threshold_row **rows, size_t *nrows);

/* For a point where two rows choose different paths: 1 if a and b lie
 * within the tolerance of each other at bytes in the measured data, 0 if
 * not, -1 if the data cannot say. */
typedef int (*tune_agree_fn)(void *ctx, const dc_threshold_row *row, dc_path a, dc_path b,
                             uint64_t bytes);

typedef struct {
  uint64_t min_bytes, max_bytes; /* the points: min * 2^(k/steps) up to max */
  int steps;                     /* points per octave (8) */
  int all_rows;                  /* 0: leave out sm 0 rows (the unmeasured default) */
} tune_agree_opts;

typedef struct {
  long rows;                   /* keys in both headers */
  long only_a, only_b;         /* keys in one of them */
  long points, same;           /* points compared, points choosing one path */
  long within, apart, unknown; /* differing points, by tune_agree_fn */
} tune_agreement;

/* Compare a[0..na-1] with b[0..nb-1] row by row (rows of one key), at every
 * point of o in each; fn (NULL: every differing point unknown) judges the
 * points that differ. With detail non-NULL, one line per row that differs.
 * tune_err_arg: bad options. */
tune_result tune_headers_agree(const dc_threshold_row *a, size_t na, const dc_threshold_row *b,
                               size_t nb, const tune_agree_opts *o, tune_agree_fn fn, void *ctx,
                               FILE *detail, tune_agreement *out);

#ifdef __cplusplus
}
#endif
#endif /* TUNE_HEADERS_H */
