/* collectives.c: the rank's side of the collective wait-state analysis
 * (crossrank/compare/collective_wait.c matches them across ranks on the root).
 *
 * Every COMMUNICATION kernel (NCCL, RCCL, HCCL) takes part: per stream,
 * its ordinal among the COMMUNICATION kernels of that stream in start
 * order, and its start and end in nanoseconds.  (stream, ordinal) is the
 * matching key: a communicator issues its collectives in the same order on
 * every rank and NCCL runs one communicator's kernels on one stream, so
 * the n-th kernel on the stream is the n-th collective of that
 * communicator.  Without process-group names, ranks must use the same
 * stream number for a communicator (they do in the traces PyTorch writes
 * for one process group).  This is the fallback for
 * kernels without collective metadata: those with it go to "_comm_ops"
 * (analysis/comm_ops.c) and are matched by process group.  Whether a
 * kernel without it ran a collective or a send/recv is told by the op
 * that launched it (analysis/comm_launchers.h), never by its name: NCCL
 * runs an all-to-all as a SendRecv kernel.  Sends and recvs are left out:
 * only the metadata names a send's peer, and pairing them by stream and
 * order would report waits between ranks that never talked; they are
 * counted as unpaired.
 *
 * The process keeps these until its last trace is analysed and then sends
 * them to the root, so they are packed: one row of the process-local table
 * "_collectives" per (rank, stream) with the kernel count, the first start,
 * and three series (table/packed_ints.h): each start's gap since the
 * previous start, each duration (signed: --round-like-hta makes
 * sub-microsecond kernels negative), and whether the kernel ends on every
 * rank at once (1: its name says NCCL ran an all-reduce, all-gather or
 * reduce-scatter), which makes it a clock reference
 * (crossrank/exchange/clock_offsets.c).  The ordinal is the position in
 * the series.  A few
 * bytes per kernel instead of a 40-byte row.  It is scratch (never in the
 * results file) and gathered to the root (its spec's flags). */
#include "analysis/collectives.h"

#include "analysis/comm_launchers.h"
#include "analysis/comm_ops.h"
#include "table/packed_ints.h"
#include "util/large_alloc.h"

#include <stdlib.h>
#include <string.h>

static const hta_column COLUMNS[HTA_COLLECTIVE_KERNELS_N_COLUMNS] = {
    [HTA_COLLECTIVE_KERNELS_RANK] = {"rank", HTA_COL_I64},
    [HTA_COLLECTIVE_KERNELS_STREAM] = {"stream", HTA_COL_I64},
    [HTA_COLLECTIVE_KERNELS_KERNELS] = {"kernels", HTA_COL_I64},
    [HTA_COLLECTIVE_KERNELS_FIRST_START_NS] = {"first_start_ns", HTA_COL_I64},
    [HTA_COLLECTIVE_KERNELS_START_GAPS] = {"start_gaps", HTA_COL_STR},
    [HTA_COLLECTIVE_KERNELS_DURATIONS] = {"durations", HTA_COL_STR},
    [HTA_COLLECTIVE_KERNELS_ENDS_TOGETHER] = {"ends_together", HTA_COL_STR},
};
const hta_table_spec hta_collective_kernels_table = {
    "_collectives", COLUMNS, HTA_COLLECTIVE_KERNELS_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};

static int compare_stream_then_start(const void *a, const void *b)
{
    const hta_event *x = *(const hta_event *const *)a, *y = *(const hta_event *const *)b;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    /* The view is sorted by start; its addresses keep that order. */
    return (x > y) - (x < y);
}

/* Scratch for one stream's series, room for every collective of the rank. */
typedef struct stream_scratch {
    uint64_t *gaps;            /* owned */
    int64_t *durations;        /* owned */
    uint64_t *ends_together;   /* owned */
    hta_buf gaps_packed, durations_packed, ends_together_packed;
} stream_scratch;

/* Whether NCCL/RCCL ran the kernel as a collective whose data reaches
 * every rank at once, as its name says (ncclDevKernel_AllReduce_...). */
static int ends_together(const hta_trace *t, const hta_event *e)
{
    const char *name = hta_event_name(t, e);
    return strstr(name, "AllReduce") || strstr(name, "AllGather") ||
           strstr(name, "ReduceScatter");
}

/* One row for the kernels comm[0..n) of one stream, in start order. */
static int put_stream(hta_table *t, const hta_rank_view *v, const hta_event *const *comm,
                      size_t n, stream_scratch *s)
{
    for (size_t k = 0; k < n; k++) {
        s->gaps[k] = k ? (uint64_t)(comm[k]->ts_ns - comm[k - 1]->ts_ns) : 0;
        s->durations[k] = hta_event_end(comm[k]) - comm[k]->ts_ns;
        s->ends_together[k] = (uint64_t)ends_together(v->trace, comm[k]);
    }
    /* n >= 1, so the strings are non-empty and NUL-terminated. */
    s->gaps_packed.len = s->durations_packed.len = s->ends_together_packed.len = 0;
    if (hta_pack_series(&s->gaps_packed, s->gaps, n) ||
        hta_pack_signed_series(&s->durations_packed, s->durations, n) ||
        hta_pack_series(&s->ends_together_packed, s->ends_together, n))
        return -1;
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, v->rank_key);
    hta_row_put_i64(&row, comm[0]->stream);
    hta_row_put_i64(&row, (int64_t)n);
    hta_row_put_i64(&row, comm[0]->ts_ns);
    hta_row_put_str(&row, s->gaps_packed.data);
    hta_row_put_str(&row, s->durations_packed.data);
    hta_row_put_str(&row, s->ends_together_packed.data);
    return hta_row_done(&row);
}

