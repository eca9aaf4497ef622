/* step_comparison.c: each profiler step across ranks ("cross_rank/steps").
 *
 * From the per-rank "steps" table: per ProfilerStep number, the ranks
 * that have it, the minimum, median and maximum of their CPU step times
 * and the slowest rank (the first on ties), in step order. */
#include "crossrank/compare/step_comparison.h"

#include "analysis/steps.h"
#include "numerics/stats.h"

#include <stdlib.h>

static const hta_column COLUMNS[HTA_CROSS_STEPS_N_COLUMNS] = {
    [HTA_CROSS_STEPS_STEP] = {"step", HTA_COL_I64},
    [HTA_CROSS_STEPS_N_RANKS] = {"n_ranks", HTA_COL_I64},
    [HTA_CROSS_STEPS_STEP_TIME_MIN_US] = {"step_time_min_us", HTA_COL_F64},
    [HTA_CROSS_STEPS_STEP_TIME_MEDIAN_US] = {"step_time_median_us", HTA_COL_F64},
    [HTA_CROSS_STEPS_STEP_TIME_MAX_US] = {"step_time_max_us", HTA_COL_F64},
    [HTA_CROSS_STEPS_SLOWEST_RANK] = {"slowest_rank", HTA_COL_I64},
};
const hta_table_spec hta_cross_steps_table = {
    "cross_rank/steps", COLUMNS, HTA_CROSS_STEPS_N_COLUMNS, HTA_TABLE_GATHERED};

typedef struct step_time {
    int64_t step, rank;
    double us;
} step_time;

static int compare_step_then_rank(const void *a, const void *b)
{
    const step_time *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int put_step(hta_table *t, const step_time *s, size_t n, double *scratch)
{
    size_t slowest = 0;
    for (size_t i = 0; i < n; i++) {
        scratch[i] = s[i].us;
        slowest = s[i].us > s[slowest].us ? i : slowest;
    }
    hta_sort_doubles(scratch, n);
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, s[0].step);
    hta_row_put_i64(&row, (int64_t)n);
    hta_row_put_f64(&row, scratch[0]);
    hta_row_put_f64(&row, hta_quantile_sorted(scratch, n, 0.5));
    hta_row_put_f64(&row, scratch[n - 1]);
    hta_row_put_i64(&row, s[slowest].rank);
    return hta_row_done(&row);
}

int hta_step_comparison(hta_tableset *set, hta_error *err)
{
    const hta_table *steps = hta_tableset_find(set, hta_steps_table.name);
    if (!steps || steps->n_rows == 0)
        return 0;
    size_t n = steps->n_rows;
    step_time *s = malloc(n * sizeof *s);
    double *scratch = malloc(n * sizeof *scratch);
    hta_table *t = hta_tableset_table(set, &hta_cross_steps_table);
    int rc = s && scratch && t ? 0 : -1;
    for (size_t r = 0; rc == 0 && r < n; r++) {
        const hta_cell *row = hta_table_row(steps, r);
        s[r] = (step_time){row[HTA_STEPS_STEP].i, row[0].i, row[HTA_STEPS_STEP_TIME_US].f};
    }
    if (rc == 0)
        qsort(s, n, sizeof *s, compare_step_then_rank);
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        for (end = i + 1; end < n && s[end].step == s[i].step;)
            end++;
        rc = put_step(t, &s[i], end - i, scratch);
    }
    free(s);
    free(scratch);
    return rc ? hta_fail(err, "out of memory comparing steps") : 0;
}
