/* step_series.c: HTA's queue-length and memory-bandwidth time series (see
 * hta/step_series.h).
 *
 * Both are built the way HTA builds them: the steps laid out in HTA's
 * concatenation order (queue: every launch call in trace order, then every
 * GPU event in trace order; bandwidth: every copy's start in trace order,
 * then every copy's end), sorted by time in numpy's quicksort order, split
 * per stream or kind keeping that order (pandas' groupby), and summed
 * running, in float64 in that order, as pandas' cumsum. */
#include "hta/large_alloc.h"
#include "hta/launch.h"
#include "hta/radix_sort.h"
#include "hta/stats.h"
#include "hta/step_series.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct step {
    int64_t ts;
    double delta;              /* NaN: a point that does not move the sum */
    uint32_t group;            /* index into the set's series */
} step;

/* Lays each group's points out contiguously; returns the offsets. */
static size_t *place_groups(hta_step_series_set *set, const step *steps, size_t n)
{
    size_t *next = calloc(set->n_series + 1, sizeof *next);
    if (!next)
        return NULL;
    for (size_t i = 0; i < n; i++)
        set->series[steps[i].group].n++;
    for (size_t g = 0, offset = 0; g < set->n_series; g++) {
        set->series[g].points = set->storage + offset;
        next[g] = offset;
        offset += set->series[g].n;
    }
    return next;
}

/* Longest run of equal times whose steps are compared pairwise; a longer
 * one is taken to matter. */
#define MAX_TIE_RUN 16

