/* rank_metric_diff.c: /diff/rank_metrics (see diff/rank_metric_diff.h).
 *
 * A metric's group is found in the files themselves: a column of
 * /temporal_breakdown is "temporal", of /overlap_breakdown "overlap", and
 * the idle-time analysis records its metrics as idle_<category>_us.  So a
 * metric added to either breakdown is grouped with no change here. */
#include "diff/rank_metric_diff.h"

#include "analysis/metrics.h"
#include "analysis/overlap_breakdown.h"
#include "analysis/temporal_breakdown.h"

#include "diff/row_join.h"

#include <math.h>
#include <string.h>

static const hta_column COLUMNS[HTA_DIFF_RANK_METRICS_N_COLUMNS] = {
    [HTA_DIFF_RANK_METRICS_RANK] = {"rank", HTA_COL_I64},
    [HTA_DIFF_RANK_METRICS_METRIC] = {"metric", HTA_COL_STR},
    [HTA_DIFF_RANK_METRICS_GROUP] = {"group", HTA_COL_STR},
    [HTA_DIFF_RANK_METRICS_STATUS] = {"status", HTA_COL_STR},
    [HTA_DIFF_RANK_METRICS_BASE] = {"base", HTA_COL_F64},
    [HTA_DIFF_RANK_METRICS_NEW] = {"new", HTA_COL_F64},
    [HTA_DIFF_RANK_METRICS_CHANGE] = {"change", HTA_COL_F64},
    [HTA_DIFF_RANK_METRICS_REL_CHANGE] = {"rel_change", HTA_COL_F64},
};
const hta_table_spec hta_diff_rank_metrics_table = {
    "diff/rank_metrics", COLUMNS, HTA_DIFF_RANK_METRICS_N_COLUMNS, 0};

typedef struct join_ctx {
    const hta_diff_input *base, *new_;
    long rank_b, metric_b, value_b, rank_n, metric_n, value_n;
    hta_table *out;
} join_ctx;

static int has_column(const hta_diff_input *in, const hta_table_spec *table, const char *column)
{
    const hta_table *t = hta_diff_table(in, table);
    return t && hta_table_column(t, column) >= 0;
}

static const char *group_of(const join_ctx *j, const char *metric)
{
    if (has_column(j->base, &hta_temporal_breakdown_table, metric) ||
        has_column(j->new_, &hta_temporal_breakdown_table, metric))
        return "temporal";
    if (has_column(j->base, &hta_overlap_breakdown_table, metric) ||
        has_column(j->new_, &hta_overlap_breakdown_table, metric))
        return "overlap";
    if (strncmp(metric, "idle_", 5) == 0)
        return "idle";
    return "other";
}

static const char *status_of(const join_ctx *j, int64_t rank, int in_base, int in_new)
{
    if (in_base && in_new)
        return "both";
    int rank_b = hta_diff_input_has_rank(j->base, rank);
    int rank_n = hta_diff_input_has_rank(j->new_, rank);
    if (in_base)
        return rank_n ? "only_in_base" : "rank_only_in_base";
    return rank_b ? "only_in_new" : "rank_only_in_new";
}

static int join_metric(const hta_cell *b, const hta_cell *n, void *ctx)
{
    join_ctx *j = ctx;
    int64_t rank = b ? b[j->rank_b].i : n[j->rank_n].i;
    const char *metric = b ? b[j->metric_b].s : n[j->metric_n].s;
    double vb = b ? b[j->value_b].f : NAN, vn = n ? n[j->value_n].f : NAN;
    hta_row_builder row = hta_table_add_row(j->out);
    hta_row_put_i64(&row, rank);
    hta_row_put_str(&row, metric);
    hta_row_put_str(&row, group_of(j, metric));
    hta_row_put_str(&row, status_of(j, rank, b != NULL, n != NULL));
    hta_row_put_f64(&row, vb);
    hta_row_put_f64(&row, vn);
    hta_row_put_f64(&row, vn - vb);
    hta_row_put_f64(&row, hta_rel_change(vb, vn));
    return hta_row_done(&row);
}

static int find(const hta_table *t, long *rank, long *metric, long *value, hta_error *err)
{
    if (!t)
        return 0;
    *rank = hta_diff_column(t, &hta_rank_metrics_table, HTA_RANK_METRICS_RANK);
    *metric = hta_diff_column(t, &hta_rank_metrics_table, HTA_RANK_METRICS_METRIC);
    *value = hta_diff_column(t, &hta_rank_metrics_table, HTA_RANK_METRICS_VALUE);
    if (*rank < 0 || *metric < 0 || *value < 0 || t->columns[*value].type != HTA_COL_F64)
        return hta_fail(err, "/rank_metrics lacks its rank, metric or value column");
    return 0;
}

int hta_diff_rank_metrics(const hta_diff_input *base, const hta_diff_input *new_,
                          hta_tableset *out, hta_error *err)
{
    const hta_column *columns = hta_rank_metrics_table.columns;
    const char *const keys[] = {columns[HTA_RANK_METRICS_RANK].name,
                                columns[HTA_RANK_METRICS_METRIC].name};
    const hta_table *tb = hta_diff_table(base, &hta_rank_metrics_table);
    const hta_table *tn = hta_diff_table(new_, &hta_rank_metrics_table);
    join_ctx j = {.base = base, .new_ = new_,
                  .out = hta_tableset_table(out, &hta_diff_rank_metrics_table)};
    if (!j.out)
        return hta_fail(err, "out of memory");
    if (find(tb, &j.rank_b, &j.metric_b, &j.value_b, err) ||
        find(tn, &j.rank_n, &j.metric_n, &j.value_n, err))
        return -1;
    err->text[0] = '\0';
    if (hta_join_rows(tb, tn, keys, 2, join_metric, &j, err))
        return err->text[0] ? -1 : hta_fail(err, "out of memory");
    return 0;
}
