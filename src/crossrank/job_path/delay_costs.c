/* delay_costs.c: the wait each rank's lateness costs the job ("delay_costs",
 * docs/definitions.md, Delay costs), Scalasca's delay costs for NCCL
 * collectives and point-to-point pairs.
 *
 * At a matched instance its last arriver L caused the others' wait W
 * (collective_groups.c, p2p_pairs.c: a late sender or receiver).  L
 * arrived late by l, the gap to the last of the others.  When L itself
 * waited w at its previous synchronisation (its previous collective or
 * point-to-point op in time order), that wait made it late too: of W, the
 * share min(1, w / l) = w / (delay + w), Scalasca's rule with delay =
 * l - w, is propagated, charged to the rank that caused L's wait (the last
 * arriver there), in the step of L's previous op (of this instance when
 * that op was launched outside the steps); the rest is L's direct
 * cost in the step of the instance.  Propagation goes back one hop: a
 * wait that passed through two ranks is charged to the second.
 *
 * Lateness is not delay: in a pipeline a stage sends after computing
 * what it sends, and its receiver waits by the schedule with nobody
 * slow.  So a (rank, step)'s cost is kept in the share its own work
 * explains: its own lateness there, L, is the largest (1 - f) l over
 * the instances it arrived last at (the delay of each; the largest, as
 * a rank late at several instances in a row without waiting between
 * them is late by the same work), its own excess, D, the sum over its
 * step's compute, launch gaps and data loading (the causes /stragglers
 * weighs) of how far each is above its median over the step's ranks
 * where it stands out from their spread (crossrank/compare/step_parts.c:
 * kernel jitter is nobody's work), and both its direct and propagated
 * costs are multiplied by min(1, D / L) (by 1 when L is 0 and D is
 * not).  What is not kept is the schedule's wait: no rank's work above
 * the others' explains it.
 *
 * The rank side walks each rank's ops in time order and sums the parts
 * and the own lateness per (rank charged, step) into "_delay_parts", so
 * that what reaches the root is per (rank, step), not per instance.  The
 * root adds up the parts of the processes, keeps the share above, and
 * names each (rank, step)'s cause from the list of causes /stragglers
 * names too (crossrank/compare/causes.c): the cause of the part of the
 * rank's step (crossrank/compare/step_parts.c, wait aside) furthest above
 * its median over the ranks in that step, none when no part is above, and
 * slower GPU for compute when /stragglers (run before) gives the rank a
 * slower GPU. */
#define _GNU_SOURCE /* qsort_r */
#include "crossrank/job_path/delay_costs.h"

#include "analysis/steps.h"
#include "crossrank/compare/causes.h"
#include "crossrank/compare/step_parts.h"
#include "crossrank/compare/stragglers.h"
#include "util/ranked.h"

#include <math.h>
#include <stdlib.h>

static const hta_column COLUMNS[HTA_DELAY_COSTS_N_COLUMNS] = {
    [HTA_DELAY_COSTS_RANK] = {"rank", HTA_COL_I64},
    [HTA_DELAY_COSTS_STEP] = {"step", HTA_COL_I64},
    [HTA_DELAY_COSTS_DIRECT_US] = {"direct_us", HTA_COL_F64},
    [HTA_DELAY_COSTS_PROPAGATED_US] = {"propagated_us", HTA_COL_F64},
    [HTA_DELAY_COSTS_TOTAL_US] = {"total_us", HTA_COL_F64},
    [HTA_DELAY_COSTS_CAUSE] = {"cause", HTA_COL_STR},
};
const hta_table_spec hta_delay_costs_table = {"delay_costs", COLUMNS, HTA_DELAY_COSTS_N_COLUMNS,
                                              HTA_TABLE_GATHERED};

static const hta_column PART_COLUMNS[HTA_DELAY_PARTS_N_COLUMNS] = {
    [HTA_DELAY_PARTS_RANK] = {"rank", HTA_COL_I64},
    [HTA_DELAY_PARTS_STEP] = {"step", HTA_COL_I64},
    [HTA_DELAY_PARTS_DIRECT_US] = {"direct_us", HTA_COL_F64},
    [HTA_DELAY_PARTS_PROPAGATED_US] = {"propagated_us", HTA_COL_F64},
    [HTA_DELAY_PARTS_OWN_LATENESS_US] = {"own_lateness_us", HTA_COL_F64},
};
const hta_table_spec hta_delay_parts_table = {"_delay_parts", PART_COLUMNS,
                                              HTA_DELAY_PARTS_N_COLUMNS,
                                              HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};

