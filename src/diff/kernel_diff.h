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

#endif
