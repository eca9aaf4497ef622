/* numerics/radix_sort.h: stable linear-time sorts of the analyses' keys.
 *
 * A rank's analyses order hundreds of thousands of timestamps, durations
 * and ids, too many for a comparison callback per pair.  These are LSD
 * radix sorts, one byte per pass, that skip
 * every byte on which all keys agree (the timestamps of one trace share
 * their high bytes, ids and small integers their high and low ones), so a
 * sort is a few sequential passes.  Both are stable: equal keys keep their
 * order, as glibc's qsort (a stable merge sort) and pandas' stable sorts
 * do, so every result is bit-identical to theirs. */
#ifndef HTA_RADIX_SORT_H
#define HTA_RADIX_SORT_H

#include <stddef.h>
#include <stdint.h>

#include "numerics/argsort.h"
#include "numerics/stats.h"

/* order = the indices 0..n-1 sorted by keys[index], equal keys in index
 * order; keys come back sorted too (keys[i] is the key of order[i]), which
 * spares a copy of them.  -1 when out of memory, keys then unchanged. */
int hta_stable_argsort(int64_t *keys, size_t n, size_t *order);

/* Sorts v by key, equal keys keeping their order; -1 when out of memory,
 * v then unchanged.  Needs n more pairs of scratch. */
int hta_stable_sort_keyed(hta_keyed *v, size_t n);
/* The same with the caller's scratch, room for n pairs (NULL: allocated). */
int hta_stable_sort_keyed_using(hta_keyed *v, size_t n, hta_keyed *scratch);

/* Sorts values ascending in the order a stable sort with the comparison
 * (x > y) - (x < y) gives: -0.0 and 0.0 are equal and keep their order.
 * NaN has no place in that order (it compares equal to everything), so
 * with a NaN, or out of memory, it returns -1 and leaves values as they
 * were. */
int hta_radix_sort_doubles(double *values, size_t n);

#endif
