/* comm_ops.c: the rank's side of the process-group-aware collective
 * analysis (crossrank/collective_exchange.c matches them across the
 * processes).
 *
 * Every communication kernel whose collective metadata is known (see
 * analysis/comm_ops.h for where it comes from) goes into the process-local
 * table "_comm_ops", one row per (rank, process group) like
 * "_collectives": the group's name, description and member ranks once;
 * its distinct kinds (collective, dtype, element counts, group size, and
 * a send's or recv's peer) once,
 * as lines of tab-separated fields; and per kernel, in start order, packed
 * series (table/packed_ints.h): the index of its kind, PyTorch's per-group
 * sequence number Seq (-1 without), its start (gap since the previous),
 * duration, how long computation ran during it (for /comm_by_group's
 * exposed time) and the ProfilerStep number that launched it (-1 outside
 * any; for /steps), and its split sizes as text (all-to-all-v).  A
 * kernel's position in the series is its ordinal
 * among the rank's kernels of the group, the matching key without Seq.
 * The table stays on its process until the ranks are resolved; then each
 * kernel travels once, as a fixed-size op, to the process that owns its
 * instance, and the strings once per process in the groups' catalog
 * (crossrank/exchange/comm_catalog.c).  Kernels without metadata stay in
 * "_collectives" (analysis/collectives.c) and are matched by stream on the
 * root as before. */
#include "analysis/comm_ops.h"

#include "model/profiler_steps.h"
#include "numerics/bounds.h"
#include "table/packed_ints.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const hta_column COLUMNS[HTA_COMM_OPS_N_COLUMNS] = {
    [HTA_COMM_OPS_RANK] = {"rank", HTA_COL_I64},
    [HTA_COMM_OPS_GROUP] = {"group", HTA_COL_STR},
    [HTA_COMM_OPS_GROUP_DESC] = {"group_desc", HTA_COL_STR},
    [HTA_COMM_OPS_GROUP_RANKS] = {"group_ranks", HTA_COL_STR},
    [HTA_COMM_OPS_KERNELS] = {"kernels", HTA_COL_I64},
    [HTA_COMM_OPS_KINDS] = {"kinds", HTA_COL_STR},
    [HTA_COMM_OPS_KIND_OF] = {"kind_of", HTA_COL_STR},
    [HTA_COMM_OPS_SEQS] = {"seqs", HTA_COL_STR},
    [HTA_COMM_OPS_FIRST_START_NS] = {"first_start_ns", HTA_COL_I64},
    [HTA_COMM_OPS_START_GAPS] = {"start_gaps", HTA_COL_STR},
    [HTA_COMM_OPS_DURATIONS] = {"durations", HTA_COL_STR},
    [HTA_COMM_OPS_OVERLAPS] = {"overlaps", HTA_COL_STR},
    [HTA_COMM_OPS_STEPS] = {"steps", HTA_COL_STR},
    [HTA_COMM_OPS_SAME_KERNEL] = {"same_kernel", HTA_COL_STR},
    [HTA_COMM_OPS_SPLITS] = {"splits", HTA_COL_STR},
};
const hta_table_spec hta_comm_ops_table = {
    "_comm_ops", COLUMNS, HTA_COMM_OPS_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_EXCHANGED | HTA_TABLE_SCRATCH};

static int compare_external_id(const void *a, const void *b)
{
    const hta_comm_meta *x = *(const hta_comm_meta *const *)a;
    const hta_comm_meta *y = *(const hta_comm_meta *const *)b;
    return (x->external_id > y->external_id) - (x->external_id < y->external_id);
}

/* The trace is needed for start times; entries are sorted by event index,
 * and qsort has no context, so the start is compared through a copy. */
typedef struct timed_op {
    int64_t start;
    const hta_comm_meta *meta;
} timed_op;

