/* replay.c: the job's steps replayed from their dependency graph, spread
 * over the processes (see crossrank/job_path/replay.h; docs/crossrank.md,
 * "/what_if"; docs/definitions.md, What-if).
 *
 * The job's graph is the ranks' step graphs (analysis/critical_path.h,
 * "_replay_nodes") joined at the instances the matching found: each
 * collective instance, send/recv pair and all-to-all.  A node's replayed
 * time is the latest of its predecessors' plus the edges' weights (the
 * measured ones, or a scenario's), plus its slack: how much later than
 * that it was measured (what held it that the graph does not show).
 * A rank's step ends as much later or earlier than measured as its
 * latest CPU node (its last kernel's end in a trace without CPU nodes):
 * the step is the ProfilerStep's CPU range, which ends when the CPU is
 * done, waiting for the GPU where it synchronises with it.  A
 * node without predecessors keeps its measured time.  A communication
 * kernel's end is the instance's: it ends its transfer after the last
 * member arrives.  In each rank's own clock that is its measured end
 * moved by M = max over the members j of (how much later j arrives than
 * measured - j's measured wait), since a member's measured wait is how
 * much earlier than the last it arrived (in the aligned clocks the
 * matching used): so no clock offset is needed here, and as measured M
 * is 0 (the last arriver waited nothing).  A transfer F times faster
 * ends (1 - 1/F) of it earlier.
 *
 * Each process replays the ranks it holds, in one topological order of
 * their graphs and of the instances they take part in, so an instance
 * whose members are all here is resolved in the same pass.  An instance
 * with members elsewhere takes, besides its local members, the others'
 * M from the round before (none at first); after each pass every process
 * sends the M of each such instance to the instance's owner (by a hash
 * of the instance), which returns the largest.  Times only grow from
 * round to round, and a round makes exact every time whose chain of
 * dependencies changes process once more, so the rounds stop, when no M
 * changes, after at most the most changes of process along a chain plus
 * one; only instances' M values ever leave a process.  After the first
 * round a pass computes again only what the others' new values move.
 *
 * The graph and the kernels' medians are built once, during the
 * matching (hta_replay_build), and replayed later, once the root has
 * chosen the scenarios (hta_replay_run, crossrank/job_path/what_if.c). */
#define _GNU_SOURCE /* qsort_r */
#include "crossrank/job_path/replay.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/critical_path.h"
#include "crossrank/job_path/scenarios.h"
#include "crossrank/job_path/kernel_medians.h"
#include "util/ranked.h"

#define NONE SIZE_MAX

static const hta_column SPAN_COLUMNS[HTA_REPLAY_SPANS_N_COLUMNS] = {
    [HTA_REPLAY_SPANS_STEP] = {"step", HTA_COL_I64},
    [HTA_REPLAY_SPANS_SCENARIO] = {"scenario", HTA_COL_I64},
    [HTA_REPLAY_SPANS_REPLAYED_NS] = {"replayed_ns", HTA_COL_I64},
    [HTA_REPLAY_SPANS_MEASURED_NS] = {"measured_ns", HTA_COL_I64},
};
const hta_table_spec hta_replay_spans_table = {"_replay_spans", SPAN_COLUMNS,
                                               HTA_REPLAY_SPANS_N_COLUMNS,
                                               HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};

typedef struct rp_step {
    int64_t rank, number, start, length;
    size_t first, n;           /* its nodes */
    size_t end;                /* the node its end moves with */
} rp_step;

typedef struct rp_edge {
    size_t src;
    int64_t weight, what;
} rp_edge;

/* An op of a rank held here: its kernel's nodes (NONE: not in a step's
 * graph), its measured wait and transfer, its instance here. */
typedef struct rp_op {
    size_t start, end, inst;
    int64_t wait, transfer;
} rp_op;

/* An instance as every process names it. */
typedef struct rp_key {
    uint32_t group;
    int32_t by_seq;
    int64_t key;
} rp_key;

struct hta_replay {
    const hta_processes *pr;
    size_t n;                  /* nodes */
    int64_t *ts, *slack;
    uint8_t *kind;
    size_t *partner, *step_of;
    rp_step *steps;
    size_t n_steps;
    size_t *in_first;          /* n + 1: edges into each node */
    rp_edge *in;
    rp_op *ops;
    size_t n_ops;
    size_t *end_first, *end_ops; /* n + 1: the ops of each communication kernel's end */
    size_t n_inst;
    rp_key *keys;              /* by instance: its name */
    size_t *inst_first, *inst_ops; /* n_inst + 1: each instance's local ops */
    uint8_t *shared;           /* by instance: members on other processes */
    size_t *order, n_order;    /* nodes (< n) and instances (n + i) */
    size_t *out_first, *out_list; /* n + n_inst + 1: what each vertex holds up */
    hta_kernel_median *medians; /* its ranks' launches by place */
    size_t n_medians;
    /* The lane replayed now (rp_state): by step here, the scenario
     * that changes it (NULL: as measured); its nodes' times, its
     * instances' M, the other processes' M, what to compute again. */
    const hta_scenario **at;
    int64_t *t, *m, *remote;
    uint8_t *dirty;
};
typedef struct hta_replay replay;

