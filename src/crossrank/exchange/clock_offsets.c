/* clock_offsets.c: each host's clock offset, taken out before the waits
 * (definitions, "Clock offsets between hosts").
 *
 * Each host stamps its ranks' GPU events with its own clock; between
 * hosts they differ by tens to hundreds of microseconds, and a rank on a
 * host whose clock runs ahead looks late at every collective.  An
 * all-reduce, all-gather or reduce-scatter ends on all its ranks at once
 * (the data reaches them together), so the spread of its ends is the
 * clocks' spread: per instance spanning several nodes, each node's
 * deviation is the median end of its ranks there minus the median end of
 * all the instance's ranks, and the node's offset is the median of its
 * deviations over the instances, with their MAD as the noise.  Ranks of
 * one node share its clock, so they are shifted together, never against
 * each other.
 *
 * The owners of the instances (crossrank/collective_exchange.c) hold
 * whole instances, so each measures its own and every process receives
 * every (node, deviation) sample (one allgather); all compute the same
 * offsets and shift the ops they own before matching them.  The kernels
 * without metadata, matched by stream and order on the root
 * (crossrank/compare/collective_wait.c), are as good a reference: the
 * root measures their instances too, adds their samples to its own, and
 * lists the shift of every rank whose host's offset is applied in
 * "_clock_shifts", which the stream matching takes out.  The ranks'
 * own figures (communication time, overlap, steps) do not depend on the
 * shift, so only the owners' copies move.  --align-clocks auto applies an
 * offset above its noise, 3 x 1.4826 x MAD (three robust standard
 * deviations of one instance's deviation) and at least 1 us; on applies
 * every measured offset, off none.  Clock-condition violations (an op
 * ending before another rank started the instance) are counted per node
 * before and after. */
#include "crossrank/exchange/clock_offsets.h"

#include "analysis/collectives.h"
#include "analysis/ranks_table.h"
#include "crossrank/exchange/collective_groups.h"
#include "crossrank/exchange/hosts.h"
#include "crossrank/exchange/stream_kernels.h"
#include "model/trace.h"
#include "util/ranked.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LEAST_APPLIED_NS 1000
#define NOISE_MADS (3 * 1.4826)

static const hta_column NODE_CLOCK_COLUMNS[HTA_NODE_CLOCKS_N_COLUMNS] = {
    [HTA_NODE_CLOCKS_NODE] = {"node", HTA_COL_I64},
    [HTA_NODE_CLOCKS_OFFSET_NS] = {"offset_ns", HTA_COL_I64},
    [HTA_NODE_CLOCKS_MAD_NS] = {"mad_ns", HTA_COL_I64},
    [HTA_NODE_CLOCKS_INSTANCES] = {"instances", HTA_COL_I64},
    [HTA_NODE_CLOCKS_APPLIED] = {"applied", HTA_COL_I64},
    [HTA_NODE_CLOCKS_VIOLATIONS_BEFORE] = {"violations_before", HTA_COL_I64},
    [HTA_NODE_CLOCKS_VIOLATIONS_AFTER] = {"violations_after", HTA_COL_I64},
};
const hta_table_spec hta_node_clocks_table = {
    "_clock_offsets", NODE_CLOCK_COLUMNS, HTA_NODE_CLOCKS_N_COLUMNS,
    HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};

static const hta_column CLOCK_COLUMNS[HTA_CLOCK_OFFSETS_N_COLUMNS] = {
    [HTA_CLOCK_OFFSETS_HOST] = {"host", HTA_COL_STR},
    [HTA_CLOCK_OFFSETS_OFFSET_US] = {"offset_us", HTA_COL_F64},
    [HTA_CLOCK_OFFSETS_MAD_US] = {"mad_us", HTA_COL_F64},
    [HTA_CLOCK_OFFSETS_INSTANCES] = {"instances", HTA_COL_I64},
    [HTA_CLOCK_OFFSETS_APPLIED] = {"applied", HTA_COL_I64},
    [HTA_CLOCK_OFFSETS_VIOLATIONS_BEFORE] = {"violations_before", HTA_COL_I64},
    [HTA_CLOCK_OFFSETS_VIOLATIONS_AFTER] = {"violations_after", HTA_COL_I64},
};
static const hta_column CLOCK_SHIFT_COLUMNS[HTA_CLOCK_SHIFTS_N_COLUMNS] = {
    [HTA_CLOCK_SHIFTS_RANK] = {"rank", HTA_COL_I64},
    [HTA_CLOCK_SHIFTS_NS] = {"shift_ns", HTA_COL_I64},
};
const hta_table_spec hta_clock_shifts_table = {
    "_clock_shifts", CLOCK_SHIFT_COLUMNS, HTA_CLOCK_SHIFTS_N_COLUMNS,
    HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};

