/* crossrank/step_comparison.h: each profiler step across ranks. */
#ifndef HTA_STEP_COMPARISON_H
#define HTA_STEP_COMPARISON_H

#include "table/table.h"
#include "util/error.h"

/* "cross_rank/steps" from the per-rank "steps" table. */
int hta_step_comparison(hta_tableset *set, hta_error *err);

#endif
