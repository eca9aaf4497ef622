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
 * an "outliers" row (metric "arrived_last_share", class "straggler"). */
#include "crossrank/compare/collective_wait.h"

#include "analysis/collectives.h"
#include "analysis/ranks_table.h"
#include "crossrank/exchange/collective_groups.h"
#include "crossrank/compare/spread.h"
#include "model/trace.h"
#include "table/packed_ints.h"

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

typedef struct collective {
    size_t rank;               /* its rank's slot: the row in /ranks */
    int64_t stream, start_ns, end_ns;
} collective;


/* One stream's kernels grouped by rank: participant j's k-th kernel is
 * first[j][k]. */
typedef struct stream_block {
    const collective **first;
    size_t *count;
    size_t n;                  /* participants */
    size_t common;             /* matched instances */
} stream_block;

/* A row of "_collectives" with its rank's slot, to order the rows. */
typedef struct stream_row {
    const hta_cell *cells;
    size_t slot;
} stream_row;

static int compare_stream_then_rank(const void *a, const void *b)
{
    const stream_row *x = a, *y = b;
    int64_t sx = x->cells[HTA_COLLECTIVE_KERNELS_STREAM].i;
    int64_t sy = y->cells[HTA_COLLECTIVE_KERNELS_STREAM].i;
    if (sx != sy)
        return sx < sy ? -1 : 1;
    return (x->slot > y->slot) - (x->slot < y->slot);
}

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
 * row; failed ranks have no collectives and get no output row, the others
 * all do, those without any collective too (their "missing" count says
 * what they lacked). */
static rank_waits *list_ranks(const hta_table *ranks)
{
    long status = HTA_RANKS_STATUS;
    rank_waits *w = calloc(ranks->n_rows ? ranks->n_rows : 1, sizeof *w);
    for (size_t r = 0; w && r < ranks->n_rows; r++) {
        const hta_cell *row = hta_table_row(ranks, r);
        w[r].rank = row[0].i;
        w[r].failed = strcmp(row[status].s, "failed") == 0;
    }
    return w;
}

static size_t count_collectives(const hta_table *t)
{
    size_t n = 0;
    for (size_t r = 0; r < t->n_rows; r++)
        n += (size_t)hta_table_row(t, r)[HTA_COLLECTIVE_KERNELS_KERNELS].i;
    return n;
}

/* Appends the row's kernels to out; -1 when its series are shorter than
 * its kernel count. */
static int unpack_stream(const hta_cell *row, size_t slot, collective *out)
{
    hta_series gaps, durations;
    hta_series_open(&gaps, row[HTA_COLLECTIVE_KERNELS_START_GAPS].s);
    hta_series_open(&durations, row[HTA_COLLECTIVE_KERNELS_DURATIONS].s);
    int64_t start = row[HTA_COLLECTIVE_KERNELS_FIRST_START_NS].i;
    for (int64_t k = 0; k < row[HTA_COLLECTIVE_KERNELS_KERNELS].i; k++) {
        uint64_t gap;
        int64_t duration;
        if (!hta_series_next(&gaps, &gap) || !hta_series_next_signed(&durations, &duration))
            return -1;
        start += (int64_t)gap;
        out[k] = (collective){slot, row[HTA_COLLECTIVE_KERNELS_STREAM].i, start, start + duration};
    }
    return 0;
}

/* Unpacks the table's n kernels, with rank slots, sorted by (stream,
 * rank, ordinal): a row holds one (rank, stream) with its kernels in
 * order, so ordering the rows orders the kernels.  -1 when a row's rank is
 * not a rank analysed without failure, or its series are corrupt. */
static int load_collectives(const hta_table *t, const hta_table *ranks, rank_waits *w,
                            collective *out)
{
    stream_row *rows = malloc((t->n_rows ? t->n_rows : 1) * sizeof *rows);
    int rc = rows ? 0 : -1;
    for (size_t r = 0; rc == 0 && r < t->n_rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        long k = hta_table_find_sorted(ranks, row[HTA_COLLECTIVE_KERNELS_RANK].i);
        rc = k < 0 || w[k].failed ? -1 : 0;
        rows[r] = (stream_row){row, (size_t)k};
    }
    if (rc == 0)
        qsort(rows, t->n_rows, sizeof *rows, compare_stream_then_rank);
    for (size_t r = 0, at = 0; rc == 0 && r < t->n_rows; r++) {
        rc = unpack_stream(rows[r].cells, rows[r].slot, &out[at]);
        at += (size_t)rows[r].cells[HTA_COLLECTIVE_KERNELS_KERNELS].i;
        w[rows[r].slot].collectives += rows[r].cells[HTA_COLLECTIVE_KERNELS_KERNELS].i;
    }
    free(rows);
    return rc;
}

