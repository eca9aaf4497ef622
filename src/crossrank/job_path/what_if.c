/* what_if.c: what each of the costliest delays costs the step time,
 * predicted on the job's critical path (see crossrank/job_path/what_if.h;
 * docs/definitions.md, What-if).
 *
 * Per step, the (rank, cause) rows of /delay_costs with the largest cost
 * whose cause a change can take away: compute or a slower GPU (the
 * rank's compute kernels at the median over the ranks), data loading
 * (none), cpu launch (no launch delay).  The change shortens the rank's
 * pieces of the step's path (crossrank/job_path/global_path.c, "_path_walk");
 * walking the path forward, the time saved so far moves every later
 * piece earlier, until a hop onto an instance's last arriver: the
 * instance then starts earlier only by as much as the last arriver was
 * later than the others (its lateness, the hop's mark), since they arrive
 * when they did; but those that came from the instance the path reached
 * the arriver from move with its end (hop_cap).  At the step's end, a
 * rank whose end no communication kernel bounds (a free end,
 * "_path_ends") ends when it did: the step ends no earlier than the
 * latest free end of another rank.  The saving left is taken off the
 * step's time (its slowest rank's).  First order: the other ranks' times
 * and the path's shape are held; only what the path can see moves.
 *
 * A kernel at the median: each compute piece on the path carries its
 * time above the medians of its kernels' places over the ranks
 * (crossrank/job_path/kernel_excess.c), which the change takes away. */
#include "crossrank/job_path/what_if.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/critical_path.h"
#include "crossrank/compare/causes.h"
#include "crossrank/job_path/delay_costs.h"
#include "crossrank/job_path/global_path.h"
#include "crossrank/compare/step_comparison.h"
#include "numerics/bounds.h"
#include "util/ranked.h"

#define TOP_PER_STEP 5

static const hta_column COLUMNS[HTA_WHAT_IF_N_COLUMNS] = {
    [HTA_WHAT_IF_STEP] = {"step", HTA_COL_I64},
    [HTA_WHAT_IF_RANK] = {"rank", HTA_COL_I64},
    [HTA_WHAT_IF_CAUSE] = {"cause", HTA_COL_STR},
    [HTA_WHAT_IF_CHANGE] = {"change", HTA_COL_STR},
    [HTA_WHAT_IF_DELAY_COST_US] = {"delay_cost_us", HTA_COL_F64},
    [HTA_WHAT_IF_ON_PATH_US] = {"on_path_us", HTA_COL_F64},
    [HTA_WHAT_IF_SAVING_US] = {"saving_us", HTA_COL_F64},
    [HTA_WHAT_IF_STEP_TIME_US] = {"step_time_us", HTA_COL_F64},
    [HTA_WHAT_IF_PREDICTED_STEP_TIME_US] = {"predicted_step_time_us", HTA_COL_F64},
};
const hta_table_spec hta_what_if_table = {"what_if", COLUMNS, HTA_WHAT_IF_N_COLUMNS,
                                          HTA_TABLE_GATHERED};

/* The change a cause calls for: the cause of path pieces it shortens
 * (-1: no change), and its name. */
static int change_of(hta_cause c, const char **name)
{
    switch (c) {
    case HTA_CAUSE_COMPUTE:
    case HTA_CAUSE_SLOWER_GPU:
        *name = "kernels at the median";
        return HTA_CP_GPU_COMPUTE;
    case HTA_CAUSE_DATA_LOADING:
        *name = "no data loading";
        return HTA_CP_DATA_LOADING;
    case HTA_CAUSE_CPU_LAUNCH:
        *name = "no launch delay";
        return HTA_CP_KERNEL_LAUNCH;
    default:
        return -1;
    }
}

typedef hta_path_piece piece;

typedef struct candidate {
    int64_t step, rank;
    double cost;               /* us */
    hta_cause cause;
} candidate;

