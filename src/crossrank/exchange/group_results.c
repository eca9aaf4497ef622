/* group_results.c: the root's part of the matching by process group:
 * "collective_summary" from the instances' figures, each rank's waits
 * added to its "steps" and "comm_by_group" rows, and "process_groups". */
#define _GNU_SOURCE /* qsort_r */
#include "crossrank/exchange/collective_groups.h"

#include "analysis/comm_ops.h"
#include "analysis/ranks_table.h"
#include "analysis/steps.h"
#include "crossrank/exchange/all_to_all.h"
#include "crossrank/exchange/p2p_pairs.h"
#include "crossrank/exchange/step_rows.h"
#include "model/trace.h"
#include "numerics/stats.h"
#include "util/name_hash.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t bucket_of(int64_t bytes)
{
    if (bytes <= 1)
        return bytes < 0 ? -1 : 1;
    int64_t b = 1;
    while (b < bytes && b < INT64_MAX / 2)
        b *= 2;
    return b;
}

static int compare_summary_key(const void *a, const void *b)
{
    const hta_cell *x = *(const hta_cell *const *)a, *y = *(const hta_cell *const *)b;
    int c = strcmp(x[HTA_INSTANCE_STATS_GROUP_DESC].s, y[HTA_INSTANCE_STATS_GROUP_DESC].s);
    if (!c)
        c = strcmp(x[HTA_INSTANCE_STATS_COLLECTIVE].s, y[HTA_INSTANCE_STATS_COLLECTIVE].s);
    if (!c)
        c = strcmp(x[HTA_INSTANCE_STATS_DTYPE].s, y[HTA_INSTANCE_STATS_DTYPE].s);
    if (!c) {
        int64_t bx = bucket_of(x[HTA_INSTANCE_STATS_BYTES].i);
        int64_t by = bucket_of(y[HTA_INSTANCE_STATS_BYTES].i);
        c = (bx > by) - (bx < by);
    }
    return c;
}

/* The median busbw of the instances of one scope (NaN without one), and
 * their number into *count. */
static double scope_busbw_p50(const hta_cell *const *in, size_t n, int64_t scope,
                              double *scratch, int64_t *count)
{
    size_t k = 0;
    *count = 0;
    for (size_t i = 0; i < n; i++) {
        if (in[i][HTA_INSTANCE_STATS_SCOPE].i != scope)
            continue;
        ++*count;
        if (isfinite(in[i][HTA_INSTANCE_STATS_BUSBW_GBPS].f))
            scratch[k++] = in[i][HTA_INSTANCE_STATS_BUSBW_GBPS].f;
    }
    hta_sort_doubles(scratch, k);
    return k ? hta_quantile_sorted(scratch, k, 0.5) : NAN;
}

static int put_summary_row(hta_table *t, const hta_cell *const *in, size_t n, double *scratch)
{
    int64_t total_bytes = 0, wait = 0, skew = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t bytes = in[i][HTA_INSTANCE_STATS_BYTES].i;
        total_bytes += bytes > 0 ? bytes : 0;
        wait += in[i][HTA_INSTANCE_STATS_WAIT_NS].i;
        skew += in[i][HTA_INSTANCE_STATS_ARRIVAL_SKEW_NS].i;
        scratch[i] = hta_ns_to_us(in[i][HTA_INSTANCE_STATS_TRANSFER_NS].i);
    }
    hta_sort_doubles(scratch, n);
    double p50 = hta_quantile_sorted(scratch, n, 0.5), p90 = hta_quantile_sorted(scratch, n, 0.9);
    double max = scratch[n - 1];
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(in[i][HTA_INSTANCE_STATS_BUSBW_GBPS].f))
            scratch[k++] = in[i][HTA_INSTANCE_STATS_BUSBW_GBPS].f;
    hta_sort_doubles(scratch, k);
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_str(&row, in[0][HTA_INSTANCE_STATS_GROUP_DESC].s);
    hta_row_put_str(&row, in[0][HTA_INSTANCE_STATS_COLLECTIVE].s);
    hta_row_put_str(&row, in[0][HTA_INSTANCE_STATS_DTYPE].s);
    hta_row_put_i64(&row, bucket_of(in[0][HTA_INSTANCE_STATS_BYTES].i));
    hta_row_put_i64(&row, (int64_t)n);
    hta_row_put_i64(&row, total_bytes);
    hta_row_put_f64(&row, p50);
    hta_row_put_f64(&row, p90);
    hta_row_put_f64(&row, max);
    hta_row_put_f64(&row, k ? hta_quantile_sorted(scratch, k, 0.5) : NAN);
    hta_row_put_f64(&row, k ? scratch[0] : NAN);
    hta_row_put_f64(&row, hta_ns_to_us(skew) / (double)n);
    hta_row_put_f64(&row, hta_ns_to_us(wait));
    int64_t count;
    double busbw = scope_busbw_p50(in, n, HTA_SCOPE_WITHIN_NODE, scratch, &count);
    hta_row_put_i64(&row, count);
    hta_row_put_f64(&row, busbw);
    busbw = scope_busbw_p50(in, n, HTA_SCOPE_ACROSS_NODES, scratch, &count);
    hta_row_put_i64(&row, count);
    hta_row_put_f64(&row, busbw);
    return hta_row_done(&row);
}

