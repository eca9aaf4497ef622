/* name_comparison.c: a per-rank figure per name across ranks (see
 * crossrank/compare/name_comparison.h). */
#include "crossrank/compare/name_comparison.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/annotations.h"
#include "analysis/kernel_sequences.h"
#include "analysis/ops.h"
#include "crossrank/compare/name_groups.h"
#include "crossrank/compare/spread.h"
#include "util/strtab.h"

static const hta_column COLUMNS[HTA_CROSS_NAMES_N_COLUMNS] = {
    [HTA_CROSS_NAMES_NAME] = {"name", HTA_COL_STR},
    [HTA_CROSS_NAMES_N_RANKS] = {"n_ranks", HTA_COL_I64},
    [HTA_CROSS_NAMES_MEAN_US] = {"mean_us", HTA_COL_F64},
    [HTA_CROSS_NAMES_STD_US] = {"std_us", HTA_COL_F64},
    [HTA_CROSS_NAMES_MIN_US] = {"min_us", HTA_COL_F64},
    [HTA_CROSS_NAMES_MIN_RANK] = {"min_rank", HTA_COL_I64},
    [HTA_CROSS_NAMES_MAX_US] = {"max_us", HTA_COL_F64},
    [HTA_CROSS_NAMES_MAX_RANK] = {"max_rank", HTA_COL_I64},
    [HTA_CROSS_NAMES_OUTLIER_RANKS] = {"outlier_ranks", HTA_COL_STR},
};
const hta_table_spec hta_cross_ops_table = {
    "cross_rank/ops", COLUMNS, HTA_CROSS_NAMES_N_COLUMNS, HTA_TABLE_GATHERED};
const hta_table_spec hta_cross_annotations_table = {
    "cross_rank/annotations", COLUMNS, HTA_CROSS_NAMES_N_COLUMNS, HTA_TABLE_GATHERED};
const hta_table_spec hta_cross_kernel_sequences_table = {
    "cross_rank/kernel_sequences", COLUMNS, HTA_CROSS_NAMES_N_COLUMNS, HTA_TABLE_GATHERED};

/* The per-rank sums of one name's rows (in rank order); their count. */
static size_t sum_per_rank(const hta_table *t, long value_col, const size_t *rows, size_t n,
                           int64_t *ranks, double *sums)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const hta_cell *row = hta_table_row(t, rows[i]);
        double v = t->columns[value_col].type == HTA_COL_I64 ? (double)row[value_col].i
                   : isfinite(row[value_col].f)                ? row[value_col].f
                                                               : 0.0;
        if (m && ranks[m - 1] == row[0].i) {
            sums[m - 1] += v;
            continue;
        }
        ranks[m] = row[0].i;
        sums[m++] = v;
    }
    return m;
}

static int put_name(hta_table *into, const char *name, const int64_t *ranks, const double *v,
                    size_t n, const hta_crossrank_settings *opt, hta_buf *text)
{
    size_t nonzero = 0;
    for (size_t i = 0; i < n; i++)
        nonzero += v[i] != 0.0;
    if (!nonzero)
        return 0;
    hta_spread s;
    if (hta_spread_of(v, n, &s) ||
        hta_spread_list_outliers(&s, ranks, v, n, opt->robust_z, opt->min_effect, text))
        return -1;
    hta_row_builder row = hta_table_add_row(into);
    hta_row_put_str(&row, name);
    hta_spread_put_row(&row, ranks, v, n, &s, text);
    return hta_row_done(&row);
}

int hta_compare_names(hta_tableset *set, const hta_crossrank_settings *opt,
                      const hta_name_comparison *c, hta_error *err)
{
    hta_table *into = hta_tableset_table(set, c->into);
    const hta_table *from = hta_tableset_find(set, c->from->name);
    if (!into)
        return hta_fail(err, "out of memory comparing /%s across ranks", c->from->name);
    if (!from || from->n_rows == 0)
        return 0;
    long name_col = c->name, value_col = c->value;
    hta_name_groups g;
    int rc = hta_name_groups_build(from, name_col, &g);
    int64_t *ranks = malloc(from->n_rows * sizeof *ranks);
    double *sums = malloc(from->n_rows * sizeof *sums);
    hta_buf text = {0};
    rc = rc == 0 && ranks && sums ? 0 : -1;
    for (uint32_t i = 0; rc == 0 && i < g.names.count; i++) {
        uint32_t k = g.in_name_order[i];
        size_t n = sum_per_rank(from, value_col, &g.row_of[g.start[k]],
                                g.start[k + 1] - g.start[k], ranks, sums);
        rc = put_name(into, hta_strtab_get(&g.names, k), ranks, sums, n, opt, &text);
    }
    hta_name_groups_free(&g);
    free(ranks);
    free(sums);
    hta_buf_free(&text);
    return rc ? hta_fail(err, "out of memory comparing /%s across ranks", c->from->name) : 0;
}

int hta_op_and_annotation_comparison(hta_tableset *set, const hta_crossrank_settings *opt,
                                     hta_error *err)
{
    static const hta_name_comparison OPS = {&hta_ops_table, HTA_OPS_NAME,
                                            HTA_OPS_GPU_BUSY_SUM_US, &hta_cross_ops_table};
    static const hta_name_comparison ANNOTATIONS = {&hta_annotations_table, HTA_ANNOTATIONS_NAME,
                                                    HTA_ANNOTATIONS_SUM_US,
                                                    &hta_cross_annotations_table};
    static const hta_name_comparison SEQUENCES = {
        &hta_kernel_sequences_table, HTA_KERNEL_SEQUENCES_NAME, HTA_KERNEL_SEQUENCES_COUNT,
        &hta_cross_kernel_sequences_table};
    return hta_compare_names(set, opt, &OPS, err) ||
                   hta_compare_names(set, opt, &ANNOTATIONS, err) ||
                   hta_compare_names(set, opt, &SEQUENCES, err)
               ? -1
               : 0;
}
