/* collective_exchange.c: the matching by process group, spread over the
 * processes the way Scalasca's parallel replay spreads its wait states,
 * so that no process holds every rank's kernels.
 *
 * 1. Every process sends the groups and kinds its ranks ran to every
 *    other (one MPI_Allgatherv of a few bytes per group and kind), and all
 *    build the same numbered catalog.
 * 2. An instance is (group, by Seq or ordinal, key).  One MPI_Allreduce
 *    of each group's kernel count and key range lets every process place
 *    each instance on a line of the job's kernels in instance order;
 *    process p owns the p-th of P equal stretches of that line, so every
 *    process owns about its share of kernels and the owners' instances,
 *    concatenated in process order, are in instance order: written in
 *    place in process order, "collectives" comes out sorted.
 * 3. One MPI_Alltoallv sends each kernel to its instance's owner, which
 *    matches its instances; a second sends each kernel's result back to
 *    the process holding the rank, which adds up the rank's figures in
 *    instance order (the same sums, in the same order, whatever the
 *    number of processes).
 * 4. A third sends each instance's summary figures to the process that
 *    summarises its kind, so that no process holds every instance.
 * 5. The caller writes the instance rows in place and gathers the
 *    per-rank figures and summary rows to the root (crossrank/crossrank.c,
 *    through crossrank/exchange/processes.h as the other tables). */
#include "crossrank/collective_exchange.h"

#include "analysis/comm_ops.h"
#include "crossrank/exchange/clock_offsets.h"
#include "crossrank/exchange/collective_groups.h"
#include "crossrank/job_path/delay_costs.h"
#include "crossrank/job_path/global_path.h"
#include "crossrank/job_path/replay.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Step 1: every process's catalog part to every process. */
static int share_catalog(const hta_processes *pr, const hta_table *comm_ops, hta_comm_catalog *c)
{
    int n_processes = pr->n;
    hta_tableset part = {0}, parts = {0};
    hta_buf packed = {0};
    int failed = hta_comm_catalog_part(comm_ops, &part) || hta_tableset_pack(&part, &packed) ||
                 packed.len > INT_MAX;
    hta_tableset_free(&part);
    int len = failed ? 0 : (int)packed.len;
    int *lens = calloc((size_t)n_processes, sizeof *lens);
    int *offsets = calloc((size_t)n_processes, sizeof *offsets);
    failed |= !lens || !offsets;
    failed = hta_processes_any(pr, failed);
    if (!failed)
        hta_processes_allgather_int(pr, len, lens);
    failed = failed || hta_processes_displacements(lens, offsets, n_processes) != 0;
    size_t total = failed ? 0 : (size_t)offsets[n_processes - 1] + (size_t)lens[n_processes - 1];
    char *data = failed ? NULL : malloc(total > 0 ? total : 1);
    failed = hta_processes_any(pr, failed || !data);
    if (!failed)
        hta_processes_allgatherv(pr, packed.data, len, data, lens, offsets);
    hta_error ignored = {{0}};
    for (int p = 0; !failed && p < n_processes; p++)
        failed = hta_tableset_merge(&parts, data + offsets[p], (size_t)lens[p], &ignored) != 0;
    failed = failed || hta_comm_catalog_build(c, &parts) != 0;
    hta_tableset_free(&parts);
    free(data);
    free(offsets);
    free(lens);
    hta_buf_free(&packed);
    return hta_processes_any(pr, failed) ? -1 : 0;
}

/* MPI reduction: each group's earlier first op. */
static void merge_firsts(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const hta_group_first *a = in;
    hta_group_first *b = inout;
    for (int i = 0; i < *len; i++)
        hta_group_first_merge(&a[i], &b[i]);
}

/* Which members miss a group's instances: those its first op's rank
 * lists, whichever process holds that rank.  -1 everywhere when one
 * process lacks memory. */
static int share_members(const hta_processes *pr, hta_comm_catalog *c, const hta_rank_ops *r)
{
    size_t n = c->n_groups;
    hta_group_first *firsts = malloc((n ? n : 1) * sizeof *firsts);
    if (hta_processes_any(pr, !firsts)) {
        free(firsts);
        return -1;
    }
    hta_group_firsts_init(firsts, n);
    hta_group_firsts_lower(firsts, r->ops, r->n);
    hta_processes_reduce(pr, firsts, n, sizeof *firsts, merge_firsts);
    int failed = hta_comm_catalog_set_members(c, firsts) != 0;
    free(firsts);
    return hta_processes_any(pr, failed) ? -1 : 0;
}

/* Step 2: where each (group, by_seq) segment's instances lie on the line
 * of the job's kernels: by ordinal, by Seq, then point-to-point pairs. */
#define SEGMENTS_PER_GROUP (HTA_BY_PAIR + 1)

