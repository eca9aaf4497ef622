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
    uint8_t is_start;
    uint8_t is_lock;           /* a call that takes the runtime lock */
} node;

typedef struct edge {
    uint32_t src, dst;
    int64_t weight;
    int64_t attr;              /* attributed global event, -1 = none */
    uint8_t type;
    uint32_t next_in;          /* the next edge into dst, UINT32_MAX = none */
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
    int backward;              /* some edge goes back in node order */
    int32_t *start_of, *end_of; /* by local member: node ids, -1 = none */
    size_t cap_members;
    /* By node: the first and last edge into it, UINT32_MAX = none. */
    uint32_t *in_first, *in_last;
} graph;

/* Per-step working arrays, kept across steps (grown, never shrunk). */
enum scratch_slot {
    S_ITEMS, S_ITEMS_TMP, S_SWEEP, S_THREAD_INDEX, S_THREAD_FIRST,
    S_ROWS, S_LAST, S_SYNC_DEST, S_SYNC_SRC, S_IN_FIRST, S_IN_LAST, S_OUT_FIRST,
    S_OUT_LIST, S_ORDER, S_INDEG, S_DIST, S_VIA, S_OPEN, S_SEGMENTS,
    S_STACK, S_GPU_STACK, S_KIND, S_LOCKS, S_N
};

typedef struct rank_state {
    const hta_rank_view *v;
    const hta_trace *t;
    hta_cpu_contexts contexts;
    uint8_t *name_flags;
    uint32_t cat_cpu_op, cat_runtime, cat_driver, cat_user_annotation, cat_sync;
    uint32_t name_context_sync, name_stream_sync, name_event_sync, name_stream_wait;
    int32_t *ql_runtime, *ql_kernel; /* by place in view->gpu, -1 = not counted */
    uint32_t *gpu_runtime;     /* by place in view->gpu: runtime_of's event, UINT32_MAX = none */
    launch_ref *launches;      /* by (stream, ts) */
    size_t n_launches;
    step_window *steps;
    size_t n_steps;
    member *members;           /* grouped by step */
    size_t *step_first;        /* n_steps + 1 offsets */
    int32_t *member_of;        /* by event: its place in its step's members, -1 = none */
    graph g;
    int32_t *segment_of;       /* by event: see add_to_segment */
    uint32_t *listed_id;       /* by name: 1 + its name_id, 0 = not listed yet */
    uint32_t n_listed;
    void *scratch[S_N];
    size_t scratch_cap[S_N];   /* in bytes */
    double total[HTA_CP_N_BOUNDS]; /* ns over every step */
    hta_table *step_table;     /* /critical_path, found once */
    hta_cp_path_fn path_fn;    /* set: paths go to it, not to tables */
    void *path_ctx;
    int path_rc;
} rank_state;

