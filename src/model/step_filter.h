/* model/step_filter.h: the step filter (definitions section 2), applied to
 * a trace in place before its view is built. */
#ifndef HTA_STEP_FILTER_H
#define HTA_STEP_FILTER_H

#include <stddef.h>

#include "model/trace.h"
#include "util/error.h"

typedef struct hta_step_filter_stats {
    int applied;               /* the rank had >= 2 ProfilerStep#N names */
    size_t dropped_gpu_events;
    size_t dropped_events;
    /* Of the dropped GPU events, those with a correlation no CPU event
     * carries: GPU events without a CPU side. */
    size_t unlaunched_gpu_events;
} hta_step_filter_stats;

int hta_step_filter(hta_trace *trace, int include_last_step,
                    hta_step_filter_stats *stats, hta_error *err);

#endif