static void replay_free(replay *x)
{
    free(x->ts);
    free(x->slack);
    free(x->kind);
    free(x->partner);
    free(x->step_of);
    free(x->steps);
    free(x->in_first);
    free(x->in);
    free(x->ops);
    free(x->end_first);
    free(x->end_ops);
    free(x->keys);
    free(x->inst_first);
    free(x->inst_ops);
    free(x->shared);
    free(x->order);
    free(x->out_first);
    free(x->out_list);
    free(x->medians);
}

static void *alloc_n(size_t n, size_t size)
{
    return malloc((n ? n : 1) * size);
}

/* The steps and nodes of "_replay_nodes". */
static int load_nodes(replay *x, const hta_table *t, size_t *n_edges)
{
    size_t rows = t ? t->n_rows : 0, steps = 0;
    for (size_t i = 0; i < rows; i++)
        steps += hta_table_row(t, i)[HTA_REPLAY_NODES_INFO].i % 4 == HTA_REPLAY_STEP_HEAD;
    size_t n = rows - steps;
    x->ts = alloc_n(n, sizeof *x->ts);
    x->slack = calloc(n ? n : 1, sizeof *x->slack);
    x->kind = alloc_n(n, 1);
    x->partner = alloc_n(n, sizeof *x->partner);
    x->step_of = alloc_n(n, sizeof *x->step_of);
    x->steps = alloc_n(steps, sizeof *x->steps);
    if (!x->ts || !x->slack || !x->kind || !x->partner || !x->step_of || !x->steps)
        return -1;
    *n_edges = 0;
    for (size_t i = 0; i < rows; i++) {
        const hta_cell *row = hta_table_row(t, i);
        int64_t info = row[HTA_REPLAY_NODES_INFO].i, aux = row[HTA_REPLAY_NODES_AUX].i;
        if (info % 4 == HTA_REPLAY_STEP_HEAD) {
            x->steps[x->n_steps++] = (rp_step){row[HTA_REPLAY_NODES_RANK].i,
                                               row[HTA_REPLAY_NODES_STEP].i,
                                               row[HTA_REPLAY_NODES_TS_NS].i, aux, x->n, 0,
                                               NONE};
            *n_edges += (size_t)(info >> 2);
            continue;
        }
        if (x->n_steps == 0)
            return -1;
        rp_step *s = &x->steps[x->n_steps - 1];
        x->ts[x->n] = row[HTA_REPLAY_NODES_TS_NS].i;
        x->kind[x->n] = (uint8_t)(info & 3);
        if ((info & 4) && (s->end == NONE || x->ts[x->n] >= x->ts[s->end]))
            s->end = x->n; /* the latest CPU node */
        x->partner[x->n] = aux >= 0 && (size_t)aux < x->n - s->first + 1 ? s->first + (size_t)aux
                                                                         : NONE;
        x->step_of[x->n++] = x->n_steps - 1;
        s->n++;
    }
    return 0;
}

/* The edges of "_replay_edges", step by step, by their ends into in. */
static int load_edges(replay *x, const hta_table *t, size_t n_edges, const hta_table *nodes)
{
    if ((t ? t->n_rows : 0) != n_edges)
        return -1;
    size_t *src = alloc_n(n_edges, sizeof *src), *dst = alloc_n(n_edges, sizeof *dst);
    x->in_first = calloc(x->n + 2, sizeof *x->in_first);
    x->in = alloc_n(n_edges, sizeof *x->in);
    int rc = !src || !dst || !x->in_first || !x->in ? -1 : 0;
    size_t e = 0, step = 0;
    for (size_t i = 0; rc == 0 && nodes && i < nodes->n_rows; i++) {
        const hta_cell *head = hta_table_row(nodes, i);
        if (head[HTA_REPLAY_NODES_INFO].i % 4 != HTA_REPLAY_STEP_HEAD)
            continue;
        const rp_step *s = &x->steps[step++];
        for (int64_t k = 0; rc == 0 && k < head[HTA_REPLAY_NODES_INFO].i >> 2; k++, e++) {
            const hta_cell *row = hta_table_row(t, e);
            uint64_t ends = (uint64_t)row[HTA_REPLAY_EDGES_ENDS].i;
            size_t a = (size_t)(ends >> 32), b = (size_t)(ends & 0xffffffffu);
            rc = a >= s->n || b >= s->n || row[HTA_REPLAY_EDGES_RANK].i != s->rank ? -1 : 0;
            src[e] = s->first + a;
            dst[e] = s->first + b;
            x->in_first[dst[e] + 2]++;
            x->in[e] = (rp_edge){0, row[HTA_REPLAY_EDGES_WEIGHT_NS].i,
                                 row[HTA_REPLAY_EDGES_WHAT].i};
        }
    }
    rp_edge *sorted = rc ? NULL : alloc_n(n_edges, sizeof *sorted);
    if (sorted) {
        for (size_t v = 0; v < x->n; v++)
            x->in_first[v + 2] += x->in_first[v + 1];
        for (size_t k = 0; k < n_edges; k++) {
            sorted[x->in_first[dst[k] + 1]++] = x->in[k];
            sorted[x->in_first[dst[k] + 1] - 1].src = src[k];
        }
        free(x->in);
        x->in = sorted;
    }
    free(src);
    free(dst);
    return rc || !sorted ? -1 : 0;
}

