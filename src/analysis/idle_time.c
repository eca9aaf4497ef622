/* idle_time.c: why each stream sat idle (definitions section 4, HTA's
 * get_idle_time_breakdown with show_idle_interval_stats).
 *
 * Each event on a stream after the first (in HTA's order, see
 * model/stream_work.h) closes a gap: its start minus its predecessor's end,
 * negative when they overlap and kept so, as HTA.  The gap is
 *   host_wait   when the event's launching CPU call started after the
 *               predecessor ended: the GPU waited for the CPU;
 *   kernel_wait otherwise, when shorter than consecutive_kernel_delay: the
 *               usual overhead between back-to-back kernels;
 *   other       otherwise.
 * Per (stream, category): the total, its share of the stream's idle time,
 * and count / mean / std / quartiles of the gaps.  The rows are HTA's:
 * "other" always (HTA files the first event, which has no gap, there),
 * host_wait and kernel_wait only when they occur.  Streams come in HTA's
 * order, that of their first event in the trace (HTA lists the stream
 * column's unique values).  Ratios stay unrounded; HTA rounds them to 2
 * decimals. */
#include "analysis/idle_time.h"

#include "analysis/metrics.h"
#include "model/stream_work.h"
#include "numerics/stats.h"
#include "util/large_alloc.h"

#include <math.h>
#include <stdlib.h>

static const hta_column COLUMNS[HTA_IDLE_TIME_N_COLUMNS] = {
    [HTA_IDLE_TIME_RANK] = {"rank", HTA_COL_I64},
    [HTA_IDLE_TIME_STREAM] = {"stream", HTA_COL_I64},
    [HTA_IDLE_TIME_IDLE_CATEGORY] = {"idle_category", HTA_COL_STR},
    [HTA_IDLE_TIME_IDLE_TIME_US] = {"idle_time_us", HTA_COL_F64},
    [HTA_IDLE_TIME_IDLE_TIME_RATIO] = {"idle_time_ratio", HTA_COL_F64},
    [HTA_IDLE_TIME_COUNT] = {"count", HTA_COL_I64},
    [HTA_IDLE_TIME_MEAN_US] = {"mean_us", HTA_COL_F64},
    [HTA_IDLE_TIME_STD_US] = {"std_us", HTA_COL_F64},
    [HTA_IDLE_TIME_MIN_US] = {"min_us", HTA_COL_F64},
    [HTA_IDLE_TIME_P25_US] = {"p25_us", HTA_COL_F64},
    [HTA_IDLE_TIME_P50_US] = {"p50_us", HTA_COL_F64},
    [HTA_IDLE_TIME_P75_US] = {"p75_us", HTA_COL_F64},
    [HTA_IDLE_TIME_MAX_US] = {"max_us", HTA_COL_F64},
};
const hta_table_spec hta_idle_time_table = {
    "idle_time", COLUMNS, HTA_IDLE_TIME_N_COLUMNS, HTA_TABLE_PER_RANK | HTA_TABLE_IN_PLACE};

enum { HOST_WAIT, KERNEL_WAIT, OTHER, N_CATEGORIES };

static const char *const CATEGORY_NAMES[N_CATEGORIES] = {"host_wait", "kernel_wait", "other"};

/* The gaps of one stream, by category. */
typedef struct gaps {
    double *us[N_CATEGORIES];  /* each with room for the stream's events */
    size_t n[N_CATEGORIES];
    int64_t total_ns[N_CATEGORIES];
} gaps;

static int classify_gap(const hta_rank_view *v, const hta_event *prev, const hta_event *e,
                        double kernel_delay_ns)
{
    const hta_event *launch = hta_rank_view_launch(v, e);
    int64_t prev_end = hta_event_end(prev);
    if (launch && launch->ts_ns > prev_end)
        return HOST_WAIT;
    return (double)(e->ts_ns - prev_end) < kernel_delay_ns ? KERNEL_WAIT : OTHER;
}

static void collect_gaps(const hta_rank_view *v, const hta_stream_work *s,
                         double kernel_delay_ns, gaps *g)
{
    for (int c = 0; c < N_CATEGORIES; c++) {
        g->n[c] = 0;
        g->total_ns[c] = 0;
    }
    for (size_t i = 1; i < s->n; i++) {
        int64_t gap = s->events[i]->ts_ns - hta_event_end(s->events[i - 1]);
        int c = classify_gap(v, s->events[i - 1], s->events[i], kernel_delay_ns);
        g->us[c][g->n[c]++] = hta_ns_to_us(gap);
        g->total_ns[c] += gap;
    }
}

