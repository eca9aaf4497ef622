/* op_walk.c: nesting CPU ops and attributing launches (see model/op_walk.h).
 *
 * The ops and launches are dealt to their threads in one pass over the
 * events and put in order by an insertion sort within each thread
 * (Kineto writes a thread's events nearly in start order, so it moves a
 * few), falling back to qsort for a thread that is far from sorted.  One
 * sweep per thread then keeps the chain of open ops and a buffer of the
 * GPU events launched under the outermost one. */
#define _GNU_SOURCE /* qsort_r */
#include "model/op_walk.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

typedef struct walk {
    const hta_rank_view *view;
    const hta_cpu_contexts *contexts;
    const hta_event *events;
    hta_corrmap gpu_by_correlation; /* first position in view->gpu */
    uint32_t *next_same;       /* by position: the next with its correlation, UINT32_MAX:
                                * none; NULL when no correlation has two */
    uint32_t cpu_op;           /* the cpu_op category id, UINT32_MAX if none */
    hta_op_gpu *gpu;           /* the open subtree's GPU events */
    size_t n_gpu, cap_gpu;
    uint32_t *open;            /* the open ops' event indices, outermost first */
    size_t *open_mark;         /* n_gpu when each opened */
    size_t n_open, cap_open;
} walk;

static int is_op(const walk *w, const hta_event *e)
{
    return e->cat == w->cpu_op && !hta_event_is_gpu(e);
}

/* Order within a thread: start, then longer first, then ops before
 * launches, then trace order. */
static int compare_items(const void *a, const void *b, void *ctx)
{
    const walk *w = ctx;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const hta_event *x = &w->events[i], *y = &w->events[j];
    if (x->ts_ns != y->ts_ns)
        return x->ts_ns < y->ts_ns ? -1 : 1;
    if (x->dur_ns != y->dur_ns)
        return x->dur_ns > y->dur_ns ? -1 : 1;
    int ox = is_op(w, x), oy = is_op(w, y);
    if (ox != oy)
        return ox ? -1 : 1;
    return (i > j) - (i < j);
}

/* Insertion sort, or qsort once it has moved more than 8 items per item. */
static void sort_thread(walk *w, uint32_t *v, size_t n)
{
    size_t moves = 0;
    for (size_t i = 1; i < n; i++) {
        uint32_t x = v[i];
        size_t j = i;
        for (; j > 0 && compare_items(&v[j - 1], &x, w) > 0; j--)
            v[j] = v[j - 1];
        v[j] = x;
        moves += i - j;
        if (moves > 8 * n) {
            qsort_r(v, n, sizeof *v, compare_items, w);
            return;
        }
    }
}

/* The position in view->gpu of the first GPU event a CPU event launched,
 * or UINT32_MAX; next_same leads from it to the others (a graph replay's). */
static uint32_t launched_gpu(const walk *w, const hta_event *e)
{
    uint32_t at;
    int64_t correlation = hta_event_correlation(w->view->trace, e);
    if (correlation < 0 || !hta_corrmap_get(&w->gpu_by_correlation, correlation, &at))
        return UINT32_MAX;
    return at;
}

/* Chains each GPU event sharing its correlation with an earlier one (a
 * graph replay's) to the last before it: next_same, in start order.  Only
 * a trace with such events pays for the arrays. */
static int chain_followers(walk *w, const int64_t *correlation, const uint32_t *followers,
                           size_t n_followers)
{
    size_t n = w->view->n_gpu;
    uint32_t *tail = malloc(n * sizeof *tail); /* by first event: the chain's last */
    w->next_same = malloc(n * sizeof *w->next_same);
    if (!tail || !w->next_same) {
        free(tail);
        return -1;
    }
    memset(w->next_same, 0xff, n * sizeof *w->next_same);
    for (size_t k = 0; k < n_followers; k++) {
        uint32_t i = followers[k], first;
        if (!hta_corrmap_get(&w->gpu_by_correlation, correlation[i], &first))
            continue;
        w->next_same[w->next_same[first] == UINT32_MAX ? first : tail[first]] = i;
        tail[first] = i;
    }
    free(tail);
    return 0;
}

/* One pass over the GPU events reads their correlations (the view lists
 * them in start order, scattered over the trace) into a compact array,
 * which the map's range and its filling then read.  The map keeps each
 * correlation's first GPU event; the others are chained to it. */
#define PREFETCH_AHEAD 16
static int index_gpu(walk *w)
{
    const hta_rank_view *v = w->view;
    int64_t *correlation = malloc((v->n_gpu ? v->n_gpu : 1) * sizeof *correlation);
    if (!correlation)
        return -1;
    int64_t lowest = INT64_MAX, highest = INT64_MIN;
    size_t n = 0;
    for (size_t i = 0; i < v->n_gpu; i++) {
        if (i + PREFETCH_AHEAD < v->n_gpu)
            __builtin_prefetch(v->gpu[i + PREFETCH_AHEAD]);
        int64_t c = hta_event_correlation(v->trace, v->gpu[i]);
        correlation[i] = c;
        if (c < 0)
            continue;
        n++;
        lowest = c < lowest ? c : lowest;
        highest = c > highest ? c : highest;
    }
    uint32_t *followers = NULL;
    size_t n_followers = 0, cap = 0;
    int rc = hta_corrmap_init(&w->gpu_by_correlation, n, lowest, highest);
    for (size_t i = 0; rc == 0 && i < v->n_gpu; i++)
        if (correlation[i] >= 0 &&
            !hta_corrmap_put_first(&w->gpu_by_correlation, correlation[i], (uint32_t)i)) {
            rc = hta_grow_array((void **)&followers, &cap, n_followers + 1, sizeof *followers);
            if (rc == 0)
                followers[n_followers++] = (uint32_t)i;
        }
    if (rc == 0 && n_followers)
        rc = chain_followers(w, correlation, followers, n_followers);
    free(followers);
    free(correlation);
    return rc;
}

