/* step_series.c: HTA's queue-length and memory-bandwidth time series (see
 * analysis/step_series.h).
 *
 * Both are built the way HTA builds them: the steps laid out in HTA's
 * concatenation order (queue: every launch call in trace order, then every
 * GPU event in trace order; bandwidth: every copy's start in trace order,
 * then every copy's end), sorted by time in numpy's quicksort order, split
 * per stream or kind keeping that order (pandas' groupby), and summed
 * running, in float64 in that order, as pandas' cumsum.
 *
 * A step is a (time, payload) pair, 16 bytes, the very record numpy's
 * sort moves: the payload tells the step's series and delta, so the sort
 * needs no index array beside it and the steps no second copy.  A walk
 * hands each point to a visitor, which either stores the series or
 * summarises them as they pass (the queue length's statistics), so the
 * sorted steps are the only array as long as the series. */
#include "util/large_alloc.h"
#include "model/launch_apis.h"
#include "numerics/radix_sort.h"
#include "numerics/stats.h"
#include "analysis/step_series.h"
#include "util/grow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Where steps come from: lay_out writes them in HTA's concatenation order
 * and returns their number (-1 when out of memory); series and delta read
 * a payload (delta NaN: a point that does not move the sum). */
typedef struct step_source {
    const void *ctx;
    long (*lay_out)(const void *ctx, hta_keyed *steps);
    uint32_t (*series)(const void *ctx, size_t payload);
    double (*delta)(const void *ctx, size_t payload);
} step_source;

/* Longest run of equal times whose steps are compared pairwise; a longer
 * one is taken to matter. */
#define MAX_TIE_RUN 16

