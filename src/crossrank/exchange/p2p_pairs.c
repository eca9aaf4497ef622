/* p2p_pairs.c: NCCL sends paired with their receives, Scalasca's Late
 * Sender and Late Receiver for point-to-point traffic.
 *
 * A send and the recv it pairs with are one instance of the matching by
 * process group (crossrank/exchange/comm_catalog.h: the k-th send from src to dst
 * with the k-th recv at dst from src, NCCL keeping order per peer pair),
 * so they meet on the process that owns the pair, as a collective's
 * kernels do, and no process holds every pair.  There, with t0 = the
 * later start: late sender = max(0, send start - recv start) (the
 * receiver waits, the sender caused it), late receiver = max(0, recv
 * start - send start), transfer = min(send end, recv end) - t0, and a
 * clock-condition violation when the recv ends before the send starts
 * (the clocks are skewed or the kernels mis-paired).  The owner writes the
 * pair's row of "p2p" (in place, in pair order) and returns each side its
 * result; an op without its other side (peer unknown or not analysed)
 * is unpaired and waits for nothing.
 *
 * The process holding a rank turns its ops' results into the rank's
 * figures: per (src, dst) from its sends, "p2p_summary" (so a pair's
 * rows are together without another exchange); per rank, "_p2p_ranks";
 * per (rank, step), "_p2p_steps" for /pipeline_steps. */
#include "crossrank/exchange/p2p_pairs.h"

#include "model/comm_meta.h"
#include "model/trace.h"
#include "numerics/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const hta_column PAIR_COLUMNS[HTA_P2P_N_COLUMNS] = {
    [HTA_P2P_GROUP] = {"group", HTA_COL_STR},
    [HTA_P2P_SRC] = {"src", HTA_COL_I64},
    [HTA_P2P_DST] = {"dst", HTA_COL_I64},
    [HTA_P2P_INDEX] = {"index", HTA_COL_I64},
    [HTA_P2P_DTYPE] = {"dtype", HTA_COL_STR},
    [HTA_P2P_BYTES] = {"bytes", HTA_COL_I64},
    [HTA_P2P_SEND_START_US] = {"send_start_us", HTA_COL_F64},
    [HTA_P2P_RECV_START_US] = {"recv_start_us", HTA_COL_F64},
    [HTA_P2P_LATE_SENDER_US] = {"late_sender_us", HTA_COL_F64},
    [HTA_P2P_LATE_RECEIVER_US] = {"late_receiver_us", HTA_COL_F64},
    [HTA_P2P_TRANSFER_US] = {"transfer_us", HTA_COL_F64},
    [HTA_P2P_GBPS] = {"gbps", HTA_COL_F64},
    [HTA_P2P_CLOCK_VIOLATION] = {"clock_violation", HTA_COL_I64},
};
const hta_table_spec hta_p2p_table = {
    "p2p", PAIR_COLUMNS, HTA_P2P_N_COLUMNS, HTA_TABLE_IN_PLACE | HTA_TABLE_DEFLATE_LARGE};

static const hta_column SUMMARY_COLUMNS[HTA_P2P_SUMMARY_N_COLUMNS] = {
    [HTA_P2P_SUMMARY_SRC] = {"src", HTA_COL_I64},
    [HTA_P2P_SUMMARY_DST] = {"dst", HTA_COL_I64},
    [HTA_P2P_SUMMARY_COUNT] = {"count", HTA_COL_I64},
    [HTA_P2P_SUMMARY_TOTAL_BYTES] = {"total_bytes", HTA_COL_I64},
    [HTA_P2P_SUMMARY_TRANSFER_P50_US] = {"transfer_p50_us", HTA_COL_F64},
    [HTA_P2P_SUMMARY_GBPS_P50] = {"gbps_p50", HTA_COL_F64},
    [HTA_P2P_SUMMARY_LATE_SENDER_US] = {"late_sender_us", HTA_COL_F64},
    [HTA_P2P_SUMMARY_LATE_RECEIVER_US] = {"late_receiver_us", HTA_COL_F64},
    [HTA_P2P_SUMMARY_CLOCK_VIOLATIONS] = {"clock_violations", HTA_COL_I64},
};
const hta_table_spec hta_p2p_summary_table = {
    "p2p_summary", SUMMARY_COLUMNS, HTA_P2P_SUMMARY_N_COLUMNS, HTA_TABLE_GATHERED};

