/* kernel_type_masks.c: the combinations HTA's kernel type sweep passes
 * through (see analysis/kernel_type_masks.h).
 *
 * First a walk over the lists' points in time order looks at each time
 * several points share: the combinations its points could pass through in
 * some order (the running sum before it plus any subset of its points).
 * When every one of them is already timed, HTA's order cannot matter and
 * the answer is `timed`; otherwise the sweep is replayed as HTA runs it. */
#include "analysis/kernel_type_masks.h"

#include "numerics/argsort.h"
#include "util/large_alloc.h"

#include <stdlib.h>

#define MAX_LISTS 5
#define MAX_TIED (2 * MAX_LISTS) /* per list a start, an end, or both (length 0) */

/* A list's points in time order: start, end, next start, ... */
typedef struct points {
    const hta_interval *iv;
    size_t n, next;            /* next point: interval next / 2, its end when odd */
} points;

static int64_t point_time(const points *p)
{
    const hta_interval *iv = &p->iv[p->next / 2];
    return p->next % 2 ? iv->end : iv->start;
}

/* Whether the points at one time could make the running sum, `before`
 * them, pass through a combination not in `timed`. */
static int tie_may_add(int before, const int *delta, size_t n, uint32_t timed)
{
    for (unsigned subset = 1; subset < (1u << n); subset++) {
        int running = before;
        for (size_t i = 0; i < n; i++)
            if (subset & (1u << i))
                running += delta[i];
        if (running > 0 && running < 32 && !(timed & (1u << running)))
            return 1;
    }
    return 0;
}

/* Whether some tie could add a combination (the walk above). */
static int ties_may_add(const hta_interval *const lists[], const size_t counts[], size_t k,
                        uint32_t timed)
{
    points p[MAX_LISTS];
    for (size_t i = 0; i < k; i++)
        p[i] = (points){lists[i], 2 * counts[i], 0};
    int running = 0;
    for (;;) {
        int64_t t = INT64_MAX;
        for (size_t i = 0; i < k; i++)
            if (p[i].next < p[i].n && point_time(&p[i]) < t)
                t = point_time(&p[i]);
        if (t == INT64_MAX)
            return 0;
        int delta[MAX_TIED];
        size_t n = 0;
        for (size_t i = 0; i < k; i++)
            for (; p[i].next < p[i].n && point_time(&p[i]) == t && n < MAX_TIED; p[i].next++)
                delta[n++] = p[i].next % 2 ? -(1 << i) : 1 << i;
        if (n > 1 && tie_may_add(running, delta, n, timed))
            return 1;
        for (size_t i = 0; i < n; i++)
            running += delta[i];
    }
}

/* HTA's sweep: per list its starts then its ends appended, the whole list
 * re-sorted by numpy's quicksort each time; the point's bit rides in the
 * index (2 x list, + 1 for an end). */
static int replay_sweep(const hta_interval *const lists[], const size_t counts[], size_t k,
                        uint32_t *seen)
{
    size_t total = 0;
    for (size_t i = 0; i < k; i++)
        total += 2 * counts[i];
    hta_keyed *v = hta_large_malloc((total + 1) * sizeof *v);
    if (!v)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        for (size_t j = 0; j < counts[i]; j++)
            v[m++] = (hta_keyed){lists[i][j].start, 2 * i};
        for (size_t j = 0; j < counts[i]; j++)
            v[m++] = (hta_keyed){lists[i][j].end, 2 * i + 1};
        hta_sort_keyed_like_numpy(v, m);
    }
    int running = 0;
    for (size_t j = 0; j < m; j++) {
        int bit = 1 << (v[j].index / 2);
        running += v[j].index % 2 ? -bit : bit;
        if (running > 0 && running < 32)
            *seen |= 1u << running;
    }
    free(v);
    return 0;
}

int hta_kernel_type_masks_like_hta(const hta_interval *const lists[], const size_t counts[],
                                   size_t k, uint32_t timed, uint32_t *seen)
{
    *seen = timed;
    if (k > MAX_LISTS || !ties_may_add(lists, counts, k, timed))
        return 0;
    return replay_sweep(lists, counts, k, seen);
}