static int summarize(hta_tableset *set, const hta_table *instances)
{
    size_t n = instances->n_rows;
    hta_table *t = hta_tableset_table(set, &hta_collective_summary_table);
    double *scratch = malloc((n ? n : 1) * sizeof *scratch);
    const hta_cell **in = malloc((n ? n : 1) * sizeof *in);
    int rc = t && scratch && in ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        in[i] = hta_table_row(instances, i);
    if (rc == 0)
        qsort(in, n, sizeof *in, compare_summary_key);
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        for (end = i + 1; end < n && compare_summary_key(&in[i], &in[end]) == 0;)
            end++;
        rc = put_summary_row(t, &in[i], end - i, scratch);
    }
    free(in);
    free(scratch);
    return rc;
}

int hta_instance_summary_owner(const hta_cell *stats_row, int n_processes)
{
    uint64_t h = HTA_TEXT_HASH_BASIS;
    h = hta_text_hash(h, stats_row[HTA_INSTANCE_STATS_GROUP_DESC].s);
    h = hta_text_hash(h, stats_row[HTA_INSTANCE_STATS_COLLECTIVE].s);
    h = hta_text_hash(h, stats_row[HTA_INSTANCE_STATS_DTYPE].s);
    h ^= (uint64_t)bucket_of(stats_row[HTA_INSTANCE_STATS_BYTES].i);
    h *= HTA_TEXT_HASH_PRIME;
    return (int)(h % (uint64_t)n_processes);
}

int hta_summarize_instances(hta_tableset *set)
{
    const hta_table *instances = hta_tableset_find(set, hta_instance_stats_table.name);
    if (instances && summarize(set, instances))
        return -1;
    hta_tableset_remove(set, hta_instance_stats_table.name);
    return 0;
}

/* "collective_summary" by key, whichever process summarised each row. */
static int compare_summary_rows(const void *a, const void *b, void *ctx)
{
    const hta_cell *x = a, *y = b;
    (void)ctx;
    int c = strcmp(x[HTA_COLLECTIVE_SUMMARY_GROUP_DESC].s, y[HTA_COLLECTIVE_SUMMARY_GROUP_DESC].s);
    if (!c)
        c = strcmp(x[HTA_COLLECTIVE_SUMMARY_COLLECTIVE].s, y[HTA_COLLECTIVE_SUMMARY_COLLECTIVE].s);
    if (!c)
        c = strcmp(x[HTA_COLLECTIVE_SUMMARY_DTYPE].s, y[HTA_COLLECTIVE_SUMMARY_DTYPE].s);
    return c ? c
             : (x[HTA_COLLECTIVE_SUMMARY_BUCKET_MAX_BYTES].i >
                y[HTA_COLLECTIVE_SUMMARY_BUCKET_MAX_BYTES].i) -
                   (x[HTA_COLLECTIVE_SUMMARY_BUCKET_MAX_BYTES].i <
                    y[HTA_COLLECTIVE_SUMMARY_BUCKET_MAX_BYTES].i);
}

static void sort_summary(hta_table *t)
{
    if (t && t->n_rows > 1)
        qsort_r(t->cells, t->n_rows, t->n_columns * sizeof *t->cells, compare_summary_rows, NULL);
}

/* Adds each rank's wait per step to its row of "steps" for that
 * ProfilerStep, looked up in a sorted index of the rows; -1 when out of
 * memory. */