/* Each node's slack: how much later it was measured than its
 * predecessors and edges put it. */
static void measure_slack(replay *x)
{
    for (size_t v = 0; v < x->n; v++) {
        int64_t best = INT64_MIN;
        for (size_t k = x->in_first[v]; k < x->in_first[v + 1]; k++) {
            int64_t c = x->ts[x->in[k].src] + x->in[k].weight;
            best = c > best ? c : best;
        }
        x->slack[v] = best != INT64_MIN && x->kind[v] != HTA_REPLAY_COMM_END && x->ts[v] > best
                          ? x->ts[v] - best
                          : 0;
    }
}

/* The communication kernels' starts by (rank, time), for the ops. */
static int compare_start(const void *a, const void *b, void *ctx)
{
    const replay *x = ctx;
    size_t u = *(const size_t *)a, v = *(const size_t *)b;
    int c = hta_cmp_i64(x->steps[x->step_of[u]].rank, x->steps[x->step_of[v]].rank);
    c = c ? c : hta_cmp_i64(x->ts[u], x->ts[v]);
    return c ? c : (u > v) - (u < v);
}

/* The start of the rank's communication kernel from ts to end not yet
 * taken (of those starting at ts, the first untaken when none ends
 * then), marked taken; NONE when none. */
static size_t find_start(const replay *x, const size_t *starts, size_t n, const size_t *end_of,
                         uint8_t *taken, int64_t rank, int64_t ts, int64_t end)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t r = x->steps[x->step_of[starts[mid]]].rank;
        if (r < rank || (r == rank && x->ts[starts[mid]] < ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t any = NONE;
    for (; lo < n && x->steps[x->step_of[starts[lo]]].rank == rank && x->ts[starts[lo]] == ts;
         lo++) {
        size_t v = starts[lo];
        if (taken[v])
            continue;
        if (end_of[v] != NONE && x->ts[end_of[v]] == end) {
            taken[v] = 1;
            return v;
        }
        any = any == NONE ? v : any;
    }
    if (any != NONE)
        taken[any] = 1;
    return any;
}

/* Each op's kernel nodes, wait and transfer. */
static int attach_ops(replay *x, const hta_rank_ops *r, const hta_op_result *res)
{
    size_t n_starts = 0;
    size_t *starts = alloc_n(x->n, sizeof *starts), *end_of = alloc_n(x->n, sizeof *end_of);
    x->ops = alloc_n(r->n, sizeof *x->ops);
    if (!starts || !end_of || !x->ops) {
        free(starts);
        free(end_of);
        return -1;
    }
    for (size_t v = 0; v < x->n; v++) {
        end_of[v] = NONE;
        if (x->kind[v] == HTA_REPLAY_COMM_START)
            starts[n_starts++] = v;
    }
    for (size_t v = 0; v < x->n; v++)
        if (x->kind[v] == HTA_REPLAY_COMM_END && x->partner[v] != NONE)
            end_of[x->partner[v]] = v;
    qsort_r(starts, n_starts, sizeof *starts, compare_start, x);
    uint8_t *taken = calloc(x->n + 1, 1);
    for (size_t i = 0; taken && i < r->n; i++) {
        const hta_group_op *o = &r->ops[i];
        size_t s = i > 0 && r->same_kernel[i]
                       ? x->ops[i - 1].start
                       : find_start(x, starts, n_starts, end_of, taken, o->rank, o->start, o->end);
        int64_t wait = res[i].wait_ns > 0 ? res[i].wait_ns : 0;
        int64_t transfer = o->end - o->start - wait;
        x->ops[i] = (rp_op){s, s == NONE ? NONE : end_of[s], NONE, wait,
                            transfer > 0 ? transfer : 0};
    }
    x->n_ops = r->n;
    free(starts);
    free(end_of);
    int rc = taken ? 0 : -1;
    free(taken);
    return rc;
}

/* Lists of items (ops) by a node or instance: first[0..n], items. */
static int list_by(size_t n, const rp_op *ops, size_t n_ops, int by_inst, size_t **first,
                   size_t **items)
{
    *first = calloc(n + 2, sizeof **first);
    *items = alloc_n(n_ops, sizeof **items);
    if (!*first || !*items)
        return -1;
    for (size_t i = 0; i < n_ops; i++) {
        size_t at = by_inst ? ops[i].inst : ops[i].end;
        if (at != NONE)
            (*first)[at + 2]++;
    }
    for (size_t v = 0; v < n; v++)
        (*first)[v + 2] += (*first)[v + 1];
    for (size_t i = 0; i < n_ops; i++) {
        size_t at = by_inst ? ops[i].inst : ops[i].end;
        if (at != NONE)
            (*items)[(*first)[at + 1]++] = i;
    }
    return 0;
}

static int compare_op_instance(const void *a, const void *b, void *ctx)
{
    const hta_group_op *ops = ctx, *x = &ops[*(const size_t *)a], *y = &ops[*(const size_t *)b];
    int c = hta_cmp_i64(x->group, y->group);
    c = c ? c : hta_cmp_i64(x->by_seq, y->by_seq);
    return c ? c : hta_cmp_i64(x->key, y->key);
}

/* The instances of the ops, and which have members elsewhere. */
static int find_instances(replay *x, const hta_rank_ops *r, const hta_op_result *res)
{
    size_t *by = alloc_n(r->n, sizeof *by);
    x->keys = alloc_n(r->n, sizeof *x->keys);
    x->shared = alloc_n(r->n, 1);
    if (!by || !x->keys || !x->shared) {
        free(by);
        return -1;
    }
    for (size_t i = 0; i < r->n; i++)
        by[i] = i;
    qsort_r(by, r->n, sizeof *by, compare_op_instance, r->ops);
    for (size_t k = 0, local = 0; k < r->n; k++) {
        const hta_group_op *o = &r->ops[by[k]];
        if (k == 0 || compare_op_instance(&by[k - 1], &by[k], r->ops)) {
            x->keys[x->n_inst] = (rp_key){o->group, o->by_seq, o->key};
            x->shared[x->n_inst++] = 0;
            local = 0;
        }
        local++;
        x->ops[by[k]].inst = x->n_inst - 1;
        x->shared[x->n_inst - 1] = (int64_t)local < res[by[k]].n_ranks;
    }
    free(by);
    return list_by(x->n_inst, x->ops, x->n_ops, 1, &x->inst_first, &x->inst_ops);
}

/* One topological order of the nodes and instances (those on a cycle,
 * which consistent traces never make, after the others). */
static int order_vertices(replay *x)
{
    size_t nv = x->n + x->n_inst, n_out = x->in_first[x->n];
    for (size_t v = 0; v < x->n; v++)
        n_out += x->partner[v] != NONE;
    for (size_t i = 0; i < x->n_ops; i++)
        n_out += (x->ops[i].start != NONE) + (x->ops[i].end != NONE);
    size_t *first = calloc(nv + 2, sizeof *first), *list = alloc_n(n_out, sizeof *list);
    size_t *indeg = calloc(nv + 1, sizeof *indeg);
    uint8_t *done = calloc(nv + 1, 1);
    x->order = alloc_n(nv, sizeof *x->order);
    int rc = !first || !list || !indeg || !done || !x->order ? -1 : 0;
    for (int pass = 0; rc == 0 && pass < 2; pass++) {
        for (size_t v = 0; v < x->n; v++) {
            /* A communication kernel ends after it starts. */
            if (x->partner[v] != NONE) {
                if (pass)
                    list[first[x->partner[v] + 1]++] = v;
                else
                    first[x->partner[v] + 2]++;
            }
            for (size_t k = x->in_first[v]; k < x->in_first[v + 1]; k++) {
                if (pass)
                    list[first[x->in[k].src + 1]++] = v;
                else
                    first[x->in[k].src + 2]++;
            }
        }
        for (size_t i = 0; i < x->n_ops; i++) {
            const rp_op *o = &x->ops[i];
            size_t inst = x->n + o->inst;
            if (o->start != NONE) {
                if (pass)
                    list[first[o->start + 1]++] = inst;
                else
                    first[o->start + 2]++;
            }
            if (o->end != NONE) {
                if (pass)
                    list[first[inst + 1]++] = o->end;
                else
                    first[inst + 2]++;
            }
        }
        for (size_t v = 0; pass == 0 && v < nv; v++)
            first[v + 2] += first[v + 1];
    }
    for (size_t k = 0; rc == 0 && k < n_out; k++)
        indeg[list[k]]++;
    size_t head = 0, tail = 0;
    for (size_t v = 0; rc == 0 && v < nv; v++)
        if (indeg[v] == 0)
            x->order[tail++] = v, done[v] = 1;
    while (rc == 0 && head < tail) {
        size_t v = x->order[head++];
        for (size_t k = first[v]; k < first[v + 1]; k++)
            if (--indeg[list[k]] == 0)
                x->order[tail++] = list[k], done[list[k]] = 1;
    }
    for (size_t v = 0; rc == 0 && v < nv; v++)
        if (!done[v])
            x->order[tail++] = v;
    x->n_order = tail;
    x->out_first = first;
    x->out_list = list;
    free(indeg);
    free(done);
    return rc;
}

/* A compute kernel's duration at the median over the ranks of its place
 * (never longer than measured). */
static int64_t at_median(const replay *x, const rp_edge *e, size_t step, int64_t name)
{
    hta_kernel_median probe = {x->steps[step].rank, x->steps[step].number, name,
                               (int64_t)((uint64_t)e->what >> 32), 0};
    const hta_kernel_median *m =
        bsearch(&probe, x->medians, x->n_medians, sizeof *m, hta_kernel_median_compare);
    return m && m->median < (double)e->weight ? llround(m->median) : e->weight;
}

/* An edge's weight under the scenario. */
static int64_t weight_of(const replay *x, const rp_edge *e, size_t step)
{
    const hta_scenario *sc = x->at[step];
    if (!sc || sc->kind == HTA_SCENARIO_AS_MEASURED || sc->kind == HTA_SCENARIO_NETWORK)
        return e->weight;
    int64_t bound = e->what & 0xff, name = ((e->what >> 8) & 0xffffff) - 1;
    switch (sc->kind) {
    case HTA_SCENARIO_MEDIAN:
        if (bound != HTA_CP_GPU_COMPUTE)
            return e->weight;
        return at_median(x, e, step, name);
    case HTA_SCENARIO_COMPUTE:
        return bound == HTA_CP_GPU_COMPUTE ? llround((double)e->weight / sc->factor) : e->weight;
    case HTA_SCENARIO_NO_DATA_LOADING:
        return bound == HTA_CP_DATA_LOADING ? 0 : e->weight;
    case HTA_SCENARIO_NO_LAUNCH_DELAY:
        return bound == HTA_CP_KERNEL_LAUNCH ? 0 : e->weight;
    default:
        return e->weight;
    }
}

static int64_t max_i64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* A communication kernel's end: the instances' of its ops, or with none
 * matched, its measured duration after its start. */
static int64_t comm_end(const replay *x, size_t v, int64_t best)
{
    const hta_scenario *sc = x->at[x->step_of[v]];
    double keep = sc && sc->kind == HTA_SCENARIO_NETWORK ? 1 - 1 / sc->factor : 0;
    size_t start = x->partner[v];
    if (start != NONE)
        best = max_i64(best, x->t[start]);
    if (x->end_first[v] == x->end_first[v + 1])
        return start != NONE ? max_i64(best, x->t[start] + x->ts[v] - x->ts[start])
                             : max_i64(best, x->ts[v]);
    for (size_t k = x->end_first[v]; k < x->end_first[v + 1]; k++) {
        const rp_op *o = &x->ops[x->end_ops[k]];
        best = max_i64(best, x->ts[v] + x->m[o->inst] - llround(keep * (double)o->transfer));
    }
    return best;
}

/* The instance's M from its local members and the others' last value. */
static int64_t instance_m(const replay *x, size_t i)
{
    int64_t m = x->remote[i];
    for (size_t k = x->inst_first[i]; k < x->inst_first[i + 1]; k++) {
        const rp_op *o = &x->ops[x->inst_ops[k]];
        int64_t late = o->start != NONE ? x->t[o->start] - x->ts[o->start] : 0;
        m = max_i64(m, late - o->wait);
    }
    return m;
}

/* One pass over the nodes and instances here whose predecessors moved
 * (dirty), marking what they hold up when they move in turn. */
static void replay_pass(replay *x)
{
    for (size_t k = 0; k < x->n_order; k++) {
        size_t v = x->order[k];
        if (!x->dirty[v])
            continue;
        x->dirty[v] = 0;
        int64_t before, now;
        if (v >= x->n) {
            before = x->m[v - x->n];
            now = x->m[v - x->n] = instance_m(x, v - x->n);
        } else {
            int64_t best = INT64_MIN;
            for (size_t j = x->in_first[v]; j < x->in_first[v + 1]; j++)
                best = max_i64(best,
                               x->t[x->in[j].src] + weight_of(x, &x->in[j], x->step_of[v]));
            before = x->t[v];
            if (x->kind[v] == HTA_REPLAY_COMM_END)
                now = comm_end(x, v, best);
            else
                now = best == INT64_MIN ? x->ts[v] : best + x->slack[v];
            x->t[v] = now;
        }
        for (size_t j = x->out_first[v]; now != before && j < x->out_first[v + 1]; j++)
            x->dirty[x->out_list[j]] = 1;
    }
}

/* The owner of an instance: a hash of its name. */
static int owner_of(const rp_key *k, int n)
{
    uint64_t h = (uint64_t)k->key * 0x9e3779b97f4a7c15u ^ (uint64_t)k->group << 32 ^
                 (uint64_t)(uint32_t)k->by_seq;
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9u;
    h ^= h >> 29;
    return (int)(h % (uint64_t)n);
}

static int compare_key(const void *a, const void *b, void *ctx)
{
    const rp_key *keys = ctx, *x = &keys[*(const size_t *)a], *y = &keys[*(const size_t *)b];
    int c = hta_cmp_i64(x->group, y->group);
    c = c ? c : hta_cmp_i64(x->by_seq, y->by_seq);
    return c ? c : hta_cmp_i64(x->key, y->key);
}

/* Where each shared instance's M goes, the same every round: the
 * counts and displacements per process (in elements of n_lanes values), each
 * shared instance's element in the send buffer, and on the owner the
 * elements received by instance (by) with each's run end (run_end). */
typedef struct rp_plan {
    int *counts, *displs, *recv_counts, *recv_displs;
    size_t n_shared, n_got, n_lanes;
    size_t *slot, *by, *run_end;
    int64_t *sent, *got;
} rp_plan;

static void plan_free(rp_plan *p)
{
    free(p->counts);
    free(p->slot);
    free(p->by);
    free(p->run_end);
    free(p->sent);
    free(p->got);
}

/* Owner: the received names in order, each's run of equal names. */
static int group_names(rp_plan *p, const rp_key *got)
{
    p->by = alloc_n(p->n_got, sizeof *p->by);
    p->run_end = alloc_n(p->n_got, sizeof *p->run_end);
    if (!p->by || !p->run_end)
        return -1;
    for (size_t i = 0; i < p->n_got; i++)
        p->by[i] = i;
    qsort_r(p->by, p->n_got, sizeof *p->by, compare_key, (void *)got);
    for (size_t i = 0, end; i < p->n_got; i = end) {
        for (end = i; end < p->n_got && compare_key(&p->by[i], &p->by[end], (void *)got) == 0;)
            end++;
        for (size_t k = i; k < end; k++)
            p->run_end[k] = end;
    }
    return 0;
}

/* Sends each shared instance's name to its owner once; -1 everywhere
 * when one process lacks memory. */
static int plan_exchange(const replay *x, size_t n_lanes, rp_plan *p)
{
    int np = x->pr->n;
    *p = (rp_plan){.n_lanes = n_lanes};
    for (size_t i = 0; i < x->n_inst; i++)
        p->n_shared += x->shared[i];
    p->counts = calloc(4 * (size_t)np, sizeof *p->counts);
    p->slot = alloc_n(p->n_shared, sizeof *p->slot);
    rp_key *names = alloc_n(p->n_shared, sizeof *names), *got = NULL;
    int failed = !p->counts || !p->slot || !names;
    if (!failed) {
        p->displs = p->counts + np;
        p->recv_counts = p->counts + 2 * np;
        p->recv_displs = p->counts + 3 * np;
        for (size_t i = 0; i < x->n_inst; i++)
            if (x->shared[i])
                p->counts[owner_of(&x->keys[i], np)]++;
        failed = hta_processes_displacements(p->counts, p->displs, np) != 0;
    }
    if (!hta_processes_any(x->pr, failed)) {
        int *next = p->recv_counts; /* free until the counts come back */
        memcpy(next, p->displs, (size_t)np * sizeof *next);
        for (size_t i = 0, k = 0; i < x->n_inst; i++)
            if (x->shared[i]) {
                p->slot[k] = (size_t)next[owner_of(&x->keys[i], np)]++;
                names[p->slot[k++]] = x->keys[i];
            }
        hta_processes_alltoall_int(x->pr, p->counts, p->recv_counts);
        failed = hta_processes_displacements(p->recv_counts, p->recv_displs, np) != 0;
        p->n_got = failed ? 0 : (size_t)p->recv_displs[np - 1] + (size_t)p->recv_counts[np - 1];
        got = failed ? NULL : alloc_n(p->n_got, sizeof *got);
        failed = hta_processes_any(x->pr, failed || !got);
        if (!failed) {
            hta_processes_alltoallv(x->pr, names, p->counts, p->displs, got, p->recv_counts,
                                    p->recv_displs, sizeof *got);
            p->sent = alloc_n(p->n_shared * n_lanes, sizeof *p->sent);
            p->got = alloc_n(p->n_got * n_lanes, sizeof *p->got);
            failed = hta_processes_any(x->pr,
                                       !p->sent || !p->got || group_names(p, got) != 0);
        }
    } else {
        failed = 1;
    }
    free(names);
    free(got);
    return failed ? -1 : 0;
}

/* One lane: by step here, the scenario it is replayed under (chosen,
 * an index; -1: not replayed) and the one that changes its rank's work
 * (at); its nodes' times, its instances' M, the others' M from the
 * round before. */
typedef struct rp_state {
    int32_t *chosen;
    const hta_scenario **at;
    int64_t *t, *m, *remote;
    uint8_t *dirty;            /* by vertex, to be computed again */
    long rounds;               /* 0 while its times still move */
} rp_state;

static void use_state(replay *x, const rp_state *st)
{
    x->at = st->at;
    x->t = st->t;
    x->m = st->m;
    x->remote = st->remote;
    x->dirty = st->dirty;
}

/* Every lane's shared instances' M to their owners, the largest of
 * each back; changed[s] whether lane s's moved (on any process). */
static void exchange_m(replay *x, rp_plan *p, rp_state *st, int64_t *changed)
{
    size_t n_sc = p->n_lanes;
    for (size_t i = 0, k = 0; i < x->n_inst; i++)
        if (x->shared[i]) {
            for (size_t s = 0; s < n_sc; s++)
                p->sent[p->slot[k] * n_sc + s] = st[s].m[i];
            k++;
        }
    hta_processes_alltoallv(x->pr, p->sent, p->counts, p->displs, p->got, p->recv_counts,
                            p->recv_displs, n_sc * sizeof *p->sent);
    for (size_t i = 0; i < p->n_got; i = p->run_end[i])
        for (size_t s = 0; s < n_sc; s++) {
            int64_t m = INT64_MIN;
            for (size_t k = i; k < p->run_end[i]; k++)
                m = max_i64(m, p->got[p->by[k] * n_sc + s]);
            for (size_t k = i; k < p->run_end[i]; k++)
                p->got[p->by[k] * n_sc + s] = m;
        }
    hta_processes_alltoallv(x->pr, p->got, p->recv_counts, p->recv_displs, p->sent, p->counts,
                            p->displs, n_sc * sizeof *p->sent);
    memset(changed, 0, n_sc * sizeof *changed);
    for (size_t i = 0, k = 0; i < x->n_inst; i++)
        if (x->shared[i]) {
            for (size_t s = 0; s < n_sc; s++) {
                int64_t v = p->sent[p->slot[k] * n_sc + s];
                if (v != st[s].remote[i])
                    changed[s] = st[s].dirty[x->n + i] = 1;
                st[s].remote[i] = v;
            }
            k++;
        }
    hta_processes_sum(x->pr, changed, n_sc);
}

/* Whether one of the instance's ops here is in a step the lane replays
 * (or in none). */
static int instance_replayed(const replay *x, const rp_state *st, size_t i)
{
    for (size_t k = x->inst_first[i]; k < x->inst_first[i + 1]; k++) {
        const rp_op *o = &x->ops[x->inst_ops[k]];
        size_t v = o->start != NONE ? o->start : o->end;
        if (v == NONE || st->chosen[x->step_of[v]] >= 0)
            return 1;
    }
    return 0;
}

/* A lane's state at its start: the steps it does not replay stay as
 * measured, uncomputed.  Where the graphs and instances make a cycle
 * (instances matched wrongly), a vertex read before it is computed
 * reads its measured time. */
static void start_state(const replay *x, const hta_scenario *sc, rp_state *st)
{
    memcpy(st->t, x->ts, x->n * sizeof *st->t);
    for (size_t i = 0; i < x->n_inst; i++) {
        st->m[i] = 0;
        st->remote[i] = INT64_MIN;
        st->dirty[x->n + i] = (uint8_t)instance_replayed(x, st, i);
    }
    for (size_t s = 0; s < x->n_steps; s++) {
        const hta_scenario *c = st->chosen[s] >= 0 ? &sc[st->chosen[s]] : NULL;
        st->at[s] = c && hta_scenario_covers(c, x->steps[s].rank) ? c : NULL;
    }
    for (size_t v = 0; v < x->n; v++)
        st->dirty[v] = st->chosen[x->step_of[v]] >= 0;
}

/* Every lane replayed to its fixed point, all at once: a round passes
 * over each lane still moving, then one exchange carries every lane's
 * M. */
static void replay_scenarios(replay *x, rp_plan *p, rp_state *st, int64_t *changed, long limit)
{
    size_t n_sc = p->n_lanes, moving = n_sc;
    for (long round = 1; moving; round++) {
        for (size_t s = 0; s < n_sc; s++)
            if (!st[s].rounds) {
                use_state(x, &st[s]);
                replay_pass(x);
            }
        exchange_m(x, p, st, changed);
        for (size_t s = 0; s < n_sc; s++)
            if (!st[s].rounds && (!changed[s] || round >= limit)) {
                st[s].rounds = round;
                moving--;
            }
    }
}

/* A step's span, replayed and measured, for "_replay_spans". */
typedef struct span {
    int64_t step, scenario, replayed, measured;
} span;

static int compare_span(const void *a, const void *b)
{
    return hta_cmp_i64(((const span *)a)->step, ((const span *)b)->step);
}

/* The lane's spans of the steps it replays, by (step, scenario). */
static int put_spans(const replay *x, const rp_state *lane, span *sp, hta_table *t)
{
    size_t n = 0;
    for (size_t s = 0; s < x->n_steps; s++) {
        const rp_step *st = &x->steps[s];
        size_t end = st->end != NONE ? st->end : st->n ? st->first + st->n - 1 : NONE;
        int64_t moved = end == NONE ? 0 : x->t[end] - x->ts[end];
        if (lane->chosen[s] >= 0)
            sp[n++] = (span){st->number, lane->chosen[s], st->length + moved, st->length};
    }
    qsort(sp, n, sizeof *sp, compare_span);
    int rc = 0;
    for (size_t s = 0, end; rc == 0 && s < n; s = end) {
        span m = sp[s];
        for (end = s; end < n && sp[end].step == m.step; end++) {
            m.replayed = max_i64(m.replayed, sp[end].replayed);
            m.measured = max_i64(m.measured, sp[end].measured);
        }
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, m.step);
        hta_row_put_i64(&row, m.scenario);
        hta_row_put_i64(&row, m.replayed);
        hta_row_put_i64(&row, m.measured);
        rc = hta_row_done(&row);
    }
    return rc;
}

