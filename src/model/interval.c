/* interval.c: union, intersection and exclusive combinations of time
 * intervals (see model/interval.h).  The exclusive split is one sweep over
 * the boundaries of all lists at once, so k lists of n intervals cost
 * O(k * n) after merging, with no allocation. */
#include "model/interval.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static int compare_starts(const void *a, const void *b)
{
    const hta_interval *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

static int is_sorted_by_start(const hta_interval *iv, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (compare_starts(&iv[i - 1], &iv[i]) > 0)
            return 0;
    return 1;
}

size_t hta_intervals_union(hta_interval *iv, size_t n)
{
    if (n == 0)
        return 0;
    /* Callers mostly pass intervals already in order (the view's events
     * are sorted): a check costs one pass, the sort n log n. */
    if (!is_sorted_by_start(iv, n))
        qsort(iv, n, sizeof *iv, compare_starts);
    size_t out = 0;
    for (size_t i = 1; i < n; i++)
        if (hta_interval_merge(&iv[out], iv[i]))
            iv[++out] = iv[i];
    return out + 1;
}

int64_t hta_intervals_length(const hta_interval *iv, size_t n)
{
    int64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += iv[i].end - iv[i].start;
    return total;
}

void hta_intervals_walk_intersection(const hta_interval *a, size_t na, const hta_interval *b,
                                     size_t nb, hta_interval_visitor emit, void *ctx)
{
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        int64_t lo = a[i].start > b[j].start ? a[i].start : b[j].start;
        int64_t hi = a[i].end < b[j].end ? a[i].end : b[j].end;
        if (hi > lo)
            emit(ctx, lo, hi);
        if (a[i].end < b[j].end)
            i++;
        else
            j++;
    }
}

static void add_length(void *ctx, int64_t lo, int64_t hi)
{
    *(int64_t *)ctx += hi - lo;
}

int64_t hta_intervals_overlap(const hta_interval *a, size_t na,
                              const hta_interval *b, size_t nb)
{
    int64_t total = 0;
    hta_intervals_walk_intersection(a, na, b, nb, add_length, &total);
    return total;
}

/* One list's position in the exclusive sweep: the first interval not yet
 * left behind, and whether the sweep is inside it. */
typedef struct sweep_cursor {
    const hta_interval *iv;
    size_t n, next;
    int inside;
} sweep_cursor;

static void skip_empty(sweep_cursor *c)
{
    while (c->next < c->n && c->iv[c->next].end <= c->iv[c->next].start)
        c->next++;
}

/* When the cursor's state next changes; INT64_MAX once the list is done. */
static int64_t next_boundary(const sweep_cursor *c)
{
    if (c->next >= c->n)
        return INT64_MAX;
    return c->inside ? c->iv[c->next].end : c->iv[c->next].start;
}

static void cross_boundary(sweep_cursor *c)
{
    if (c->inside) {
        c->next++;
        skip_empty(c);
    }
    c->inside = !c->inside;
}

static int64_t earliest_boundary(const sweep_cursor *cur, size_t k)
{
    int64_t t = INT64_MAX;
    for (size_t i = 0; i < k; i++) {
        int64_t b = next_boundary(&cur[i]);
        if (b < t)
            t = b;
    }
    return t;
}

void hta_intervals_exclusive(const hta_interval *const lists[], const size_t counts[],
                             size_t k, int64_t *time_by_mask)
{
    assert(k <= HTA_INTERVAL_MAX_LISTS);
    sweep_cursor cur[HTA_INTERVAL_MAX_LISTS];
    for (size_t i = 0; i < k; i++) {
        cur[i] = (sweep_cursor){lists[i], counts[i], 0, 0};
        skip_empty(&cur[i]);
    }
    memset(time_by_mask, 0, ((size_t)1 << k) * sizeof *time_by_mask);
    unsigned mask = 0;
    int64_t now = earliest_boundary(cur, k);
    for (int64_t t = now; t != INT64_MAX; t = earliest_boundary(cur, k)) {
        time_by_mask[mask] += t - now;
        now = t;
        for (size_t i = 0; i < k; i++) {
            if (next_boundary(&cur[i]) == t) {
                cross_boundary(&cur[i]);
                mask ^= 1u << i;
            }
        }
    }
}
