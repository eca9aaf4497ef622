/* analysis/temporal_breakdown.h: entry point of analysis/temporal_breakdown.c (registry.h). */
#ifndef HTA_TEMPORAL_BREAKDOWN_H
#define HTA_TEMPORAL_BREAKDOWN_H

#include "model/rank_view.h"
#include "table/table.h"
#include "util/error.h"

int hta_temporal_breakdown(const hta_rank_view *view, hta_tableset *out, hta_error *err);

/* The columns of /temporal_breakdown (docs/results-format.md). */
enum {
    HTA_TEMPORAL_BREAKDOWN_RANK,
    HTA_TEMPORAL_BREAKDOWN_IDLE_TIME_US,
    HTA_TEMPORAL_BREAKDOWN_COMPUTE_TIME_US,
    HTA_TEMPORAL_BREAKDOWN_NON_COMPUTE_TIME_US,
    HTA_TEMPORAL_BREAKDOWN_KERNEL_TIME_US,
    HTA_TEMPORAL_BREAKDOWN_IDLE_TIME_PCTG,
    HTA_TEMPORAL_BREAKDOWN_COMPUTE_TIME_PCTG,
    HTA_TEMPORAL_BREAKDOWN_NON_COMPUTE_TIME_PCTG,
    HTA_TEMPORAL_BREAKDOWN_N_COLUMNS
};
extern const hta_table_spec hta_temporal_breakdown_table;

#endif