static const hta_column RANK_COLUMNS[HTA_P2P_RANKS_N_COLUMNS] = {
    [HTA_P2P_RANKS_RANK] = {"rank", HTA_COL_I64},
    [HTA_P2P_RANKS_OPS] = {"ops", HTA_COL_I64},
    [HTA_P2P_RANKS_UNPAIRED] = {"unpaired", HTA_COL_I64},
    [HTA_P2P_RANKS_LATE_SENDER_WAIT_NS] = {"late_sender_wait_ns", HTA_COL_I64},
    [HTA_P2P_RANKS_LATE_RECEIVER_WAIT_NS] = {"late_receiver_wait_ns", HTA_COL_I64},
    [HTA_P2P_RANKS_CAUSED_LATE_SENDER_NS] = {"caused_late_sender_ns", HTA_COL_I64},
    [HTA_P2P_RANKS_CLOCK_VIOLATIONS] = {"clock_violations", HTA_COL_I64},
    [HTA_P2P_RANKS_ARRIVED_LAST] = {"arrived_last", HTA_COL_I64},
};
const hta_table_spec hta_p2p_ranks_table = {
    "_p2p_ranks", RANK_COLUMNS, HTA_P2P_RANKS_N_COLUMNS, HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};

static const hta_column STEP_COLUMNS[HTA_P2P_STEPS_N_COLUMNS] = {
    [HTA_P2P_STEPS_RANK] = {"rank", HTA_COL_I64},
    [HTA_P2P_STEPS_STEP] = {"step", HTA_COL_I64},
    [HTA_P2P_STEPS_WAIT_NS] = {"wait_ns", HTA_COL_I64},
    [HTA_P2P_STEPS_EXPOSED_WAIT_NS] = {"exposed_wait_ns", HTA_COL_I64},
    [HTA_P2P_STEPS_RECEIVES] = {"receives", HTA_COL_I64},
    [HTA_P2P_STEPS_STAGE] = {"stage", HTA_COL_I64},
    [HTA_P2P_STEPS_STAGES] = {"stages", HTA_COL_I64},
};
const hta_table_spec hta_p2p_steps_table = {
    "_p2p_steps", STEP_COLUMNS, HTA_P2P_STEPS_N_COLUMNS, HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};


/* The bytes a send carries: its element count x the dtype's size, -1
 * when unknown. */
static int64_t bytes_sent(const hta_kind_info *k)
{
    int size = hta_dtype_size(k->dtype);
    /* Beyond 2^40 elements (terabytes) a trace's count is not believed. */
    return size > 0 && k->in >= 0 && k->in <= (INT64_C(1) << 40) ? k->in * size : -1;
}

static void mark_unpaired(hta_op_result *r)
{
    *r = (hta_op_result){.n_ranks = 1, .p2p = 1, .last_rank = -1};
}