static int compare_start(const void *a, const void *b)
{
    const timed_op *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

static int find_batches(hta_comm_resolver *r);

int hta_comm_resolver_build(hta_comm_resolver *r, const hta_rank_view *view)
{
    const hta_trace *t = view->trace;
    *r = (hta_comm_resolver){.view = view};
    size_t n = 0;
    for (size_t i = 0; i < t->comm.n; i++)
        n += !hta_event_is_gpu(&t->events[t->comm.items[i].event]);
    if (n == 0)
        return 0;
    r->by_external_id = malloc(n * sizeof *r->by_external_id);
    r->by_start = malloc(n * sizeof *r->by_start);
    timed_op *timed = malloc(n * sizeof *timed);
    if (!r->by_external_id || !r->by_start || !timed) {
        free(timed);
        hta_comm_resolver_free(r);
        return -1;
    }
    for (size_t i = 0; i < t->comm.n; i++) {
        const hta_comm_meta *m = &t->comm.items[i];
        if (hta_event_is_gpu(&t->events[m->event]) || !hta_comm_has_metadata(m))
            continue;
        r->by_external_id[r->n_ops] = m;
        timed[r->n_ops++] = (timed_op){t->events[m->event].ts_ns, m};
    }
    qsort(r->by_external_id, r->n_ops, sizeof *r->by_external_id, compare_external_id);
    qsort(timed, r->n_ops, sizeof *timed, compare_start);
    for (size_t i = 0; i < r->n_ops; i++)
        r->by_start[i] = timed[i].meta;
    free(timed);
    if (find_batches(r)) {
        hta_comm_resolver_free(r);
        return -1;
    }
    return 0;
}

void hta_comm_resolver_free(hta_comm_resolver *r)
{
    free(r->by_external_id);
    free(r->by_start);
    free(r->batch_ops);
    free(r->batch_first);
    free(r->batch_count);
    *r = (hta_comm_resolver){0};
}

static const hta_comm_meta *find_external_id(const hta_comm_resolver *r, int64_t id)
{
    size_t lo = 0, hi = r->n_ops;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->by_external_id[mid]->external_id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->n_ops && r->by_external_id[lo]->external_id == id ? r->by_external_id[lo]
                                                                    : NULL;
}

/* How far back from the last op starting at or before the launch the
 * search for one enclosing it goes: ops of other threads may start in
 * between, but never many. */
#define ENCLOSING_LOOKBACK 8

/* The latest-starting op with metadata whose time range holds ts. */
static const hta_comm_meta *find_enclosing(const hta_comm_resolver *r, int64_t ts)
{
    const hta_trace *t = r->view->trace;
    size_t lo = 0, hi = r->n_ops;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->events[r->by_start[mid]->event].ts_ns <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = 0; k < ENCLOSING_LOOKBACK && lo > k; k++) {
        const hta_event *op = &t->events[r->by_start[lo - 1 - k]->event];
        if (hta_event_end(op) >= ts)
            return r->by_start[lo - 1 - k];
    }
    return NULL;
}

const hta_comm_meta *hta_comm_resolve(const hta_comm_resolver *r, const hta_event *gpu)
{
    const hta_trace *t = r->view->trace;
    const hta_comm_meta *own = hta_comm_set_find(&t->comm, (size_t)(gpu - t->events));
    if (own && hta_comm_has_metadata(own))
        return own;
    if (r->n_ops == 0)
        return NULL;
    const hta_comm_meta *op = own && own->external_id >= 0 ? find_external_id(r, own->external_id)
                                                          : NULL;
    if (op)
        return op;
    const hta_event *launch = hta_rank_view_launch(r->view, gpu);
    return launch ? find_enclosing(r, launch->ts_ns) : NULL;
}

const hta_comm_meta *const *hta_comm_batch(const hta_comm_resolver *r, size_t c, size_t *n)
{
    *n = r->batch_count ? r->batch_count[c] : 0;
    return *n ? &r->batch_ops[r->batch_first[c]] : NULL;
}

/* A communication kernel by its launch's start, for the batches. */
typedef struct launched {
    int64_t ts;
    size_t c;                  /* comm_at index */
    int resolved;
} launched;

static int compare_launched(const void *a, const void *b)
{
    const launched *x = a, *y = b;
    if (x->ts != y->ts)
        return (x->ts > y->ts) - (x->ts < y->ts);
    return (x->c > y->c) - (x->c < y->c);
}

/* Whether a CPU op with metadata is a send or a recv (their ids in the
 * set's strings, UINT32_MAX when absent). */
static int is_p2p_op(const hta_comm_meta *m, uint32_t send, uint32_t recv)
{
    return m->collective != HTA_COMM_NO_STRING && (m->collective == send || m->collective == recv);
}

/* Gives each kernel without metadata that follows unclaimed sends and
 * recvs its batch (see hta_comm_batch).  k: the kernels by launch. */