static int add_row(hta_table *t, int64_t rank_key, uint32_t stream, int category,
                   gaps *g, int64_t stream_idle_ns)
{
    hta_summary sum;
    hta_summarize(g->us[category], g->n[category], &sum);
    int64_t idle = g->total_ns[category];
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_i64(&row, stream);
    hta_row_put_str(&row, CATEGORY_NAMES[category]);
    hta_row_put_f64(&row, hta_ns_to_us(idle));
    hta_row_put_f64(&row, stream_idle_ns ? (double)idle / (double)stream_idle_ns : NAN);
    hta_row_put_summary(&row, &sum);
    return hta_row_done(&row);
}

static int add_stream_rows(hta_table *t, int64_t rank_key, uint32_t stream, gaps *g)
{
    int64_t stream_idle = 0;
    for (int c = 0; c < N_CATEGORIES; c++)
        stream_idle += g->total_ns[c];
    for (int c = 0; c < N_CATEGORIES; c++)
        if ((c == OTHER || g->n[c] > 0) && add_row(t, rank_key, stream, c, g, stream_idle))
            return -1;
    return 0;
}

/* Idle time per category summed over streams, for the cross-rank search. */
static int emit_metrics(hta_tableset *out, int64_t rank_key, const int64_t *total_ns)
{
    return hta_emit_metric(out, rank_key, HTA_METRIC_IDLE_HOST_WAIT_US, NULL,
                           hta_ns_to_us(total_ns[HOST_WAIT])) |
           hta_emit_metric(out, rank_key, HTA_METRIC_IDLE_KERNEL_WAIT_US, NULL,
                           hta_ns_to_us(total_ns[KERNEL_WAIT])) |
           hta_emit_metric(out, rank_key, HTA_METRIC_IDLE_OTHER_US, NULL,
                           hta_ns_to_us(total_ns[OTHER]));
}

/* A stream and its first event in trace order (trace->events is in trace
 * order, so the lowest address). */
typedef struct first_event {
    const hta_event *first;
    size_t stream;
} first_event;

static int by_first_event(const void *a, const void *b)
{
    const hta_event *x = ((const first_event *)a)->first, *y = ((const first_event *)b)->first;
    return (x > y) - (x < y);
}

/* The streams of work in the order their first events come in the trace;
 * NULL when out of memory. */
static first_event *in_trace_order(const hta_stream_work_set *work)
{
    first_event *order = malloc((work->n_streams + 1) * sizeof *order);
    if (!order)
        return NULL;
    for (size_t s = 0; s < work->n_streams; s++) {
        const hta_stream_work *w = &work->streams[s];
        order[s] = (first_event){w->n ? w->events[0] : NULL, s};
        for (size_t i = 1; i < w->n; i++)
            if (w->events[i] < order[s].first)
                order[s].first = w->events[i];
    }
    qsort(order, work->n_streams, sizeof *order, by_first_event);
    return order;
}

static int breakdown(const hta_rank_view *v, const hta_analysis_settings *opt,
                     const hta_stream_work_set *work, hta_tableset *out)
{
    hta_table *t = hta_tableset_table(out, &hta_idle_time_table);
    size_t longest = 1;
    for (size_t s = 0; s < work->n_streams; s++)
        longest = work->streams[s].n > longest ? work->streams[s].n : longest;
    gaps g = {0};
    int rc = t ? 0 : -1;
    for (int c = 0; c < N_CATEGORIES && rc == 0; c++)
        rc = (g.us[c] = hta_large_malloc(longest * sizeof *g.us[c])) ? 0 : -1;
    first_event *order = rc == 0 ? in_trace_order(work) : NULL;
    rc = order ? rc : -1;
    int64_t rank_total[N_CATEGORIES] = {0};
    for (size_t k = 0; k < work->n_streams && rc == 0; k++) {
        const hta_stream_work *w = &work->streams[order[k].stream];
        collect_gaps(v, w, opt->consecutive_kernel_delay_us * 1000.0, &g);
        for (int c = 0; c < N_CATEGORIES; c++)
            rank_total[c] = hta_add_saturating(rank_total[c], g.total_ns[c]);
        rc = add_stream_rows(t, v->rank_key, w->stream, &g);
    }
    free(order);
    for (int c = 0; c < N_CATEGORIES; c++)
        free(g.us[c]);
    return rc ? rc : emit_metrics(out, v->rank_key, rank_total);
}

int hta_idle_time(const hta_rank_view *v, const hta_analysis_settings *opt, hta_tableset *out,
                  hta_error *err)
{
    if (v->n_gpu == 0)
        return 0;
    int rc = breakdown(v, opt, &v->stream_work, out);
    return rc ? hta_fail(err, "out of memory in the idle time breakdown") : 0;
}
