/* rank_view.c: the sorted GPU events, correlation index, per-type
 * interval unions and per-stream work order every analysis shares (see
 * model/rank_view.h).  Built once per rank so that no analysis sorts, indexes
 * or merges the same events again; the correlation index comes built from
 * the step filter, whose passes over the events make it anyway.  The sorted
 * events are pointers into the trace rather than copies: 8 bytes an event
 * instead of 32, at the price of one indirection where an analysis reads
 * one. */
#define _GNU_SOURCE /* qsort_r */
#include "model/rank_view.h"

#include "numerics/radix_sort.h"
#include "util/large_alloc.h"
#include "util/thread_jobs.h"

#include <stdlib.h>
#include <string.h>

/* The trace is the context: a correlation may live in its extras. */
static int compare_gpu_events(const void *a, const void *b, void *trace)
{
    const hta_event *x = *(const hta_event *const *)a, *y = *(const hta_event *const *)b;
    if (x->ts_ns != y->ts_ns)
        return x->ts_ns < y->ts_ns ? -1 : 1;
    if (x->dur_ns != y->dur_ns)
        return x->dur_ns < y->dur_ns ? -1 : 1;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    int64_t cx = hta_event_correlation(trace, x), cy = hta_event_correlation(trace, y);
    if (cx != cy)
        return cx < cy ? -1 : 1;
    return (x->name > y->name) - (x->name < y->name);
}

/* Longest run of equal starts left to insertion sort. */
#define SHORT_RUN 32

/* Orders a run of events with one start by the rest of the comparison,
 * stably: insertion sort for the usual short runs, qsort (glibc's is a
 * stable merge sort) for long ones. */
static void sort_equal_starts(const hta_event **e, size_t n, const hta_trace *trace)
{
    void *context = (void *)trace;
    if (n > SHORT_RUN) {
        qsort_r(e, n, sizeof *e, compare_gpu_events, context);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        const hta_event *v = e[i];
        size_t j = i;
        for (; j > 0 && compare_gpu_events(&e[j - 1], &v, context) > 0; j--)
            e[j] = e[j - 1];
        e[j] = v;
    }
}

/* Places events[i] at slot i of the order, in place: each cycle of the
 * permutation is followed once, order[i] = i marking a placed slot. */
static void apply_order(const hta_event **events, size_t *order, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (order[i] == i)
            continue;
        const hta_event *first = events[i];
        size_t j = i;
        while (order[j] != i) {
            size_t from = order[j];
            events[j] = events[from];
            order[j] = j;
            j = from;
        }
        events[j] = first;
        order[j] = j;
    }
}

/* Sorts the GPU events as a stable qsort with compare_gpu_events would: a
 * stable radix sort by start, then each run of equal starts by the rest,
 * stably.  The communication kernels' positions go to comm_at as each
 * run is placed (its events are then in cache).  -1 when out of memory. */
static int sort_gpu_events(const hta_event **gpu, size_t n, const hta_trace *trace,
                           size_t *comm_at, size_t *n_comm)
{
    int64_t *starts = hta_large_malloc((n ? n : 1) * sizeof *starts);
    size_t *order = hta_large_malloc((n ? n : 1) * sizeof *order);
    int rc = starts && order ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        starts[i] = gpu[i]->ts_ns;
    if (rc == 0)
        rc = hta_stable_argsort(starts, n, order);
    free(starts);
    if (rc == 0)
        apply_order(gpu, order, n);
    free(order);
    for (size_t first = 0, end; rc == 0 && first < n; first = end) {
        for (end = first + 1; end < n && gpu[end]->ts_ns == gpu[first]->ts_ns;)
            end++;
        sort_equal_starts(gpu + first, end - first, trace);
        for (size_t i = first; i < end; i++)
            if (gpu[i]->kernel_type == HTA_KT_COMMUNICATION)
                comm_at[(*n_comm)++] = i;
    }
    return rc;
}

static int is_communication(const hta_event *e)
{
    return hta_event_is_gpu(e) && e->kernel_type == HTA_KT_COMMUNICATION;
}

/* The GPU events that are work, and their span. */
static void find_work(hta_rank_view *view)
{
    for (size_t i = 0; i < view->n_gpu; i++) {
        const hta_event *e = view->gpu[i];
        if (hta_rank_view_is_wait(view, e))
            continue;
        int64_t end = hta_rank_view_work_end(view, i);
        if (view->n_work++ == 0)
            view->work_start = view->work_end = e->ts_ns;
        view->work_end = end > view->work_end ? end : view->work_end;
    }
}

/* The clipped work's COMPUTATION and COMMUNICATION unions, when some
 * record was clipped.  -1 when out of memory. */
