/* hta/packed_ints.h: non-negative integers packed into a NUL-free string.
 *
 * Small numbers take one byte, an int64 at most ten, and no byte is zero, so
 * a packed sequence travels in a table's string cell.  Each number is
 * written as base-128 digits, most significant first, in bytes 0x80-0xFF,
 * then one final base-127 digit in bytes 0x01-0x7F. */
#ifndef HTA_PACKED_INTS_H
#define HTA_PACKED_INTS_H

#include <stdint.h>

#include "hta/buf.h"

/* 0, or -1 when out of memory. */
int hta_pack_u64(hta_buf *out, uint64_t v);

/* Reads the number at *p and advances past it: 1, or 0 at the string's end. */
int hta_unpack_u64(const char **p, uint64_t *v);

#endif
