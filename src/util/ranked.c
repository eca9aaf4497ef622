/* ranked.c: see util/ranked.h. */
#include "util/ranked.h"

#include <stdlib.h>

static int by_row(size_t x, size_t y)
{
    return (x > y) - (x < y);
}

static int larger_first(const void *a, const void *b)
{
    const hta_ranked *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return by_row(x->row, y->row);
}

static int smaller_first_i64(const void *a, const void *b)
{
    const hta_ranked_i64 *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return by_row(x->row, y->row);
}

void hta_rank_descending(hta_ranked *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof *v, larger_first);
}

void hta_rank_ascending_i64(hta_ranked_i64 *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof *v, smaller_first_i64);
}

int hta_compare_i64(const void *a, const void *b)
{
    return hta_cmp_i64(*(const int64_t *)a, *(const int64_t *)b);
}
