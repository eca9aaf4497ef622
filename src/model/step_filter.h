/* model/step_filter.h: the step filter (definitions section 2), applied to
 * a trace in place before its view is built. */
#ifndef HTA_STEP_FILTER_H
#define HTA_STEP_FILTER_H

#include <stddef.h>

#include "model/trace.h"
#include "util/corrmap.h"
#include "util/error.h"

typedef struct hta_step_filter_stats {
    int applied;               /* the rank had >= 2 ProfilerStep#N names */
    size_t dropped_gpu_events;
    size_t dropped_events;
    /* Of the dropped GPU events, those with a correlation no CPU event
     * carries: GPU events without a CPU side. */
    size_t unlaunched_gpu_events;
} hta_step_filter_stats;

/* Filters trace in place and fills launches (initialised here) with each
 * correlation's first CPU-side event in the filtered trace: the view's
 * launch index (hta_rank_view_build takes it over), built in the passes
 * the filter makes anyway.  The caller frees launches unless the view
 * took it. */
int hta_step_filter(hta_trace *trace, int include_last_step, hta_step_filter_stats *stats,
                    hta_corrmap *launches, hta_error *err);

#endif
