/* collective_groups.c: collective instances by process group.
 *
 * Input: "_comm_ops" (analysis/comm_ops.c), every communication kernel
 * whose collective metadata is known, packed per (rank, group) and
 * unpacked here into compact ops.  A process group issues its
 * collectives in the same order on each of its ranks, whatever stream each
 * rank runs them on, so one instance is (group, Seq) when PyTorch recorded
 * Seq, else (group, k-th kernel of that group on the rank).  Only the
 * ranks that ran a kernel of the group take part in its instances; a
 * member rank of the group (its "Process Group Ranks", else pg_config)
 * that was analysed but has no kernel for an instance counts it as
 * "missing".  Ranks are the traces' global ranks, so the members listed by
 * the group are global too.
 *
 * The work is split so that no process needs every rank's kernels
 * (crossrank/collective_exchange.c runs the parts on different
 * processes): the owner of an instance matches its ops and returns each
 * op's result; the process holding a rank turns its ops' results into the
 * rank's figures; the root adds the figures up.  Groups and kinds travel
 * as numbers of a catalog every process builds the same way
 * (crossrank/exchange/comm_catalog.c).
 *
 * Per instance ("collectives", one row each): bytes (input buffer for
 * all-reduce, broadcast, reduce, all-to-all and reduce-scatter, output
 * buffer for all-gather: the full message, as nccl-tests counts it), the
 * first and last arriving rank, arrival skew (latest start - earliest
 * start), end skew (latest end - earliest end), transfer time (the
 * shortest duration: on the last rank to arrive the kernel only
 * transfers), algbw = bytes / transfer time and busbw = algbw x the
 * nccl-tests factor for n = group size (all-reduce 2(n-1)/n; all-gather,
 * reduce-scatter, all-to-all (n-1)/n; others 1), in GB/s of 1e9 bytes.
 * A rank whose collective name or element count differs from the lowest
 * rank's at the same instance is listed in "mismatched_ranks" and counted
 * on the rank, never silently matched as agreeing.
 *
 * "collective_summary": one row per (group description, collective,
 * dtype, message size bucket = the smallest power of two >= bytes), from
 * each instance's figures ("_instance_stats"), which the owners send to
 * the process summarising that key, so that no process holds every
 * instance; the root only puts the rows in key order.  The instance rows
 * themselves stay with their owners, which write them into the results
 * file (output/hdf5_in_place.c).
 *
 * "comm_by_group": per rank and group, the communication time, the part
 * computation overlapped, the exposed rest split into waiting for the last
 * peer and transferring, the wait and the last arrivals. */
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
#include "util/name_hash.h"
#include "util/ranked.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const hta_column INSTANCE_COLUMNS[HTA_COLLECTIVES_N_COLUMNS] = {
    [HTA_COLLECTIVES_GROUP] = {"group", HTA_COL_STR},
    [HTA_COLLECTIVES_GROUP_DESC] = {"group_desc", HTA_COL_STR},
    [HTA_COLLECTIVES_SEQ] = {"seq", HTA_COL_I64},
    [HTA_COLLECTIVES_SEQ_FROM_TRACE] = {"seq_from_trace", HTA_COL_I64},
    [HTA_COLLECTIVES_COLLECTIVE] = {"collective", HTA_COL_STR},
    [HTA_COLLECTIVES_DTYPE] = {"dtype", HTA_COL_STR},
    [HTA_COLLECTIVES_BYTES] = {"bytes", HTA_COL_I64},
    [HTA_COLLECTIVES_GROUP_SIZE] = {"group_size", HTA_COL_I64},
    [HTA_COLLECTIVES_N_RANKS] = {"n_ranks", HTA_COL_I64},
    [HTA_COLLECTIVES_FIRST_RANK] = {"first_rank", HTA_COL_I64},
    [HTA_COLLECTIVES_LAST_RANK] = {"last_rank", HTA_COL_I64},
    [HTA_COLLECTIVES_START_US] = {"start_us", HTA_COL_F64},
    [HTA_COLLECTIVES_ARRIVAL_SKEW_US] = {"arrival_skew_us", HTA_COL_F64},
    [HTA_COLLECTIVES_END_SKEW_US] = {"end_skew_us", HTA_COL_F64},
    [HTA_COLLECTIVES_TRANSFER_US] = {"transfer_us", HTA_COL_F64},
    [HTA_COLLECTIVES_ALGBW_GBPS] = {"algbw_gbps", HTA_COL_F64},
    [HTA_COLLECTIVES_BUSBW_GBPS] = {"busbw_gbps", HTA_COL_F64},
    [HTA_COLLECTIVES_TOTAL_WAIT_US] = {"total_wait_us", HTA_COL_F64},
    [HTA_COLLECTIVES_MISMATCHED_RANKS] = {"mismatched_ranks", HTA_COL_STR},
};
const hta_table_spec hta_collectives_table = {
    "collectives", INSTANCE_COLUMNS, HTA_COLLECTIVES_N_COLUMNS, HTA_TABLE_IN_PLACE};

