/* what_if_summary.c: what fixing it buys in two lines (see
 * output/what_if_summary.h): the replay's error as measured, the largest
 * over the steps of |replayed - measured| / measured, so the user knows
 * how far to trust it, and the scenario whose mean saving per step is
 * largest; /what_if has every step. */
#include "output/what_if_summary.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "crossrank/job_path/what_if.h"

/* The scenario's mean saving over the steps replayed (NaN when none). */
static double mean_saving(const hta_table *t, const char *scenario, double *pct)
{
    double sum = 0, sum_pct = 0;
    size_t n = 0;
    for (size_t i = 0; i < t->n_rows; i++) {
        const hta_cell *row = hta_table_row(t, i);
        if (strcmp(row[HTA_WHAT_IF_SCENARIO].s, scenario) || isnan(row[HTA_WHAT_IF_SAVING_US].f))
            continue;
        sum += row[HTA_WHAT_IF_SAVING_US].f;
        sum_pct += row[HTA_WHAT_IF_SAVING_PCT].f;
        n++;
    }
    *pct = n ? sum_pct / (double)n : NAN;
    return n ? sum / (double)n : NAN;
}

void hta_print_what_if_summary(const hta_tableset *set)
{
    const hta_table *t = hta_tableset_find(set, hta_what_if_table.name);
    if (!t || t->n_rows == 0)
        return;
    double error = 0;
    size_t steps = 0, withheld = 0;
    const char *best = NULL;
    double best_us = 0, best_pct = 0;
    for (size_t i = 0; i < t->n_rows; i++) {
        const hta_cell *row = hta_table_row(t, i);
        if (strcmp(row[HTA_WHAT_IF_SCENARIO].s, "as measured")) {
            double pct, us = mean_saving(t, row[HTA_WHAT_IF_SCENARIO].s, &pct);
            if (!isnan(us) && (!best || us > best_us))
                best = row[HTA_WHAT_IF_SCENARIO].s, best_us = us, best_pct = pct;
            continue;
        }
        double measured = row[HTA_WHAT_IF_MEASURED_STEP_TIME_US].f;
        double replayed = row[HTA_WHAT_IF_REPLAYED_STEP_TIME_US].f;
        steps++;
        if (isnan(replayed)) {
            withheld++;
        } else if (measured > 0) {
            double e = 100.0 * fabs(replayed - measured) / measured;
            error = e > error ? e : error;
        }
    }
    printf("\nWhat-if (see /what_if): %zu steps replayed as measured within %.2f%% of their "
           "measured time",
           steps - withheld, error);
    if (withheld)
        printf("; %zu withheld (see the rows' note)", withheld);
    printf("\n");
    if (best)
        printf("  what fixing it buys: %s saves %.1f us per step (%.1f%%) on average\n", best,
               best_us, best_pct);
    else
        printf("  what fixing it buys: no scenario was replayed (see --what-if)\n");
}