typedef struct placement {
    int64_t *count, *lo, *hi;  /* per segment SEGMENTS_PER_GROUP x group + by_seq */
    long double *before;       /* kernels of earlier segments */
    long double total;
    const hta_processes *pr;
} placement;

static void placement_free(placement *p)
{
    free(p->count);
    free(p->lo);
    free(p->before);
    *p = (placement){0};
}

/* Called on every process with the same catalog: -1 everywhere when one
 * lacks memory. */
static int place_segments(const hta_processes *pr, const hta_rank_ops *r, size_t n_groups,
                          placement *p)
{
    size_t n = SEGMENTS_PER_GROUP * n_groups;
    *p = (placement){.pr = pr};
    p->count = calloc(n ? n : 1, sizeof *p->count);
    p->lo = malloc(2 * (n ? n : 1) * sizeof *p->lo); /* lo, then -hi: one MPI_MIN */
    p->before = malloc((n ? n : 1) * sizeof *p->before);
    int failed = hta_processes_any(pr, !p->count || !p->lo || !p->before);
    if (failed) {
        placement_free(p);
        return -1;
    }
    p->hi = p->lo + n;
    for (size_t s = 0; s < 2 * n; s++)
        p->lo[s] = INT64_MAX;
    for (size_t i = 0; i < r->n; i++) {
        const hta_group_op *o = &r->ops[i];
        size_t s = SEGMENTS_PER_GROUP * (size_t)o->group + (size_t)o->by_seq;
        p->count[s]++;
        p->lo[s] = o->key < p->lo[s] ? o->key : p->lo[s];
        p->hi[s] = -o->key < p->hi[s] ? -o->key : p->hi[s]; /* keys are >= 0 */
    }
    hta_processes_sum(pr, p->count, n);
    hta_processes_min(pr, p->lo, 2 * n);
    for (size_t s = 0; s < n; s++) {
        p->hi[s] = -p->hi[s];
        p->before[s] = p->total;
        p->total += (long double)p->count[s];
    }
    return 0;
}

/* The process owning o's instance: non-decreasing in instance order. */
static int owner_of(const placement *p, const hta_group_op *o)
{
    size_t s = SEGMENTS_PER_GROUP * (size_t)o->group + (size_t)o->by_seq;
    long double span = (long double)p->hi[s] - (long double)p->lo[s] + 1;
    long double at = p->before[s] + (long double)p->count[s] *
                                        ((long double)o->key - (long double)p->lo[s]) / span;
    long owner = (long)(at * p->pr->n / p->total); /* at >= 0: truncation floors */
    return owner < 0 ? 0 : owner >= p->pr->n ? p->pr->n - 1 : (int)owner;
}

/* Step 3: the buffers of both exchanges. */
typedef struct exchange {
    const hta_processes *pr;
    int *send_counts, *send_displs, *recv_counts, *recv_displs;
    size_t *slot;              /* per local op: its place in the send buffer */
    hta_group_op *sent, *received;
    hta_op_result *results, *returned;
    size_t n_received;
} exchange;

static void exchange_free(exchange *x)
{
    free(x->send_counts);
    free(x->send_displs);
    free(x->recv_counts);
    free(x->recv_displs);
    free(x->slot);
    free(x->sent);
    free(x->received);
    free(x->results);
    free(x->returned);
    *x = (exchange){0};
}

/* Sorts the local ops by owner into the send buffer (a counting sort:
 * each owner's ops keep their local order). */
static int pack_by_owner(const hta_rank_ops *r, const placement *pl, exchange *x)
{
    int n = x->pr->n;
    int *owner = malloc((r->n ? r->n : 1) * sizeof *owner);
    x->slot = malloc((r->n ? r->n : 1) * sizeof *x->slot);
    x->sent = malloc((r->n ? r->n : 1) * sizeof *x->sent);
    if (!owner || !x->slot || !x->sent) {
        free(owner);
        return -1;
    }
    for (size_t i = 0; i < r->n; i++) {
        owner[i] = owner_of(pl, &r->ops[i]);
        x->send_counts[owner[i]]++;
    }
    int rc = hta_processes_displacements(x->send_counts, x->send_displs, n);
    int *next = calloc((size_t)n, sizeof *next);
    for (size_t i = 0; rc == 0 && next && i < r->n; i++) {
        x->slot[i] = (size_t)x->send_displs[owner[i]] + (size_t)next[owner[i]]++;
        x->sent[x->slot[i]] = r->ops[i];
    }
    rc = rc || !next;
    free(next);
    free(owner);
    return rc;
}

/* Sends every op to its owner, matches the owner's instances into out and
 * returns every result to the rank's process (x->returned, by slot). */
