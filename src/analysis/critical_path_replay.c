/* critical_path_replay.c: each step's graph kept for the replay of the
 * job (see analysis/critical_path.h, "_replay_nodes", and
 * crossrank/job_path/replay.h).
 *
 * The graph is HTA's critical-path graph of the step as
 * critical_path_graph.c builds it: CPU ops and runtime calls in their
 * thread's order with the measured time between them, each kernel after
 * its launch (when its stream's queue was empty) or after the kernel
 * before it on its stream, the syncs the cuda_sync records name (stream
 * waits, device, stream and event synchronisations), data loading as CPU
 * ops.  What the replay needs of it is small: each node's measured time,
 * each edge's ends, measured weight and cause, and for a kernel its name,
 * by which a scenario scales it.  A communication kernel's duration
 * holds its wait for the others, which the replay recomputes from the
 * instance, so its edge is left out and its end marked instead. */
#include "analysis/critical_path_internal.h"

#include <stdlib.h>
#include <string.h>

static const hta_column NODE_COLUMNS[HTA_REPLAY_NODES_N_COLUMNS] = {
    [HTA_REPLAY_NODES_RANK] = {"rank", HTA_COL_I64},
    [HTA_REPLAY_NODES_STEP] = {"step", HTA_COL_I64},
    [HTA_REPLAY_NODES_TS_NS] = {"ts_ns", HTA_COL_I64},
    [HTA_REPLAY_NODES_INFO] = {"info", HTA_COL_I64},
    [HTA_REPLAY_NODES_AUX] = {"aux", HTA_COL_I64},
};
const hta_table_spec hta_replay_nodes_table = {
    "_replay_nodes", NODE_COLUMNS, HTA_REPLAY_NODES_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_EXCHANGED | HTA_TABLE_SCRATCH};

static const hta_column EDGE_COLUMNS[HTA_REPLAY_EDGES_N_COLUMNS] = {
    [HTA_REPLAY_EDGES_RANK] = {"rank", HTA_COL_I64},
    [HTA_REPLAY_EDGES_ENDS] = {"ends", HTA_COL_I64},
    [HTA_REPLAY_EDGES_WEIGHT_NS] = {"weight_ns", HTA_COL_I64},
    [HTA_REPLAY_EDGES_WHAT] = {"what", HTA_COL_I64},
};
const hta_table_spec hta_replay_edges_table = {
    "_replay_edges", EDGE_COLUMNS, HTA_REPLAY_EDGES_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_EXCHANGED | HTA_TABLE_SCRATCH};

static int put_cells(hta_table *t, const int64_t *cells, int n)
{
    hta_row_builder row = hta_table_add_row(t);
    for (int c = 0; c < n; c++)
        hta_row_put_i64(&row, cells[c]);
    return hta_row_done(&row);
}

/* Whether node v starts or ends a communication kernel. */
static int is_comm_kernel_node(const rank_state *r, const node *v)
{
    const hta_event *e = &r->t->events[v->ev];
    return hta_event_is_gpu(e) && !is_sync_event(r, e) &&
           e->kernel_type == HTA_KT_COMMUNICATION;
}

/* An edge's two node ids in one cell: source above, destination below. */
static int64_t node_pair(uint32_t src, uint32_t dst)
{
    return (int64_t)((uint64_t)src << 32 | dst);
}

/* The edge's cause, its kernel's name id and place, packed as "what";
 * -1 when out of memory.  place: by step member. */
static int64_t what_of(rank_state *r, const edge *e, const int64_t *place, hta_tableset *out)
{
    hta_cp_bound b = bound_of(r, e);
    int64_t what = (int64_t)b;
    if ((b == HTA_CP_GPU_COMPUTE || b == HTA_CP_GPU_COMMUNICATION) && e->attr >= 0) {
        int64_t id = cp_path_name_id(r, r->t->events[e->attr].name, out);
        int32_t local = r->member_of[e->attr];
        if (id < -2)
            return -1;
        what |= (id + 1) << 8 | (local >= 0 ? place[local] : 0) << 32;
    }
    return what;
}

/* Each kernel's place among the step's launches of its name that are not
 * communication, by start (put_kernel_places' order), by step member;
 * NULL when out of memory. */
static int64_t *kernel_places(rank_state *r, size_t s)
{
    const graph *g = &r->g;
    size_t names = r->t->names.count, n = r->step_first[s + 1] - r->step_first[s];
    if (!r->replay_name_step) {
        r->replay_name_step = calloc(names + 1, sizeof *r->replay_name_step);
        r->replay_name_next = calloc(names + 1, sizeof *r->replay_name_next);
    }
    int64_t *place = scratch(r, S_REPLAY_PLACE, n, sizeof *place);
    if (!r->replay_name_step || !r->replay_name_next || !place)
        return NULL;
    for (size_t v = 0; v < g->n_nodes; v++) {
        const node *x = &g->nodes[v];
        const hta_event *e = &r->t->events[x->ev];
        int32_t local = r->member_of[x->ev];
        if (!x->is_start || !hta_event_is_gpu(e) || is_sync_event(r, e) || local < 0 ||
            e->kernel_type == HTA_KT_COMMUNICATION)
            continue;
        if (r->replay_name_step[e->name] != s + 1) {
            r->replay_name_step[e->name] = (uint32_t)(s + 1);
            r->replay_name_next[e->name] = 0;
        }
        place[local] = r->replay_name_next[e->name]++;
    }
    return place;
}