static int assign_batches(hta_comm_resolver *r, const launched *k, size_t n_kernels,
                          const uint8_t *claimed)
{
    const hta_trace *t = r->view->trace;
    uint32_t send = hta_strtab_find(&t->comm.strings, "send", 4);
    uint32_t recv = hta_strtab_find(&t->comm.strings, "recv", 4);
    r->batch_ops = malloc((r->n_ops ? r->n_ops : 1) * sizeof *r->batch_ops);
    r->batch_first = calloc(r->view->n_comm ? r->view->n_comm : 1, sizeof *r->batch_first);
    r->batch_count = calloc(r->view->n_comm ? r->view->n_comm : 1, sizeof *r->batch_count);
    if (!r->batch_ops || !r->batch_first || !r->batch_count)
        return -1;
    size_t used = 0, op = 0;
    for (size_t i = 0; i < n_kernels; i++) {
        int64_t after = i > 0 ? k[i - 1].ts : INT64_MIN;
        while (op < r->n_ops && t->events[r->by_start[op]->event].ts_ns <= after)
            op++;
        if (k[i].resolved)
            continue;
        r->batch_first[k[i].c] = used;
        for (size_t j = op; j < r->n_ops; j++) {
            const hta_comm_meta *m = r->by_start[j];
            const hta_event *e = &t->events[m->event];
            if (e->ts_ns > k[i].ts)
                break;
            if (!claimed[m - t->comm.items] && is_p2p_op(m, send, recv) &&
                hta_event_end(e) <= k[i].ts)
                r->batch_ops[used++] = m;
        }
        r->batch_count[k[i].c] = used - r->batch_first[k[i].c];
    }
    return 0;
}

static int find_batches(hta_comm_resolver *r)
{
    const hta_rank_view *v = r->view;
    const hta_trace *t = v->trace;
    if (r->n_ops == 0 || v->n_comm == 0)
        return 0;
    launched *k = malloc(v->n_comm * sizeof *k);
    uint8_t *claimed = calloc(t->comm.n ? t->comm.n : 1, 1);
    int rc = k && claimed ? 0 : -1;
    size_t n = 0, unresolved = 0;
    for (size_t c = 0; rc == 0 && c < v->n_comm; c++) {
        const hta_event *gpu = v->gpu[v->comm_at[c]];
        const hta_comm_meta *m = hta_comm_resolve(r, gpu);
        if (m)
            claimed[m - t->comm.items] = 1;
        const hta_event *launch = hta_rank_view_launch(v, gpu);
        if (launch)
            k[n++] = (launched){launch->ts_ns, c, m != NULL};
        unresolved += !m && launch;
    }
    if (rc == 0 && unresolved) {
        qsort(k, n, sizeof *k, compare_launched);
        rc = assign_batches(r, k, n, claimed);
    }
    free(claimed);
    free(k);
    return rc;
}

/* A kernel with its metadata, to number the kernels of each group. */
typedef struct comm_kernel {
    const hta_event *event;
    const hta_comm_meta *meta;
    size_t position;           /* in the view: start order */
    size_t in_batch;           /* the op's place in its kernel's batch */
} comm_kernel;

static int compare_group_then_start(const void *a, const void *b)
{
    const comm_kernel *x = a, *y = b;
    if (x->meta->pg_name != y->meta->pg_name)
        return x->meta->pg_name < y->meta->pg_name ? -1 : 1;
    if (x->position != y->position)
        return (x->position > y->position) - (x->position < y->position);
    return (x->in_batch > y->in_batch) - (x->in_batch < y->in_batch);
}

/* How long computation runs during [start, end): the merged compute
 * intervals are sorted, so a binary search finds the first that can. */
static int64_t compute_overlap(const hta_rank_view *v, int64_t start, int64_t end)
{
    const hta_interval *c = v->unions.of[HTA_KT_COMPUTATION];
    size_t n = v->unions.n[HTA_KT_COMPUTATION], lo = HTA_UPPER_BOUND(c, n, end, start);
    int64_t total = 0;
    for (size_t i = lo; i < n && c[i].start < end; i++) {
        int64_t a = c[i].start > start ? c[i].start : start, b = c[i].end < end ? c[i].end : end;
        total += b > a ? b - a : 0;
    }
    return total;
}

/* A run's distinct (collective, dtype, element counts, group size,
 * point-to-point peer). */
static int same_kind(const hta_comm_meta *a, const hta_comm_meta *b)
{
    return a->collective == b->collective && a->dtype == b->dtype &&
           a->in_nelems == b->in_nelems && a->out_nelems == b->out_nelems &&
           a->group_size == b->group_size && a->peer == b->peer;
}