static int exchange_and_match(const hta_comm_catalog *c, const hta_rank_ops *r,
                              const placement *pl, const int64_t *valid,
                              const int64_t *valid_node, size_t n_valid,
                              const hta_clock_alignment *clocks, exchange *x, hta_tableset *out)
{
    const hta_processes *pr = x->pr;
    int n = pr->n;
    x->send_counts = calloc((size_t)n, sizeof(int));
    x->send_displs = calloc((size_t)n, sizeof(int));
    x->recv_counts = calloc((size_t)n, sizeof(int));
    x->recv_displs = calloc((size_t)n, sizeof(int));
    int failed = !x->send_counts || !x->send_displs || !x->recv_counts || !x->recv_displs;
    failed = hta_processes_any(pr, failed || pack_by_owner(r, pl, x));
    if (failed)
        return -1;
    hta_processes_alltoall_int(pr, x->send_counts, x->recv_counts);
    failed = hta_processes_displacements(x->recv_counts, x->recv_displs, n) != 0;
    for (int p = 0; p < n; p++)
        x->n_received += (size_t)x->recv_counts[p];
    x->received = malloc((x->n_received ? x->n_received : 1) * sizeof *x->received);
    x->results = calloc(x->n_received ? x->n_received : 1, sizeof *x->results);
    if (hta_processes_any(pr, failed || !x->received || !x->results))
        return -1;
    hta_processes_alltoallv(pr, x->sent, x->send_counts, x->send_displs, x->received,
                            x->recv_counts, x->recv_displs, sizeof *x->sent);
    free(x->sent);
    x->sent = NULL;
    if (hta_align_clocks(pr, c, x->received, x->n_received, valid, valid_node, n_valid, clocks,
                         out))
        return -1;
    failed = hta_match_group_ops(c, x->received, x->n_received, valid, valid_node, n_valid,
                                 x->results, out);
    free(x->received);
    x->received = NULL;
    x->returned = malloc((r->n ? r->n : 1) * sizeof *x->returned);
    failed = hta_processes_any(pr, failed || !x->returned);
    if (!failed)
        hta_processes_alltoallv(pr, x->results, x->recv_counts, x->recv_displs, x->returned,
                                x->send_counts, x->send_displs, sizeof *x->results);
    free(x->results);
    x->results = NULL;
    return failed ? -1 : 0;
}

/* Step 4: each instance's summary figures to the process summarising
 * its (description, collective, dtype, size bucket), which turns them
 * into "collective_summary" rows; -1 everywhere when one process lacks
 * memory. */
static int pack_by_summary_owner(const hta_table *stats, int n_processes, hta_buf *packed,
                                 int *counts)
{
    hta_tableset *parts = calloc((size_t)n_processes, sizeof *parts);
    int failed = !parts;
    for (size_t i = 0; !failed && stats && i < stats->n_rows; i++) {
        int p = hta_instance_summary_owner(hta_table_row(stats, i), n_processes);
        hta_table *t = hta_tableset_table(&parts[p], &hta_instance_stats_table);
        failed = !t || hta_table_copy_row(t, stats, i) != 0;
    }
    for (int p = 0; p < n_processes; p++) {
        size_t before = packed->len;
        failed = failed || hta_tableset_pack(&parts[p], packed) != 0 ||
                 packed->len - before > INT_MAX || packed->len > INT_MAX;
        counts[p] = failed ? 0 : (int)(packed->len - before);
        if (parts)
            hta_tableset_free(&parts[p]);
    }
    free(parts);
    return failed ? -1 : 0;
}

static int summarize_by_kind(const hta_processes *pr, hta_tableset *out)
{
    int n_processes = pr->n;
    size_t np = (size_t)n_processes;
    int *counts = calloc(4 * np, sizeof *counts);
    hta_buf packed = {0};
    const hta_table *stats = hta_tableset_find(out, hta_instance_stats_table.name);
    int failed = !counts || pack_by_summary_owner(stats, n_processes, &packed, counts) != 0;
    hta_tableset_remove(out, hta_instance_stats_table.name);
    failed = hta_processes_any(pr, failed);
    int *displs = failed ? NULL : counts + np, *recv_counts = failed ? NULL : counts + 2 * np,
        *recv_displs = failed ? NULL : counts + 3 * np;
    if (!failed)
        hta_processes_alltoall_int(pr, counts, recv_counts);
    long long sent = 0, received = 0;
    for (size_t p = 0; !failed && p < np; p++) {
        displs[p] = (int)sent;
        recv_displs[p] = (int)received;
        sent += counts[p];
        received += recv_counts[p];
    }
    char *data = failed ? NULL : malloc(received > 0 && received <= INT_MAX ? (size_t)received : 1);
    failed = hta_processes_any(pr, failed || received > INT_MAX || !data);
    if (!failed)
        hta_processes_alltoallv(pr, packed.data, counts, displs, data, recv_counts, recv_displs,
                                1);
    hta_error ignored = {{0}};
    for (size_t p = 0; !failed && p < np; p++)
        failed = hta_tableset_merge(out, data + recv_displs[p], (size_t)recv_counts[p],
                                    &ignored) != 0;
    failed = failed || hta_summarize_instances(out) != 0;
    free(data);
    free(counts);
    hta_buf_free(&packed);
    return hta_processes_any(pr, failed) ? -1 : 0;
}