static int put_streams(hta_table *t, const hta_rank_view *v, const hta_event *const *comm,
                       size_t n)
{
    stream_scratch s = {.gaps = hta_large_malloc(n * sizeof *s.gaps),
                        .durations = hta_large_malloc(n * sizeof *s.durations),
                        .ends_together = hta_large_malloc(n * sizeof *s.ends_together)};
    int rc = s.gaps && s.durations && s.ends_together ? 0 : -1;
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        for (end = i + 1; end < n && comm[end]->stream == comm[i]->stream;)
            end++;
        rc = put_stream(t, v, &comm[i], end - i, &s);
    }
    hta_buf_free(&s.gaps_packed);
    hta_buf_free(&s.durations_packed);
    hta_buf_free(&s.ends_together_packed);
    free(s.gaps);
    free(s.durations);
    free(s.ends_together);
    return rc;
}

static const hta_column UNKNOWN_PEER_COLUMNS[HTA_P2P_UNKNOWN_PEER_N_COLUMNS] = {
    [HTA_P2P_UNKNOWN_PEER_RANK] = {"rank", HTA_COL_I64},
    [HTA_P2P_UNKNOWN_PEER_KERNELS] = {"kernels", HTA_COL_I64},
};
const hta_table_spec hta_p2p_unknown_peer_table = {
    "_p2p_unknown_peer", UNKNOWN_PEER_COLUMNS, HTA_P2P_UNKNOWN_PEER_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};

/* Whether kernel c (comm_at order) is matched here: not by process group
 * (its metadata or its batch's), and not a send or recv, whose peer only
 * its metadata names. */
static int matched_by_stream(const hta_comm_resolver *r, const hta_comm_launchers *l, size_t c,
                             size_t *p2p)
{
    const hta_event *e = r->view->gpu[r->view->comm_at[c]];
    size_t in_batch;
    if (hta_comm_resolve(r, e) || hta_comm_batch(r, c, &in_batch))
        return 0;
    if (hta_comm_launch_of(l, e) == HTA_COMM_LAUNCH_P2P) {
        (*p2p)++;
        return 0;
    }
    return 1;
}

/* "_p2p_unknown_peer": the rank's point-to-point kernels without a peer,
 * which pair with nothing and are given no wait (counted as unpaired by
 * crossrank/compare/p2p_results.c). */
static int put_unknown_peers(hta_tableset *out, int64_t rank_key, size_t n)
{
    hta_table *t = n ? hta_tableset_table(out, &hta_p2p_unknown_peer_table) : NULL;
    if (!n)
        return 0;
    if (!t)
        return -1;
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_i64(&row, (int64_t)n);
    return hta_row_done(&row);
}

int hta_collectives(const hta_rank_view *v, hta_tableset *out, hta_error *err)
{
    /* Kernels whose process group is known are matched by group instead. */
    if (hta_comm_ops(v, out, err))
        return -1;
    hta_comm_resolver r;
    hta_comm_launchers l;
    if (hta_comm_resolver_build(&r, v))
        return hta_fail(err, "out of memory listing collectives");
    if (hta_comm_launchers_build(&l, v)) {
        hta_comm_resolver_free(&r);
        return hta_fail(err, "out of memory listing collectives");
    }
    size_t n = 0, p2p = 0, ignored = 0;
    for (size_t c = 0; c < v->n_comm; c++)
        n += matched_by_stream(&r, &l, c, &p2p);
    const hta_event **comm = n ? hta_large_malloc(n * sizeof *comm) : NULL;
    hta_table *t = n ? hta_tableset_table(out, &hta_collective_kernels_table) : NULL;
    int rc = (!n || (comm && t)) && put_unknown_peers(out, v->rank_key, p2p) == 0 ? 0 : -1;
    for (size_t c = 0, k = 0; rc == 0 && k < n; c++)
        if (matched_by_stream(&r, &l, c, &ignored))
            comm[k++] = v->gpu[v->comm_at[c]];
    if (rc == 0 && n) {
        qsort(comm, n, sizeof *comm, compare_stream_then_start);
        rc = put_streams(t, v, comm, n);
    }
    free(comm);
    hta_comm_launchers_free(&l);
    hta_comm_resolver_free(&r);
    return rc ? hta_fail(err, "out of memory listing collectives") : 0;
}
