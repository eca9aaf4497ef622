/* critical_path_steps.c: the whole-trace passes before the steps' graphs
 * (see analysis/critical_path_internal.h).
 *
 * The queue length of each stream, which decides between a launch edge and a
 * kernel -> kernel edge, is counted over the whole trace as HTA's critical
 * path does, by its own rule (analysis/step_series.h says how it differs from
 * the queue-length series).  The rank's events are then dealt out to the
 * steps once: a CPU event by its start, a GPU event by its launch's start
 * (HTA's clipping).  Each GPU event looks up its own launch, so every GPU
 * event of a graph replay joins the step of its graph launch call: HTA PR
 * #291's rule (docs/definitions.md, "Graph replays"), where released HTA kept
 * one GPU event per correlation. */
#include "analysis/critical_path_internal.h"

#include <stdlib.h>
#include <string.h>

#include "model/launch_apis.h"
#include "numerics/bounds.h"
#include "numerics/radix_sort.h"
#include "numerics/run_merge_sort.h"

/* Counts one stream's queue: its launches (by place p in view->gpu, in
 * order of p) and its kernels' starts merged in order of (time, launches
 * first, p), each launch adding one and each start taking one away.  The
 * kernels start in order of p (view->gpu is by start); the launches come
 * nearly so and are sorted by (time, p) in scratch. */
static int count_stream(rank_state *r, const hta_keyed *by_p, size_t n, hta_keyed *scratch,
                        const int64_t *launch_ts, const uint32_t *launch_thread)
{
    const hta_rank_view *v = r->v;
    for (size_t i = 0; i < n; i++)
        scratch[i] = (hta_keyed){launch_ts[by_p[i].index], by_p[i].index};
    if (hta_run_merge_sort_keyed(scratch, n, scratch + n))
        return -1;
    int32_t length = 0;
    for (size_t i = 0, j = 0; i < n || j < n;) {
        if (i < n && (j == n || scratch[i].key <= v->gpu[by_p[j].index]->ts_ns)) {
            size_t p = scratch[i++].index;
            r->ql_runtime[p] = ++length;
            r->launches[r->n_launches++] =
                (launch_ref){v->gpu[p]->stream, launch_ts[p], (uint32_t)p, launch_thread[p]};
        } else {
            r->ql_kernel[by_p[j++].index] = --length;
        }
    }
    return 0;
}

int cp_count_queues(rank_state *r)
{
    const hta_rank_view *v = r->v;
    size_t ng = v->n_gpu;
    hta_launch_names names = hta_launch_names_find(r->t, HTA_LAUNCH_STATS_APIS);
    r->ql_runtime = malloc((ng + 1) * sizeof *r->ql_runtime);
    r->ql_kernel = malloc((ng + 1) * sizeof *r->ql_kernel);
    r->gpu_runtime = malloc((ng + 1) * sizeof *r->gpu_runtime);
    r->launches = malloc((ng + 1) * sizeof *r->launches);
    hta_keyed *items = malloc((ng + 1) * sizeof *items);
    hta_keyed *scratch = malloc((2 * ng + 1) * sizeof *scratch);
    int64_t *launch_ts = malloc((ng + 1) * sizeof *launch_ts);
    uint32_t *launch_thread = malloc((ng + 1) * sizeof *launch_thread);
    int rc = -1;
    if (!r->ql_runtime || !r->ql_kernel || !r->gpu_runtime || !r->launches || !items ||
        !scratch || !launch_ts || !launch_thread)
        goto done;
    size_t n = 0;
    for (size_t p = 0; p < ng; p++) {
        r->ql_runtime[p] = r->ql_kernel[p] = -1;
        const hta_event *g = v->gpu[p];
        const hta_event *runtime = runtime_of(r, g);
        r->gpu_runtime[p] = runtime ? (uint32_t)(runtime - r->t->events) : UINT32_MAX;
        /* hta_listed_launch, with the runtime looked up. */
        const hta_event *launch = runtime && hta_launch_names_match(&names, runtime) ? runtime
                                                                                     : NULL;
        if (!launch || is_sync_event(r, g))
            continue;
        launch_ts[p] = launch->ts_ns;
        launch_thread[p] = thread_of(r, launch);
        items[n++] = (hta_keyed){g->stream, p};
    }
    /* By stream, each stream's in order of p. */
    if (hta_stable_sort_keyed_using(items, n, scratch))
        goto done;
    for (size_t first = 0, end; first < n; first = end) {
        for (end = first + 1; end < n && items[end].key == items[first].key;)
            end++;
        if (count_stream(r, items + first, end - first, scratch, launch_ts, launch_thread))
            goto done;
    }
    rc = 0;
done:
    free(items);
    free(scratch);
    free(launch_ts);
    free(launch_thread);
    return rc;
}