const hta_table_spec hta_clock_offsets_table = {
    "clock_offsets", CLOCK_COLUMNS, HTA_CLOCK_OFFSETS_N_COLUMNS, HTA_TABLE_GATHERED};

/* One node's deviation at one instance. */
typedef struct sample {
    int64_t node, deviation_ns;
} sample;

/* The nodes' figures while they are measured. */
typedef struct node_clock {
    int64_t offset_ns, mad_ns, instances, applied, before, after;
} node_clock;

typedef struct aligner {
    const hta_comm_catalog *c;
    hta_group_op *ops;
    const size_t *order;       /* ops in instance order */
    size_t n;
    const int64_t *valid, *valid_node;
    size_t n_valid;
    /* The root's kernels matched by stream (sorted by stream, rank,
     * ordinal; shifted here), and /ranks' row count. */
    hta_stream_kernel *streams;
    size_t n_streams, n_ranks;
} aligner;

static int64_t node_of(const aligner *a, int64_t rank)
{
    const int64_t *hit = bsearch(&rank, a->valid, a->n_valid, sizeof *a->valid, hta_compare_i64);
    return hit ? a->valid_node[hit - a->valid] : -1;
}

/* The median of v[0..n) (sorted in place), rounded to whole ns. */
static int64_t median_i64(int64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, hta_compare_i64);
    return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

static int compare_sample(const void *a, const void *b)
{
    const sample *x = a, *y = b;
    int c = (x->node > y->node) - (x->node < y->node);
    return c ? c : (x->deviation_ns > y->deviation_ns) - (x->deviation_ns < y->deviation_ns);
}

/* One instance ending on every rank at once, by_node[j] the node and end
 * of its j-th rank: one sample per node when its ranks span several known
 * nodes.  ends has k entries of scratch. */
static size_t node_deviations(sample *by_node, size_t k, int64_t *ends, sample *out)
{
    int several = 0;
    for (size_t j = 0; j < k; j++) {
        if (by_node[j].node < 0)
            return 0;
        several |= by_node[j].node != by_node[0].node;
        ends[j] = by_node[j].deviation_ns;
    }
    if (!several)
        return 0;
    int64_t median = median_i64(ends, k);
    qsort(by_node, k, sizeof *by_node, compare_sample);
    size_t n = 0;
    for (size_t j = 0, end; j < k; j = end) {
        for (end = j; end < k && by_node[end].node == by_node[j].node; end++)
            ends[end - j] = by_node[end].deviation_ns;
        out[n++] = (sample){by_node[j].node, median_i64(ends, end - j) - median};
    }
    return n;
}

/* The instance o[0..k) of group ops.  scratch holds k entries of each
 * kind. */
static size_t instance_samples(const aligner *a, const size_t *o, size_t k, sample *out,
                               int64_t *ends, sample *by_node)
{
    const hta_kind_info *kind = &a->c->kinds[a->ops[o[0]].kind];
    if (a->ops[o[0]].by_seq == HTA_BY_PAIR || !hta_collective_ends_together(kind->collective))
        return 0;
    for (size_t j = 0; j < k; j++)
        by_node[j] = (sample){node_of(a, a->ops[o[j]].rank), a->ops[o[j]].end};
    return node_deviations(by_node, k, ends, out);
}

/* The k-th instance of a stream block, when every kernel of it ends
 * together. */
static size_t stream_samples(const aligner *a, const hta_stream_block *b, size_t k,
                             sample *out, int64_t *ends, sample *by_node)
{
    for (size_t j = 0; j < b->n; j++) {
        const hta_stream_kernel *c = &b->first[j][k];
        if (!c->ends_together)
            return 0;
        by_node[j] = (sample){node_of(a, c->rank), c->end_ns};
    }
    return node_deviations(by_node, b->n, ends, out);
}

