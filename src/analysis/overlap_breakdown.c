/* overlap_breakdown.c: each instant of a rank's GPU span as Compute,
 * Communicate, Overlap or Empty (definitions section 4, the Nsight Systems
 * recipe's split; HTA has no such view).
 *
 * The span runs from the first GPU event's start to the last one's end,
 * over every stream and kernel type.  One sweep over the merged
 * COMPUTATION and COMMUNICATION intervals gives the time with only one,
 * only the other, or both active; Empty is the rest of the span, which
 * includes time when only memory copies or other GPU work runs. */

#include "analysis/overlap_breakdown.h"

#include "analysis/metrics.h"

#include <math.h>


static const hta_column COLUMNS[HTA_OVERLAP_BREAKDOWN_N_COLUMNS] = {
    [HTA_OVERLAP_BREAKDOWN_RANK] = {"rank", HTA_COL_I64},
    [HTA_OVERLAP_BREAKDOWN_COMPUTE_US] = {"compute_us", HTA_COL_F64},
    [HTA_OVERLAP_BREAKDOWN_COMMUNICATE_US] = {"communicate_us", HTA_COL_F64},
    [HTA_OVERLAP_BREAKDOWN_OVERLAP_US] = {"overlap_us", HTA_COL_F64},
    [HTA_OVERLAP_BREAKDOWN_EMPTY_US] = {"empty_us", HTA_COL_F64},
    [HTA_OVERLAP_BREAKDOWN_COMPUTE_RATIO] = {"compute_ratio", HTA_COL_F64},
    [HTA_OVERLAP_BREAKDOWN_COMMUNICATE_RATIO] = {"communicate_ratio", HTA_COL_F64},
    [HTA_OVERLAP_BREAKDOWN_OVERLAP_RATIO] = {"overlap_ratio", HTA_COL_F64},
    [HTA_OVERLAP_BREAKDOWN_EMPTY_RATIO] = {"empty_ratio", HTA_COL_F64},
};
const hta_table_spec hta_overlap_breakdown_table = {
    "overlap_breakdown", COLUMNS, HTA_OVERLAP_BREAKDOWN_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_IN_PLACE};

/* The parts in column order: COLUMNS[1 + p] is part p in us and
 * COLUMNS[1 + N_PARTS + p] its ratio; so are their metrics. */
enum { COMPUTE, COMMUNICATE, OVERLAP, EMPTY, N_PARTS };
static const hta_metric_id PART_US[N_PARTS] = {HTA_METRIC_COMPUTE_US, HTA_METRIC_COMMUNICATE_US,
                                               HTA_METRIC_OVERLAP_US, HTA_METRIC_EMPTY_US};
static const hta_metric_id PART_RATIO[N_PARTS] = {HTA_METRIC_COMPUTE_RATIO,
                                                  HTA_METRIC_COMMUNICATE_RATIO,
                                                  HTA_METRIC_OVERLAP_RATIO, HTA_METRIC_EMPTY_RATIO};

/* The four parts in nanoseconds over the span from the first start of GPU
 * work to its latest end (host waits, cuda_sync records, are not work;
 * being OTHER kernels they are in neither union). */
static void split_span(const hta_rank_view *v, int64_t part[N_PARTS], int64_t *span)
{
    size_t counts[2];
    const hta_interval *lists[2] = {
        hta_rank_view_work_union(v, HTA_KT_COMPUTATION, &counts[0]),
        hta_rank_view_work_union(v, HTA_KT_COMMUNICATION, &counts[1])};
    int64_t by_mask[4];
    hta_intervals_exclusive(lists, counts, 2, by_mask);
    *span = v->work_end - v->work_start;
    part[COMPUTE] = by_mask[1];
    part[COMMUNICATE] = by_mask[2];
    part[OVERLAP] = by_mask[3];
    part[EMPTY] = *span - by_mask[1] - by_mask[2] - by_mask[3];
}

int hta_overlap_breakdown(const hta_rank_view *v, hta_tableset *out, hta_error *err)
{
    if (v->n_work == 0)
        return 0;
    int64_t part[N_PARTS], span;
    split_span(v, part, &span);
    hta_table *t = hta_tableset_table(out, &hta_overlap_breakdown_table);
    if (!t)
        return hta_fail(err, "out of memory in the overlap breakdown");
    double ratio[N_PARTS];
    for (int p = 0; p < N_PARTS; p++)
        ratio[p] = span > 0 ? (double)part[p] / (double)span : NAN;

    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, v->rank_key);
    for (int p = 0; p < N_PARTS; p++)
        hta_row_put_f64(&row, hta_ns_to_us(part[p]));
    for (int p = 0; p < N_PARTS; p++)
        hta_row_put_f64(&row, ratio[p]);
    int rc = hta_row_done(&row);
    for (int p = 0; p < N_PARTS && rc == 0; p++)
        rc = hta_emit_metric(out, v->rank_key, PART_US[p], NULL, hta_ns_to_us(part[p])) ||
             hta_emit_metric(out, v->rank_key, PART_RATIO[p], NULL, ratio[p]);
    return rc ? hta_fail(err, "out of memory in the overlap breakdown") : 0;
}
