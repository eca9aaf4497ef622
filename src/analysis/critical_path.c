/* critical_path.c: HTA's critical path of every ProfilerStep (see
 * analysis/critical_path.h and docs/definitions.md, Critical path).
 *
 * The rank's events are dealt out to the steps once: a CPU event by its
 * start, a GPU event by its launch's start (HTA's clipping).  Each step
 * then builds its graph in HTA's order of insertion (runtime lock edges,
 * the call stack of each CPU thread, then kernels and syncs in time
 * order), because ties between equally long paths are broken by that
 * order as networkx does: the first predecessor with the longest
 * distance, the first node in topological order (Kahn's, generation by
 * generation) with the longest distance.  The queue length of each
 * stream, which decides between a launch edge and a kernel -> kernel
 * edge, is counted over the whole trace as HTA does. */
#include "analysis/critical_path.h"

#include <stdlib.h>
#include <string.h>

#include "model/cpu_context.h"
#include "model/launch_apis.h"
#include "numerics/radix_sort.h"
#include "numerics/run_merge_sort.h"
#include "util/grow.h"

const char *const hta_cp_bound_names[HTA_CP_N_BOUNDS] = {
    "cpu_bound",          "data_loading",
    "gpu_compute_bound",  "gpu_communication_bound",
    "gpu_kernel_kernel_overhead", "gpu_kernel_launch_overhead",
};

#define KERNEL_KERNEL_DELAY_NS 1500000
#define TOP_SEGMENTS 10

enum edge_type { E_OPERATOR, E_DEPENDENCY, E_LAUNCH, E_KERNEL_KERNEL, E_SYNC };
static const char *const EDGE_TYPE_NAMES[] = {
    "operator", "dependency", "kernel_launch_delay", "kernel_kernel_delay", "sync",
};

/* Per name id: what the graph needs to know of a name. */
enum {
    N_LOCK = 1,        /* takes the CUDA runtime lock */
    N_BLOCKING = 2,    /* a blocking runtime call: its own time is waiting */
    N_FORWARD = 4,     /* "forward" in the name: the forward thread */
    N_AUTOGRAD = 8,    /* "autograd": the backward thread */
    N_DATA_LOADING = 16,
    N_STEP = 32,       /* ProfilerStep#N */
};

typedef struct step_window {
    int64_t start, end, number;
} step_window;

/* A member of a step: an event and, for a GPU event, its place in view->gpu. */
typedef struct member {
    uint32_t ev;
    uint32_t gpu;              /* UINT32_MAX for a CPU event */
} member;

typedef struct node {
    int64_t ts;
    uint32_t ev;               /* global event index */
    uint32_t local;            /* index in the step's members */
    uint8_t is_start;
    uint8_t is_lock;           /* a call that takes the runtime lock */
} node;

typedef struct edge {
    uint32_t src, dst;
    int64_t weight;
    int64_t attr;              /* attributed global event, -1 = none */
    uint8_t type;
} edge;

typedef struct launch_ref {
    uint32_t stream;
    int64_t ts;
    uint32_t gpu;              /* place in view->gpu */
    uint32_t thread;           /* the launching call's thread */
} launch_ref;

typedef struct graph {
    node *nodes;
    size_t n_nodes, cap_nodes;
    edge *edges;
    size_t n_edges, cap_edges;
    int32_t *start_of, *end_of; /* by local member: node ids, -1 = none */
    size_t cap_members;
} graph;

/* Per-step working arrays, kept across steps (grown, never shrunk). */
enum scratch_slot {
    S_ITEMS, S_ITEMS_TMP, S_SWEEP, S_TREE, S_LOCALS, S_THREAD_INDEX, S_THREAD_FIRST,
    S_ROWS, S_LAST, S_SYNC_DEST, S_SYNC_SRC, S_IN_FIRST, S_OUT_FIRST, S_IN_LIST,
    S_OUT_LIST, S_ORDER, S_INDEG, S_DIST, S_VIA, S_OPEN, S_SEGMENTS,
    S_STACK, S_KIND, S_N
};

typedef struct rank_state {
    const hta_rank_view *v;
    const hta_trace *t;
    hta_cpu_contexts contexts;
    uint8_t *name_flags;
    uint32_t cat_cpu_op, cat_runtime, cat_driver, cat_user_annotation, cat_sync;
    uint32_t name_context_sync, name_stream_sync, name_event_sync, name_stream_wait;
    int32_t *ql_runtime, *ql_kernel; /* by place in view->gpu, -1 = not counted */
    launch_ref *launches;      /* by (stream, ts) */
    size_t n_launches;
    step_window *steps;
    size_t n_steps;
    size_t step_hint;          /* step_at's last answer */
    member *members;           /* grouped by step */
    size_t *step_first;        /* n_steps + 1 offsets */
    graph g;
    int32_t *segment_of;       /* by event: see add_to_segment */
    uint32_t *listed_id;       /* by name: 1 + its name_id, 0 = not listed yet */
    uint32_t n_listed;
    void *scratch[S_N];
    size_t scratch_cap[S_N];   /* in bytes */
    double total[HTA_CP_N_BOUNDS]; /* ns over every step */
    hta_cp_path_fn path_fn;    /* set: paths go to it, not to tables */
    void *path_ctx;
    int path_rc;
} rank_state;

/* The slot's buffer with room for n elements of size bytes, or NULL. */
static void *scratch(rank_state *r, enum scratch_slot slot, size_t n, size_t size)
{
    size_t cap = r->scratch_cap[slot];
    if (hta_grow_array(&r->scratch[slot], &cap, (n + 1) * size, 1))
        return NULL;
    r->scratch_cap[slot] = cap;
    return r->scratch[slot];
}

/* ---- names ------------------------------------------------------------ */

static uint32_t find_id(const hta_strtab *tab, const char *s)
{
    return hta_strtab_find(tab, s, strlen(s));
}

static int classify_names(rank_state *r)
{
    const hta_strtab *names = &r->t->names;
    r->name_flags = calloc(names->count + 1, 1);
    if (!r->name_flags)
        return -1;
    static const char *const LOCK[] = {"cudaHostAlloc", "cudaLaunchKernel", "cudaMemcpyAsync"};
    static const char *const BLOCKING[] = {"cudaDeviceSynchronize", "cudaStreamSynchronize",
                                           "cudaEventQuery", "cudaEventSynchronize",
                                           "cudaMemcpy", "cudaMemcpyAsync"};
    for (uint32_t id = 0; id < names->count; id++) {
        const char *s = hta_strtab_get(names, id);
        uint8_t f = 0;
        for (size_t k = 0; k < sizeof LOCK / sizeof *LOCK; k++)
            f |= strcmp(s, LOCK[k]) == 0 ? N_LOCK : 0;
        for (size_t k = 0; k < sizeof BLOCKING / sizeof *BLOCKING; k++)
            f |= strcmp(s, BLOCKING[k]) == 0 ? N_BLOCKING : 0;
        f |= strstr(s, "forward") ? N_FORWARD : 0;
        f |= strstr(s, "autograd") ? N_AUTOGRAD : 0;
        f |= strstr(s, "DataLoader") ? N_DATA_LOADING : 0;
        f |= strncmp(s, "ProfilerStep#", 13) == 0 ? N_STEP : 0;
        r->name_flags[id] = f;
    }
    const hta_strtab *cats = &r->t->categories;
    r->cat_cpu_op = find_id(cats, "cpu_op");
    r->cat_runtime = find_id(cats, "cuda_runtime");
    r->cat_driver = find_id(cats, "cuda_driver");
    r->cat_user_annotation = find_id(cats, "user_annotation");
    r->cat_sync = find_id(cats, "cuda_sync");
    r->name_context_sync = find_id(names, "Context Sync");
    r->name_stream_sync = find_id(names, "Stream Sync");
    r->name_event_sync = find_id(names, "Event Sync");
    r->name_stream_wait = find_id(names, "Stream Wait Event");
    return 0;
}

