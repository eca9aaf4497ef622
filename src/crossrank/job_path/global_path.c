/* global_path.c: the walk of the job's critical path over the processes
 * (see crossrank/job_path/global_path.h; docs/crossrank.md, The job's critical
 * path).
 *
 * The job's graph is the ranks' step graphs joined at every matched
 * instance: a node at the instance's latest start, with an edge in from
 * every participant's kernel start and out to every participant's
 * transfer.  Taken back from the rank whose step ends last, the longest
 * path enters each instance on its last arriver.  No process builds that
 * graph: each rank's analysis kept, per communication kernel and per
 * step end, the stretch of its own longest path back to the
 * communication kernel that bounds it (analysis/critical_path.h,
 * "_path_intervals"), and each op's result says who arrived last at its
 * instance and how long the op waited.  The walk chains them: from an
 * interval's bounding kernel K on rank q, when another rank L arrived
 * last, the path takes K's transfer on q (its time after the wait) and
 * goes on from L's kernel of the same instance; else it takes K whole and
 * goes on from K's start on q.  A one-rank job's path is thus its
 * /critical_path.
 *
 * Every process holds the state of every step's walk (rank, where on
 * it, pieces so far) and advances the steps whose rank it holds, as far
 * as the path stays on its ranks; one MPI_Allreduce per round keeps the
 * states of the steps that moved.  A round moves every step still
 * walking, so the rounds are the path's changes of process, and nothing
 * but the states and the pieces walked leaves a process.
 */
#define _GNU_SOURCE /* qsort_r */
#include "crossrank/job_path/global_path.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/critical_path.h"
#include "numerics/bounds.h"
#include "util/ranked.h"

static const hta_column WALK_COLUMNS[HTA_PATH_WALK_N_COLUMNS] = {
    [HTA_PATH_WALK_STEP] = {"step", HTA_COL_I64},
    [HTA_PATH_WALK_SEQ] = {"seq", HTA_COL_I64},
    [HTA_PATH_WALK_RANK] = {"rank", HTA_COL_I64},
    [HTA_PATH_WALK_NAME_ID] = {"name_id", HTA_COL_I64},
    [HTA_PATH_WALK_BOUND] = {"bound", HTA_COL_I64},
    [HTA_PATH_WALK_TIME_NS] = {"time_ns", HTA_COL_I64},
};
const hta_table_spec hta_path_walk_table = {"_path_walk", WALK_COLUMNS, HTA_PATH_WALK_N_COLUMNS,
                                            HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};

/* The names the pieces walked use, each (rank, name_id) once: a rank is
 * held by one process, so the pair names one string job-wide. */
static const hta_column WALK_NAME_COLUMNS[HTA_PATH_NAMES_N_COLUMNS] = {
    [HTA_PATH_NAMES_RANK] = {"rank", HTA_COL_I64},
    [HTA_PATH_NAMES_NAME_ID] = {"name_id", HTA_COL_I64},
    [HTA_PATH_NAMES_NAME] = {"name", HTA_COL_STR},
};
const hta_table_spec hta_path_walk_names_table = {"_path_walk_names", WALK_NAME_COLUMNS,
                                                  HTA_PATH_NAMES_N_COLUMNS,
                                                  HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};

static int compare_in_time(const void *a, const void *b)
{
    const hta_path_piece *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    return (x->seq < y->seq) - (x->seq > y->seq); /* seq counts back from the end */
}

hta_path_piece *hta_path_pieces_in_time(const hta_table *walk, size_t *n)
{
    hta_path_piece *p = malloc((walk->n_rows + 1) * sizeof *p);
    size_t k = 0;
    for (size_t i = 0; p && i < walk->n_rows; i++) {
        const hta_cell *row = hta_table_row(walk, i);
        p[k++] = (hta_path_piece){row[HTA_PATH_WALK_STEP].i, row[HTA_PATH_WALK_SEQ].i,
                                  row[HTA_PATH_WALK_RANK].i, row[HTA_PATH_WALK_BOUND].i,
                                  row[HTA_PATH_WALK_TIME_NS].i, row[HTA_PATH_WALK_NAME_ID].i,
                                  NULL};
    }
    if (p)
        qsort(p, k, sizeof *p, compare_in_time);
    *n = k;
    return p;
}