static int build_clipped_unions(hta_rank_view *view)
{
    static const hta_kernel_type TYPES[2] = {HTA_KT_COMPUTATION, HTA_KT_COMMUNICATION};
    if (view->clips.n == 0)
        return 0;
    for (int k = 0; k < 2; k++) {
        hta_interval *iv = hta_large_malloc((view->unions.n[TYPES[k]] + view->clips.n + 1) *
                                            sizeof *iv);
        if (!iv)
            return -1;
        size_t n = 0;
        for (size_t i = 0; i < view->n_gpu; i++) {
            if (view->gpu[i]->kernel_type != TYPES[k])
                continue;
            hta_interval next = {view->gpu[i]->ts_ns, hta_rank_view_work_end(view, i)};
            if (n == 0 || hta_interval_merge(&iv[n - 1], next))
                iv[n++] = next;
        }
        view->clipped_of[k] = iv;
        view->clipped_n[k] = n;
    }
    return 0;
}

const hta_interval *hta_rank_view_work_union(const hta_rank_view *view, hta_kernel_type type,
                                             size_t *n)
{
    int k = type == HTA_KT_COMMUNICATION;
    if (!view->clipped_of[k]) {
        *n = view->unions.n[type];
        return view->unions.of[type];
    }
    *n = view->clipped_n[k];
    return view->clipped_of[k];
}

/* The GPU events sorted, their communication kernels and their type
 * unions. */
static int build_sorted_gpu(hta_rank_view *view, const hta_trace *trace)
{
    size_t n_gpu = 0, n_comm = 0;
    for (size_t i = 0; i < trace->n_events; i++) {
        n_gpu += hta_event_is_gpu(&trace->events[i]);
        n_comm += is_communication(&trace->events[i]);
    }
    view->gpu = hta_large_malloc((n_gpu ? n_gpu : 1) * sizeof *view->gpu);
    view->comm_at = malloc((n_comm ? n_comm : 1) * sizeof *view->comm_at);
    if (!view->gpu || !view->comm_at)
        return -1;
    for (size_t i = 0; i < trace->n_events; i++)
        if (hta_event_is_gpu(&trace->events[i]))
            view->gpu[view->n_gpu++] = &trace->events[i];
    if (sort_gpu_events(view->gpu, view->n_gpu, trace, view->comm_at, &view->n_comm))
        return -1;
    view->wait_cat = hta_strtab_find(&trace->categories, "cuda_sync", strlen("cuda_sync"));
    if (hta_stream_clips_build(&view->clips, view->gpu, view->n_gpu, view->wait_cat))
        return -1;
    find_work(view);
    return hta_type_unions_build(&view->unions, view->gpu, view->n_gpu) ||
           build_clipped_unions(view);
}

/* The view in two halves of about equal cost, side by side when the
 * trace is analysed on several threads. */
typedef struct view_halves {
    hta_rank_view *view;
    int rc[2];
} view_halves;

static void build_half(void *halves, int k)
{
    view_halves *h = halves;
    hta_rank_view *v = h->view;
    h->rc[k] = k == 0 ? build_sorted_gpu(v, v->trace)
                      : hta_stream_work_build(&v->stream_work, v->trace);
}

int hta_rank_view_build(hta_rank_view *view, const hta_trace *trace, hta_corrmap *launches,
                        int64_t rank_key, int threads)
{
    memset(view, 0, sizeof *view);
    view->trace = trace;
    view->cpu_by_correlation = *launches;
    *launches = (hta_corrmap){0};
    view->rank_key = rank_key;
    view_halves halves = {view, {0, 0}};
    hta_run_tasks(build_half, &halves, 2, threads);
    if (halves.rc[0] || halves.rc[1]) {
        hta_rank_view_free(view);
        return -1;
    }
    return 0;
}

void hta_rank_view_free(hta_rank_view *view)
{
    free(view->gpu);
    free(view->comm_at);
    hta_corrmap_free(&view->cpu_by_correlation);
    hta_type_unions_free(&view->unions);
    hta_stream_work_free(&view->stream_work);
    hta_stream_clips_free(&view->clips);
    free(view->clipped_of[0]);
    free(view->clipped_of[1]);
    memset(view, 0, sizeof *view);
}

const hta_event *hta_rank_view_launch(const hta_rank_view *view, const hta_event *gpu)
{
    uint32_t index;
    int64_t correlation = hta_event_correlation(view->trace, gpu);
    if (correlation < 0 || !hta_corrmap_get(&view->cpu_by_correlation, correlation, &index))
        return NULL;
    return &view->trace->events[index];
}

size_t hta_rank_view_unlaunched(const hta_rank_view *view)
{
    size_t n = 0;
    for (size_t i = 0; i < view->n_gpu; i++)
        n += hta_event_correlation(view->trace, view->gpu[i]) >= 0 &&
             !hta_rank_view_launch(view, view->gpu[i]);
    return n;
}
