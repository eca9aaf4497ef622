/* all_to_all.c: who sends how much to whom in all-to-all(v), the traffic
 * of expert parallelism (mixture of experts).
 *
 * PyTorch records on an all_to_allv its "In split size" and "Out split
 * size", rows of the tensor's first dimension per peer (group order),
 * not elements: rank i sends peer j  in_split_i[j] x (In msg nelems /
 * sum of rank i's in splits) elements, nelems / n each when the list is
 * empty (all_to_all), and receives from j  out_split_i[j] x (Out msg
 * nelems / sum of its out splits).  Bytes = elements x the dtype's size.
 *
 * Each rank's row of the traffic matrix is its own: the process holding
 * the rank adds its sends up into "a2a_matrix" (group, src, dst: bytes
 * and instances) as it loads them, without any exchange, keeping one
 * cell per (rank, group, peer) however many instances there are.  What the instance's owner needs
 * travels in the op (comm_catalog.h): the bytes the rank sent, and a
 * fingerprint of both its rows, S_i - R_i, with S_i = sum over j of
 * send_i[j] x w(i, j) and R_i = sum over j of recv_i[j] x w(j, i) for a
 * pseudo-random weight w of the (sender, receiver) positions, in
 * arithmetic modulo 2^64.  Every rank's sends equal the receives their
 * peers expect exactly when the fingerprints add up to 0 (up to a
 * 2^-64 chance of missing a mismatch), so the owner checks the split
 * matrix's consistency from 8 bytes per rank.  Per instance ("a2a", one
 * row each, written in place in instance order like "collectives"): wall
 * time (latest end - earliest start), throughput = bytes / wall time,
 * size imbalance = max / mean bytes sent per rank, the busiest rank (the
 * most bytes sent) and whether the splits disagree. */
#define _GNU_SOURCE /* qsort_r, strndup */
#include "crossrank/exchange/all_to_all.h"

#include "analysis/metrics.h"
#include "model/comm_meta.h"
#include "model/trace.h"
#include "util/grow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const hta_column INSTANCE_COLUMNS[HTA_A2A_N_COLUMNS] = {
    [HTA_A2A_GROUP] = {"group", HTA_COL_STR},
    [HTA_A2A_SEQ] = {"seq", HTA_COL_I64},
    [HTA_A2A_COLLECTIVE] = {"collective", HTA_COL_STR},
    [HTA_A2A_N_RANKS] = {"n_ranks", HTA_COL_I64},
    [HTA_A2A_BYTES] = {"bytes", HTA_COL_I64},
    [HTA_A2A_WALL_US] = {"wall_us", HTA_COL_F64},
    [HTA_A2A_THROUGHPUT_GBPS] = {"throughput_gbps", HTA_COL_F64},
    [HTA_A2A_IMBALANCE] = {"imbalance", HTA_COL_F64},
    [HTA_A2A_BUSIEST_RANK] = {"busiest_rank", HTA_COL_I64},
    [HTA_A2A_BUSIEST_BYTES] = {"busiest_bytes", HTA_COL_I64},
    [HTA_A2A_SPLIT_MISMATCH] = {"split_mismatch", HTA_COL_I64},
};
const hta_table_spec hta_a2a_table = {
    "a2a", INSTANCE_COLUMNS, HTA_A2A_N_COLUMNS, HTA_TABLE_IN_PLACE};

static const hta_column MATRIX_COLUMNS[HTA_A2A_MATRIX_N_COLUMNS] = {
    [HTA_A2A_MATRIX_GROUP] = {"group", HTA_COL_STR},
    [HTA_A2A_MATRIX_SRC] = {"src", HTA_COL_I64},
    [HTA_A2A_MATRIX_DST] = {"dst", HTA_COL_I64},
    [HTA_A2A_MATRIX_BYTES] = {"bytes", HTA_COL_I64},
    [HTA_A2A_MATRIX_COUNT] = {"count", HTA_COL_I64},
};
const hta_table_spec hta_a2a_matrix_table = {
    "a2a_matrix", MATRIX_COLUMNS, HTA_A2A_MATRIX_N_COLUMNS, HTA_TABLE_GATHERED};