/* Scratch for one group's row: a value per kernel for each series. */
typedef struct row_scratch {
    uint64_t *kind, *gap, *overlap, *same_kernel;
    int64_t *seq, *duration, *step;
    hta_buf kinds, packed[7], splits;
} row_scratch;

/* Appends a kernel's split sizes, "in TAB out NL" ("[2, 1]" lists as
 * PyTorch writes them, empty when absent): they change at every
 * all-to-all-v, so they are no part of the kind. */
static int put_splits(hta_buf *b, const hta_comm_set *s, const hta_comm_meta *m)
{
    const char *in = hta_comm_string(s, m->in_split), *out = hta_comm_string(s, m->out_split);
    return hta_buf_append(b, in, strlen(in)) || hta_buf_putc(b, '\t') ||
           hta_buf_append(b, out, strlen(out)) || hta_buf_putc(b, '\n');
}

/* Appends "collective TAB dtype TAB in TAB out TAB size TAB peer NL" for
 * a kind. */
static int put_kind(hta_buf *b, const hta_comm_set *s, const hta_comm_meta *m)
{
    char numbers[128];
    int n = snprintf(numbers, sizeof numbers, "\t%lld\t%lld\t%lld\t%lld\n",
                     (long long)m->in_nelems, (long long)m->out_nelems,
                     (long long)m->group_size, (long long)m->peer);
    const char *collective = hta_comm_string(s, m->collective),
               *dtype = hta_comm_string(s, m->dtype);
    return hta_buf_append(b, collective, strlen(collective)) || hta_buf_putc(b, '\t') ||
           hta_buf_append(b, dtype, strlen(dtype)) || hta_buf_append(b, numbers, (size_t)n);
}

/* One row for the kernels k[0..n) of one group, in start order: the
 * group's strings once, the distinct kinds once, and per kernel its kind's
 * index, Seq, start (as the gap since the previous one), duration,
 * compute overlap, step and whether it is the previous op's kernel (the
 * ops of a coalesced batch share one) packed (table/packed_ints.h).  The
 * ordinal is the position in the series. */
static int put_group(hta_table *t, const hta_rank_view *v, const hta_profiler_steps *steps,
                     const comm_kernel *k, size_t n, row_scratch *r)
{
    const hta_comm_set *s = &v->trace->comm;
    size_t n_kinds = 0, cursor = 0;
    r->kinds.len = r->splits.len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < i && !same_kind(k[j].meta, k[i].meta))
            j++;
        r->kind[i] = j < i ? r->kind[j] : n_kinds++;
        if ((j == i && put_kind(&r->kinds, s, k[i].meta)) || put_splits(&r->splits, s, k[i].meta))
            return -1;
        const hta_event *e = k[i].event;
        long step = hta_profiler_step_of(steps, v, e, &cursor);
        r->seq[i] = k[i].meta->seq;
        r->gap[i] = i ? (uint64_t)(e->ts_ns - k[i - 1].event->ts_ns) : 0;
        r->duration[i] = e->dur_ns;
        r->overlap[i] = (uint64_t)compute_overlap(v, e->ts_ns, hta_event_end(e));
        r->step[i] = step >= 0 ? steps->steps[step].number : -1;
        r->same_kernel[i] = i && k[i - 1].event == e;
    }
    for (int p = 0; p < 7; p++)
        r->packed[p].len = 0;
    if (hta_buf_putc(&r->kinds, '\0') || hta_buf_putc(&r->splits, '\0') ||
        hta_pack_series(&r->packed[0], r->kind, n) ||
        hta_pack_signed_series(&r->packed[1], r->seq, n) ||
        hta_pack_series(&r->packed[2], r->gap, n) ||
        hta_pack_signed_series(&r->packed[3], r->duration, n) ||
        hta_pack_series(&r->packed[4], r->overlap, n) ||
        hta_pack_signed_series(&r->packed[5], r->step, n) ||
        hta_pack_series(&r->packed[6], r->same_kernel, n))
        return -1;
    const hta_comm_meta *m = k[0].meta;
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, v->rank_key);
    hta_row_put_str(&row, hta_comm_string(s, m->pg_name));
    hta_row_put_str(&row, hta_comm_string(s, m->pg_desc));
    hta_row_put_str(&row, hta_comm_string(s, m->pg_ranks));
    hta_row_put_i64(&row, (int64_t)n);
    hta_row_put_str(&row, r->kinds.data);
    hta_row_put_str(&row, r->packed[0].data);
    hta_row_put_str(&row, r->packed[1].data);
    hta_row_put_i64(&row, k[0].event->ts_ns);
    for (int p = 2; p < 7; p++)
        hta_row_put_str(&row, r->packed[p].data);
    hta_row_put_str(&row, r->splits.data);
    return hta_row_done(&row);
}