static int is_sync_event(const rank_state *r, const hta_event *e)
{
    return e->cat == r->cat_sync;
}

/* A CPU node of HTA's graph: a CPU op, a runtime or driver call, or a
 * data-loading event (HTA's data_load_events, here every name with
 * "DataLoader"). */
static int is_cpu_node(const rank_state *r, const hta_event *e)
{
    return e->cat == r->cat_cpu_op || e->cat == r->cat_runtime || e->cat == r->cat_driver ||
           (r->name_flags[e->name] & N_DATA_LOADING);
}

static uint32_t thread_of(const rank_state *r, const hta_event *e)
{
    return hta_cpu_context_of(&r->contexts, e)->thread;
}

static const hta_event *cpu_by_correlation(const rank_state *r, int64_t correlation)
{
    uint32_t i;
    if (correlation < 0 || !hta_corrmap_get(&r->v->cpu_by_correlation, correlation, &i))
        return NULL;
    return &r->t->events[i];
}

static const hta_event *runtime_of(const rank_state *r, const hta_event *e)
{
    return cpu_by_correlation(r, hta_event_correlation(r->t, e));
}

/* ---- queue length (HTA's series over the whole trace) ----------------- */

/* Sorts v (keys set) stably by key; its index fields carry the payload. */
static int sort_keyed(hta_keyed *v, size_t n, hta_keyed *scratch)
{
    return hta_stable_sort_keyed_using(v, n, scratch);
}

/* The item's time: a launch's (item p) or a kernel start's (n_gpu + p). */
static int64_t item_time(const rank_state *r, const int64_t *launch_ts, size_t index)
{
    size_t ng = r->v->n_gpu;
    return index < ng ? launch_ts[index] : r->v->gpu[index - ng]->ts_ns;
}

/* Orders the items by (stream, time, item): stably by stream, then each
 * stream's items, listed nearly in time order (launches, then kernels, each
 * by start), by (time, item).  scratch holds n. */
static int order_by_stream(rank_state *r, hta_keyed *items, size_t n, hta_keyed *scratch,
                           const int64_t *launch_ts)
{
    const hta_rank_view *v = r->v;
    size_t ng = v->n_gpu;
    for (size_t i = 0; i < n; i++)
        items[i].key = v->gpu[items[i].index % ng]->stream;
    if (sort_keyed(items, n, scratch))
        return -1;
    for (size_t first = 0, end; first < n; first = end) {
        for (end = first + 1; end < n && items[end].key == items[first].key;)
            end++;
        for (size_t i = first; i < end; i++)
            items[i].key = item_time(r, launch_ts, items[i].index);
        if (hta_run_merge_sort_keyed(items + first, end - first, scratch))
            return -1;
    }
    return 0;
}

/* Every counted kernel's launch (item p) and start (item n_gpu + p),
 * ordered by (stream, time, launches first). */
static int count_queues(rank_state *r)
{
    const hta_rank_view *v = r->v;
    size_t ng = v->n_gpu;
    hta_launch_names names = hta_launch_names_find(r->t, HTA_LAUNCH_STATS_APIS);
    r->ql_runtime = malloc((ng + 1) * sizeof *r->ql_runtime);
    r->ql_kernel = malloc((ng + 1) * sizeof *r->ql_kernel);
    hta_keyed *items = malloc((2 * ng + 1) * sizeof *items);
    hta_keyed *scratch = malloc((2 * ng + 1) * sizeof *scratch);
    int64_t *launch_ts = malloc((ng + 1) * sizeof *launch_ts);
    uint32_t *launch_thread = malloc((ng + 1) * sizeof *launch_thread);
    int rc = -1;
    if (!r->ql_runtime || !r->ql_kernel || !items || !scratch || !launch_ts || !launch_thread)
        goto done;
    size_t n = 0, n_launched = 0;
    for (size_t p = 0; p < ng; p++) {
        r->ql_runtime[p] = r->ql_kernel[p] = -1;
        const hta_event *g = v->gpu[p];
        const hta_event *launch = hta_listed_launch(v, &names, g);
        launch_ts[p] = launch ? launch->ts_ns : INT64_MIN;
        if (!launch || is_sync_event(r, g))
            continue;
        launch_thread[p] = thread_of(r, launch);
        items[n++] = (hta_keyed){launch->ts_ns, p};
        n_launched++;
    }
    for (size_t i = 0; i < n_launched; i++)
        items[n++] = (hta_keyed){0, ng + items[i].index};
    if (order_by_stream(r, items, n, scratch, launch_ts))
        goto done;
    r->launches = malloc((n_launched + 1) * sizeof *r->launches);
    if (!r->launches)
        goto done;
    int32_t length = 0;
    for (size_t i = 0; i < n; i++) {
        size_t p = items[i].index % ng;
        if (i == 0 || v->gpu[p]->stream != v->gpu[items[i - 1].index % ng]->stream)
            length = 0;
        int is_kernel = items[i].index >= ng;
        length += is_kernel ? -1 : 1;
        (is_kernel ? r->ql_kernel : r->ql_runtime)[p] = length;
        if (!is_kernel)
            r->launches[r->n_launches++] = (launch_ref){v->gpu[p]->stream, launch_ts[p],
                                                        (uint32_t)p, launch_thread[p]};
    }
    rc = 0;
done:
    free(items);
    free(scratch);
    free(launch_ts);
    free(launch_thread);
    return rc;
}

/* The first launch on stream at or after ts (or after it when strictly). */
static size_t launch_lower_bound(const rank_state *r, uint32_t stream, int64_t ts, int strictly)
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

/* ---- steps ------------------------------------------------------------ */