static int same_delta(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Whether, in the run [first, end) of steps at one time, two steps of one
 * series differ in delta: only then does their order change a value. */
static int tie_matters(const step_source *src, const hta_keyed *steps, size_t first, size_t end)
{
    if (end - first > MAX_TIE_RUN)
        return 1;
    for (size_t i = first; i < end; i++)
        for (size_t j = i + 1; j < end; j++)
            if (src->series(src->ctx, steps[i].index) == src->series(src->ctx, steps[j].index) &&
                !same_delta(src->delta(src->ctx, steps[i].index),
                            src->delta(src->ctx, steps[j].index)))
                return 1;
    return 0;
}

static int any_tie_matters(const step_source *src, const hta_keyed *steps, size_t n)
{
    for (size_t first = 0, end; first < n; first = end) {
        for (end = first + 1; end < n && steps[end].key == steps[first].key;)
            end++;
        if (end - first > 1 && tie_matters(src, steps, first, end))
            return 1;
    }
    return 0;
}

#define NS_PER_US 1000

static int whole_microseconds(const hta_keyed *steps, size_t n)
{
    int whole = 1;
    for (size_t i = 0; i < n; i++)
        whole &= steps[i].key % NS_PER_US == 0;
    return whole;
}

/* Sorts the n steps into numpy's order by time; -1 when out of memory.
 * Any sort by time gives the same series when no two steps of one series
 * tie with different deltas, so a stable radix sort serves unless such a
 * tie exists, and then the steps are laid out again for numpy's own
 * algorithm.  With whole-microsecond times (most traces) such ties are the
 * rule, and numpy's algorithm runs at once rather than after a wasted
 * radix sort. */
static int sort_by_time(const step_source *src, hta_keyed *steps, size_t n)
{
    if (!whole_microseconds(steps, n)) {
        if (hta_stable_sort_keyed(steps, n))
            return -1;
        if (!any_tie_matters(src, steps, n))
            return 0;
        if (src->lay_out(src->ctx, steps) < 0)
            return -1;
    }
    hta_sort_keyed_like_numpy(steps, n);
    return 0;
}

/* Stores each point at its series' next slot of the set's storage. */
typedef struct point_store {
    hta_step_series_set *set;
    size_t *next;              /* per series */
} point_store;

static void store_point(void *ctx, size_t series, int64_t ts_ns, double value)
{
    point_store *p = ctx;
    p->set->storage[p->next[series]++] = (hta_step_point){ts_ns, value};
}

/* Lays each series' points out contiguously in new storage; the store
 * that fills it, or next NULL when out of memory. */
static point_store place_series(hta_step_series_set *set, size_t n)
{
    point_store p = {set, calloc(set->n_series + 1, sizeof *p.next)};
    set->storage = hta_large_malloc((n + 1) * sizeof *set->storage);
    if (!p.next || !set->storage) {
        free(p.next);
        p.next = NULL;
        return p;
    }
    for (size_t g = 0, offset = 0; g < set->n_series; g++) {
        set->series[g].points = set->storage + offset;
        p.next[g] = offset;
        offset += set->series[g].n;
    }
    return p;
}

/* Hands visit each series' running sums in time order (to the set's
 * storage when visit is NULL), after counting each series' points. */
static int walk_sums(hta_step_series_set *set, const step_source *src, const hta_keyed *steps,
                     size_t n, int clamp_at_zero, hta_step_visitor visit, void *ctx)
{
    for (size_t k = 0; k < n; k++)
        set->series[src->series(src->ctx, steps[k].index)].n++;
    point_store store = {NULL, NULL};
    if (!visit) {
        store = place_series(set, n);
        if (!store.next)
            return -1;
        visit = store_point;
        ctx = &store;
    }
    double *sum = calloc(set->n_series + 1, sizeof *sum);
    for (size_t k = 0; sum && k < n; k++) {
        uint32_t g = src->series(src->ctx, steps[k].index);
        double delta = src->delta(src->ctx, steps[k].index), value = NAN;
        if (!isnan(delta)) {
            sum[g] += delta;
            value = clamp_at_zero && sum[g] < 0 ? 0.0 : sum[g];
        }
        visit(ctx, g, steps[k].key, value);
    }
    int rc = sum ? 0 : -1;
    free(sum);
    free(store.next);
    return rc;
}

/* Lays out at most max_steps steps, sorts them as HTA and walks the sums. */
static int walk(hta_step_series_set *set, const step_source *src, size_t max_steps,
                int clamp_at_zero, hta_step_visitor visit, void *ctx)
{
    hta_keyed *steps = hta_large_malloc((max_steps + 1) * sizeof *steps);
    long n = steps ? src->lay_out(src->ctx, steps) : -1;
    int rc = n >= 0 && sort_by_time(src, steps, (size_t)n) == 0
                 ? walk_sums(set, src, steps, (size_t)n, clamp_at_zero, visit, ctx)
                 : -1;
    free(steps);
    return rc;
}

/* ---- queue length ------------------------------------------------------ */

/* The queue's steps: payload = series << 1 | 1 for a launch call (+1), or
 * series << 1 for its GPU event (-1). */
typedef struct queue_source {
    const hta_rank_view *view;
    hta_launch_names apis;
    const hta_step_series_set *set;
} queue_source;

static uint32_t queue_series(const void *ctx, size_t payload)
{
    (void)ctx;
    return (uint32_t)(payload >> 1);
}

static double queue_delta(const void *ctx, size_t payload)
{
    (void)ctx;
    return payload & 1 ? +1.0 : -1.0;
}

static uint32_t stream_series_index(const hta_step_series_set *set, uint32_t stream)
{
    size_t lo = 0, hi = set->n_series;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (set->series[mid].stream <= stream)
            lo = mid;
        else
            hi = mid;
    }
    return (uint32_t)lo;
}

/* The launching queue API call of a trace event, or NULL when it is not a
 * GPU event launched by one. */
static const hta_event *queue_launch(const queue_source *q, const hta_event *e)
{
    return hta_event_is_gpu(e) ? hta_listed_launch(q->view, &q->apis, e) : NULL;
}

/* HTA's order: the launch calls (in trace order; a call with several GPU
 * events once per event, in their trace order), then the GPU events.  The
 * calls' steps are keyed by their place in the trace and sorted stably,
 * with the room of the GPU events' steps as the sort's scratch, then given
 * their times; the GPU events' steps follow, from a bit per trace event
 * marking the launched ones, so that no array beside the steps is as long
 * as they are. */
