/* group_instances.c: an instance's owner matches its ops
 * (collective_groups.c says what an instance is and what the tables
 * hold): per instance its "collectives" row, the figures "collective_summary"
 * is made of ("_instance_stats") and each op's result, which goes back to
 * the process holding the op's rank. */
#define _GNU_SOURCE /* qsort_r */
#include "crossrank/exchange/collective_groups.h"

#include "analysis/comm_ops.h"
#include "analysis/ranks_table.h"
#include "analysis/steps.h"
#include "crossrank/exchange/all_to_all.h"
#include "crossrank/exchange/p2p_pairs.h"
#include "crossrank/exchange/step_rows.h"
#include "model/comm_meta.h"
#include "model/trace.h"
#include "numerics/stats.h"
#include "util/ranked.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum coll_kind {
    K_ALLREDUCE,
    K_ALLGATHER,
    K_REDUCE_SCATTER,
    K_ALLTOALL,
    K_OTHER
} coll_kind;

static coll_kind kind_of(const char *name)
{
    if (strstr(name, "allreduce") || strstr(name, "all_reduce"))
        return K_ALLREDUCE;
    if (strstr(name, "allgather") || strstr(name, "all_gather"))
        return K_ALLGATHER;
    if (strstr(name, "reduce_scatter") || strstr(name, "reducescatter"))
        return K_REDUCE_SCATTER;
    if (strstr(name, "alltoall") || strstr(name, "all_to_all"))
        return K_ALLTOALL;
    return K_OTHER;
}

/* nccl-tests' bus bandwidth factor for n ranks. */
static double busbw_factor(coll_kind k, int64_t n)
{
    if (n < 1)
        return NAN;
    switch (k) {
    case K_ALLREDUCE: return 2.0 * (double)(n - 1) / (double)n;
    case K_ALLGATHER: case K_REDUCE_SCATTER: case K_ALLTOALL: return (double)(n - 1) / (double)n;
    default: return 1.0;
    }
}

/* The message size of a kind: -1 when its dtype or counts are unknown. */
static int64_t bytes_of(const hta_kind_info *k)
{
    int size = hta_dtype_size(k->dtype);
    int64_t nelems = kind_of(k->collective) == K_ALLGATHER ? k->out : k->in;
    return size > 0 && nelems >= 0 ? nelems * size : -1;
}


int hta_group_op_compare_instance(const hta_group_op *x, const hta_group_op *y)
{
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->by_seq != y->by_seq)
        return x->by_seq < y->by_seq ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

/* Ops (by index) in instance order, then rank, then position. */
static int compare_instance_then_rank(const void *a, const void *b, void *ctx)
{
    const hta_group_op *ops = ctx;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = hta_group_op_compare_instance(&ops[i], &ops[j]);
    if (!c)
        c = (ops[i].rank > ops[j].rank) - (ops[i].rank < ops[j].rank);
    return c ? c : (i > j) - (i < j);
}

size_t *hta_group_ops_in_instance_order(const hta_group_op *ops, size_t n)
{
    size_t *o = malloc((n ? n : 1) * sizeof *o);
    for (size_t i = 0; o && i < n; i++)
        o[i] = i;
    if (o)
        qsort_r(o, n, sizeof *o, compare_instance_then_rank, (void *)ops);
    return o;
}

int hta_group_ops_same_instance(const hta_group_op *a, const hta_group_op *b)
{
    return hta_group_op_compare_instance(a, b) == 0;
}

int hta_collective_ends_together(const char *collective)
{
    coll_kind k = kind_of(collective);
    return k == K_ALLREDUCE || k == K_ALLGATHER || k == K_REDUCE_SCATTER;
}

typedef struct matcher {
    const hta_comm_catalog *c;
    const hta_group_op *ops;
    const int64_t *valid;
    const int64_t *valid_node; /* the node of each valid rank; NULL = unknown */
    size_t n_valid;
    int64_t *missing;          /* per valid rank */
    hta_op_result *results;
    hta_table *out, *stats, *pairs;
    hta_tableset *tables;      /* where pairs and all-to-alls go, made on first use */
    hta_buf text;              /* scratch for mismatched_ranks */
} matcher;

static long valid_index(const matcher *m, int64_t rank)
{
    const int64_t *hit = bsearch(&rank, m->valid, m->n_valid, sizeof *m->valid, hta_compare_i64);
    return hit ? (long)(hit - m->valid) : -1;
}

static int took_part(const matcher *m, const size_t *o, size_t n, int64_t rank)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->ops[o[mid]].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && m->ops[o[lo]].rank == rank;
}

/* Counts the instance as missing for every analysed member rank of the
 * group that took no part in it. */