static int cmp_window(const void *a, const void *b)
{
    const step_window *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The ProfilerStep#N windows in order of start (the step filter has
 * already dropped the last, as HTA's trace does); the whole trace when
 * there is none. */
static int find_steps(rank_state *r)
{
    const hta_trace *t = r->t;
    size_t n = 0;
    for (size_t i = 0; i < t->n_events; i++)
        n += !hta_event_is_gpu(&t->events[i]) && (r->name_flags[t->events[i].name] & N_STEP);
    r->steps = malloc((n + 1) * sizeof *r->steps);
    if (!r->steps)
        return -1;
    for (size_t i = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        if (hta_event_is_gpu(e) || !(r->name_flags[e->name] & N_STEP))
            continue;
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

/* The step whose window holds ts, or -1. */
static long step_at(rank_state *r, int64_t ts)
{
    /* Events come mostly in time order: try the last answer's step first. */
    size_t hint = r->step_hint;
    if (hint < r->n_steps && r->steps[hint].start <= ts && ts <= r->steps[hint].end &&
        (hint + 1 == r->n_steps || r->steps[hint + 1].start > ts))
        return (long)hint;
    size_t lo = 0, hi = r->n_steps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->steps[mid].start <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || ts > r->steps[lo - 1].end)
        return -1;
    r->step_hint = lo - 1;
    return (long)lo - 1;
}

/* Which step an event belongs to, or -1: CPU events with a duration by
 * their start, GPU events with a correlated call by the call's start
 * (syncs waiting on a stream by their own, as HTA keeps them all). */
static long step_of(rank_state *r, const hta_event *e)
{
    if (!hta_event_is_gpu(e) && !is_sync_event(r, e))
        return e->dur_ns > 0 ? step_at(r, e->ts_ns) : -1;
    const hta_event *runtime = runtime_of(r, e);
    if (!runtime)
        return -1;
    if (is_sync_event(r, e) && e->name == r->name_stream_wait)
        return step_at(r, runtime->ts_ns);
    return runtime->dur_ns > 0 ? step_at(r, runtime->ts_ns) : -1;
}

/* Deals the members out to the steps, each step's in order of event
 * index: the graph lists its nodes in that order. */
static int deal_members(rank_state *r)
{
    const hta_trace *t = r->t;
    const hta_rank_view *v = r->v;
    size_t total = t->n_events;
    int32_t *step = malloc((total + 1) * sizeof *step);
    uint32_t *place = malloc((total + 1) * sizeof *place); /* in view->gpu */
    size_t *fill = malloc((r->n_steps + 1) * sizeof *fill);
    r->step_first = calloc(r->n_steps + 2, sizeof *r->step_first);
    int rc = -1;
    if (!step || !place || !fill || !r->step_first)
        goto done;
    for (size_t i = 0; i < total; i++) {
        const hta_event *e = &t->events[i];
        step[i] = hta_event_is_gpu(e) && !is_sync_event(r, e) ? -1 : (int32_t)step_of(r, e);
        place[i] = UINT32_MAX;
    }
    for (size_t p = 0; p < v->n_gpu; p++) {
        const hta_event *g = v->gpu[p];
        if (is_sync_event(r, g))
            continue;
        size_t i = (size_t)(g - t->events);
        step[i] = (int32_t)step_of(r, g);
        place[i] = (uint32_t)p;
    }
    size_t n = 0;
    for (size_t i = 0; i < total; i++)
        if (step[i] >= 0) {
            r->step_first[step[i] + 1]++;
            n++;
        }
    for (size_t s = 0; s < r->n_steps; s++)
        r->step_first[s + 1] += r->step_first[s];
    r->members = malloc((n + 1) * sizeof *r->members);
    if (!r->members)
        goto done;
    memcpy(fill, r->step_first, r->n_steps * sizeof *fill);
    for (size_t i = 0; i < total; i++)
        if (step[i] >= 0)
            r->members[fill[step[i]]++] = (member){(uint32_t)i, place[i]};
    rc = 0;
done:
    free(step);
    free(place);
    free(fill);
    return rc;
}

/* ---- one step's graph ------------------------------------------------- */

typedef struct step_ctx {
    rank_state *r;
    const member *m;           /* in order of event index */
    size_t n;
    hta_keyed *by_time;        /* index 2 * local (+ 1 for the end), by time */
} step_ctx;

static inline int add_edge(graph *g, uint32_t src, uint32_t dst, int type, int zero_weight,
                           int64_t attr)
{
    if (src == dst)
        return 0;
    if (g->n_edges == g->cap_edges &&
        hta_grow_array((void **)&g->edges, &g->cap_edges, g->n_edges + 1, sizeof *g->edges))
        return -1;
    int64_t weight = type == E_DEPENDENCY || type == E_SYNC || zero_weight
                         ? 0
                         : g->nodes[dst].ts - g->nodes[src].ts;
    g->edges[g->n_edges++] = (edge){src, dst, weight, attr, (uint8_t)type};
    return 0;
}

/* Whether a member has nodes: a kernel, or a CPU node (is_cpu_node). */
static int is_noded(const step_ctx *c, const member *mb)
{
    const hta_event *e = &c->r->t->events[mb->ev];
    return mb->gpu != UINT32_MAX ? !is_sync_event(c->r, e) : is_cpu_node(c->r, e);
}

/* The members' starts and ends by time, equal times in order of event, a
 * start before its end: sorted by (time, index) with index 2 * local (+ 1
 * for the end).  They are handed to the sort nearly in order: the CPU
 * events' starts, their ends as a stack of nested calls closes them, then
 * the GPU events' starts and ends. */
static int sort_by_time(step_ctx *c)
{
    const hta_trace *t = c->r->t;
    hta_keyed *v = c->by_time = scratch(c->r, S_ITEMS, 2 * c->n, sizeof *c->by_time);
    hta_keyed *tmp = scratch(c->r, S_ITEMS_TMP, 2 * c->n, sizeof *tmp);
    uint32_t *open = scratch(c->r, S_STACK, c->n, sizeof *open);
    if (!v || !tmp || !open)
        return -1;
    size_t n = 0, depth = 0;
    for (size_t k = 0; k < c->n; k++)
        if (c->m[k].gpu == UINT32_MAX)
            v[n++] = (hta_keyed){t->events[c->m[k].ev].ts_ns, 2 * k};
    for (size_t k = 0; k < c->n; k++) {
        if (c->m[k].gpu != UINT32_MAX)
            continue;
        const hta_event *e = &t->events[c->m[k].ev];
        while (depth && hta_event_end(&t->events[c->m[open[depth - 1]].ev]) <= e->ts_ns) {
            uint32_t top = open[--depth];
            v[n++] = (hta_keyed){hta_event_end(&t->events[c->m[top].ev]), 2 * (size_t)top + 1};
        }
        open[depth++] = (uint32_t)k;
    }
    while (depth) {
        uint32_t top = open[--depth];
        v[n++] = (hta_keyed){hta_event_end(&t->events[c->m[top].ev]), 2 * (size_t)top + 1};
    }
    for (size_t k = 0; k < c->n; k++)
        if (c->m[k].gpu != UINT32_MAX)
            v[n++] = (hta_keyed){t->events[c->m[k].ev].ts_ns, 2 * k};
    for (size_t k = 0; k < c->n; k++)
        if (c->m[k].gpu != UINT32_MAX)
            v[n++] = (hta_keyed){hta_event_end(&t->events[c->m[k].ev]), 2 * k + 1};
    return hta_run_merge_sort_keyed(v, n, tmp);
}

/* The nodes in HTA's order: by time, then event, a start before its end. */
static int build_nodes(step_ctx *c)
{
    rank_state *r = c->r;
    graph *g = &r->g;
    g->n_nodes = g->n_edges = 0;
    size_t cap = g->cap_members;
    if (hta_grow_array((void **)&g->nodes, &g->cap_nodes, 2 * c->n + 1, sizeof *g->nodes) ||
        hta_grow_array((void **)&g->start_of, &cap, c->n + 1, sizeof *g->start_of))
        return -1;
    cap = g->cap_members;
    if (hta_grow_array((void **)&g->end_of, &cap, c->n + 1, sizeof *g->end_of))
        return -1;
    g->cap_members = cap;
    /* Per member, in event order: 1 noded, 2 also a runtime-lock call. */
    uint8_t *kind = scratch(r, S_KIND, c->n, 1);
    if (!kind)
        return -1;
    for (size_t k = 0; k < c->n; k++) {
        const hta_event *e = &r->t->events[c->m[k].ev];
        g->start_of[k] = g->end_of[k] = -1;
        kind[k] = is_noded(c, &c->m[k])
                      ? 1 | (!hta_event_is_gpu(e) && (r->name_flags[e->name] & N_LOCK) ? 2 : 0)
                      : 0;
    }
    size_t n = 0;
    for (size_t i = 0; i < 2 * c->n; i++) {
        size_t k = c->by_time[i].index / 2;
        int is_end = c->by_time[i].index % 2;
        if (!kind[k])
            continue;
        g->nodes[n] = (node){c->by_time[i].key, c->m[k].ev, (uint32_t)k, (uint8_t)!is_end,
                             (uint8_t)(kind[k] >> 1)};
        (is_end ? g->end_of : g->start_of)[k] = (int32_t)n;
        n++;
    }
    g->n_nodes = n;
    return 0;
}

static int is_lock_node(const step_ctx *c, uint32_t id)
{
    return c->r->g.nodes[id].is_lock;
}

/* Runtime calls that take the CUDA runtime lock, across threads: each end
 * waits for the calls that started before it and for the previous end. */
static int add_lock_edges(step_ctx *c)
{
    graph *g = &c->r->g;
    uint32_t *open = scratch(c->r, S_OPEN, g->n_nodes, sizeof *open);
    if (!open)
        return -1;
    size_t n_open = 0;
    long last = -1;
    for (uint32_t id = 0; id < g->n_nodes; id++) {
        if (!is_lock_node(c, id))
            continue;
        if (g->nodes[id].is_start) {
            open[n_open++] = id;
        } else {
            while (n_open) {
                uint32_t prev = open[--n_open];
                int same = g->nodes[prev].ev == g->nodes[id].ev;
                if (add_edge(g, prev, id, same ? E_OPERATOR : E_DEPENDENCY, 0,
                             same ? (int64_t)g->nodes[prev].ev : -1))
                    return -1;
            }
            if (last >= 0 && !g->nodes[last].is_start &&
                add_edge(g, (uint32_t)last, id, E_DEPENDENCY, 0, -1))
                return -1;
        }
        last = id;
    }
    return 0;
}

/* HTA's call-stack order of one thread's starts and ends. */
typedef struct sweep_item {
    int64_t time, dur;
    uint32_t ev;
    uint32_t local;
    int8_t type;               /* +1 start, -1 end */
} sweep_item;

static int cmp_sweep(const void *a, const void *b)
{
    const sweep_item *x = a, *y = b;
    if (x->ev == y->ev)
        return x->type == 1 ? -1 : 1;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    if (x->type == y->type) {
        if (x->type == 1) {
            if (x->dur == y->dur)
                return x->ev < y->ev ? -1 : 1;
            return x->dur < y->dur ? 1 : -1;
        }
        if (x->dur == y->dur)
            return x->ev < y->ev ? 1 : -1;
        return x->dur < y->dur ? -1 : 1;
    }
    if (x->dur > 0 && y->dur > 0)
        return x->type == 1 ? 1 : -1;
    if (x->dur == 0 && y->dur == 0)
        return x->ev < y->ev ? -1 : 1;
    return x->type == 1 ? -1 : 1;
}

/* Puts the 2n items, sorted stably by time, in cmp_sweep's order: each
 * run of equal times by insertion (runs are short: an op and its first
 * child starting together). */
static void order_ties(sweep_item *items, size_t n)
{
    for (size_t i = 1; i < 2 * n; i++) {
        sweep_item x = items[i];
        size_t j = i;
        while (j > 0 && items[j - 1].time == x.time && cmp_sweep(&items[j - 1], &x) > 0) {
            items[j] = items[j - 1];
            j--;
        }
        items[j] = x;
    }
}

typedef struct walk_state {
    long last_node;
    int depth;
    int64_t last_parent;       /* global event, -1 = the root */
} walk_state;

static int shares_lock(const step_ctx *c, uint32_t first, uint32_t second)
{
    return is_lock_node(c, first) && is_lock_node(c, second) &&
           (c->r->g.nodes[first].is_start || !c->r->g.nodes[second].is_start);
}

static int64_t attribution(const graph *g, uint32_t src, uint32_t dst, int64_t parent)
{
    if (g->nodes[src].is_start)
        return g->nodes[src].ev;
    if (!g->nodes[dst].is_start)
        return g->nodes[dst].ev;
    return parent;
}

static int enter_op(step_ctx *c, walk_state *w, uint32_t local, int64_t parent)
{
    graph *g = &c->r->g;
    if (g->start_of[local] < 0)
        return 0;
    uint32_t start = (uint32_t)g->start_of[local];
    if (w->last_node >= 0 && !shares_lock(c, (uint32_t)w->last_node, start)) {
        int type = w->depth == 0 ? E_DEPENDENCY : E_OPERATOR;
        int64_t attr = type == E_OPERATOR
                           ? attribution(g, (uint32_t)w->last_node, start, w->last_parent)
                           : -1;
        if (add_edge(g, (uint32_t)w->last_node, start, type, 0, attr))
            return -1;
    }
    w->last_node = start;
    w->last_parent = parent;
    w->depth++;
    return 0;
}

static int exit_op(step_ctx *c, walk_state *w, uint32_t local, int64_t parent)
{
    graph *g = &c->r->g;
    if (g->end_of[local] < 0)
        return 0;
    uint32_t end = (uint32_t)g->end_of[local];
    if (w->last_node >= 0 && !shares_lock(c, (uint32_t)w->last_node, end)) {
        const hta_event *e = &c->r->t->events[g->nodes[end].ev];
        int blocking = (c->r->name_flags[e->name] & N_BLOCKING) != 0;
        int64_t attr = attribution(g, (uint32_t)w->last_node, end, w->last_parent);
        if (add_edge(g, (uint32_t)w->last_node, end, E_OPERATOR, blocking, attr))
            return -1;
    }
    w->last_node = end;
    w->last_parent = parent;
    w->depth--;
    return 0;
}

/* The call stack of one thread's events (HTA's CallStackGraph: a start's
 * parent is the innermost open event, an end closes the innermost),
 * walked depth first with the graph's edges added on the way.  items:
 * the thread's starts and ends, sorted stably by time. */
static int walk_thread(step_ctx *c, const uint32_t *locals, size_t n, sweep_item *items,
                       int32_t *tree)
{
    order_ties(items, n);
    /* tree: parent, first child, next sibling, last child (by i); -1 none */
    int32_t *parent = tree, *first = tree + n, *next = tree + 2 * n, *lastc = tree + 3 * n;
    int32_t *stack = tree + 4 * n;
    for (size_t i = 0; i < 4 * n; i++)
        tree[i] = -1;
    int32_t root_first = -1, root_last = -1;
    size_t depth = 0;
    for (size_t k = 0; k < 2 * n; k++) {
        int32_t i = (int32_t)items[k].local;
        if (items[k].type == 1) {
            int32_t p = depth ? stack[depth - 1] : -1;
            parent[i] = p;
            int32_t *head = p < 0 ? &root_first : &first[p], *tail = p < 0 ? &root_last : &lastc[p];
            if (*tail < 0)
                *head = i;
            else
                next[*tail] = i;
            *tail = i;
            stack[depth++] = i;
        } else if (depth) {
            depth--;
        }
    }
    walk_state w = {-1, 0, -1};
    /* Iterative depth-first walk: stack holds the open path. */
    int32_t cur = root_first;
    depth = 0;
    while (cur >= 0) {
        int64_t p = parent[cur] < 0 ? -1 : (int64_t)c->m[locals[parent[cur]]].ev;
        if (enter_op(c, &w, locals[cur], p))
            return -1;
        if (first[cur] >= 0) {
            stack[depth++] = cur;
            cur = first[cur];
            continue;
        }
        for (;;) {
            int64_t pp = parent[cur] < 0 ? -1 : (int64_t)c->m[locals[parent[cur]]].ev;
            if (exit_op(c, &w, locals[cur], pp))
                return -1;
            if (next[cur] >= 0) {
                cur = next[cur];
                break;
            }
            if (!depth) {
                cur = -1;
                break;
            }
            cur = stack[--depth];
        }
    }
    return 0;
}

/* Notes th as a thread with events named like the one seen: *only
 * becomes UINT32_MAX - 1 once two threads are seen. */
static void note_thread(uint32_t *only, uint32_t th)
{
    *only = *only == UINT32_MAX || *only == th ? th : UINT32_MAX - 1;
}

/* Each CPU member's thread (UINT32_MAX: none) and place in it, and the
 * threads' members in order (locals from first[th]); first has room for
 * 2 * n_threads + 2. */
static void group_threads(step_ctx *c, uint32_t *group, uint32_t *place, uint32_t *locals,
                          size_t *first)
{
    rank_state *r = c->r;
    const hta_trace *t = r->t;
    uint32_t n_threads = r->contexts.n_threads;
    /* HTA merges the backward thread (the one thread with cpu ops or
     * annotations named "autograd") into the forward one ("forward"). */
    uint32_t fwd = UINT32_MAX, bwd = UINT32_MAX;
    for (size_t k = 0; k < c->n; k++) {
        const hta_event *e = &t->events[c->m[k].ev];
        group[k] = UINT32_MAX;
        if (c->m[k].gpu != UINT32_MAX || hta_event_is_gpu(e))
            continue;
        group[k] = thread_of(r, e);
        if (e->cat != r->cat_cpu_op && e->cat != r->cat_user_annotation)
            continue;
        if (r->name_flags[e->name] & N_FORWARD)
            note_thread(&fwd, group[k]);
        if (r->name_flags[e->name] & N_AUTOGRAD)
            note_thread(&bwd, group[k]);
    }
    fwd = fwd == UINT32_MAX - 1 ? UINT32_MAX : fwd;
    bwd = bwd == UINT32_MAX - 1 ? UINT32_MAX : bwd;
    memset(first, 0, ((size_t)n_threads + 2) * sizeof *first);
    for (size_t k = 0; k < c->n; k++) {
        if (group[k] == UINT32_MAX)
            continue;
        if (group[k] == bwd && fwd != UINT32_MAX)
            group[k] = fwd;
        first[group[k] + 1]++;
    }
    for (uint32_t th = 0; th < n_threads; th++)
        first[th + 1] += first[th];
    size_t *fill = first + n_threads + 1;
    memcpy(fill, first, (size_t)n_threads * sizeof *fill);
    for (size_t k = 0; k < c->n; k++)
        if (group[k] != UINT32_MAX) {
            place[k] = (uint32_t)(fill[group[k]] - first[group[k]]);
            locals[fill[group[k]]++] = (uint32_t)k;
        }
}

static int add_call_stack_edges(step_ctx *c)
{
    rank_state *r = c->r;
    const hta_trace *t = r->t;
    uint32_t n_threads = r->contexts.n_threads;
    size_t n = c->n;
    size_t *first = scratch(r, S_THREAD_FIRST, 2 * (size_t)n_threads + 2, sizeof *first);
    uint32_t *group = scratch(r, S_THREAD_INDEX, 2 * n, sizeof *group);
    uint32_t *locals = scratch(r, S_LOCALS, n, sizeof *locals);
    sweep_item *items = scratch(r, S_SWEEP, 2 * n, sizeof *items);
    int32_t *tree = scratch(r, S_TREE, 5 * n, sizeof *tree);
    if (!first || !group || !locals || !items || !tree)
        return -1;
    uint32_t *place = group + n;
    group_threads(c, group, place, locals, first);
    /* Each thread's starts and ends in the step's order by time. */
    size_t *fill = first + n_threads + 1;
    for (uint32_t th = 0; th < n_threads; th++)
        fill[th] = 2 * first[th];
    for (size_t i = 0; i < 2 * n; i++) {
        size_t k = c->by_time[i].index / 2;
        if (group[k] == UINT32_MAX)
            continue;
        const hta_event *e = &t->events[c->m[k].ev];
        int is_end = c->by_time[i].index % 2;
        items[fill[group[k]]++] = (sweep_item){c->by_time[i].key, e->dur_ns, c->m[k].ev,
                                               place[k], (int8_t)(is_end ? -1 : 1)};
    }
    for (uint32_t th = 0; th < n_threads; th++)
        if (first[th + 1] > first[th] &&
            walk_thread(c, locals + first[th], first[th + 1] - first[th], items + 2 * first[th],
                        tree))
            return -1;
    return 0;
}

/* The local member of global event ev, or -1. */
static long local_of(const step_ctx *c, uint32_t ev)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->m[mid].ev < ev)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->n && c->m[lo].ev == ev ? (long)lo : -1;
}

