/* analysis/steps.h: entry point of analysis/steps.c (registry.h). */
#ifndef HTA_STEPS_H
#define HTA_STEPS_H

#include "model/rank_view.h"
#include "table/table.h"
#include "util/error.h"

/* "steps": per rank and ProfilerStep, and the step time's mean and
 * coefficient of variation in "rank_metrics". */
int hta_steps(const hta_rank_view *view, hta_tableset *out, hta_error *err);

/* The columns of /steps (docs/results-format.md). */
enum {
    HTA_STEPS_RANK,
    HTA_STEPS_STEP,
    HTA_STEPS_STEP_TIME_US,
    HTA_STEPS_GPU_BUSY_US,
    HTA_STEPS_COMPUTE_US,
    HTA_STEPS_COMM_US,
    HTA_STEPS_EXPOSED_COMM_US,
    HTA_STEPS_IDLE_US,
    HTA_STEPS_LAUNCH_GAP_US,
    HTA_STEPS_DATA_LOADING_US,
    HTA_STEPS_WAIT_US,
    HTA_STEPS_TRACED_FLOPS,
    HTA_STEPS_TRACED_MFU_PCT,
    HTA_STEPS_N_COLUMNS
};
extern const hta_table_spec hta_steps_table;

#endif