static long lay_out_queue(const void *ctx, hta_keyed *steps)
{
    const queue_source *q = ctx;
    const hta_trace *t = q->view->trace;
    uint64_t *launched = calloc(t->n_events / 64 + 1, sizeof *launched);
    if (!launched)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < t->n_events; i++) {
        const hta_event *cpu = queue_launch(q, &t->events[i]);
        if (!cpu)
            continue;
        launched[i / 64] |= (uint64_t)1 << (i % 64);
        size_t series = stream_series_index(q->set, t->events[i].stream);
        steps[n++] = (hta_keyed){cpu - t->events, series << 1 | 1};
    }
    if (hta_stable_sort_keyed_using(steps, n, steps + n)) {
        free(launched);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        steps[i].key = t->events[steps[i].key].ts_ns;
    size_t gpu = n;
    for (size_t i = 0; i < t->n_events; i++) {
        if (!(launched[i / 64] >> (i % 64) & 1))
            continue;
        size_t series = stream_series_index(q->set, t->events[i].stream);
        steps[gpu++] = (hta_keyed){t->events[i].ts_ns, series << 1};
    }
    free(launched);
    return (long)(2 * n);
}

/* Adds a series for stream unless the set has one, keeping them ascending;
 * -1 when out of memory. */
static int add_stream_series(hta_step_series_set *set, size_t *cap, uint32_t stream)
{
    size_t at = 0;
    if (set->n_series) {
        at = stream_series_index(set, stream);
        if (set->series[at].stream == stream)
            return 0;
        at += set->series[at].stream < stream;
    }
    if (hta_grow_array((void **)&set->series, cap, set->n_series + 1, sizeof *set->series))
        return -1;
    memmove(&set->series[at + 1], &set->series[at], (set->n_series - at) * sizeof *set->series);
    set->series[at] = (hta_step_series){.stream = stream};
    set->n_series++;
    return 0;
}

/* One series per stream of the launched GPU events, ascending.  A trace
 * has tens of streams, so each event's is looked up among those found so
 * far, the previous event's first. */
static int make_stream_series(hta_step_series_set *set, const queue_source *q)
{
    const hta_trace *t = q->view->trace;
    size_t cap = 0;
    uint32_t last = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        if (!queue_launch(q, e) || (set->n_series && e->stream == last))
            continue;
        last = e->stream;
        rc = add_stream_series(set, &cap, last);
    }
    if (rc == 0 && !set->series)
        set->series = calloc(1, sizeof *set->series);
    return rc == 0 && set->series ? 0 : -1;
}

int hta_queue_length_streams(hta_step_series_set *set, const hta_rank_view *v)
{
    memset(set, 0, sizeof *set);
    queue_source q = {v, hta_launch_names_find(v->trace, HTA_LAUNCH_QUEUE_APIS), set};
    return make_stream_series(set, &q);
}

int hta_queue_length_walk(hta_step_series_set *set, const hta_rank_view *v,
                          hta_step_visitor visit, void *ctx)
{
    queue_source q = {v, hta_launch_names_find(v->trace, HTA_LAUNCH_QUEUE_APIS), set};
    step_source src = {&q, lay_out_queue, queue_series, queue_delta};
    return walk(set, &src, 2 * v->n_gpu, 0, visit, ctx);
}

int hta_queue_length_series(hta_step_series_set *set, const hta_rank_view *v)
{
    int rc = hta_queue_length_streams(set, v) == 0 ? hta_queue_length_walk(set, v, NULL, NULL)
                                                   : -1;
    if (rc)
        hta_step_series_free(set);
    return rc;
}

/* ---- memory bandwidth -------------------------------------------------- */

#define MEMCPY_KIND_LEN (sizeof "Memcpy DtoH" - 1)
#define UVM_PREFIX "Memcpy UVM_"

void hta_copy_kind(const char *name, char kind[HTA_COPY_KIND_SIZE])
{
    if (strncmp(name, "Memset", 6) == 0)
        strcpy(kind, "Memset");
    else if (strncmp(name, "Memcpy", 6) != 0)
        strcpy(kind, "Memcpy Unknown");
    else {
        /* Unified Memory migrations (Nsight's, which Kineto never writes)
         * keep their direction: "Memcpy UVM_HtoD". */
        size_t len = strncmp(name, UVM_PREFIX, strlen(UVM_PREFIX)) == 0
                         ? strlen(UVM_PREFIX) + strcspn(name + strlen(UVM_PREFIX), " (")
                         : strnlen(name, MEMCPY_KIND_LEN);
        if (len > HTA_COPY_KIND_SIZE - 1)
            len = HTA_COPY_KIND_SIZE - 1;
        memcpy(kind, name, len);
        kind[len] = '\0';
    }
}