static long node_of_event(const step_ctx *c, const hta_event *e, int end)
{
    if (!e)
        return -1;
    long k = local_of(c, (uint32_t)(e - c->r->t->events));
    if (k < 0)
        return -1;
    return (end ? c->r->g.end_of : c->r->g.start_of)[k];
}

/* The kernel launched last on stream up to ts, or NULL. */
static const hta_event *kernel_before(const rank_state *r, uint32_t stream, int64_t ts)
{
    size_t i = launch_lower_bound(r, stream, ts, 1);
    if (i == 0 || r->launches[i - 1].stream != stream)
        return NULL;
    return r->v->gpu[r->launches[i - 1].gpu];
}

/* The kernel the thread launches next on stream from ts on, or NULL. */
static const hta_event *kernel_after(const rank_state *r, uint32_t stream, int64_t ts,
                                     uint32_t thread)
{
    for (size_t i = launch_lower_bound(r, stream, ts, 0);
         i < r->n_launches && r->launches[i].stream == stream; i++)
        if (r->launches[i].thread == thread)
            return r->v->gpu[r->launches[i].gpu];
    return NULL;
}

/* The kernel a sync's recorded CUDA event waits for: the last launched on
 * the recorded stream before the cudaEventRecord call. */
static const hta_event *recorded_kernel(const rank_state *r, const hta_event *sync)
{
    if (!(sync->flags & HTA_EVENT_HAS_WAIT))
        return NULL;
    const hta_event_extra *x = hta_trace_extra(r->t, sync);
    const hta_event *record = cpu_by_correlation(r, x->wait_record_correlation);
    if (!record || x->wait_on_stream < 0)
        return NULL;
    return kernel_before(r, (uint32_t)x->wait_on_stream, record->ts_ns);
}

