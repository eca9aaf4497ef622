/* analysis/ops.h: entry point of analysis/ops.c (registry.h). */
#ifndef HTA_OPS_H
#define HTA_OPS_H

#include "model/rank_view.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

int hta_ops(const hta_rank_view *view, const hta_analysis_settings *opt, hta_tableset *out,
            hta_error *err);

/* The columns of /ops (docs/results-format.md). */
enum {
    HTA_OPS_RANK,
    HTA_OPS_NAME,
    HTA_OPS_INPUT_DIMS,
    HTA_OPS_INPUT_TYPE,
    HTA_OPS_CALLS,
    HTA_OPS_CALLS_WITH_GPU,
    HTA_OPS_CALLS_WITH_KERNELS,
    HTA_OPS_GPU_EVENTS,
    HTA_OPS_GPU_EVENTS_PER_CALL,
    HTA_OPS_GPU_BUSY_SUM_US,
    HTA_OPS_GPU_BUSY_MEAN_US,
    HTA_OPS_GPU_BUSY_MIN_US,
    HTA_OPS_GPU_BUSY_MAX_US,
    HTA_OPS_GPU_BUSY_STD_US,
    HTA_OPS_CPU_TIME_US,
    HTA_OPS_OP_TO_LAUNCH_MEAN_US,
    HTA_OPS_LAUNCH_TO_KERNEL_MEAN_US,
    HTA_OPS_N_COLUMNS
};
extern const hta_table_spec hta_ops_table;

/* The columns of /detail/op_kernels (docs/results-format.md). */
enum {
    HTA_DETAIL_OP_KERNELS_RANK,
    HTA_DETAIL_OP_KERNELS_NAME,
    HTA_DETAIL_OP_KERNELS_TS_US,
    HTA_DETAIL_OP_KERNELS_KERNELS,
    HTA_DETAIL_OP_KERNELS_OP_TO_LAUNCH_US,
    HTA_DETAIL_OP_KERNELS_LAUNCH_TO_KERNEL_US,
    HTA_DETAIL_OP_KERNELS_N_COLUMNS
};
extern const hta_table_spec hta_detail_op_kernels_table;

#endif