/* By step, the costliest first, then by rank. */
static int compare_candidate(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    int c = hta_cmp_i64(x->step, y->step);
    if (c)
        return c;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return hta_cmp_i64(x->rank, y->rank);
}

/* What the what-if reads, by step. */
typedef struct inputs {
    piece *p;
    size_t n;
    candidate *c;
    size_t n_c;
    const hta_table *cross_steps, *ends;
} inputs;

static void inputs_free(inputs *in)
{
    free(in->p);
    free(in->c);
}

static int read_inputs(const hta_tableset *set, const hta_table *walk, inputs *in)
{
    const hta_table *costs = hta_tableset_find(set, hta_delay_costs_table.name);
    size_t n_costs = costs ? costs->n_rows : 0;
    *in = (inputs){.cross_steps = hta_tableset_find(set, hta_cross_steps_table.name),
                   .ends = hta_tableset_find(set, hta_path_ends_table.name)};
    in->p = hta_path_pieces_in_time(walk, 1, &in->n);
    in->c = malloc((n_costs + 1) * sizeof *in->c);
    if (!in->p || !in->c)
        return -1;
    const char *ignored;
    for (size_t i = 0; i < n_costs; i++) {
        const hta_cell *row = hta_table_row(costs, i);
        hta_cause cause = hta_cause_named(row[HTA_DELAY_COSTS_CAUSE].s);
        if (cause < HTA_N_CAUSES && change_of(cause, &ignored) >= 0)
            in->c[in->n_c++] = (candidate){row[HTA_DELAY_COSTS_STEP].i, row[HTA_DELAY_COSTS_RANK].i,
                                           row[HTA_DELAY_COSTS_TOTAL_US].f, cause};
    }
    qsort(in->c, in->n_c, sizeof *in->c, compare_candidate);
    return 0;
}

/* The step's time: its slowest rank's (/cross_rank/steps, in step
 * order), or the path's length without it. */
static double step_time(const inputs *in, int64_t step, const piece *p, size_t n)
{
    const hta_table *t = in->cross_steps;
    size_t i = t ? hta_table_lower_bound(t, HTA_CROSS_STEPS_STEP, step) : 0;
    if (t && i < t->n_rows && hta_table_row(t, i)[HTA_CROSS_STEPS_STEP].i == step)
        return hta_table_row(t, i)[HTA_CROSS_STEPS_STEP_TIME_MAX_US].f;
    int64_t total = 0;
    for (size_t k = 0; k < n; k++)
        total += p[k].bound == HTA_PATH_HOP ? 0 : p[k].time;
    return hta_ns_to_us(total);
}

/* How much the step's end can move when rank's changes: its path's end
 * less the latest free end of another rank (the rows of "_path_ends", by
 * step, kind, then latest first); no bound without one. */
static double end_room(const inputs *in, int64_t step, int64_t rank)
{
    int64_t end = INT64_MIN, floor = INT64_MIN;
    const hta_table *t = in->ends;
    for (size_t i = t ? hta_table_lower_bound(t, HTA_PATH_ENDS_STEP, step) : 0;
         t && i < t->n_rows; i++) {
        const hta_cell *row = hta_table_row(t, i);
        if (row[HTA_PATH_ENDS_STEP].i != step)
            break;
        if (row[HTA_PATH_ENDS_KIND].i == 0)
            end = row[HTA_PATH_ENDS_END_NS].i;
        else if (row[HTA_PATH_ENDS_RANK].i != rank && floor == INT64_MIN)
            floor = row[HTA_PATH_ENDS_END_NS].i;
    }
    if (end == INT64_MIN || floor == INT64_MIN)
        return HUGE_VAL;
    return end > floor ? (double)(end - floor) : 0;
}

typedef struct outcome {
    const candidate *c;
    const char *change;
    double on_path, saving;    /* us */
} outcome;

