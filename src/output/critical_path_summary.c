/* critical_path_summary.c: which ranks' steps are bound differently.
 *
 * For each step the ranks vote with their critical path's largest cause
 * (/critical_path bound_by); a rank whose cause is not the most common
 * one is a rank to look at, whatever its times: a data-loading or
 * launch-bound step on one rank of many GPU-bound ones.  The summary
 * names at most a few steps and ranks; /critical_path has them all. */
#include "output/critical_path_summary.h"

#include "analysis/critical_path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHOWN_STEPS 5
#define SHOWN_RANKS 8

typedef struct vote {
    int64_t step;
    const char *bound;
    size_t row;
} vote;

static int compare_votes(const void *a, const void *b)
{
    const vote *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    int c = strcmp(x->bound, y->bound);
    return c ? c : (x->row < y->row ? -1 : x->row > y->row);
}

/* The most common cause among votes[0..n) (sorted by cause), or NULL
 * when two causes tie for it: then no rank is the odd one out. */
static const char *majority(const vote *v, size_t n, size_t *count)
{
    const char *best = NULL;
    int tie = 0;
    *count = 0;
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i; j < n && strcmp(v[j].bound, v[i].bound) == 0; j++)
            ;
        tie = j - i == *count ? 1 : j - i > *count ? 0 : tie;
        if (j - i > *count) {
            *count = j - i;
            best = v[i].bound;
        }
    }
    return tie ? NULL : best;
}

/* Whether some rank's step is bound differently from a majority. */
static int is_split(const vote *v, size_t n)
{
    size_t count;
    return majority(v, n, &count) && count < n;
}

static void print_step(const hta_table *t, long rank, const vote *v, size_t n)
{
    size_t count;
    const char *bound = majority(v, n, &count);
    printf("  step %lld: %s on %zu of %zu ranks; bound differently:", (long long)v[0].step,
           bound, count, n);
    size_t shown = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v[i].bound, bound) == 0)
            continue;
        if (shown++ < SHOWN_RANKS)
            printf(" rank %lld (%s)", (long long)hta_table_row(t, v[i].row)[rank].i, v[i].bound);
    }
    if (shown > SHOWN_RANKS)
        printf(" ... %zu more", shown - SHOWN_RANKS);
    printf("\n");
}

void hta_print_critical_path_summary(const hta_tableset *set)
{
    const hta_table *t = hta_tableset_find(set, hta_critical_path_table.name);
    if (!t || t->n_rows == 0)
        return;
    vote *v = malloc(t->n_rows * sizeof *v);
    if (!v || HTA_CRITICAL_PATH_RANK < 0 || HTA_CRITICAL_PATH_STEP < 0 ||
        HTA_CRITICAL_PATH_BOUND_BY < 0) {
        free(v);
        return;
    }
    for (size_t r = 0; r < t->n_rows; r++)
        v[r] = (vote){hta_table_row(t, r)[HTA_CRITICAL_PATH_STEP].i,
                      hta_table_row(t, r)[HTA_CRITICAL_PATH_BOUND_BY].s, r};
    qsort(v, t->n_rows, sizeof *v, compare_votes);
    size_t n_steps = 0, n_split = 0;
    for (size_t i = 0, j; i < t->n_rows; i = j) {
        for (j = i; j < t->n_rows && v[j].step == v[i].step; j++)
            ;
        n_steps++;
        n_split += is_split(v + i, j - i);
    }
    printf("\nCritical path (see /critical_path): %zu steps, %zu with ranks bound differently "
           "from the majority%s\n", n_steps, n_split, n_split ? ":" : ".");
    size_t shown = 0;
    for (size_t i = 0, j; i < t->n_rows; i = j) {
        for (j = i; j < t->n_rows && v[j].step == v[i].step; j++)
            ;
        if (is_split(v + i, j - i) && shown++ < SHOWN_STEPS)
            print_step(t, HTA_CRITICAL_PATH_RANK, v + i, j - i);
    }
    if (shown > SHOWN_STEPS)
        printf("  ... %zu more steps\n", shown - SHOWN_STEPS);
    free(v);
}