static int add_step_waits(hta_tableset *set, const hta_table *waits)
{
    hta_table *t = hta_tableset_find(set, hta_steps_table.name);
    if (!waits || !t || t->n_rows == 0)
        return 0;
    hta_step_rows *index = hta_step_rows_index(t);
    if (!index)
        return -1;
    for (size_t i = 0; i < waits->n_rows; i++) {
        const hta_cell *w = hta_table_row(waits, i);
        hta_cell *row = hta_step_rows_find(index, w[HTA_STEP_WAITS_RANK].i,
                                           w[HTA_STEP_WAITS_STEP].i);
        if (row)
            row[HTA_STEPS_WAIT_US].f += w[HTA_STEP_WAITS_WAIT_US].f;
    }
    hta_step_rows_free(index);
    return 0;
}

/* The slot of a figure's rank; -1 when it is not a rank analysed without
 * failure. */
static long slot_of(const hta_table *ranks, const rank_waits *w, int64_t rank)
{
    long slot = hta_table_find_sorted(ranks, rank);
    return slot >= 0 && !w[slot].failed ? slot : -1;
}

static int add_rank_waits(const hta_table *ranks, const hta_table *waits,
                          const hta_table *missing, rank_waits *w)
{
    for (size_t i = 0; waits && i < waits->n_rows; i++) {
        const hta_cell *row = hta_table_row(waits, i);
        long slot = slot_of(ranks, w, row[HTA_GROUP_WAITS_RANK].i);
        if (slot < 0)
            return -1;
        rank_waits *r = &w[slot];
        int64_t lag = row[HTA_GROUP_WAITS_MAX_END_LAG_NS].i;
        r->collectives += row[HTA_GROUP_WAITS_COLLECTIVES].i;
        r->matched += row[HTA_GROUP_WAITS_COLLECTIVES].i;
        r->arrived_last += row[HTA_GROUP_WAITS_ARRIVED_LAST].i;
        r->clock_violations += row[HTA_GROUP_WAITS_CLOCK_VIOLATIONS].i;
        r->wait_ns += row[HTA_GROUP_WAITS_WAIT_NS].i;
        r->max_end_lag_ns = lag > r->max_end_lag_ns ? lag : r->max_end_lag_ns;
        r->caused_wait_ns += row[HTA_GROUP_WAITS_CAUSED_WAIT_NS].i;
        r->metadata_mismatches += row[HTA_GROUP_WAITS_METADATA_MISMATCHES].i;
        r->expected_last += row[HTA_GROUP_WAITS_EXPECTED_LAST].f;
    }
    for (size_t i = 0; missing && i < missing->n_rows; i++) {
        const hta_cell *row = hta_table_row(missing, i);
        long slot = slot_of(ranks, w, row[HTA_GROUP_MISSING_RANK].i);
        if (slot < 0)
            return -1;
        w[slot].missing += row[HTA_GROUP_MISSING_MISSING].i;
    }
    return 0;
}

int hta_add_collective_groups(hta_tableset *set, rank_waits *w, size_t n_ranks, hta_error *err)
{
    (void)n_ranks;
    if (add_rank_waits(hta_tableset_find(set, hta_ranks_table.name),
                       hta_tableset_find(set, hta_group_waits_table.name),
                       hta_tableset_find(set, hta_group_missing_table.name), w))
        return hta_fail(err, "collective metadata of a rank missing from /ranks, or corrupt");
    hta_table *by_group = hta_tableset_find(set, hta_comm_by_group_table.name);
    if (add_step_waits(set, hta_tableset_find(set, hta_step_waits_table.name)) ||
        (by_group && hta_table_sort_by_first_column(by_group)))
        return hta_fail(err, "out of memory matching collectives by process group");
    sort_summary(hta_tableset_find(set, hta_collective_summary_table.name));
    return 0;
}

int hta_put_process_groups(const hta_comm_catalog *c, hta_tableset *out)
{
    hta_table *t = hta_tableset_table(out, &hta_process_groups_table);
    int failed = !t;
    for (size_t i = 0; !failed && i < c->n_variants; i++) {
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_str(&row, c->variants[i].name);
        hta_row_put_str(&row, c->variants[i].desc);
        hta_row_put_str(&row, c->variants[i].ranks);
        failed = hta_row_done(&row) != 0;
    }
    return failed ? -1 : 0;
}
