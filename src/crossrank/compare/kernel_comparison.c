/* kernel_comparison.c: each kernel name compared across ranks
 * ("cross_rank/kernels", definitions section 5).
 *
 * From the per-rank "kernels" table (analysis/kernel_breakdown.c), for
 * every kernel name: how many ranks ran it, the mean and sample std over
 * ranks of the per-rank mean durations, the smallest and largest per-rank
 * mean with their ranks (the first rank on ties), and the ranks whose mean
 * stands apart: |robust z| >= --robust-z and past the --min-effect floor
 * (crossrank/compare/spread.c), listed as text ("3,17").  The robust z is used
 * alone because one slow rank among a few cannot reach a classic |z| of 3.
 * Rows are sorted by name.
 *
 * Traffic: this is computed from the tables already gathered to the root,
 * so it moves no extra bytes; the "kernels" rows it reads cost each rank
 * 64 bytes plus the lengths of its kernel names and type per distinct
 * kernel name (docs/crossrank.md has measured figures). */
#include "crossrank/compare/kernel_comparison.h"

#include "analysis/kernel_breakdown.h"
#include "crossrank/compare/name_groups.h"
#include "crossrank/compare/spread.h"
#include "util/strtab.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const hta_column COLUMNS[HTA_CROSS_KERNELS_N_COLUMNS] = {
    [HTA_CROSS_KERNELS_NAME] = {"name", HTA_COL_STR},
    [HTA_CROSS_KERNELS_KERNEL_TYPE] = {"kernel_type", HTA_COL_STR},
    [HTA_CROSS_KERNELS_N_RANKS] = {"n_ranks", HTA_COL_I64},
    [HTA_CROSS_KERNELS_MEAN_US] = {"mean_us", HTA_COL_F64},
    [HTA_CROSS_KERNELS_STD_US] = {"std_us", HTA_COL_F64},
    [HTA_CROSS_KERNELS_MIN_US] = {"min_us", HTA_COL_F64},
    [HTA_CROSS_KERNELS_MIN_RANK] = {"min_rank", HTA_COL_I64},
    [HTA_CROSS_KERNELS_MAX_US] = {"max_us", HTA_COL_F64},
    [HTA_CROSS_KERNELS_MAX_RANK] = {"max_rank", HTA_COL_I64},
    [HTA_CROSS_KERNELS_OUTLIER_RANKS] = {"outlier_ranks", HTA_COL_STR},
};
const hta_table_spec hta_cross_kernels_table = {
    "cross_rank/kernels", COLUMNS, HTA_CROSS_KERNELS_N_COLUMNS, HTA_TABLE_GATHERED};

typedef struct kernel_columns {
    long name, type, mean;
} kernel_columns;

static int put_kernel(hta_table *t, const hta_table *kernels, const kernel_columns *col,
                      const size_t *rows, size_t n, const hta_crossrank_settings *opt,
                      int64_t *ranks, double *means, hta_buf *text)
{
    for (size_t i = 0; i < n; i++) {
        const hta_cell *row = hta_table_row(kernels, rows[i]);
        ranks[i] = row[0].i;
        means[i] = row[col->mean].f;
    }
    hta_spread s;
    if (hta_spread_of(means, n, &s))
        return -1;
    hta_spread_set_noise_floor(&s, opt->min_effect);
    if (hta_spread_list_outliers(&s, ranks, means, n, opt->robust_z, opt->min_effect, text))
        return -1;
    const hta_cell *first = hta_table_row(kernels, rows[0]);
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_str(&row, first[col->name].s);
    hta_row_put_str(&row, first[col->type].s);
    hta_spread_put_row(&row, ranks, means, n, &s, text);
    return hta_row_done(&row);
}

int hta_kernel_comparison(hta_tableset *set, const hta_crossrank_settings *opt, hta_error *err)
{
    hta_table *t = hta_tableset_table(set, &hta_cross_kernels_table);
    const hta_table *kernels = hta_tableset_find(set, hta_kernels_table.name);
    if (!t)
        return hta_fail(err, "out of memory comparing kernels across ranks");
    if (!kernels || kernels->n_rows == 0)
        return 0;
    kernel_columns col = {HTA_KERNELS_NAME,
                          HTA_KERNELS_KERNEL_TYPE,
                          HTA_KERNELS_MEAN_US};
    if (col.name < 0 || col.type < 0 || col.mean < 0)
        return hta_fail(err, "/kernels lacks the name, kernel_type or mean_us column");
    hta_name_groups g;
    int rc = hta_name_groups_build(kernels, col.name, &g);
    int64_t *ranks = malloc(kernels->n_rows * sizeof *ranks);
    double *means = malloc(kernels->n_rows * sizeof *means);
    hta_buf text = {0};
    rc = rc == 0 && ranks && means ? 0 : -1;
    for (uint32_t i = 0; rc == 0 && i < g.names.count; i++) {
        uint32_t k = g.in_name_order[i];
        rc = put_kernel(t, kernels, &col, &g.row_of[g.start[k]], g.start[k + 1] - g.start[k],
                        opt, ranks, means, &text);
    }
    hta_name_groups_free(&g);
    free(ranks);
    free(means);
    hta_buf_free(&text);
    return rc ? hta_fail(err, "out of memory comparing kernels across ranks") : 0;
}