/* The instances whose splits disagree, for the root's summary (the
 * instance rows stay with their owners). */
static const hta_column MISMATCH_COLUMNS[HTA_A2A_MISMATCHES_N_COLUMNS] = {
    [HTA_A2A_MISMATCHES_GROUP] = {"group", HTA_COL_STR},
    [HTA_A2A_MISMATCHES_SEQ] = {"seq", HTA_COL_I64},
};
const hta_table_spec hta_a2a_mismatches_table = {
    "_a2a_mismatches", MISMATCH_COLUMNS, HTA_A2A_MISMATCHES_N_COLUMNS,
    HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};

static const hta_column RANK_COLUMNS[HTA_A2A_RANKS_N_COLUMNS] = {
    [HTA_A2A_RANKS_RANK] = {"rank", HTA_COL_I64},
    [HTA_A2A_RANKS_SENT_BYTES] = {"sent_bytes", HTA_COL_I64},
    [HTA_A2A_RANKS_RECEIVED_BYTES] = {"received_bytes", HTA_COL_I64},
};
const hta_table_spec hta_a2a_ranks_table = {
    "_a2a_ranks", RANK_COLUMNS, HTA_A2A_RANKS_N_COLUMNS, HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};
const hta_table_spec hta_a2a_metrics_table = {"_a2a_metrics", hta_rank_metrics_columns,
                                              HTA_RANK_METRICS_N_COLUMNS, HTA_TABLE_SCRATCH};