typedef struct delay_part {
    int64_t rank, step;
    double direct, propagated; /* ns on the rank side, us on the root */
    double own_lateness;       /* the largest delay behind direct */
} delay_part;

static int compare_part(const void *a, const void *b)
{
    const delay_part *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->step > y->step) - (x->step < y->step);
}

/* Sorts p[0..n) and merges the parts of each (rank, step); the count left. */
static size_t merge_parts(delay_part *p, size_t n)
{
    qsort(p, n, sizeof *p, compare_part);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && p[k - 1].rank == p[i].rank && p[k - 1].step == p[i].step) {
            p[k - 1].direct += p[i].direct;
            p[k - 1].propagated += p[i].propagated;
            p[k - 1].own_lateness = fmax(p[k - 1].own_lateness, p[i].own_lateness);
        } else {
            p[k++] = p[i];
        }
    }
    return k;
}

static int compare_rank_then_start(const void *a, const void *b, void *ctx)
{
    const hta_group_op *ops = ctx, *x = &ops[*(const size_t *)a], *y = &ops[*(const size_t *)b];
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->start > y->start) - (x->start < y->start);
}

/* Whether op i arrived last at its instance, causing the others' wait. */
static int delayed_others(const hta_rank_ops *r, const hta_op_result *x, size_t i)
{
    return x->caused_ns > 0 && (x->p2p ? x->last_rank == r->ops[i].rank : x->last);
}

/* The parts of ops idx[0..n), one rank's in time order, appended to p. */
static size_t rank_parts(const hta_rank_ops *r, const hta_op_result *res, const size_t *idx,
                         size_t n, delay_part *p)
{
    size_t k = 0;
    int64_t prev_wait = 0, prev_cause = -1, prev_step = -1;
    for (size_t j = 0; j < n; j++) {
        size_t i = idx[j];
        const hta_op_result *x = &res[i];
        if (delayed_others(r, x, i)) {
            double f = x->lateness_ns > 0 && prev_cause >= 0
                           ? fmin(1.0, (double)prev_wait / (double)x->lateness_ns)
                           : 0.0;
            double caused = (double)x->caused_ns;
            if (f < 1)
                p[k++] = (delay_part){r->ops[i].rank, r->step[i], (1 - f) * caused, 0,
                                      (1 - f) * (double)x->lateness_ns};
            if (f > 0)
                p[k++] = (delay_part){prev_cause, prev_step >= 0 ? prev_step : r->step[i], 0,
                                      f * caused, 0};
        }
        prev_wait = x->wait_ns;
        prev_cause = x->wait_ns > 0 ? x->last_rank : -1;
        prev_step = r->step[i];
    }
    return k;
}

int hta_rank_delay_parts(const hta_rank_ops *r, const hta_op_result *res, hta_tableset *out)
{
    if (r->n == 0)
        return 0;
    size_t *idx = malloc(r->n * sizeof *idx);
    delay_part *p = malloc(2 * r->n * sizeof *p);
    hta_table *t = hta_tableset_table(out, &hta_delay_parts_table);
    int rc = idx && p && t ? 0 : -1;
    size_t k = 0;
    if (rc == 0) {
        for (size_t i = 0; i < r->n; i++)
            idx[i] = i;
        qsort_r(idx, r->n, sizeof *idx, compare_rank_then_start, r->ops);
        for (size_t i = 0, end; i < r->n; i = end) {
            for (end = i + 1; end < r->n && r->ops[idx[end]].rank == r->ops[idx[i]].rank;)
                end++;
            k += rank_parts(r, res, &idx[i], end - i, &p[k]);
        }
        k = merge_parts(p, k);
    }
    for (size_t i = 0; rc == 0 && i < k; i++) {
        if (p[i].step < 0)
            continue; /* launched outside the steps: no step to charge */
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, p[i].rank);
        hta_row_put_i64(&row, p[i].step);
        hta_row_put_f64(&row, hta_ns_to_us((int64_t)llround(p[i].direct)));
        hta_row_put_f64(&row, hta_ns_to_us((int64_t)llround(p[i].propagated)));
        hta_row_put_f64(&row, hta_ns_to_us((int64_t)llround(p[i].own_lateness)));
        rc = hta_row_done(&row);
    }
    free(idx);
    free(p);
    return rc;
}

/* The cause of (rank, step): that of the part (the wait aside) furthest
 * above its median over the step's ranks s[0..n); *own: the sum of its
 * own work's parts that stand out above their medians
 * (crossrank/compare/step_parts.c). */
