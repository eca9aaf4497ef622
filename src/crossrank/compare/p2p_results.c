/* p2p_results.c: the root's part of the point-to-point analysis, before
 * the outlier search (which reads the metrics it adds).
 *
 * The pairs were matched where their owners are (crossrank/exchange/p2p_pairs.c);
 * the root receives per rank "_p2p_ranks" (and, from the rank analyses,
 * "_p2p_unknown_peer": SendRecv kernels without metadata), per (src, dst)
 * "p2p_summary", and per (rank, step) "_p2p_steps".  It puts the summary
 * in (src, dst) order, puts each rank's point-to-point wait and the
 * late-sender wait it caused in "_p2p_metrics" (joined to "rank_metrics"
 * after this step), and builds
 * "pipeline_steps": per (rank, step) with point-to-point traffic, the
 * step's time (its ProfilerStep), its computation (union of the
 * COMPUTATION kernels it launched, from "steps"), the bubble = time -
 * computation, and its fraction beside 1F1B's (p - 1) / (m + p - 1) for
 * p = the pipeline group's size and m = the microbatches: --microbatches,
 * else the most receives from one peer in the step (a stage receives one
 * activation or gradient per microbatch from each neighbour). */
#define _GNU_SOURCE /* qsort_r */
#include "crossrank/compare/p2p_results.h"

#include "analysis/collectives.h"
#include "analysis/metrics.h"
#include "analysis/steps.h"
#include "crossrank/exchange/collective_groups.h"
#include "crossrank/exchange/p2p_pairs.h"
#include "model/trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const hta_column PIPELINE_COLUMNS[HTA_PIPELINE_STEPS_N_COLUMNS] = {
    [HTA_PIPELINE_STEPS_RANK] = {"rank", HTA_COL_I64},
    [HTA_PIPELINE_STEPS_STEP] = {"step", HTA_COL_I64},
    [HTA_PIPELINE_STEPS_STAGE] = {"stage", HTA_COL_I64},
    [HTA_PIPELINE_STEPS_STAGES] = {"stages", HTA_COL_I64},
    [HTA_PIPELINE_STEPS_MICROBATCHES] = {"microbatches", HTA_COL_I64},
    [HTA_PIPELINE_STEPS_STEP_TIME_US] = {"step_time_us", HTA_COL_F64},
    [HTA_PIPELINE_STEPS_COMPUTE_US] = {"compute_us", HTA_COL_F64},
    [HTA_PIPELINE_STEPS_BUBBLE_US] = {"bubble_us", HTA_COL_F64},
    [HTA_PIPELINE_STEPS_BUBBLE_FRACTION] = {"bubble_fraction", HTA_COL_F64},
    [HTA_PIPELINE_STEPS_EXPECTED_BUBBLE_FRACTION] = {"expected_bubble_fraction", HTA_COL_F64},
    [HTA_PIPELINE_STEPS_P2P_WAIT_US] = {"p2p_wait_us", HTA_COL_F64},
    [HTA_PIPELINE_STEPS_EXPOSED_P2P_WAIT_US] = {"exposed_p2p_wait_us", HTA_COL_F64},
};
const hta_table_spec hta_pipeline_steps_table = {
    "pipeline_steps", PIPELINE_COLUMNS, HTA_PIPELINE_STEPS_N_COLUMNS, HTA_TABLE_GATHERED};
const hta_table_spec hta_p2p_metrics_table = {"_p2p_metrics", hta_rank_metrics_columns,
                                              HTA_RANK_METRICS_N_COLUMNS, HTA_TABLE_SCRATCH};

static int compare_pair_rows(const void *a, const void *b, void *ctx)
{
    const hta_cell *x = a, *y = b;
    (void)ctx;
    if (x[0].i != y[0].i)
        return (x[0].i > y[0].i) - (x[0].i < y[0].i);
    return (x[1].i > y[1].i) - (x[1].i < y[1].i);
}

static void sort_summary(hta_table *t)
{
    if (t && t->n_rows > 1)
        qsort_r(t->cells, t->n_rows, t->n_columns * sizeof *t->cells, compare_pair_rows, NULL);
}

