/* job_path_summary.c: the job's critical path in one line (see
 * output/job_path_summary.h): the rank that sets the step time most
 * often is the one with the most time on the path over every step; the
 * tables have every step. */
#include "output/job_path_summary.h"

#include <stdio.h>
#include <stdlib.h>

#include "crossrank/job_path/global_path.h"

typedef struct rank_time {
    int64_t rank;
    double us;
} rank_time;

static int compare_rank(const void *a, const void *b)
{
    const rank_time *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The rank with the most time on the path over the steps (the lowest on
 * a tie), its time into *us, and all ranks' into *total; -1 when none. */
static int64_t most_on_path(const hta_table *t, double *us, double *total)
{
    rank_time *r = malloc((t->n_rows + 1) * sizeof *r);
    int64_t best = -1;
    *us = *total = 0;
    for (size_t i = 0; r && i < t->n_rows; i++) {
        const hta_cell *row = hta_table_row(t, i);
        r[i] = (rank_time){row[HTA_GLOBAL_PATH_RANKS_RANK].i,
                           row[HTA_GLOBAL_PATH_RANKS_TIME_US].f};
        *total += r[i].us;
    }
    if (r)
        qsort(r, t->n_rows, sizeof *r, compare_rank);
    for (size_t i = 0, end; r && i < t->n_rows; i = end) {
        double sum = 0;
        for (end = i; end < t->n_rows && r[end].rank == r[i].rank; end++)
            sum += r[end].us;
        if (best < 0 || sum > *us)
            best = r[i].rank, *us = sum;
    }
    free(r);
    return best;
}

void hta_print_job_path_summary(const hta_tableset *set)
{
    const hta_table *ranks = hta_tableset_find(set, hta_global_path_ranks_table.name);
    const hta_table *steps = hta_tableset_find(set, hta_global_path_steps_table.name);
    if (!ranks || ranks->n_rows == 0 || !steps)
        return;
    double us, total;
    int64_t rank = most_on_path(ranks, &us, &total);
    if (rank < 0)
        return;
    printf("\nJob's critical path (see /global_critical_path): %zu steps; rank %lld holds "
           "%.1f%% of it\n",
           steps->n_rows, (long long)rank, total > 0 ? 100.0 * us / total : 0.0);
}