/* Calls visit on each instance of the root's stream kernels. */
static int each_stream_instance(const aligner *a,
                                void (*visit)(const aligner *, const hta_stream_block *, size_t,
                                              void *),
                                void *ctx)
{
    hta_stream_block b;
    if (a->n_streams && hta_stream_block_init(&b, a->n_ranks))
        return -1;
    for (size_t i = 0; i < a->n_streams;) {
        i += hta_stream_block_split(&a->streams[i], a->n_streams - i, &b);
        for (size_t k = 0; k < b.common; k++)
            visit(a, &b, k, ctx);
    }
    if (a->n_streams)
        hta_stream_block_free(&b);
    return 0;
}

typedef struct sampling {
    sample *out, *by_node;
    int64_t *ends;
    size_t n;
} sampling;

static void sample_stream_instance(const aligner *a, const hta_stream_block *b, size_t k,
                                   void *ctx)
{
    sampling *s = ctx;
    s->n += stream_samples(a, b, k, s->out + s->n, s->ends, s->by_node);
}

/* This process's samples, at most one per op or stream kernel; NULL
 * when out of memory. */
static sample *measure(const aligner *a, size_t *n_samples)
{
    size_t room = (a->n > a->n_streams ? a->n : a->n_streams) + 1;
    sampling s = {malloc((a->n + a->n_streams + 1) * sizeof *s.out),
                  malloc(room * sizeof *s.by_node), malloc(room * sizeof *s.ends), 0};
    int ok = s.out && s.by_node && s.ends;
    for (size_t i = 0, end; ok && i < a->n; i = end) {
        for (end = i + 1; end < a->n && hta_group_ops_same_instance(&a->ops[a->order[end]],
                                                                    &a->ops[a->order[i]]);)
            end++;
        s.n += instance_samples(a, &a->order[i], end - i, s.out + s.n, s.ends, s.by_node);
    }
    ok = ok && each_stream_instance(a, sample_stream_instance, &s) == 0;
    free(s.by_node);
    free(s.ends);
    if (!ok) {
        free(s.out);
        s.out = NULL;
    }
    *n_samples = s.n;
    return s.out;
}

/* Every process's samples, on every process; NULL on all when one
 * lacks memory. */
static sample *share_samples(const hta_processes *pr, const sample *mine, size_t n_mine,
                             size_t *n_all)
{
    int *lens = calloc((size_t)pr->n, sizeof *lens);
    int *offsets = calloc((size_t)pr->n, sizeof *offsets);
    int len = (int)(n_mine * sizeof *mine);
    int failed = hta_processes_any(pr, !lens || !offsets || !mine);
    if (!failed)
        hta_processes_allgather_int(pr, len, lens);
    size_t total = 0;
    for (int p = 0; !failed && p < pr->n; p++) {
        offsets[p] = (int)total;
        total += (size_t)lens[p];
    }
    sample *all = failed ? NULL : malloc(total ? total : 1);
    if (!hta_processes_any(pr, failed || !all))
        hta_processes_allgatherv(pr, mine, len, (char *)all, lens, offsets);
    else {
        free(all);
        all = NULL;
    }
    free(lens);
    free(offsets);
    *n_all = total / sizeof *all;
    return all;
}

/* Each node's offset and noise from all samples (sorted by node). */
static void offsets_of(sample *all, size_t n, int mode, node_clock *nodes)
{
    qsort(all, n, sizeof *all, compare_sample);
    int64_t *dev = malloc((n ? n : 1) * sizeof *dev);
    for (size_t i = 0, end; dev && i < n; i = end) {
        for (end = i; end < n && all[end].node == all[i].node; end++)
            dev[end - i] = all[end].deviation_ns;
        size_t k = end - i;
        node_clock *nc = &nodes[all[i].node];
        nc->instances = (int64_t)k;
        nc->offset_ns = median_i64(dev, k);
        for (size_t j = 0; j < k; j++)
            dev[j] = llabs(dev[j] - nc->offset_ns);
        nc->mad_ns = median_i64(dev, k);
        int64_t noise = (int64_t)llround(NOISE_MADS * (double)nc->mad_ns);
        int64_t size = llabs(nc->offset_ns);
        nc->applied = mode == HTA_ALIGN_CLOCKS_ON
                          ? size > 0
                          : mode == HTA_ALIGN_CLOCKS_AUTO && size > noise &&
                                size >= LEAST_APPLIED_NS;
    }
    free(dev);
}

