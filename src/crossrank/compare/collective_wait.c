/* collective_wait.c: who waits for whom at the collectives (the Scalasca
 * "wait at N x N" pattern, TraceLens' collective skew), on the root.
 *
 * Input: "_collectives" (analysis/collectives.c): every COMMUNICATION
 * kernel without collective metadata, packed per (rank, stream), unpacked
 * here with its (stream, ordinal) matching key; kernels with metadata are
 * matched by process group before (crossrank/exchange/collective_groups.c, spread
 * over the processes by crossrank/collective_exchange.c) and their
 * figures add to the same per-rank ones here.  Per stream, the ranks that
 * use it take part in its collectives; the k-th kernel of each of them is
 * one collective instance.  When they
 * issued different numbers of kernels on the stream, only the common
 * prefix is matched and every rank's surplus is reported ("unmatched"),
 * as is the number of instances a rank took no part in because it never
 * used the stream ("missing"): nothing is truncated silently.
 *
 * Per instance: the latest start over its ranks; each rank waits latest
 * start - own start (>= 0); the rank(s) starting at the latest start
 * arrived last (when all start together nobody did, and the instance is
 * not "contested"); the earliest end, against which each rank's end lag is
 * measured (max_end_skew_us).  A collective cannot complete on one rank
 * before every rank has joined it, so an instance that ends on some rank
 * before it starts on another breaks the clock condition: Kineto
 * timestamps are each host's wall clock, and this analysis assumes the
 * ranks' clocks are synchronised (NTP/PTP); every violation is counted
 * ("clock_violations") because it means either skewed clocks or kernels
 * matched wrongly, and the waits around it cannot be trusted.
 *
 * The straggler test.  Were arrivals random, a rank would arrive last at a
 * share fair = mean over its contested instances of 1 / (ranks taking
 * part).  A rank is flagged when its share is at least min(2 fair,
 * (1 + fair) / 2) (a practical floor: twice its due, or for two ranks
 * three times in four) and arriving last that often by chance is
 * implausible: the binomial tail P(X >= arrived_last | matched, fair) is
 * below 0.001 / n_ranks (Bonferroni over the ranks, so a run without a
 * straggler flags anybody with probability under 0.1%).  Flagged ranks get
 * a row of "_late_arrivers" (metric "arrived_last_share", class
 * "straggler"), which the step table joins to "outliers". */
#include "crossrank/compare/collective_wait.h"

#include "analysis/collectives.h"
#include "analysis/metrics.h"
#include "analysis/ranks_table.h"
#include "crossrank/compare/spread.h"
#include "crossrank/exchange/clock_offsets.h"
#include "crossrank/exchange/collective_groups.h"
#include "crossrank/exchange/comm_catalog.h"
#include "crossrank/exchange/stream_kernels.h"
#include "model/trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LATE_ALPHA 0.001

static const hta_column COLUMNS[HTA_COLLECTIVE_WAIT_N_COLUMNS] = {
    [HTA_COLLECTIVE_WAIT_RANK] = {"rank", HTA_COL_I64},
    [HTA_COLLECTIVE_WAIT_COLLECTIVES] = {"collectives", HTA_COL_I64},
    [HTA_COLLECTIVE_WAIT_MATCHED] = {"matched", HTA_COL_I64},
    [HTA_COLLECTIVE_WAIT_UNMATCHED] = {"unmatched", HTA_COL_I64},
    [HTA_COLLECTIVE_WAIT_MISSING] = {"missing", HTA_COL_I64},
    [HTA_COLLECTIVE_WAIT_TOTAL_WAIT_US] = {"total_wait_us", HTA_COL_F64},
    [HTA_COLLECTIVE_WAIT_MEAN_WAIT_US] = {"mean_wait_us", HTA_COL_F64},
    [HTA_COLLECTIVE_WAIT_ARRIVED_LAST] = {"arrived_last", HTA_COL_I64},
    [HTA_COLLECTIVE_WAIT_ARRIVED_LAST_SHARE] = {"arrived_last_share", HTA_COL_F64},
    [HTA_COLLECTIVE_WAIT_FAIR_SHARE] = {"fair_share", HTA_COL_F64},
    [HTA_COLLECTIVE_WAIT_MAX_END_SKEW_US] = {"max_end_skew_us", HTA_COL_F64},
    [HTA_COLLECTIVE_WAIT_CLOCK_VIOLATIONS] = {"clock_violations", HTA_COL_I64},
    [HTA_COLLECTIVE_WAIT_CAUSED_WAIT_US] = {"caused_wait_us", HTA_COL_F64},
    [HTA_COLLECTIVE_WAIT_METADATA_MISMATCHES] = {"metadata_mismatches", HTA_COL_I64},
};
const hta_table_spec hta_collective_wait_table = {
    "collective_wait", COLUMNS, HTA_COLLECTIVE_WAIT_N_COLUMNS, HTA_TABLE_GATHERED};
