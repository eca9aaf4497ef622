/* diff/rank_metric_diff.h: every per-rank scalar of two runs side by side.
 *
 * /diff/rank_metrics: one row per (rank, metric) of /rank_metrics in
 * either run, with both values, the change and the relative change.  group
 * names the breakdown a metric comes from (temporal, overlap, idle, or
 * other), so the temporal, overlap and idle breakdowns of a rank read side
 * by side; status says whether both runs have the row, and when not,
 * whether the whole rank is missing from a run (rank_only_in_base,
 * rank_only_in_new) or just the metric (only_in_base, only_in_new). */
#ifndef HTA_RANK_METRIC_DIFF_H
#define HTA_RANK_METRIC_DIFF_H

#include "diff/diff_input.h"

int hta_diff_rank_metrics(const hta_diff_input *base, const hta_diff_input *new_,
                          hta_tableset *out, hta_error *err);

/* The columns of /diff/rank_metrics (docs/results-format.md). */
enum {
    HTA_DIFF_RANK_METRICS_RANK,
    HTA_DIFF_RANK_METRICS_METRIC,
    HTA_DIFF_RANK_METRICS_GROUP,
    HTA_DIFF_RANK_METRICS_STATUS,
    HTA_DIFF_RANK_METRICS_BASE,
    HTA_DIFF_RANK_METRICS_NEW,
    HTA_DIFF_RANK_METRICS_CHANGE,
    HTA_DIFF_RANK_METRICS_REL_CHANGE,
    HTA_DIFF_RANK_METRICS_N_COLUMNS
};
extern const hta_table_spec hta_diff_rank_metrics_table;

#endif