/* Where a step's walk goes on: a kernel start on the rank, or: */
#define TARGET_END (-1)      /* the end of the step */
#define TARGET_INSTANCE (-2) /* the rank's kernel of instance (group, by_seq, key) */

typedef struct walk_state {
    int64_t step, rank, target;
    int64_t group, by_seq, key;
    int64_t seq;               /* pieces put so far */
    int64_t hops;              /* intervals looked up so far: the state's version */
    int64_t done;
} walk_state;

/* An interval row of "_path_intervals" and its rows of "_path_pieces". */
typedef struct interval {
    int64_t rank, kind, key;   /* key: at_ns of a kernel's, step of an end's */
    size_t row, first_piece, n_pieces;
} interval;

typedef struct walker {
    const hta_table *rows, *pieces, *names;
    interval *iv;              /* by (rank, kind, key) */
    size_t n_iv;
    size_t *name_rows;         /* rows of names by (rank, name_id) */
    uint8_t *name_used;        /* by place in name_rows: a piece walked uses it */
    const hta_rank_ops *r;
    const hta_op_result *res;
    size_t *by_start, *by_instance; /* ops by (rank, start), by (rank, instance) */
    int64_t *ranks;            /* the ranks this process holds, sorted */
    size_t n_ranks;
    int64_t limit;             /* hops beyond which a walk is a cycle */
    hta_table *out;
} walker;

static int compare_interval(const void *a, const void *b)
{
    const interval *x = a, *y = b;
    int c = hta_cmp_i64(x->rank, y->rank);
    c = c ? c : hta_cmp_i64(x->kind, y->kind);
    c = c ? c : hta_cmp_i64(x->key, y->key);
    return c ? c : (x->row > y->row) - (x->row < y->row);
}

/* The intervals of rows, each with its pieces (the pieces' rows come in
 * the intervals' order); -1 when out of memory or they do not add up. */
static int index_intervals(walker *w)
{
    const hta_table *t = w->rows;
    size_t n = t ? t->n_rows : 0, n_pieces = w->pieces ? w->pieces->n_rows : 0, at = 0;
    w->iv = malloc((n ? n : 1) * sizeof *w->iv);
    if (!w->iv)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const hta_cell *row = hta_table_row(t, i);
        int64_t kind = row[HTA_PATH_INTERVALS_KIND].i, pieces = row[HTA_PATH_INTERVALS_PIECES].i;
        int64_t key = kind == HTA_PATH_INTERVAL_TO_END ? row[HTA_PATH_INTERVALS_STEP].i
                                                       : row[HTA_PATH_INTERVALS_AT_NS].i;
        if (pieces < 0 || (size_t)pieces > n_pieces - at)
            return -1;
        w->iv[i] = (interval){row[HTA_PATH_INTERVALS_RANK].i, kind, key, i, at, (size_t)pieces};
        at += (size_t)pieces;
    }
    w->n_iv = n;
    qsort(w->iv, n, sizeof *w->iv, compare_interval);
    return at == n_pieces ? 0 : -1;
}

