/* crossrank/compare/op_perf_comparison.h: each op shape's achieved TFLOPS across
 * ranks. */
#ifndef HTA_OP_PERF_COMPARISON_H
#define HTA_OP_PERF_COMPARISON_H

#include "table/table.h"
#include "util/error.h"

/* Fills /steps' traced_flops and traced_mfu_pct from the ranks'
 * "_step_flops" (analysis/op_perf.c). */
int hta_op_perf_steps(hta_tableset *set, hta_error *err);
/* "cross_rank/op_perf" from the per-rank "op_perf" table. */
int hta_op_perf_comparison(hta_tableset *set, hta_error *err);

/* The columns of /cross_rank/op_perf (docs/results-format.md). */
enum {
    HTA_CROSS_OP_PERF_NAME,
    HTA_CROSS_OP_PERF_INPUT_DIMS,
    HTA_CROSS_OP_PERF_INPUT_TYPE,
    HTA_CROSS_OP_PERF_KIND,
    HTA_CROSS_OP_PERF_N_RANKS,
    HTA_CROSS_OP_PERF_CALLS,
    HTA_CROSS_OP_PERF_FLOPS,
    HTA_CROSS_OP_PERF_GPU_TIME_US,
    HTA_CROSS_OP_PERF_PCT_ROOFLINE,
    HTA_CROSS_OP_PERF_TFLOPS_MIN,
    HTA_CROSS_OP_PERF_TFLOPS_MEDIAN,
    HTA_CROSS_OP_PERF_TFLOPS_MAX,
    HTA_CROSS_OP_PERF_SLOWEST_RANK,
    HTA_CROSS_OP_PERF_SLOWEST_RATIO,
    HTA_CROSS_OP_PERF_N_COLUMNS
};
extern const hta_table_spec hta_cross_op_perf_table;

#endif
