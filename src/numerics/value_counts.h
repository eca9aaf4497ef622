/* numerics/value_counts.h: how often each integer value occurs, summarised as
 * hta_summarize would summarise the values themselves.
 *
 * A queue length takes one value per step but only a few distinct ones
 * (a stream's queue rarely holds more than its launch limit), so counting
 * them keeps a stream's statistics in a few kilobytes where the values
 * took eight bytes each.  hta_summarize sorts the values and adds them up
 * in that order; the summary walks the counts in the same ascending order,
 * adding each value once per occurrence, so it is bit-identical to
 * hta_summarize over the same values. */
#ifndef HTA_VALUE_COUNTS_H
#define HTA_VALUE_COUNTS_H

#include <stddef.h>
#include <stdint.h>

#include "numerics/stats.h"

typedef struct hta_value_counts {
    size_t *at_least_zero;     /* owned: occurrences of v at [v] */
    size_t *below_zero;        /* owned: occurrences of v at [-v - 1] */
    size_t n_at_least_zero, n_below_zero; /* lengths */
    size_t total;
} hta_value_counts;

/* Counts one more v; -1 when out of memory. */
int hta_value_counts_add(hta_value_counts *c, int64_t v);
void hta_value_counts_summarize(const hta_value_counts *c, hta_summary *out);
void hta_value_counts_free(hta_value_counts *c);

#endif
