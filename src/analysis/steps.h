/* analysis/steps.h: entry point of analysis/steps.c (registry.h). */
#ifndef HTA_STEPS_H
#define HTA_STEPS_H

#include "analysis/registry.h"

/* "steps": per rank and ProfilerStep, and the step time's mean and
 * coefficient of variation in "rank_metrics". */
int hta_steps(const hta_rank_view *view, hta_tableset *out, hta_error *err);

#endif
