/* hta/interval.h: interval arithmetic on [start, end) nanosecond spans.
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

/* Sorts and merges iv in place; returns the number of merged intervals. */
size_t hta_intervals_union(hta_interval *iv, size_t n);
/* Total length of merged (disjoint, sorted) intervals. */
int64_t hta_intervals_length(const hta_interval *iv, size_t n);
/* Length of the intersection of two merged interval lists. */
int64_t hta_intervals_overlap(const hta_interval *a, size_t na,
                              const hta_interval *b, size_t nb);

/* Writes the intersection of two merged lists to out (room for na + nb
 * intervals); returns its count.  The result is merged too. */
size_t hta_intervals_intersection(const hta_interval *a, size_t na,
                                  const hta_interval *b, size_t nb, hta_interval *out);

#endif
