/* model/interval.h: interval arithmetic on [start, end) nanosecond spans.
 *
 * Union follows HTA: sort by start; a new merged interval begins only when
 * an interval starts strictly after the running maximum end, so touching
 * intervals merge. */
#ifndef HTA_INTERVAL_H
#define HTA_INTERVAL_H

#include <stddef.h>
#include <stdint.h>

typedef struct hta_interval {
    int64_t start, end;
} hta_interval;

/* The union's merge step: next, which starts no earlier than *current,
 * extends *current when it starts at or before its end (returns 0), and
 * begins a new merged interval otherwise (returns 1, *current as it was). */
static inline int hta_interval_merge(hta_interval *current, hta_interval next)
{
    if (next.start > current->end)
        return 1;
    if (next.end > current->end)
        current->end = next.end;
    return 0;
}

/* Sorts and merges iv in place; returns the number of merged intervals. */
size_t hta_intervals_union(hta_interval *iv, size_t n);
/* Total length of merged (disjoint, sorted) intervals. */
int64_t hta_intervals_length(const hta_interval *iv, size_t n);
/* Length of the intersection of two merged interval lists. */
int64_t hta_intervals_overlap(const hta_interval *a, size_t na,
                              const hta_interval *b, size_t nb);

/* Most lists hta_intervals_exclusive combines. */
#define HTA_INTERVAL_MAX_LISTS 8

/* Exclusive time of every combination of k merged lists (k <=
 * HTA_INTERVAL_MAX_LISTS): time_by_mask[m] (2^k entries) receives how long
 * exactly the lists whose bits are set in m cover an instant, e.g. m = 3 is
 * "lists 0 and 1 and no other".  time_by_mask[0] is the time covered by no
 * list between the first start and the last end of all lists.  Empty or
 * inverted intervals cover nothing. */
void hta_intervals_exclusive(const hta_interval *const lists[], const size_t counts[],
                             size_t k, int64_t *time_by_mask);

/* Hands each piece of the intersection of two merged lists to emit, in
 * order, without storing them; the pieces are merged too. */
typedef void (*hta_interval_visitor)(void *ctx, int64_t start, int64_t end);
void hta_intervals_walk_intersection(const hta_interval *a, size_t na, const hta_interval *b,
                                     size_t nb, hta_interval_visitor emit, void *ctx);

#endif
