/* analysis/kernel_breakdown.h: entry point of analysis/kernel_breakdown.c (registry.h). */
#ifndef HTA_KERNEL_BREAKDOWN_H
#define HTA_KERNEL_BREAKDOWN_H

#include "model/rank_view.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

int hta_kernel_breakdown(const hta_rank_view *view, const hta_analysis_settings *opt,
                         hta_tableset *out, hta_error *err);

/* The columns of /kernels, /kernels_top (docs/results-format.md). */
enum {
    HTA_KERNELS_RANK,
    HTA_KERNELS_NAME,
    HTA_KERNELS_KERNEL_TYPE,
    HTA_KERNELS_COUNT,
    HTA_KERNELS_SUM_US,
    HTA_KERNELS_MAX_US,
    HTA_KERNELS_MIN_US,
    HTA_KERNELS_MEAN_US,
    HTA_KERNELS_STDDEV_US,
    HTA_KERNELS_N_COLUMNS
};
extern const hta_table_spec hta_kernels_table;
extern const hta_table_spec hta_kernels_top_table;

/* The columns of /kernel_type_by_rank (docs/results-format.md). */
enum {
    HTA_KERNEL_TYPE_BY_RANK_RANK,
    HTA_KERNEL_TYPE_BY_RANK_KERNEL_TYPE,
    HTA_KERNEL_TYPE_BY_RANK_SUM_US,
    HTA_KERNEL_TYPE_BY_RANK_N_COLUMNS
};
extern const hta_table_spec hta_kernel_type_by_rank_table;

#endif
