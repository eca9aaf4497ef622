/* comm_comp_overlap.c: how much of a rank's communication runs while
 * computation runs too (definitions section 4, HTA's get_comm_comp_overlap).
 *
 * The share is |U_comp intersect U_comm| / |U_comm| over the merged
 * COMPUTATION and COMMUNICATION kernels, as a percentage rounded like
 * HTA's.  A rank without communication time gets NaN: HTA divides by zero
 * there, and 0% would claim a measured absence of overlap. */
#include "analysis/comm_comp_overlap.h"

#include "analysis/metrics.h"
#include "numerics/stats.h"

#include <math.h>

static const hta_column COLUMNS[HTA_COMM_COMP_OVERLAP_N_COLUMNS] = {
    [HTA_COMM_COMP_OVERLAP_RANK] = {"rank", HTA_COL_I64},
    [HTA_COMM_COMP_OVERLAP_COMP_COMM_OVERLAP_PCTG] = {"comp_comm_overlap_pctg", HTA_COL_F64},
};
const hta_table_spec hta_comm_comp_overlap_table = {
    "comm_comp_overlap", COLUMNS, HTA_COMM_COMP_OVERLAP_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_IN_PLACE};

int hta_comm_comp_overlap(const hta_rank_view *v, hta_tableset *out, hta_error *err)
{
    if (v->n_gpu == 0)
        return 0;
    const hta_type_unions *u = &v->unions;
    int64_t comm = hta_intervals_length(u->of[HTA_KT_COMMUNICATION], u->n[HTA_KT_COMMUNICATION]);
    int64_t both = hta_intervals_overlap(u->of[HTA_KT_COMPUTATION], u->n[HTA_KT_COMPUTATION],
                                         u->of[HTA_KT_COMMUNICATION], u->n[HTA_KT_COMMUNICATION]);
    double pctg = comm > 0 ? 100.0 * ((double)both / (double)comm) : NAN;

    hta_table *t = hta_tableset_table(out, &hta_comm_comp_overlap_table);
    if (!t)
        return hta_fail(err, "out of memory in the comm/comp overlap");
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, v->rank_key);
    hta_row_put_f64(&row, hta_round_decimals(pctg, 2));
    /* Unrounded for the outlier search; NaN is skipped there. */
    if (hta_row_done(&row) ||
        hta_emit_metric(out, v->rank_key, HTA_METRIC_COMP_COMM_OVERLAP_PCTG, NULL, pctg))
        return hta_fail(err, "out of memory in the comm/comp overlap");
    return 0;
}