static void count_missing(matcher *m, const size_t *o, size_t n)
{
    const hta_group_info *g = &m->c->groups[m->ops[o[0]].group];
    for (long i = 0; i < g->n_members; i++) {
        long v = valid_index(m, g->members[i]);
        if (v >= 0 && !took_part(m, o, n, g->members[i]))
            m->missing[v]++;
    }
}

/* Whether the ranks of m->ops[o[0..n)] ran on one node. */
static int scope_of(const matcher *m, const size_t *o, size_t n)
{
    if (!m->valid_node)
        return HTA_SCOPE_UNKNOWN;
    int64_t node = -1;
    for (size_t j = 0; j < n; j++) {
        long v = valid_index(m, m->ops[o[j]].rank);
        if (v < 0 || m->valid_node[v] < 0)
            return HTA_SCOPE_UNKNOWN;
        if (j > 0 && m->valid_node[v] != node)
            return HTA_SCOPE_ACROSS_NODES;
        node = m->valid_node[v];
    }
    return HTA_SCOPE_WITHIN_NODE;
}

/* The figures of one instance. */
typedef struct instance {
    int64_t earliest, latest, earliest_end, latest_end, shortest, wait_ns, bytes;
    int64_t first_rank, last_rank, scope;
    double busbw;
} instance;

static int put_instance(matcher *m, const hta_group_op *first, size_t n, const instance *in)
{
    const hta_group_variant *g = &m->c->variants[first->variant];
    const hta_kind_info *k = &m->c->kinds[first->kind];
    int64_t group_size = k->size > 0 ? k->size : (int64_t)n;
    double algbw = in->bytes >= 0 && in->shortest > 0
                       ? (double)in->bytes / (double)in->shortest
                       : NAN;
    hta_row_builder row = hta_table_add_row(m->out);
    hta_row_put_str(&row, g->name);
    hta_row_put_str(&row, g->desc);
    hta_row_put_i64(&row, first->key);
    hta_row_put_i64(&row, first->by_seq);
    hta_row_put_str(&row, k->collective);
    hta_row_put_str(&row, k->dtype);
    hta_row_put_i64(&row, in->bytes);
    hta_row_put_i64(&row, group_size);
    hta_row_put_i64(&row, (int64_t)n);
    hta_row_put_i64(&row, in->first_rank);
    hta_row_put_i64(&row, in->last_rank);
    hta_row_put_f64(&row, hta_ns_to_us(in->earliest));
    hta_row_put_f64(&row, hta_ns_to_us(in->latest - in->earliest));
    hta_row_put_f64(&row, hta_ns_to_us(in->latest_end - in->earliest_end));
    hta_row_put_f64(&row, hta_ns_to_us(in->shortest));
    hta_row_put_f64(&row, algbw);
    hta_row_put_f64(&row, in->busbw);
    hta_row_put_f64(&row, hta_ns_to_us(in->wait_ns));
    if (hta_buf_putc(&m->text, '\0'))
        return -1;
    hta_row_put_str(&row, m->text.data);
    hta_row_builder stats = hta_table_add_row(m->stats);
    hta_row_put_str(&stats, g->desc);
    hta_row_put_str(&stats, k->collective);
    hta_row_put_str(&stats, k->dtype);
    hta_row_put_i64(&stats, in->bytes);
    hta_row_put_i64(&stats, in->shortest);
    hta_row_put_i64(&stats, in->latest - in->earliest);
    hta_row_put_i64(&stats, in->wait_ns);
    hta_row_put_f64(&stats, in->busbw);
    hta_row_put_i64(&stats, in->scope);
    return hta_row_done(&row) || hta_row_done(&stats) ? -1 : 0;
}

/* Whether a collective's element counts differ between its ranks by
 * design: all_to_allv sends each rank its own split sizes. */
static int counts_vary(const char *collective)
{
    return strstr(collective, "allv") != NULL; /* all_to_allv, alltoallv */
}

/* Lists o's rank in the scratch text when what must agree between the
 * ranks of an instance differs from its first op's: the collective, the
 * dtype and, unless they vary by design, the element counts. */
static int note_mismatch(matcher *m, const hta_group_op *o, const hta_group_op *first,
                         hta_op_result *r)
{
    const hta_kind_info *k = &m->c->kinds[o->kind], *f = &m->c->kinds[first->kind];
    if (strcmp(k->collective, f->collective) == 0 && strcmp(k->dtype, f->dtype) == 0 &&
        (counts_vary(k->collective) || (k->in == f->in && k->out == f->out)))
        return 0;
    r->mismatch = 1;
    char num[32];
    int len = snprintf(num, sizeof num, "%s%lld", m->text.len ? "," : "", (long long)o->rank);
    return hta_buf_append(&m->text, num, (size_t)len);
}