const hta_table_spec hta_late_arrivers_table = {"_late_arrivers", hta_outliers_columns,
                                                HTA_OUTLIERS_N_COLUMNS, HTA_TABLE_SCRATCH};

static double binomial_upper_tail(int64_t k, int64_t n, double p)
{
    double log_p = log(p), log_q = log1p(-p), sum = 0;
    double log_n_fact = lgamma((double)n + 1);
    for (int64_t i = k; i <= n; i++) {
        double term = exp(log_n_fact - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) +
                          (double)i * log_p + (double)(n - i) * log_q);
        sum += term;
        /* Past the mode the terms shrink geometrically. */
        if ((double)i > (double)n * p && term < sum * 1e-17)
            break;
    }
    return sum < 1 ? sum : 1;
}

int hta_is_late_arriver(int64_t arrived_last, int64_t matched, double fair_share,
                        size_t n_ranks)
{
    if (matched == 0 || !(fair_share > 0 && fair_share < 1))
        return 0;
    double share = (double)arrived_last / (double)matched;
    double floor_share = fmin(2 * fair_share, (1 + fair_share) / 2);
    if (share < floor_share)
        return 0;
    return binomial_upper_tail(arrived_last, matched, fair_share) < LATE_ALPHA / (double)n_ranks;
}

/* One slot per row of "ranks" (rank order), so that a rank's slot is its
 * row, then one per rank of the recorded world size without a trace
 * ("_missing_ranks"); failed ranks have no collectives and get no output
 * row, the others all do, those without any collective too (their
 * "missing" count says what they lacked). */
static rank_waits *list_ranks(const hta_table *ranks, const hta_table *missing)
{
    size_t n_missing = missing ? missing->n_rows : 0;
    rank_waits *w = calloc(ranks->n_rows + n_missing + 1, sizeof *w);
    for (size_t r = 0; w && r < ranks->n_rows; r++) {
        const hta_cell *row = hta_table_row(ranks, r);
        w[r].rank = row[0].i;
        w[r].failed = strcmp(row[HTA_RANKS_STATUS].s, "failed") == 0;
    }
    for (size_t r = 0; w && r < n_missing; r++)
        w[ranks->n_rows + r].rank = hta_table_row(missing, r)[HTA_MISSING_RANKS_RANK].i;
    return w;
}

/* Whether the member list text names rank. */
static int lists_rank(const char *members, int64_t rank, int *failed)
{
    int64_t *v = NULL;
    long n = hta_parse_int_list(members, &v);
    int found = 0;
    for (long i = 0; i < n && !found; i++)
        found = v[i] == rank;
    *failed |= n < 0;
    free(v);
    return found;
}

/* The instances of a process group: the most any rank took part in. */
static int64_t group_instances(const hta_table *by_group, const hta_cell *group)
{
    int64_t most = 0;
    for (size_t i = 0; i < by_group->n_rows; i++) {
        const hta_cell *row = hta_table_row(by_group, i);
        if (strcmp(row[HTA_COMM_BY_GROUP_GROUP].s, group[HTA_PROCESS_GROUPS_GROUP].s) == 0 &&
            strcmp(row[HTA_COMM_BY_GROUP_GROUP_DESC].s,
                   group[HTA_PROCESS_GROUPS_GROUP_DESC].s) == 0 &&
            row[HTA_COMM_BY_GROUP_INSTANCES].i > most)
            most = row[HTA_COMM_BY_GROUP_INSTANCES].i;
    }
    return most;
}

/* A rank without a trace misses every instance of each process group
 * whose members list it.  -1 when out of memory. */