/* Sums the per-rank rows of every process (a rank's ops may have been
 * loaded on one process only, but the unknown peers come separately)
 * into one row per rank, in rank order; adds the kernels without a peer
 * as unpaired ops. */
static int merge_rank_rows(hta_tableset *set, hta_table *ranks)
{
    const hta_table *unknown = hta_tableset_find(set, hta_p2p_unknown_peer_table.name);
    for (size_t i = 0; unknown && i < unknown->n_rows; i++) {
        const hta_cell *u = hta_table_row(unknown, i);
        hta_row_builder row = hta_table_add_row(ranks);
        hta_row_put_i64(&row, u[0].i);
        hta_row_put_i64(&row, u[1].i);
        hta_row_put_i64(&row, u[1].i);
        for (int c = HTA_P2P_RANKS_LATE_SENDER_WAIT_NS; c < HTA_P2P_RANKS_N_COLUMNS; c++)
            hta_row_put_i64(&row, 0);
        if (hta_row_done(&row))
            return -1;
    }
    hta_tableset_remove(set, hta_p2p_unknown_peer_table.name);
    if (hta_table_sort_by_first_column(ranks))
        return -1;
    size_t out = 0;
    for (size_t i = 0; i < ranks->n_rows; i++) {
        hta_cell *row = hta_table_row(ranks, i), *into = hta_table_row(ranks, out ? out - 1 : 0);
        if (out && into[HTA_P2P_RANKS_RANK].i == row[HTA_P2P_RANKS_RANK].i) {
            for (int c = HTA_P2P_RANKS_OPS; c < HTA_P2P_RANKS_N_COLUMNS; c++)
                into[c].i += row[c].i;
            continue;
        }
        if (out != i)
            memcpy(hta_table_row(ranks, out), row, ranks->n_columns * sizeof *row);
        out++;
    }
    ranks->n_rows = out;
    return 0;
}

/* The metrics of the ranks whose sends or receives were paired. */
static int add_rank_metrics(hta_tableset *set, const hta_table *ranks)
{
    hta_table *metrics = hta_tableset_table(set, &hta_p2p_metrics_table);
    int rc = metrics ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < ranks->n_rows; i++) {
        const hta_cell *r = hta_table_row(ranks, i);
        if (r[HTA_P2P_RANKS_OPS].i == r[HTA_P2P_RANKS_UNPAIRED].i)
            continue;
        int64_t rank = r[HTA_P2P_RANKS_RANK].i;
        int64_t waited = r[HTA_P2P_RANKS_LATE_SENDER_WAIT_NS].i +
                         r[HTA_P2P_RANKS_LATE_RECEIVER_WAIT_NS].i;
        rc = hta_put_metric(metrics, rank, HTA_METRIC_P2P_WAIT_US, NULL, hta_ns_to_us(waited)) ||
             hta_put_metric(metrics, rank, HTA_METRIC_P2P_CAUSED_WAIT_US, NULL,
                            hta_ns_to_us(r[HTA_P2P_RANKS_CAUSED_LATE_SENDER_NS].i));
    }
    return rc;
}

/* Row of "steps" for (rank, step), or NULL. */
static const hta_cell *step_row(const hta_table *steps, long step_col, int64_t rank, int64_t step)
{
    long first = hta_table_find_sorted(steps, rank);
    for (size_t r = first < 0 ? steps->n_rows : (size_t)first; r < steps->n_rows; r++) {
        const hta_cell *row = hta_table_row(steps, r);
        if (row[0].i != rank)
            break;
        if (row[step_col].i == step)
            return row;
    }
    return NULL;
}

static int compare_rank_step(const void *a, const void *b)
{
    const hta_cell *x = *(const hta_cell *const *)a, *y = *(const hta_cell *const *)b;
    int64_t xr = x[HTA_P2P_STEPS_RANK].i, yr = y[HTA_P2P_STEPS_RANK].i;
    int64_t xs = x[HTA_P2P_STEPS_STEP].i, ys = y[HTA_P2P_STEPS_STEP].i;
    return xr != yr ? (xr > yr) - (xr < yr) : (xs > ys) - (xs < ys);
}