int hta_match_pair(const hta_comm_catalog *c, const hta_group_op *ops, const size_t *o, size_t n,
                   hta_op_result *results, hta_table *pairs)
{
    const hta_group_op *send = NULL, *recv = NULL;
    int64_t key = ops[o[0]].key, src = hta_pair_src(key), dst = hta_pair_dst(key);
    for (size_t j = 0; j < n && n == 2 && src != dst; j++) {
        const hta_group_op *op = &ops[o[j]];
        const hta_kind_info *k = &c->kinds[op->kind];
        if (hta_kind_is_send(k) && op->rank == src)
            send = op;
        else if (hta_kind_is_recv(k) && op->rank == dst)
            recv = op;
    }
    if (!send || !recv) {
        for (size_t j = 0; j < n; j++)
            mark_unpaired(&results[o[j]]);
        return 0;
    }
    int64_t t0 = send->start > recv->start ? send->start : recv->start;
    int64_t late_sender = send->start > recv->start ? send->start - recv->start : 0;
    int64_t late_receiver = recv->start > send->start ? recv->start - send->start : 0;
    int64_t transfer = (send->end < recv->end ? send->end : recv->end) - t0;
    uint8_t violation = recv->end < send->start;
    const hta_group_op *late = send->start == recv->start ? NULL
                               : send->start > recv->start ? send
                                                           : recv;
    for (size_t j = 0; j < n; j++) {
        int is_send = &ops[o[j]] == send;
        results[o[j]] = (hta_op_result){.wait_ns = is_send ? late_receiver : late_sender,
                                        .caused_ns = is_send ? late_sender : late_receiver,
                                        .transfer_ns = transfer, .n_ranks = 2,
                                        .clock_violation = violation, .p2p = 1,
                                        .last_rank = late ? late->rank : -1,
                                        .lateness_ns = &ops[o[j]] == late
                                                           ? late_sender + late_receiver
                                                           : 0};
    }
    const hta_kind_info *k = &c->kinds[send->kind];
    int64_t bytes = bytes_sent(k);
    hta_row_builder row = hta_table_add_row(pairs);
    hta_row_put_str(&row, c->groups[send->group].name);
    hta_row_put_i64(&row, src);
    hta_row_put_i64(&row, dst);
    hta_row_put_i64(&row, hta_pair_index(key));
    hta_row_put_str(&row, k->dtype);
    hta_row_put_i64(&row, bytes);
    hta_row_put_f64(&row, hta_ns_to_us(send->start));
    hta_row_put_f64(&row, hta_ns_to_us(recv->start));
    hta_row_put_f64(&row, hta_ns_to_us(late_sender));
    hta_row_put_f64(&row, hta_ns_to_us(late_receiver));
    hta_row_put_f64(&row, hta_ns_to_us(transfer));
    hta_row_put_f64(&row, bytes >= 0 && transfer > 0 ? (double)bytes / (double)transfer : NAN);
    hta_row_put_i64(&row, violation);
    return hta_row_done(&row);
}

/* ---- a rank's figures ---------------------------------------------------- */

/* A paired send of the rank, by destination. */
typedef struct sent {
    int64_t src, dst, bytes, transfer_ns, late_sender_ns, late_receiver_ns;
    uint8_t violation;
} sent;

static int compare_sent(const void *a, const void *b)
{
    const sent *x = a, *y = b;
    if (x->src != y->src)
        return (x->src > y->src) - (x->src < y->src);
    if (x->dst != y->dst)
        return (x->dst > y->dst) - (x->dst < y->dst);
    return (x->transfer_ns > y->transfer_ns) - (x->transfer_ns < y->transfer_ns);
}

/* One "p2p_summary" row for s[0..n), sorted by transfer. */
static int put_summary(hta_table *t, const sent *s, size_t n, double *scratch)
{
    int64_t bytes = 0, late_sender = 0, late_receiver = 0, violations = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bytes += s[i].bytes > 0 ? s[i].bytes : 0;
        late_sender += s[i].late_sender_ns;
        late_receiver += s[i].late_receiver_ns;
        violations += s[i].violation;
        if (s[i].bytes >= 0 && s[i].transfer_ns > 0)
            scratch[k++] = (double)s[i].bytes / (double)s[i].transfer_ns;
    }
    hta_sort_doubles(scratch, k);
    double gbps = k ? hta_quantile_sorted(scratch, k, 0.5) : NAN;
    for (size_t i = 0; i < n; i++)
        scratch[i] = hta_ns_to_us(s[i].transfer_ns);
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, s[0].src);
    hta_row_put_i64(&row, s[0].dst);
    hta_row_put_i64(&row, (int64_t)n);
    hta_row_put_i64(&row, bytes);
    hta_row_put_f64(&row, hta_quantile_sorted(scratch, n, 0.5));
    hta_row_put_f64(&row, gbps);
    hta_row_put_f64(&row, hta_ns_to_us(late_sender));
    hta_row_put_f64(&row, hta_ns_to_us(late_receiver));
    hta_row_put_i64(&row, violations);
    return hta_row_done(&row);
}