/* Splits rows [0, n) of one stream into per-rank runs. */
static void split_by_rank(const collective *c, size_t n, stream_block *b)
{
    b->n = 0;
    b->common = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || c[i].rank != c[i - 1].rank) {
            b->first[b->n] = &c[i];
            b->count[b->n++] = 0;
        }
        b->count[b->n - 1]++;
    }
    for (size_t j = 0; j < b->n; j++)
        b->common = b->count[j] < b->common ? b->count[j] : b->common;
}

static void match_instance(const stream_block *b, size_t k, rank_waits *w)
{
    int64_t latest = INT64_MIN, earliest_end = INT64_MAX;
    size_t n_last = 0;
    for (size_t j = 0; j < b->n; j++) {
        const collective *c = &b->first[j][k];
        n_last = c->start_ns > latest ? 1 : n_last + (c->start_ns == latest);
        latest = c->start_ns > latest ? c->start_ns : latest;
        earliest_end = c->end_ns < earliest_end ? c->end_ns : earliest_end;
    }
    int contested = n_last < b->n;
    for (size_t j = 0; j < b->n; j++) {
        const collective *c = &b->first[j][k];
        rank_waits *r = &w[c->rank];
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
            w[b->first[j][k].rank].caused_wait_ns += waited / (int64_t)n_last;
}

static void match_stream(const stream_block *b, rank_waits *w, size_t n_ranks)
{
    for (size_t k = 0; k < b->common; k++)
        match_instance(b, k, w);
    for (size_t j = 0; j < b->n; j++)
        w[b->first[j]->rank].unmatched += (int64_t)(b->count[j] - b->common);
    /* Ranks without a kernel on this stream: every instance is missing. */
    size_t j = 0;
    for (size_t r = 0; r < n_ranks; r++) {
        if (j < b->n && b->first[j]->rank == r)
            j++;
        else if (!w[r].failed)
            w[r].missing += (int64_t)b->common;
    }
}

static int match_all(const collective *c, size_t n, rank_waits *w, size_t n_ranks)
{
    stream_block b = {malloc(n_ranks * sizeof *b.first), malloc(n_ranks * sizeof *b.count), 0, 0};
    int rc = b.first && b.count ? 0 : -1;
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        for (end = i + 1; end < n && c[end].stream == c[i].stream;)
            end++;
        split_by_rank(&c[i], end - i, &b);
        match_stream(&b, w, n_ranks);
    }
    free(b.first);
    free(b.count);
    return rc;
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

/* "straggler" rows in "outliers", with the spread of the shares over the
 * ranks that took part in any collective. */
static int flag_late_arrivers(hta_tableset *set, const rank_waits *w, size_t n)
{
    double *shares = malloc((n ? n : 1) * sizeof *shares);
    size_t k = 0;
    for (size_t i = 0; shares && i < n; i++)
        if (w[i].matched)
            shares[k++] = share_of(&w[i]);
    hta_spread s;
    hta_table *outliers = hta_tableset_table(set, &hta_outliers_table);
    int rc = shares && outliers && hta_spread_of(shares, k, &s) == 0 ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (hta_is_late_arriver(w[i].arrived_last, w[i].matched, fair_share_of(&w[i]), k))
            rc = hta_add_outlier(outliers, "arrived_last_share", w[i].rank, share_of(&w[i]), &s,
                                 "straggler");
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
    size_t n = in ? count_collectives(in) : 0;
    if (n == 0 && (!grouped || grouped->n_rows == 0))
        return 0;
    rank_waits *w = list_ranks(ranks);
    collective *c = malloc((n ? n : 1) * sizeof *c);
    int rc = w && c ? 0 : -1;
    if (rc == 0 && n && load_collectives(in, ranks, w, c)) {
        free(w);
        free(c);
        return hta_fail(err, "collectives of a rank missing from /ranks, or corrupt");
    }
    if (rc == 0)
        rc = match_all(c, n, w, ranks->n_rows);
    free(c);
    if (rc == 0 && hta_add_collective_groups(set, w, ranks->n_rows, err)) {
        free(w);
        return -1;
    }
    if (rc == 0)
        rc = put_rows(t, w, ranks->n_rows);
    if (rc == 0)
        rc = flag_late_arrivers(set, w, ranks->n_rows);
    free(w);
    return rc ? hta_fail(err, "out of memory in the collective wait analysis") : 0;
}