/* A kernel or sync in the pass's order: by time, then syncs by event,
 * then kernels by their place in view->gpu. */
typedef struct kernel_row {
    int64_t sort_ts;
    uint64_t tie;
    uint32_t local;
} kernel_row;

static int cmp_kernel_row(const void *a, const void *b)
{
    const kernel_row *x = a, *y = b;
    if (x->sort_ts != y->sort_ts)
        return x->sort_ts < y->sort_ts ? -1 : 1;
    return x->tie < y->tie ? -1 : x->tie > y->tie;
}

typedef struct stream_last {
    uint32_t stream;
    uint32_t node;
} stream_last;

typedef struct kernel_pass {
    stream_last *last;
    size_t n_last;
    uint32_t *sync_dest, *sync_src; /* pending GPU -> GPU waits: global events */
    size_t n_sync;
} kernel_pass;

static long last_on(const kernel_pass *k, uint32_t stream)
{
    for (size_t i = 0; i < k->n_last; i++)
        if (k->last[i].stream == stream)
            return k->last[i].node;
    return -1;
}

static void set_last(kernel_pass *k, uint32_t stream, uint32_t id)
{
    for (size_t i = 0; i < k->n_last; i++)
        if (k->last[i].stream == stream) {
            k->last[i].node = id;
            return;
        }
    k->last[k->n_last++] = (stream_last){stream, id};
}

static int handle_sync(step_ctx *c, kernel_pass *k, const hta_event *e)
{
    rank_state *r = c->r;
    graph *g = &r->g;
    const hta_event *runtime = runtime_of(r, e);
    long runtime_end = node_of_event(c, runtime, 1);
    if (e->name == r->name_stream_wait || e->name == r->name_event_sync) {
        const hta_event *src = recorded_kernel(r, e);
        if (!src)
            return 0;
        if (e->name == r->name_stream_wait) {
            const hta_event *dest =
                runtime ? kernel_after(r, e->stream, runtime->ts_ns, thread_of(r, runtime)) : NULL;
            if (dest) {
                k->sync_dest[k->n_sync] = (uint32_t)(dest - r->t->events);
                k->sync_src[k->n_sync++] = (uint32_t)(src - r->t->events);
            }
            return 0;
        }
        long src_end = node_of_event(c, src, 1);
        if (src_end >= 0 && runtime_end >= 0)
            return add_edge(g, (uint32_t)src_end, (uint32_t)runtime_end, E_SYNC, 0, -1);
        return 0;
    }
    if (runtime_end < 0)
        return 0;
    if (e->name == r->name_context_sync) {
        for (size_t i = 0; i < k->n_last; i++)
            if (add_edge(g, k->last[i].node, (uint32_t)runtime_end, E_SYNC, 0, -1))
                return -1;
    } else if (e->name == r->name_stream_sync) {
        long last = last_on(k, e->stream);
        if (last >= 0 && add_edge(g, (uint32_t)last, (uint32_t)runtime_end, E_SYNC, 0, -1))
            return -1;
    }
    return 0;
}

