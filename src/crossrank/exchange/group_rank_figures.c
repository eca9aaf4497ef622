/* group_rank_figures.c: the process holding a rank turns its ops'
 * results (group_instances.c) into the rank's figures: "comm_by_group",
 * the waits per group ("_group_waits") and per step ("_step_waits"), and
 * with --write-traces each kernel's wait ("_kernel_waits"). */
#define _GNU_SOURCE /* qsort_r */
#include "crossrank/exchange/collective_groups.h"

#include "analysis/comm_ops.h"
#include "analysis/ranks_table.h"
#include "analysis/steps.h"
#include "crossrank/exchange/all_to_all.h"
#include "crossrank/exchange/p2p_pairs.h"
#include "crossrank/exchange/step_rows.h"
#include "model/trace.h"
#include "numerics/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ops in instance order per rank: (rank, group, by_seq, key), then their
 * position. */
static int compare_rank_instance(const void *a, const void *b, void *ctx)
{
    const hta_group_op *ops = ctx;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = (ops[i].rank > ops[j].rank) - (ops[i].rank < ops[j].rank);
    if (!c)
        c = hta_group_op_compare_instance(&ops[i], &ops[j]);
    return c ? c : (i > j) - (i < j);
}

static int put_rank_waits(hta_table *t, const hta_rank_ops *r, const hta_op_result *res,
                          const size_t *idx, size_t n)
{
    int64_t last = 0, violations = 0, wait = 0, max_lag = 0, caused = 0, mismatches = 0;
    int64_t collectives = 0;
    double expected = 0;
    for (size_t k = 0; k < n; k++) {
        const hta_op_result *x = &res[idx[k]];
        if (x->p2p)
            continue; /* crossrank/exchange/p2p_pairs.c has their figures */
        collectives++;
        wait += x->wait_ns;
        violations += x->clock_violation;
        max_lag = x->end_lag_ns > max_lag ? x->end_lag_ns : max_lag;
        if (x->contested) {
            last += x->last;
            expected += 1.0 / (double)x->n_ranks;
        }
        caused += x->caused_ns;
        mismatches += x->mismatch;
    }
    if (collectives == 0)
        return 0;
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, r->ops[idx[0]].rank);
    hta_row_put_i64(&row, collectives);
    hta_row_put_i64(&row, last);
    hta_row_put_i64(&row, violations);
    hta_row_put_i64(&row, wait);
    hta_row_put_i64(&row, max_lag);
    hta_row_put_i64(&row, caused);
    hta_row_put_i64(&row, mismatches);
    hta_row_put_f64(&row, expected);
    return hta_row_done(&row);
}

/* One row for a rank's ops of one group.  The exposed time (not
 * overlapped by computation) splits into waiting and transferring; where
 * computation fell inside a kernel is not known here, so the wait is
 * exposed only for what computation could not have covered: exposed
 * wait = max(0, wait - overlapped), a lower bound.  Point-to-point ops
 * count like the others, their waits also split into late sender (at
 * the rank's receives) and late receiver (at its sends).  The ops of a
 * coalesced batch share one kernel: its time counts once, and they wait
 * side by side, so its exposed wait comes from the longest of their
 * waits; wait adds up every op's (late sender plus late receiver). */