static void count_stream_violations(const aligner *a, const hta_stream_block *b, size_t k,
                                    void *per_node)
{
    int64_t latest = INT64_MIN;
    for (size_t j = 0; j < b->n; j++)
        latest = b->first[j][k].start_ns > latest ? b->first[j][k].start_ns : latest;
    for (size_t j = 0; j < b->n; j++) {
        int64_t node = node_of(a, b->first[j][k].rank);
        if (node >= 0 && b->first[j][k].end_ns < latest)
            ((int64_t *)per_node)[node]++;
    }
}

/* Per node, the ops and stream kernels that end before another rank
 * started their instance (a pair's two sides included). */
static int count_violations(const aligner *a, int64_t *per_node)
{
    for (size_t i = 0, end; i < a->n; i = end) {
        int64_t latest = INT64_MIN;
        for (end = i; end < a->n && hta_group_ops_same_instance(&a->ops[a->order[end]],
                                                                &a->ops[a->order[i]]);
             end++)
            latest = a->ops[a->order[end]].start > latest ? a->ops[a->order[end]].start : latest;
        for (size_t j = i; j < end; j++) {
            const hta_group_op *op = &a->ops[a->order[j]];
            int64_t node = node_of(a, op->rank);
            if (node >= 0 && op->end < latest)
                per_node[node]++;
        }
    }
    return each_stream_instance(a, count_stream_violations, per_node);
}

static void shift_ops(const aligner *a, const node_clock *nodes)
{
    for (size_t i = 0; i < a->n; i++) {
        int64_t node = node_of(a, a->ops[i].rank);
        if (node >= 0 && nodes[node].applied) {
            a->ops[i].start -= nodes[node].offset_ns;
            a->ops[i].end -= nodes[node].offset_ns;
        }
    }
    for (size_t i = 0; i < a->n_streams; i++) {
        int64_t node = node_of(a, a->streams[i].rank);
        if (node >= 0 && nodes[node].applied) {
            a->streams[i].start_ns -= nodes[node].offset_ns;
            a->streams[i].end_ns -= nodes[node].offset_ns;
        }
    }
}

/* Root: "_clock_shifts", the shift of every rank whose host's offset is
 * applied, in rank order. */
static int put_rank_shifts(hta_tableset *out, const aligner *a, const node_clock *nodes)
{
    hta_table *t = hta_tableset_table(out, &hta_clock_shifts_table);
    int rc = t ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < a->n_valid; i++) {
        int64_t node = a->valid_node[i];
        if (node < 0 || !nodes[node].applied)
            continue;
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, a->valid[i]);
        hta_row_put_i64(&row, nodes[node].offset_ns);
        rc = hta_row_done(&row);
    }
    return rc;
}

static int put_node_rows(hta_tableset *out, const node_clock *nodes, int64_t n_nodes)
{
    hta_table *t = hta_tableset_table(out, &hta_node_clocks_table);
    int rc = t ? 0 : -1;
    for (int64_t k = 0; rc == 0 && k < n_nodes; k++) {
        const node_clock *nc = &nodes[k];
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, k);
        hta_row_put_i64(&row, nc->offset_ns);
        hta_row_put_i64(&row, nc->mad_ns);
        hta_row_put_i64(&row, nc->instances);
        hta_row_put_i64(&row, nc->applied);
        hta_row_put_i64(&row, nc->before);
        hta_row_put_i64(&row, nc->after);
        rc = hta_row_done(&row);
    }
    return rc;
}

/* The number of nodes: one past the largest known. */
static int64_t count_nodes(const int64_t *valid_node, size_t n_valid)
{
    int64_t n = 0;
    for (size_t i = 0; valid_node && i < n_valid; i++)
        n = valid_node[i] >= n ? valid_node[i] + 1 : n;
    return n;
}

/* The root's kernels matched by stream, into a; 0 elsewhere or without
 * any.  -1 when out of memory or corrupt (the stream matching reports
 * which). */
