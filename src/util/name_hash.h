/* util/name_hash.h: a 63-bit FNV-1a of a name's text, which keys a name
 * the same on every rank (whose name ids differ): the what-if's kernel
 * places (crossrank/kernel_medians.c). */
#ifndef HTA_NAME_HASH_H
#define HTA_NAME_HASH_H

#include <stdint.h>

static inline int64_t hta_name_hash(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211u;
    return (int64_t)(h >> 1);
}

#endif
