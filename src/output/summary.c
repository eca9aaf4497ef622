/* summary.c: the short report the root prints on stdout.
 *
 * It shows at most ten ranks (the five with the most and the five with the
 * least idle time), every failed trace, the ranks with outliers (one line
 * each: how many metrics, the worst of them; worst ranks first, at most
 * fifteen) and the flagged stragglers (at most five), so it stays readable
 * for a thousand ranks; the HDF5 file has the rest. */

#include "analysis/graph_launches.h"
#include "analysis/ranks_table.h"
#include "analysis/temporal_breakdown.h"
#include "crossrank/exchange/clock_offsets.h"
#include "crossrank/compare/causes.h"
#include "crossrank/compare/collective_wait.h"
#include "crossrank/job_path/delay_costs.h"
#include "crossrank/compare/nodes.h"
#include "crossrank/compare/spread.h"
#include "crossrank/compare/step_comparison.h"
#include "crossrank/compare/stragglers.h"
#include "output/a2a_report.h"
#include "output/collective_report.h"
#include "output/p2p_report.h"
#include "output/summary.h"
#include "output/critical_path_summary.h"
#include "output/hang_report.h"
#include "output/job_path_summary.h"
#include "output/what_if_summary.h"
#include "output/summary_ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/ranked.h"

#define SUMMARY_EXTREME_RANKS 5
#define SUMMARY_OUTLIER_RANKS 15
#define SUMMARY_STRAGGLERS 5

static void print_breakdown_row(const hta_table *tb, size_t r)
{
    const hta_cell *row = hta_table_row(tb, r);
    printf("  %6lld %9.2f %13.2f %7.2f %14.1f\n", (long long)row[0].i,
           row[HTA_TEMPORAL_BREAKDOWN_COMPUTE_TIME_PCTG].f,
           row[HTA_TEMPORAL_BREAKDOWN_NON_COMPUTE_TIME_PCTG].f,
           row[HTA_TEMPORAL_BREAKDOWN_IDLE_TIME_PCTG].f,
           row[HTA_TEMPORAL_BREAKDOWN_KERNEL_TIME_US].f);
}

