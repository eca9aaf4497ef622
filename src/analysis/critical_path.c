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
    double total[HTA_CP_N_BOUNDS]; /* ns over every step */
    hta_cp_path_fn path_fn;    /* set: paths go to it, not to tables */
    void *path_ctx;
    int path_rc;
} rank_state;

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * size);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
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

/* Every counted kernel's launch (item p) and start (item n_gpu + p),
 * ordered by (stream, time, launches first): two stable passes, the
 * minor key first. */
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
        items[n++] = (hta_keyed){v->gpu[items[i].index]->ts_ns, ng + items[i].index};
    if (sort_keyed(items, n, scratch))
        goto done;
    for (size_t i = 0; i < n; i++)
        items[i].key = v->gpu[items[i].index % (ng ? ng : 1)]->stream;
    if (sort_keyed(items, n, scratch))
        goto done;
    r->launches = malloc((n_launched + 1) * sizeof *r->launches);
    if (!r->launches)
        goto done;
    int32_t length = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || items[i].key != items[i - 1].key)
            length = 0;
        size_t p = items[i].index % ng;
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

static int deal_members(rank_state *r)
{
    const hta_trace *t = r->t;
    const hta_rank_view *v = r->v;
    size_t total = t->n_events;
    int32_t *step = malloc((total + 1) * sizeof *step);
    r->step_first = calloc(r->n_steps + 2, sizeof *r->step_first);
    if (!step || !r->step_first) {
        free(step);
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < total; i++) {
        const hta_event *e = &t->events[i];
        step[i] = hta_event_is_gpu(e) && !is_sync_event(r, e) ? -1 : (int32_t)step_of(r, e);
        if (step[i] >= 0) {
            r->step_first[step[i] + 1]++;
            n++;
        }
    }
    int32_t *gpu_step = malloc((v->n_gpu + 1) * sizeof *gpu_step);
    if (!gpu_step) {
        free(step);
        return -1;
    }
    for (size_t p = 0; p < v->n_gpu; p++) {
        const hta_event *g = v->gpu[p];
        gpu_step[p] = is_sync_event(r, g) ? -1 : (int32_t)step_of(r, g);
        if (gpu_step[p] >= 0) {
            r->step_first[gpu_step[p] + 1]++;
            n++;
        }
    }
    for (size_t s = 0; s < r->n_steps; s++)
        r->step_first[s + 1] += r->step_first[s];
    r->members = malloc((n + 1) * sizeof *r->members);
    size_t *fill = malloc((r->n_steps + 1) * sizeof *fill);
    if (!r->members || !fill) {
        free(step);
        free(gpu_step);
        free(fill);
        return -1;
    }
    memcpy(fill, r->step_first, r->n_steps * sizeof *fill);
    for (size_t i = 0; i < total; i++)
        if (step[i] >= 0)
            r->members[fill[step[i]]++] = (member){(uint32_t)i, UINT32_MAX};
    for (size_t p = 0; p < v->n_gpu; p++)
        if (gpu_step[p] >= 0)
            r->members[fill[gpu_step[p]]++] =
                (member){(uint32_t)(v->gpu[p] - t->events), (uint32_t)p};
    free(step);
    free(gpu_step);
    free(fill);
    return 0;
}

/* ---- one step's graph ------------------------------------------------- */

typedef struct step_ctx {
    rank_state *r;
    const member *m;
    size_t n;
    uint32_t *local_sorted;    /* members' locals ordered by event index */
} step_ctx;

static int add_edge(graph *g, uint32_t src, uint32_t dst, int type, int zero_weight,
                    int64_t attr)
{
    if (src == dst)
        return 0;
    if (grow((void **)&g->edges, &g->cap_edges, g->n_edges + 1, sizeof *g->edges))
        return -1;
    int64_t weight = type == E_DEPENDENCY || type == E_SYNC || zero_weight
                         ? 0
                         : g->nodes[dst].ts - g->nodes[src].ts;
    g->edges[g->n_edges++] = (edge){src, dst, weight, attr, (uint8_t)type};
    return 0;
}

/* The nodes in HTA's order: by time, then event, a start before its end
 * (listed so, by event, then stably sorted by time). */