/* The slot's buffer with room for n elements of size bytes, or NULL. */
static inline void *scratch(rank_state *r, enum scratch_slot slot, size_t n, size_t size)
{
    size_t cap = r->scratch_cap[slot];
    if ((n + 1) * size <= cap)
        return r->scratch[slot];
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

/* runtime_of the GPU event at place p in view->gpu, looked up once. */
static const hta_event *gpu_runtime_of(const rank_state *r, size_t p)
{
    uint32_t i = r->gpu_runtime[p];
    return i == UINT32_MAX ? NULL : &r->t->events[i];
}

/* ---- queue length (HTA's series over the whole trace) ----------------- */

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

/* Every counted kernel's launch and start, stream by stream in order of
 * stream (HTA's queue length series), and the launches by (stream, time)
 * for the kernel pass. */
static int count_queues(rank_state *r)
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
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (steps[mid].start <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
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
static int deal_members(rank_state *r)
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

/* ---- one step's graph ------------------------------------------------- */

/* One side's (CPU or GPU events') starts and ends, index 2 * local (+ 1
 * for the end): as listed by list_member, then by time. */
typedef struct side_list {
    hta_keyed *items;
    size_t n;
    hta_keyed *open;           /* the ends of listed members not closed yet, innermost last */
    size_t depth;
} side_list;

typedef struct step_ctx {
    rank_state *r;
    const member *m;           /* in order of event index */
    size_t n;
    side_list cpu, gpu;
    /* Per member, in event order: K_NODED, K_LOCK, K_BLOCKING. */
    uint8_t *kind;
    uint32_t *group;           /* CPU members' thread (UINT32_MAX: none) */
    size_t *thread_first;      /* by thread + 1: members, then see count_threads */
    uint32_t fwd, bwd;         /* the forward and backward threads (see note_thread) */
    uint32_t *locks;           /* the runtime-lock calls' nodes, in order */
    size_t n_locks;
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
    uint32_t id = (uint32_t)g->n_edges++;
    g->edges[id] = (edge){src, dst, weight, attr, (uint8_t)type, UINT32_MAX};
    if (g->in_last[dst] == UINT32_MAX)
        g->in_first[dst] = id;
    else
        g->edges[g->in_last[dst]].next_in = id;
    g->in_last[dst] = id;
    g->backward |= src > dst;
    return 0;
}

enum {
    K_NODED = 1,               /* has nodes: see is_noded */
    K_LOCK = 2,                /* a CPU call that takes the runtime lock */
    K_BLOCKING = 4,            /* named as a blocking call (N_BLOCKING) */
};

/* Whether a member has nodes: a kernel, or a CPU node (is_cpu_node). */
static int is_noded(const step_ctx *c, const member *mb)
{
    const hta_event *e = &c->r->t->events[mb->ev];
    return mb->gpu != UINT32_MAX ? !is_sync_event(c->r, e) : is_cpu_node(c->r, e);
}

/* Lists member k's start after the ends of the open members it follows,
 * as a stack of nested calls (or of one stream's kernels) closes them:
 * a side comes in time order when its starts do and its members nest. */
static void list_member(side_list *restrict s, size_t k, const hta_event *e)
{
    while (s->depth && s->open[s->depth - 1].key <= e->ts_ns)
        s->items[s->n++] = s->open[--s->depth];
    s->items[s->n++] = (hta_keyed){e->ts_ns, 2 * k};
    s->open[s->depth++] = (hta_keyed){hta_event_end(e), 2 * k + 1};
}

static void close_listed(side_list *restrict s)
{
    while (s->depth)
        s->items[s->n++] = s->open[--s->depth];
}

/* Notes th as a thread with events named like the one seen: *only
 * becomes UINT32_MAX - 1 once two threads are seen. */
static void note_thread(uint32_t *only, uint32_t th)
{
    *only = *only == UINT32_MAX || *only == th ? th : UINT32_MAX - 1;
}

/* A CPU member's thread, noting the forward and backward threads: HTA
 * merges the backward thread (the one thread with cpu ops or annotations
 * named "autograd") into the forward one ("forward"). */
static uint32_t group_of(step_ctx *c, const hta_event *e)
{
    const rank_state *r = c->r;
    uint32_t th = thread_of(r, e);
    if (e->cat == r->cat_cpu_op || e->cat == r->cat_user_annotation) {
        if (r->name_flags[e->name] & N_FORWARD)
            note_thread(&c->fwd, th);
        if (r->name_flags[e->name] & N_AUTOGRAD)
            note_thread(&c->bwd, th);
    }
    return th;
}

static int alloc_side(rank_state *r, side_list *s, enum scratch_slot items,
                      enum scratch_slot open, size_t n)
{
    *s = (side_list){scratch(r, items, 2 * n, sizeof *s->items), 0,
                     scratch(r, open, n, sizeof *s->open), 0};
    return s->items && s->open ? 0 : -1;
}

/* One pass over the members: their kinds and threads, and their starts and
 * ends listed by side, each side then sorted by (time, index) (equal
 * times in order of event, a start before its end), from the few runs
 * list_member leaves. */
static int scan_members(step_ctx *c)
{
    rank_state *r = c->r;
    size_t n_threads = r->contexts.n_threads;
    c->kind = scratch(r, S_KIND, c->n, 1);
    c->group = scratch(r, S_THREAD_INDEX, c->n, sizeof *c->group);
    c->thread_first = scratch(r, S_THREAD_FIRST, 2 * n_threads + 2, sizeof *c->thread_first);
    if (!c->kind || !c->group || !c->thread_first ||
        alloc_side(r, &c->cpu, S_ITEMS, S_STACK, c->n) ||
        alloc_side(r, &c->gpu, S_ITEMS_TMP, S_GPU_STACK, c->n))
        return -1;
    memset(c->thread_first, 0, (n_threads + 2) * sizeof *c->thread_first);
    c->fwd = c->bwd = UINT32_MAX;
    for (size_t k = 0; k < c->n; k++) {
        const member *mb = &c->m[k];
        const hta_event *e = &r->t->events[mb->ev];
        int gpu = hta_event_is_gpu(e);
        uint8_t names = r->name_flags[e->name];
        c->kind[k] = is_noded(c, mb) ? K_NODED | (!gpu && (names & N_LOCK) ? K_LOCK : 0) |
                                           (names & N_BLOCKING ? K_BLOCKING : 0)
                                     : 0;
        c->group[k] = UINT32_MAX;
        if (mb->gpu == UINT32_MAX && !gpu)
            c->thread_first[(c->group[k] = group_of(c, e)) + 1]++;
        list_member(gpu ? &c->gpu : &c->cpu, k, e);
    }
    close_listed(&c->cpu);
    close_listed(&c->gpu);
    hta_keyed *spare = scratch(r, S_ROWS, 2 * c->n, sizeof *spare);
    return !spare || hta_run_merge_sort_keyed(c->cpu.items, c->cpu.n, spare) ||
                   hta_run_merge_sort_keyed(c->gpu.items, c->gpu.n, spare)
               ? -1
               : 0;
}

/* Whether x comes before y in time order: see scan_members. */
static int item_before(const hta_keyed *x, const hta_keyed *y)
{
    return x->key < y->key || (x->key == y->key && x->index < y->index);
}

/* Makes the item a node if its member has nodes; *n nodes and *n_locks
 * lock nodes so far. */
static inline void place_node(const step_ctx *c, const hta_keyed *item, size_t *n,
                              size_t *n_locks)
{
    graph *g = &c->r->g;
    size_t k = item->index / 2;
    int is_end = item->index % 2;
    uint8_t kind = c->kind[k];
    if (!kind)
        return;
    uint32_t id = (uint32_t)(*n)++;
    g->nodes[id] = (node){item->key, c->m[k].ev, (uint8_t)!is_end, (kind & K_LOCK) != 0};
    (is_end ? g->end_of : g->start_of)[k] = (int32_t)id;
    if (kind & K_LOCK)
        c->locks[(*n_locks)++] = id;
}

/* The nodes in HTA's order: by time, then event, a start before its end
 * (the two sides merged). */
static int build_nodes(step_ctx *c)
{
    rank_state *r = c->r;
    graph *g = &r->g;
    g->n_nodes = g->n_edges = 0;
    g->backward = 0;
    size_t cap = g->cap_members;
    if (hta_grow_array((void **)&g->nodes, &g->cap_nodes, 2 * c->n + 1, sizeof *g->nodes) ||
        hta_grow_array((void **)&g->start_of, &cap, c->n + 1, sizeof *g->start_of))
        return -1;
    cap = g->cap_members;
    if (hta_grow_array((void **)&g->end_of, &cap, c->n + 1, sizeof *g->end_of))
        return -1;
    g->cap_members = cap;
    c->locks = scratch(r, S_LOCKS, 2 * c->n, sizeof *c->locks);
    g->in_first = scratch(r, S_IN_FIRST, 2 * c->n, sizeof *g->in_first);
    g->in_last = scratch(r, S_IN_LAST, 2 * c->n, sizeof *g->in_last);
    if (!c->locks || !g->in_first || !g->in_last)
        return -1;
    memset(g->in_first, 0xff, 2 * c->n * sizeof *g->in_first);
    memset(g->in_last, 0xff, 2 * c->n * sizeof *g->in_last);
    memset(g->start_of, 0xff, c->n * sizeof *g->start_of);
    memset(g->end_of, 0xff, c->n * sizeof *g->end_of);
    size_t n = 0, n_locks = 0;
    const hta_keyed *x = c->cpu.items, *x_end = x + c->cpu.n;
    const hta_keyed *y = c->gpu.items, *y_end = y + c->gpu.n;
    while (x < x_end && y < y_end)
        place_node(c, item_before(y, x) ? y++ : x++, &n, &n_locks);
    while (x < x_end)
        place_node(c, x++, &n, &n_locks);
    while (y < y_end)
        place_node(c, y++, &n, &n_locks);
    g->n_nodes = n;
    c->n_locks = n_locks;
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
    uint32_t *open = scratch(c->r, S_OPEN, c->n_locks, sizeof *open);
    if (!open)
        return -1;
    size_t n_open = 0;
    long last = -1;
    for (size_t i = 0; i < c->n_locks; i++) {
        uint32_t id = c->locks[i];
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
    int8_t type;               /* +1 start, -1 end */
} sweep_item;

static int cmp_sweep(const sweep_item *x, const sweep_item *y)
{
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

/* A start or end (index 2 * local, + 1 for the end) as cmp_sweep sees it. */
static sweep_item sweep_item_of(const step_ctx *c, const hta_keyed *x)
{
    uint32_t ev = c->m[x->index / 2].ev;
    return (sweep_item){x->key, c->r->t->events[ev].dur_ns, ev, (int8_t)(x->index % 2 ? -1 : 1)};
}

/* Puts the n items, sorted by (time, index), in cmp_sweep's order: each
 * run of equal times by insertion (runs are short: an op and its first
 * child starting together). */
static void order_ties(const step_ctx *c, hta_keyed *items, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (items[i - 1].key != items[i].key)
            continue;
        hta_keyed x = items[i];
        sweep_item sx = sweep_item_of(c, &x);
        size_t j = i;
        while (j > 0 && items[j - 1].key == x.key) {
            sweep_item sy = sweep_item_of(c, &items[j - 1]);
            if (cmp_sweep(&sy, &sx) <= 0)
                break;
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

static inline int enter_op(step_ctx *c, walk_state *w, uint32_t local, int64_t parent)
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

static inline int exit_op(step_ctx *c, walk_state *w, uint32_t local, int64_t parent)
{
    graph *g = &c->r->g;
    if (g->end_of[local] < 0)
        return 0;
    uint32_t end = (uint32_t)g->end_of[local];
    if (w->last_node >= 0 && !shares_lock(c, (uint32_t)w->last_node, end)) {
        int blocking = (c->kind[local] & K_BLOCKING) != 0;
        int64_t attr = attribution(g, (uint32_t)w->last_node, end, w->last_parent);
        if (add_edge(g, (uint32_t)w->last_node, end, E_OPERATOR, blocking, attr))
            return -1;
    }
    w->last_node = end;
    w->last_parent = parent;
    w->depth--;
    return 0;
}

/* The event of the innermost open member (stack holds locals), -1 = the root. */
static int64_t open_parent(const step_ctx *c, const uint32_t *stack, size_t depth)
{
    return depth ? (int64_t)c->m[stack[depth - 1]].ev : -1;
}

static inline int close_innermost(step_ctx *c, walk_state *w, const uint32_t *stack,
                                  size_t *depth)
{
    uint32_t top = stack[--*depth];
    return exit_op(c, w, top, open_parent(c, stack, *depth));
}

/* The call stack of one thread's events (HTA's CallStackGraph: a start's
 * parent is the innermost open event, an end closes the innermost),
 * walked depth first with the graph's edges added on the way.  The sweep
 * itself is that walk: it enters each event at its start, after its
 * parent and elder siblings' subtrees, and leaves it when an end closes
 * it, after its children.  items: the thread's n starts and ends (index
 * 2 * local, + 1 for an end) by (time, index); stack has room for n / 2. */
static int walk_thread(step_ctx *c, hta_keyed *items, size_t n, uint32_t *stack)
{
    order_ties(c, items, n);
    walk_state w = {-1, 0, -1};
    size_t depth = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t local = (uint32_t)(items[k].index / 2);
        if (items[k].index % 2 == 0) {
            if (enter_op(c, &w, local, open_parent(c, stack, depth)))
                return -1;
            stack[depth++] = local;
        } else if (depth && close_innermost(c, &w, stack, &depth)) {
            return -1;
        }
    }
    while (depth)
        if (close_innermost(c, &w, stack, &depth))
            return -1;
    return 0;
}

/* Turns the threads' member counts (scan_members) into the number of CPU
 * members of the threads before th in first[th], the backward thread
 * merged into the forward one. */
static void count_threads(step_ctx *c, size_t *first)
{
    uint32_t n_threads = c->r->contexts.n_threads;
    uint32_t fwd = c->fwd == UINT32_MAX - 1 ? UINT32_MAX : c->fwd;
    uint32_t bwd = c->bwd == UINT32_MAX - 1 ? UINT32_MAX : c->bwd;
    if (fwd != UINT32_MAX && bwd != UINT32_MAX && bwd != fwd && first[bwd + 1]) {
        for (size_t k = 0; k < c->n; k++)
            if (c->group[k] == bwd)
                c->group[k] = fwd;
        first[fwd + 1] += first[bwd + 1];
        first[bwd + 1] = 0;
    }
    for (uint32_t th = 0; th < n_threads; th++)
        first[th + 1] += first[th];
}

/* Every CPU-side member has a thread: the CPU side, in time order, is
 * dealt out to the threads in that order, unless it is all one thread's. */
static int add_call_stack_edges(step_ctx *c)
{
    rank_state *r = c->r;
    uint32_t n_threads = r->contexts.n_threads;
    size_t *first = c->thread_first;
    uint32_t *stack = scratch(r, S_STACK, c->n, sizeof *stack);
    if (!stack)
        return -1;
    count_threads(c, first);
    hta_keyed *items = c->cpu.items;
    int one_thread = 0;
    for (uint32_t th = 0; th < n_threads; th++)
        one_thread |= first[th + 1] - first[th] == first[n_threads];
    if (!one_thread) {
        items = scratch(r, S_SWEEP, 2 * c->n, sizeof *items);
        if (!items)
            return -1;
        size_t *fill = first + n_threads + 1;
        for (uint32_t th = 0; th < n_threads; th++)
            fill[th] = 2 * first[th];
        for (size_t i = 0; i < c->cpu.n; i++)
            items[fill[c->group[c->cpu.items[i].index / 2]]++] = c->cpu.items[i];
    }
    for (uint32_t th = 0; th < n_threads; th++)
        if (first[th + 1] > first[th] &&
            walk_thread(c, items + 2 * first[th], 2 * (first[th + 1] - first[th]), stack))
            return -1;
    return 0;
}

/* The local member of global event ev, or -1. */
static long local_of(const step_ctx *c, uint32_t ev)
{
    int32_t k = c->r->member_of[ev];
    return k >= 0 && (size_t)k < c->n && c->m[k].ev == ev ? k : -1;
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
    const hta_event *runtime = gpu_runtime_of(r, mb->gpu);
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

/* A kernel's or sync's place in the pass's order (an index of
 * hta_keyed, by time first): syncs by event, then kernels by their place
 * in view->gpu. */
#define KERNEL_TIE(gpu) (UINT64_C(1) << 32 | (gpu))

/* The local member of a row's tie. */
static size_t local_of_tie(const step_ctx *c, uint64_t tie)
{
    const rank_state *r = c->r;
    uint32_t ev = tie < KERNEL_TIE(0) ? (uint32_t)tie
                                      : (uint32_t)(r->v->gpu[tie - KERNEL_TIE(0)] - r->t->events);
    return (size_t)local_of(c, ev);
}

/* The step's kernels (by start) and syncs (by end) in time order, handed
 * to the sort in event order: nearly in time order. */
static int add_kernel_edges(step_ctx *c)
{
    rank_state *r = c->r;
    const hta_trace *t = r->t;
    hta_keyed *rows = scratch(r, S_ROWS, c->n, sizeof *rows);
    hta_keyed *tmp = scratch(r, S_ITEMS_TMP, c->n, sizeof *tmp);
    kernel_pass k = {0};
    size_t n_rows = 0, n_sync = 0;
    if (!rows || !tmp)
        return -1;
    for (size_t i = 0; i < c->n; i++) {
        const member *mb = &c->m[i];
        const hta_event *e = &t->events[mb->ev];
        int sync = is_sync_event(r, e);
        if (mb->gpu == UINT32_MAX && !sync)
            continue;
        n_sync += sync;
        uint64_t tie = mb->gpu == UINT32_MAX ? mb->ev : KERNEL_TIE(mb->gpu);
        rows[n_rows++] = (hta_keyed){sync ? hta_event_end(e) : e->ts_ns, tie};
    }
    k.last = scratch(r, S_LAST, n_rows, sizeof *k.last);
    k.sync_dest = scratch(r, S_SYNC_DEST, n_sync, sizeof *k.sync_dest);
    k.sync_src = scratch(r, S_SYNC_SRC, n_sync, sizeof *k.sync_src);
    if (!k.last || !k.sync_dest || !k.sync_src || hta_run_merge_sort_keyed(rows, n_rows, tmp))
        return -1;
    for (size_t i = 0; i < n_rows; i++) {
        size_t local = local_of_tie(c, rows[i].index);
        const hta_event *e = &t->events[c->m[local].ev];
        if (is_sync_event(r, e) ? handle_sync(c, &k, e) : handle_kernel(c, &k, (uint32_t)local))
            return -1;
    }
    return 0;
}

/* ---- longest path ----------------------------------------------------- */

typedef struct path {
    uint32_t *edges;           /* edge ids, from the path's start */
    size_t n, cap;
    int ok;                    /* the graph had no cycle */
} path;

/* Lists each node's outgoing edges (ids in order of insertion) from
 * first[v] to first[v + 1], and counts its incoming edges in indeg[v]:
 * counted, summed, then placed from the last edge back. */
static void list_out_edges(const graph *g, uint32_t *first, uint32_t *list, uint32_t *indeg)
{
    size_t nv = g->n_nodes, ne = g->n_edges;
    memset(first, 0, (nv + 1) * sizeof *first);
    memset(indeg, 0, nv * sizeof *indeg);
    for (size_t i = 0; i < ne; i++) {
        first[g->edges[i].src]++;
        indeg[g->edges[i].dst]++;
    }
    for (size_t v = 1; v <= nv; v++)
        first[v] += first[v - 1];
    for (size_t i = ne; i-- > 0;)
        list[--first[g->edges[i].src]] = (uint32_t)i;
}

/* Kahn's topological order, generation by generation as networkx visits
 * the nodes, into order; 0 when the graph has a cycle. */
static int kahn_order(rank_state *r, uint32_t *order)
{
    const graph *g = &r->g;
    size_t nv = g->n_nodes;
    uint32_t *out_first = scratch(r, S_OUT_FIRST, nv + 1, sizeof *out_first);
    uint32_t *out_list = scratch(r, S_OUT_LIST, g->n_edges, sizeof *out_list);
    uint32_t *indeg = scratch(r, S_INDEG, nv, sizeof *indeg);
    if (!out_first || !out_list || !indeg)
        return -1;
    list_out_edges(g, out_first, out_list, indeg);
    size_t head = 0, tail = 0;
    for (size_t v = 0; v < nv; v++)
        if (indeg[v] == 0)
            order[tail++] = (uint32_t)v;
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
static void relax(const graph *g, int64_t *dist, int64_t *via, uint32_t v)
{
    /* Distances are never negative and weights above -1 us: any candidate
     * beats INT64_MIN. */
    int64_t d = INT64_MIN, from = -1;
    for (uint32_t id = g->in_first[v]; id != UINT32_MAX; id = g->edges[id].next_in) {
        const edge *e = &g->edges[id];
        /* HTA zeroes a weight of -1 us or less before the search. */
        int64_t w = e->weight <= -1000 ? 0 : e->weight;
        int64_t cand = dist[e->src] + w;
        if (cand > d) {
            d = cand;
            from = id;
        }
    }
    if (d < 0) {
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
    size_t nv = g->n_nodes;
    out->n = 0;
    out->ok = 1;
    uint32_t *order = scratch(r, S_ORDER, nv, sizeof *order);
    int64_t *dist = scratch(r, S_DIST, nv, sizeof *dist);
    int64_t *via = scratch(r, S_VIA, nv, sizeof *via); /* edge id, -1 = none */
    if (!order || !dist || !via)
        return -1;
    int have_order = g->backward;
    if (have_order) {
        int acyclic = kahn_order(r, order);
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
        relax(g, dist, via, v);
        if (dist[v] > best) {
            best = dist[v];
            best_v = v;
            n_best = 0;
        }
        n_best += dist[v] == best;
    }
    if (n_best > 1 && !have_order) {
        if (kahn_order(r, order) < 0)
            return -1;
        for (size_t i = 0; i < nv; i++)
            if (dist[order[i]] == best) {
                best_v = order[i];
                break;
            }
    }
    if (best_v >= 0) {
        if (hta_grow_array((void **)&out->edges, &out->cap, nv + 1, sizeof *out->edges))
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

static inline hta_cp_bound bound_of(const rank_state *r, const edge *e)
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

static const hta_column STEP_COLUMNS[HTA_CRITICAL_PATH_N_COLUMNS] = {
    [HTA_CRITICAL_PATH_RANK] = {"rank", HTA_COL_I64},
    [HTA_CRITICAL_PATH_STEP] = {"step", HTA_COL_I64},
    [HTA_CRITICAL_PATH_START_US] = {"start_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_END_US] = {"end_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_PATH_US] = {"path_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_GRAPH_OK] = {"graph_ok", HTA_COL_I64},
    [HTA_CRITICAL_PATH_NODES] = {"nodes", HTA_COL_I64},
    [HTA_CRITICAL_PATH_EDGES] = {"edges", HTA_COL_I64},
    [HTA_CRITICAL_PATH_BOUND_BY] = {"bound_by", HTA_COL_STR},
    [HTA_CRITICAL_PATH_CPU_BOUND_US] = {"cpu_bound_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_DATA_LOADING_US] = {"data_loading_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_GPU_COMPUTE_BOUND_US] = {"gpu_compute_bound_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_GPU_COMMUNICATION_BOUND_US] = {"gpu_communication_bound_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_GPU_KERNEL_KERNEL_OVERHEAD_US] =
        {"gpu_kernel_kernel_overhead_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_GPU_KERNEL_LAUNCH_OVERHEAD_US] =
        {"gpu_kernel_launch_overhead_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_CPU_BOUND_PCT] = {"cpu_bound_pct", HTA_COL_F64},
    [HTA_CRITICAL_PATH_DATA_LOADING_PCT] = {"data_loading_pct", HTA_COL_F64},
    [HTA_CRITICAL_PATH_GPU_COMPUTE_BOUND_PCT] = {"gpu_compute_bound_pct", HTA_COL_F64},
    [HTA_CRITICAL_PATH_GPU_COMMUNICATION_BOUND_PCT] = {"gpu_communication_bound_pct", HTA_COL_F64},
    [HTA_CRITICAL_PATH_GPU_KERNEL_KERNEL_OVERHEAD_PCT] =
        {"gpu_kernel_kernel_overhead_pct", HTA_COL_F64},
    [HTA_CRITICAL_PATH_GPU_KERNEL_LAUNCH_OVERHEAD_PCT] =
        {"gpu_kernel_launch_overhead_pct", HTA_COL_F64},
};
const hta_table_spec hta_critical_path_table = {
    "critical_path", STEP_COLUMNS, HTA_CRITICAL_PATH_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

/* A segment's event is named by an id into the rank's /critical_path_names
 * rows, not by its text: the table holds ten rows per step, and strings
 * drawn from a small vocabulary keep it written where it was computed
 * (output/hdf5_in_place.c), with no variable-length string per row. */
static const hta_column SEGMENT_COLUMNS[HTA_CRITICAL_PATH_EVENTS_N_COLUMNS] = {
    [HTA_CRITICAL_PATH_EVENTS_RANK] = {"rank", HTA_COL_I64},
    [HTA_CRITICAL_PATH_EVENTS_STEP] = {"step", HTA_COL_I64},
    [HTA_CRITICAL_PATH_EVENTS_POSITION] = {"position", HTA_COL_I64},
    [HTA_CRITICAL_PATH_EVENTS_NAME_ID] = {"name_id", HTA_COL_I64},
    [HTA_CRITICAL_PATH_EVENTS_TYPE] = {"type", HTA_COL_STR},
    [HTA_CRITICAL_PATH_EVENTS_BOUND_BY] = {"bound_by", HTA_COL_STR},
    [HTA_CRITICAL_PATH_EVENTS_TS_US] = {"ts_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_EVENTS_TIME_US] = {"time_us", HTA_COL_F64},
};
const hta_table_spec hta_critical_path_events_table = {
    "critical_path_events", SEGMENT_COLUMNS, HTA_CRITICAL_PATH_EVENTS_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_IN_PLACE};

static const hta_column NAME_COLUMNS[HTA_CRITICAL_PATH_NAMES_N_COLUMNS] = {
    [HTA_CRITICAL_PATH_NAMES_RANK] = {"rank", HTA_COL_I64},
    [HTA_CRITICAL_PATH_NAMES_NAME_ID] = {"name_id", HTA_COL_I64},
    [HTA_CRITICAL_PATH_NAMES_NAME] = {"name", HTA_COL_STR},
};
const hta_table_spec hta_critical_path_names_table = {
    "critical_path_names", NAME_COLUMNS, HTA_CRITICAL_PATH_NAMES_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

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
    hta_table *tab = hta_tableset_table(out, &hta_critical_path_names_table);
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
    hta_table *tab = hta_tableset_table(out, &hta_critical_path_events_table);
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
    if (!r->step_table && !(r->step_table = hta_tableset_table(out, &hta_critical_path_table)))
        return -1;
    hta_table *tab = r->step_table;
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
    step_ctx c = {.r = r, .m = r->members + r->step_first[s],
                  .n = r->step_first[s + 1] - r->step_first[s]};
    int rc = scan_members(&c) || build_nodes(&c) || add_lock_edges(&c) ||
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
    free(r->gpu_runtime);
    free(r->launches);
    free(r->steps);
    free(r->members);
    free(r->step_first);
    free(r->member_of);
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
