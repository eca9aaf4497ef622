/* analysis/gpu_gaps.h: entry point of analysis/gpu_gaps.c (registry.h). */
#ifndef HTA_GPU_GAPS_H
#define HTA_GPU_GAPS_H

#include "model/rank_view.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

int hta_gpu_gaps(const hta_rank_view *view, const hta_analysis_settings *opt, hta_tableset *out,
                 hta_error *err);

/* The columns of /gpu_gaps (docs/results-format.md). */
enum {
    HTA_GPU_GAPS_RANK,
    HTA_GPU_GAPS_STEP,
    HTA_GPU_GAPS_START_US,
    HTA_GPU_GAPS_DURATION_US,
    HTA_GPU_GAPS_GPU_EVENT_BEFORE,
    HTA_GPU_GAPS_GPU_EVENT_AFTER,
    HTA_GPU_GAPS_LAUNCH_DELAY_US,
    HTA_GPU_GAPS_CPU_EVENT,
    HTA_GPU_GAPS_CPU_EVENT_OVERLAP_US,
    HTA_GPU_GAPS_SYNC_CALL,
    HTA_GPU_GAPS_CAUSE,
    HTA_GPU_GAPS_N_COLUMNS
};
extern const hta_table_spec hta_gpu_gaps_table;

/* The columns of /sync_calls (docs/results-format.md). */
enum {
    HTA_SYNC_CALLS_RANK,
    HTA_SYNC_CALLS_API,
    HTA_SYNC_CALLS_COUNT,
    HTA_SYNC_CALLS_TOTAL_US,
    HTA_SYNC_CALLS_MAX_US,
    HTA_SYNC_CALLS_GPU_IDLE_US,
    HTA_SYNC_CALLS_N_COLUMNS
};
extern const hta_table_spec hta_sync_calls_table;

#endif