size_t cp_launch_lower_bound(const rank_state *r, uint32_t stream, int64_t ts, int strictly)
{
    size_t lo = 0, hi = r->n_launches;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const launch_ref *l = &r->launches[mid];
        int before = l->stream < stream ||
                     (l->stream == stream && (strictly ? l->ts <= ts : l->ts < ts));
        if (before)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int cmp_window(const void *a, const void *b)
{
    const step_window *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The ProfilerStep#N windows in order of start (the step filter has
 * already dropped the last, as HTA's trace does); the whole trace when
 * there is none. */
int cp_find_steps(rank_state *r)
{
    const hta_trace *t = r->t;
    size_t cap = 0;
    if (hta_grow_array((void **)&r->steps, &cap, 1, sizeof *r->steps))
        return -1;
    for (size_t i = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        if (hta_event_is_gpu(e) || !(r->name_flags[e->name] & N_STEP))
            continue;
        if (hta_grow_array((void **)&r->steps, &cap, r->n_steps + 1, sizeof *r->steps))
            return -1;
        const char *name = hta_event_name(t, e);
        r->steps[r->n_steps++] = (step_window){e->ts_ns, hta_event_end(e),
                                               strtoll(name + 13, NULL, 10)};
    }
    qsort(r->steps, r->n_steps, sizeof *r->steps, cmp_window);
    if (r->n_steps == 0) {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (size_t i = 0; i < t->n_events; i++) {
            const hta_event *e = &t->events[i];
            lo = e->ts_ns < lo ? e->ts_ns : lo;
            hi = hta_event_end(e) > hi ? hta_event_end(e) : hi;
        }
        r->steps[0] = (step_window){lo, hi, -1};
        r->n_steps = t->n_events ? 1 : 0;
    }
    return 0;
}

/* The steps and the last step_at answer, kept in the caller's locals. */
typedef struct step_cursor {
    const step_window *steps;
    size_t n, at;
} step_cursor;

/* The step whose window holds ts, or -1, searched for. */
static long search_step(const step_window *steps, size_t n, int64_t ts)
{
    size_t lo = HTA_UPPER_BOUND(steps, n, start, ts);
    return lo == 0 || ts > steps[lo - 1].end ? -1 : (long)lo - 1;
}

/* The step whose window holds ts, or -1. */
static inline long step_at(step_cursor *cur, int64_t ts)
{
    /* Events come mostly in time order: try the last answer's step first. */
    size_t at = cur->at;
    if (at < cur->n && cur->steps[at].start <= ts && ts <= cur->steps[at].end &&
        (at + 1 == cur->n || cur->steps[at + 1].start > ts))
        return (long)at;
    long s = search_step(cur->steps, cur->n, ts);
    if (s >= 0)
        cur->at = (size_t)s;
    return s;
}

/* Which step a GPU event with a correlated call (runtime_of, NULL = none)
 * belongs to, or -1: by the call's start when the call has a duration
 * (syncs waiting on a stream whatever it has, as HTA keeps them all). */
static inline long step_of_launched(const rank_state *r, step_cursor *cur, const hta_event *e,
                                    const hta_event *runtime)
{
    if (!runtime)
        return -1;
    if (is_sync_event(r, e) && e->name == r->name_stream_wait)
        return step_at(cur, runtime->ts_ns);
    return runtime->dur_ns > 0 ? step_at(cur, runtime->ts_ns) : -1;
}

/* Which step an event belongs to, or -1: CPU events with a duration by
 * their start, GPU events by their call's (step_of_launched). */
static inline long step_of(const rank_state *r, step_cursor *cur, const hta_event *e)
{
    if (!hta_event_is_gpu(e) && !is_sync_event(r, e))
        return e->dur_ns > 0 ? step_at(cur, e->ts_ns) : -1;
    return step_of_launched(r, cur, e, runtime_of(r, e));
}

/* Each event's step (-1 = none) and, for a GPU event, its place in
 * view->gpu; count[s + 1] counts step s's members. */
static void assign_steps(const rank_state *r, int32_t *step, uint32_t *place, size_t *count)
{
    const hta_trace *t = r->t;
    step_cursor cur = {r->steps, r->n_steps, 0};
    for (size_t i = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        step[i] = hta_event_is_gpu(e) && !is_sync_event(r, e) ? -1
                                                              : (int32_t)step_of(r, &cur, e);
        count[step[i] + 1] += step[i] >= 0;
        place[i] = UINT32_MAX;
    }
    for (size_t p = 0; p < r->v->n_gpu; p++) {
        const hta_event *g = r->v->gpu[p];
        if (is_sync_event(r, g))
            continue;
        size_t i = (size_t)(g - t->events);
        step[i] = (int32_t)step_of_launched(r, &cur, g, gpu_runtime_of(r, p));
        count[step[i] + 1] += step[i] >= 0;
        place[i] = (uint32_t)p;
    }
}

/* Deals the members out to the steps, each step's in order of event
 * index: the graph lists its nodes in that order. */
int cp_deal_members(rank_state *r)
{
    const hta_trace *t = r->t;
    size_t total = t->n_events;
    int32_t *step = r->member_of = malloc((total + 1) * sizeof *step);
    uint32_t *place = malloc((total + 1) * sizeof *place); /* in view->gpu */
    size_t *fill = malloc((r->n_steps + 1) * sizeof *fill);
    r->step_first = calloc(r->n_steps + 2, sizeof *r->step_first);
    int rc = -1;
    if (!step || !place || !fill || !r->step_first)
        goto done;
    assign_steps(r, step, place, r->step_first);
    size_t n = 0;
    for (size_t s = 0; s < r->n_steps; s++)
        n += r->step_first[s + 1];
    for (size_t s = 0; s < r->n_steps; s++)
        r->step_first[s + 1] += r->step_first[s];
    r->members = malloc((n + 1) * sizeof *r->members);
    if (!r->members)
        goto done;
    memcpy(fill, r->step_first, r->n_steps * sizeof *fill);
    for (size_t i = 0; i < total; i++) {
        int32_t s = step[i];
        if (s < 0)
            continue;
        step[i] = (int32_t)(fill[s] - r->step_first[s]);
        r->members[fill[s]++] = (member){(uint32_t)i, place[i]};
    }
    rc = 0;
done:
    free(place);
    free(fill);
    return rc;
}