static int is_item(const walk *w, const hta_event *e)
{
    return !hta_event_is_gpu(e) && (is_op(w, e) || launched_gpu(w, e) != UINT32_MAX);
}

/* One thread's ops and launches, event indices in trace order, then
 * sorted. */
typedef struct thread_items {
    uint32_t *at;              /* owned */
    size_t n, cap;
} thread_items;

static int push_item(thread_items *t, uint32_t event)
{
    if (hta_grow_array((void **)&t->at, &t->cap, t->n + 1, sizeof *t->at))
        return -1;
    t->at[t->n++] = event;
    return 0;
}

static void free_items(thread_items *per_thread, uint32_t threads)
{
    for (uint32_t k = 0; per_thread && k < threads; k++)
        free(per_thread[k].at);
    free(per_thread);
}

/* The ops and launches of each thread, sorted: one pass over the events
 * deals them to their threads.  NULL when out of memory. */
static thread_items *order_items(walk *w)
{
    const hta_trace *t = w->view->trace;
    uint32_t threads = w->contexts->n_threads;
    thread_items *per_thread = calloc(threads ? threads : 1, sizeof *per_thread);
    for (size_t i = 0; per_thread && i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        if (is_item(w, e) &&
            push_item(&per_thread[hta_cpu_context_of(w->contexts, e)->thread], (uint32_t)i)) {
            free_items(per_thread, threads);
            return NULL;
        }
    }
    for (uint32_t k = 0; per_thread && k < threads; k++)
        sort_thread(w, per_thread[k].at, per_thread[k].n);
    return per_thread;
}

/* Every GPU event of a launch, from its first (at) on. */
static int push_gpu(walk *w, const hta_event *launch, uint32_t at)
{
    do {
        if (hta_grow_array((void **)&w->gpu, &w->cap_gpu, w->n_gpu + 1, sizeof *w->gpu))
            return -1;
        w->gpu[w->n_gpu++] = (hta_op_gpu){launch, w->view->gpu[at], (uint32_t)(w->n_open - 1)};
    } while (w->next_same && (at = w->next_same[at]) != UINT32_MAX);
    return 0;
}

static int push_open(walk *w, uint32_t event)
{
    if (w->n_open == w->cap_open) {
        size_t cap = w->cap_open ? 2 * w->cap_open : 64;
        uint32_t *open = realloc(w->open, cap * sizeof *open);
        size_t *mark = open ? realloc(w->open_mark, cap * sizeof *mark) : NULL;
        if (open)
            w->open = open;
        if (!mark)
            return -1;
        w->open_mark = mark;
        w->cap_open = cap;
    }
    w->open[w->n_open] = event;
    w->open_mark[w->n_open++] = w->n_gpu;
    return 0;
}

/* Closes the innermost open op. */
static int close_op(walk *w, hta_op_visit_fn visit, void *ctx)
{
    size_t k = --w->n_open;
    size_t mark = w->open_mark[k];
    /* No GPU event yet means no buffer: no offset from NULL. */
    hta_op_visit v = {&w->events[w->open[k]], (uint32_t)k, w->gpu ? w->gpu + mark : NULL,
                      w->n_gpu - mark};
    int rc = visit(ctx, &v);
    if (k == 0)
        w->n_gpu = 0;          /* nothing outside the outermost op keeps them */
    return rc;
}

/* Closes the open ops that do not enclose [ts, end). */
static int close_until(walk *w, int64_t ts, int64_t end, hta_op_visit_fn visit, void *ctx)
{
    while (w->n_open) {
        const hta_event *top = &w->events[w->open[w->n_open - 1]];
        if (top->ts_ns <= ts && hta_event_end(top) >= end)
            return 0;
        int rc = close_op(w, visit, ctx);
        if (rc)
            return rc;
    }
    return 0;
}

static int sweep_thread(walk *w, const uint32_t *items, size_t n, hta_op_visit_fn visit,
                        void *ctx)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const hta_event *e = &w->events[items[i]];
        rc = close_until(w, e->ts_ns, hta_event_end(e), visit, ctx);
        if (rc)
            break;
        if (is_op(w, e))
            rc = push_open(w, items[i]);
        else if (w->n_open)
            rc = push_gpu(w, e, launched_gpu(w, e));
    }
    while (rc == 0 && w->n_open)
        rc = close_op(w, visit, ctx);
    return rc;
}

int hta_op_walk(const hta_rank_view *view, const hta_cpu_contexts *contexts,
                hta_op_visit_fn visit, void *ctx)
{
    const hta_trace *t = view->trace;
    uint32_t cpu_op = hta_strtab_find(&t->categories, "cpu_op", 6);
    walk w = {.view = view, .contexts = contexts, .events = t->events, .cpu_op = cpu_op};
    thread_items *per_thread = index_gpu(&w) ? NULL : order_items(&w);
    if (!per_thread) {
        hta_corrmap_free(&w.gpu_by_correlation);
        free(w.next_same);
        return -1;
    }
    int rc = 0;
    for (uint32_t k = 0; rc == 0 && k < contexts->n_threads; k++)
        rc = sweep_thread(&w, per_thread[k].at, per_thread[k].n, visit, ctx);
    hta_corrmap_free(&w.gpu_by_correlation);
    free(w.next_same);
    free_items(per_thread, contexts->n_threads);
    free(w.gpu);
    free(w.open);
    free(w.open_mark);
    return rc;
}