static int same_delta(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Whether, in the run order[first, end) of steps at one time, two steps of
 * one series differ in delta: only then does their order change a value. */
static int tie_matters(const step *steps, const size_t *order, size_t first, size_t end)
{
    if (end - first > MAX_TIE_RUN)
        return 1;
    for (size_t i = first; i < end; i++)
        for (size_t j = i + 1; j < end; j++)
            if (steps[order[i]].group == steps[order[j]].group &&
                !same_delta(steps[order[i]].delta, steps[order[j]].delta))
                return 1;
    return 0;
}

static int any_tie_matters(const step *steps, const size_t *order, size_t n)
{
    for (size_t first = 0, end; first < n; first = end) {
        for (end = first + 1; end < n && steps[order[end]].ts == steps[order[first]].ts;)
            end++;
        if (end - first > 1 && tie_matters(steps, order, first, end))
            return 1;
    }
    return 0;
}

#define NS_PER_US 1000

static int whole_microseconds(const step *steps, size_t n)
{
    int whole = 1;
    for (size_t i = 0; i < n; i++)
        whole &= steps[i].ts % NS_PER_US == 0;
    return whole;
}

/* numpy's order of the steps by time; NULL when out of memory.  The
 * steps' times are laid out with their positions directly, so no copy of
 * the keys exists beside the pairs at the queue length's memory peak. */
static size_t *numpy_time_order(const step *steps, size_t n)
{
    hta_keyed *v = hta_large_malloc((n + 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++)
        v[i] = (hta_keyed){steps[i].ts, i};
    hta_sort_keyed_like_numpy(v, n);
    size_t *order = hta_large_malloc((n + 1) * sizeof *order);
    for (size_t i = 0; order && i < n; i++)
        order[i] = v[i].index;
    free(v);
    return order;
}

/* A stable order of the steps by time, or NULL (out of memory, or with
 * *tie_matters set when a tie makes it differ from numpy's). */
static size_t *radix_time_order(const step *steps, size_t n, int *tie_matters)
{
    int64_t *keys = hta_large_calloc(n + 1, sizeof *keys);
    size_t *order = hta_large_malloc((n + 1) * sizeof *order);
    int ok = keys && order;
    for (size_t i = 0; ok && i < n; i++)
        keys[i] = steps[i].ts;
    ok = ok && hta_stable_argsort(keys, n, order) == 0;
    *tie_matters = ok && any_tie_matters(steps, order, n);
    free(keys);
    if (ok && !*tie_matters)
        return order;
    free(order);
    return NULL;
}

/* numpy's order of the steps by time; NULL when out of memory.  Any
 * sort by time gives the same series when no two steps of one series tie
 * with different deltas, so a stable radix sort serves unless such a tie
 * exists, and then numpy's own algorithm runs.  With whole-microsecond
 * times (most traces) such ties are the rule, and numpy's algorithm runs
 * at once rather than after a wasted radix sort. */
static size_t *time_order(const step *steps, size_t n)
{
    int like_numpy = whole_microseconds(steps, n);
    size_t *order = like_numpy ? NULL : radix_time_order(steps, n, &like_numpy);
    return like_numpy ? numpy_time_order(steps, n) : order;
}

/* Sorts the steps as HTA and writes each series' running sums. */
static int accumulate(hta_step_series_set *set, const step *steps, size_t n, int clamp_at_zero)
{
    size_t *order = time_order(steps, n);
    double *sum = calloc(set->n_series + 1, sizeof *sum);
    set->storage = hta_large_malloc((n + 1) * sizeof *set->storage);
    size_t *next = order && sum && set->storage ? place_groups(set, steps, n) : NULL;
    for (size_t k = 0; next && k < n; k++) {
        const step *s = &steps[order[k]];
        double value = NAN;
        if (!isnan(s->delta)) {
            sum[s->group] += s->delta;
            value = clamp_at_zero && sum[s->group] < 0 ? 0.0 : sum[s->group];
        }
        set->storage[next[s->group]++] = (hta_step_point){s->ts, value};
    }
    int rc = next ? 0 : -1;
    free(order);
    free(sum);
    free(next);
    return rc;
}

/* ---- queue length ------------------------------------------------------ */

typedef struct launch_pair {
    const hta_event *cpu, *gpu;
} launch_pair;

/* The GPU events launched by a queue API, in trace order. */
static size_t find_launch_pairs(const hta_rank_view *v, launch_pair *pairs)
{
    hta_launch_names apis = hta_launch_names_find(v->trace, HTA_LAUNCH_QUEUE_APIS);
    size_t n = 0;
    for (size_t i = 0; i < v->trace->n_events; i++) {
        const hta_event *e = &v->trace->events[i];
        const hta_event *cpu = hta_event_is_gpu(e) ? hta_listed_launch(v, &apis, e) : NULL;
        if (cpu)
            pairs[n++] = (launch_pair){cpu, e};
    }
    return n;
}

/* Scratch for ordering the n pairs by a key. */
typedef struct pair_order {
    int64_t *keys;
    size_t *order;
} pair_order;

/* One series per stream, ascending. */
static int make_stream_series(hta_step_series_set *set, const launch_pair *pairs, size_t n,
                              pair_order *by)
{
    for (size_t i = 0; i < n; i++)
        by->keys[i] = pairs[i].gpu->stream;
    if (hta_stable_argsort(by->keys, n, by->order))
        return -1;
    size_t streams = 0;
    for (size_t i = 0; i < n; i++)
        streams += i == 0 || by->keys[i] != by->keys[i - 1];
    set->series = calloc(streams + 1, sizeof *set->series);
    if (!set->series)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || by->keys[i] != by->keys[i - 1])
            set->series[set->n_series++].stream = (uint32_t)by->keys[i];
    return 0;
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

/* HTA's order: the launch calls (in trace order; a call with several GPU
 * events once per event, in their trace order, which the pairs are in),
 * then the GPU events.  -1 when out of memory. */
static int queue_steps(const hta_step_series_set *set, const hta_trace *t,
                       const launch_pair *pairs, size_t n, pair_order *by, step *steps)
{
    for (size_t i = 0; i < n; i++)
        steps[n + i] = (step){pairs[i].gpu->ts_ns, -1.0,
                              stream_series_index(set, pairs[i].gpu->stream)};
    for (size_t i = 0; i < n; i++)
        by->keys[i] = pairs[i].cpu - t->events;
    if (hta_stable_argsort(by->keys, n, by->order))
        return -1;
    for (size_t i = 0; i < n; i++) {
        const launch_pair *p = &pairs[by->order[i]];
        steps[i] = (step){p->cpu->ts_ns, +1.0, steps[n + by->order[i]].group};
    }
    return 0;
}

int hta_queue_length_series(hta_step_series_set *set, const hta_rank_view *v)
{
    memset(set, 0, sizeof *set);
    size_t cap = v->n_gpu + 1;
    launch_pair *pairs = hta_large_malloc(cap * sizeof *pairs);
    step *steps = hta_large_malloc(2 * cap * sizeof *steps);
    pair_order by = {hta_large_malloc(cap * sizeof *by.keys), hta_large_malloc(cap * sizeof *by.order)};
    int rc = -1;
    if (pairs && steps && by.keys && by.order) {
        size_t n = find_launch_pairs(v, pairs);
        if (make_stream_series(set, pairs, n, &by) == 0 &&
            queue_steps(set, v->trace, pairs, n, &by, steps) == 0) {
            /* The pairs are in the steps now; free them and the scratch
             * before the sort's buffers exist, it is the peak of a rank's
             * memory. */
            free(pairs);
            free(by.keys);
            free(by.order);
            pairs = NULL;
            by = (pair_order){NULL, NULL};
            rc = accumulate(set, steps, 2 * n, 0);
        }
    }
    free(pairs);
    free(by.keys);
    free(by.order);
    free(steps);
    if (rc)
        hta_step_series_free(set);
    return rc;
}

/* ---- memory bandwidth -------------------------------------------------- */

#define MEMCPY_KIND_LEN (sizeof "Memcpy DtoH" - 1)

void hta_copy_kind(const char *name, char kind[HTA_COPY_KIND_SIZE])
{
    if (strncmp(name, "Memset", 6) == 0)
        strcpy(kind, "Memset");
    else if (strncmp(name, "Memcpy", 6) != 0)
        strcpy(kind, "Memcpy Unknown");
    else {
        size_t len = strnlen(name, MEMCPY_KIND_LEN);
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
        if (set->n_series == cap) {
            cap = cap ? 2 * cap : 8;
            hta_step_series *grown = realloc(set->series, cap * sizeof *grown);
            if (!grown)
                return -1;
            set->series = grown;
        }
        set->series[set->n_series] = (hta_step_series){.n = 0};
        strcpy(set->series[set->n_series++].kind, kind);
    }
    if (set->n_series) /* series is NULL without copies; qsort wants non-NULL */
        qsort(set->series, set->n_series, sizeof *set->series, compare_kinds);
    return 0;
}

/* HTA's order: every copy's start in trace order, then every end. */
static size_t bandwidth_steps(const hta_step_series_set *set, const hta_trace *t, step *steps,
                              size_t n_copies)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        if (!hta_event_is_copy(e))
            continue;
        char kind[HTA_COPY_KIND_SIZE];
        hta_copy_kind(hta_event_name(t, e), kind);
        uint32_t g = (uint32_t)hta_step_series_find_kind(set, kind);
        double bw = e->flags & HTA_EVENT_HAS_COPY ? t->copies[e->aux].bandwidth_gbps : NAN;
        int64_t dur = e->dur_ns == 0 ? 1000 : e->dur_ns; /* 1 us, as HTA */
        steps[n] = (step){e->ts_ns, bw, g};
        steps[n_copies + n] = (step){e->ts_ns + dur, -bw, g};
        n++;
    }
    return 2 * n;
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
    size_t n_copies = hta_trace_count_copies(t);
    step *steps = hta_large_malloc((2 * n_copies + 1) * sizeof *steps);
    int rc = -1;
    if (steps && make_kind_series(set, t) == 0)
        rc = accumulate(set, steps, bandwidth_steps(set, t, steps, n_copies), 1);
    free(steps);
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
