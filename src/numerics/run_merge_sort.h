/* numerics/run_merge_sort.h: a sort of keyed pairs that come nearly sorted.
 *
 * The critical path sorts each step's few hundred starts and ends by time,
 * equal times in the order they were listed.  Listed in an order close to
 * time order they come as a few ascending runs: merging runs costs n per
 * level and log2(runs) levels, less than a radix sort's passes and
 * 256-bucket tables on so few keys. */
#ifndef HTA_RUN_MERGE_SORT_H
#define HTA_RUN_MERGE_SORT_H

#include <stddef.h>

#include "numerics/argsort.h"

/* Sorts v by key, then index: with indices given in the order of a
 * listing, the order of a stable sort by key of that listing, whatever
 * order v holds them in.  scratch holds n pairs.  -1 when out of memory
 * (v then unchanged). */
int hta_run_merge_sort_keyed(hta_keyed *v, size_t n, hta_keyed *scratch);

#endif
