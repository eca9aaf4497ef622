/* model/hta_rounding.h: HTA's rounding of event times (--round-like-hta). */
#ifndef HTA_HTA_ROUNDING_H
#define HTA_HTA_ROUNDING_H

#include "model/trace.h"

/* HTA 0.6.1 rounds every event of a trace with fractional timestamps to
 * whole microseconds, start up and end down (its round_down_time_stamps).
 * Applied on request (--round-like-hta) to reproduce HTA's numbers. */
void hta_round_like_hta(hta_trace *trace);

#endif
