/* graph_launches.c: CUDA and HIP graph replays (definitions, "Graph
 * launches").
 *
 * One cudaGraphLaunch / cuGraphLaunch / hipGraphLaunch call replays a
 * whole captured graph: every GPU event of the replay carries the call's
 * correlation id, so each looks like the kernel of an ordinary launch.
 * Here the replays are put back together: per launch call, its GPU events
 * (model/rank_view.h's launch of each), and per (rank, signature) one
 * row, the signature being a hash of the replay's kernel names in start
 * order (16 hex digits), so that the replays of one graph share a row.
 * A launch whose replay left no GPU event in the trace (profilers record
 * only some replays: Kineto and ROCm both do) is counted in a row of its
 * own with an empty signature: recorded / launches over a rank's rows is
 * its coverage, and below 1 its idle time is an upper bound.
 *
 * Per row: launches, recorded replays, kernels and GPU events (kernels,
 * copies and memsets), the fewest and most kernels of a replay, and the
 * medians of the replay's span (first GPU start to last GPU end), its busy
 * time (the union of its GPU events), the launch call's CPU time and the
 * delay from the call's start to the replay's first GPU event.
 *
 * Kineto records no graph id, so a replay the profiler recorded with
 * kernels missing has a signature of its own: a row is short of another
 * when the other's kernels hold all of its kernels in order, and more, and
 * the other has more launches (a graph is replayed whole more often than
 * it is recorded short; distinct graphs replayed as often, as
 * negative_queue's 1- and 2-kernel graphs once per step, are not taken for
 * each other).  Such a row's replays are counted short, under the
 * signature of the row of most launches they are short of. */
#include "analysis/graph_launches.h"

#include "model/launch_apis.h"
#include "numerics/stats.h"
#include "util/name_hash.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const hta_column COLUMNS[HTA_GRAPH_LAUNCHES_N_COLUMNS] = {
    [HTA_GRAPH_LAUNCHES_RANK] = {"rank", HTA_COL_I64},
    [HTA_GRAPH_LAUNCHES_SIGNATURE] = {"signature", HTA_COL_STR},
    [HTA_GRAPH_LAUNCHES_FIRST_KERNEL] = {"first_kernel", HTA_COL_STR},
    [HTA_GRAPH_LAUNCHES_LAUNCHES] = {"launches", HTA_COL_I64},
    [HTA_GRAPH_LAUNCHES_RECORDED] = {"recorded", HTA_COL_I64},
    [HTA_GRAPH_LAUNCHES_KERNELS] = {"kernels", HTA_COL_I64},
    [HTA_GRAPH_LAUNCHES_GPU_EVENTS] = {"gpu_events", HTA_COL_I64},
    [HTA_GRAPH_LAUNCHES_KERNELS_MIN] = {"kernels_min", HTA_COL_I64},
    [HTA_GRAPH_LAUNCHES_KERNELS_MAX] = {"kernels_max", HTA_COL_I64},
    [HTA_GRAPH_LAUNCHES_SPAN_P50_US] = {"span_p50_us", HTA_COL_F64},
    [HTA_GRAPH_LAUNCHES_BUSY_P50_US] = {"busy_p50_us", HTA_COL_F64},
    [HTA_GRAPH_LAUNCHES_CPU_LAUNCH_P50_US] = {"cpu_launch_p50_us", HTA_COL_F64},
    [HTA_GRAPH_LAUNCHES_LAUNCH_DELAY_P50_US] = {"launch_delay_p50_us", HTA_COL_F64},
    [HTA_GRAPH_LAUNCHES_SHORT_REPLAYS] = {"short_replays", HTA_COL_I64},
    [HTA_GRAPH_LAUNCHES_SHORT_OF] = {"short_of", HTA_COL_STR},
};
const hta_table_spec hta_graph_launches_table = {
    "graph_launches", COLUMNS, HTA_GRAPH_LAUNCHES_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

/* One launch call and its replay. */
typedef struct replay {
    const hta_event *call;
    uint64_t signature;        /* FNV-1a over its kernels' names; 0: none recorded */
    uint32_t first_kernel;     /* name id, UINT32_MAX: none */
    int64_t kernels, gpu_events, first_ns, last_end_ns, busy_ns, busy_end_ns;
} replay;

static int compare_call(const void *a, const void *b)
{
    const hta_event *x = ((const replay *)a)->call, *y = ((const replay *)b)->call;
    return (x > y) - (x < y);
}

static int is_graph_launch(const hta_launch_names *g, const hta_event *e)
{
    return !hta_event_is_gpu(e) && hta_launch_names_match(g, e);
}

/* The graph launch calls of the trace (*n of them; NULL when out of
 * memory or when there are none). */
static replay *find_calls(const hta_trace *t, size_t *n, int *failed)
{
    hta_launch_names g = hta_launch_names_find(t, HTA_LAUNCH_GRAPH_APIS);
    *n = 0;
    if (g.n == 0)
        return NULL;
    size_t count = 0;
    for (size_t i = 0; i < t->n_events; i++)
        count += is_graph_launch(&g, &t->events[i]);
    replay *r = calloc(count ? count : 1, sizeof *r);
    *failed = !r;
    for (size_t i = 0; r && i < t->n_events; i++)
        if (is_graph_launch(&g, &t->events[i]))
            r[(*n)++] = (replay){.call = &t->events[i], .first_kernel = UINT32_MAX};
    return r;
}

/* The signature so far (0: none yet) with one more kernel name; never 0. */
static uint64_t hash_name(uint64_t h, const char *s)
{
    h = hta_text_hash(h ? h : HTA_TEXT_HASH_BASIS, s);
    return h ? h : 1;
}

/* A kernel of a recorded replay: its call, name and place in start
 * order.  Sorted by (call, place) they give each replay's kernel names in
 * start order. */
typedef struct replay_kernel {
    const hta_event *call;
    uint32_t name, place;
} replay_kernel;

static int compare_replay_kernel(const void *a, const void *b)
{
    const replay_kernel *x = a, *y = b;
    if (x->call != y->call)
        return x->call < y->call ? -1 : 1;
    return (x->place > y->place) - (x->place < y->place);
}

/* The kernels of call's replay among the sorted k[0..n). */
static const replay_kernel *kernels_of(const replay_kernel *k, size_t n, const hta_event *call,
                                       size_t *count)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k[mid].call < call)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < n && k[end].call == call)
        end++;
    *count = end - lo;
    return k + lo;
}

