/* p2p_report.c: what the stdout summary says about point-to-point traffic
 * (docs/crossrank.md, "Point-to-point").  From /p2p_summary the totals;
 * the worst stage is the rank whose sends kept its peers waiting longest
 * (p2p_caused_wait_us of /rank_metrics), with its mean bubble fraction
 * from /pipeline_steps beside 1F1B's; then the kernels left unpaired
 * ("_p2p_ranks"), which were given no wait. */
#include "output/p2p_report.h"

#include "analysis/metrics.h"
#include "crossrank/compare/p2p_results.h"
#include "crossrank/exchange/p2p_pairs.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void print_totals(const hta_table *s)
{
    int64_t pairs = 0, violations = 0;
    double late_sender = 0, late_receiver = 0;
    for (size_t r = 0; r < s->n_rows; r++) {
        const hta_cell *row = hta_table_row(s, r);
        pairs += row[HTA_P2P_SUMMARY_COUNT].i;
        late_sender += row[HTA_P2P_SUMMARY_LATE_SENDER_US].f;
        late_receiver += row[HTA_P2P_SUMMARY_LATE_RECEIVER_US].f;
        violations += row[HTA_P2P_SUMMARY_CLOCK_VIOLATIONS].i;
    }
    printf("  %lld send/recv pairs between %zu (src, dst): late sender %.1f us, late receiver "
           "%.1f us in all (see /p2p_summary, /p2p)\n",
           (long long)pairs, s->n_rows, late_sender, late_receiver);
    if (violations)
        printf("  %lld pairs break the clock condition (a recv ended before its send began: "
               "are the hosts' clocks in sync?)\n", (long long)violations);
}

/* The rank with the largest p2p_caused_wait_us, -1 without one. */
static int64_t worst_sender(const hta_table *metrics, double *caused)
{
    int64_t worst = -1;
    *caused = 0;
    for (size_t r = 0; metrics && r < metrics->n_rows; r++) {
        const hta_cell *row = hta_table_row(metrics, r);
        if (hta_metric_is(row[HTA_RANK_METRICS_METRIC].s, HTA_METRIC_P2P_CAUSED_WAIT_US) &&
            row[HTA_RANK_METRICS_VALUE].f > *caused) {
            *caused = row[HTA_RANK_METRICS_VALUE].f;
            worst = row[HTA_RANK_METRICS_RANK].i;
        }
    }
    return worst;
}

static void print_worst_stage(const hta_tableset *set)
{
    double caused;
    int64_t rank = worst_sender(hta_tableset_find(set, hta_rank_metrics_table.name), &caused);
    const hta_table *steps = hta_tableset_find(set, hta_pipeline_steps_table.name);
    if (rank < 0 || !steps)
        return;
    double sum = 0, sum_expected = 0;
    size_t n = 0;
    int64_t at = -1, of = -1;
    for (size_t r = 0; r < steps->n_rows; r++) {
        const hta_cell *row = hta_table_row(steps, r);
        if (row[0].i != rank || isnan(row[HTA_PIPELINE_STEPS_BUBBLE_FRACTION].f))
            continue;
        sum += row[HTA_PIPELINE_STEPS_BUBBLE_FRACTION].f;
        sum_expected += row[HTA_PIPELINE_STEPS_EXPECTED_BUBBLE_FRACTION].f;
        at = row[HTA_PIPELINE_STEPS_STAGE].i;
        of = row[HTA_PIPELINE_STEPS_STAGES].i;
        n++;
    }
    if (n == 0)
        return;
    printf("  worst stage: rank %lld (stage %lld of %lld) kept its peers waiting %.1f us "
           "(late sender); its bubble %.1f%% of the step, 1F1B's %.1f%% (see /pipeline_steps)\n",
           (long long)rank, (long long)at, (long long)of, caused, 100 * sum / (double)n,
           100 * sum_expected / (double)n);
}

static void print_unpaired(const hta_table *ranks)
{
    int64_t n = 0;
    size_t on = 0;
    for (size_t r = 0; r < ranks->n_rows; r++) {
        int64_t u = hta_table_row(ranks, r)[HTA_P2P_RANKS_UNPAIRED].i;
        n += u;
        on += u > 0;
    }
    if (n)
        printf("  %lld send/recv kernels on %zu ranks have no known peer (no Src/Dst Rank in the "
               "trace, or the peer's trace not analysed): unpaired, given no wait\n",
               (long long)n, on);
}

void hta_print_p2p_report(const hta_tableset *set)
{
    const hta_table *summary = hta_tableset_find(set, hta_p2p_summary_table.name);
    const hta_table *ranks = hta_tableset_find(set, hta_p2p_ranks_table.name);
    if (!summary && !ranks)
        return;
    printf("\nPoint-to-point:\n");
    if (summary && summary->n_rows)
        print_totals(summary);
    print_worst_stage(set);
    if (ranks)
        print_unpaired(ranks);
}
