/* summary_ops.c: where GPU time came from and where it was lost, in a
 * few lines of the stdout summary (see output/summary_ops.h): the five CPU
 * ops with the most GPU busy time summed over ranks (/cross_rank/ops),
 * the five GEMM, convolution and attention op shapes with the most GPU
 * time and their share of the roofline (/cross_rank/op_perf), and the
 * five longest GPU gaps of any rank with their causes (/gpu_gaps). */
#include "output/summary_ops.h"

#include "analysis/gpu_gaps.h"
#include "analysis/op_perf.h"
#include "crossrank/compare/name_comparison.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crossrank/compare/op_perf_comparison.h"
#include "util/ranked.h"

#define SUMMARY_TOP_OPS 5
#define SUMMARY_TOP_GAPS 5
#define NAME_WIDTH 60

/* The rows of t by key descending (NULL when out of memory). */
static hta_ranked *rank_rows(const hta_table *t, double (*key)(const hta_table *, size_t))
{
    hta_ranked *order = malloc((t->n_rows ? t->n_rows : 1) * sizeof *order);
    if (!order)
        return NULL;
    for (size_t r = 0; r < t->n_rows; r++)
        order[r] = (hta_ranked){key(t, r), r};
    hta_rank_descending(order, t->n_rows);
    return order;
}

static double op_total(const hta_table *t, size_t r)
{
    const hta_cell *row = hta_table_row(t, r);
    return row[HTA_CROSS_NAMES_MEAN_US].f * (double)row[HTA_CROSS_NAMES_N_RANKS].i;
}

static double shape_time(const hta_table *t, size_t r)
{
    return hta_table_row(t, r)[HTA_CROSS_OP_PERF_GPU_TIME_US].f;
}

static double gap_length(const hta_table *t, size_t r)
{
    return hta_table_row(t, r)[HTA_GPU_GAPS_DURATION_US].f;
}

static void print_top_ops(const hta_table *t)
{
    hta_ranked *order = rank_rows(t, op_total);
    if (!order)
        return;
    printf("\nCPU ops with the most GPU time (/ops, /cross_rank/ops):\n");
    printf("  %-*s    ranks %12s %12s %8s\n", NAME_WIDTH, "op", "total ms", "max ms",
           "max rank");
    for (size_t i = 0; i < t->n_rows && i < SUMMARY_TOP_OPS; i++) {
        const hta_cell *row = hta_table_row(t, order[i].row);
        printf("  %-*.*s %8lld %12.2f %12.2f %8lld\n", NAME_WIDTH, NAME_WIDTH,
               row[HTA_CROSS_NAMES_NAME].s, (long long)row[HTA_CROSS_NAMES_N_RANKS].i,
               order[i].key / 1000.0, row[HTA_CROSS_NAMES_MAX_US].f / 1000.0,
               (long long)row[HTA_CROSS_NAMES_MAX_RANK].i);
    }
    free(order);
}

static void print_top_shapes(const hta_table *t)
{
    hta_ranked *order = rank_rows(t, shape_time);
    if (!order)
        return;
    printf("\nGEMM, convolution and attention ops with the most GPU time (/op_perf):\n");
    printf("  %-*s    ranks %12s %10s %10s\n", NAME_WIDTH, "op input dims", "total ms",
           "TFLOPS", "% roofline");
    for (size_t i = 0; i < t->n_rows && i < SUMMARY_TOP_OPS; i++) {
        const hta_cell *row = hta_table_row(t, order[i].row);
        char label[256];
        snprintf(label, sizeof label, "%s %s", row[HTA_CROSS_OP_PERF_NAME].s,
                 row[HTA_CROSS_OP_PERF_INPUT_DIMS].s);
        printf("  %-*.*s %8lld %12.2f %10.1f %10.1f\n", NAME_WIDTH, NAME_WIDTH, label,
               (long long)row[HTA_CROSS_OP_PERF_N_RANKS].i, order[i].key / 1000.0,
               row[HTA_CROSS_OP_PERF_TFLOPS_MEDIAN].f, row[HTA_CROSS_OP_PERF_PCT_ROOFLINE].f);
    }
    free(order);
}

/* Says so when some rank's GPU had no known peaks (its % of roofline is
 * NaN), naming the first such device. */
static void print_unknown_peaks(const hta_table *perf)
{
    for (size_t r = 0; r < perf->n_rows; r++) {
        const char *of = hta_table_row(perf, r)[HTA_OP_PERF_PEAKS_OF].s;
        if (strncmp(of, "unknown device", 14) == 0) {
            printf("  %s (rank %lld): give them with --gpu-spec FILE\n", of,
                   (long long)hta_table_row(perf, r)[HTA_OP_PERF_RANK].i);
            return;
        }
    }
}

static void print_top_gaps(const hta_table *t)
{
    hta_ranked *order = rank_rows(t, gap_length);
    if (!order)
        return;
    long rank = 0, step = HTA_GPU_GAPS_STEP, cause = HTA_GPU_GAPS_CAUSE;
    printf("\nLongest GPU idle gaps (/gpu_gaps, %zu in all):\n", t->n_rows);
    printf("  %6s %6s %10s %-12s %s\n", "rank", "step", "ms", "cause", "sync call / CPU event");
    for (size_t i = 0; i < t->n_rows && i < SUMMARY_TOP_GAPS; i++) {
        const hta_cell *row = hta_table_row(t, order[i].row);
        const char *what = row[HTA_GPU_GAPS_SYNC_CALL].s[0] ? row[HTA_GPU_GAPS_SYNC_CALL].s
                                                            : row[HTA_GPU_GAPS_CPU_EVENT].s;
        printf("  %6lld %6lld %10.2f %-12s %.*s\n", (long long)row[rank].i,
               (long long)row[step].i, order[i].key / 1000.0, row[cause].s, NAME_WIDTH, what);
    }
    free(order);
}

void hta_print_ops_summary(const hta_tableset *set)
{
    const hta_table *ops = hta_tableset_find(set, hta_cross_ops_table.name);
    const hta_table *gaps = hta_tableset_find(set, hta_gpu_gaps_table.name);
    const hta_table *shapes = hta_tableset_find(set, hta_cross_op_perf_table.name);
    const hta_table *perf = hta_tableset_find(set, hta_op_perf_table.name);
    if (ops && ops->n_rows)
        print_top_ops(ops);
    if (shapes && shapes->n_rows)
        print_top_shapes(shapes);
    if (shapes && shapes->n_rows && perf)
        print_unknown_peaks(perf);
    if (gaps && gaps->n_rows)
        print_top_gaps(gaps);
}