int hta_exchange_collective_groups(const hta_processes *pr, const hta_table *comm_ops,
                                   const hta_tableset *path, const int64_t *valid,
                                   const int64_t *valid_node, size_t n_valid,
                                   const hta_clock_alignment *clocks,
                                   int keep_kernel_waits, hta_replay **replay, hta_tableset *out,
                                   hta_error *err)
{
    hta_comm_catalog c = {0};
    hta_rank_ops r = {0};
    placement pl = {0};
    exchange x = {.pr = pr};
    if (share_catalog(pr, comm_ops, &c)) {
        hta_comm_catalog_free(&c);
        return hta_fail(err, "out of memory sharing the process groups of the collectives");
    }
    if (hta_processes_any(pr, hta_rank_ops_load(comm_ops, &c, &r, err) != 0)) {
        hta_rank_ops_free(&r);
        hta_comm_catalog_free(&c);
        return err->text[0] ? -1 : hta_fail(err, "collective metadata of a rank corrupt");
    }
    int64_t total = (int64_t)r.n;
    hta_processes_sum(pr, &total, 1);
    int rc = hta_processes_any(pr, pr->me == HTA_ROOT && hta_put_process_groups(&c, out) != 0);
    if (rc)
        hta_fail(err, "out of memory listing the process groups");
    hta_op_result *mine = NULL;
    if (!rc && total > 0) {
        rc = share_members(pr, &c, &r) || place_segments(pr, &r, c.n_groups, &pl) ||
             exchange_and_match(&c, &r, &pl, valid, valid_node, n_valid, clocks, &x, out);
        mine = rc ? NULL : malloc((r.n ? r.n : 1) * sizeof *mine);
        for (size_t i = 0; mine && i < r.n; i++)
            mine[i] = x.returned[x.slot[i]];
        exchange_free(&x);
        if (!rc)
            rc = hta_processes_any(pr, !mine || hta_rank_group_figures(&c, &r, mine, out) != 0 ||
                            hta_rank_delay_parts(&r, mine, out) != 0 ||
                            (keep_kernel_waits && hta_put_kernel_waits(&c, &r, mine, out)));
        if (!rc)
            rc = summarize_by_kind(pr, out);
        if (rc)
            hta_fail(err, "out of memory matching collectives by process group");
    } else if (!rc && hta_align_clocks(pr, &c, NULL, 0, valid, valid_node, n_valid, clocks, out))
        rc = hta_fail(err, "out of memory aligning the hosts' clocks");
    if (!rc && hta_global_path_walk(pr, path, &r, mine, out))
        rc = hta_fail(err, "out of memory walking the job's critical path");
    if (!rc && hta_replay_build(pr, path, &r, mine, replay, err))
        rc = -1;
    free(mine);
    exchange_free(&x);
    placement_free(&pl);
    hta_rank_ops_free(&r);
    hta_comm_catalog_free(&c);
    return rc ? -1 : 0;
}

int hta_match_collectives(const hta_processes *pr, hta_crossrank_tables *t,
                          const hta_crossrank_settings *opt, hta_error *err)
{
    hta_tableset matched = {0};
    const hta_table *comm_ops = hta_tableset_find(t->exchanged, hta_comm_ops_table.name);
    hta_clock_alignment clocks = {opt->align_clocks, pr->me == HTA_ROOT ? t->all : NULL};
    int failed = hta_exchange_collective_groups(pr, comm_ops, t->exchanged, t->valid, t->valid_node,
                                                t->n_valid, &clocks, t->kept != NULL, &t->replay,
                                                &matched, err) != 0;
    hta_tableset_free(t->exchanged);
    int not_taken = !failed && (hta_tableset_take(&matched, HTA_TABLE_IN_PLACE, t->in_place) ||
                                (t->kept && hta_tableset_take_others(&matched, HTA_TABLE_GATHERED,
                                                                     t->kept)));
    hta_tableset_keep(&matched, HTA_TABLE_GATHERED);
    if (!failed && hta_processes_gather_tables(pr, &matched, t->all, err))
        failed = 1;
    if (not_taken && !failed)
        hta_fail(err, "out of memory while matching the collectives");
    hta_tableset_free(&matched);
    return hta_processes_any(pr, failed || not_taken) ? -1 : 0;
}