static int put_summaries(const hta_comm_catalog *c, const hta_rank_ops *r,
                         const hta_op_result *res, hta_tableset *out)
{
    size_t n = 0;
    sent *s = malloc((r->n ? r->n : 1) * sizeof *s);
    double *scratch = malloc((r->n ? r->n : 1) * sizeof *scratch);
    int rc = s && scratch ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < r->n; i++) {
        const hta_group_op *op = &r->ops[i];
        if (!res[i].p2p || res[i].n_ranks != 2 || !hta_kind_is_send(&c->kinds[op->kind]))
            continue;
        s[n++] = (sent){op->rank, hta_pair_dst(op->key), bytes_sent(&c->kinds[op->kind]),
                        res[i].transfer_ns, res[i].caused_ns, res[i].wait_ns,
                        res[i].clock_violation};
    }
    hta_table *t = rc == 0 && n ? hta_tableset_table(out, &hta_p2p_summary_table) : NULL;
    rc = rc || (n && !t) ? -1 : 0;
    if (rc == 0)
        qsort(s, n, sizeof *s, compare_sent);
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        for (end = i + 1; end < n && s[end].src == s[i].src && s[end].dst == s[i].dst;)
            end++;
        rc = put_summary(t, &s[i], end - i, scratch);
    }
    free(scratch);
    free(s);
    return rc;
}

/* A point-to-point op of the rank with its step, to add up per (rank,
 * step); receives are counted per source for the microbatches. */
typedef struct step_op {
    int64_t rank, step, peer, wait_ns, exposed_ns;
    uint32_t group;
    int receive;
} step_op;

/* The rank's stage: its position among the group's members, -1 when
 * it is not listed. */
static int64_t stage_of(const hta_group_info *g, int64_t rank)
{
    for (long i = 0; i < g->n_members; i++)
        if (g->members[i] == rank)
            return i;
    return -1;
}

static int compare_step_op(const void *a, const void *b)
{
    const step_op *x = a, *y = b;
    if (x->rank != y->rank)
        return (x->rank > y->rank) - (x->rank < y->rank);
    return (x->step > y->step) - (x->step < y->step);
}

/* Whether s[0..n) is in (rank, step) order already: a rank of one
 * pipeline group loads its ops in start order, so it usually is. */
static int in_step_order(const step_op *s, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (compare_step_op(&s[i - 1], &s[i]) > 0)
            return 0;
    return 1;
}

/* The most receives from one source among s[0..n): a stage has few
 * peers, counted in a short list (more than it holds are not counted:
 * a pipeline stage has two). */
#define MOST_PEERS 16

static int64_t most_receives(const step_op *s, size_t n)
{
    int64_t peer[MOST_PEERS], count[MOST_PEERS], most = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!s[i].receive)
            continue;
        size_t j = 0;
        while (j < k && peer[j] != s[i].peer)
            j++;
        if (j == k && k < MOST_PEERS) {
            peer[k] = s[i].peer;
            count[k++] = 0;
        }
        if (j < k && ++count[j] > most)
            most = count[j];
    }
    return most;
}