static const interval *find_interval(const walker *w, int64_t rank, int64_t kind, int64_t key)
{
    interval probe = {rank, kind, key, 0, 0, 0};
    size_t lo = 0, hi = w->n_iv;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (compare_interval(&w->iv[mid], &probe) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    const interval *f = lo < w->n_iv ? &w->iv[lo] : NULL;
    return f && f->rank == rank && f->kind == kind && f->key == key ? f : NULL;
}

static int compare_name_row(const void *a, const void *b, void *ctx)
{
    const hta_table *t = ctx;
    const hta_cell *x = hta_table_row(t, *(const size_t *)a);
    const hta_cell *y = hta_table_row(t, *(const size_t *)b);
    int c = hta_cmp_i64(x[HTA_PATH_NAMES_RANK].i, y[HTA_PATH_NAMES_RANK].i);
    return c ? c : hta_cmp_i64(x[HTA_PATH_NAMES_NAME_ID].i, y[HTA_PATH_NAMES_NAME_ID].i);
}

size_t *hta_path_names_order(const hta_table *names)
{
    size_t n = names ? names->n_rows : 0;
    size_t *rows = malloc((n ? n : 1) * sizeof *rows);
    for (size_t i = 0; rows && i < n; i++)
        rows[i] = i;
    if (rows)
        qsort_r(rows, n, sizeof *rows, compare_name_row, (void *)names);
    return rows;
}

long hta_path_names_place(const hta_table *names, const size_t *order, int64_t rank, int64_t id)
{
    size_t lo = 0, hi = names && id >= 0 ? names->n_rows : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const hta_cell *row = hta_table_row(names, order[mid]);
        int c = hta_cmp_i64(row[HTA_PATH_NAMES_RANK].i, rank);
        c = c ? c : hta_cmp_i64(row[HTA_PATH_NAMES_NAME_ID].i, id);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Marks the name (rank, id) used. */
static void use_name(walker *w, int64_t rank, int64_t id)
{
    long at = hta_path_names_place(w->names, w->name_rows, rank, id);
    if (at >= 0)
        w->name_used[at] = 1;
}

/* Ops by (rank, group, by_seq, key). */
static int compare_op_instance(const hta_group_op *x, int64_t rank, int64_t group, int64_t by_seq,
                               int64_t key)
{
    int c = hta_cmp_i64(x->rank, rank);
    c = c ? c : hta_cmp_i64(x->group, group);
    c = c ? c : hta_cmp_i64(x->by_seq, by_seq);
    return c ? c : hta_cmp_i64(x->key, key);
}

static int compare_op_instances(const void *a, const void *b, void *ctx)
{
    const hta_group_op *ops = ctx, *y = &ops[*(const size_t *)b];
    return compare_op_instance(&ops[*(const size_t *)a], y->rank, y->group, y->by_seq, y->key);
}

/* The first place in by_start whose op does not come before (rank, start). */
static size_t lower_bound_start(const walker *w, int64_t rank, int64_t start)
{
    size_t lo = 0, hi = w->r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const hta_group_op *o = &w->r->ops[w->by_start[mid]];
        if (o->rank < rank || (o->rank == rank && o->start < start))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The op of the rank's kernel starting at start that waited longest (a
 * coalesced batch runs several ops in one kernel), or -1. */
static long longest_waiting_op(const walker *w, int64_t rank, int64_t start)
{
    long best = -1;
    for (size_t i = lower_bound_start(w, rank, start); i < w->r->n; i++) {
        size_t op = w->by_start[i];
        const hta_group_op *o = &w->r->ops[op];
        if (o->rank != rank || o->start != start)
            break;
        if (best < 0 || w->res[op].wait_ns > w->res[best].wait_ns)
            best = (long)op;
    }
    return best;
}

/* The rank's op of an instance, or -1. */
static long instance_op(const walker *w, const walk_state *st)
{
    size_t lo = 0, hi = w->r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (compare_op_instance(&w->r->ops[w->by_instance[mid]], st->rank, st->group, st->by_seq,
                                st->key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == w->r->n)
        return -1;
    size_t op = w->by_instance[lo];
    return compare_op_instance(&w->r->ops[op], st->rank, st->group, st->by_seq, st->key)
               ? -1
               : (long)op;
}

static int holds(const walker *w, int64_t rank)
{
    size_t at = hta_lower_bound_i64(w->ranks, w->n_ranks, rank);
    return at < w->n_ranks && w->ranks[at] == rank;
}

/* The ranks of the intervals and ops, sorted and unique. */
static int list_ranks(walker *w)
{
    w->ranks = malloc((w->n_iv + w->r->n + 1) * sizeof *w->ranks);
    if (!w->ranks)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < w->n_iv; i++)
        w->ranks[n++] = w->iv[i].rank;
    for (size_t i = 0; i < w->r->n; i++)
        w->ranks[n++] = w->r->ops[i].rank;
    qsort(w->ranks, n, sizeof *w->ranks, hta_compare_i64);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || w->ranks[k - 1] != w->ranks[i])
            w->ranks[k++] = w->ranks[i];
    w->n_ranks = k;
    return 0;
}

static int walker_init(walker *w, const hta_tableset *path, const hta_rank_ops *r,
                       const hta_op_result *res, hta_tableset *out)
{
    *w = (walker){.rows = hta_tableset_find(path, hta_path_intervals_table.name),
                  .pieces = hta_tableset_find(path, hta_path_pieces_table.name),
                  .names = hta_tableset_find(path, hta_path_names_table.name), .r = r, .res = res};
    size_t n_names = w->names ? w->names->n_rows : 0;
    w->name_rows = hta_path_names_order(w->names);
    w->name_used = calloc(n_names ? n_names : 1, 1);
    w->by_start = malloc((r->n ? r->n : 1) * sizeof *w->by_start);
    w->by_instance = malloc((r->n ? r->n : 1) * sizeof *w->by_instance);
    w->out = hta_tableset_table(out, &hta_path_walk_table);
    if (!w->name_rows || !w->name_used || !w->by_start || !w->by_instance || !w->out ||
        index_intervals(w) || list_ranks(w))
        return -1;
    for (size_t i = 0; i < r->n; i++)
        w->by_start[i] = w->by_instance[i] = i;
    qsort_r(w->by_start, r->n, sizeof *w->by_start, hta_group_op_compare_rank_start, r->ops);
    qsort_r(w->by_instance, r->n, sizeof *w->by_instance, compare_op_instances, r->ops);
    return 0;
}

static void walker_free(walker *w)
{
    free(w->iv);
    free(w->name_rows);
    free(w->name_used);
    free(w->by_start);
    free(w->by_instance);
    free(w->ranks);
}

static int put_piece(walker *w, walk_state *st, int64_t rank, int64_t name_id, int64_t bound,
                     int64_t time)
{
    use_name(w, rank, name_id);
    hta_row_builder row = hta_table_add_row(w->out);
    hta_row_put_i64(&row, st->step);
    hta_row_put_i64(&row, st->seq++);
    hta_row_put_i64(&row, rank);
    hta_row_put_i64(&row, name_id);
    hta_row_put_i64(&row, bound);
    hta_row_put_i64(&row, time);
    return hta_row_done(&row);
}

/* The interval's pieces, the last first. */
static int put_interval_pieces(walker *w, walk_state *st, const interval *h)
{
    for (size_t i = h->n_pieces; i > 0; i--) {
        const hta_cell *row = hta_table_row(w->pieces, h->first_piece + i - 1);
        if (put_piece(w, st, h->rank, row[HTA_PATH_PIECES_NAME_ID].i,
                      row[HTA_PATH_PIECES_BOUND].i, row[HTA_PATH_PIECES_TIME_NS].i))
            return -1;
    }
    return 0;
}

/* The interval the state is at, or NULL. */
static const interval *interval_at(const walker *w, const walk_state *st)
{
    if (st->target == TARGET_END)
        return find_interval(w, st->rank, HTA_PATH_INTERVAL_TO_END, st->step);
    long op = st->target == TARGET_INSTANCE ? instance_op(w, st) : -1;
    int64_t start = st->target != TARGET_INSTANCE ? st->target : op >= 0 ? w->r->ops[op].start : -1;
    return start < 0 ? NULL : find_interval(w, st->rank, HTA_PATH_INTERVAL_TO_KERNEL, start);
}

/* Takes the bounding kernel of interval h: its transfer, then on from
 * the instance's last arriver; or all of it, then on from its start. */
static int cross_kernel(walker *w, walk_state *st, const interval *h)
{
    const hta_cell *row = hta_table_row(w->rows, h->row);
    int64_t from = row[HTA_PATH_INTERVALS_FROM_NS].i, dur = row[HTA_PATH_INTERVALS_FROM_DUR_NS].i;
    int64_t name = row[HTA_PATH_INTERVALS_NAME_ID].i;
    long op = longest_waiting_op(w, h->rank, from);
    const hta_op_result *x = op >= 0 ? &w->res[op] : NULL;
    if (x && x->wait_ns > 0 && x->last_rank >= 0 && x->last_rank != h->rank) {
        int64_t transfer = dur > x->wait_ns ? dur - x->wait_ns : 0;
        const hta_group_op *o = &w->r->ops[op];
        *st = (walk_state){st->step, x->last_rank, TARGET_INSTANCE, o->group, o->by_seq, o->key,
                           st->seq, st->hops, 0};
        return put_piece(w, st, h->rank, name, HTA_CP_GPU_COMMUNICATION, transfer);
    }
    st->target = from;
    return put_piece(w, st, h->rank, name, HTA_CP_GPU_COMMUNICATION, dur);
}

/* Walks the step on while its rank is held here. */
static int advance(walker *w, walk_state *st)
{
    while (!st->done && holds(w, st->rank)) {
        const interval *h = interval_at(w, st);
        st->hops++;
        if (!h || st->hops > w->limit) {
            st->done = 1;
            break;
        }
        if (put_interval_pieces(w, st, h))
            return -1;
        if (hta_table_row(w->rows, h->row)[HTA_PATH_INTERVALS_FROM_NS].i < 0)
            st->done = 1;
        else if (cross_kernel(w, st, h))
            return -1;
    }
    return 0;
}

/* MPI reduction: the state that moved further. */
static void keep_moved(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const walk_state *a = in;
    walk_state *b = inout;
    for (int i = 0; i < *len; i++)
        if (a[i].hops > b[i].hops)
            b[i] = a[i];
}

/* A rank's step end. */
typedef struct step_end {
    int64_t step, at, rank;
} step_end;

/* By step, the latest end first, then the lowest rank. */
static int compare_step_end(const void *a, const void *b)
{
    const step_end *x = a, *y = b;
    int c = hta_cmp_i64(x->step, y->step);
    c = c ? c : hta_cmp_i64(y->at, x->at);
    return c ? c : hta_cmp_i64(x->rank, y->rank);
}

/* Keeps the latest end of each step in e[0..n); the count left, in
 * order. */
static size_t latest_per_step(step_end *e, size_t n)
{
    qsort(e, n, sizeof *e, compare_step_end);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || e[k - 1].step != e[i].step)
            e[k++] = e[i];
    return k;
}