static int handle_kernel(step_ctx *c, kernel_pass *k, uint32_t local)
{
    rank_state *r = c->r;
    graph *g = &r->g;
    const member *mb = &c->m[local];
    const hta_event *e = &r->t->events[mb->ev];
    if (g->start_of[local] < 0)
        return 0;
    uint32_t start = (uint32_t)g->start_of[local], end = (uint32_t)g->end_of[local];
    if (add_edge(g, start, end, E_OPERATOR, 0, mb->ev))
        return -1;
    const hta_event *runtime = runtime_of(r, e);
    long sync_end = -1;
    int has_sync = 0;
    for (size_t i = 0; i < k->n_sync; i++) {
        if (k->sync_dest[i] != mb->ev)
            continue;
        has_sync = 1;
        sync_end = node_of_event(c, &r->t->events[k->sync_src[i]], 1);
        k->sync_dest[i] = k->sync_dest[--k->n_sync];
        k->sync_src[i] = k->sync_src[k->n_sync];
        if (sync_end < 0)
            has_sync = 0;
        else if (add_edge(g, (uint32_t)sync_end, start, E_SYNC, 0, -1))
            return -1;
        break;
    }
    long last = last_on(k, e->stream);
    int64_t launch_ts = runtime ? runtime->ts_ns : INT64_MIN;
    if (r->ql_runtime[mb->gpu] == 1 && r->ql_kernel[mb->gpu] == 0 &&
        (last < 0 || g->nodes[last].ts < launch_ts) &&
        (!has_sync || g->nodes[sync_end].ts < launch_ts)) {
        long launch_start = node_of_event(c, runtime, 0);
        if (launch_start >= 0 && add_edge(g, (uint32_t)launch_start, start, E_LAUNCH, 0, -1))
            return -1;
    } else if (last >= 0 && g->nodes[start].ts - g->nodes[last].ts < KERNEL_KERNEL_DELAY_NS &&
               (!has_sync || g->nodes[sync_end].ts < g->nodes[last].ts)) {
        if (add_edge(g, (uint32_t)last, start, E_KERNEL_KERNEL, 0,
                     (int64_t)g->nodes[last].ev))
            return -1;
    }
    set_last(k, e->stream, end);
    return 0;
}

static int add_kernel_edges(step_ctx *c)
{
    rank_state *r = c->r;
    const hta_trace *t = r->t;
    kernel_row *rows = scratch(r, S_ROWS, c->n, sizeof *rows);
    kernel_pass k = {0};
    size_t n_rows = 0, n_sync = 0;
    if (!rows)
        return -1;
    for (size_t i = 0; i < c->n; i++) {
        const member *mb = &c->m[i];
        const hta_event *e = &t->events[mb->ev];
        int sync = is_sync_event(r, e);
        if (mb->gpu == UINT32_MAX && !sync)
            continue;
        n_sync += sync;
        uint64_t tie = mb->gpu == UINT32_MAX ? mb->ev : (UINT64_C(1) << 32 | mb->gpu);
        rows[n_rows++] = (kernel_row){sync ? hta_event_end(e) : e->ts_ns, tie, (uint32_t)i};
    }
    k.last = scratch(r, S_LAST, n_rows, sizeof *k.last);
    k.sync_dest = scratch(r, S_SYNC_DEST, n_sync, sizeof *k.sync_dest);
    k.sync_src = scratch(r, S_SYNC_SRC, n_sync, sizeof *k.sync_src);
    if (!k.last || !k.sync_dest || !k.sync_src)
        return -1;
    qsort(rows, n_rows, sizeof *rows, cmp_kernel_row);
    for (size_t i = 0; i < n_rows; i++) {
        const hta_event *e = &t->events[c->m[rows[i].local].ev];
        if (is_sync_event(r, e) ? handle_sync(c, &k, e) : handle_kernel(c, &k, rows[i].local))
            return -1;
    }
    return 0;
}

/* ---- longest path ----------------------------------------------------- */

typedef struct path {
    uint32_t *edges;           /* edge ids, from the path's start */
    size_t n;
    int ok;                    /* the graph had no cycle */
} path;

/* Lists each node's edges (ids in order of insertion) from first[v] to
 * first[v + 1], by their dst (incoming) or src (outgoing): counted,
 * summed, then placed from the last edge back. */
static void list_edges(const graph *g, int incoming, uint32_t *first, uint32_t *list)
{
    size_t nv = g->n_nodes, ne = g->n_edges;
    memset(first, 0, (nv + 1) * sizeof *first);
    if (incoming) {
        for (size_t i = 0; i < ne; i++)
            first[g->edges[i].dst]++;
    } else {
        for (size_t i = 0; i < ne; i++)
            first[g->edges[i].src]++;
    }
    for (size_t v = 1; v <= nv; v++)
        first[v] += first[v - 1];
    if (incoming) {
        for (size_t i = ne; i-- > 0;)
            list[--first[g->edges[i].dst]] = (uint32_t)i;
    } else {
        for (size_t i = ne; i-- > 0;)
            list[--first[g->edges[i].src]] = (uint32_t)i;
    }
}

/* Kahn's topological order, generation by generation as networkx visits
 * the nodes, into order; 0 when the graph has a cycle. */
static int kahn_order(rank_state *r, const uint32_t *in_first, uint32_t *order)
{
    const graph *g = &r->g;
    size_t nv = g->n_nodes;
    uint32_t *out_first = scratch(r, S_OUT_FIRST, nv + 1, sizeof *out_first);
    uint32_t *out_list = scratch(r, S_OUT_LIST, g->n_edges, sizeof *out_list);
    uint32_t *indeg = scratch(r, S_INDEG, nv, sizeof *indeg);
    if (!out_first || !out_list || !indeg)
        return -1;
    list_edges(g, 0, out_first, out_list);
    size_t head = 0, tail = 0;
    for (size_t v = 0; v < nv; v++) {
        indeg[v] = in_first[v + 1] - in_first[v];
        if (indeg[v] == 0)
            order[tail++] = (uint32_t)v;
    }
    while (head < tail) {
        uint32_t v = order[head++];
        for (uint32_t j = out_first[v]; j < out_first[v + 1]; j++) {
            uint32_t w = g->edges[out_list[j]].dst;
            if (--indeg[w] == 0)
                order[tail++] = w;
        }
    }
    return tail == nv;
}

/* Node v's distance: its longest predecessor's plus the edge (the first
 * such in insertion order), 0 and no edge when none is positive. */
static void relax(const graph *g, const uint32_t *in_first, const uint32_t *in_list,
                  int64_t *dist, int64_t *via, uint32_t v)
{
    int64_t d = 0, from = -1;
    int any = 0;
    for (uint32_t j = in_first[v]; j < in_first[v + 1]; j++) {
        const edge *e = &g->edges[in_list[j]];
        /* HTA zeroes a weight of -1 us or less before the search. */
        int64_t w = e->weight <= -1000 ? 0 : e->weight;
        int64_t cand = dist[e->src] + w;
        if (!any || cand > d) {
            d = cand;
            from = in_list[j];
            any = 1;
        }
    }
    if (!any || d < 0) {
        d = 0;
        from = -1;
    }
    dist[v] = d;
    via[v] = from;
}

/* networkx's dag_longest_path on the graph, in O(V + E): distances in
 * topological order, the path ending at the first node of greatest
 * distance in Kahn's order.  Most steps' edges all go forward in node
 * order (time): node order is then topological, and Kahn's order is
 * needed only when several nodes share the greatest distance. */
