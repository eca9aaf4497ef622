/* comm_ops.c: the rank's side of the process-group-aware collective
 * analysis (crossrank/collective_groups.c matches them on the root).
 *
 * Every communication kernel whose collective metadata is known (see
 * hta/comm_ops.h for where it comes from) becomes a row of the
 * process-local table "_comm_ops": its process group (name, description,
 * member ranks), collective, dtype, element counts, group size, PyTorch's
 * per-group sequence number Seq when the trace has it (-1 otherwise), its
 * ordinal among this rank's kernels of the same group in start order
 * (the matching key without Seq), its start and end, how long
 * computation ran during it (for /comm_by_group's exposed time), and the
 * ProfilerStep number that launched it (-1 outside any; for /steps).  Kernels without
 * metadata stay in "_collectives" (analysis/collectives.c) and are matched
 * by stream as before.  Strings cross to the root through the table
 * dictionary, once per process. */
#include "hta/comm_ops.h"
#include "hta/profiler_steps.h"

#include <stdlib.h>
#include <string.h>

static const hta_column COLUMNS[] = {
    {"rank", HTA_COL_I64},        {"group", HTA_COL_STR},      {"group_desc", HTA_COL_STR},
    {"group_ranks", HTA_COL_STR}, {"collective", HTA_COL_STR}, {"dtype", HTA_COL_STR},
    {"in_nelems", HTA_COL_I64},   {"out_nelems", HTA_COL_I64}, {"group_size", HTA_COL_I64},
    {"seq", HTA_COL_I64},         {"ordinal", HTA_COL_I64},    {"start_ns", HTA_COL_I64},
    {"end_ns", HTA_COL_I64},       {"overlap_ns", HTA_COL_I64}, {"step", HTA_COL_I64},
};

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
    return 0;
}

void hta_comm_resolver_free(hta_comm_resolver *r)
{
    free(r->by_external_id);
    free(r->by_start);
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

/* A kernel with its metadata, to number the kernels of each group. */
typedef struct comm_kernel {
    const hta_event *event;
    const hta_comm_meta *meta;
    size_t position;           /* in the view: start order */
} comm_kernel;

static int compare_group_then_start(const void *a, const void *b)
{
    const comm_kernel *x = a, *y = b;
    if (x->meta->pg_name != y->meta->pg_name)
        return x->meta->pg_name < y->meta->pg_name ? -1 : 1;
    return (x->position > y->position) - (x->position < y->position);
}

/* How long computation runs during [start, end): the merged compute
 * intervals are sorted, so a binary search finds the first that can. */
static int64_t compute_overlap(const hta_rank_view *v, int64_t start, int64_t end)
{
    const hta_interval *c = v->unions.of[HTA_KT_COMPUTATION];
    size_t n = v->unions.n[HTA_KT_COMPUTATION], lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c[mid].end <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t total = 0;
    for (size_t i = lo; i < n && c[i].start < end; i++) {
        int64_t a = c[i].start > start ? c[i].start : start, b = c[i].end < end ? c[i].end : end;
        total += b > a ? b - a : 0;
    }
    return total;
}

static int put_row(hta_table *t, const hta_rank_view *v, const hta_profiler_steps *steps,
                   const comm_kernel *k, int64_t ordinal)
{
    long step = hta_profiler_step_of(steps, v, k->event);
    int64_t rank_key = v->rank_key;
    const hta_comm_set *s = &v->trace->comm;
    const hta_comm_meta *m = k->meta;
    hta_row row = hta_table_add_row(t);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_str(&row, hta_comm_string(s, m->pg_name));
    hta_row_put_str(&row, hta_comm_string(s, m->pg_desc));
    hta_row_put_str(&row, hta_comm_string(s, m->pg_ranks));
    hta_row_put_str(&row, hta_comm_string(s, m->collective));
    hta_row_put_str(&row, hta_comm_string(s, m->dtype));
    hta_row_put_i64(&row, m->in_nelems);
    hta_row_put_i64(&row, m->out_nelems);
    hta_row_put_i64(&row, m->group_size);
    hta_row_put_i64(&row, m->seq);
    hta_row_put_i64(&row, ordinal);
    hta_row_put_i64(&row, k->event->ts_ns);
    hta_row_put_i64(&row, hta_event_end(k->event));
    hta_row_put_i64(&row, compute_overlap(v, k->event->ts_ns, hta_event_end(k->event)));
    hta_row_put_i64(&row, step >= 0 ? steps->steps[step].number : -1);
    return hta_row_done(&row);
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

int hta_comm_ops(const hta_rank_view *v, const hta_options *opt, hta_tableset *out,
                 hta_error *err)
{
    (void)opt;
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
    size_t n = 0;
    for (size_t i = 0; i < v->n_gpu; i++)
        n += v->gpu[i]->kernel_type == HTA_KT_COMMUNICATION;
    comm_kernel *k = malloc((n ? n : 1) * sizeof *k);
    hta_comm_meta *filled = malloc((n ? n : 1) * sizeof *filled);
    int rc = k && filled ? 0 : -1;
    size_t m = 0;
    for (size_t i = 0; rc == 0 && i < v->n_gpu; i++) {
        if (v->gpu[i]->kernel_type != HTA_KT_COMMUNICATION)
            continue;
        const hta_comm_meta *meta = hta_comm_resolve(&r, v->gpu[i]);
        if (meta) {
            k[m] = (comm_kernel){v->gpu[i], with_group_ranks(s, meta, &filled[m]), i};
            m++;
        }
    }
    hta_table *t = m ? HTA_TABLE(out, "_comm_ops", COLUMNS) : NULL;
    rc = rc || (m && !t) ? -1 : 0;
    if (rc == 0)
        qsort(k, m, sizeof *k, compare_group_then_start);
    for (size_t i = 0, ordinal = 0; rc == 0 && i < m; i++) {
        ordinal = i && k[i].meta->pg_name == k[i - 1].meta->pg_name ? ordinal + 1 : 0;
        rc = put_row(t, v, &steps, &k[i], (int64_t)ordinal);
    }
    free(k);
    free(filled);
    hta_comm_resolver_free(&r);
    hta_profiler_steps_free(&steps);
    return rc ? hta_fail(err, "out of memory listing collectives") : 0;
}
