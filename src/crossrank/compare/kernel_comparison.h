/* crossrank/compare/kernel_comparison.h: each kernel compared over ranks. */
#ifndef HTA_KERNEL_COMPARISON_H
#define HTA_KERNEL_COMPARISON_H

#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* "cross_rank/kernels" from the per-rank "kernels" table. */
int hta_kernel_comparison(hta_tableset *set, const hta_crossrank_settings *opt, hta_error *err);

/* The columns of /cross_rank/kernels (docs/results-format.md). */
enum {
    HTA_CROSS_KERNELS_NAME,
    HTA_CROSS_KERNELS_KERNEL_TYPE,
    HTA_CROSS_KERNELS_N_RANKS,
    HTA_CROSS_KERNELS_MEAN_US,
    HTA_CROSS_KERNELS_STD_US,
    HTA_CROSS_KERNELS_MIN_US,
    HTA_CROSS_KERNELS_MIN_RANK,
    HTA_CROSS_KERNELS_MAX_US,
    HTA_CROSS_KERNELS_MAX_RANK,
    HTA_CROSS_KERNELS_OUTLIER_RANKS,
    HTA_CROSS_KERNELS_N_COLUMNS
};
extern const hta_table_spec hta_cross_kernels_table;

#endif
