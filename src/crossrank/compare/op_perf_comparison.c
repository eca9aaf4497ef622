/* op_perf_comparison.c: each op shape across ranks ("cross_rank/op_perf",
 * docs/definitions.md, Op performance).
 *
 * From the per-rank "op_perf" rows with a rate: per (op name, Input Dims,
 * Input type), the ranks that ran it, their calls, FLOPs and GPU time
 * summed, the roofline time over the sized calls' time in percent, the
 * minimum, median and maximum of their TFLOPS, the slowest rank (the
 * first on ties) and its rate over the median: the same work, so a low
 * ratio is a slow GPU (or a slow kernel choice) on that rank.  Rows by
 * name, dims, type.  Also each step's traced FLOPs into /steps, with
 * their time at peak over the step time (the traced ops' model FLOPs
 * utilisation), from the ranks' "_step_flops". */
#include "crossrank/compare/op_perf_comparison.h"

#include "analysis/op_perf.h"
#include "analysis/steps.h"
#include "crossrank/exchange/step_rows.h"
#include "numerics/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const hta_column COLUMNS[HTA_CROSS_OP_PERF_N_COLUMNS] = {
    [HTA_CROSS_OP_PERF_NAME] = {"name", HTA_COL_STR},
    [HTA_CROSS_OP_PERF_INPUT_DIMS] = {"input_dims", HTA_COL_STR},
    [HTA_CROSS_OP_PERF_INPUT_TYPE] = {"input_type", HTA_COL_STR},
    [HTA_CROSS_OP_PERF_KIND] = {"kind", HTA_COL_STR},
    [HTA_CROSS_OP_PERF_N_RANKS] = {"n_ranks", HTA_COL_I64},
    [HTA_CROSS_OP_PERF_CALLS] = {"calls", HTA_COL_I64},
    [HTA_CROSS_OP_PERF_FLOPS] = {"flops", HTA_COL_F64},
    [HTA_CROSS_OP_PERF_GPU_TIME_US] = {"gpu_time_us", HTA_COL_F64},
    [HTA_CROSS_OP_PERF_PCT_ROOFLINE] = {"pct_roofline", HTA_COL_F64},
    [HTA_CROSS_OP_PERF_TFLOPS_MIN] = {"tflops_min", HTA_COL_F64},
    [HTA_CROSS_OP_PERF_TFLOPS_MEDIAN] = {"tflops_median", HTA_COL_F64},
    [HTA_CROSS_OP_PERF_TFLOPS_MAX] = {"tflops_max", HTA_COL_F64},
    [HTA_CROSS_OP_PERF_SLOWEST_RANK] = {"slowest_rank", HTA_COL_I64},
    [HTA_CROSS_OP_PERF_SLOWEST_RATIO] = {"slowest_ratio", HTA_COL_F64},
};
const hta_table_spec hta_cross_op_perf_table = {
    "cross_rank/op_perf", COLUMNS, HTA_CROSS_OP_PERF_N_COLUMNS, HTA_TABLE_GATHERED};

typedef struct shape_columns {
    long name, dims, type, kind, calls, flops, tflops, time, roofline;
} shape_columns;

typedef struct shape_row {
    const hta_cell *row;
    const shape_columns *c;
} shape_row;

static int compare_shapes(const shape_row *x, const shape_row *y)
{
    const shape_columns *c = x->c;
    int d = strcmp(x->row[c->name].s, y->row[c->name].s);
    d = d ? d : strcmp(x->row[c->dims].s, y->row[c->dims].s);
    return d ? d : strcmp(x->row[c->type].s, y->row[c->type].s);
}

static int compare_shape_then_rank(const void *a, const void *b)
{
    const shape_row *x = a, *y = b;
    int d = compare_shapes(x, y);
    return d ? d : (x->row[0].i > y->row[0].i) - (x->row[0].i < y->row[0].i);
}