static int longest_path(rank_state *r, path *out)
{
    const graph *g = &r->g;
    size_t nv = g->n_nodes, ne = g->n_edges;
    out->n = 0;
    out->ok = 1;
    uint32_t *in_first = scratch(r, S_IN_FIRST, nv + 1, sizeof *in_first);
    uint32_t *in_list = scratch(r, S_IN_LIST, ne, sizeof *in_list);
    uint32_t *order = scratch(r, S_ORDER, nv, sizeof *order);
    int64_t *dist = scratch(r, S_DIST, nv, sizeof *dist);
    int64_t *via = scratch(r, S_VIA, nv, sizeof *via); /* edge id, -1 = none */
    if (!in_first || !in_list || !order || !dist || !via)
        return -1;
    list_edges(g, 1, in_first, in_list);
    int forward = 1;
    for (size_t i = 0; i < ne && forward; i++)
        forward = g->edges[i].src < g->edges[i].dst;
    int have_order = !forward;
    if (have_order) {
        int acyclic = kahn_order(r, in_first, order);
        if (acyclic < 0)
            return -1;
        if (!acyclic) {
            out->ok = 0;
            return 0;
        }
    }
    int64_t best = INT64_MIN;
    long best_v = -1;
    size_t n_best = 0;
    for (size_t i = 0; i < nv; i++) {
        uint32_t v = have_order ? order[i] : (uint32_t)i;
        relax(g, in_first, in_list, dist, via, v);
        if (dist[v] > best) {
            best = dist[v];
            best_v = v;
            n_best = 0;
        }
        n_best += dist[v] == best;
    }
    if (n_best > 1 && !have_order) {
        if (kahn_order(r, in_first, order) < 0)
            return -1;
        for (size_t i = 0; i < nv; i++)
            if (dist[order[i]] == best) {
                best_v = order[i];
                break;
            }
    }
    if (best_v >= 0) {
        out->edges = realloc(out->edges, (nv + 1) * sizeof *out->edges);
        if (!out->edges)
            return -1;
        for (long v = best_v; via[v] >= 0; v = g->edges[via[v]].src)
            out->edges[out->n++] = (uint32_t)via[v];
        for (size_t i = 0; i < out->n / 2; i++) {
            uint32_t x = out->edges[i];
            out->edges[i] = out->edges[out->n - 1 - i];
            out->edges[out->n - 1 - i] = x;
        }
    }
    return 0;
}

/* ---- results ---------------------------------------------------------- */

static hta_cp_bound bound_of(const rank_state *r, const edge *e)
{
    if (e->type == E_KERNEL_KERNEL)
        return HTA_CP_KERNEL_KERNEL;
    if (e->type == E_LAUNCH)
        return HTA_CP_KERNEL_LAUNCH;
    if (e->type != E_OPERATOR || e->attr < 0)
        return e->type == E_OPERATOR ? HTA_CP_CPU : HTA_CP_NONE;
    const hta_event *ev = &r->t->events[e->attr];
    if (!hta_event_is_gpu(ev))
        return r->name_flags[ev->name] & N_DATA_LOADING ? HTA_CP_DATA_LOADING : HTA_CP_CPU;
    return ev->kernel_type == HTA_KT_COMMUNICATION ? HTA_CP_GPU_COMMUNICATION
                                                   : HTA_CP_GPU_COMPUTE;
}

static const hta_column STEP_COLUMNS[] = {
    {"rank", HTA_COL_I64},
    {"step", HTA_COL_I64},
    {"start_us", HTA_COL_F64},
    {"end_us", HTA_COL_F64},
    {"path_us", HTA_COL_F64},
    {"graph_ok", HTA_COL_I64},
    {"nodes", HTA_COL_I64},
    {"edges", HTA_COL_I64},
    {"bound_by", HTA_COL_STR},
    {"cpu_bound_us", HTA_COL_F64},
    {"data_loading_us", HTA_COL_F64},
    {"gpu_compute_bound_us", HTA_COL_F64},
    {"gpu_communication_bound_us", HTA_COL_F64},
    {"gpu_kernel_kernel_overhead_us", HTA_COL_F64},
    {"gpu_kernel_launch_overhead_us", HTA_COL_F64},
    {"cpu_bound_pct", HTA_COL_F64},
    {"data_loading_pct", HTA_COL_F64},
    {"gpu_compute_bound_pct", HTA_COL_F64},
    {"gpu_communication_bound_pct", HTA_COL_F64},
    {"gpu_kernel_kernel_overhead_pct", HTA_COL_F64},
    {"gpu_kernel_launch_overhead_pct", HTA_COL_F64},
};

/* A segment's event is named by an id into the rank's /critical_path_names
 * rows, not by its text: the table holds ten rows per step, and strings
 * drawn from a small vocabulary keep it written where it was computed
 * (output/hdf5_in_place.c), with no variable-length string per row. */
static const hta_column SEGMENT_COLUMNS[] = {
    {"rank", HTA_COL_I64},   {"step", HTA_COL_I64},       {"position", HTA_COL_I64},
    {"name_id", HTA_COL_I64}, {"type", HTA_COL_STR},      {"bound_by", HTA_COL_STR},
    {"ts_us", HTA_COL_F64},  {"time_us", HTA_COL_F64},
};

static const hta_column NAME_COLUMNS[] = {
    {"rank", HTA_COL_I64},
    {"name_id", HTA_COL_I64},
    {"name", HTA_COL_STR},
};

typedef struct segment {
    int64_t attr;              /* event the time is put down to, -1 = none */
    uint8_t type;
    uint8_t bound;
    int64_t time;
    int32_t next;              /* the next segment of the same event, -1 = none */
} segment;

/* Whether x comes before y in the table: longer, then by event and type. */
static int segment_before(const segment *x, const segment *y)
{
    if (x->time != y->time)
        return x->time > y->time;
    if (x->attr != y->attr)
        return x->attr < y->attr;
    return x->type < y->type;
}

/* Adds an edge's time to its (event, type) segment: segment_of[event] is
 * the event's first segment when it points at one of this step's
 * segments for that event, whatever it held before (so it is never
 * cleared). */
static void add_to_segment(rank_state *r, segment *s, size_t *n, int32_t *none, const edge *e)
{
    int32_t *head = e->attr < 0 ? &none[e->type] : &r->segment_of[e->attr];
    int32_t i = *head;
    if (e->attr >= 0 && (i < 0 || (size_t)i >= *n || s[i].attr != e->attr))
        i = -1;
    int32_t first = i;
    for (; i >= 0; i = s[i].next)
        if (s[i].type == e->type) {
            s[i].time += e->weight;
            return;
        }
    s[*n] = (segment){e->attr, e->type, (uint8_t)bound_of(r, e), e->weight, first};
    *head = (int32_t)(*n)++;
}

/* The segment's name id, numbered by first use in the rank's rows so that
 * it does not depend on how the trace was parsed; a name's first use adds
 * its /critical_path_names row.  -1 for time put down to no event. */
static int64_t listed_name_id(rank_state *r, const hta_event *ev, hta_tableset *out)
{
    if (!ev)
        return -1;
    if (!r->listed_id && !(r->listed_id = calloc(r->t->names.count + 1, sizeof *r->listed_id)))
        return -2;
    if (r->listed_id[ev->name])
        return r->listed_id[ev->name] - 1;
    hta_table *tab = HTA_TABLE(out, "critical_path_names", NAME_COLUMNS);
    if (!tab)
        return -2;
    hta_row_builder row = hta_table_add_row(tab);
    hta_row_put_i64(&row, r->v->rank_key);
    hta_row_put_i64(&row, (int64_t)r->n_listed);
    hta_row_put_str(&row, hta_event_name(r->t, ev));
    if (hta_row_done(&row))
        return -2;
    r->listed_id[ev->name] = ++r->n_listed;
    return (int64_t)r->n_listed - 1;
}