static int add_missing_in_groups(const hta_tableset *set, rank_waits *w, size_t n)
{
    const hta_table *groups = hta_tableset_find(set, hta_process_groups_table.name);
    const hta_table *by_group = hta_tableset_find(set, hta_comm_by_group_table.name);
    int failed = 0;
    for (size_t g = 0; groups && by_group && g < groups->n_rows; g++) {
        const hta_cell *group = hta_table_row(groups, g);
        int64_t instances = -1;
        for (size_t i = 0; i < n; i++) {
            if (!lists_rank(group[HTA_PROCESS_GROUPS_RANKS].s, w[i].rank, &failed))
                continue;
            instances = instances < 0 ? group_instances(by_group, group) : instances;
            w[i].missing += instances;
        }
    }
    return failed ? -1 : 0;
}

static void match_instance(const hta_stream_block *b, size_t k, rank_waits *w)
{
    int64_t latest = INT64_MIN, earliest_end = INT64_MAX;
    size_t n_last = 0;
    for (size_t j = 0; j < b->n; j++) {
        const hta_stream_kernel *c = &b->first[j][k];
        n_last = c->start_ns > latest ? 1 : n_last + (c->start_ns == latest);
        latest = c->start_ns > latest ? c->start_ns : latest;
        earliest_end = c->end_ns < earliest_end ? c->end_ns : earliest_end;
    }
    int contested = n_last < b->n;
    for (size_t j = 0; j < b->n; j++) {
        const hta_stream_kernel *c = &b->first[j][k];
        rank_waits *r = &w[c->slot];
        r->matched++;
        r->wait_ns += latest - c->start_ns;
        r->clock_violations += c->end_ns < latest;
        if (c->end_ns - earliest_end > r->max_end_lag_ns)
            r->max_end_lag_ns = c->end_ns - earliest_end;
        if (contested) {
            r->arrived_last += c->start_ns == latest;
            r->expected_last += 1.0 / (double)b->n;
        }
    }
    int64_t waited = 0;
    for (size_t j = 0; contested && j < b->n; j++)
        waited += latest - b->first[j][k].start_ns;
    for (size_t j = 0; contested && j < b->n; j++)
        if (b->first[j][k].start_ns == latest)
            w[b->first[j][k].slot].caused_wait_ns += waited / (int64_t)n_last;
}

static void match_stream(const hta_stream_block *b, rank_waits *w, size_t n_ranks)
{
    for (size_t k = 0; k < b->common; k++)
        match_instance(b, k, w);
    for (size_t j = 0; j < b->n; j++)
        w[b->first[j]->slot].unmatched += (int64_t)(b->count[j] - b->common);
    /* Ranks without a kernel on this stream: every instance is missing. */
    size_t j = 0;
    for (size_t r = 0; r < n_ranks; r++) {
        if (j < b->n && b->first[j]->slot == r)
            j++;
        else if (!w[r].failed)
            w[r].missing += (int64_t)b->common;
    }
}

static int match_all(const hta_stream_kernel *c, size_t n, rank_waits *w, size_t n_ranks)
{
    hta_stream_block b;
    if (hta_stream_block_init(&b, n_ranks))
        return -1;
    for (size_t i = 0; i < n;) {
        i += hta_stream_block_split(&c[i], n - i, &b);
        match_stream(&b, w, n_ranks);
    }
    hta_stream_block_free(&b);
    return 0;
}

/* Every rank's kernels counted, shifted by its host's clock offset where
 * one was taken out (crossrank/exchange/clock_offsets.c). */
static void count_and_shift(hta_stream_kernel *c, size_t n, const hta_table *shifts,
                            rank_waits *w)
{
    for (size_t i = 0; i < n; i++) {
        w[c[i].slot].collectives++;
        long k = shifts ? hta_table_find_sorted(shifts, c[i].rank) : -1;
        int64_t shift = k >= 0 ? hta_table_row(shifts, (size_t)k)[HTA_CLOCK_SHIFTS_NS].i : 0;
        c[i].start_ns -= shift;
        c[i].end_ns -= shift;
    }
}

static double share_of(const rank_waits *r)
{
    return r->matched ? (double)r->arrived_last / (double)r->matched : NAN;
}

/* NaN without a contested instance (each adds 1 / ranks > 0): chance
 * gives no share of last arrivals where nobody can arrive last. */