static int put_steps(const hta_comm_catalog *c, const hta_rank_ops *r, const hta_op_result *res,
                     hta_tableset *out)
{
    size_t n = 0;
    step_op *s = malloc((r->n ? r->n : 1) * sizeof *s);
    int rc = s ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < r->n; i++) {
        if (!res[i].p2p || r->step[i] < 0)
            continue;
        const hta_group_op *op = &r->ops[i];
        int receive = hta_kind_is_recv(&c->kinds[op->kind]);
        int64_t wait = res[i].wait_ns, covered = r->overlap[i];
        s[n++] = (step_op){op->rank, r->step[i],
                           receive ? hta_pair_src(op->key) : hta_pair_dst(op->key), wait,
                           wait > covered ? wait - covered : 0, op->group, receive};
    }
    hta_table *t = rc == 0 && n ? hta_tableset_table(out, &hta_p2p_steps_table) : NULL;
    rc = rc || (n && !t) ? -1 : 0;
    if (rc == 0 && !in_step_order(s, n))
        qsort(s, n, sizeof *s, compare_step_op);
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        int64_t wait = 0, exposed = 0;
        for (end = i; end < n && s[end].rank == s[i].rank && s[end].step == s[i].step; end++) {
            wait += s[end].wait_ns;
            exposed += s[end].exposed_ns;
        }
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, s[i].rank);
        hta_row_put_i64(&row, s[i].step);
        hta_row_put_i64(&row, wait);
        hta_row_put_i64(&row, exposed);
        hta_row_put_i64(&row, most_receives(&s[i], end - i));
        const hta_group_info *g = &c->groups[s[i].group];
        hta_row_put_i64(&row, stage_of(g, s[i].rank));
        hta_row_put_i64(&row, g->n_members);
        rc = hta_row_done(&row);
    }
    free(s);
    return rc;
}

/* Per rank: ops[idx[0..n)) of one rank. */
static int put_rank(hta_table *t, const hta_comm_catalog *c, const hta_rank_ops *r,
                    const hta_op_result *res, const size_t *idx, size_t n)
{
    int64_t unpaired = 0, late_sender = 0, late_receiver = 0, caused = 0, violations = 0;
    int64_t last = 0;
    for (size_t k = 0; k < n; k++) {
        const hta_op_result *x = &res[idx[k]];
        int send = hta_kind_is_send(&c->kinds[r->ops[idx[k]].kind]);
        unpaired += x->n_ranks != 2;
        late_sender += send ? 0 : x->wait_ns;
        late_receiver += send ? x->wait_ns : 0;
        caused += send ? x->caused_ns : 0;
        violations += x->clock_violation && !send;
        last += x->n_ranks == 2 && x->caused_ns > 0;
    }
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, r->ops[idx[0]].rank);
    hta_row_put_i64(&row, (int64_t)n);
    hta_row_put_i64(&row, unpaired);
    hta_row_put_i64(&row, late_sender);
    hta_row_put_i64(&row, late_receiver);
    hta_row_put_i64(&row, caused);
    hta_row_put_i64(&row, violations);
    hta_row_put_i64(&row, last);
    return hta_row_done(&row);
}

static int put_ranks(const hta_comm_catalog *c, const hta_rank_ops *r, const hta_op_result *res,
                     hta_tableset *out)
{
    size_t n = 0;
    size_t *idx = malloc((r->n ? r->n : 1) * sizeof *idx);
    int rc = idx ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < r->n; i++)
        if (res[i].p2p)
            idx[n++] = i;
    hta_table *t = rc == 0 && n ? hta_tableset_table(out, &hta_p2p_ranks_table) : NULL;
    rc = rc || (n && !t) ? -1 : 0;
    /* A rank's ops are loaded together (comm_catalog.c, its trace's rows
     * in a row), so each rank is one run. */
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        for (end = i + 1; end < n && r->ops[idx[end]].rank == r->ops[idx[i]].rank;)
            end++;
        rc = put_rank(t, c, r, res, &idx[i], end - i);
    }
    free(idx);
    return rc;
}

int hta_rank_p2p_figures(const hta_comm_catalog *c, const hta_rank_ops *r,
                         const hta_op_result *results, hta_tableset *out)
{
    return put_summaries(c, r, results, out) || put_steps(c, r, results, out) ||
                   put_ranks(c, r, results, out)
               ? -1
               : 0;
}
