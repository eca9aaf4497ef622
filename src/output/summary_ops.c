/* summary_ops.c: where GPU time came from and where it was lost, in a
 * few lines of the stdout summary (see output/summary_ops.h): the five CPU
 * ops with the most GPU busy time summed over ranks (/cross_rank/ops),
 * and the five longest GPU gaps of any rank with their causes
 * (/gpu_gaps). */
#include "output/summary_ops.h"

#include "analysis/gpu_gaps.h"
#include "crossrank/name_comparison.h"

#include <stdio.h>
#include <stdlib.h>

#define SUMMARY_TOP_OPS 5
#define SUMMARY_TOP_GAPS 5
#define NAME_WIDTH 60

typedef struct keyed_row {
    double key;
    size_t row;
} keyed_row;

static int compare_descending(const void *a, const void *b)
{
    const keyed_row *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* The rows of t by key descending (NULL when out of memory). */
static keyed_row *rank_rows(const hta_table *t, double (*key)(const hta_table *, size_t))
{
    keyed_row *order = malloc((t->n_rows ? t->n_rows : 1) * sizeof *order);
    if (!order)
        return NULL;
    for (size_t r = 0; r < t->n_rows; r++)
        order[r] = (keyed_row){key(t, r), r};
    qsort(order, t->n_rows, sizeof *order, compare_descending);
    return order;
}

static double op_total(const hta_table *t, size_t r)
{
    const hta_cell *row = hta_table_row(t, r);
    return row[HTA_CROSS_NAMES_MEAN_US].f * (double)row[HTA_CROSS_NAMES_N_RANKS].i;
}

static double gap_length(const hta_table *t, size_t r)
{
    return hta_table_row(t, r)[HTA_GPU_GAPS_DURATION_US].f;
}

static void print_top_ops(const hta_table *t)
{
    keyed_row *order = rank_rows(t, op_total);
    if (!order)
        return;
    long name = HTA_CROSS_NAMES_NAME, n_ranks = HTA_CROSS_NAMES_N_RANKS;
    long max = HTA_CROSS_NAMES_MAX_US, max_rank = HTA_CROSS_NAMES_MAX_RANK;
    printf("\nCPU ops with the most GPU time (/ops, /cross_rank/ops):\n");
    printf("  %-*s    ranks %12s %12s %8s\n", NAME_WIDTH, "op", "total ms", "max ms",
           "max rank");
    for (size_t i = 0; i < t->n_rows && i < SUMMARY_TOP_OPS; i++) {
        const hta_cell *row = hta_table_row(t, order[i].row);
        printf("  %-*.*s %8lld %12.2f %12.2f %8lld\n", NAME_WIDTH, NAME_WIDTH, row[name].s,
               (long long)row[n_ranks].i, order[i].key / 1000.0, row[max].f / 1000.0,
               (long long)row[max_rank].i);
    }
    free(order);
}

static void print_top_gaps(const hta_table *t)
{
    keyed_row *order = rank_rows(t, gap_length);
    if (!order)
        return;
    long rank = 0, step = HTA_GPU_GAPS_STEP, cause = HTA_GPU_GAPS_CAUSE;
    long sync = HTA_GPU_GAPS_SYNC_CALL, cpu = HTA_GPU_GAPS_CPU_EVENT;
    printf("\nLongest GPU idle gaps (/gpu_gaps, %zu in all):\n", t->n_rows);
    printf("  %6s %6s %10s %-12s %s\n", "rank", "step", "ms", "cause", "sync call / CPU event");
    for (size_t i = 0; i < t->n_rows && i < SUMMARY_TOP_GAPS; i++) {
        const hta_cell *row = hta_table_row(t, order[i].row);
        const char *what = row[sync].s[0] ? row[sync].s : row[cpu].s;
        printf("  %6lld %6lld %10.2f %-12s %.*s\n", (long long)row[rank].i,
               (long long)row[step].i, order[i].key / 1000.0, row[cause].s, NAME_WIDTH, what);
    }
    free(order);
}

void hta_print_ops_summary(const hta_tableset *set)
{
    const hta_table *ops = hta_tableset_find(set, hta_cross_ops_table.name);
    const hta_table *gaps = hta_tableset_find(set, hta_gpu_gaps_table.name);
    if (ops && ops->n_rows)
        print_top_ops(ops);
    if (gaps && gaps->n_rows)
        print_top_gaps(gaps);
}
