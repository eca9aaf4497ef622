/* crossrank/compare/step_comparison.h: each profiler step across ranks. */
#ifndef HTA_STEP_COMPARISON_H
#define HTA_STEP_COMPARISON_H

#include "table/table.h"
#include "util/error.h"

/* "cross_rank/steps" from the per-rank "steps" table. */
int hta_step_comparison(hta_tableset *set, hta_error *err);

/* The columns of /cross_rank/steps (docs/results-format.md). */
enum {
    HTA_CROSS_STEPS_STEP,
    HTA_CROSS_STEPS_N_RANKS,
    HTA_CROSS_STEPS_STEP_TIME_MIN_US,
    HTA_CROSS_STEPS_STEP_TIME_MEDIAN_US,
    HTA_CROSS_STEPS_STEP_TIME_MAX_US,
    HTA_CROSS_STEPS_SLOWEST_RANK,
    HTA_CROSS_STEPS_N_COLUMNS
};
extern const hta_table_spec hta_cross_steps_table;

#endif