/* A group's members are the same for each of its instances, so they are
 * listed once per group (as each rank describes it) rather than per
 * instance: /collectives is written with fixed-length strings, as wide as
 * the widest value, and the member list of a large group is kilobytes. */
static const hta_column PROCESS_GROUP_COLUMNS[HTA_PROCESS_GROUPS_N_COLUMNS] = {
    [HTA_PROCESS_GROUPS_GROUP] = {"group", HTA_COL_STR},
    [HTA_PROCESS_GROUPS_GROUP_DESC] = {"group_desc", HTA_COL_STR},
    [HTA_PROCESS_GROUPS_RANKS] = {"ranks", HTA_COL_STR},
};
const hta_table_spec hta_process_groups_table = {
    "process_groups", PROCESS_GROUP_COLUMNS, HTA_PROCESS_GROUPS_N_COLUMNS, HTA_TABLE_GATHERED};


/* What the root's summary needs of each instance ("collectives" itself is
 * written by its owners, output/hdf5_in_place.c). */
static const hta_column STATS_COLUMNS[HTA_INSTANCE_STATS_N_COLUMNS] = {
    [HTA_INSTANCE_STATS_GROUP_DESC] = {"group_desc", HTA_COL_STR},
    [HTA_INSTANCE_STATS_COLLECTIVE] = {"collective", HTA_COL_STR},
    [HTA_INSTANCE_STATS_DTYPE] = {"dtype", HTA_COL_STR},
    [HTA_INSTANCE_STATS_BYTES] = {"bytes", HTA_COL_I64},
    [HTA_INSTANCE_STATS_TRANSFER_NS] = {"transfer_ns", HTA_COL_I64},
    [HTA_INSTANCE_STATS_ARRIVAL_SKEW_NS] = {"arrival_skew_ns", HTA_COL_I64},
    [HTA_INSTANCE_STATS_WAIT_NS] = {"wait_ns", HTA_COL_I64},
    [HTA_INSTANCE_STATS_BUSBW_GBPS] = {"busbw_gbps", HTA_COL_F64},
    [HTA_INSTANCE_STATS_SCOPE] = {"scope", HTA_COL_I64},
};
const hta_table_spec hta_instance_stats_table = {
    "_instance_stats", STATS_COLUMNS, HTA_INSTANCE_STATS_N_COLUMNS,
    HTA_TABLE_EXCHANGED | HTA_TABLE_SCRATCH};

/* Where an instance's ranks ran (HTA_INSTANCE_STATS_SCOPE). */
enum { SCOPE_UNKNOWN = -1, SCOPE_ACROSS_NODES = 0, SCOPE_WITHIN_NODE = 1 };

