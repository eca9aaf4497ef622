/* summary.c: the short report the root prints on stdout (interface.md).
 *
 * It shows at most ten ranks (the five with the most and the five with the
 * least idle time), every failed trace, and the outliers, so it stays
 * readable for a thousand ranks; the HDF5 file has the rest. */
#include "hta/run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUMMARY_EXTREME_RANKS 5

typedef struct ranked_row {
    double key;
    size_t row;
} ranked_row;

static int compare_descending(const void *a, const void *b)
{
    const ranked_row *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static void print_breakdown_row(const hta_table *tb, size_t r)
{
    const hta_cell *row = hta_table_row(tb, r);
    long comp = hta_table_column(tb, "compute_time_pctg");
    long non = hta_table_column(tb, "non_compute_time_pctg");
    long idle = hta_table_column(tb, "idle_time_pctg");
    long span = hta_table_column(tb, "kernel_time_us");
    printf("  %6lld %9.2f %13.2f %7.2f %14.1f\n", (long long)row[0].i, row[comp].f,
           row[non].f, row[idle].f, row[span].f);
}

static void print_breakdown(const hta_tableset *set)
{
    const hta_table *tb = hta_tableset_find(set, "temporal_breakdown");
    if (!tb || tb->n_rows == 0) {
        printf("No rank has GPU events: no temporal breakdown.\n");
        return;
    }
    long idle = hta_table_column(tb, "idle_time_pctg");
    ranked_row *order = malloc(tb->n_rows * sizeof *order);
    if (!order)
        return;
    for (size_t r = 0; r < tb->n_rows; r++)
        order[r] = (ranked_row){hta_table_row(tb, r)[idle].f, r};
    qsort(order, tb->n_rows, sizeof *order, compare_descending);
    int all = tb->n_rows <= 2 * SUMMARY_EXTREME_RANKS;
    printf("\nGPU time per rank (%s, most idle first):\n",
           all ? "all ranks" : "the 5 most and 5 least idle ranks");
    printf("  %6s %9s %13s %7s %14s\n", "rank", "compute%", "non-compute%", "idle%",
           "span_us");
    for (size_t k = 0; k < tb->n_rows; k++) {
        if (!all && k == SUMMARY_EXTREME_RANKS)
            printf("  %6s\n", "...");
        if (all || k < SUMMARY_EXTREME_RANKS || k >= tb->n_rows - SUMMARY_EXTREME_RANKS)
            print_breakdown_row(tb, order[k].row);
    }
    free(order);
}

static void print_outliers(const hta_tableset *set)
{
    const hta_table *t = hta_tableset_find(set, "outliers");
    if (!t || t->n_rows == 0) {
        printf("\nOutliers: none.\n");
        return;
    }
    printf("\nOutliers (%zu):\n  %-32s %6s %14s %8s %9s  %s\n", t->n_rows, "metric", "rank",
           "value", "z", "robust_z", "class");
    for (size_t r = 0; r < t->n_rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        printf("  %-32s %6lld %14.2f %8.2f %9.2f  %s\n", row[0].s, (long long)row[1].i,
               row[2].f, row[5].f, row[8].f, row[9].s);
    }
}

static void print_failures(const hta_table *ranks)
{
    long status = hta_table_column(ranks, "status");
    long error = hta_table_column(ranks, "error");
    for (size_t r = 0; r < ranks->n_rows; r++) {
        const hta_cell *row = hta_table_row(ranks, r);
        if (strcmp(row[status].s, "failed") == 0)
            printf("  failed: %s\n", row[error].s);
    }
}

void hta_print_summary(const hta_tableset *set, const hta_options *opt,
                       const hta_run_info *info)
{
    const hta_table *ranks = hta_tableset_find(set, "ranks");
    size_t n_failed = 0, n_no_gpu = 0;
    long status = ranks ? hta_table_column(ranks, "status") : -1;
    for (size_t r = 0; ranks && r < ranks->n_rows; r++) {
        const char *s = hta_table_row(ranks, r)[status].s;
        n_failed += strcmp(s, "failed") == 0;
        n_no_gpu += strcmp(s, "no_gpu_events") == 0;
    }
    size_t n = ranks ? ranks->n_rows : 0;
    printf("hta-mpi %s: %zu traces, %zu analysed, %zu failed, %zu without GPU events; "
           "%d processes, %.2f s\n",
           info->tool_version, n, n - n_failed, n_failed, n_no_gpu, info->n_processes,
           info->wall_seconds);
    if (ranks)
        print_failures(ranks);
    print_breakdown(set);
    print_outliers(set);
    printf("\nResults: %s\n", opt->output);
}
