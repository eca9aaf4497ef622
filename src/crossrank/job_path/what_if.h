/* crossrank/job_path/what_if.h: the step time each of the costliest delays would
 * leave, predicted on the job's critical path (crossrank/job_path/what_if.c). */
#ifndef HTA_WHAT_IF_H
#define HTA_WHAT_IF_H

#include "table/table.h"
#include "util/error.h"

/* Root: "what_if" from "_path_walk" and "_path_ends"
 * (crossrank/job_path/global_path.h), which it then drops, "delay_costs", "steps"
 * and "cross_rank/steps". */
int hta_what_if(hta_tableset *set, hta_error *err);

/* The columns of /what_if (docs/results-format.md). */
enum {
    HTA_WHAT_IF_STEP,
    HTA_WHAT_IF_RANK,
    HTA_WHAT_IF_CAUSE,
    HTA_WHAT_IF_CHANGE,
    HTA_WHAT_IF_DELAY_COST_US,
    HTA_WHAT_IF_ON_PATH_US,
    HTA_WHAT_IF_SAVING_US,
    HTA_WHAT_IF_STEP_TIME_US,
    HTA_WHAT_IF_PREDICTED_STEP_TIME_US,
    HTA_WHAT_IF_N_COLUMNS
};
extern const hta_table_spec hta_what_if_table;

#endif
