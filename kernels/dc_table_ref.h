/* dc_table_ref.h: the table a comm holds (dc_comm_set_table), for
 * libdetcoll itself and the tune toolkit's sim backend, which holds its
 * table the same way. Not installed, not exported. */
#ifndef DC_TABLE_REF_H
#define DC_TABLE_REF_H

#include "dc_table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A comm's table: rows[0..n), owned (freed by dc_table_ref_free) unless it
 * is the compiled-in one. */
typedef struct {
  const dc_threshold_row *rows;
  size_t n;
  dc_threshold_row *owned;
} dc_table_ref;

/* Set t to the default table: DC_THRESHOLDS_FILE's when set, else the
 * compiled-in one. Returns 0, or -1 with the reason in why, t unchanged. */
int dc_table_ref_default(dc_table_ref *t, char *why, size_t len);

/* Set t to a checked copy of rows[0..n) (rows NULL and n 0: the default
 * table). Returns 0, or -1 with the reason in why, t unchanged. */
int dc_table_ref_set(dc_table_ref *t, const dc_threshold_row *rows, size_t n, char *why, size_t len);

void dc_table_ref_free(dc_table_ref *t);

#ifdef __cplusplus
}
#endif
#endif /* DC_TABLE_REF_H */