static int put_pipeline_step(hta_table *t, const hta_cell *p, const hta_cell *s, long time_col,
                             long compute_col, int64_t microbatches)
{
    double time = s ? s[time_col].f : NAN, compute = s ? s[compute_col].f : NAN;
    double bubble = isnan(time) || isnan(compute) ? NAN : fmax(0.0, time - compute);
    int64_t stages = p[HTA_P2P_STEPS_STAGES].i;
    int64_t m = microbatches > 0 ? microbatches : p[HTA_P2P_STEPS_RECEIVES].i;
    double expected = stages > 0 && m > 0 ? (double)(stages - 1) / (double)(m + stages - 1) : NAN;
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, p[HTA_P2P_STEPS_RANK].i);
    hta_row_put_i64(&row, p[HTA_P2P_STEPS_STEP].i);
    hta_row_put_i64(&row, p[HTA_P2P_STEPS_STAGE].i);
    hta_row_put_i64(&row, stages);
    hta_row_put_i64(&row, m);
    hta_row_put_f64(&row, time);
    hta_row_put_f64(&row, compute);
    hta_row_put_f64(&row, bubble);
    hta_row_put_f64(&row, time > 0 ? bubble / time : NAN);
    hta_row_put_f64(&row, expected);
    hta_row_put_f64(&row, hta_ns_to_us(p[HTA_P2P_STEPS_WAIT_NS].i));
    hta_row_put_f64(&row, hta_ns_to_us(p[HTA_P2P_STEPS_EXPOSED_WAIT_NS].i));
    return hta_row_done(&row);
}

/* "pipeline_steps" in (rank, step) order from "_p2p_steps" and "steps". */
static int put_pipeline_steps(hta_tableset *set, int64_t microbatches)
{
    const hta_table *in = hta_tableset_find(set, hta_p2p_steps_table.name);
    if (!in || in->n_rows == 0)
        return 0;
    const hta_table *steps = hta_tableset_find(set, hta_steps_table.name);
    int have_steps = steps != NULL;
    hta_table *t = hta_tableset_table(set, &hta_pipeline_steps_table);
    const hta_cell **rows = malloc(in->n_rows * sizeof *rows);
    int rc = t && rows ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < in->n_rows; i++)
        rows[i] = hta_table_row(in, i);
    if (rc == 0)
        qsort(rows, in->n_rows, sizeof *rows, compare_rank_step);
    for (size_t i = 0; rc == 0 && i < in->n_rows; i++) {
        int64_t rank = rows[i][HTA_P2P_STEPS_RANK].i, step = rows[i][HTA_P2P_STEPS_STEP].i;
        const hta_cell *s = have_steps ? step_row(steps, HTA_STEPS_STEP, rank, step) : NULL;
        rc = put_pipeline_step(t, rows[i], s, HTA_STEPS_STEP_TIME_US, HTA_STEPS_COMPUTE_US,
                               microbatches);
    }
    free(rows);
    hta_tableset_remove(set, hta_p2p_steps_table.name);
    return rc;
}

int hta_p2p_results(hta_tableset *set, const hta_crossrank_settings *opt, hta_error *err)
{
    sort_summary(hta_tableset_find(set, hta_p2p_summary_table.name));
    hta_table *ranks = hta_tableset_find(set, hta_p2p_ranks_table.name);
    if (!ranks && hta_tableset_find(set, hta_p2p_unknown_peer_table.name))
        ranks = hta_tableset_table(set, &hta_p2p_ranks_table);
    hta_table *by_group = hta_tableset_find(set, hta_comm_by_group_table.name);
    if ((ranks && (merge_rank_rows(set, ranks) || add_rank_metrics(set, ranks))) ||
        put_pipeline_steps(set, opt->microbatches) ||
        (by_group && hta_table_sort_by_first_column(by_group)))
        return hta_fail(err, "out of memory summing the point-to-point traffic");
    return 0;
}
