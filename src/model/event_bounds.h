/* model/event_bounds.h: the times an event must have to be analysed.
 *
 * Every reader applies one rule (docs/robustness.md): an event is analysed
 * when it starts in [0, HTA_MAX_TS_NS] and lasts [0, HTA_MAX_DUR_NS]; any
 * other is skipped and counted, never an error.  The bounds keep every sum
 * and difference of event times the analyses form far inside int64
 * nanoseconds.  Inputs give an event as start and duration (Kineto, CUPTI
 * CSV) or as start and end (Nsight, CUPTI CSV); the checks below form no
 * sum or difference that could overflow, whatever the input's values. */
#ifndef HTA_EVENT_BOUNDS_H
#define HTA_EVENT_BOUNDS_H

#include <stdint.h>

#include "numerics/stats.h"

#define HTA_MAX_TS_NS 4000000000000000000LL /* 4e15 us: the year 2096 */
#define HTA_MAX_DUR_NS 1000000000000000LL   /* 1e12 us: 11.6 days */

/* Whether an event starting at ts_ns and lasting dur_ns is analysed. */
static inline int hta_span_is_analysable(int64_t ts_ns, int64_t dur_ns)
{
    return ts_ns >= 0 && ts_ns <= HTA_MAX_TS_NS && dur_ns >= 0 && dur_ns <= HTA_MAX_DUR_NS;
}

/* Whether an event from ts_ns to end_ns is analysed: the end is compared
 * before the two are subtracted, so an end before the start or a start
 * out of bounds never reaches the difference. */
static inline int hta_span_ends_analysable(int64_t ts_ns, int64_t end_ns)
{
    return ts_ns >= 0 && ts_ns <= HTA_MAX_TS_NS && end_ns >= ts_ns &&
           end_ns - ts_ns <= HTA_MAX_DUR_NS;
}

/* The end of an event given by start and duration, for a reader that
 * keeps ends: a sum past int64 is clamped to it rather than wrapping, so
 * that the event stays out of bounds instead of landing in them. */
static inline int64_t hta_span_end(int64_t ts_ns, int64_t dur_ns)
{
    return hta_add_saturating(ts_ns, dur_ns);
}

#endif
