/* interval.c: union and intersection of time intervals (see hta/interval.h). */
#include "hta/interval.h"

#include <stdlib.h>

static int compare_starts(const void *a, const void *b)
{
    const hta_interval *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

size_t hta_intervals_union(hta_interval *iv, size_t n)
{
    if (n == 0)
        return 0;
    qsort(iv, n, sizeof *iv, compare_starts);
    size_t out = 0;
    for (size_t i = 1; i < n; i++) {
        if (iv[i].start > iv[out].end)
            iv[++out] = iv[i];
        else if (iv[i].end > iv[out].end)
            iv[out].end = iv[i].end;
    }
    return out + 1;
}

int64_t hta_intervals_length(const hta_interval *iv, size_t n)
{
    int64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += iv[i].end - iv[i].start;
    return total;
}

/* Walks two merged lists in step, calling emit for each overlapping piece. */
static void walk_intersection(const hta_interval *a, size_t na, const hta_interval *b,
                              size_t nb, void (*emit)(void *ctx, int64_t lo, int64_t hi),
                              void *ctx)
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
    walk_intersection(a, na, b, nb, add_length, &total);
    return total;
}

typedef struct interval_sink {
    hta_interval *out;
    size_t n;
} interval_sink;

static void append_interval(void *ctx, int64_t lo, int64_t hi)
{
    interval_sink *sink = ctx;
    sink->out[sink->n++] = (hta_interval){lo, hi};
}

size_t hta_intervals_intersection(const hta_interval *a, size_t na,
                                  const hta_interval *b, size_t nb, hta_interval *out)
{
    interval_sink sink = {out, 0};
    walk_intersection(a, na, b, nb, append_interval, &sink);
    return sink.n;
}
