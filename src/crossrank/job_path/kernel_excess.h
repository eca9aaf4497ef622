/* crossrank/job_path/kernel_excess.h: how much longer each rank's kernels run
 * than the median over the ranks of the same kernel at the same place in
 * the step (crossrank/job_path/kernel_excess.c). */
#ifndef HTA_KERNEL_EXCESS_H
#define HTA_KERNEL_EXCESS_H

#include <stddef.h>
#include <stdint.h>

#include "crossrank/exchange/processes.h"
#include "table/table.h"

/* Per (rank, step, name), the sums over its launches in the step of
 * max(0, duration - median) and of the duration; name_id -1: over every
 * kernel of the rank's step. */
typedef struct hta_kernel_excess {
    int64_t rank, step, name_id;
    double excess_ns, dur_ns;
} hta_kernel_excess;

/* Every process, from its ranks' "_kernel_runs", "_kernel_durations"
 * and "_path_names" (analysis/critical_path.h; NULL: none): the medians
 * found among the processes, and this process's ranks' excesses into
 * *out (by rank, step, name_id; the caller frees), *n of them.  -1 on
 * every process when one ran out of memory or the tables disagree. */
int hta_kernel_excess_exchange(const hta_processes *pr, const hta_table *runs,
                               const hta_table *durations, const hta_table *names,
                               hta_kernel_excess **out, size_t *n);

/* The share of (rank, step, name)'s time above the medians, that of the
 * rank's step when the name has none (out of the TOP names of a
 * stretch), 0 when neither is known.  ex[0..n) as the exchange gives it. */
double hta_kernel_excess_share(const hta_kernel_excess *ex, size_t n, int64_t rank,
                               int64_t step, int64_t name_id);

/* A launch's place (step, name_id, the place-th launch of the name in
 * the step) on a rank, and the median over the ranks there. */
typedef struct hta_kernel_median {
    int64_t rank, step, name_id, place;
    double median;
} hta_kernel_median;

/* As hta_kernel_excess_exchange, but this process's ranks' launches with
 * their places' medians into *out (sorted by hta_kernel_median_compare;
 * the caller frees), *n of them. */
int hta_kernel_medians_exchange(const hta_processes *pr, const hta_table *runs,
                                const hta_table *durations, const hta_table *names,
                                hta_kernel_median **out, size_t *n);
/* qsort's order of hta_kernel_median: rank, step, name_id, place. */
int hta_kernel_median_compare(const void *a, const void *b);

#endif
