/* crossrank/job_path/kernel_medians.h: the median over the ranks of each
 * kernel at its place in the step (crossrank/job_path/kernel_medians.c). */
#ifndef HTA_KERNEL_MEDIANS_H
#define HTA_KERNEL_MEDIANS_H

#include <stddef.h>
#include <stdint.h>

#include "crossrank/exchange/processes.h"
#include "table/table.h"

/* A launch's place (step, name_id, the place-th launch of the name in
 * the step) on a rank, and the median over the ranks there. */
typedef struct hta_kernel_median {
    int64_t rank, step, name_id, place;
    double median;
} hta_kernel_median;

/* Every process, from its ranks' "_kernel_runs", "_kernel_durations"
 * and "_path_names" (analysis/critical_path.h; NULL: none): the medians
 * found among the processes, and this process's ranks' launches with
 * their places' medians into *out (sorted by hta_kernel_median_compare;
 * the caller frees), *n of them.  -1 on every process when one ran out
 * of memory or the tables disagree. */
int hta_kernel_medians_exchange(const hta_processes *pr, const hta_table *runs,
                                const hta_table *durations, const hta_table *names,
                                hta_kernel_median **out, size_t *n);
/* qsort's order of hta_kernel_median: rank, step, name_id, place. */
int hta_kernel_median_compare(const void *a, const void *b);

#endif