/* The path's time per event (and edge type), longest first. */
static int emit_segments(rank_state *r, const step_window *w, const path *p, hta_tableset *out)
{
    const graph *g = &r->g;
    segment *s = scratch(r, S_SEGMENTS, p->n, sizeof *s);
    if (!r->segment_of)
        r->segment_of = calloc(r->t->n_events + 1, sizeof *r->segment_of);
    if (!s || !r->segment_of)
        return -1;
    int32_t none[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    size_t m = 0;
    for (size_t i = 0; i < p->n; i++) {
        const edge *e = &g->edges[p->edges[i]];
        if (e->weight > 0)
            add_to_segment(r, s, &m, none, e);
    }
    /* The first TOP_SEGMENTS in table order, by insertion. */
    size_t top[TOP_SEGMENTS], n_top = 0;
    for (size_t i = 0; i < m; i++) {
        if (n_top == TOP_SEGMENTS && !segment_before(&s[i], &s[top[n_top - 1]]))
            continue;
        size_t j = n_top < TOP_SEGMENTS ? n_top++ : n_top - 1;
        for (; j > 0 && segment_before(&s[i], &s[top[j - 1]]); j--)
            top[j] = top[j - 1];
        top[j] = i;
    }
    hta_table *tab = HTA_TABLE(out, "critical_path_events", SEGMENT_COLUMNS);
    int rc = tab ? 0 : -1;
    for (size_t i = 0; i < n_top && !rc; i++) {
        const segment *sg = &s[top[i]];
        const hta_event *ev = sg->attr >= 0 ? &r->t->events[sg->attr] : NULL;
        int64_t name_id = listed_name_id(r, ev, out);
        if (name_id < -1)
            return -1;
        hta_row_builder row = hta_table_add_row(tab);
        hta_row_put_i64(&row, r->v->rank_key);
        hta_row_put_i64(&row, w->number);
        hta_row_put_i64(&row, (int64_t)i + 1);
        hta_row_put_i64(&row, name_id);
        hta_row_put_str(&row, EDGE_TYPE_NAMES[sg->type]);
        hta_row_put_str(&row, sg->bound < HTA_CP_N_BOUNDS ? hta_cp_bound_names[sg->bound] : "");
        hta_row_put_f64(&row, ev ? hta_ns_to_us(ev->ts_ns) : 0.0);
        hta_row_put_f64(&row, hta_ns_to_us(sg->time));
        rc = hta_row_done(&row);
    }
    return rc;
}

static int emit_step(rank_state *r, const step_window *w, const path *p, hta_tableset *out)
{
    const graph *g = &r->g;
    int64_t by[HTA_CP_N_BOUNDS + 1] = {0};
    int64_t total = 0;
    for (size_t i = 0; i < p->n; i++) {
        const edge *e = &g->edges[p->edges[i]];
        by[bound_of(r, e)] += e->weight;
        total += e->weight;
    }
    int top = -1;
    for (int b = 0; b < HTA_CP_N_BOUNDS; b++) {
        r->total[b] += (double)by[b];
        if (by[b] > 0 && (top < 0 || by[b] > by[top]))
            top = b;
    }
    hta_table *tab = HTA_TABLE(out, "critical_path", STEP_COLUMNS);
    if (!tab)
        return -1;
    hta_row_builder row = hta_table_add_row(tab);
    hta_row_put_i64(&row, r->v->rank_key);
    hta_row_put_i64(&row, w->number);
    hta_row_put_f64(&row, hta_ns_to_us(w->start));
    hta_row_put_f64(&row, hta_ns_to_us(w->end));
    hta_row_put_f64(&row, hta_ns_to_us(total));
    hta_row_put_i64(&row, p->ok);
    hta_row_put_i64(&row, (int64_t)g->n_nodes);
    hta_row_put_i64(&row, (int64_t)g->n_edges);
    hta_row_put_str(&row, top >= 0 ? hta_cp_bound_names[top] : "");
    for (int b = 0; b < HTA_CP_N_BOUNDS; b++)
        hta_row_put_f64(&row, hta_ns_to_us(by[b]));
    for (int b = 0; b < HTA_CP_N_BOUNDS; b++)
        hta_row_put_f64(&row, total > 0 ? 100.0 * (double)by[b] / (double)total : 0.0);
    return hta_row_done(&row) || emit_segments(r, w, p, out);
}

/* Gives a step's path to the caller of hta_critical_path_each. */
static int hand_path(rank_state *r, const step_window *w, const path *p)
{
    const graph *g = &r->g;
    hta_cp_point *points = malloc((p->n + 2) * sizeof *points);
    if (!points)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++) {
        const edge *e = &g->edges[p->edges[i]];
        if (i == 0)
            points[n++] = (hta_cp_point){&r->t->events[g->nodes[e->src].ev], g->nodes[e->src].ts,
                                         g->nodes[e->src].is_start};
        points[n++] = (hta_cp_point){&r->t->events[g->nodes[e->dst].ev], g->nodes[e->dst].ts,
                                     g->nodes[e->dst].is_start};
    }
    r->path_rc = r->path_fn(r->path_ctx, w->number, w->start, w->end, points, n);
    free(points);
    return r->path_rc ? -1 : 0;
}

static int run_step(rank_state *r, size_t s, path *p, hta_tableset *out)
{
    step_ctx c = {r, r->members + r->step_first[s], r->step_first[s + 1] - r->step_first[s],
                  NULL};
    int rc = sort_by_time(&c) || build_nodes(&c) || add_lock_edges(&c) ||
             add_call_stack_edges(&c) || add_kernel_edges(&c) || longest_path(r, p) ||
             (r->path_fn ? hand_path(r, &r->steps[s], p) : emit_step(r, &r->steps[s], p, out));
    return rc ? -1 : 0;
}

static void rank_state_free(rank_state *r)
{
    hta_cpu_contexts_free(&r->contexts);
    free(r->name_flags);
    free(r->ql_runtime);
    free(r->ql_kernel);
    free(r->launches);
    free(r->steps);
    free(r->members);
    free(r->step_first);
    free(r->g.nodes);
    free(r->g.edges);
    free(r->g.start_of);
    free(r->g.end_of);
    free(r->segment_of);
    free(r->listed_id);
    for (int i = 0; i < S_N; i++)
        free(r->scratch[i]);
}

/* Sets the rank's state up and runs every step; -1 when out of memory or
 * a path callback stopped. */
static int run_steps(rank_state *r, hta_tableset *out)
{
    path p = {0};
    int rc = hta_cpu_contexts_build(&r->contexts, r->t) || classify_names(r) ||
             count_queues(r) || find_steps(r) || deal_members(r);
    for (size_t s = 0; s < r->n_steps && !rc; s++)
        rc = run_step(r, s, &p, out);
    free(p.edges);
    return rc ? -1 : 0;
}

int hta_critical_path_each(const hta_rank_view *view, hta_cp_path_fn fn, void *ctx)
{
    rank_state r = {.v = view, .t = view->trace, .path_fn = fn, .path_ctx = ctx};
    int rc = run_steps(&r, NULL);
    rank_state_free(&r);
    return r.path_rc ? r.path_rc : rc;
}

int hta_critical_path(const hta_rank_view *view, const hta_options *opt, hta_tableset *out,
                      hta_error *err)
{
    if (!opt->critical_path)
        return 0;
    rank_state r = {.v = view, .t = view->trace};
    int rc = -1;
    if (run_steps(&r, out))
        goto done;
    double all = 0;
    for (int b = 0; b < HTA_CP_N_BOUNDS; b++)
        all += r.total[b];
    if (r.n_steps && all > 0 &&
        (hta_emit_metric(out, view->rank_key, "critical_path_cpu_bound_pct",
                         100.0 * r.total[HTA_CP_CPU] / all) ||
         hta_emit_metric(out, view->rank_key, "critical_path_comm_bound_pct",
                         100.0 * r.total[HTA_CP_GPU_COMMUNICATION] / all)))
        goto done;
    rc = 0;
done:
    rank_state_free(&r);
    return rc ? hta_fail(err, "out of memory in the critical path") : 0;
}