static const hta_column SUMMARY_COLUMNS[HTA_COLLECTIVE_SUMMARY_N_COLUMNS] = {
    [HTA_COLLECTIVE_SUMMARY_GROUP_DESC] = {"group_desc", HTA_COL_STR},
    [HTA_COLLECTIVE_SUMMARY_COLLECTIVE] = {"collective", HTA_COL_STR},
    [HTA_COLLECTIVE_SUMMARY_DTYPE] = {"dtype", HTA_COL_STR},
    [HTA_COLLECTIVE_SUMMARY_BUCKET_MAX_BYTES] = {"bucket_max_bytes", HTA_COL_I64},
    [HTA_COLLECTIVE_SUMMARY_COUNT] = {"count", HTA_COL_I64},
    [HTA_COLLECTIVE_SUMMARY_TOTAL_BYTES] = {"total_bytes", HTA_COL_I64},
    [HTA_COLLECTIVE_SUMMARY_TRANSFER_P50_US] = {"transfer_p50_us", HTA_COL_F64},
    [HTA_COLLECTIVE_SUMMARY_TRANSFER_P90_US] = {"transfer_p90_us", HTA_COL_F64},
    [HTA_COLLECTIVE_SUMMARY_TRANSFER_MAX_US] = {"transfer_max_us", HTA_COL_F64},
    [HTA_COLLECTIVE_SUMMARY_BUSBW_P50_GBPS] = {"busbw_p50_gbps", HTA_COL_F64},
    [HTA_COLLECTIVE_SUMMARY_BUSBW_MIN_GBPS] = {"busbw_min_gbps", HTA_COL_F64},
    [HTA_COLLECTIVE_SUMMARY_MEAN_ARRIVAL_SKEW_US] = {"mean_arrival_skew_us", HTA_COL_F64},
    [HTA_COLLECTIVE_SUMMARY_TOTAL_WAIT_US] = {"total_wait_us", HTA_COL_F64},
    [HTA_COLLECTIVE_SUMMARY_WITHIN_NODE_COUNT] = {"within_node_count", HTA_COL_I64},
    [HTA_COLLECTIVE_SUMMARY_WITHIN_NODE_BUSBW_P50_GBPS] = {"within_node_busbw_p50_gbps",
                                                           HTA_COL_F64},
    [HTA_COLLECTIVE_SUMMARY_ACROSS_NODES_COUNT] = {"across_nodes_count", HTA_COL_I64},
    [HTA_COLLECTIVE_SUMMARY_ACROSS_NODES_BUSBW_P50_GBPS] = {"across_nodes_busbw_p50_gbps",
                                                            HTA_COL_F64},
};
const hta_table_spec hta_collective_summary_table = {
    "collective_summary", SUMMARY_COLUMNS, HTA_COLLECTIVE_SUMMARY_N_COLUMNS, HTA_TABLE_GATHERED};

static const hta_column BY_GROUP_COLUMNS[HTA_COMM_BY_GROUP_N_COLUMNS] = {
    [HTA_COMM_BY_GROUP_RANK] = {"rank", HTA_COL_I64},
    [HTA_COMM_BY_GROUP_GROUP] = {"group", HTA_COL_STR},
    [HTA_COMM_BY_GROUP_GROUP_DESC] = {"group_desc", HTA_COL_STR},
    [HTA_COMM_BY_GROUP_INSTANCES] = {"instances", HTA_COL_I64},
    [HTA_COMM_BY_GROUP_COMM_US] = {"comm_us", HTA_COL_F64},
    [HTA_COMM_BY_GROUP_OVERLAPPED_US] = {"overlapped_us", HTA_COL_F64},
    [HTA_COMM_BY_GROUP_EXPOSED_US] = {"exposed_us", HTA_COL_F64},
    [HTA_COMM_BY_GROUP_EXPOSED_WAIT_US] = {"exposed_wait_us", HTA_COL_F64},
    [HTA_COMM_BY_GROUP_EXPOSED_TRANSFER_US] = {"exposed_transfer_us", HTA_COL_F64},
    [HTA_COMM_BY_GROUP_WAIT_US] = {"wait_us", HTA_COL_F64},
    [HTA_COMM_BY_GROUP_ARRIVED_LAST] = {"arrived_last", HTA_COL_I64},
    [HTA_COMM_BY_GROUP_P2P_OPS] = {"p2p_ops", HTA_COL_I64},
    [HTA_COMM_BY_GROUP_LATE_SENDER_US] = {"late_sender_us", HTA_COL_F64},
    [HTA_COMM_BY_GROUP_LATE_RECEIVER_US] = {"late_receiver_us", HTA_COL_F64},
    [HTA_COMM_BY_GROUP_UNPAIRED] = {"unpaired", HTA_COL_I64},
};
const hta_table_spec hta_comm_by_group_table = {
    "comm_by_group", BY_GROUP_COLUMNS, HTA_COMM_BY_GROUP_N_COLUMNS, HTA_TABLE_GATHERED};