/* One row: the replays r[first, end) of one signature, the kernels of the
 * first of them, and the row it is short of (SIZE_MAX: none). */
typedef struct graph_row {
    size_t first, end;
    const replay_kernel *kernels;
    size_t n_kernels, short_of;
} graph_row;

/* Whether a's names appear in b's, in order. */
static int is_subsequence(const replay_kernel *a, size_t na, const replay_kernel *b, size_t nb)
{
    size_t i = 0;
    for (size_t j = 0; j < nb && i < na; j++)
        i += a[i].name == b[j].name;
    return i == na;
}

static void find_short_rows(graph_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const graph_row *a = &rows[i];
        size_t best = SIZE_MAX;
        for (size_t j = 0; a->n_kernels && j < n; j++) {
            const graph_row *b = &rows[j];
            if (b->n_kernels <= a->n_kernels || b->end - b->first <= a->end - a->first ||
                !is_subsequence(a->kernels, a->n_kernels, b->kernels, b->n_kernels))
                continue;
            if (best == SIZE_MAX || b->end - b->first > rows[best].end - rows[best].first)
                best = j;
        }
        rows[i].short_of = best;
    }
}

/* Adds a GPU event, in start order, to its replay; 1 when it is a kernel. */
static int add_event(const hta_trace *t, replay *r, const hta_event *e)
{
    int64_t end = hta_event_end(e);
    if (r->gpu_events++ == 0) {
        r->first_ns = e->ts_ns;
        r->busy_end_ns = e->ts_ns;
    }
    r->last_end_ns = end > r->last_end_ns ? end : r->last_end_ns;
    if (end > r->busy_end_ns) {
        r->busy_ns += end - (e->ts_ns > r->busy_end_ns ? e->ts_ns : r->busy_end_ns);
        r->busy_end_ns = end;
    }
    if (strcmp(hta_event_category(t, e), "kernel") != 0)
        return 0;
    if (r->kernels++ == 0)
        r->first_kernel = e->name;
    r->signature = hash_name(r->signature, hta_event_name(t, e));
    return 1;
}

