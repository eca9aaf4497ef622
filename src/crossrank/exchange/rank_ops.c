/* rank_ops.c: a rank's communication kernels as the compact ops that
 * travel to the owners of their instances (crossrank/collective_exchange.c).
 *
 * Each "_comm_ops" row packs one rank's kernels of one group; unpacking
 * numbers its group, variant and kinds by the catalog (comm_catalog.c),
 * gives sends and recvs the pair they belong to, loads all-to-alls'
 * splits (all_to_all.c) and links each op to the instance of its rank's
 * communication kernel before it. */
#define _GNU_SOURCE /* qsort_r */
#include "crossrank/exchange/rank_ops.h"

#include "analysis/comm_ops.h"
#include "crossrank/exchange/all_to_all.h"
#include "table/packed_ints.h"
#include "util/grow.h"

#include <stdlib.h>
#include <string.h>

/* How many ops of a row went to or came from each peer so far, to number
 * them: a row holds a rank's ops of one group, whose peers are few. */
typedef struct peer_count {
    int64_t peer, count;
    int send;
} peer_count;

typedef struct peer_counts {
    peer_count *items;
    size_t n, cap;
} peer_counts;

/* The ordinal of the next op with this direction and peer; -1 when out
 * of memory. */
static int64_t next_ordinal(peer_counts *pc, int send, int64_t peer)
{
    for (size_t i = 0; i < pc->n; i++)
        if (pc->items[i].send == send && pc->items[i].peer == peer)
            return pc->items[i].count++;
    if (hta_grow_array((void **)&pc->items, &pc->cap, pc->n + 1, sizeof *pc->items))
        return -1;
    pc->items[pc->n++] = (peer_count){peer, 1, send};
    return 0;
}

/* A send's or recv's instance: the pair it belongs to, or one of its own
 * when its peer is unknown or the numbers do not fit the key. */
static int pair_op(hta_group_op *op, const hta_kind_info *k, peer_counts *pc)
{
    int send = hta_kind_is_send(k);
    int64_t peer = k->peer, limit = HTA_PAIR_MASK;
    int known = peer >= 0 && peer < limit && op->rank >= 0 && op->rank < limit && peer != op->rank;
    int64_t ordinal = next_ordinal(pc, send, known ? peer : -1);
    if (ordinal < 0)
        return -1;
    int64_t self = op->rank >= 0 && op->rank < limit ? op->rank : 0;
    op->by_seq = HTA_BY_PAIR;
    if (!known || ordinal > limit)
        op->key = hta_pair_key(self, self, ordinal & HTA_PAIR_MASK);
    else
        op->key =
            send ? hta_pair_key(op->rank, peer, ordinal) : hta_pair_key(peer, op->rank, ordinal);
    return 0;
}

