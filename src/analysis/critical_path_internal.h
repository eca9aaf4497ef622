/* analysis/critical_path_internal.h: what the files of the critical path
 * share (private to analysis/critical_path*.c): the rank's state, one
 * step's graph, the path, and the stages in the order critical_path.c
 * runs them:
 *   critical_path_steps.c    the queue length of each stream over the
 *                            whole trace, the steps, the events dealt out
 *                            to them;
 *   critical_path_graph.c    one step's graph in HTA's order of insertion;
 *   critical_path_longest.c  its longest path;
 *   critical_path_results.c  the path's time by cause into the tables, or
 *                            handed to hta_critical_path_each's callback;
 *   critical_path_intervals.c  the stretches of the longest paths between
 *                            communication kernels, for the job's path. */
#ifndef HTA_CRITICAL_PATH_INTERNAL_H
#define HTA_CRITICAL_PATH_INTERNAL_H

#include <stdint.h>

#include "analysis/critical_path.h"
#include "model/cpu_context.h"
#include "util/grow.h"

enum edge_type { E_OPERATOR, E_DEPENDENCY, E_LAUNCH, E_KERNEL_KERNEL, E_SYNC };

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
    S_STACK, S_GPU_STACK, S_KIND, S_LOCKS, S_PIECES, S_RUNS, S_DURATIONS, S_REPLAY_WAIT,
    S_REPLAY_TIED, S_REPLAY_PLACE, S_N
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
    int32_t *piece_of;         /* by name + 1: see critical_path_intervals.c */
    uint32_t *path_name_id;    /* by name: 1 + its "_path_names" id, 0 = none yet */
    uint32_t n_path_names;
    int64_t *name_time;        /* by name: its operator edges' ns over every step */
    uint32_t *place_step;      /* by name: 1 + the step place_next counts in */
    int64_t *place_next;       /* by name: its launches in that step, then
                                * where its next duration goes */
    int64_t durations_row[HTA_KERNEL_DURATIONS_PER_ROW]; /* "_kernel_durations" */
    int n_durations_row;       /* not yet in a row */
    hta_table *job_tables[5];  /* the job's path's tables, each found once
                                * (critical_path_intervals.c) */
    int replay;                /* --replay: each step's graph kept for the job's replay */
    hta_table *replay_tables[2]; /* "_replay_nodes", "_replay_edges", found once */
    uint32_t *replay_name_step; /* by name: 1 + the step replay_name_next counts in */
    int64_t *replay_name_next; /* by name: its launches so far in that step */
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

typedef struct path {
    uint32_t *edges;           /* edge ids, from the path's start */
    size_t n, cap;
    int ok;                    /* the graph had no cycle */
} path;


static inline int is_sync_event(const rank_state *r, const hta_event *e)
{
    return e->cat == r->cat_sync;
}

/* A CPU node of HTA's graph: a CPU op, a runtime or driver call, or a
 * data-loading event (HTA's data_load_events, here every name with
 * "DataLoader"). */
static inline int is_cpu_node(const rank_state *r, const hta_event *e)
{
    return e->cat == r->cat_cpu_op || e->cat == r->cat_runtime || e->cat == r->cat_driver ||
           (r->name_flags[e->name] & N_DATA_LOADING);
}

static inline uint32_t thread_of(const rank_state *r, const hta_event *e)
{
    return hta_cpu_context_of(&r->contexts, e)->thread;
}

static inline const hta_event *cpu_by_correlation(const rank_state *r, int64_t correlation)
{
    uint32_t i;
    if (correlation < 0 || !hta_corrmap_get(&r->v->cpu_by_correlation, correlation, &i))
        return NULL;
    return &r->t->events[i];
}

static inline const hta_event *runtime_of(const rank_state *r, const hta_event *e)
{
    return cpu_by_correlation(r, hta_event_correlation(r->t, e));
}

/* runtime_of the GPU event at place p in view->gpu, looked up once. */
static inline const hta_event *gpu_runtime_of(const rank_state *r, size_t p)
{
    uint32_t i = r->gpu_runtime[p];
    return i == UINT32_MAX ? NULL : &r->t->events[i];
}


/* The cause an edge of the path is put down to (HTA_CP_NONE: none). */
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

/* ---- critical_path_steps.c -------------------------------------------- */

/* Every counted kernel's launch and start, stream by stream (HTA's queue
 * length series): ql_runtime, ql_kernel, gpu_runtime and launches. */
int cp_count_queues(rank_state *r);

/* The first launch on stream at or after ts (or after it when strictly). */
size_t cp_launch_lower_bound(const rank_state *r, uint32_t stream, int64_t ts, int strictly);

/* The ProfilerStep windows, by start. */
int cp_find_steps(rank_state *r);

/* The events dealt out to the steps: members, step_first, member_of. */
int cp_deal_members(rank_state *r);

/* ---- critical_path_graph.c -------------------------------------------- */

/* Builds step s's graph into r->g. */
int cp_build_graph(rank_state *r, size_t s);

/* ---- critical_path_longest.c ------------------------------------------ */

/* networkx's dag_longest_path of r->g into out (out->ok = 0: a cycle). */
int cp_longest_path(rank_state *r, path *out);

/* ---- critical_path_results.c ------------------------------------------ */

/* The step's rows of /critical_path and /critical_path_events. */
int cp_emit_step(rank_state *r, const step_window *w, const path *p, hta_tableset *out);

/* Gives a step's path to the caller of hta_critical_path_each. */
int cp_hand_path(rank_state *r, const step_window *w, const path *p);

/* ---- critical_path_intervals.c --------------------------------------- */

/* The step's rows of "_path_intervals" and "_path_names" (the longest
 * path's via edges, left in S_VIA by cp_longest_path), and its operator
 * time per name into name_time. */
int cp_put_intervals(rank_state *r, size_t s, const path *p, hta_tableset *out);

/* "_path_name_times" from name_time, and the last row of
 * "_kernel_durations", once every step is done. */
int cp_put_name_times(rank_state *r, hta_tableset *out);

/* The name's "_path_names" id, listed on its first use (negative ids
 * pass through); -3 when out of memory. */
int64_t cp_path_name_id(rank_state *r, int64_t name, hta_tableset *out);

/* ---- critical_path_replay.c ------------------------------------------ */

/* The step's graph into "_replay_nodes" and "_replay_edges" (after
 * cp_put_intervals, whose name ids it shares). */
int cp_put_replay_graph(rank_state *r, size_t s, hta_tableset *out);

#endif
