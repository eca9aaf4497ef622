/* memory_bw.c: how fast memory copies and sets run (definitions section 4,
 * HTA's get_memory_bw_summary).
 *
 * Per (rank, copy kind): HTA's summary of the concurrent-bandwidth series
 * (hta/step_series.h) over its points > 0 (an instant with no copy of the
 * kind running says nothing about copy speed); plus the bytes moved
 * (args.bytes, where present) and busy_us, the time at least one copy of
 * the kind ran (the union of their intervals).  A kind whose copies carry
 * no bandwidth (ROCm traces) keeps a row with count 0, for its bytes and
 * busy time; HTA shows no row for it. */
#include "hta/analysis.h"
#include "hta/stats.h"
#include "hta/step_series.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

static const hta_column COLUMNS[] = {
    {"rank", HTA_COL_I64},
    {"kind", HTA_COL_STR},
    {"count", HTA_COL_I64},
    {"mean_gbps", HTA_COL_F64},
    {"std_gbps", HTA_COL_F64},
    {"min_gbps", HTA_COL_F64},
    {"p25_gbps", HTA_COL_F64},
    {"p50_gbps", HTA_COL_F64},
    {"p75_gbps", HTA_COL_F64},
    {"max_gbps", HTA_COL_F64},
    {"bytes", HTA_COL_I64},
    {"busy_us", HTA_COL_F64},
};

/* Bytes and busy time of the copies of one kind. */
typedef struct kind_totals {
    int64_t bytes;
    int64_t busy_ns;
} kind_totals;

/* The copies' intervals grouped by kind: kind k's are
 * iv[first[k] .. first[k + 1]). */
typedef struct copy_intervals {
    hta_interval *iv;
    size_t *first;
} copy_intervals;

/* Kind of every copy, in trace order, with its bytes and interval counts. */
static size_t classify_copies(const hta_trace *t, const hta_step_series_set *set,
                              uint32_t *kind_of, kind_totals *totals, size_t *first)
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
        if (e->flags & HTA_EVENT_HAS_COPY && t->copies[e->aux].bytes > 0)
            totals[k].bytes += t->copies[e->aux].bytes;
        first[k + 1] += e->dur_ns > 0;
    }
    return n;
}

static void group_intervals(const hta_trace *t, const uint32_t *kind_of, size_t n_kinds,
                            copy_intervals *c)
{
    size_t *next = c->first + n_kinds + 1; /* scratch after the offsets */
    for (size_t k = 0; k < n_kinds; k++)
        c->first[k + 1] += c->first[k];
    for (size_t k = 0; k < n_kinds; k++)
        next[k] = c->first[k];
    size_t copy = 0;
    for (size_t i = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        if (!hta_event_is_copy(e))
            continue;
        uint32_t k = kind_of[copy++];
        if (e->dur_ns > 0)
            c->iv[next[k]++] = (hta_interval){e->ts_ns, hta_event_end(e)};
    }
}

/* Bytes and busy time (union of intervals) of every kind; -1 when out of
 * memory. */
static int total_copies(const hta_trace *t, const hta_step_series_set *set, kind_totals *totals)
{
    size_t cap = t->n_events + 1;
    uint32_t *kind_of = malloc(cap * sizeof *kind_of);
    copy_intervals c = {.iv = malloc(cap * sizeof *c.iv),
                        .first = calloc(2 * set->n_series + 2, sizeof *c.first)};
    int rc = kind_of && c.iv && c.first ? 0 : -1;
    if (rc == 0) {
        classify_copies(t, set, kind_of, totals, c.first);
        group_intervals(t, kind_of, set->n_series, &c);
        for (size_t k = 0; k < set->n_series; k++) {
            hta_interval *iv = c.iv + c.first[k];
            size_t n = hta_intervals_union(iv, c.first[k + 1] - c.first[k]);
            totals[k].busy_ns = hta_intervals_length(iv, n);
        }
    }
    free(kind_of);
    free(c.iv);
    free(c.first);
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

/* "memory_bw_memcpy_dtod_mean_gbps" for "Memcpy DtoD". */
static int emit_mean(hta_tableset *out, int64_t rank_key, const char *kind, double mean)
{
    char metric[64];
    int len = snprintf(metric, sizeof metric, "memory_bw_%s_mean_gbps", kind);
    for (int i = 0; i < len; i++)
        metric[i] = metric[i] == ' ' ? '_' : (char)tolower((unsigned char)metric[i]);
    return hta_emit_metric(out, rank_key, metric, mean);
}

static int add_row(hta_table *t, int64_t rank_key, const char *kind, const hta_summary *sum,
                   kind_totals totals)
{
    hta_row row = hta_table_add_row(t);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_str(&row, kind);
    hta_row_put_i64(&row, (int64_t)sum->count);
    hta_row_put_f64(&row, sum->mean);
    hta_row_put_f64(&row, sum->std);
    hta_row_put_f64(&row, sum->min);
    hta_row_put_f64(&row, sum->p25);
    hta_row_put_f64(&row, sum->p50);
    hta_row_put_f64(&row, sum->p75);
    hta_row_put_f64(&row, sum->max);
    hta_row_put_i64(&row, totals.bytes);
    hta_row_put_f64(&row, hta_ns_to_us(totals.busy_ns));
    return hta_row_done(&row);
}

static int summarize_kinds(const hta_rank_view *v, const hta_step_series_set *set,
                           hta_tableset *out)
{
    hta_table *t = hta_tableset_table(out, "memory_bw", COLUMNS, sizeof COLUMNS / sizeof COLUMNS[0]);
    size_t points = 1;
    for (size_t k = 0; k < set->n_series; k++)
        points += set->series[k].n;
    double *values = malloc(points * sizeof *values);
    kind_totals *totals = calloc(set->n_series + 1, sizeof *totals);
    int rc = t && values && totals ? total_copies(v->trace, set, totals) : -1;
    for (size_t k = 0; k < set->n_series && rc == 0; k++) {
        const hta_step_series *s = &set->series[k];
        hta_summary sum;
        hta_summarize(values, positive_points(s, values), &sum);
        rc = add_row(t, v->rank_key, s->kind, &sum, totals[k]);
        if (rc == 0 && sum.count > 0)
            rc = emit_mean(out, v->rank_key, s->kind, sum.mean);
    }
    free(values);
    free(totals);
    return rc;
}

int hta_memory_bw(const hta_rank_view *v, const hta_options *opt, hta_tableset *out,
                  hta_error *err)
{
    (void)opt;
    if (v->n_gpu == 0)
        return 0;
    hta_step_series_set set;
    if (hta_memory_bw_series(&set, v->trace))
        return hta_fail(err, "out of memory in the memory bandwidth");
    int rc = summarize_kinds(v, &set, out);
    hta_step_series_free(&set);
    return rc ? hta_fail(err, "out of memory in the memory bandwidth") : 0;
}
