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

#include "model/rank_view.h"
#include "table/table.h"
#include "util/error.h"

/* "cupti_counters" (one row per range), "cupti_counter_values" (every
 * counter of every range), "cupti_kernels" (per kernel name) and
 * "cupti_matching" (one row per rank with ranges). */
int hta_cupti_counters(const hta_rank_view *view, hta_tableset *out, hta_error *err);

/* The columns of /cupti_counters (docs/results-format.md). */
enum {
    HTA_CUPTI_COUNTERS_RANK,
    HTA_CUPTI_COUNTERS_RANGE,
    HTA_CUPTI_COUNTERS_KERNEL,
    HTA_CUPTI_COUNTERS_TS_US,
    HTA_CUPTI_COUNTERS_DUR_US,
    HTA_CUPTI_COUNTERS_LAUNCH_TS_US,
    HTA_CUPTI_COUNTERS_LAUNCH_CORRELATION,
    HTA_CUPTI_COUNTERS_TOP_OP,
    HTA_CUPTI_COUNTERS_BOTTOM_OP,
    HTA_CUPTI_COUNTERS_OP_STACK,
    HTA_CUPTI_COUNTERS_FLOPS,
    HTA_CUPTI_COUNTERS_FFMA,
    HTA_CUPTI_COUNTERS_FMUL,
    HTA_CUPTI_COUNTERS_FADD,
    HTA_CUPTI_COUNTERS_HFMA,
    HTA_CUPTI_COUNTERS_HMUL,
    HTA_CUPTI_COUNTERS_HADD,
    HTA_CUPTI_COUNTERS_DFMA,
    HTA_CUPTI_COUNTERS_DMUL,
    HTA_CUPTI_COUNTERS_DADD,
    HTA_CUPTI_COUNTERS_N_COLUMNS
};
extern const hta_table_spec hta_cupti_counters_table;

/* The columns of /cupti_counter_values (docs/results-format.md). */
enum {
    HTA_CUPTI_COUNTER_VALUES_RANK,
    HTA_CUPTI_COUNTER_VALUES_RANGE,
    HTA_CUPTI_COUNTER_VALUES_COUNTER,
    HTA_CUPTI_COUNTER_VALUES_VALUE,
    HTA_CUPTI_COUNTER_VALUES_N_COLUMNS
};
extern const hta_table_spec hta_cupti_counter_values_table;

/* The columns of /cupti_kernels (docs/results-format.md). */
enum {
    HTA_CUPTI_KERNELS_RANK,
    HTA_CUPTI_KERNELS_KERNEL,
    HTA_CUPTI_KERNELS_COUNT,
    HTA_CUPTI_KERNELS_DUR_SUM_US,
    HTA_CUPTI_KERNELS_FLOPS_SUM,
    HTA_CUPTI_KERNELS_FLOPS_MEAN,
    HTA_CUPTI_KERNELS_N_COLUMNS
};
extern const hta_table_spec hta_cupti_kernels_table;

/* The columns of /cupti_matching (docs/results-format.md). */
enum {
    HTA_CUPTI_MATCHING_RANK,
    HTA_CUPTI_MATCHING_RANGES,
    HTA_CUPTI_MATCHING_LAUNCHES,
    HTA_CUPTI_MATCHING_MATCHED,
    HTA_CUPTI_MATCHING_UNMATCHED_RANGES,
    HTA_CUPTI_MATCHING_UNMATCHED_LAUNCHES,
    HTA_CUPTI_MATCHING_N_COLUMNS
};
extern const hta_table_spec hta_cupti_matching_table;

#endif
