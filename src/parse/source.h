/* parse/source.h: the bytes of a trace file, inflated when gzip.
 *
 * The format is decided by the file's first two bytes (the gzip magic), not
 * by its name, so a mislabelled file still reads.  Concatenated gzip
 * members are read as one stream, as gzip -dc does. */
#ifndef HTA_SOURCE_H
#define HTA_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef struct hta_source hta_source;

/* Which library inflates gzip input.  ISA-L's igzip is several times faster
 * than zlib; it is used when the build found it (HTA_HAVE_ISAL), and zlib
 * is the always-available fallback. */
typedef enum hta_inflater {
    HTA_INFLATER_AUTO = 0,
    HTA_INFLATER_ZLIB = 1,
    HTA_INFLATER_ISAL = 2,
} hta_inflater;

/* 1 when a file's first n bytes start with the gzip magic. */
static inline int hta_is_gzip_magic(const unsigned char *first, long n)
{
    return n >= 2 && first[0] == 0x1f && first[1] == 0x8b;
}

/* 1 when this build can use the given inflater. */
int hta_inflater_available(hta_inflater which);

/* Opens path; on failure returns -1 with a message naming the file. */
int hta_source_open(const char *path, hta_inflater which, hta_source **out, hta_error *err);

/* Fills buf with up to cap bytes; returns the count, 0 at end of data, or -1
 * on a read or decompression error (message names the compressed offset). */
long hta_source_read(hta_source *s, char *buf, size_t cap, hta_error *err);

/* Bytes the stream is expected to yield, for sizing only: the file size,
 * or a gzip file's trailer (its last member's size modulo 4 GiB); 0 when
 * unknown. */
uint64_t hta_source_size_hint(const hta_source *s);

void hta_source_close(hta_source *s);

#endif