static int build_nodes(step_ctx *c)
{
    rank_state *r = c->r;
    graph *g = &r->g;
    const hta_trace *t = r->t;
    g->n_nodes = g->n_edges = 0;
    size_t cap = g->cap_members;
    if (grow((void **)&g->nodes, &g->cap_nodes, 2 * c->n + 1, sizeof *g->nodes) ||
        grow((void **)&g->start_of, &cap, c->n + 1, sizeof *g->start_of))
        return -1;
    cap = g->cap_members;
    if (grow((void **)&g->end_of, &cap, c->n + 1, sizeof *g->end_of))
        return -1;
    g->cap_members = cap;
    hta_keyed *order = malloc((4 * c->n + 1) * sizeof *order);
    node *listed = malloc((2 * c->n + 1) * sizeof *listed);
    if (!order || !listed) {
        free(order);
        free(listed);
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        uint32_t k = c->local_sorted[i];
        const member *mb = &c->m[k];
        const hta_event *e = &t->events[mb->ev];
        int noded = mb->gpu != UINT32_MAX ? !is_sync_event(r, e) : is_cpu_node(r, e);
        g->start_of[k] = g->end_of[k] = -1;
        if (!noded)
            continue;
        listed[n] = (node){e->ts_ns, mb->ev, k, 1};
        order[n] = (hta_keyed){e->ts_ns, n};
        n++;
        listed[n] = (node){hta_event_end(e), mb->ev, k, 0};
        order[n] = (hta_keyed){hta_event_end(e), n};
        n++;
    }
    int rc = sort_keyed(order, n, order + 2 * c->n);
    for (size_t i = 0; i < n && !rc; i++) {
        g->nodes[i] = listed[order[i].index];
        (g->nodes[i].is_start ? g->start_of : g->end_of)[g->nodes[i].local] = (int32_t)i;
    }
    g->n_nodes = n;
    free(order);
    free(listed);
    return rc;
}

static int is_lock_node(const step_ctx *c, uint32_t id)
{
    const hta_event *e = &c->r->t->events[c->r->g.nodes[id].ev];
    return !hta_event_is_gpu(e) && (c->r->name_flags[e->name] & N_LOCK);
}

/* Runtime calls that take the CUDA runtime lock, across threads: each end
 * waits for the calls that started before it and for the previous end. */
static int add_lock_edges(step_ctx *c)
{
    graph *g = &c->r->g;
    uint32_t *open = malloc((g->n_nodes + 1) * sizeof *open);
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
                             same ? (int64_t)g->nodes[prev].ev : -1)) {
                    free(open);
                    return -1;
                }
            }
            if (last >= 0 && !g->nodes[last].is_start &&
                add_edge(g, (uint32_t)last, id, E_DEPENDENCY, 0, -1)) {
                free(open);
                return -1;
            }
        }
        last = id;
    }
    free(open);
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

/* Sorts the 2n items (listed start, end by event) in cmp_sweep's order:
 * stably by time, then each run of equal times by insertion (runs are
 * short: an op and its first child starting together). */