/* Unpacks a row's kernels (in start order) after r's first `at`. */
static int unpack_row(const hta_comm_catalog *c, const hta_cell *row, uint32_t group,
                      uint32_t variant, const uint32_t *kind_ids, size_t n_kinds,
                      hta_rank_ops *r, size_t at)
{
    peer_counts pc = {0};
    int64_t *members = NULL, *sent = NULL, a2a_count = 0;
    long n_members = -2;       /* parsed at the first all-to-all */
    const char *splits = row[HTA_COMM_OPS_SPLITS].s;
    int rc = 0;
    hta_series s[7];
    const char *packed[7] = {row[HTA_COMM_OPS_KIND_OF].s,    row[HTA_COMM_OPS_SEQS].s,
                             row[HTA_COMM_OPS_START_GAPS].s, row[HTA_COMM_OPS_DURATIONS].s,
                             row[HTA_COMM_OPS_OVERLAPS].s,   row[HTA_COMM_OPS_STEPS].s,
                             row[HTA_COMM_OPS_SAME_KERNEL].s};
    for (int k = 0; k < 7; k++)
        hta_series_open(&s[k], packed[k]);
    int64_t start = row[HTA_COMM_OPS_FIRST_START_NS].i;
    for (int64_t i = 0; i < row[HTA_COMM_OPS_KERNELS].i; i++) {
        uint64_t kind, gap, overlap, same_kernel;
        int64_t seq, duration, step;
        if (!hta_series_next(&s[0], &kind) || !hta_series_next_signed(&s[1], &seq) ||
            !hta_series_next(&s[2], &gap) || !hta_series_next_signed(&s[3], &duration) ||
            !hta_series_next(&s[4], &overlap) || !hta_series_next_signed(&s[5], &step) ||
            !hta_series_next(&s[6], &same_kernel) || kind >= n_kinds) {
            rc = -1;
            break;
        }
        start += (int64_t)gap;
        hta_group_op *op = &r->ops[at + (size_t)i];
        *op = (hta_group_op){.group = group,
                             .kind = kind_ids[kind],
                             .by_seq = seq >= 0,
                             .variant = variant,
                             .key = seq >= 0 ? seq : i,
                             .rank = row[HTA_COMM_OPS_RANK].i,
                             .start = start,
                             .end = start + duration,
                             .a2a_bytes = -1};
        const hta_kind_info *k = &c->kinds[op->kind];
        if ((hta_kind_is_send(k) || hta_kind_is_recv(k)) && pair_op(op, k, &pc)) {
            rc = -1;
            break;
        }
        r->overlap[at + (size_t)i] = (int64_t)overlap;
        r->step[at + (size_t)i] = step;
        r->same_kernel[at + (size_t)i] = same_kernel != 0;
        r->a2a_received[at + (size_t)i] = -1;
        if (hta_kind_is_all_to_all(k)) {
            if (n_members == -2) {
                n_members = hta_parse_int_list(c->variants[variant].ranks, &members);
                sent = n_members >= 0 ? calloc((size_t)n_members + 1, sizeof *sent) : NULL;
            }
            if (!sent || hta_a2a_load_op(r, at + (size_t)i, k, splits, members, n_members, sent,
                                         &a2a_count)) {
                rc = -1;
                break;
            }
        }
        const char *next = strchr(splits, '\n');
        splits = next ? next + 1 : splits + strlen(splits);
    }
    if (rc == 0 && sent)
        rc = hta_a2a_add_row(r, group, row[HTA_COMM_OPS_RANK].i, members, n_members, sent,
                             a2a_count);
    free(sent);
    free(members);
    free(pc.items);
    return rc;
}

int hta_rank_ops_load(const hta_table *t, const hta_comm_catalog *c, hta_rank_ops *r,
                      hta_error *err)
{
    *r = (hta_rank_ops){0};
    size_t n = 0;
    for (size_t i = 0; t && i < t->n_rows; i++)
        n += (size_t)hta_table_row(t, i)[HTA_COMM_OPS_KERNELS].i;
    r->ops = malloc((n ? n : 1) * sizeof *r->ops);
    r->overlap = malloc((n ? n : 1) * sizeof *r->overlap);
    r->step = malloc((n ? n : 1) * sizeof *r->step);
    r->a2a_received = malloc((n ? n : 1) * sizeof *r->a2a_received);
    r->same_kernel = malloc((n ? n : 1) * sizeof *r->same_kernel);
    if (!r->ops || !r->overlap || !r->step || !r->a2a_received || !r->same_kernel)
        return hta_fail(err, "out of memory matching collectives by process group");
    r->n = n;
    for (size_t i = 0, at = 0; t && i < t->n_rows; i++) {
        const hta_cell *row = hta_table_row(t, i);
        uint32_t group = hta_strtab_find(&c->names, row[HTA_COMM_OPS_GROUP].s,
                                         strlen(row[HTA_COMM_OPS_GROUP].s));
        long variant = hta_comm_catalog_variant(c, row[HTA_COMM_OPS_GROUP].s,
                                                row[HTA_COMM_OPS_GROUP_DESC].s,
                                                row[HTA_COMM_OPS_GROUP_RANKS].s);
        uint32_t *ids = NULL;
        size_t n_ids = 0;
        int rc = group == UINT32_MAX || variant < 0 ||
                 hta_comm_catalog_kind_ids(c, row[HTA_COMM_OPS_KINDS].s, &ids, &n_ids) ||
                 unpack_row(c, row, group, (uint32_t)variant, ids, n_ids, r, at);
        free(ids);
        if (rc)
            return hta_fail(err, "collective metadata of rank %lld corrupt",
                            (long long)row[HTA_COMM_OPS_RANK].i);
        at += (size_t)row[HTA_COMM_OPS_KERNELS].i;
    }
    return 0;
}

void hta_rank_ops_free(hta_rank_ops *r)
{
    free(r->ops);
    free(r->overlap);
    free(r->step);
    free(r->a2a_received);
    free(r->same_kernel);
    free(r->cells);
    *r = (hta_rank_ops){0};
}