static int build(replay *x, const hta_tableset *path, const hta_rank_ops *r,
                 const hta_op_result *res)
{
    const hta_table *nodes = hta_tableset_find(path, hta_replay_nodes_table.name);
    size_t n_edges = 0;
    if (load_nodes(x, nodes, &n_edges) ||
        load_edges(x, hta_tableset_find(path, hta_replay_edges_table.name), n_edges, nodes))
        return -1;
    measure_slack(x);
    return attach_ops(x, r, res) ||
                   list_by(x->n, x->ops, x->n_ops, 0, &x->end_first, &x->end_ops) ||
                   find_instances(x, r, res) || order_vertices(x)
               ? -1
               : 0;
}

static void states_free(rp_state *st, size_t n_lanes)
{
    for (size_t s = 0; st && s < n_lanes; s++) {
        free(st[s].chosen);
        free(st[s].at);
        free(st[s].t);
        free(st[s].m);
        free(st[s].remote);
        free(st[s].dirty);
    }
    free(st);
}

/* The lanes: a step's k-th scenario (of those replayed for it) is
 * replayed in lane k, so the lanes are as many as the most scenarios of
 * one step, on every process.  The steps here of lane k into chosen[k *
 * n_steps ..]; *n_lanes of them.  NULL when out of memory. */