static int put_rank_group(hta_table *t, const hta_comm_catalog *c, const hta_rank_ops *r,
                          const hta_op_result *res, const size_t *idx, size_t n)
{
    int64_t comm = 0, overlapped = 0, wait = 0, exposed_wait = 0, last = 0;
    int64_t p2p = 0, late_sender = 0, late_receiver = 0, unpaired = 0;
    int64_t kernel_wait = 0; /* the longest wait of the current kernel's ops */
    for (size_t k = 0; k < n; k++) {
        const hta_group_op *o = &r->ops[idx[k]];
        const hta_op_result *x = &res[idx[k]];
        int64_t covered = r->overlap[idx[k]], waited = x->wait_ns;
        if (k > 0 && idx[k] == idx[k - 1] + 1 && r->same_kernel[idx[k]]) {
            if (waited > kernel_wait) {
                exposed_wait += (waited > covered ? waited - covered : 0) -
                                (kernel_wait > covered ? kernel_wait - covered : 0);
                kernel_wait = waited;
            }
        } else {
            comm += o->end - o->start;
            overlapped += covered;
            exposed_wait += waited > covered ? waited - covered : 0;
            kernel_wait = waited;
        }
        wait += waited;
        last += x->last;
        if (!x->p2p)
            continue;
        p2p++;
        unpaired += x->n_ranks != 2;
        if (hta_kind_is_send(&c->kinds[o->kind]))
            late_receiver += waited;
        else
            late_sender += waited;
    }
    const hta_group_variant *g = &c->variants[r->ops[idx[0]].variant];
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, r->ops[idx[0]].rank);
    hta_row_put_str(&row, g->name);
    hta_row_put_str(&row, g->desc);
    hta_row_put_i64(&row, (int64_t)n);
    hta_row_put_f64(&row, hta_ns_to_us(comm));
    hta_row_put_f64(&row, hta_ns_to_us(overlapped));
    hta_row_put_f64(&row, hta_ns_to_us(comm - overlapped));
    hta_row_put_f64(&row, hta_ns_to_us(exposed_wait));
    hta_row_put_f64(&row, hta_ns_to_us(comm - overlapped - exposed_wait));
    hta_row_put_f64(&row, hta_ns_to_us(wait));
    hta_row_put_i64(&row, last);
    hta_row_put_i64(&row, p2p);
    hta_row_put_f64(&row, hta_ns_to_us(late_sender));
    hta_row_put_f64(&row, hta_ns_to_us(late_receiver));
    hta_row_put_i64(&row, unpaired);
    return hta_row_done(&row);
}

typedef struct step_wait {
    int64_t step;
    size_t order;
    double us;
} step_wait;

static int compare_step_wait(const void *a, const void *b)
{
    const step_wait *x = a, *y = b;
    if (x->step != y->step)
        return (x->step > y->step) - (x->step < y->step);
    return (x->order > y->order) - (x->order < y->order);
}

/* A rank's wait per ProfilerStep that launched the kernels, added up in
 * instance order. */
static int put_step_waits(hta_table *t, const hta_rank_ops *r, const hta_op_result *res,
                          const size_t *idx, size_t n, step_wait *scratch)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (r->step[idx[i]] >= 0 && !res[idx[i]].p2p)
            scratch[k++] = (step_wait){r->step[idx[i]], i, hta_ns_to_us(res[idx[i]].wait_ns)};
    qsort(scratch, k, sizeof *scratch, compare_step_wait);
    int rc = 0;
    for (size_t i = 0, end; rc == 0 && i < k; i = end) {
        double sum = 0;
        for (end = i; end < k && scratch[end].step == scratch[i].step; end++)
            sum += scratch[end].us;
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, r->ops[idx[0]].rank);
        hta_row_put_i64(&row, scratch[i].step);
        hta_row_put_f64(&row, sum);
        rc = hta_row_done(&row);
    }
    return rc;
}

/* One rank's ops idx[0..n), in instance order. */
static int put_rank(hta_tableset *out, const hta_comm_catalog *c, const hta_rank_ops *r,
                    const hta_op_result *res, const size_t *idx, size_t n, step_wait *scratch)
{
    hta_table *waits = hta_tableset_table(out, &hta_group_waits_table);
    hta_table *by_group = hta_tableset_table(out, &hta_comm_by_group_table);
    hta_table *steps = hta_tableset_table(out, &hta_step_waits_table);
    if (!waits || !by_group || !steps || put_rank_waits(waits, r, res, idx, n))
        return -1;
    int rc = 0;
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        for (end = i + 1; end < n && r->ops[idx[end]].group == r->ops[idx[i]].group;)
            end++;
        rc = put_rank_group(by_group, c, r, res, &idx[i], end - i);
    }
    return rc ? rc : put_step_waits(steps, r, res, idx, n, scratch);
}

/* A run of ops of one (rank, group): a row of "_comm_ops". */
typedef struct segment {
    int64_t rank;
    uint32_t group;
    size_t first, n;
} segment;

static int compare_segment(const void *a, const void *b)
{
    const segment *x = a, *y = b;
    if (x->rank != y->rank)
        return (x->rank > y->rank) - (x->rank < y->rank);
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return (x->first > y->first) - (x->first < y->first);
}

/* idx[0..n): the ops in (rank, group) order, each group's collectives in
 * instance order (then position) and its sends and recvs after them in
 * load order: the order every figure is added up in.  Ops come in runs of
 * one (rank, group), so only the runs are sorted, and the collectives in
 * each; the point-to-point figures do not depend on their order. */
