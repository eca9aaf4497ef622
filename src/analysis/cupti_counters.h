/* analysis/cupti_counters.h: CUPTI range-profiler counters with their CPU ops.
 *
 * A trace recorded in CUPTI's range-profiler mode has, instead of kernel
 * events, one "cuda_profiler_range" event per kernel run with the
 * counters collected for it (hta/trace.h: trace->ranges).  The events
 * carry no correlation, so, as HTA does, the i-th range in time goes with
 * the i-th cudaLaunchKernel call in time; where the counts differ (HTA
 * then gives nothing) the first min(ranges, launches) are paired and the
 * rest counted as unmatched.  A launch's op stack is the cpu_ops that
 * enclose it on its thread, outermost first. */
#ifndef HTA_CUPTI_COUNTERS_H
#define HTA_CUPTI_COUNTERS_H

#include "analysis/registry.h"

/* "cupti_counters" (one row per range), "cupti_counter_values" (every
 * counter of every range), "cupti_kernels" (per kernel name) and
 * "cupti_matching" (one row per rank with ranges). */
int hta_cupti_counters(const hta_rank_view *view, hta_tableset *out, hta_error *err);

#endif