/* A rank's figures over its group-matched kernels, for the root. */
static const hta_column WAIT_COLUMNS[HTA_GROUP_WAITS_N_COLUMNS] = {
    [HTA_GROUP_WAITS_RANK] = {"rank", HTA_COL_I64},
    [HTA_GROUP_WAITS_COLLECTIVES] = {"collectives", HTA_COL_I64},
    [HTA_GROUP_WAITS_ARRIVED_LAST] = {"arrived_last", HTA_COL_I64},
    [HTA_GROUP_WAITS_CLOCK_VIOLATIONS] = {"clock_violations", HTA_COL_I64},
    [HTA_GROUP_WAITS_WAIT_NS] = {"wait_ns", HTA_COL_I64},
    [HTA_GROUP_WAITS_MAX_END_LAG_NS] = {"max_end_lag_ns", HTA_COL_I64},
    [HTA_GROUP_WAITS_CAUSED_WAIT_NS] = {"caused_wait_ns", HTA_COL_I64},
    [HTA_GROUP_WAITS_METADATA_MISMATCHES] = {"metadata_mismatches", HTA_COL_I64},
    [HTA_GROUP_WAITS_EXPECTED_LAST] = {"expected_last", HTA_COL_F64},
};
const hta_table_spec hta_group_waits_table = {
    "_group_waits", WAIT_COLUMNS, HTA_GROUP_WAITS_N_COLUMNS,
    HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};
static const hta_column MISSING_COLUMNS[HTA_GROUP_MISSING_N_COLUMNS] = {
    [HTA_GROUP_MISSING_RANK] = {"rank", HTA_COL_I64},
    [HTA_GROUP_MISSING_MISSING] = {"missing", HTA_COL_I64},
};
const hta_table_spec hta_group_missing_table = {
    "_group_missing", MISSING_COLUMNS, HTA_GROUP_MISSING_N_COLUMNS,
    HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};
static const hta_column STEP_WAIT_COLUMNS[HTA_STEP_WAITS_N_COLUMNS] = {
    [HTA_STEP_WAITS_RANK] = {"rank", HTA_COL_I64},
    [HTA_STEP_WAITS_STEP] = {"step", HTA_COL_I64},
    [HTA_STEP_WAITS_WAIT_US] = {"wait_us", HTA_COL_F64},
};
const hta_table_spec hta_step_waits_table = {
    "_step_waits", STEP_WAIT_COLUMNS, HTA_STEP_WAITS_N_COLUMNS,
    HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};

typedef enum coll_kind { K_ALLREDUCE, K_ALLGATHER, K_REDUCE_SCATTER, K_ALLTOALL, K_OTHER } coll_kind;

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

/* ---- an owner's instances ----------------------------------------------- */

static int compare_instance(const hta_group_op *x, const hta_group_op *y)
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
    int c = compare_instance(&ops[i], &ops[j]);
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
    return compare_instance(a, b) == 0;
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
        return SCOPE_UNKNOWN;
    int64_t node = -1;
    for (size_t j = 0; j < n; j++) {
        long v = valid_index(m, m->ops[o[j]].rank);
        if (v < 0 || m->valid_node[v] < 0)
            return SCOPE_UNKNOWN;
        if (j > 0 && m->valid_node[v] != node)
            return SCOPE_ACROSS_NODES;
        node = m->valid_node[v];
    }
    return SCOPE_WITHIN_NODE;
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

static int same_previous(const hta_group_op *a, const hta_group_op *b)
{
    return a->prev_group != UINT32_MAX && a->prev_group == b->prev_group &&
           a->prev_by_seq == b->prev_by_seq && a->prev_key == b->prev_key;
}

/* The lateness of the one op starting at latest over the others that
 * did not come from the instance it came from; HTA_NO_OTHERS when all
 * did. */
static int64_t free_lateness_of(const matcher *m, const size_t *o, size_t n, int64_t latest)
{
    const hta_group_op *last = NULL;
    for (size_t j = 0; j < n && !last; j++)
        last = m->ops[o[j]].start == latest ? &m->ops[o[j]] : NULL;
    int64_t second = INT64_MIN;
    for (size_t j = 0; j < n; j++) {
        const hta_group_op *op = &m->ops[o[j]];
        if (op != last && !same_previous(op, last) && op->start > second)
            second = op->start;
    }
    return second == INT64_MIN ? HTA_NO_OTHERS : latest - second;
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
    int64_t free_lateness = n_last == 1 ? free_lateness_of(m, o, n, in.latest) : 0;
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
                                                : 0,
                             .free_lateness_ns = contested && s == in.latest ? free_lateness : 0};
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
        for (end = i + 1; end < n && compare_instance(&ops[o[end]], &ops[o[i]]) == 0;)
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