static int compare_kinds(const void *a, const void *b)
{
    return strcmp(((const hta_step_series *)a)->kind, ((const hta_step_series *)b)->kind);
}

long hta_step_series_find_kind(const hta_step_series_set *set, const char *kind)
{
    for (size_t i = 0; i < set->n_series; i++)
        if (strcmp(set->series[i].kind, kind) == 0)
            return (long)i;
    return -1;
}

/* One series per copy kind, by name (pandas' groupby order). */
static int make_kind_series(hta_step_series_set *set, const hta_trace *t)
{
    size_t cap = 0;
    for (size_t i = 0; i < t->n_events; i++) {
        char kind[HTA_COPY_KIND_SIZE];
        if (!hta_event_is_copy(&t->events[i]))
            continue;
        hta_copy_kind(hta_event_name(t, &t->events[i]), kind);
        if (hta_step_series_find_kind(set, kind) >= 0)
            continue;
        if (hta_grow_array((void **)&set->series, &cap, set->n_series + 1, sizeof *set->series))
            return -1;
        set->series[set->n_series] = (hta_step_series){.n = 0};
        strcpy(set->series[set->n_series++].kind, kind);
    }
    if (set->n_series) /* series is NULL without copies; qsort wants non-NULL */
        qsort(set->series, set->n_series, sizeof *set->series, compare_kinds);
    return 0;
}

/* The bandwidth's steps: payload = event index << 1, | 1 for the end. */
typedef struct bandwidth_source {
    const hta_trace *trace;
    const hta_step_series_set *set;
    size_t n_copies;
} bandwidth_source;

static uint32_t bandwidth_series(const void *ctx, size_t payload)
{
    const bandwidth_source *b = ctx;
    char kind[HTA_COPY_KIND_SIZE];
    hta_copy_kind(hta_event_name(b->trace, &b->trace->events[payload >> 1]), kind);
    return (uint32_t)hta_step_series_find_kind(b->set, kind);
}

static double bandwidth_delta(const void *ctx, size_t payload)
{
    const bandwidth_source *b = ctx;
    const hta_event *e = &b->trace->events[payload >> 1];
    double bw = e->flags & HTA_EVENT_HAS_COPY ? hta_trace_extra(b->trace, e)->bandwidth_gbps : NAN;
    return payload & 1 ? -bw : bw;
}

/* HTA's order: every copy's start in trace order, then every end. */
static long lay_out_bandwidth(const void *ctx, hta_keyed *steps)
{
    const bandwidth_source *b = ctx;
    size_t n = 0;
    for (size_t i = 0; i < b->trace->n_events; i++) {
        const hta_event *e = &b->trace->events[i];
        if (!hta_event_is_copy(e))
            continue;
        int64_t dur = e->dur_ns == 0 ? 1000 : e->dur_ns; /* 1 us, as HTA */
        steps[n] = (hta_keyed){e->ts_ns, i << 1};
        steps[b->n_copies + n++] = (hta_keyed){e->ts_ns + dur, i << 1 | 1};
    }
    return (long)(2 * n);
}

size_t hta_trace_count_copies(const hta_trace *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_events; i++)
        n += hta_event_is_copy(&t->events[i]);
    return n;
}

int hta_memory_bw_series(hta_step_series_set *set, const hta_trace *t)
{
    memset(set, 0, sizeof *set);
    bandwidth_source b = {t, set, hta_trace_count_copies(t)};
    step_source src = {&b, lay_out_bandwidth, bandwidth_series, bandwidth_delta};
    int rc = make_kind_series(set, t) == 0 ? walk(set, &src, 2 * b.n_copies, 1, NULL, NULL) : -1;
    if (rc)
        hta_step_series_free(set);
    return rc;
}

void hta_step_series_free(hta_step_series_set *set)
{
    free(set->series);
    free(set->storage);
    memset(set, 0, sizeof *set);
}
