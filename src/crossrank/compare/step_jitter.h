/* crossrank/compare/step_jitter.h: what drives each rank's step-time jitter. */
#ifndef HTA_STEP_JITTER_H
#define HTA_STEP_JITTER_H

#include "table/table.h"
#include "util/error.h"

/* "step_jitter" and "step_jitter_slowest" from "steps" (after the waits
 * are added to it, crossrank/exchange/collective_groups.c). */
int hta_step_jitter(hta_tableset *set, hta_error *err);

/* The columns of /step_jitter (docs/results-format.md). */
enum {
    HTA_STEP_JITTER_RANK,
    HTA_STEP_JITTER_COMPONENT,
    HTA_STEP_JITTER_N_STEPS,
    HTA_STEP_JITTER_MEAN_US,
    HTA_STEP_JITTER_STD_US,
    HTA_STEP_JITTER_COVARIANCE_US2,
    HTA_STEP_JITTER_SHARE,
    HTA_STEP_JITTER_N_COLUMNS
};
extern const hta_table_spec hta_step_jitter_table;

/* The columns of /step_jitter_slowest. */
enum {
    HTA_STEP_JITTER_SLOWEST_RANK,
    HTA_STEP_JITTER_SLOWEST_STEP,
    HTA_STEP_JITTER_SLOWEST_STEP_TIME_US,
    HTA_STEP_JITTER_SLOWEST_EXCESS_US,
    HTA_STEP_JITTER_SLOWEST_DOMINANT_COMPONENT,
    HTA_STEP_JITTER_SLOWEST_DOMINANT_EXCESS_US,
    HTA_STEP_JITTER_SLOWEST_N_COLUMNS
};
extern const hta_table_spec hta_step_jitter_slowest_table;

#endif
