/* table/packed_ints.h: integers packed into a NUL-free string.
 *
 * Small numbers take one byte, an int64 at most ten, and no byte is zero, so
 * a packed sequence travels in a table's string cell.  Each number is
 * written as base-128 digits, most significant first, in bytes 0x80-0xFF,
 * then one final base-127 digit in bytes 0x01-0x7F.
 *
 * A series is the values' greatest common divisor, then each value divided
 * by it: timestamps of whole microseconds (most Kineto traces) are
 * multiples of 1000 ns, and dividing them out saves a byte or two per
 * value.  Signed series are zigzag-encoded (0, -1, 1, -2 as 0, 1, 2, 3) so
 * that small negative values stay small. */
#ifndef HTA_PACKED_INTS_H
#define HTA_PACKED_INTS_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* 0, or -1 when out of memory. */
int hta_pack_u64(hta_buf *out, uint64_t v);

/* Reads the number at *p and advances past it: 1, or 0 at the string's end. */
int hta_unpack_u64(const char **p, uint64_t *v);

/* Appends a series of n values (nothing when n is 0): 0, or -1 when out of
 * memory. */
int hta_pack_series(hta_buf *out, const uint64_t *v, size_t n);
int hta_pack_signed_series(hta_buf *out, const int64_t *v, size_t n);

/* The same series packed from values produced twice instead of stored:
 * the factor is folded over every value (hta_series_factor, from 0), then
 * hta_pack_series_start writes it, made 1 when every value is 0, and
 * hta_pack_series_value each value in turn. */
uint64_t hta_series_factor(uint64_t factor, uint64_t v);
int hta_pack_series_start(hta_buf *out, uint64_t *factor);
int hta_pack_series_value(hta_buf *out, uint64_t v, uint64_t factor);

/* Reading a series back: open it, then take values until one returns 0. */
typedef struct hta_series {
    const char *next;          /* into the packed string, not owned */
    uint64_t factor;
} hta_series;

void hta_series_open(hta_series *s, const char *packed);
int hta_series_next(hta_series *s, uint64_t *v);
int hta_series_next_signed(hta_series *s, int64_t *v);

#endif