/* Matches the ops m->ops[o[0..n)] of one instance (rank order). */
static int match_instance(matcher *m, const size_t *o, size_t n)
{
    const hta_group_op *first = &m->ops[o[0]];
    instance in = {INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, INT64_MAX, 0, 0,
                   first->rank, first->rank, scope_of(m, o, n), 0};
    size_t n_last = 0;
    for (size_t j = 0; j < n; j++) {
        const hta_group_op *op = &m->ops[o[j]];
        int64_t s = op->start, e = op->end;
        if (s < in.earliest)
            in.earliest = s, in.first_rank = op->rank;
        if (s > in.latest)
            in.latest = s, in.last_rank = op->rank, n_last = 0;
        n_last += s == in.latest;
        in.earliest_end = e < in.earliest_end ? e : in.earliest_end;
        in.latest_end = e > in.latest_end ? e : in.latest_end;
        in.shortest = e - s < in.shortest ? e - s : in.shortest;
    }
    int64_t second = INT64_MIN; /* the latest start before the last arrival */
    for (size_t j = 0; j < n; j++)
        if (m->ops[o[j]].start < in.latest && m->ops[o[j]].start > second)
            second = m->ops[o[j]].start;
    const hta_kind_info *kind = &m->c->kinds[first->kind];
    in.bytes = bytes_of(kind);
    int contested = n_last < n;
    if (!contested)
        in.last_rank = -1; /* nobody arrived last: alone, or all at once */
    m->text.len = 0;
    for (size_t j = 0; j < n; j++) {
        hta_op_result *r = &m->results[o[j]];
        const hta_group_op *op = &m->ops[o[j]];
        int64_t s = op->start, e = op->end;
        *r = (hta_op_result){.wait_ns = in.latest - s, .end_lag_ns = e - in.earliest_end,
                             .n_ranks = (int64_t)n, .contested = (uint8_t)contested,
                             .last = contested && s == in.latest,
                             .clock_violation = e < in.latest,
                             .last_rank = contested ? in.last_rank : -1,
                             .lateness_ns = contested && n_last == 1 && s == in.latest
                                                ? in.latest - second
                                                : 0};
        in.wait_ns += in.latest - s;
        if (note_mismatch(m, op, first, r))
            return -1;
    }
    /* The wait an instance's last arrivers caused, shared among them. */
    for (size_t j = 0; contested && j < n; j++)
        if (m->ops[o[j]].start == in.latest)
            m->results[o[j]].caused_ns = in.wait_ns / (int64_t)n_last;
    int64_t group_size = kind->size > 0 ? kind->size : (int64_t)n;
    in.busbw = in.bytes >= 0 && in.shortest > 0
                   ? (double)in.bytes / (double)in.shortest *
                         busbw_factor(kind_of(kind->collective), group_size)
                   : NAN;
    count_missing(m, o, n);
    if (hta_kind_is_all_to_all(kind) && hta_a2a_put_instance(m->tables, m->c, m->ops, o, n))
        return -1;
    return put_instance(m, first, n, &in);
}

static int put_missing(hta_tableset *out, const matcher *m)
{
    hta_table *t = hta_tableset_table(out, &hta_group_missing_table);
    int rc = t ? 0 : -1;
    for (size_t v = 0; rc == 0 && v < m->n_valid; v++) {
        if (!m->missing[v])
            continue;
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, m->valid[v]);
        hta_row_put_i64(&row, m->missing[v]);
        rc = hta_row_done(&row);
    }
    return rc;
}

int hta_match_group_ops(const hta_comm_catalog *c, const hta_group_op *ops, size_t n,
                        const int64_t *valid, const int64_t *valid_node, size_t n_valid,
                        hta_op_result *results, hta_tableset *out)
{
    if (n == 0)
        return 0;
    matcher m = {.c = c, .ops = ops, .valid = valid, .valid_node = valid_node,
                 .n_valid = n_valid, .results = results,
                 .out = hta_tableset_table(out, &hta_collectives_table),
                 .stats = hta_tableset_table(out, &hta_instance_stats_table), .tables = out,
                 .missing = calloc(n_valid ? n_valid : 1, sizeof *m.missing)};
    size_t *o = hta_group_ops_in_instance_order(ops, n);
    int rc = o && m.missing && m.out && m.stats ? 0 : -1;
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        for (end = i + 1; end < n && hta_group_op_compare_instance(&ops[o[end]], &ops[o[i]]) == 0;)
            end++;
        if (ops[o[i]].by_seq != HTA_BY_PAIR)
            rc = match_instance(&m, &o[i], end - i);
        else if (!m.pairs && !(m.pairs = hta_tableset_table(out, &hta_p2p_table)))
            rc = -1;
        else
            rc = hta_match_pair(c, ops, &o[i], end - i, results, m.pairs);
    }
    if (rc == 0)
        rc = put_missing(out, &m);
    hta_buf_free(&m.text);
    free(m.missing);
    free(o);
    return rc;
}
