/* util/ranked.h: rows ordered by a key, ties in row order.
 *
 * The one sort behind every "order these rows by a value" of the program
 * (summaries, reports, the assignment of files, a table by its first
 * column): an array of (key, row) pairs sorted by key, equal keys in
 * order of row, so the result does not depend on the sort's algorithm.
 * A key is a double or, where every int64 must stay exact, an int64.
 * Beside it, the one ascending order of plain int64 values, for qsort and
 * bsearch and for comparisons by several fields. */
#ifndef HTA_RANKED_H
#define HTA_RANKED_H

#include <stddef.h>
#include <stdint.h>

typedef struct hta_ranked {
    double key;
    size_t row;
} hta_ranked;

typedef struct hta_ranked_i64 {
    int64_t key;
    size_t row;
} hta_ranked_i64;

/* Largest key first, ties by row. */
void hta_rank_descending(hta_ranked *v, size_t n);

/* Smallest key first, ties by row. */
void hta_rank_ascending_i64(hta_ranked_i64 *v, size_t n);

/* -1, 0 or 1 as a is below, equal to or above b. */
static inline int hta_cmp_i64(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

/* qsort and bsearch's comparison of two int64_t, ascending. */
int hta_compare_i64(const void *a, const void *b);

#endif
