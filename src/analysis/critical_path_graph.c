/* critical_path_graph.c: one step's graph (see
 * analysis/critical_path_internal.h).
 *
 * Each step builds its graph in HTA's order of insertion (runtime lock
 * edges, the call stack of each CPU thread, then kernels and syncs in time
 * order), because ties between equally long paths are broken by that
 * order as networkx does (critical_path_longest.c). */
#include "analysis/critical_path_internal.h"

#include <stdlib.h>
#include <string.h>

#include "numerics/radix_sort.h"
#include "numerics/run_merge_sort.h"

#define KERNEL_KERNEL_DELAY_NS 1500000

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
    size_t i = cp_launch_lower_bound(r, stream, ts, 1);
    if (i == 0 || r->launches[i - 1].stream != stream)
        return NULL;
    return r->v->gpu[r->launches[i - 1].gpu];
}

/* The kernel the thread launches next on stream from ts on, or NULL. */
static const hta_event *kernel_after(const rank_state *r, uint32_t stream, int64_t ts,
                                     uint32_t thread)
{
    for (size_t i = cp_launch_lower_bound(r, stream, ts, 0);
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


int cp_build_graph(rank_state *r, size_t s)
{
    step_ctx c = {.r = r, .m = r->members + r->step_first[s],
                  .n = r->step_first[s + 1] - r->step_first[s]};
    int rc = scan_members(&c) || build_nodes(&c) || add_lock_edges(&c) ||
             add_call_stack_edges(&c) || add_kernel_edges(&c);
    return rc ? -1 : 0;
}
