/* numerics/bounds.h: where a key falls in a sorted array, by bisection.
 *
 * The program keeps many arrays sorted by one int64_t field of their
 * elements (steps by start, gaps and intervals by end, rows by step or
 * rank) and asks for the first element at or after a key.  One bisection
 * serves them all, reading the field at its offset in each element, so it
 * needs no comparison callback; the macros take the field by name and
 * refuse one that is not an int64_t. */
#ifndef HTA_BOUNDS_H
#define HTA_BOUNDS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The first of the n elements at base, stride bytes apart and ascending
 * by the int64_t at offset in each, whose value is at least key (after:
 * greater than key); n when none is. */
static inline size_t hta_bound_at(const void *base, size_t n, size_t stride, size_t offset,
                                  int64_t key, int after)
{
    const char *field = (const char *)base + offset;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t v;
        memcpy(&v, field + mid * stride, sizeof v);
        if (after ? v <= key : v < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#define HTA_BOUND_(array, n, field, key, after)                                                 \
    hta_bound_at((array), (n), sizeof *(array), offsetof(__typeof__(*(array)), field),          \
                 _Generic((array)->field, int64_t: (key)), (after))

/* The first of array[0..n), ascending by field, whose field is >= key. */
#define HTA_LOWER_BOUND(array, n, field, key) HTA_BOUND_(array, n, field, key, 0)

/* The first of array[0..n), ascending by field, whose field is > key. */
#define HTA_UPPER_BOUND(array, n, field, key) HTA_BOUND_(array, n, field, key, 1)

/* The first position of sorted[0..n) (ascending) whose value is at least
 * key; n when none is. */
static inline size_t hta_lower_bound_i64(const int64_t *sorted, size_t n, int64_t key)
{
    return hta_bound_at(sorted, n, sizeof *sorted, 0, key, 0);
}

#endif