static int32_t *lanes_of(const replay *x, const hta_scenario *sc, size_t n_sc, size_t *n_lanes)
{
    int32_t *chosen = alloc_n(n_sc * x->n_steps, sizeof *chosen);
    int64_t most = 0;
    for (size_t s = 0; chosen && s < x->n_steps; s++) {
        int64_t k = 0;
        for (size_t i = 0; i < n_sc; i++)
            if (hta_scenario_at_step(&sc[i], x->steps[s].number))
                chosen[(size_t)k++ * x->n_steps + s] = (int32_t)i;
        for (size_t j = (size_t)k; j < n_sc; j++)
            chosen[j * x->n_steps + s] = -1;
        most = k > most ? k : most;
    }
    most = -most;
    hta_processes_min(x->pr, &most, 1);
    *n_lanes = (size_t)-most;
    return chosen;
}

/* The lanes' states at their start; NULL when out of memory. */
static rp_state *states_new(const replay *x, const hta_scenario *sc, const int32_t *chosen,
                            size_t n_lanes)
{
    rp_state *st = calloc(n_lanes ? n_lanes : 1, sizeof *st);
    int failed = !st;
    for (size_t s = 0; !failed && s < n_lanes; s++) {
        st[s] = (rp_state){alloc_n(x->n_steps, sizeof *st[s].chosen),
                           alloc_n(x->n_steps, sizeof *st[s].at),
                           alloc_n(x->n, sizeof *st[s].t),
                           alloc_n(x->n_inst, sizeof *st[s].m),
                           alloc_n(x->n_inst, sizeof *st[s].remote),
                           alloc_n(x->n + x->n_inst, 1), 0};
        failed = !st[s].chosen || !st[s].at || !st[s].t || !st[s].m || !st[s].remote ||
                 !st[s].dirty;
        if (!failed) {
            memcpy(st[s].chosen, chosen + s * x->n_steps, x->n_steps * sizeof *chosen);
            start_state(x, sc, &st[s]);
        }
    }
    if (failed) {
        states_free(st, n_lanes);
        return NULL;
    }
    return st;
}