/* This process's ranks' step ends, each step's latest kept. */
static step_end *local_ends(const walker *w, size_t *n)
{
    step_end *e = malloc((w->n_iv + 1) * sizeof *e);
    size_t k = 0;
    for (size_t i = 0; e && i < w->n_iv; i++) {
        if (w->iv[i].kind != HTA_PATH_INTERVAL_TO_END)
            continue;
        const hta_cell *row = hta_table_row(w->rows, w->iv[i].row);
        e[k++] = (step_end){w->iv[i].key, row[HTA_PATH_INTERVALS_AT_NS].i, w->iv[i].rank};
    }
    *n = e ? latest_per_step(e, k) : 0;
    return e;
}

/* Every process's step ends, each step's latest kept, the same
 * everywhere; NULL (everywhere) when out of memory. */
static step_end *job_ends(const hta_processes *pr, const walker *w, size_t *n_ends)
{
    size_t n = 0;
    step_end *mine = local_ends(w, &n);
    int *lens = calloc((size_t)pr->n, sizeof *lens);
    int *offsets = calloc((size_t)pr->n, sizeof *offsets);
    int failed = hta_processes_any(pr, !mine || !lens || !offsets ||
                                           n * sizeof *mine > INT_MAX);
    size_t total = 0;
    if (!failed) {
        hta_processes_allgather_int(pr, (int)(n * sizeof *mine), lens);
        failed = hta_processes_displacements(lens, offsets, pr->n) != 0;
        total = failed ? 0 : (size_t)offsets[pr->n - 1] + (size_t)lens[pr->n - 1];
    }
    step_end *all = failed ? NULL : malloc(total ? total : 1);
    if (hta_processes_any(pr, failed || !all)) {
        free(all);
        all = NULL;
    } else {
        hta_processes_allgatherv(pr, mine, (int)(n * sizeof *mine), (char *)all, lens, offsets);
        *n_ends = latest_per_step(all, total / sizeof *all);
    }
    free(mine);
    free(lens);
    free(offsets);
    return all;
}

