/* memory_bw.c: how fast memory copies and sets run (definitions section 4,
 * HTA's get_memory_bw_summary).
 *
 * Per (rank, copy kind): HTA's summary of the concurrent-bandwidth series
 * (analysis/step_series.h) over its points > 0 (an instant with no copy of the
 * kind running says nothing about copy speed); plus the bytes moved
 * (args.bytes, where present) and busy_us, the time at least one copy of
 * the kind ran (the union of their intervals).  A kind whose copies carry
 * no bandwidth (ROCm traces) keeps a row with count 0, for its bytes and
 * busy time; HTA shows no row for it. */
#include "analysis/memory_bw.h"

#include "analysis/metrics.h"
#include "analysis/step_series.h"
#include "numerics/stats.h"
#include "util/large_alloc.h"

#include <stdlib.h>

static const hta_column COLUMNS[HTA_MEMORY_BW_N_COLUMNS] = {
    [HTA_MEMORY_BW_RANK] = {"rank", HTA_COL_I64},
    [HTA_MEMORY_BW_KIND] = {"kind", HTA_COL_STR},
    [HTA_MEMORY_BW_COUNT] = {"count", HTA_COL_I64},
    [HTA_MEMORY_BW_MEAN_GBPS] = {"mean_gbps", HTA_COL_F64},
    [HTA_MEMORY_BW_STD_GBPS] = {"std_gbps", HTA_COL_F64},
    [HTA_MEMORY_BW_MIN_GBPS] = {"min_gbps", HTA_COL_F64},
    [HTA_MEMORY_BW_P25_GBPS] = {"p25_gbps", HTA_COL_F64},
    [HTA_MEMORY_BW_P50_GBPS] = {"p50_gbps", HTA_COL_F64},
    [HTA_MEMORY_BW_P75_GBPS] = {"p75_gbps", HTA_COL_F64},
    [HTA_MEMORY_BW_MAX_GBPS] = {"max_gbps", HTA_COL_F64},
    [HTA_MEMORY_BW_BYTES] = {"bytes", HTA_COL_I64},
    [HTA_MEMORY_BW_BUSY_US] = {"busy_us", HTA_COL_F64},
};
const hta_table_spec hta_memory_bw_table = {
    "memory_bw", COLUMNS, HTA_MEMORY_BW_N_COLUMNS, HTA_TABLE_PER_RANK | HTA_TABLE_IN_PLACE};

/* Bytes and busy time of the copies of one kind. */
typedef struct kind_totals {
    int64_t bytes;
    int64_t busy_ns;
} kind_totals;

/* Kind of every copy, in trace order, and the bytes of each kind. */
static void classify_copies(const hta_trace *t, const hta_step_series_set *set,
                            uint32_t *kind_of, kind_totals *totals)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        char kind[HTA_COPY_KIND_SIZE];
        if (!hta_event_is_copy(e))
            continue;
        hta_copy_kind(hta_event_name(t, e), kind);
        uint32_t k = (uint32_t)hta_step_series_find_kind(set, kind);
        kind_of[n++] = k;
        int64_t bytes = e->flags & HTA_EVENT_HAS_COPY ? hta_trace_extra(t, e)->bytes : -1;
        if (bytes > 0)
            totals[k].bytes = hta_add_saturating(totals[k].bytes, bytes);
    }
}

/* Time at least one copy of kind k ran. */
static int64_t busy_time(const hta_trace *t, const uint32_t *kind_of, uint32_t k,
                         hta_interval *scratch)
{
    size_t n = 0, copy = 0;
    for (size_t i = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        if (hta_event_is_copy(e) && kind_of[copy++] == k && e->dur_ns > 0)
            scratch[n++] = (hta_interval){e->ts_ns, hta_event_end(e)};
    }
    n = hta_intervals_union(scratch, n);
    return hta_intervals_length(scratch, n);
}

/* Bytes and busy time of every kind; -1 when out of memory. */
static int total_copies(const hta_trace *t, const hta_step_series_set *set, kind_totals *totals)
{
    size_t n_copies = hta_trace_count_copies(t);
    uint32_t *kind_of = hta_large_malloc((n_copies + 1) * sizeof *kind_of);
    hta_interval *scratch = hta_large_malloc((n_copies + 1) * sizeof *scratch);
    if (kind_of && scratch) {
        classify_copies(t, set, kind_of, totals);
        for (uint32_t k = 0; k < set->n_series; k++)
            totals[k].busy_ns = busy_time(t, kind_of, k, scratch);
    }
    int rc = kind_of && scratch ? 0 : -1;
    free(kind_of);
    free(scratch);
    return rc;
}

/* The bandwidth at every instant some copy of the kind runs. */
static size_t positive_points(const hta_step_series *s, double *out)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->points[i].value > 0)
            out[n++] = s->points[i].value;
    return n;
}

static int add_row(hta_table *t, int64_t rank_key, const char *kind, const hta_summary *sum,
                   kind_totals totals)
{
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_str(&row, kind);
    hta_row_put_summary(&row, sum);
    hta_row_put_i64(&row, totals.bytes);
    hta_row_put_f64(&row, hta_ns_to_us(totals.busy_ns));
    return hta_row_done(&row);
}

static int summarize_kinds(const hta_rank_view *v, const hta_step_series_set *set,
                           hta_tableset *out)
{
    hta_table *t = hta_tableset_table(out, &hta_memory_bw_table);
    size_t points = 1;
    for (size_t k = 0; k < set->n_series; k++)
        points += set->series[k].n;
    double *values = hta_large_malloc(points * sizeof *values);
    kind_totals *totals = calloc(set->n_series + 1, sizeof *totals);
    int rc = t && values && totals ? total_copies(v->trace, set, totals) : -1;
    for (size_t k = 0; k < set->n_series && rc == 0; k++) {
        const hta_step_series *s = &set->series[k];
        hta_summary sum;
        hta_summarize(values, positive_points(s, values), &sum);
        rc = add_row(t, v->rank_key, s->kind, &sum, totals[k]);
        if (rc == 0 && sum.count > 0)
            rc = hta_emit_metric(out, v->rank_key, HTA_METRIC_MEMORY_BW_MEAN_GBPS, s->kind,
                                 sum.mean);
    }
    free(values);
    free(totals);
    return rc;
}

int hta_memory_bw(const hta_rank_view *v, hta_tableset *out, hta_error *err)
{
    if (v->n_gpu == 0)
        return 0;
    hta_step_series_set set;
    if (hta_memory_bw_series(&set, v->trace))
        return hta_fail(err, "out of memory in the memory bandwidth");
    int rc = summarize_kinds(v, &set, out);
    hta_step_series_free(&set);
    return rc ? hta_fail(err, "out of memory in the memory bandwidth") : 0;
}
