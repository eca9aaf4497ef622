/* queue_length.c: how much launched work waits on each stream (definitions
 * section 4, HTA's get_queue_length_summary and
 * get_time_spent_blocked_on_full_queue).
 *
 * The queue length of a stream steps +1 when a launch call starts and -1
 * when its GPU event starts (analysis/step_series.h, in HTA's exact order).  Per
 * (rank, stream):
 * - count / mean / std / min / quartiles / max over the values after each
 *   step, as HTA's describe(): every step one sample, however long it held;
 * - time_weighted_mean (HTA lacks it): the queue length averaged over time
 *   from the first step to the last, what a reader of "mean" usually means;
 * - time_at_max: the time spent at a queue length >= 1024, CUDA's launch
 *   queue depth (HTA's max_queue_length), where launch calls block, and its
 *   ratio to HTA's trace duration (latest event start minus earliest).  HTA
 *   keeps only a rank's last stream there, a defect; every stream is kept.
 * All of it is gathered as the points pass by in time order (the series of
 * a large trace would be tens of megabytes): the time-weighted sums step by
 * step, and the values as counts (numerics/value_counts.h), whose summary equals
 * describe()'s over the values. */
#include "analysis/queue_length.h"

#include "analysis/metrics.h"
#include "analysis/step_series.h"
#include "numerics/stats.h"
#include "numerics/value_counts.h"

#include <math.h>
#include <stdlib.h>

#define FULL_QUEUE 1024

static const hta_column COLUMNS[HTA_QUEUE_LENGTH_N_COLUMNS] = {
    [HTA_QUEUE_LENGTH_RANK] = {"rank", HTA_COL_I64},
    [HTA_QUEUE_LENGTH_STREAM] = {"stream", HTA_COL_I64},
    [HTA_QUEUE_LENGTH_COUNT] = {"count", HTA_COL_I64},
    [HTA_QUEUE_LENGTH_MEAN] = {"mean", HTA_COL_F64},
    [HTA_QUEUE_LENGTH_STD] = {"std", HTA_COL_F64},
    [HTA_QUEUE_LENGTH_MIN] = {"min", HTA_COL_F64},
    [HTA_QUEUE_LENGTH_P25] = {"p25", HTA_COL_F64},
    [HTA_QUEUE_LENGTH_P50] = {"p50", HTA_COL_F64},
    [HTA_QUEUE_LENGTH_P75] = {"p75", HTA_COL_F64},
    [HTA_QUEUE_LENGTH_MAX] = {"max", HTA_COL_F64},
    [HTA_QUEUE_LENGTH_TIME_WEIGHTED_MEAN] = {"time_weighted_mean", HTA_COL_F64},
    [HTA_QUEUE_LENGTH_TIME_AT_MAX_US] = {"time_at_max_us", HTA_COL_F64},
    [HTA_QUEUE_LENGTH_TIME_AT_MAX_RATIO] = {"time_at_max_ratio", HTA_COL_F64},
};
const hta_table_spec hta_queue_length_table = {
    "queue_length", COLUMNS, HTA_QUEUE_LENGTH_N_COLUMNS, HTA_TABLE_PER_RANK | HTA_TABLE_IN_PLACE};

/* HTA's get_trace_duration: the span of event starts, not of ends. */
static int64_t trace_duration(const hta_trace *t)
{
    if (t->n_events == 0)
        return 0;
    int64_t first = t->events[0].ts_ns, last = first;
    for (size_t i = 1; i < t->n_events; i++) {
        first = t->events[i].ts_ns < first ? t->events[i].ts_ns : first;
        last = t->events[i].ts_ns > last ? t->events[i].ts_ns : last;
    }
    return last - first;
}

/* One stream's statistics so far. */
typedef struct stream_queue {
    hta_value_counts values;
    int64_t first_ts, last_ts;
    double last_value;
    double area;               /* value x time up to the last point */
    int64_t at_max;            /* time at a full queue up to the last point */
} stream_queue;

typedef struct queue_walk {
    stream_queue *streams;     /* owned, one per series */
    int failed;                /* out of memory counting a value */
} queue_walk;

/* Adds a point: the previous value held from the previous point to it. */
static void add_point(void *ctx, size_t series, int64_t ts_ns, double value)
{
    queue_walk *w = ctx;
    stream_queue *q = &w->streams[series];
    if (q->values.total == 0) {
        q->first_ts = ts_ns;
    } else {
        q->area += q->last_value * (double)(ts_ns - q->last_ts);
        if (q->last_value >= FULL_QUEUE)
            q->at_max += ts_ns - q->last_ts;
    }
    q->last_ts = ts_ns;
    q->last_value = value;
    w->failed |= hta_value_counts_add(&q->values, (int64_t)value);
}

/* The queue length averaged over time from the first point to the last. */
static double time_weighted_mean(const stream_queue *q)
{
    int64_t span = q->last_ts - q->first_ts;
    return span > 0 ? q->area / (double)span : NAN;
}

static int add_row(hta_table *t, int64_t rank_key, uint32_t stream, const stream_queue *q,
                   int64_t duration)
{
    hta_summary sum;
    hta_value_counts_summarize(&q->values, &sum);
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_i64(&row, stream);
    hta_row_put_summary(&row, &sum);
    hta_row_put_f64(&row, time_weighted_mean(q));
    hta_row_put_f64(&row, hta_ns_to_us(q->at_max));
    hta_row_put_f64(&row, duration > 0 ? (double)q->at_max / (double)duration : NAN);
    return hta_row_done(&row);
}

static int summarize_streams(const hta_rank_view *v, const hta_step_series_set *set,
                             const stream_queue *streams, hta_tableset *out)
{
    hta_table *t = hta_tableset_table(out, &hta_queue_length_table);
    int rc = t ? 0 : -1;
    int64_t duration = trace_duration(v->trace), rank_at_max = 0;
    for (size_t s = 0; s < set->n_series && rc == 0; s++) {
        rank_at_max += streams[s].at_max;
        rc = add_row(t, v->rank_key, set->series[s].stream, &streams[s], duration);
    }
    if (rc == 0)
        rc = hta_emit_metric(out, v->rank_key, HTA_METRIC_QUEUE_TIME_AT_MAX_US, NULL,
                             hta_ns_to_us(rank_at_max));
    return rc;
}

int hta_queue_length(const hta_rank_view *v, hta_tableset *out, hta_error *err)
{
    if (v->n_gpu == 0)
        return 0;
    hta_step_series_set set;
    queue_walk w = {NULL, 0};
    int rc = hta_queue_length_streams(&set, v);
    if (rc == 0)
        rc = (w.streams = calloc(set.n_series + 1, sizeof *w.streams)) ? 0 : -1;
    if (rc == 0)
        rc = hta_queue_length_walk(&set, v, add_point, &w) || w.failed;
    if (rc == 0)
        rc = summarize_streams(v, &set, w.streams, out);
    for (size_t s = 0; w.streams && s < set.n_series; s++)
        hta_value_counts_free(&w.streams[s].values);
    free(w.streams);
    hta_step_series_free(&set);
    return rc ? hta_fail(err, "out of memory in the queue length") : 0;
}
