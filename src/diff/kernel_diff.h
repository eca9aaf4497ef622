/* diff/kernel_diff.h: which kernels changed between two runs.
 *
 * /diff/kernels: one row per kernel name over all ranks (rank -1: each
 * run's every analysed rank summed) and per (rank, name) for the ranks both
 * runs analysed; count, total, mean and max in each run, the change of the
 * total, and a class: added, removed, slower, faster, or unchanged when
 * the total's relative change is within min_change.  Rows are ordered by
 * rank (-1 first), then by the absolute change of the total, largest first.
 * /diff/kernel_set: the names present in one run only, over all ranks and
 * per rank, with that run's count and time (the CUPTI notebook's set
 * differences). */
#ifndef HTA_KERNEL_DIFF_H
#define HTA_KERNEL_DIFF_H

#include "diff/diff_input.h"

#define HTA_DIFF_ALL_RANKS (-1)

int hta_diff_kernels(const hta_diff_input *base, const hta_diff_input *new_, double min_change,
                     hta_tableset *out, hta_error *err);

/* The class of a kernel whose total went from base_total to new_total. */
const char *hta_diff_kernel_class(int in_base, int in_new, double base_total, double new_total,
                                  double min_change);

/* The columns of /diff/kernels (docs/results-format.md). */
enum {
    HTA_DIFF_KERNELS_RANK,
    HTA_DIFF_KERNELS_NAME,
    HTA_DIFF_KERNELS_KERNEL_TYPE,
    HTA_DIFF_KERNELS_CLASS,
    HTA_DIFF_KERNELS_BASE_COUNT,
    HTA_DIFF_KERNELS_NEW_COUNT,
    HTA_DIFF_KERNELS_BASE_TOTAL_US,
    HTA_DIFF_KERNELS_NEW_TOTAL_US,
    HTA_DIFF_KERNELS_CHANGE_US,
    HTA_DIFF_KERNELS_REL_CHANGE,
    HTA_DIFF_KERNELS_BASE_MEAN_US,
    HTA_DIFF_KERNELS_NEW_MEAN_US,
    HTA_DIFF_KERNELS_MEAN_REL_CHANGE,
    HTA_DIFF_KERNELS_BASE_MAX_US,
    HTA_DIFF_KERNELS_NEW_MAX_US,
    HTA_DIFF_KERNELS_N_COLUMNS
};
extern const hta_table_spec hta_diff_kernels_table;

/* The columns of /diff/kernel_set (docs/results-format.md). */
enum {
    HTA_DIFF_KERNEL_SET_RANK,
    HTA_DIFF_KERNEL_SET_NAME,
    HTA_DIFF_KERNEL_SET_KERNEL_TYPE,
    HTA_DIFF_KERNEL_SET_RUN,
    HTA_DIFF_KERNEL_SET_COUNT,
    HTA_DIFF_KERNEL_SET_TOTAL_US,
    HTA_DIFF_KERNEL_SET_MEAN_US,
    HTA_DIFF_KERNEL_SET_MAX_US,
    HTA_DIFF_KERNEL_SET_N_COLUMNS
};
extern const hta_table_spec hta_diff_kernel_set_table;

#endif
