/* analysis/overlap_breakdown.h: entry point of analysis/overlap_breakdown.c (registry.h). */
#ifndef HTA_OVERLAP_BREAKDOWN_H
#define HTA_OVERLAP_BREAKDOWN_H

#include "model/rank_view.h"
#include "table/table.h"
#include "util/error.h"

int hta_overlap_breakdown(const hta_rank_view *view, hta_tableset *out, hta_error *err);

/* The columns of /overlap_breakdown (docs/results-format.md). */
enum {
    HTA_OVERLAP_BREAKDOWN_RANK,
    HTA_OVERLAP_BREAKDOWN_COMPUTE_US,
    HTA_OVERLAP_BREAKDOWN_COMMUNICATE_US,
    HTA_OVERLAP_BREAKDOWN_OVERLAP_US,
    HTA_OVERLAP_BREAKDOWN_EMPTY_US,
    HTA_OVERLAP_BREAKDOWN_COMPUTE_RATIO,
    HTA_OVERLAP_BREAKDOWN_COMMUNICATE_RATIO,
    HTA_OVERLAP_BREAKDOWN_OVERLAP_RATIO,
    HTA_OVERLAP_BREAKDOWN_EMPTY_RATIO,
    HTA_OVERLAP_BREAKDOWN_N_COLUMNS
};
extern const hta_table_spec hta_overlap_breakdown_table;

#endif
