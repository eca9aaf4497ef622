/* analysis/launch_stats.h: entry point of analysis/launch_stats.c (registry.h). */
#ifndef HTA_LAUNCH_STATS_H
#define HTA_LAUNCH_STATS_H

#include "model/rank_view.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

int hta_launch_stats(const hta_rank_view *view, const hta_analysis_settings *opt,
                     hta_tableset *out, hta_error *err);

/* The columns of /launch_stats (docs/results-format.md). */
enum {
    HTA_LAUNCH_STATS_RANK,
    HTA_LAUNCH_STATS_LAUNCHES,
    HTA_LAUNCH_STATS_CPU_DURATION_P50_US,
    HTA_LAUNCH_STATS_CPU_DURATION_P90_US,
    HTA_LAUNCH_STATS_CPU_DURATION_P99_US,
    HTA_LAUNCH_STATS_CPU_DURATION_MAX_US,
    HTA_LAUNCH_STATS_GPU_DURATION_P50_US,
    HTA_LAUNCH_STATS_GPU_DURATION_P90_US,
    HTA_LAUNCH_STATS_GPU_DURATION_P99_US,
    HTA_LAUNCH_STATS_GPU_DURATION_MAX_US,
    HTA_LAUNCH_STATS_LAUNCH_DELAY_P50_US,
    HTA_LAUNCH_STATS_LAUNCH_DELAY_P90_US,
    HTA_LAUNCH_STATS_LAUNCH_DELAY_P99_US,
    HTA_LAUNCH_STATS_LAUNCH_DELAY_MAX_US,
    HTA_LAUNCH_STATS_SHORT_KERNELS,
    HTA_LAUNCH_STATS_RUNTIME_OUTLIERS,
    HTA_LAUNCH_STATS_LAUNCH_DELAY_OUTLIERS,
    HTA_LAUNCH_STATS_GRAPH_LAUNCHES,
    HTA_LAUNCH_STATS_GRAPH_GPU_EVENTS,
    HTA_LAUNCH_STATS_N_COLUMNS
};
extern const hta_table_spec hta_launch_stats_table;

#endif