static int run_scenarios(replay *x, const hta_scenario *sc, size_t n_sc, hta_tableset *out)
{
    size_t n_lanes = 0;
    int32_t *chosen = lanes_of(x, sc, n_sc, &n_lanes);
    span *sp = alloc_n(x->n_steps, sizeof *sp);
    int64_t *changed = alloc_n(n_lanes, sizeof *changed);
    hta_table *t = hta_tableset_table(out, &hta_replay_spans_table);
    rp_state *st = chosen ? states_new(x, sc, chosen, n_lanes) : NULL;
    rp_plan plan = {0};
    int failed = hta_processes_any(x->pr, !chosen || !sp || !changed || !t || !st) ||
                 plan_exchange(x, n_lanes, &plan) != 0;
    if (!failed) {
        int64_t limit = (int64_t)x->n_inst;
        hta_processes_sum(x->pr, &limit, 1);
        replay_scenarios(x, &plan, st, changed, (long)limit + 2);
        for (size_t s = 0; !failed && s < n_lanes; s++) {
            use_state(x, &st[s]);
            failed = put_spans(x, &st[s], sp, t) != 0;
        }
        failed = hta_processes_any(x->pr, failed);
    }
    x->t = x->m = x->remote = NULL;
    x->at = NULL;
    x->dirty = NULL;
    plan_free(&plan);
    states_free(st, n_lanes);
    free(chosen);
    free(changed);
    free(sp);
    return failed ? -1 : 0;
}