static void print_breakdown(const hta_tableset *set)
{
    const hta_table *tb = hta_tableset_find(set, hta_temporal_breakdown_table.name);
    if (!tb || tb->n_rows == 0) {
        printf("No rank has GPU events: no temporal breakdown.\n");
        return;
    }
    hta_ranked *order = malloc(tb->n_rows * sizeof *order);
    if (!order)
        return;
    for (size_t r = 0; r < tb->n_rows; r++)
        order[r] = (hta_ranked){hta_table_row(tb, r)[HTA_TEMPORAL_BREAKDOWN_IDLE_TIME_PCTG].f, r};
    hta_rank_descending(order, tb->n_rows);
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

/* The outliers of one rank: how many, and the worst (largest |robust z|
 * or |z|). */
typedef struct rank_outliers {
    int64_t rank;
    size_t count;
    size_t worst_row;
    double worst;
} rank_outliers;

static double severity(const hta_cell *row, long z, long robust_z)
{
    double a = isfinite(row[z].f) ? fabs(row[z].f) : 0.0;
    double b = isfinite(row[robust_z].f) ? fabs(row[robust_z].f) : 0.0;
    return a > b ? a : b;
}

static int compare_worst_first(const void *a, const void *b)
{
    const rank_outliers *x = a, *y = b;
    if (x->worst != y->worst)
        return x->worst > y->worst ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Groups the outlier rows by rank (in rank order); returns the number of
 * ranks, or 0 when out of memory. */
static size_t group_outliers(const hta_table *t, rank_outliers *ranks)
{
    hta_ranked_i64 *order = malloc(t->n_rows * sizeof *order);
    if (!order)
        return 0;
    for (size_t r = 0; r < t->n_rows; r++)
        order[r] = (hta_ranked_i64){hta_table_row(t, r)[HTA_OUTLIERS_RANK].i, r};
    hta_rank_ascending_i64(order, t->n_rows);
    size_t n = 0;
    for (size_t i = 0; i < t->n_rows; i++) {
        if (i == 0 || order[i].key != order[i - 1].key)
            ranks[n++] = (rank_outliers){order[i].key, 0, order[i].row, -1.0};
        rank_outliers *ro = &ranks[n - 1];
        ro->count++;
        double sev =
            severity(hta_table_row(t, order[i].row), HTA_OUTLIERS_Z, HTA_OUTLIERS_ROBUST_Z);
        if (sev > ro->worst) {
            ro->worst = sev;
            ro->worst_row = order[i].row;
        }
    }
    free(order);
    return n;
}

static void print_outlier_rank(const hta_table *t, const rank_outliers *ro)
{
    const hta_cell *row = hta_table_row(t, ro->worst_row);
    printf("  %6lld %7zu  %-36.36s %14.4g %14.4g %8.2f %9.2f  %s\n", (long long)ro->rank,
           ro->count, row[HTA_OUTLIERS_METRIC].s,
           row[HTA_OUTLIERS_VALUE].f, row[HTA_OUTLIERS_MEDIAN].f,
           row[HTA_OUTLIERS_Z].f, row[HTA_OUTLIERS_ROBUST_Z].f,
           row[HTA_OUTLIERS_CLASSIFICATION].s);
}

/* One line per rank with flagged metrics, worst first, at most
 * SUMMARY_OUTLIER_RANKS of them. */
static void print_outliers(const hta_tableset *set, const hta_output_settings *opt)
{
    const hta_table *t = hta_tableset_find(set, hta_outliers_table.name);
    if (!t || t->n_rows == 0) {
        printf("\nOutliers: none.\n");
        return;
    }
    rank_outliers *ranks = malloc(t->n_rows * sizeof *ranks);
    if (!ranks)
        return;
    size_t n = group_outliers(t, ranks);
    qsort(ranks, n, sizeof *ranks, compare_worst_first);
    printf("\nOutliers: %zu flagged metrics on %zu ranks (worst first):\n", t->n_rows, n);
    printf("  %6s %7s  %-36s %14s %14s %8s %9s  %s\n", "rank", "flagged", "worst metric",
           "value", "median", "z", "robust_z", "class");
    for (size_t k = 0; k < n && k < SUMMARY_OUTLIER_RANKS; k++)
        print_outlier_rank(t, &ranks[k]);
    if (n > SUMMARY_OUTLIER_RANKS)
        printf("  ... %zu more ranks\n", n - SUMMARY_OUTLIER_RANKS);
    printf("  see /outliers in %s\n", opt->path);
    free(ranks);
}

/* The flagged ranks of /stragglers (most suspect first), with reasons. */
static void print_stragglers(const hta_tableset *set)
{
    const hta_table *t = hta_tableset_find(set, hta_stragglers_table.name);
    size_t shown = 0, n_flagged = 0;
    for (size_t r = 0; t && r < t->n_rows; r++)
        n_flagged += hta_table_row(t, r)[HTA_STRAGGLERS_FLAGGED].i != 0;
    if (n_flagged == 0) {
        printf("\nStragglers: none.\n");
        return;
    }
    printf("\nStragglers (%zu, most suspect first; see /stragglers, /collective_wait):\n",
           n_flagged);
    for (size_t r = 0; r < t->n_rows && shown < SUMMARY_STRAGGLERS; r++) {
        const hta_cell *row = hta_table_row(t, r);
        if (!row[HTA_STRAGGLERS_FLAGGED].i)
            continue;
        printf("  rank %lld, score %.2f: %s\n", (long long)row[0].i,
               row[HTA_STRAGGLERS_SCORE].f, row[HTA_STRAGGLERS_REASONS].s);
        shown++;
    }
    if (n_flagged > shown)
        printf("  ... %zu more\n", n_flagged - shown);
}

/* The cause /stragglers gives for rank (none when it has no row). */
static hta_cause straggler_cause_of(const hta_tableset *set, int64_t rank)
{
    const hta_table *t = hta_tableset_find(set, hta_stragglers_table.name);
    for (size_t r = 0; t && r < t->n_rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        if (row[HTA_STRAGGLERS_RANK].i == rank)
            return hta_cause_named(row[HTA_STRAGGLERS_CAUSE].s);
    }
    return HTA_CAUSE_NONE;
}

/* The cause carrying most of the cost of the /delay_costs rows
 * [first, end) (none on ties), and their direct cost into *direct. */
static hta_cause main_delay_cause(const hta_table *t, size_t first, size_t end, double *direct)
{
    double cost[HTA_N_CAUSES + 1] = {0};
    *direct = 0;
    for (size_t i = first; i < end; i++) {
        const hta_cell *row = hta_table_row(t, i);
        *direct += row[HTA_DELAY_COSTS_DIRECT_US].f;
        cost[hta_cause_named(row[HTA_DELAY_COSTS_CAUSE].s)] += row[HTA_DELAY_COSTS_TOTAL_US].f;
    }
    hta_cause most = HTA_CAUSE_NONE;
    for (int c = 0; c < HTA_N_CAUSES; c++)
        most = cost[c] > cost[most] ? (hta_cause)c : most;
    return most;
}

/* The rank whose delays cost the job most wait per step (the rows of
 * /delay_costs come by rank), the cause of most of its cost, and whether
 * /stragglers gives the same cause. */
static void print_delay_costs(const hta_tableset *set)
{
    const hta_table *t = hta_tableset_find(set, hta_delay_costs_table.name);
    const hta_table *steps = hta_tableset_find(set, hta_cross_steps_table.name);
    if (!t || t->n_rows == 0 || !steps || steps->n_rows == 0)
        return;
    size_t worst = 0, worst_end = 0;
    double worst_cost = 0, direct;
    for (size_t i = 0, end; i < t->n_rows; i = end) {
        int64_t rank = hta_table_row(t, i)[HTA_DELAY_COSTS_RANK].i;
        double cost = 0;
        for (end = i; end < t->n_rows && hta_table_row(t, end)[HTA_DELAY_COSTS_RANK].i == rank;
             end++)
            cost += hta_table_row(t, end)[HTA_DELAY_COSTS_TOTAL_US].f;
        if (cost > worst_cost)
            worst = i, worst_end = end, worst_cost = cost;
    }
    if (worst_end == 0)
        return;
    hta_cause cause = main_delay_cause(t, worst, worst_end, &direct);
    int64_t rank = hta_table_row(t, worst)[HTA_DELAY_COSTS_RANK].i;
    double n = (double)steps->n_rows;
    printf("\nDelay costs: rank %lld's lateness costs the job %.1f us of waiting per step "
           "(%.1f direct, %.1f propagated), ",
           (long long)rank, worst_cost / n, direct / n, (worst_cost - direct) / n);
    if (cause == HTA_CAUSE_NONE)
        printf("none of its steps' parts above the other ranks' median");
    else
        printf("most of it from %s: %s", hta_cause_name(cause), hta_cause_text(cause));
    hta_cause straggler_cause = straggler_cause_of(set, rank);
    if (straggler_cause == cause && cause != HTA_CAUSE_NONE)
        printf(", as /stragglers says");
    else if (straggler_cause != HTA_CAUSE_NONE && straggler_cause < HTA_N_CAUSES)
        printf("; /stragglers gives %s over the whole run", hta_cause_name(straggler_cause));
    printf("; see /delay_costs\n");
}

/* The ranks whose CUDA/HIP graph replays were not all recorded, or some
 * recorded short, whose idle time is then an upper bound
 * (analysis/graph_launches.c). */
static void print_graph_coverage(const hta_tableset *set)
{
    const hta_table *t = hta_tableset_find(set, hta_graph_launches_table.name);
    int64_t launches = 0, recorded = 0, short_replays = 0;
    for (size_t r = 0; t && r < t->n_rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        launches += row[HTA_GRAPH_LAUNCHES_LAUNCHES].i;
        recorded += row[HTA_GRAPH_LAUNCHES_RECORDED].i;
        short_replays += row[HTA_GRAPH_LAUNCHES_SHORT_REPLAYS].i;
    }
    if (recorded == launches && short_replays == 0)
        return;
    size_t ranks = 0;
    free(hta_graph_under_recorded_ranks(set, &ranks));
    printf("\nGraph replays: ");
    if (recorded < launches)
        printf("%lld of %lld CUDA/HIP graph launches left no GPU event%s",
               (long long)(launches - recorded), (long long)launches,
               short_replays ? " and " : "");
    if (short_replays)
        printf("%lld of %lld recorded replays have fewer kernels than their graph",
               (long long)short_replays, (long long)recorded);
    printf(", on %zu ranks: their idle time is an upper bound and stays out of the outlier "
           "search (see /graph_launches)\n", ranks);
}

/* The hosts whose clock offset was taken out before the waits. */
static void print_clock_offsets(const hta_tableset *set)
{
    const hta_table *t = hta_tableset_find(set, hta_clock_offsets_table.name);
    size_t shown = 0;
    for (size_t r = 0; t && r < t->n_rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        if (!row[HTA_CLOCK_OFFSETS_APPLIED].i)
            continue;
        printf("%s%s %+.1f us", shown++ ? ", " : "\nClocks: offsets taken out before the waits: ",
               row[HTA_CLOCK_OFFSETS_HOST].s, row[HTA_CLOCK_OFFSETS_OFFSET_US].f);
    }
    if (shown)
        printf(" (see /clock_offsets)\n");
}

/* The nodes whose flagged ranks gather there more than chance would put
 * them (crossrank/compare/nodes.c); nothing when no node is named. */
static void print_nodes(const hta_tableset *set)
{
    const hta_table *t = hta_tableset_find(set, hta_nodes_table.name);
    if (!t)
        return;
    for (size_t r = 0; r < t->n_rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        if (!row[HTA_NODES_NAMED].i)
            continue;
        printf("\nNode %s: %lld of its %lld ranks flagged (P = %.2g after Bonferroni over %zu "
               "nodes); check or drain it",
               row[HTA_NODES_HOST].s, (long long)row[HTA_NODES_FLAGGED_RANKS].i,
               (long long)row[HTA_NODES_RANKS].i, row[HTA_NODES_P_BONFERRONI].f, t->n_rows);
        if (row[HTA_NODES_WORST_METRIC].s[0])
            printf("; across nodes it stands out most in %s (robust z %.1f)",
                   row[HTA_NODES_WORST_METRIC].s, row[HTA_NODES_WORST_ROBUST_Z].f);
        printf(" (see /nodes, /node_metrics)\n");
    }
}

/* Only what needs attention: clock-condition violations, and ranks whose
 * collectives could not all be matched. */
static void print_collective_issues(const hta_tableset *set)
{
    const hta_table *t = hta_tableset_find(set, hta_collective_wait_table.name);
    if (!t || t->n_rows == 0)
        return;
    int64_t n_violations = 0;
    size_t violating_ranks = 0, mismatched_ranks = 0;
    for (size_t r = 0; r < t->n_rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        n_violations += row[HTA_COLLECTIVE_WAIT_CLOCK_VIOLATIONS].i;
        violating_ranks += row[HTA_COLLECTIVE_WAIT_CLOCK_VIOLATIONS].i > 0;
        mismatched_ranks +=
            row[HTA_COLLECTIVE_WAIT_UNMATCHED].i > 0 || row[HTA_COLLECTIVE_WAIT_MISSING].i > 0;
    }
    if (n_violations)
        printf("\nCollectives: %lld clock-condition violations on %zu of %zu ranks (a collective "
               "ended on a rank before another rank started it: are the hosts' clocks in "
               "sync?)\n",
               (long long)n_violations, violating_ranks, t->n_rows);
    if (mismatched_ranks)
        printf("\nCollectives: %zu of %zu ranks issued collectives the others did not, or "
               "lacked some (see unmatched and missing in /collective_wait)\n",
               mismatched_ranks, t->n_rows);
}

static void print_failures(const hta_table *ranks)
{
    for (size_t r = 0; r < ranks->n_rows; r++) {
        const hta_cell *row = hta_table_row(ranks, r);
        if (strcmp(row[HTA_RANKS_STATUS].s, "failed") == 0)
            printf("  failed: %s\n", row[HTA_RANKS_ERROR].s);
    }
}

/* Prints the missing ranks of ranks[from..) as ranges ("1, 4-7"), the
 * first MOST_RANGES only. */
static void print_missing_ranges(const hta_table *ranks, size_t from)
{
    enum { MOST_RANGES = 12 };
    size_t ranges = 0;
    for (size_t r = from; r < ranks->n_rows; r++) {
        if (strcmp(hta_table_row(ranks, r)[HTA_RANKS_STATUS].s, HTA_RANKS_MISSING) != 0)
            continue;
        size_t end = r;
        while (end + 1 < ranks->n_rows &&
               strcmp(hta_table_row(ranks, end + 1)[HTA_RANKS_STATUS].s, HTA_RANKS_MISSING) == 0 &&
               hta_table_row(ranks, end + 1)[HTA_RANKS_RANK].i ==
                   hta_table_row(ranks, end)[HTA_RANKS_RANK].i + 1)
            end++;
        if (ranges < MOST_RANGES)
            printf(end > r ? "%s%lld-%lld" : "%s%lld", ranges ? ", " : "",
                   (long long)hta_table_row(ranks, r)[HTA_RANKS_RANK].i,
                   (long long)hta_table_row(ranks, end)[HTA_RANKS_RANK].i);
        else if (ranges == MOST_RANGES)
            printf(", ...");
        ranges++;
        r = end;
    }
}

/* The ranks of the recorded world size without a trace. */
static void print_missing(const hta_table *ranks, size_t n_missing)
{
    size_t first = 0;
    while (first < ranks->n_rows &&
           strcmp(hta_table_row(ranks, first)[HTA_RANKS_STATUS].s, HTA_RANKS_MISSING) != 0)
        first++;
    if (!n_missing || first == ranks->n_rows)
        return;
    printf("\nMissing ranks: %zu of the recorded world size %lld %s no trace: ", n_missing,
           (long long)hta_table_row(ranks, first)[HTA_RANKS_WORLD_SIZE].i,
           n_missing == 1 ? "has" : "have");
    print_missing_ranges(ranks, first);
    printf(" (every collective %s should have joined counts as missing in "
           "/collective_wait)\n",
           n_missing == 1 ? "it" : "they");
}

void hta_print_summary(const hta_tableset *set, const hta_output_settings *opt,
                       const hta_run_info *info)
{
    const hta_table *ranks = hta_tableset_find(set, hta_ranks_table.name);
    size_t n_failed = 0, n_no_gpu = 0, n_missing = 0;
    for (size_t r = 0; ranks && r < ranks->n_rows; r++) {
        const char *s = hta_table_row(ranks, r)[HTA_RANKS_STATUS].s;
        n_failed += strcmp(s, "failed") == 0;
        n_no_gpu += strcmp(s, "no_gpu_events") == 0;
        n_missing += strcmp(s, HTA_RANKS_MISSING) == 0;
    }
    size_t n = (ranks ? ranks->n_rows : 0) - n_missing;
    printf("hta-mpi %s: %zu traces, %zu analysed, %zu failed, %zu without GPU events; "
           "%d processes, %.2f s\n",
           info->tool_version, n, n - n_failed, n_failed, n_no_gpu, info->n_processes,
           info->wall_seconds);
    if (ranks) {
        print_failures(ranks);
        print_missing(ranks, n_missing);
    }
    print_breakdown(set);
    print_graph_coverage(set);
    print_outliers(set, opt);
    print_stragglers(set);
    print_delay_costs(set);
    print_nodes(set);
    print_clock_offsets(set);
    hta_print_collective_report(set);
    print_collective_issues(set);
    hta_print_p2p_report(set);
    hta_print_a2a_report(set);
    hta_print_ops_summary(set);
    hta_print_critical_path_summary(set);
    hta_print_job_path_summary(set);
    hta_print_what_if_summary(set);
    hta_print_hang_report(set);
    printf("\nResults: %s\n", opt->path);
}