/* ---- a rank's figures --------------------------------------------------- */

/* Ops in instance order per rank: (rank, group, by_seq, key), then their
 * position. */
static int compare_rank_instance(const void *a, const void *b, void *ctx)
{
    const hta_group_op *ops = ctx;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = (ops[i].rank > ops[j].rank) - (ops[i].rank < ops[j].rank);
    if (!c)
        c = compare_instance(&ops[i], &ops[j]);
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

/* ---- on the root -------------------------------------------------------- */

static int64_t bucket_of(int64_t bytes)
{
    if (bytes <= 1)
        return bytes < 0 ? -1 : 1;
    int64_t b = 1;
    while (b < bytes && b < INT64_MAX / 2)
        b *= 2;
    return b;
}

static int compare_summary_key(const void *a, const void *b)
{
    const hta_cell *x = *(const hta_cell *const *)a, *y = *(const hta_cell *const *)b;
    int c = strcmp(x[HTA_INSTANCE_STATS_GROUP_DESC].s, y[HTA_INSTANCE_STATS_GROUP_DESC].s);
    if (!c)
        c = strcmp(x[HTA_INSTANCE_STATS_COLLECTIVE].s, y[HTA_INSTANCE_STATS_COLLECTIVE].s);
    if (!c)
        c = strcmp(x[HTA_INSTANCE_STATS_DTYPE].s, y[HTA_INSTANCE_STATS_DTYPE].s);
    if (!c) {
        int64_t bx = bucket_of(x[HTA_INSTANCE_STATS_BYTES].i), by = bucket_of(y[HTA_INSTANCE_STATS_BYTES].i);
        c = (bx > by) - (bx < by);
    }
    return c;
}

/* The median busbw of the instances of one scope (NaN without one), and
 * their number into *count. */
static double scope_busbw_p50(const hta_cell *const *in, size_t n, int64_t scope,
                              double *scratch, int64_t *count)
{
    size_t k = 0;
    *count = 0;
    for (size_t i = 0; i < n; i++) {
        if (in[i][HTA_INSTANCE_STATS_SCOPE].i != scope)
            continue;
        ++*count;
        if (isfinite(in[i][HTA_INSTANCE_STATS_BUSBW_GBPS].f))
            scratch[k++] = in[i][HTA_INSTANCE_STATS_BUSBW_GBPS].f;
    }
    hta_sort_doubles(scratch, k);
    return k ? hta_quantile_sorted(scratch, k, 0.5) : NAN;
}

static int put_summary_row(hta_table *t, const hta_cell *const *in, size_t n, double *scratch)
{
    int64_t total_bytes = 0, wait = 0, skew = 0;
    for (size_t i = 0; i < n; i++) {
        total_bytes += in[i][HTA_INSTANCE_STATS_BYTES].i > 0 ? in[i][HTA_INSTANCE_STATS_BYTES].i : 0;
        wait += in[i][HTA_INSTANCE_STATS_WAIT_NS].i;
        skew += in[i][HTA_INSTANCE_STATS_ARRIVAL_SKEW_NS].i;
        scratch[i] = hta_ns_to_us(in[i][HTA_INSTANCE_STATS_TRANSFER_NS].i);
    }
    hta_sort_doubles(scratch, n);
    double p50 = hta_quantile_sorted(scratch, n, 0.5), p90 = hta_quantile_sorted(scratch, n, 0.9);
    double max = scratch[n - 1];
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(in[i][HTA_INSTANCE_STATS_BUSBW_GBPS].f))
            scratch[k++] = in[i][HTA_INSTANCE_STATS_BUSBW_GBPS].f;
    hta_sort_doubles(scratch, k);
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_str(&row, in[0][HTA_INSTANCE_STATS_GROUP_DESC].s);
    hta_row_put_str(&row, in[0][HTA_INSTANCE_STATS_COLLECTIVE].s);
    hta_row_put_str(&row, in[0][HTA_INSTANCE_STATS_DTYPE].s);
    hta_row_put_i64(&row, bucket_of(in[0][HTA_INSTANCE_STATS_BYTES].i));
    hta_row_put_i64(&row, (int64_t)n);
    hta_row_put_i64(&row, total_bytes);
    hta_row_put_f64(&row, p50);
    hta_row_put_f64(&row, p90);
    hta_row_put_f64(&row, max);
    hta_row_put_f64(&row, k ? hta_quantile_sorted(scratch, k, 0.5) : NAN);
    hta_row_put_f64(&row, k ? scratch[0] : NAN);
    hta_row_put_f64(&row, hta_ns_to_us(skew) / (double)n);
    hta_row_put_f64(&row, hta_ns_to_us(wait));
    int64_t count;
    double busbw = scope_busbw_p50(in, n, SCOPE_WITHIN_NODE, scratch, &count);
    hta_row_put_i64(&row, count);
    hta_row_put_f64(&row, busbw);
    busbw = scope_busbw_p50(in, n, SCOPE_ACROSS_NODES, scratch, &count);
    hta_row_put_i64(&row, count);
    hta_row_put_f64(&row, busbw);
    return hta_row_done(&row);
}