static int sort_sweep(sweep_item *items, size_t n, hta_keyed *scratch)
{
    hta_keyed *order = scratch, *tmp = scratch + 2 * n;
    sweep_item *out = (sweep_item *)(scratch + 4 * n);
    for (size_t i = 0; i < 2 * n; i++)
        order[i] = (hta_keyed){items[i].time, i};
    if (sort_keyed(order, 2 * n, tmp))
        return -1;
    for (size_t i = 0; i < 2 * n; i++)
        out[i] = items[order[i].index];
    for (size_t i = 1; i < 2 * n; i++) {
        sweep_item x = out[i];
        size_t j = i;
        while (j > 0 && out[j - 1].time == x.time && cmp_sweep(&out[j - 1], &x) > 0) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = x;
    }
    memcpy(items, out, 2 * n * sizeof *items);
    return 0;
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
 * walked depth first with the graph's edges added on the way. */
static int walk_thread(step_ctx *c, const uint32_t *locals, size_t n, sweep_item *items,
                       int32_t *tree, hta_keyed *scratch)
{
    const hta_trace *t = c->r->t;
    for (size_t i = 0; i < n; i++) {
        const hta_event *e = &t->events[c->m[locals[i]].ev];
        items[2 * i] = (sweep_item){e->ts_ns, e->dur_ns, c->m[locals[i]].ev, (uint32_t)i, 1};
        items[2 * i + 1] =
            (sweep_item){hta_event_end(e), e->dur_ns, c->m[locals[i]].ev, (uint32_t)i, -1};
    }
    if (sort_sweep(items, n, scratch))
        return -1;
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

/* The one thread with events named like `flag` (cpu_op or user
 * annotation), or UINT32_MAX. */
static uint32_t only_thread_with(const step_ctx *c, uint8_t flag)
{
    const rank_state *r = c->r;
    uint32_t found = UINT32_MAX;
    for (size_t k = 0; k < c->n; k++) {
        const hta_event *e = &r->t->events[c->m[k].ev];
        if (c->m[k].gpu != UINT32_MAX || hta_event_is_gpu(e) || !(r->name_flags[e->name] & flag) ||
            (e->cat != r->cat_cpu_op && e->cat != r->cat_user_annotation))
            continue;
        uint32_t th = thread_of(r, e);
        if (found != UINT32_MAX && found != th)
            return UINT32_MAX;
        found = th;
    }
    return found;
}

static int add_call_stack_edges(step_ctx *c)
{
    rank_state *r = c->r;
    const hta_trace *t = r->t;
    uint32_t n_threads = r->contexts.n_threads;
    /* HTA merges the backward thread into the forward one. */
    uint32_t fwd = only_thread_with(c, N_FORWARD), bwd = only_thread_with(c, N_AUTOGRAD);
    size_t *first = calloc((size_t)n_threads + 2, sizeof *first);
    uint32_t *locals = malloc((c->n + 1) * sizeof *locals);
    sweep_item *items = malloc((2 * c->n + 1) * sizeof *items);
    int32_t *tree = malloc((5 * c->n + 1) * sizeof *tree);
    /* sort_sweep's: 4n keyed and 2n items */
    hta_keyed *scratch = malloc(4 * c->n * sizeof *scratch + 2 * c->n * sizeof *items + 1);
    int rc = -1;
    if (!first || !locals || !items || !tree || !scratch)
        goto done;
#define THREAD_OF(e) (thread_of(r, (e)) == bwd && fwd != UINT32_MAX ? fwd : thread_of(r, (e)))
    for (size_t k = 0; k < c->n; k++) {
        const hta_event *e = &t->events[c->m[k].ev];
        if (c->m[k].gpu == UINT32_MAX && !hta_event_is_gpu(e))
            first[THREAD_OF(e) + 1]++;
    }
    for (uint32_t th = 0; th < n_threads; th++)
        first[th + 1] += first[th];
    size_t *fill = malloc(((size_t)n_threads + 1) * sizeof *fill);
    if (!fill)
        goto done;
    memcpy(fill, first, (size_t)n_threads * sizeof *fill);
    for (size_t k = 0; k < c->n; k++) {
        const hta_event *e = &t->events[c->m[k].ev];
        if (c->m[k].gpu == UINT32_MAX && !hta_event_is_gpu(e))
            locals[fill[THREAD_OF(e)]++] = (uint32_t)k;
    }
#undef THREAD_OF
    free(fill);
    for (uint32_t th = 0; th < n_threads; th++)
        if (first[th + 1] > first[th] &&
            walk_thread(c, locals + first[th], first[th + 1] - first[th], items, tree, scratch))
            goto done;
    rc = 0;
done:
    free(first);
    free(locals);
    free(items);
    free(tree);
    free(scratch);
    return rc;
}

/* The local member of global event ev, or -1. */
static long local_of(const step_ctx *c, uint32_t ev)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->m[c->local_sorted[mid]].ev < ev)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->n && c->m[c->local_sorted[lo]].ev == ev ? (long)c->local_sorted[lo] : -1;
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

typedef struct kernel_row {
    int64_t sort_ts;
    uint32_t local;
} kernel_row;

static int cmp_kernel_row(const void *a, const void *b)
{
    const kernel_row *x = a, *y = b;
    if (x->sort_ts != y->sort_ts)
        return x->sort_ts < y->sort_ts ? -1 : 1;
    return x->local < y->local ? -1 : x->local > y->local;
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
    kernel_row *rows = malloc((c->n + 1) * sizeof *rows);
    kernel_pass k = {0};
    size_t n_rows = 0, n_sync = 0, n_streams = 0;
    for (size_t i = 0; i < c->n; i++) {
        const hta_event *e = &t->events[c->m[i].ev];
        int sync = is_sync_event(r, e);
        if (c->m[i].gpu == UINT32_MAX && !sync)
            continue;
        n_sync += sync;
        n_streams++;
        if (rows)
            rows[n_rows++] = (kernel_row){sync ? hta_event_end(e) : e->ts_ns, (uint32_t)i};
    }
    k.last = malloc((n_streams + 1) * sizeof *k.last);
    k.sync_dest = malloc((n_sync + 1) * sizeof *k.sync_dest);
    k.sync_src = malloc((n_sync + 1) * sizeof *k.sync_src);
    int rc = -1;
    if (!rows || !k.last || !k.sync_dest || !k.sync_src)
        goto done;
    qsort(rows, n_rows, sizeof *rows, cmp_kernel_row);
    for (size_t i = 0; i < n_rows; i++) {
        const hta_event *e = &t->events[c->m[rows[i].local].ev];
        if (is_sync_event(r, e) ? handle_sync(c, &k, e) : handle_kernel(c, &k, rows[i].local))
            goto done;
    }
    rc = 0;
done:
    free(rows);
    free(k.last);
    free(k.sync_dest);
    free(k.sync_src);
    return rc;
}

/* ---- longest path ----------------------------------------------------- */

typedef struct path {
    uint32_t *edges;           /* edge ids, from the path's start */
    size_t n;
    int ok;                    /* the graph had no cycle */
} path;

/* networkx's dag_longest_path on the graph, in O(V + E). */
static int longest_path(const graph *g, path *out)
{
    size_t nv = g->n_nodes, ne = g->n_edges;
    out->n = 0;
    out->ok = 1;
    size_t *in_first = calloc(nv + 2, sizeof *in_first);
    size_t *out_first = calloc(nv + 2, sizeof *out_first);
    uint32_t *in_list = malloc((ne + 1) * sizeof *in_list);
    uint32_t *out_list = malloc((ne + 1) * sizeof *out_list);
    uint32_t *order = malloc((nv + 1) * sizeof *order);
    size_t *indeg = malloc((nv + 1) * sizeof *indeg);
    int64_t *dist = malloc((nv + 1) * sizeof *dist);
    int64_t *via = malloc((nv + 1) * sizeof *via); /* edge id, -1 = none */
    int rc = -1;
    if (!in_first || !out_first || !in_list || !out_list || !order || !indeg || !dist || !via)
        goto done;
    for (size_t i = 0; i < ne; i++) {
        in_first[g->edges[i].dst + 1]++;
        out_first[g->edges[i].src + 1]++;
    }
    for (size_t v = 0; v < nv; v++) {
        in_first[v + 1] += in_first[v];
        out_first[v + 1] += out_first[v];
        indeg[v] = in_first[v + 1] - in_first[v];
    }
    {
        size_t *fi = malloc((nv + 1) * sizeof *fi), *fo = malloc((nv + 1) * sizeof *fo);
        if (!fi || !fo) {
            free(fi);
            free(fo);
            goto done;
        }
        memcpy(fi, in_first, nv * sizeof *fi);
        memcpy(fo, out_first, nv * sizeof *fo);
        for (size_t i = 0; i < ne; i++) {
            in_list[fi[g->edges[i].dst]++] = (uint32_t)i;
            out_list[fo[g->edges[i].src]++] = (uint32_t)i;
        }
        free(fi);
        free(fo);
    }
    /* Kahn's order, generation by generation, as networkx visits. */
    size_t head = 0, tail = 0;
    for (size_t v = 0; v < nv; v++)
        if (indeg[v] == 0)
            order[tail++] = (uint32_t)v;
    while (head < tail) {
        uint32_t v = order[head++];
        for (size_t j = out_first[v]; j < out_first[v + 1]; j++) {
            uint32_t w = g->edges[out_list[j]].dst;
            if (--indeg[w] == 0)
                order[tail++] = w;
        }
    }
    if (tail < nv) {
        out->ok = 0;
        rc = 0;
        goto done;
    }
    int64_t best = INT64_MIN;
    long best_v = -1;
    for (size_t i = 0; i < nv; i++) {
        uint32_t v = order[i];
        int64_t d = 0;
        int64_t from = -1;
        int any = 0;
        for (size_t j = in_first[v]; j < in_first[v + 1]; j++) {
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
        if (d > best) {
            best = d;
            best_v = v;
        }
    }
    if (best_v >= 0) {
        out->edges = realloc(out->edges, (nv + 1) * sizeof *out->edges);
        if (!out->edges)
            goto done;
        for (long v = best_v; via[v] >= 0; v = g->edges[via[v]].src)
            out->edges[out->n++] = (uint32_t)via[v];
        for (size_t i = 0; i < out->n / 2; i++) {
            uint32_t x = out->edges[i];
            out->edges[i] = out->edges[out->n - 1 - i];
            out->edges[out->n - 1 - i] = x;
        }
    }
    rc = 0;
done:
    free(in_first);
    free(out_first);
    free(in_list);
    free(out_list);
    free(order);
    free(indeg);
    free(dist);
    free(via);
    return rc;
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

static const hta_column SEGMENT_COLUMNS[] = {
    {"rank", HTA_COL_I64},   {"step", HTA_COL_I64},       {"position", HTA_COL_I64},
    {"name", HTA_COL_STR},   {"type", HTA_COL_STR},       {"bound_by", HTA_COL_STR},
    {"ts_us", HTA_COL_F64},  {"time_us", HTA_COL_F64},
};

typedef struct segment {
    int64_t attr;              /* event the time is put down to, -1 = none */
    uint8_t type;
    uint8_t bound;
    int64_t time;
} segment;

static int cmp_segment_attr(const void *a, const void *b)
{
    const segment *x = a, *y = b;
    if (x->attr != y->attr)
        return x->attr < y->attr ? -1 : 1;
    return (int)x->type - (int)y->type;
}

static int cmp_segment_time(const void *a, const void *b)
{
    const segment *x = a, *y = b;
    if (x->time != y->time)
        return x->time > y->time ? -1 : 1;
    return x->attr < y->attr ? -1 : x->attr > y->attr;
}

/* The path's time per event (and edge type), longest first. */
static int emit_segments(rank_state *r, const step_window *w, const path *p, hta_tableset *out)
{
    const graph *g = &r->g;
    segment *s = malloc((p->n + 1) * sizeof *s);
    if (!s)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++) {
        const edge *e = &g->edges[p->edges[i]];
        if (e->weight <= 0)
            continue;
        s[n++] = (segment){e->attr, e->type, (uint8_t)bound_of(r, e), e->weight};
    }
    qsort(s, n, sizeof *s, cmp_segment_attr);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && s[m - 1].attr == s[i].attr && s[m - 1].type == s[i].type)
            s[m - 1].time += s[i].time;
        else
            s[m++] = s[i];
    }
    qsort(s, m, sizeof *s, cmp_segment_time);
    hta_table *tab = HTA_TABLE(out, "critical_path_events", SEGMENT_COLUMNS);
    int rc = tab ? 0 : -1;
    for (size_t i = 0; i < m && i < TOP_SEGMENTS && !rc; i++) {
        const hta_event *ev = s[i].attr >= 0 ? &r->t->events[s[i].attr] : NULL;
        hta_row_builder row = hta_table_add_row(tab);
        hta_row_put_i64(&row, r->v->rank_key);
        hta_row_put_i64(&row, w->number);
        hta_row_put_i64(&row, (int64_t)i + 1);
        hta_row_put_str(&row, ev ? hta_event_name(r->t, ev) : "");
        hta_row_put_str(&row, EDGE_TYPE_NAMES[s[i].type]);
        hta_row_put_str(&row, s[i].bound < HTA_CP_N_BOUNDS ? hta_cp_bound_names[s[i].bound] : "");
        hta_row_put_f64(&row, ev ? hta_ns_to_us(ev->ts_ns) : 0.0);
        hta_row_put_f64(&row, hta_ns_to_us(s[i].time));
        rc = hta_row_done(&row);
    }
    free(s);
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

/* The members' locals in order of event index. */
static int fill_local_sorted(step_ctx *c, hta_keyed *by_event)
{
    for (size_t k = 0; k < c->n; k++)
        by_event[k] = (hta_keyed){c->m[k].ev, k};
    if (sort_keyed(by_event, c->n, by_event + c->n))
        return -1;
    for (size_t k = 0; k < c->n; k++)
        c->local_sorted[k] = (uint32_t)by_event[k].index;
    return 0;
}

static int run_step(rank_state *r, size_t s, path *p, hta_tableset *out)
{
    step_ctx c = {r, r->members + r->step_first[s], r->step_first[s + 1] - r->step_first[s],
                  NULL};
    c.local_sorted = malloc((c.n + 1) * sizeof *c.local_sorted);
    hta_keyed *by_event = malloc((2 * c.n + 1) * sizeof *by_event);
    if (!c.local_sorted || !by_event || fill_local_sorted(&c, by_event)) {
        free(c.local_sorted);
        free(by_event);
        return -1;
    }
    free(by_event);
    int rc = build_nodes(&c) || add_lock_edges(&c) || add_call_stack_edges(&c) ||
             add_kernel_edges(&c) || longest_path(&r->g, p) ||
             (r->path_fn ? hand_path(r, &r->steps[s], p) : emit_step(r, &r->steps[s], p, out));
    free(c.local_sorted);
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