void hta_replay_free(hta_replay *x)
{
    if (x)
        replay_free(x);
    free(x);
}

int hta_replay_build(const hta_processes *pr, const hta_tableset *path, const hta_rank_ops *r,
                     const hta_op_result *res, hta_replay **out, hta_error *err)
{
    const hta_table *nodes = hta_tableset_find(path, hta_replay_nodes_table.name);
    *out = NULL;
    if (!hta_processes_any(pr, nodes && nodes->n_rows))
        return 0;
    replay *x = calloc(1, sizeof *x);
    if (x)
        x->pr = pr;
    int failed = hta_processes_any(pr, !x || build(x, path, r, res) != 0);
    failed = failed || hta_kernel_medians_exchange(
                           pr, hta_tableset_find(path, hta_kernel_runs_table.name),
                           hta_tableset_find(path, hta_kernel_durations_table.name),
                           hta_tableset_find(path, hta_path_names_table.name), &x->medians,
                           &x->n_medians) != 0;
    if (failed) {
        hta_replay_free(x);
        return hta_fail(err, "out of memory building the job's graph for the replay");
    }
    *out = x;
    return 0;
}

int hta_replay_run(hta_replay *x, const hta_scenario *sc, size_t n_sc, hta_tableset *out,
                   hta_error *err)
{
    return run_scenarios(x, sc, n_sc, out) ? hta_fail(err, "out of memory replaying the job")
                                           : 0;
}