static hta_cause cause_of(const hta_step_row *s, size_t n, int64_t rank, double *own)
{
    const hta_step_row *mine = NULL;
    for (size_t i = 0; i < n && !mine; i++)
        mine = s[i].rank == rank ? &s[i] : NULL;
    *own = 0;
    if (!mine)
        return HTA_CAUSE_NONE;
    int best = -1;
    double best_excess = 0;
    for (int c = 0; c < HTA_N_PARTS; c++) {
        double excess;
        int stands_out = hta_step_part_stands_out(mine, c, &excess);
        if (c == HTA_PART_WAIT)
            continue;
        if (excess > best_excess)
            best = c, best_excess = excess;
        if (stands_out && hta_step_part_is_own_work(c))
            *own += excess;
    }
    return best < 0 ? HTA_CAUSE_NONE : hta_cause_of_step_part(best);
}

/* The share of a (rank, step)'s costs its own work explains: its excess
 * over the median against its own lateness. */
static double explained_share(double own_excess, double own_lateness)
{
    if (own_lateness > 0)
        return fmin(1.0, own_excess / own_lateness);
    return own_excess > 0 ? 1.0 : 0.0;
}

/* The ranks /stragglers gives a slower GPU, ascending, into *gpu (NULL
 * when none); -1 when out of memory. */
static int slower_gpu_ranks(const hta_table *stragglers, int64_t **gpu, size_t *n)
{
    *gpu = NULL;
    *n = 0;
    for (size_t i = 0; stragglers && i < stragglers->n_rows; i++) {
        const hta_cell *row = hta_table_row(stragglers, i);
        if (hta_cause_named(row[HTA_STRAGGLERS_CAUSE].s) != HTA_CAUSE_SLOWER_GPU)
            continue;
        if (!*gpu && !(*gpu = malloc(stragglers->n_rows * sizeof **gpu)))
            return -1;
        (*gpu)[(*n)++] = row[HTA_STRAGGLERS_RANK].i;
    }
    if (*gpu)
        qsort(*gpu, *n, sizeof **gpu, hta_compare_i64);
    return 0;
}

static int put_costs(hta_table *t, const delay_part *p, size_t n, const hta_table *steps,
                     const hta_table *stragglers, const hta_crossrank_settings *opt)
{
    size_t n_steps = steps ? steps->n_rows : 0, n_gpu = 0;
    hta_step_row *s = steps ? hta_step_rows(steps, opt->robust_z, opt->min_effect) : NULL;
    int64_t *gpu = NULL;
    int rc = s || !steps ? slower_gpu_ranks(stragglers, &gpu, &n_gpu) : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        size_t count = 0;
        const hta_step_row *rows = s ? hta_step_rows_of(s, n_steps, p[i].step, &count) : NULL;
        double own = 0;
        hta_cause cause = count ? cause_of(rows, count, p[i].rank, &own)
                                : HTA_CAUSE_NONE;
        double kept = count ? explained_share(own, p[i].own_lateness) : 1.0;
        int slower_gpu = gpu && bsearch(&p[i].rank, gpu, n_gpu, sizeof *gpu, hta_compare_i64);
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, p[i].rank);
        hta_row_put_i64(&row, p[i].step);
        hta_row_put_f64(&row, kept * p[i].direct);
        hta_row_put_f64(&row, kept * p[i].propagated);
        hta_row_put_f64(&row, kept * (p[i].direct + p[i].propagated));
        hta_row_put_str(&row, hta_cause_name(hta_cause_refined(cause, slower_gpu)));
        rc = hta_row_done(&row);
    }
    free(gpu);
    free(s);
    return rc;
}

int hta_delay_costs(hta_tableset *set, const hta_crossrank_settings *opt, hta_error *err)
{
    const hta_table *parts = hta_tableset_find(set, hta_delay_parts_table.name);
    if (!parts || parts->n_rows == 0)
        return 0;
    size_t n = parts->n_rows;
    delay_part *p = malloc(n * sizeof *p);
    hta_table *t = hta_tableset_table(set, &hta_delay_costs_table);
    int rc = p && t ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const hta_cell *row = hta_table_row(parts, i);
        p[i] = (delay_part){row[HTA_DELAY_PARTS_RANK].i, row[HTA_DELAY_PARTS_STEP].i,
                            row[HTA_DELAY_PARTS_DIRECT_US].f,
                            row[HTA_DELAY_PARTS_PROPAGATED_US].f,
                            row[HTA_DELAY_PARTS_OWN_LATENESS_US].f};
    }
    if (rc == 0)
        rc = put_costs(t, p, merge_parts(p, n), hta_tableset_find(set, hta_steps_table.name),
                       hta_tableset_find(set, hta_stragglers_table.name), opt);
    free(p);
    return rc ? hta_fail(err, "out of memory adding up the delay costs") : 0;
}