/* Every step's walk at its start, the same on every process: each step
 * from the rank whose step ends last.  NULL (everywhere) when out of
 * memory. */
static walk_state *first_states(const hta_processes *pr, const walker *w, size_t *n_steps)
{
    size_t n = 0;
    step_end *e = job_ends(pr, w, &n);
    walk_state *st = e ? malloc((n + 1) * sizeof *st) : NULL;
    for (size_t i = 0; st && i < n; i++)
        st[i] = (walk_state){e[i].step, e[i].rank, TARGET_END, 0, 0, 0, 0, 0, 0};
    *n_steps = n;
    if (hta_processes_any(pr, e && !st)) {
        free(st);
        st = NULL;
    }
    free(e);
    return st;
}

/* Rounds until every walk is done: a walk that no process moved in a
 * round has reached a rank no process holds. */
static int walk_steps(const hta_processes *pr, walker *w, walk_state *st, size_t n)
{
    int64_t *before = malloc((n ? n : 1) * sizeof *before);
    if (hta_processes_any(pr, !before)) {
        free(before);
        return -1;
    }
    for (int active = 1; active;) {
        int failed = 0;
        for (size_t i = 0; i < n; i++) {
            before[i] = st[i].hops;
            failed = failed || advance(w, &st[i]) != 0;
        }
        if (hta_processes_any(pr, failed)) {
            free(before);
            return -1;
        }
        hta_processes_reduce(pr, st, n, sizeof *st, keep_moved);
        active = 0;
        for (size_t i = 0; i < n; i++) {
            if (!st[i].done && st[i].hops == before[i])
                st[i].done = 1;
            active |= !st[i].done;
        }
    }
    free(before);
    return 0;
}

