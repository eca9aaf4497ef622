/* queue_length.c: how much launched work waits on each stream (definitions
 * section 4, HTA's get_queue_length_summary and
 * get_time_spent_blocked_on_full_queue).
 *
 * The queue length of a stream steps +1 when a launch call starts and -1
 * when its GPU event starts (hta/step_series.h, in HTA's exact order).  Per
 * (rank, stream):
 * - count / mean / std / min / quartiles / max over the values after each
 *   step, as HTA's describe(): every step one sample, however long it held;
 * - time_weighted_mean (HTA lacks it): the queue length averaged over time
 *   from the first step to the last, what a reader of "mean" usually means;
 * - time_at_max: the time spent at a queue length >= 1024, CUDA's launch
 *   queue depth (HTA's max_queue_length), where launch calls block, and its
 *   ratio to HTA's trace duration (latest event start minus earliest).  HTA
 *   keeps only a rank's last stream there, a defect; every stream is kept. */
#include "hta/analysis.h"
#include "hta/large_alloc.h"
#include "hta/stats.h"
#include "hta/step_series.h"

#include <math.h>
#include <stdlib.h>

#define FULL_QUEUE 1024

static const hta_column COLUMNS[] = {
    {"rank", HTA_COL_I64},
    {"stream", HTA_COL_I64},
    {"count", HTA_COL_I64},
    {"mean", HTA_COL_F64},
    {"std", HTA_COL_F64},
    {"min", HTA_COL_F64},
    {"p25", HTA_COL_F64},
    {"p50", HTA_COL_F64},
    {"p75", HTA_COL_F64},
    {"max", HTA_COL_F64},
    {"time_weighted_mean", HTA_COL_F64},
    {"time_at_max_us", HTA_COL_F64},
    {"time_at_max_ratio", HTA_COL_F64},
};

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

static double time_weighted_mean(const hta_step_series *s)
{
    double area = 0;
    for (size_t i = 0; i + 1 < s->n; i++)
        area += s->points[i].value * (double)(s->points[i + 1].ts_ns - s->points[i].ts_ns);
    int64_t span = s->points[s->n - 1].ts_ns - s->points[0].ts_ns;
    return span > 0 ? area / (double)span : NAN;
}

/* Time from each step at a full queue to the next step. */
static int64_t time_at_full_queue(const hta_step_series *s)
{
    int64_t total = 0;
    for (size_t i = 0; i + 1 < s->n; i++)
        if (s->points[i].value >= FULL_QUEUE)
            total += s->points[i + 1].ts_ns - s->points[i].ts_ns;
    return total;
}

static int add_row(hta_table *t, int64_t rank_key, const hta_step_series *s, double *scratch,
                   int64_t at_max, int64_t duration)
{
    for (size_t i = 0; i < s->n; i++)
        scratch[i] = s->points[i].value;
    hta_summary sum;
    hta_summarize(scratch, s->n, &sum);
    hta_row row = hta_table_add_row(t);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_i64(&row, s->stream);
    hta_row_put_summary(&row, &sum);
    hta_row_put_f64(&row, time_weighted_mean(s));
    hta_row_put_f64(&row, hta_ns_to_us(at_max));
    hta_row_put_f64(&row, duration > 0 ? (double)at_max / (double)duration : NAN);
    return hta_row_done(&row);
}

static int summarize_streams(const hta_rank_view *v, const hta_step_series_set *set,
                             hta_tableset *out)
{
    hta_table *t = HTA_TABLE(out, "queue_length", COLUMNS);
    size_t longest = 1;
    for (size_t s = 0; s < set->n_series; s++)
        longest = set->series[s].n > longest ? set->series[s].n : longest;
    double *scratch = hta_large_malloc(longest * sizeof *scratch);
    int rc = t && scratch ? 0 : -1;
    int64_t duration = trace_duration(v->trace), rank_at_max = 0;
    for (size_t s = 0; s < set->n_series && rc == 0; s++) {
        int64_t at_max = time_at_full_queue(&set->series[s]);
        rank_at_max += at_max;
        rc = add_row(t, v->rank_key, &set->series[s], scratch, at_max, duration);
    }
    free(scratch);
    if (rc == 0)
        rc = hta_emit_metric(out, v->rank_key, "queue_time_at_max_us", hta_ns_to_us(rank_at_max));
    return rc;
}

int hta_queue_length(const hta_rank_view *v, const hta_options *opt, hta_tableset *out,
                     hta_error *err)
{
    (void)opt;
    if (v->n_gpu == 0)
        return 0;
    hta_step_series_set set;
    if (hta_queue_length_series(&set, v))
        return hta_fail(err, "out of memory in the queue length");
    int rc = summarize_streams(v, &set, out);
    hta_step_series_free(&set);
    return rc ? hta_fail(err, "out of memory in the queue length") : 0;
}
