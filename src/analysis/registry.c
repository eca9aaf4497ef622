/* registry.c: the analyses every rank runs, in order. */
#include "hta/analysis.h"
#include "hta/timeline.h"

const hta_analysis hta_analyses[] = {
    {"temporal_breakdown", hta_temporal_breakdown},
    {"timeline", hta_timeline_segments},
};

const size_t hta_n_analyses = sizeof hta_analyses / sizeof hta_analyses[0];

static const hta_column METRIC_COLUMNS[] = {
    {"rank", HTA_COL_I64}, {"metric", HTA_COL_STR}, {"value", HTA_COL_F64},
};

int hta_emit_metric(hta_tableset *out, int64_t rank_key, const char *metric, double value)
{
    hta_table *t = hta_tableset_table(out, "rank_metrics", METRIC_COLUMNS, 3);
    if (!t)
        return -1;
    hta_row row = hta_table_add_row(t);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_str(&row, metric);
    hta_row_put_f64(&row, value);
    return hta_row_done(&row);
}
