/* analysis/op_perf.h: achieved TFLOPS and bandwidth of the GEMM,
 * convolution and attention ops against the GPU's roofline
 * (analysis/op_perf.c), counted during the op breakdown's walk
 * (analysis/ops.c), which already groups the ops by shape and measures
 * each call's own GPU time. */
#ifndef HTA_OP_PERF_H
#define HTA_OP_PERF_H

#include <stddef.h>
#include <stdint.h>

#include "model/op_groups.h"
#include "model/op_walk.h"
#include "model/rank_view.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

typedef struct hta_op_perf hta_op_perf;

/* NULL when out of memory; err says why when the --gpu-spec file cannot
 * be read. */
hta_op_perf *hta_op_perf_start(const hta_rank_view *view, const hta_analysis_settings *opt,
                               hta_error *err);
/* One call of the op group `group` (hta_op_groups_find) whose own GPU
 * events' union lasts own_busy_ns; -1 when out of memory. */
int hta_op_perf_visit(hta_op_perf *p, const hta_op_groups *groups, const hta_op_visit *visit,
                      size_t group, int64_t own_busy_ns);
/* Appends the "op_perf" rows and the rank metrics; -1 when out of memory. */
int hta_op_perf_finish(hta_op_perf *p, const hta_op_groups *groups, hta_tableset *out);
void hta_op_perf_free(hta_op_perf *p);

/* The columns of /op_perf (docs/results-format.md). */
enum {
    HTA_OP_PERF_RANK,
    HTA_OP_PERF_NAME,
    HTA_OP_PERF_INPUT_DIMS,
    HTA_OP_PERF_INPUT_TYPE,
    HTA_OP_PERF_KIND,
    HTA_OP_PERF_DTYPE,
    HTA_OP_PERF_CALLS,
    HTA_OP_PERF_UNSIZED_CALLS,
    HTA_OP_PERF_FLOPS,
    HTA_OP_PERF_BYTES,
    HTA_OP_PERF_GPU_TIME_US,
    HTA_OP_PERF_TFLOPS,
    HTA_OP_PERF_TBPS,
    HTA_OP_PERF_INTENSITY,
    HTA_OP_PERF_PEAK_TFLOPS,
    HTA_OP_PERF_PEAK_TBPS,
    HTA_OP_PERF_ROOFLINE_TIME_US,
    HTA_OP_PERF_BOUND,
    HTA_OP_PERF_PCT_ROOFLINE,
    HTA_OP_PERF_PEAKS_OF,
    HTA_OP_PERF_N_COLUMNS
};
extern const hta_table_spec hta_op_perf_table;

/* The columns of _step_flops (scratch between stages, never written). */
enum {
    HTA_STEP_FLOPS_RANK,
    HTA_STEP_FLOPS_STEP,
    HTA_STEP_FLOPS_FLOPS,
    HTA_STEP_FLOPS_TIME_AT_PEAK_US,
    HTA_STEP_FLOPS_N_COLUMNS
};
extern const hta_table_spec hta_step_flops_table;

#endif