static int put_shape(hta_table *t, const shape_row *s, size_t n, double *scratch)
{
    const shape_columns *c = s[0].c;
    size_t slowest = 0;
    int64_t calls = 0;
    double flops = 0, time_us = 0, roofline_us = 0, sized_us = 0;
    for (size_t i = 0; i < n; i++) {
        scratch[i] = s[i].row[c->tflops].f;
        slowest = scratch[i] < s[slowest].row[c->tflops].f ? i : slowest;
        calls += s[i].row[c->calls].i;
        flops += s[i].row[c->flops].f;
        time_us += s[i].row[c->time].f;
        roofline_us += s[i].row[c->roofline].f;
        sized_us += s[i].row[c->flops].f / s[i].row[c->tflops].f / 1e6;
    }
    double slowest_tflops = scratch[slowest];
    hta_sort_doubles(scratch, n);
    double median = hta_quantile_sorted(scratch, n, 0.5);
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_str(&row, s[0].row[c->name].s);
    hta_row_put_str(&row, s[0].row[c->dims].s);
    hta_row_put_str(&row, s[0].row[c->type].s);
    hta_row_put_str(&row, s[0].row[c->kind].s);
    hta_row_put_i64(&row, (int64_t)n);
    hta_row_put_i64(&row, calls);
    hta_row_put_f64(&row, flops);
    hta_row_put_f64(&row, time_us);
    hta_row_put_f64(&row, 100 * roofline_us / sized_us);
    hta_row_put_f64(&row, scratch[0]);
    hta_row_put_f64(&row, median);
    hta_row_put_f64(&row, scratch[n - 1]);
    hta_row_put_i64(&row, s[slowest].row[0].i);
    hta_row_put_f64(&row, median > 0 ? slowest_tflops / median : NAN);
    return hta_row_done(&row);
}

int hta_op_perf_steps(hta_tableset *set, hta_error *err)
{
    hta_table *steps = hta_tableset_find(set, hta_steps_table.name);
    const hta_table *traced = hta_tableset_find(set, hta_step_flops_table.name);
    if (!steps || !traced || steps->n_rows == 0)
        return 0;
    hta_step_rows *index = hta_step_rows_index(steps);
    if (!index)
        return hta_fail(err, "out of memory adding the traced FLOPs to the steps");
    for (size_t i = 0; i < traced->n_rows; i++) {
        const hta_cell *f = hta_table_row(traced, i);
        hta_cell *row =
            hta_step_rows_find(index, f[HTA_STEP_FLOPS_RANK].i, f[HTA_STEP_FLOPS_STEP].i);
        if (!row)
            continue;
        row[HTA_STEPS_TRACED_FLOPS].f = f[HTA_STEP_FLOPS_FLOPS].f;
        row[HTA_STEPS_TRACED_MFU_PCT].f =
            row[HTA_STEPS_STEP_TIME_US].f > 0
                ? 100 * f[HTA_STEP_FLOPS_TIME_AT_PEAK_US].f / row[HTA_STEPS_STEP_TIME_US].f
                : NAN;
    }
    hta_step_rows_free(index);
    return 0;
}

int hta_op_perf_comparison(hta_tableset *set, hta_error *err)
{
    const hta_table *perf = hta_tableset_find(set, hta_op_perf_table.name);
    if (!perf || perf->n_rows == 0)
        return 0;
    shape_columns c = {HTA_OP_PERF_NAME,   HTA_OP_PERF_INPUT_DIMS,
                       HTA_OP_PERF_INPUT_TYPE, HTA_OP_PERF_KIND,
                       HTA_OP_PERF_CALLS,  HTA_OP_PERF_FLOPS,
                       HTA_OP_PERF_TFLOPS, HTA_OP_PERF_GPU_TIME_US,
                       HTA_OP_PERF_ROOFLINE_TIME_US};
    shape_row *s = malloc(perf->n_rows * sizeof *s);
    double *scratch = malloc(perf->n_rows * sizeof *scratch);
    hta_table *t = hta_tableset_table(set, &hta_cross_op_perf_table);
    int rc = s && scratch && t ? 0 : -1;
    size_t n = 0;
    for (size_t r = 0; rc == 0 && r < perf->n_rows; r++) {
        const hta_cell *row = hta_table_row(perf, r);
        if (isfinite(row[c.tflops].f))
            s[n++] = (shape_row){row, &c};
    }
    if (rc == 0 && n)
        qsort(s, n, sizeof *s, compare_shape_then_rank);
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        for (end = i + 1; end < n && compare_shapes(&s[end], &s[i]) == 0;)
            end++;
        rc = put_shape(t, &s[i], end - i, scratch);
    }
    free(s);
    free(scratch);
    return rc ? hta_fail(err, "out of memory comparing op performance") : 0;
}
