/* kernel_type_totals.c: HTA's kernel-type breakdown over all ranks
 * (definitions section 4, kernel_type_breakdown.csv).
 *
 * Sums each kernel-type combination of "kernel_type_by_rank" (written per
 * rank by analysis/kernel_breakdown.c) over the ranks into
 * "kernel_type_breakdown": sum and share of the total, rounded to one
 * decimal as HTA rounds.  Rows come in HTA's order: sum descending, ties
 * by name (HTA groups by name, and its descending sort keeps that order
 * among equal sums for its at most 7 rows). */
#include "crossrank/compare/kernel_type_totals.h"

#include "analysis/kernel_breakdown.h"
#include "numerics/stats.h"

#include <stdlib.h>
#include <string.h>

static const hta_column COLUMNS[HTA_KERNEL_TYPE_BREAKDOWN_N_COLUMNS] = {
    [HTA_KERNEL_TYPE_BREAKDOWN_KERNEL_TYPE] = {"kernel_type", HTA_COL_STR},
    [HTA_KERNEL_TYPE_BREAKDOWN_SUM_US] = {"sum_us", HTA_COL_F64},
    [HTA_KERNEL_TYPE_BREAKDOWN_PERCENTAGE] = {"percentage", HTA_COL_F64},
};
const hta_table_spec hta_kernel_type_breakdown_table = {
    "kernel_type_breakdown", COLUMNS, HTA_KERNEL_TYPE_BREAKDOWN_N_COLUMNS, HTA_TABLE_GATHERED};

typedef struct type_total {
    const char *kernel_type;   /* borrowed from the per-rank table */
    double sum_us;
} type_total;

static int compare_sum_descending(const void *a, const void *b)
{
    const type_total *x = a, *y = b;
    if (x->sum_us != y->sum_us)
        return x->sum_us < y->sum_us ? 1 : -1;
    return strcmp(x->kernel_type, y->kernel_type);
}

/* Sums rows by kernel type into totals (room for one per row); returns
 * the number of distinct types. */
static size_t sum_by_type(const hta_table *by_rank, type_total *totals)
{
    size_t n = 0;
    for (size_t r = 0; r < by_rank->n_rows; r++) {
        const hta_cell *row = hta_table_row(by_rank, r);
        size_t i = 0;
        while (i < n &&
               strcmp(totals[i].kernel_type, row[HTA_KERNEL_TYPE_BY_RANK_KERNEL_TYPE].s) != 0)
            i++;
        if (i == n)
            totals[n++] = (type_total){row[HTA_KERNEL_TYPE_BY_RANK_KERNEL_TYPE].s, 0.0};
        totals[i].sum_us += row[HTA_KERNEL_TYPE_BY_RANK_SUM_US].f;
    }
    return n;
}

static int put_totals(hta_table *t, const type_total *totals, size_t n)
{
    double all = 0;
    for (size_t i = 0; i < n; i++)
        all += totals[i].sum_us;
    for (size_t i = 0; i < n; i++) {
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_str(&row, totals[i].kernel_type);
        hta_row_put_f64(&row, totals[i].sum_us);
        hta_row_put_f64(&row, hta_round_decimals(totals[i].sum_us / all * 100.0, 1));
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

int hta_kernel_type_totals(hta_tableset *set, hta_error *err)
{
    const hta_table *by_rank = hta_tableset_find(set, hta_kernel_type_by_rank_table.name);
    if (!by_rank || by_rank->n_rows == 0)
        return 0;
    type_total *totals = malloc(by_rank->n_rows * sizeof *totals);
    hta_table *t = hta_tableset_table(set, &hta_kernel_type_breakdown_table);
    int rc = totals && t ? 0 : -1;
    if (rc == 0) {
        size_t n = sum_by_type(by_rank, totals);
        qsort(totals, n, sizeof *totals, compare_sum_descending);
        rc = put_totals(t, totals, n);
    }
    free(totals);
    return rc ? hta_fail(err, "out of memory summing kernel types over ranks") : 0;
}