/* Replays by signature, unrecorded ones (signature 0) first, then by
 * call time. */
static int compare_signature(const void *a, const void *b)
{
    const replay *x = a, *y = b;
    if (x->signature != y->signature)
        return x->signature < y->signature ? -1 : 1;
    return (x->call->ts_ns > y->call->ts_ns) - (x->call->ts_ns < y->call->ts_ns);
}

static double median_us(double *v, size_t n)
{
    hta_sort_doubles(v, n);
    return n ? hta_quantile_sorted(v, n, 0.5) : NAN;
}

static int put_row(hta_table *t, const hta_rank_view *v, const replay *r, size_t n,
                   const replay *short_of, double *scratch)
{
    char signature[17] = "", full[17] = "";
    if (r[0].signature)
        snprintf(signature, sizeof signature, "%016" PRIx64, r[0].signature);
    if (short_of)
        snprintf(full, sizeof full, "%016" PRIx64, short_of->signature);
    int64_t recorded = 0, kernels = 0, events = 0, lo = INT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        recorded += r[i].gpu_events > 0;
        kernels += r[i].kernels;
        events += r[i].gpu_events;
        lo = r[i].kernels < lo ? r[i].kernels : lo;
        hi = r[i].kernels > hi ? r[i].kernels : hi;
    }
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, v->rank_key);
    hta_row_put_str(&row, signature);
    hta_row_put_str(&row, r[0].first_kernel == UINT32_MAX
                              ? "" : hta_strtab_get(&v->trace->names, r[0].first_kernel));
    hta_row_put_i64(&row, (int64_t)n);
    hta_row_put_i64(&row, recorded);
    hta_row_put_i64(&row, kernels);
    hta_row_put_i64(&row, events);
    hta_row_put_i64(&row, lo);
    hta_row_put_i64(&row, hi);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].gpu_events)
            scratch[k++] = hta_ns_to_us(r[i].last_end_ns - r[i].first_ns);
    hta_row_put_f64(&row, median_us(scratch, k));
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].gpu_events)
            scratch[k++] = hta_ns_to_us(r[i].busy_ns);
    hta_row_put_f64(&row, median_us(scratch, k));
    for (size_t i = 0; i < n; i++)
        scratch[i] = hta_ns_to_us(r[i].call->dur_ns);
    hta_row_put_f64(&row, median_us(scratch, n));
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].gpu_events)
            scratch[k++] = hta_ns_to_us(r[i].first_ns - r[i].call->ts_ns);
    hta_row_put_f64(&row, median_us(scratch, k));
    hta_row_put_i64(&row, short_of ? recorded : 0);
    hta_row_put_str(&row, full);
    return hta_row_done(&row);
}

/* Each call's GPU events into its replay (r sorted by call), and the
 * recorded kernels into k (*n_kernels of them, sorted by call). */
static void collect_replays(const hta_rank_view *view, replay *r, size_t n, replay_kernel *k,
                            size_t *n_kernels)
{
    *n_kernels = 0;
    for (size_t i = 0; i < view->n_gpu; i++) {
        const hta_event *call = hta_rank_view_launch(view, view->gpu[i]);
        replay key = {.call = call};
        replay *hit = call ? bsearch(&key, r, n, sizeof *r, compare_call) : NULL;
        if (hit && add_event(view->trace, hit, view->gpu[i]))
            k[(*n_kernels)++] = (replay_kernel){call, view->gpu[i]->name, (uint32_t)i};
    }
    qsort(k, *n_kernels, sizeof *k, compare_replay_kernel);
}

/* The rows of r (sorted by signature) into rows (*n_rows of them). */
static void group_rows(const replay *r, size_t n, const replay_kernel *k, size_t n_kernels,
                       graph_row *rows, size_t *n_rows)
{
    *n_rows = 0;
    for (size_t i = 0, end; i < n; i = end) {
        for (end = i + 1; end < n && r[end].signature == r[i].signature;)
            end++;
        graph_row *row = &rows[(*n_rows)++];
        *row = (graph_row){.first = i, .end = end};
        row->kernels = kernels_of(k, n_kernels, r[i].call, &row->n_kernels);
    }
    find_short_rows(rows, *n_rows);
}

