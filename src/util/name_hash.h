/* util/name_hash.h: FNV-1a hashes of text, the same on every rank (whose
 * name ids differ): a name's 63-bit key (the what-if's kernel places,
 * crossrank/job_path/kernel_medians.c), and a hash over several texts in turn
 * (a graph replay's kernel names, a collective summary's key). */
#ifndef HTA_NAME_HASH_H
#define HTA_NAME_HASH_H

#include <stdint.h>

#define HTA_TEXT_HASH_BASIS 0xcbf29ce484222325ull
#define HTA_TEXT_HASH_PRIME 0x100000001b3ull

/* h (HTA_TEXT_HASH_BASIS to begin) carried over s and its terminating
 * NUL, so that ("ab", "c") and ("a", "bc") hash apart. */
static inline uint64_t hta_text_hash(uint64_t h, const char *s)
{
    do {
        h ^= (unsigned char)*s;
        h *= HTA_TEXT_HASH_PRIME;
    } while (*s++);
    return h;
}

/* A name's key: its text's hash, halved to stay a non-negative int64. */
static inline int64_t hta_name_hash(const char *s)
{
    return (int64_t)(hta_text_hash(HTA_TEXT_HASH_BASIS, s) >> 1);
}

#endif
