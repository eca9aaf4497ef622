/* temporal_breakdown.c: idle / compute / non-compute GPU time of a rank
 * (definitions section 4, HTA's get_temporal_breakdown).
 *
 * kernel_time spans the first GPU event's start to the last merged end over
 * every stream; idle is that span minus the union of all GPU events;
 * compute is the union of COMPUTATION kernels; the rest is non-compute. */

#include "analysis/temporal_breakdown.h"

#include "analysis/metrics.h"

#include <math.h>


static const hta_column COLUMNS[HTA_TEMPORAL_BREAKDOWN_N_COLUMNS] = {
    [HTA_TEMPORAL_BREAKDOWN_RANK] = {"rank", HTA_COL_I64},
    [HTA_TEMPORAL_BREAKDOWN_IDLE_TIME_US] = {"idle_time_us", HTA_COL_F64},
    [HTA_TEMPORAL_BREAKDOWN_COMPUTE_TIME_US] = {"compute_time_us", HTA_COL_F64},
    [HTA_TEMPORAL_BREAKDOWN_NON_COMPUTE_TIME_US] = {"non_compute_time_us", HTA_COL_F64},
    [HTA_TEMPORAL_BREAKDOWN_KERNEL_TIME_US] = {"kernel_time_us", HTA_COL_F64},
    [HTA_TEMPORAL_BREAKDOWN_IDLE_TIME_PCTG] = {"idle_time_pctg", HTA_COL_F64},
    [HTA_TEMPORAL_BREAKDOWN_COMPUTE_TIME_PCTG] = {"compute_time_pctg", HTA_COL_F64},
    [HTA_TEMPORAL_BREAKDOWN_NON_COMPUTE_TIME_PCTG] = {"non_compute_time_pctg", HTA_COL_F64},
};
const hta_table_spec hta_temporal_breakdown_table = {
    "temporal_breakdown", COLUMNS, HTA_TEMPORAL_BREAKDOWN_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

static double percent_2dp(int64_t part, int64_t whole)
{
    return whole > 0 ? round(10000.0 * (double)part / (double)whole) / 100.0 : NAN;
}

int hta_temporal_breakdown(const hta_rank_view *v, hta_tableset *out, hta_error *err)
{
    if (v->n_gpu == 0)
        return 0;
    const hta_type_unions *u = &v->unions;
    int64_t kernel_time = u->all_end - u->all_start;
    int64_t busy = u->all_length;
    int64_t compute = hta_intervals_length(u->of[HTA_KT_COMPUTATION], u->n[HTA_KT_COMPUTATION]);
    int64_t idle = kernel_time - busy;
    int64_t non_compute = kernel_time - compute - idle;

    hta_table *t = hta_tableset_table(out, &hta_temporal_breakdown_table);
    if (!t)
        return hta_fail(err, "out of memory in the temporal breakdown");
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, v->rank_key);
    hta_row_put_f64(&row, hta_ns_to_us(idle));
    hta_row_put_f64(&row, hta_ns_to_us(compute));
    hta_row_put_f64(&row, hta_ns_to_us(non_compute));
    hta_row_put_f64(&row, hta_ns_to_us(kernel_time));
    hta_row_put_f64(&row, percent_2dp(idle, kernel_time));
    hta_row_put_f64(&row, percent_2dp(compute, kernel_time));
    hta_row_put_f64(&row, percent_2dp(non_compute, kernel_time));
    if (hta_row_done(&row))
        return hta_fail(err, "out of memory in the temporal breakdown");

    /* Unrounded shares for the outlier search: rounding would hide small
     * but consistent differences between ranks. */
    double span = (double)kernel_time;
    int rc =
        hta_emit_metric(out, v->rank_key, HTA_METRIC_IDLE_TIME_US, NULL, hta_ns_to_us(idle)) |
        hta_emit_metric(out, v->rank_key, HTA_METRIC_COMPUTE_TIME_US, NULL, hta_ns_to_us(compute)) |
        hta_emit_metric(out, v->rank_key, HTA_METRIC_NON_COMPUTE_TIME_US, NULL,
                        hta_ns_to_us(non_compute)) |
        hta_emit_metric(out, v->rank_key, HTA_METRIC_KERNEL_TIME_US, NULL,
                        hta_ns_to_us(kernel_time)) |
        hta_emit_metric(out, v->rank_key, HTA_METRIC_IDLE_TIME_PCTG, NULL,
                        span > 0 ? 100.0 * idle / span : NAN) |
        hta_emit_metric(out, v->rank_key, HTA_METRIC_COMPUTE_TIME_PCTG, NULL,
                        span > 0 ? 100.0 * compute / span : NAN) |
        hta_emit_metric(out, v->rank_key, HTA_METRIC_NON_COMPUTE_TIME_PCTG, NULL,
                        span > 0 ? 100.0 * non_compute / span : NAN);
    return rc ? hta_fail(err, "out of memory in the temporal breakdown") : 0;
}