static int put_rows(const hta_rank_view *view, const replay *r, size_t n, const graph_row *rows,
                    size_t n_rows, hta_tableset *out)
{
    hta_table *t = hta_tableset_table(out, &hta_graph_launches_table);
    double *scratch = malloc(n * sizeof *scratch);
    int rc = t && scratch ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n_rows; i++) {
        const graph_row *row = &rows[i];
        const replay *full = row->short_of == SIZE_MAX ? NULL : &r[rows[row->short_of].first];
        rc = put_row(t, view, &r[row->first], row->end - row->first, full, scratch);
    }
    free(scratch);
    return rc;
}

int hta_graph_launches(const hta_rank_view *view, hta_tableset *out, hta_error *err)
{
    size_t n = 0, n_kernels, n_rows;
    int failed = 0;
    replay *r = find_calls(view->trace, &n, &failed);
    if (n == 0) {
        free(r);
        return failed ? hta_fail(err, "out of memory listing the graph launches") : 0;
    }
    replay_kernel *k = malloc((view->n_gpu ? view->n_gpu : 1) * sizeof *k);
    graph_row *rows = malloc(n * sizeof *rows);
    int rc = k && rows ? 0 : -1;
    if (rc == 0) {
        qsort(r, n, sizeof *r, compare_call);
        collect_replays(view, r, n, k, &n_kernels);
        qsort(r, n, sizeof *r, compare_signature);
        group_rows(r, n, k, n_kernels, rows, &n_rows);
        rc = put_rows(view, r, n, rows, n_rows, out);
    }
    free(rows);
    free(k);
    free(r);
    return rc ? hta_fail(err, "out of memory listing the graph launches") : 0;
}

/* The rank's launches, recorded replays and short replays. */
typedef struct coverage {
    int64_t launches, recorded, short_replays;
} coverage;

static coverage coverage_of(const hta_tableset *set, int64_t rank_key)
{
    const hta_table *t = hta_tableset_find(set, hta_graph_launches_table.name);
    coverage c = {0, 0, 0};
    for (size_t r = 0; t && r < t->n_rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        if (row[HTA_GRAPH_LAUNCHES_RANK].i != rank_key)
            continue;
        c.launches += row[HTA_GRAPH_LAUNCHES_LAUNCHES].i;
        c.recorded += row[HTA_GRAPH_LAUNCHES_RECORDED].i;
        c.short_replays += row[HTA_GRAPH_LAUNCHES_SHORT_REPLAYS].i;
    }
    return c;
}

int64_t *hta_graph_under_recorded_ranks(const hta_tableset *set, size_t *n)
{
    const hta_table *t = hta_tableset_find(set, hta_graph_launches_table.name);
    size_t rows = t ? t->n_rows : 0;
    int64_t *ranks = malloc((rows ? rows : 1) * sizeof *ranks);
    *n = 0;
    for (size_t r = 0; ranks && r < rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        int64_t rank = row[HTA_GRAPH_LAUNCHES_RANK].i;
        int under = row[HTA_GRAPH_LAUNCHES_RECORDED].i < row[HTA_GRAPH_LAUNCHES_LAUNCHES].i ||
                    row[HTA_GRAPH_LAUNCHES_SHORT_REPLAYS].i > 0;
        if (under && (*n == 0 || ranks[*n - 1] != rank))
            ranks[(*n)++] = rank;
    }
    return ranks;
}

void hta_graph_launches_note(const hta_tableset *set, int64_t rank_key, hta_error *notes)
{
    coverage c = coverage_of(set, rank_key);
    if (c.recorded == c.launches && c.short_replays == 0)
        return;
    char missing[96] = "", shortened[96] = "";
    if (c.recorded < c.launches)
        snprintf(missing, sizeof missing, "%lld of %lld graph launches have no GPU event",
                 (long long)(c.launches - c.recorded), (long long)c.launches);
    if (c.short_replays)
        snprintf(shortened, sizeof shortened, "%lld of %lld graph replays have fewer kernels "
                 "than their graph", (long long)c.short_replays, (long long)c.recorded);
    size_t len = strlen(notes->text);
    snprintf(notes->text + len, sizeof notes->text - len,
             "%sgraph replays under-recorded: %s%s%s, so idle time is an upper bound",
             len ? "; " : "", missing, *missing && *shortened ? " and " : "", shortened);
}