/* How far a hop's instance can start earlier: by the last arriver's
 * lateness; when the path came to it from the instance its rank came
 * from (the hop's excess, the lateness over the others that did not,
 * set), the others that did move with that instance's end, saved_before
 * earlier, so by up to that more. */
static double hop_cap(const piece *hop, double saved_before)
{
    double lateness = (double)hop->time;
    return hop->excess > 0 ? fmin((double)hop->excess, lateness + saved_before) : lateness;
}

/* The saving of the candidate's change on the step's path p[0..n), in
 * time order. */
static outcome predict(const inputs *in, const candidate *c, const piece *p, size_t n)
{
    outcome o = {c, "", 0, 0};
    int bound = change_of(c->cause, &o.change);
    double saved = 0, on_path = 0, at_comm = 0; /* ns; at_comm: at the last transfer */
    for (size_t i = 0; i < n; i++) {
        if (p[i].bound == HTA_PATH_HOP) {
            saved = fmin(saved, hop_cap(&p[i], at_comm));
            continue;
        }
        if (p[i].rank == c->rank) {
            on_path += (double)p[i].time;
            if (p[i].bound == bound && p[i].time > 0)
                saved += bound == HTA_CP_GPU_COMPUTE ? (double)p[i].excess : (double)p[i].time;
        }
        if (p[i].bound == HTA_CP_GPU_COMMUNICATION)
            at_comm = saved;
    }
    double room = end_room(in, c->step, c->rank);
    o.on_path = on_path / 1000.0;
    o.saving = (saved < room ? saved : room) / 1000.0;
    return o;
}

static int compare_outcome(const void *a, const void *b)
{
    const outcome *x = a, *y = b;
    if (x->saving != y->saving)
        return x->saving > y->saving ? -1 : 1;
    return compare_candidate(x->c, y->c);
}

static int put_step(hta_table *t, const inputs *in, const piece *p, size_t n)
{
    int64_t step = p[0].step;
    size_t first = HTA_LOWER_BOUND(in->c, in->n_c, step, step), k = 0;
    outcome o[TOP_PER_STEP];
    for (size_t i = first; i < in->n_c && in->c[i].step == step && k < TOP_PER_STEP; i++)
        o[k++] = predict(in, &in->c[i], p, n);
    qsort(o, k, sizeof *o, compare_outcome);
    double time = step_time(in, step, p, n);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < k; i++) {
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, step);
        hta_row_put_i64(&row, o[i].c->rank);
        hta_row_put_str(&row, hta_cause_name(o[i].c->cause));
        hta_row_put_str(&row, o[i].change);
        hta_row_put_f64(&row, o[i].c->cost);
        hta_row_put_f64(&row, o[i].on_path);
        hta_row_put_f64(&row, o[i].saving);
        hta_row_put_f64(&row, time);
        hta_row_put_f64(&row, time - o[i].saving);
        rc = hta_row_done(&row);
    }
    return rc;
}

static int put_what_if(hta_tableset *set, const hta_table *walk)
{
    inputs in;
    int rc = read_inputs(set, walk, &in);
    hta_table *t = rc ? NULL : hta_tableset_table(set, &hta_what_if_table);
    rc = rc || !t;
    for (size_t i = 0, end; rc == 0 && i < in.n; i = end) {
        for (end = i; end < in.n && in.p[end].step == in.p[i].step;)
            end++;
        rc = put_step(t, &in, &in.p[i], end - i);
    }
    inputs_free(&in);
    return rc;
}

int hta_what_if(hta_tableset *set, hta_error *err)
{
    const hta_table *walk = hta_tableset_find(set, hta_path_walk_table.name);
    int rc = walk && walk->n_rows ? put_what_if(set, walk) : 0;
    hta_tableset_remove(set, hta_path_walk_table.name);
    hta_tableset_remove(set, hta_path_ends_table.name);
    return rc ? hta_fail(err, "out of memory predicting the step times") : 0;
}