static int summarize(hta_tableset *set, const hta_table *instances)
{
    size_t n = instances->n_rows;
    hta_table *t = hta_tableset_table(set, &hta_collective_summary_table);
    double *scratch = malloc((n ? n : 1) * sizeof *scratch);
    const hta_cell **in = malloc((n ? n : 1) * sizeof *in);
    int rc = t && scratch && in ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        in[i] = hta_table_row(instances, i);
    if (rc == 0)
        qsort(in, n, sizeof *in, compare_summary_key);
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        for (end = i + 1; end < n && compare_summary_key(&in[i], &in[end]) == 0;)
            end++;
        rc = put_summary_row(t, &in[i], end - i, scratch);
    }
    free(in);
    free(scratch);
    return rc;
}

int hta_instance_summary_owner(const hta_cell *stats_row, int n_processes)
{
    uint64_t h = HTA_TEXT_HASH_BASIS;
    h = hta_text_hash(h, stats_row[HTA_INSTANCE_STATS_GROUP_DESC].s);
    h = hta_text_hash(h, stats_row[HTA_INSTANCE_STATS_COLLECTIVE].s);
    h = hta_text_hash(h, stats_row[HTA_INSTANCE_STATS_DTYPE].s);
    h ^= (uint64_t)bucket_of(stats_row[HTA_INSTANCE_STATS_BYTES].i);
    h *= HTA_TEXT_HASH_PRIME;
    return (int)(h % (uint64_t)n_processes);
}

int hta_summarize_instances(hta_tableset *set)
{
    const hta_table *instances = hta_tableset_find(set, hta_instance_stats_table.name);
    if (instances && summarize(set, instances))
        return -1;
    hta_tableset_remove(set, hta_instance_stats_table.name);
    return 0;
}

/* "collective_summary" by key, whichever process summarised each row. */
static int compare_summary_rows(const void *a, const void *b, void *ctx)
{
    const hta_cell *x = a, *y = b;
    (void)ctx;
    int c = strcmp(x[HTA_COLLECTIVE_SUMMARY_GROUP_DESC].s, y[HTA_COLLECTIVE_SUMMARY_GROUP_DESC].s);
    if (!c)
        c = strcmp(x[HTA_COLLECTIVE_SUMMARY_COLLECTIVE].s, y[HTA_COLLECTIVE_SUMMARY_COLLECTIVE].s);
    if (!c)
        c = strcmp(x[HTA_COLLECTIVE_SUMMARY_DTYPE].s, y[HTA_COLLECTIVE_SUMMARY_DTYPE].s);
    const long k = HTA_COLLECTIVE_SUMMARY_BUCKET_MAX_BYTES;
    return c ? c : (x[k].i > y[k].i) - (x[k].i < y[k].i);
}

static void sort_summary(hta_table *t)
{
    if (t && t->n_rows > 1)
        qsort_r(t->cells, t->n_rows, t->n_columns * sizeof *t->cells, compare_summary_rows, NULL);
}

/* Adds each rank's wait per step to its row of "steps" for that
 * ProfilerStep, looked up in a sorted index of the rows; -1 when out of
 * memory. */
