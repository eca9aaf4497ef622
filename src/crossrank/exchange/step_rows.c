/* step_rows.c: the rows of "steps" by (rank, step number) (see
 * crossrank/exchange/step_rows.h).  The rows come by rank, but a rank's steps in
 * start order, which need not be number order: a sorted index answers by
 * binary search. */
#include "crossrank/exchange/step_rows.h"

#include "analysis/steps.h"

#include <stdlib.h>

typedef struct step_row {
    int64_t rank, step;
    size_t row;
} step_row;

struct hta_step_rows {
    hta_table *table;
    step_row *rows;
};

static int compare_step_row(const void *a, const void *b)
{
    const step_row *x = a, *y = b;
    if (x->rank != y->rank)
        return (x->rank > y->rank) - (x->rank < y->rank);
    return (x->step > y->step) - (x->step < y->step);
}

hta_step_rows *hta_step_rows_index(hta_table *t)
{
    hta_step_rows *ix = malloc(sizeof *ix);
    step_row *rows = malloc((t->n_rows ? t->n_rows : 1) * sizeof *rows);
    if (!ix || !rows) {
        free(ix);
        free(rows);
        return NULL;
    }
    for (size_t r = 0; r < t->n_rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        rows[r] = (step_row){row[0].i, row[HTA_STEPS_STEP].i, r};
    }
    qsort(rows, t->n_rows, sizeof *rows, compare_step_row);
    *ix = (hta_step_rows){t, rows};
    return ix;
}

hta_cell *hta_step_rows_find(const hta_step_rows *ix, int64_t rank, int64_t step)
{
    step_row key = {rank, step, 0};
    const step_row *hit = bsearch(&key, ix->rows, ix->table->n_rows, sizeof *ix->rows,
                                  compare_step_row);
    return hit ? hta_table_row(ix->table, hit->row) : NULL;
}

void hta_step_rows_free(hta_step_rows *ix)
{
    if (ix)
        free(ix->rows);
    free(ix);
}