static int order_by_rank(const hta_rank_ops *r, size_t *idx)
{
    size_t n_seg = 0;
    segment *seg = malloc((r->n ? r->n : 1) * sizeof *seg);
    if (!seg)
        return -1;
    for (size_t i = 0; i < r->n; i++) {
        const hta_group_op *o = &r->ops[i];
        if (n_seg && seg[n_seg - 1].rank == o->rank && seg[n_seg - 1].group == o->group)
            seg[n_seg - 1].n++;
        else
            seg[n_seg++] = (segment){o->rank, o->group, i, 1};
    }
    qsort(seg, n_seg, sizeof *seg, compare_segment);
    size_t at = 0;
    for (size_t s = 0, end; s < n_seg; s = end) {
        /* The runs of one (rank, group), its collectives first. */
        size_t begin = at, p2p = 0;
        for (end = s; end < n_seg && seg[end].rank == seg[s].rank && seg[end].group == seg[s].group;
             end++)
            for (size_t i = seg[end].first; i < seg[end].first + seg[end].n; i++)
                if (r->ops[i].by_seq != HTA_BY_PAIR)
                    idx[at++] = i;
                else
                    p2p++;
        qsort_r(&idx[begin], at - begin, sizeof *idx, compare_rank_instance, r->ops);
        for (size_t k = s; k < end && p2p; k++)
            for (size_t i = seg[k].first; i < seg[k].first + seg[k].n; i++)
                if (r->ops[i].by_seq == HTA_BY_PAIR)
                    idx[at++] = i;
    }
    free(seg);
    return 0;
}

int hta_rank_group_figures(const hta_comm_catalog *c, const hta_rank_ops *r,
                           const hta_op_result *results, hta_tableset *out)
{
    size_t n = r->n;
    if (n == 0)
        return 0;
    size_t *idx = malloc(n * sizeof *idx);
    step_wait *scratch = malloc(n * sizeof *scratch);
    int rc = idx && scratch ? order_by_rank(r, idx) : -1;
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        for (end = i + 1; end < n && r->ops[idx[end]].rank == r->ops[idx[i]].rank;)
            end++;
        rc = put_rank(out, c, r, results, &idx[i], end - i, scratch);
    }
    free(scratch);
    free(idx);
    return rc || hta_rank_p2p_figures(c, r, results, out) ? -1
                                                           : hta_rank_a2a_figures(c, r, out);
}

static const hta_column KERNEL_WAIT_COLUMNS[HTA_KERNEL_WAITS_N_COLUMNS] = {
    [HTA_KERNEL_WAITS_RANK] = {"rank", HTA_COL_I64},
    [HTA_KERNEL_WAITS_START_NS] = {"start_ns", HTA_COL_I64},
    [HTA_KERNEL_WAITS_WAIT_NS] = {"wait_ns", HTA_COL_I64},
    [HTA_KERNEL_WAITS_CAUSED_NS] = {"caused_ns", HTA_COL_I64},
    [HTA_KERNEL_WAITS_ARRIVED_LAST] = {"arrived_last", HTA_COL_I64},
    [HTA_KERNEL_WAITS_GROUP] = {"group", HTA_COL_STR},
    [HTA_KERNEL_WAITS_COLLECTIVE] = {"collective", HTA_COL_STR},
};
const hta_table_spec hta_kernel_waits_table = {
    "_kernel_waits", KERNEL_WAIT_COLUMNS, HTA_KERNEL_WAITS_N_COLUMNS, HTA_TABLE_SCRATCH};

int hta_put_kernel_waits(const hta_comm_catalog *c, const hta_rank_ops *r,
                         const hta_op_result *results, hta_tableset *out)
{
    hta_table *t = hta_tableset_table(out, &hta_kernel_waits_table);
    int failed = !t;
    for (size_t i = 0; !failed && i < r->n; i++) {
        const hta_group_op *op = &r->ops[i];
        const hta_op_result *res = &results[i];
        if (res->wait_ns <= 0 && !res->last)
            continue;
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, op->rank);
        hta_row_put_i64(&row, op->start);
        hta_row_put_i64(&row, res->wait_ns);
        hta_row_put_i64(&row, res->caused_ns);
        hta_row_put_i64(&row, res->last);
        hta_row_put_str(&row, c->groups[op->group].name);
        hta_row_put_str(&row, c->kinds[op->kind].collective);
        failed = hta_row_done(&row) != 0;
    }
    return failed ? -1 : 0;
}