static int put_groups(hta_table *t, const hta_rank_view *v, const hta_profiler_steps *steps,
                      const comm_kernel *k, size_t n)
{
    row_scratch r = {.kind = malloc(n * sizeof *r.kind), .gap = malloc(n * sizeof *r.gap),
                     .overlap = malloc(n * sizeof *r.overlap), .seq = malloc(n * sizeof *r.seq),
                     .duration = malloc(n * sizeof *r.duration),
                     .step = malloc(n * sizeof *r.step),
                     .same_kernel = malloc(n * sizeof *r.same_kernel)};
    int rc =
        r.kind && r.gap && r.overlap && r.seq && r.duration && r.step && r.same_kernel ? 0 : -1;
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        for (end = i + 1; end < n && k[end].meta->pg_name == k[i].meta->pg_name;)
            end++;
        rc = put_group(t, v, steps, &k[i], end - i, &r);
    }
    free(r.kind);
    free(r.gap);
    free(r.overlap);
    free(r.seq);
    free(r.duration);
    free(r.step);
    free(r.same_kernel);
    hta_buf_free(&r.kinds);
    hta_buf_free(&r.splits);
    for (int p = 0; p < 7; p++)
        hta_buf_free(&r.packed[p]);
    return rc;
}

/* The group's member list from pg_config when the kernel's args lack it. */
static const hta_comm_meta *with_group_ranks(const hta_comm_set *s, const hta_comm_meta *m,
                                             hta_comm_meta *scratch)
{
    if (m->pg_ranks != HTA_COMM_NO_STRING)
        return m;
    *scratch = *m;
    for (size_t g = 0; g < s->n_groups; g++)
        if (s->groups[g].name == m->pg_name)
            scratch->pg_ranks = s->groups[g].ranks;
    if (scratch->pg_desc == HTA_COMM_NO_STRING)
        for (size_t g = 0; g < s->n_groups; g++)
            if (s->groups[g].name == m->pg_name)
                scratch->pg_desc = s->groups[g].desc;
    return scratch;
}

int hta_comm_ops(const hta_rank_view *v, hta_tableset *out, hta_error *err)
{
    const hta_comm_set *s = &v->trace->comm;
    if (s->n == 0)
        return 0;
    hta_comm_resolver r;
    hta_profiler_steps steps;
    if (hta_profiler_steps_find(&steps, v->trace))
        return hta_fail(err, "out of memory listing collectives");
    if (hta_comm_resolver_build(&r, v)) {
        hta_profiler_steps_free(&steps);
        return hta_fail(err, "out of memory listing collectives");
    }
    /* A batch's ops each take their kernel: at most one op per CPU op
     * with metadata beyond the kernels. */
    size_t n = v->n_comm + r.n_ops;
    comm_kernel *k = malloc((n ? n : 1) * sizeof *k);
    hta_comm_meta *filled = malloc((n ? n : 1) * sizeof *filled);
    int rc = k && filled ? 0 : -1;
    size_t m = 0;
    for (size_t c = 0; rc == 0 && c < v->n_comm; c++) {
        size_t i = v->comm_at[c], in_batch = 0;
        const hta_comm_meta *meta = hta_comm_resolve(&r, v->gpu[i]);
        if (meta) {
            k[m] = (comm_kernel){v->gpu[i], with_group_ranks(s, meta, &filled[m]), i, 0};
            m++;
            continue;
        }
        const hta_comm_meta *const *batch = hta_comm_batch(&r, c, &in_batch);
        for (size_t b = 0; b < in_batch; b++, m++)
            k[m] = (comm_kernel){v->gpu[i], with_group_ranks(s, batch[b], &filled[m]), i, b};
    }
    hta_table *t = m ? hta_tableset_table(out, &hta_comm_ops_table) : NULL;
    rc = rc || (m && !t) ? -1 : 0;
    if (rc == 0)
        qsort(k, m, sizeof *k, compare_group_then_start);
    if (rc == 0 && m)
        rc = put_groups(t, v, &steps, k, m);
    free(k);
    free(filled);
    hta_comm_resolver_free(&r);
    hta_profiler_steps_free(&steps);
    return rc ? hta_fail(err, "out of memory listing collectives") : 0;
}