static int put_used_names(const walker *w, hta_tableset *out)
{
    size_t n = w->names ? w->names->n_rows : 0;
    hta_table *t = hta_tableset_table(out, &hta_path_walk_names_table);
    int rc = t ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (!w->name_used[i])
            continue;
        const hta_cell *cells = hta_table_row(w->names, w->name_rows[i]);
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, cells[HTA_PATH_NAMES_RANK].i);
        hta_row_put_i64(&row, cells[HTA_PATH_NAMES_NAME_ID].i);
        hta_row_put_str(&row, cells[HTA_PATH_NAMES_NAME].s);
        rc = hta_row_done(&row);
    }
    return rc;
}

int hta_global_path_walk(const hta_processes *pr, const hta_tableset *path,
                         const hta_rank_ops *r, const hta_op_result *res, hta_tableset *out)
{
    walker w;
    int failed = hta_processes_any(pr, walker_init(&w, path, r, res, out) != 0);
    size_t n_steps = 0;
    walk_state *st = failed ? NULL : first_states(pr, &w, &n_steps);
    if (st) {
        int64_t limit = (int64_t)w.n_iv;
        hta_processes_sum(pr, &limit, 1);
        w.limit = limit + 1;
        failed = walk_steps(pr, &w, st, n_steps) != 0 ||
                 hta_processes_any(pr, put_used_names(&w, out) != 0);
    } else {
        failed = 1;
    }
    free(st);
    walker_free(&w);
    return failed ? -1 : 0;
}