static int load_streams(aligner *a, const hta_tableset *gathered)
{
    const hta_table *ranks = gathered ? hta_tableset_find(gathered, hta_ranks_table.name) : NULL;
    const hta_table *in =
        ranks ? hta_tableset_find(gathered, hta_collective_kernels_table.name) : NULL;
    int corrupt;
    a->n_ranks = ranks ? ranks->n_rows : 0;
    return in ? hta_stream_kernels_load(in, ranks, &a->streams, &a->n_streams, &corrupt) : 0;
}

int hta_align_clocks(const hta_processes *pr, const hta_comm_catalog *c, hta_group_op *ops,
                     size_t n, const int64_t *valid, const int64_t *valid_node, size_t n_valid,
                     const hta_clock_alignment *clocks, hta_tableset *out)
{
    int64_t n_nodes = count_nodes(valid_node, n_valid);
    if (n_nodes < 2)
        return 0;
    size_t *order = hta_group_ops_in_instance_order(ops, n);
    node_clock *nodes = calloc((size_t)n_nodes, sizeof *nodes);
    int64_t *before = calloc((size_t)n_nodes * 2, sizeof *before);
    aligner a = {c, ops, order, n, valid, valid_node, n_valid, NULL, 0, 0};
    size_t n_mine = 0, n_all = 0;
    int ok = (order || n == 0) && nodes && before && load_streams(&a, clocks->gathered) == 0;
    sample *mine = ok ? measure(&a, &n_mine) : NULL;
    sample *all = share_samples(pr, mine, n_mine, &n_all);
    ok = all != NULL;
    if (ok) {
        offsets_of(all, n_all, clocks->mode, nodes);
        ok = count_violations(&a, before) == 0;
        shift_ops(&a, nodes);
        ok = ok && count_violations(&a, before + n_nodes) == 0;
    }
    if (!hta_processes_any(pr, !ok)) {
        hta_processes_sum(pr, before, (size_t)n_nodes * 2);
        for (int64_t k = 0; k < n_nodes; k++) {
            nodes[k].before = before[k];
            nodes[k].after = before[n_nodes + k];
        }
    } else
        ok = 0;
    int failed = !ok || (pr->me == HTA_ROOT && (put_node_rows(out, nodes, n_nodes) ||
                                                put_rank_shifts(out, &a, nodes)));
    free(order);
    free(nodes);
    free(before);
    free(mine);
    free(all);
    free(a.streams);
    return hta_processes_any(pr, failed) ? -1 : 0;
}

int hta_clock_offsets_results(hta_tableset *set, const hta_rank_hosts *hosts,
                              const hta_crossrank_settings *opt, hta_error *err)
{
    (void)opt;
    const hta_table *nodes = hta_tableset_find(set, hta_node_clocks_table.name);
    if (!nodes)
        return 0;
    hta_table *t = NULL;
    uint32_t named = hosts ? hosts->names.count : 0;
    int rc = !(t = hta_tableset_table(set, &hta_clock_offsets_table));
    for (size_t r = 0; rc == 0 && r < nodes->n_rows; r++) {
        const hta_cell *row = hta_table_row(nodes, r);
        uint32_t node = (uint32_t)row[HTA_NODE_CLOCKS_NODE].i;
        hta_row_builder out = hta_table_add_row(t);
        hta_row_put_str(&out, node < named ? hta_strtab_get(&hosts->names, node) : "");
        hta_row_put_f64(&out, hta_ns_to_us(row[HTA_NODE_CLOCKS_OFFSET_NS].i));
        hta_row_put_f64(&out, hta_ns_to_us(row[HTA_NODE_CLOCKS_MAD_NS].i));
        hta_row_put_i64(&out, row[HTA_NODE_CLOCKS_INSTANCES].i);
        hta_row_put_i64(&out, row[HTA_NODE_CLOCKS_APPLIED].i);
        hta_row_put_i64(&out, row[HTA_NODE_CLOCKS_VIOLATIONS_BEFORE].i);
        hta_row_put_i64(&out, row[HTA_NODE_CLOCKS_VIOLATIONS_AFTER].i);
        rc = hta_row_done(&out);
    }
    hta_tableset_remove(set, hta_node_clocks_table.name);
    return rc ? hta_fail(err, "out of memory listing the clock offsets") : 0;
}