/* The weight of (sender position i, receiver position j). */
static uint64_t weight(int64_t i, int64_t j)
{
    uint64_t x = (uint64_t)i * 0x100000001b3ull ^ (uint64_t)j * 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

#define MAX_ELEMENTS (INT64_C(1) << 40)

/* Elements per peer from a split list and the message's element count;
 * 0, or -1 when they do not fit the group (n peers). */
static int elements_per_peer(const char *list, size_t len, int64_t nelems, long n, int64_t *out)
{
    char *text = strndup(list, len);
    int64_t *split = NULL;
    long k = text ? hta_parse_int_list(text, &split) : -1;
    free(text);
    __int128 sum = 0;
    for (long j = 0; j < k; j++)
        sum += split[j];
    /* A trace's numbers are not trusted: beyond 2^40 elements (terabytes
     * in one message) they are taken as unknown, so no sum overflows. */
    int rc = 0;
    if (nelems < 0 || nelems > MAX_ELEMENTS)
        rc = -1;
    else if (k == 0 && n > 0)
        for (long j = 0; j < n; j++)
            out[j] = nelems / n;
    else if (k == n && sum > 0)
        for (long j = 0; j < n; j++)
            out[j] = (int64_t)((__int128)split[j] * nelems / sum);
    else
        rc = -1;
    free(split);
    return rc;
}

int hta_a2a_add_row(hta_rank_ops *r, uint32_t group, int64_t rank, const int64_t *members,
                    long n_members, const int64_t *sent, int64_t count)
{
    if (count == 0)
        return 0;
    if (hta_grow_array((void **)&r->cells, &r->cap_cells, r->n_cells + (size_t)n_members,
                       sizeof *r->cells))
        return -1;
    for (long j = 0; j < n_members; j++)
        r->cells[r->n_cells++] = (hta_a2a_cell){group, rank, members[j], sent[j], count};
    return 0;
}

int hta_a2a_load_op(hta_rank_ops *r, size_t at, const hta_kind_info *k, const char *splits,
                    const int64_t *members, long n_members, int64_t *sent_to, int64_t *count)
{
    hta_group_op *op = &r->ops[at];
    op->a2a_bytes = -1;
    r->a2a_received[at] = -1;
    long self = -1;
    for (long j = 0; j < n_members; j++)
        if (members[j] == op->rank)
            self = j;
    const char *tab = strchr(splits, '\t'), *end = tab ? strchr(tab, '\n') : NULL;
    int size = hta_dtype_size(k->dtype);
    if (self < 0 || !end || size <= 0)
        return 0;
    int64_t *send = malloc(2 * (size_t)n_members * sizeof *send), *recv = send + n_members;
    if (!send)
        return -1;
    if (elements_per_peer(splits, (size_t)(tab - splits), k->in, n_members, send) == 0 &&
        elements_per_peer(tab + 1, (size_t)(end - tab - 1), k->out, n_members, recv) == 0) {
        uint64_t check = 0;
        int64_t sent = 0, received = 0;
        for (long j = 0; j < n_members; j++) {
            check += (uint64_t)send[j] * weight(self, j) - (uint64_t)recv[j] * weight(j, self);
            sent += send[j] * size;
            received += recv[j] * size;
            sent_to[j] += send[j] * size;
        }
        op->a2a_bytes = sent;
        op->a2a_check = check;
        r->a2a_received[at] = received;
        (*count)++;
    }
    free(send);
    return 0;
}

/* ---- the owner ----------------------------------------------------------- */

static int note_mismatch(hta_tableset *out, const char *group, int64_t seq)
{
    hta_table *t = hta_tableset_table(out, &hta_a2a_mismatches_table);
    if (!t)
        return -1;
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_str(&row, group);
    hta_row_put_i64(&row, seq);
    return hta_row_done(&row);
}

int hta_a2a_put_instance(hta_tableset *out, const hta_comm_catalog *c, const hta_group_op *ops,
                         const size_t *o, size_t n)
{
    hta_table *t = hta_tableset_table(out, &hta_a2a_table);
    if (!t)
        return -1;
    const hta_group_op *first = &ops[o[0]];
    int64_t earliest = INT64_MAX, latest_end = INT64_MIN, total = 0, busiest = -1, most = -1;
    uint64_t check = 0;
    int known = 1;
    for (size_t j = 0; j < n; j++) {
        const hta_group_op *op = &ops[o[j]];
        earliest = op->start < earliest ? op->start : earliest;
        latest_end = op->end > latest_end ? op->end : latest_end;
        known &= op->a2a_bytes >= 0;
        if (op->a2a_bytes < 0)
            continue;
        total += op->a2a_bytes;
        check += op->a2a_check;
        if (op->a2a_bytes > most)
            most = op->a2a_bytes, busiest = op->rank;
    }
    const hta_group_info *g = &c->groups[first->group];
    /* Consistency needs every member's rows. */
    int checkable = known && (long)n == g->n_members;
    int64_t wall = latest_end - earliest;
    double mean = known ? (double)total / (double)n : NAN;
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_str(&row, g->name);
    hta_row_put_i64(&row, first->key);
    hta_row_put_str(&row, c->kinds[first->kind].collective);
    hta_row_put_i64(&row, (int64_t)n);
    hta_row_put_i64(&row, known ? total : -1);
    hta_row_put_f64(&row, hta_ns_to_us(wall));
    hta_row_put_f64(&row, known && wall > 0 ? (double)total / (double)wall : NAN);
    hta_row_put_f64(&row, mean > 0 ? (double)most / mean : NAN);
    hta_row_put_i64(&row, known ? busiest : -1);
    hta_row_put_i64(&row, known ? most : -1);
    hta_row_put_i64(&row, checkable ? check != 0 : -1);
    if (hta_row_done(&row))
        return -1;
    return checkable && check != 0 ? note_mismatch(out, g->name, first->key) : 0;
}

/* ---- a rank's figures ------------------------------------------------------ */

static int compare_cell(const void *a, const void *b)
{
    const hta_a2a_cell *x = a, *y = b;
    if (x->src != y->src)
        return (x->src > y->src) - (x->src < y->src);
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return (x->dst > y->dst) - (x->dst < y->dst);
}

/* The ranks' rows of the matrix, a (group, src, dst) each: a rank's ops
 * of a group are one row of "_comm_ops", so its cells are already
 * summed. */
static int put_matrix(const hta_comm_catalog *c, const hta_rank_ops *r, hta_tableset *out)
{
    if (r->n_cells == 0)
        return 0;
    hta_table *t = hta_tableset_table(out, &hta_a2a_matrix_table);
    hta_a2a_cell *cells = malloc(r->n_cells * sizeof *cells);
    int rc = t && cells ? 0 : -1;
    if (rc == 0) {
        memcpy(cells, r->cells, r->n_cells * sizeof *cells);
        qsort(cells, r->n_cells, sizeof *cells, compare_cell);
    }
    for (size_t i = 0; rc == 0 && i < r->n_cells; i++) {
        const hta_a2a_cell *x = &cells[i];
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_str(&row, c->groups[x->group].name);
        hta_row_put_i64(&row, x->src);
        hta_row_put_i64(&row, x->dst);
        hta_row_put_i64(&row, x->bytes);
        hta_row_put_i64(&row, x->count);
        rc = hta_row_done(&row);
    }
    free(cells);
    return rc;
}

/* Bytes sent and received per rank over its all-to-alls, rank order. */
static int put_ranks(const hta_rank_ops *r, hta_tableset *out)
{
    typedef struct totals {
        int64_t rank, sent, received;
    } totals;
    totals *t = malloc((r->n ? r->n : 1) * sizeof *t);
    size_t n = 0;
    if (!t)
        return -1;
    for (size_t i = 0; i < r->n; i++) {
        if (r->ops[i].a2a_bytes < 0)
            continue;
        size_t j = 0;
        while (j < n && t[j].rank != r->ops[i].rank)
            j++;
        if (j == n)
            t[n++] = (totals){r->ops[i].rank, 0, 0};
        t[j].sent += r->ops[i].a2a_bytes;
        t[j].received += r->a2a_received[i];
    }
    hta_table *table = n ? hta_tableset_table(out, &hta_a2a_ranks_table) : NULL;
    int rc = n && !table ? -1 : 0;
    for (size_t j = 0; rc == 0 && j < n; j++) {
        hta_row_builder row = hta_table_add_row(table);
        hta_row_put_i64(&row, t[j].rank);
        hta_row_put_i64(&row, t[j].sent);
        hta_row_put_i64(&row, t[j].received);
        rc = hta_row_done(&row);
    }
    free(t);
    return rc;
}

int hta_rank_a2a_figures(const hta_comm_catalog *c, const hta_rank_ops *r, hta_tableset *out)
{
    return put_matrix(c, r, out) || put_ranks(r, out) ? -1 : 0;
}

/* ---- the root -------------------------------------------------------------- */

static int compare_matrix_rows(const void *a, const void *b, void *ctx)
{
    const hta_cell *x = a, *y = b;
    (void)ctx;
    int c = strcmp(x[0].s, y[0].s);
    if (!c)
        c = (x[1].i > y[1].i) - (x[1].i < y[1].i);
    return c ? c : (x[2].i > y[2].i) - (x[2].i < y[2].i);
}

int hta_a2a_results(hta_tableset *set, hta_error *err)
{
    hta_table *m = hta_tableset_find(set, hta_a2a_matrix_table.name);
    if (m && m->n_rows > 1)
        qsort_r(m->cells, m->n_rows, m->n_columns * sizeof *m->cells, compare_matrix_rows, NULL);
    hta_table *ranks = hta_tableset_find(set, hta_a2a_ranks_table.name);
    if (!ranks)
        return 0;
    hta_table *metrics = hta_tableset_table(set, &hta_a2a_metrics_table);
    int rc = metrics ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < ranks->n_rows; i++) {
        const hta_cell *r = hta_table_row(ranks, i);
        for (int k = 0; rc == 0 && k < 2; k++)
            rc = hta_put_metric(metrics, r[0].i,
                                k ? HTA_METRIC_A2A_BYTES_RECEIVED : HTA_METRIC_A2A_BYTES_SENT, NULL,
                                (double)r[1 + k].i);
    }
    if (rc)
        return hta_fail(err, "out of memory summing the all-to-all traffic");
    return 0;
}