static double fair_share_of(const rank_waits *r)
{
    return r->matched && r->expected_last > 0 ? r->expected_last / (double)r->matched : NAN;
}

static int put_rows(hta_table *t, const rank_waits *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const rank_waits *r = &w[i];
        if (r->failed)
            continue;
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, r->rank);
        hta_row_put_i64(&row, r->collectives);
        hta_row_put_i64(&row, r->matched);
        hta_row_put_i64(&row, r->unmatched);
        hta_row_put_i64(&row, r->missing);
        hta_row_put_f64(&row, hta_ns_to_us(r->wait_ns));
        hta_row_put_f64(&row, r->matched ? hta_ns_to_us(r->wait_ns) / (double)r->matched
                                         : NAN);
        hta_row_put_i64(&row, r->arrived_last);
        hta_row_put_f64(&row, share_of(r));
        hta_row_put_f64(&row, fair_share_of(r));
        hta_row_put_f64(&row, hta_ns_to_us(r->max_end_lag_ns));
        hta_row_put_i64(&row, r->clock_violations);
        hta_row_put_f64(&row, hta_ns_to_us(r->caused_wait_ns));
        hta_row_put_i64(&row, r->metadata_mismatches);
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

/* "straggler" rows of "_late_arrivers", with the spread of the shares
 * over the ranks that took part in any collective. */
static int flag_late_arrivers(hta_tableset *set, const rank_waits *w, size_t n)
{
    double *shares = malloc((n ? n : 1) * sizeof *shares);
    size_t k = 0;
    for (size_t i = 0; shares && i < n; i++)
        if (w[i].matched)
            shares[k++] = share_of(&w[i]);
    hta_spread s;
    hta_table *outliers = hta_tableset_table(set, &hta_late_arrivers_table);
    int rc = shares && outliers && hta_spread_of(shares, k, &s) == 0 ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (hta_is_late_arriver(w[i].arrived_last, w[i].matched, fair_share_of(&w[i]), k))
            rc = hta_add_outlier(outliers, hta_metrics[HTA_METRIC_ARRIVED_LAST_SHARE].name,
                                 w[i].rank, share_of(&w[i]), &s, "straggler");
    free(shares);
    return rc;
}

int hta_collective_wait(hta_tableset *set, hta_error *err)
{
    hta_table *t = hta_tableset_table(set, &hta_collective_wait_table);
    if (!t)
        return hta_fail(err, "out of memory in the collective wait analysis");
    const hta_table *in = hta_tableset_find(set, hta_collective_kernels_table.name);
    const hta_table *grouped = hta_tableset_find(set, hta_group_waits_table.name);
    const hta_table *ranks = hta_tableset_find(set, hta_ranks_table.name);
    hta_stream_kernel *c = NULL;
    size_t n = 0;
    int corrupt = 0;
    if (hta_stream_kernels_load(in, ranks, &c, &n, &corrupt))
        return corrupt ? hta_fail(err, "collectives of a rank missing from /ranks, or corrupt")
                       : hta_fail(err, "out of memory in the collective wait analysis");
    if (n == 0 && (!grouped || grouped->n_rows == 0))
        return 0;
    const hta_table *missing = hta_tableset_find(set, hta_missing_ranks_table.name);
    size_t n_missing = missing ? missing->n_rows : 0, n_slots = ranks->n_rows + n_missing;
    rank_waits *w = list_ranks(ranks, missing);
    int rc = w ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = w[c[i].slot].failed ? -1 : 0;
    if (rc && w) {
        free(w);
        free(c);
        return hta_fail(err, "collectives of a rank missing from /ranks, or corrupt");
    }
    if (rc == 0) {
        count_and_shift(c, n, hta_tableset_find(set, hta_clock_shifts_table.name), w);
        rc = match_all(c, n, w, n_slots);
    }
    free(c);
    if (rc == 0 && hta_add_collective_groups(set, w, ranks->n_rows, err)) {
        free(w);
        return -1;
    }
    if (rc == 0)
        rc = add_missing_in_groups(set, w + ranks->n_rows, n_missing);
    if (rc == 0)
        rc = put_rows(t, w, n_slots) || hta_table_sort_by_first_column(t);
    if (rc == 0)
        rc = flag_late_arrivers(set, w, n_slots);
    free(w);
    return rc ? hta_fail(err, "out of memory in the collective wait analysis") : 0;
}
