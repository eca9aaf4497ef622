/* crossrank/op_perf_comparison.h: each op shape's achieved TFLOPS across
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

#endif
