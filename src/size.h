/* size.h: a byte size as tune and bench_detcoll read it (src/size.c). */
#ifndef TUNE_SIZE_H
#define TUNE_SIZE_H

#include <stdbool.h>
#include <stdint.h>

/* Digits with an optional suffix K, M, G, KiB, MiB, GiB, KB, MB, GB (all
 * binary, any case) or B. False on empty input, signs, junk and overflow;
 * the caller bounds the value. */
bool tune_parse_size(const char *s, uint64_t *out);

#endif