static int add_step_waits(hta_tableset *set, const hta_table *waits)
{
    hta_table *t = hta_tableset_find(set, hta_steps_table.name);
    const long wait = HTA_STEPS_WAIT_US;
    if (!waits || !t || t->n_rows == 0)
        return 0;
    hta_step_rows *index = hta_step_rows_index(t);
    if (!index)
        return -1;
    for (size_t i = 0; i < waits->n_rows; i++) {
        const hta_cell *w = hta_table_row(waits, i);
        hta_cell *row = hta_step_rows_find(index, w[HTA_STEP_WAITS_RANK].i,
                                           w[HTA_STEP_WAITS_STEP].i);
        if (row)
            row[wait].f += w[HTA_STEP_WAITS_WAIT_US].f;
    }
    hta_step_rows_free(index);
    return 0;
}

/* The slot of a figure's rank; -1 when it is not a rank analysed without
 * failure. */
static long slot_of(const hta_table *ranks, const rank_waits *w, int64_t rank)
{
    long slot = hta_table_find_sorted(ranks, rank);
    return slot >= 0 && !w[slot].failed ? slot : -1;
}

static int add_rank_waits(const hta_table *ranks, const hta_table *waits,
                          const hta_table *missing, rank_waits *w)
{
    for (size_t i = 0; waits && i < waits->n_rows; i++) {
        const hta_cell *row = hta_table_row(waits, i);
        long slot = slot_of(ranks, w, row[HTA_GROUP_WAITS_RANK].i);
        if (slot < 0)
            return -1;
        rank_waits *r = &w[slot];
        int64_t lag = row[HTA_GROUP_WAITS_MAX_END_LAG_NS].i;
        r->collectives += row[HTA_GROUP_WAITS_COLLECTIVES].i;
        r->matched += row[HTA_GROUP_WAITS_COLLECTIVES].i;
        r->arrived_last += row[HTA_GROUP_WAITS_ARRIVED_LAST].i;
        r->clock_violations += row[HTA_GROUP_WAITS_CLOCK_VIOLATIONS].i;
        r->wait_ns += row[HTA_GROUP_WAITS_WAIT_NS].i;
        r->max_end_lag_ns = lag > r->max_end_lag_ns ? lag : r->max_end_lag_ns;
        r->caused_wait_ns += row[HTA_GROUP_WAITS_CAUSED_WAIT_NS].i;
        r->metadata_mismatches += row[HTA_GROUP_WAITS_METADATA_MISMATCHES].i;
        r->expected_last += row[HTA_GROUP_WAITS_EXPECTED_LAST].f;
    }
    for (size_t i = 0; missing && i < missing->n_rows; i++) {
        const hta_cell *row = hta_table_row(missing, i);
        long slot = slot_of(ranks, w, row[HTA_GROUP_MISSING_RANK].i);
        if (slot < 0)
            return -1;
        w[slot].missing += row[HTA_GROUP_MISSING_MISSING].i;
    }
    return 0;
}

int hta_add_collective_groups(hta_tableset *set, rank_waits *w, size_t n_ranks, hta_error *err)
{
    (void)n_ranks;
    if (add_rank_waits(hta_tableset_find(set, hta_ranks_table.name),
                       hta_tableset_find(set, hta_group_waits_table.name),
                       hta_tableset_find(set, hta_group_missing_table.name), w))
        return hta_fail(err, "collective metadata of a rank missing from /ranks, or corrupt");
    hta_table *by_group = hta_tableset_find(set, hta_comm_by_group_table.name);
    if (add_step_waits(set, hta_tableset_find(set, hta_step_waits_table.name)) ||
        (by_group && hta_table_sort_by_first_column(by_group)))
        return hta_fail(err, "out of memory matching collectives by process group");
    sort_summary(hta_tableset_find(set, hta_collective_summary_table.name));
    return 0;
}

int hta_put_process_groups(const hta_comm_catalog *c, hta_tableset *out)
{
    hta_table *t = hta_tableset_table(out, &hta_process_groups_table);
    int failed = !t;
    for (size_t i = 0; !failed && i < c->n_variants; i++) {
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_str(&row, c->variants[i].name);
        hta_row_put_str(&row, c->variants[i].desc);
        hta_row_put_str(&row, c->variants[i].ranks);
        failed = hta_row_done(&row) != 0;
    }
    return failed ? -1 : 0;
}