static hta_table *replay_table(rank_state *r, int which, hta_tableset *out)
{
    if (!r->replay_tables[which])
        r->replay_tables[which] =
            hta_tableset_table(out, which ? &hta_replay_edges_table : &hta_replay_nodes_table);
    return r->replay_tables[which];
}

/* Whether e is a communication kernel's own duration. */
static int is_comm_duration(const rank_state *r, const edge *e)
{
    const graph *g = &r->g;
    return e->type == E_OPERATOR && g->nodes[e->src].ev == g->nodes[e->dst].ev &&
           g->nodes[e->src].is_start && !g->nodes[e->dst].is_start &&
           is_comm_kernel_node(r, &g->nodes[e->src]);
}

/* Whether node v ends a host synchronisation (a runtime call waiting
 * for the GPU). */
static int ends_host_sync(const rank_state *r, const node *v)
{
    const hta_event *e = &r->t->events[v->ev];
    return !v->is_start && !hta_event_is_gpu(e) && (r->name_flags[e->name] & N_BLOCKING) &&
           strstr(hta_strtab_get(&r->t->names, e->name), "Synchronize");
}

/* For each host synchronisation whose end no cuda_sync record ties to
 * the GPU work it waits for (a trace without them), the end of the
 * kernel that ended last before it: wait_for[v], else UINT32_MAX. */
static uint32_t *untied_syncs(rank_state *r, size_t *n_ties)
{
    const graph *g = &r->g;
    uint32_t *wait_for = scratch(r, S_REPLAY_WAIT, g->n_nodes, sizeof *wait_for);
    if (!wait_for)
        return NULL;
    memset(wait_for, 0xff, g->n_nodes * sizeof *wait_for);
    uint8_t *tied = scratch(r, S_REPLAY_TIED, g->n_nodes, 1);
    if (!tied)
        return NULL;
    memset(tied, 0, g->n_nodes);
    for (size_t i = 0; i < g->n_edges; i++)
        if (g->edges[i].type == E_SYNC)
            tied[g->edges[i].dst] = 1;
    uint32_t last_end = UINT32_MAX;
    *n_ties = 0;
    for (size_t v = 0; v < g->n_nodes; v++) {
        const node *x = &g->nodes[v];
        const hta_event *e = &r->t->events[x->ev];
        if (!x->is_start && hta_event_is_gpu(e) && !is_sync_event(r, e))
            last_end = (uint32_t)v;
        else if (!tied[v] && last_end != UINT32_MAX && ends_host_sync(r, x)) {
            wait_for[v] = last_end;
            ++*n_ties;
        }
    }
    return wait_for;
}

int cp_put_replay_graph(rank_state *r, size_t s, hta_tableset *out)
{
    const graph *g = &r->g;
    const step_window *w = &r->steps[s];
    hta_table *nodes = replay_table(r, 0, out), *edges = replay_table(r, 1, out);
    size_t n_ties = 0;
    const uint32_t *wait_for = untied_syncs(r, &n_ties);
    const int64_t *place = kernel_places(r, s);
    if (!nodes || !edges || !wait_for || !place)
        return -1;
    int64_t rank = r->v->rank_key, n_edges = (int64_t)n_ties;
    for (size_t i = 0; i < g->n_edges; i++)
        n_edges += !is_comm_duration(r, &g->edges[i]);
    int64_t head[HTA_REPLAY_NODES_N_COLUMNS] = {
        rank, w->number, w->start, HTA_REPLAY_STEP_HEAD | n_edges << 2, w->end - w->start};
    if (put_cells(nodes, head, HTA_REPLAY_NODES_N_COLUMNS))
        return -1;
    for (size_t v = 0; v < g->n_nodes; v++) {
        const node *x = &g->nodes[v];
        int comm = is_comm_kernel_node(r, x);
        int64_t kind = !comm ? HTA_REPLAY_PLAIN
                             : x->is_start ? HTA_REPLAY_COMM_START : HTA_REPLAY_COMM_END;
        int64_t aux = -1;
        if (kind == HTA_REPLAY_COMM_END) {
            int32_t local = r->member_of[x->ev];
            aux = local >= 0 ? g->start_of[local] : -1;
        }
        int64_t cpu = !hta_event_is_gpu(&r->t->events[x->ev]);
        int64_t cells[HTA_REPLAY_NODES_N_COLUMNS] = {rank, w->number, x->ts, kind | cpu << 2, aux};
        if (put_cells(nodes, cells, HTA_REPLAY_NODES_N_COLUMNS))
            return -1;
    }
    for (size_t i = 0; i < g->n_edges; i++) {
        const edge *e = &g->edges[i];
        if (is_comm_duration(r, e))
            continue;
        int64_t what = what_of(r, e, place, out);
        int64_t weight = e->weight > 0 ? e->weight : 0;
        int64_t cells[HTA_REPLAY_EDGES_N_COLUMNS] = {rank, node_pair(e->src, e->dst), weight,
                                                     what};
        if (what < 0 || put_cells(edges, cells, HTA_REPLAY_EDGES_N_COLUMNS))
            return -1;
    }
    for (size_t v = 0; v < g->n_nodes; v++) {
        if (wait_for[v] == UINT32_MAX)
            continue;
        int64_t cells[HTA_REPLAY_EDGES_N_COLUMNS] = {rank, node_pair(wait_for[v], (uint32_t)v), 0,
                                                     HTA_CP_NONE};
        if (put_cells(edges, cells, HTA_REPLAY_EDGES_N_COLUMNS))
            return -1;
    }
    return 0;
}
