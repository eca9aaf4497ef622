/* gpu_gaps.c: why the GPU sat idle ("gpu_gaps", "sync_calls",
 * docs/definitions.md, GPU gaps).
 *
 * A gap is a stretch between two GPU events (any stream, any kind) that
 * no GPU event covers: the complement of the union of the rank's GPU
 * events within its GPU span.  Every gap at least --gap-threshold long is
 * a row: its ProfilerStep, start, duration, the GPU events before it (the
 * last to end) and after it, the next event's launch delay (its start
 * minus its launch call's end), the
 * CPU event (cpu_op or user_annotation) overlapping the gap most on the
 * thread that launched the next event (the shortest on ties), the
 * synchronising call overlapping it most, and a cause, the first that
 * holds of:
 *   sync         a synchronising call overlaps the gap;
 *   dataloader   an enumerate(DataLoader)* annotation overlaps it;
 *   cpu_op       the next event was launched after the gap began, and a
 *                cpu_op on the launching thread covers half the gap or
 *                more: the CPU was busy in it;
 *   launch_delay the next event was launched after the gap began;
 *   unknown      otherwise (it waited on something else: another stream,
 *                an event, a dependency outside the trace).
 * "sync_calls": per synchronising API, count, total and longest duration
 * and the GPU idle time within the calls.  The idle time in gaps at or
 * above and below the threshold goes to /rank_metrics. */
#include "analysis/gpu_gaps.h"

#include "analysis/metrics.h"
#include "model/cpu_context.h"
#include "numerics/bounds.h"
#include "util/grow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const hta_column GAP_COLUMNS[HTA_GPU_GAPS_N_COLUMNS] = {
    [HTA_GPU_GAPS_RANK] = {"rank", HTA_COL_I64},
    [HTA_GPU_GAPS_STEP] = {"step", HTA_COL_I64},
    [HTA_GPU_GAPS_START_US] = {"start_us", HTA_COL_F64},
    [HTA_GPU_GAPS_DURATION_US] = {"duration_us", HTA_COL_F64},
    [HTA_GPU_GAPS_GPU_EVENT_BEFORE] = {"gpu_event_before", HTA_COL_STR},
    [HTA_GPU_GAPS_GPU_EVENT_AFTER] = {"gpu_event_after", HTA_COL_STR},
    [HTA_GPU_GAPS_LAUNCH_DELAY_US] = {"launch_delay_us", HTA_COL_F64},
    [HTA_GPU_GAPS_CPU_EVENT] = {"cpu_event", HTA_COL_STR},
    [HTA_GPU_GAPS_CPU_EVENT_OVERLAP_US] = {"cpu_event_overlap_us", HTA_COL_F64},
    [HTA_GPU_GAPS_SYNC_CALL] = {"sync_call", HTA_COL_STR},
    [HTA_GPU_GAPS_CAUSE] = {"cause", HTA_COL_STR},
};
const hta_table_spec hta_gpu_gaps_table = {
    "gpu_gaps", GAP_COLUMNS, HTA_GPU_GAPS_N_COLUMNS, HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

static const hta_column SYNC_COLUMNS[HTA_SYNC_CALLS_N_COLUMNS] = {
    [HTA_SYNC_CALLS_RANK] = {"rank", HTA_COL_I64},
    [HTA_SYNC_CALLS_API] = {"api", HTA_COL_STR},
    [HTA_SYNC_CALLS_COUNT] = {"count", HTA_COL_I64},
    [HTA_SYNC_CALLS_TOTAL_US] = {"total_us", HTA_COL_F64},
    [HTA_SYNC_CALLS_MAX_US] = {"max_us", HTA_COL_F64},
    [HTA_SYNC_CALLS_GPU_IDLE_US] = {"gpu_idle_us", HTA_COL_F64},
};
const hta_table_spec hta_sync_calls_table = {
    "sync_calls", SYNC_COLUMNS, HTA_SYNC_CALLS_N_COLUMNS, HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

/* The synchronising calls: the CPU waits for the GPU in them. */
static const char *const SYNC_APIS[] = {
    "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
    "cudaStreamWaitEvent", "cudaMemcpy", "aten::item", "aten::_local_scalar_dense",
    "hipDeviceSynchronize", "hipStreamSynchronize", "hipEventSynchronize",
    "hipStreamWaitEvent", "hipMemcpy",
};
#define N_SYNC_APIS (sizeof SYNC_APIS / sizeof SYNC_APIS[0])

typedef struct gap {
    int64_t start, end;
    const hta_event *before, *after, *launch;
    const hta_event *cpu_event, *sync;
    int64_t cpu_overlap, sync_overlap;
    int64_t step;
    uint32_t launch_thread;
    int dataloader;
} gap;

typedef struct sync_api {
    uint32_t name;             /* id in the trace, UINT32_MAX when absent */
    int64_t count, total_ns, max_ns, idle_ns;
} sync_api;

/* A call's times are copied beside it: the gaps look them up often and
 * the events lie scattered over the trace. */
typedef struct sync_call {
    int64_t ts, end;
    int64_t max_end;           /* of the calls up to this one */
    size_t api;
} sync_call;

typedef struct run {
    const hta_rank_view *view;
    hta_cpu_contexts contexts;
    sync_api apis[N_SYNC_APIS];
    unsigned char *api_of_name; /* per name id: sync API index + 1, or 0 */
    sync_call *calls;
    size_t n_calls;
    size_t next_call;          /* the first call starting at or after the last gap's end */
    gap *gaps;
    size_t n_gaps, cap_gaps;
    int64_t idle_above_ns, idle_below_ns;
    uint32_t cpu_op, user_annotation;
} run;

static long sync_api_of(const run *r, const hta_event *e)
{
    return (long)r->api_of_name[e->name] - 1;
}

static int compare_calls(const void *a, const void *b)
{
    const sync_call *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

static int collect_sync_calls(run *r)
{
    const hta_trace *t = r->view->trace;
    r->api_of_name = calloc((size_t)t->names.count + 1, 1);
    if (!r->api_of_name)
        return -1;
    for (size_t k = 0; k < N_SYNC_APIS; k++) {
        r->apis[k] = (sync_api){.name = hta_strtab_find(&t->names, SYNC_APIS[k],
                                                        strlen(SYNC_APIS[k]))};
        if (r->apis[k].name != UINT32_MAX)
            r->api_of_name[r->apis[k].name] = (unsigned char)(k + 1);
    }
    size_t cap = 0;
    for (size_t i = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        long k = hta_event_is_gpu(e) ? -1 : sync_api_of(r, e);
        if (k < 0)
            continue;
        if (hta_grow_array((void **)&r->calls, &cap, r->n_calls + 1, sizeof *r->calls))
            return -1;
        sync_api *api = &r->apis[k];
        api->count++;
        api->total_ns += e->dur_ns;
        api->max_ns = e->dur_ns > api->max_ns ? e->dur_ns : api->max_ns;
        r->calls[r->n_calls++] = (sync_call){e->ts_ns, hta_event_end(e), 0, (size_t)k};
    }
    if (r->n_calls)
        qsort(r->calls, r->n_calls, sizeof *r->calls, compare_calls);
    for (size_t i = 0; i < r->n_calls; i++) {
        int64_t end = r->calls[i].end;
        r->calls[i].max_end = i && r->calls[i - 1].max_end > end ? r->calls[i - 1].max_end : end;
    }
    return 0;
}

/* Adds the GPU idle time of [start, end) to the sync calls overlapping it.
 * The idle stretches come in order, so the first call starting at or
 * after one's end only moves forward. */
static void credit_sync_calls(run *r, int64_t start, int64_t end)
{
    size_t lo = r->next_call;
    while (lo < r->n_calls && r->calls[lo].ts < end)
        lo++;
    r->next_call = lo;
    for (size_t i = lo; i > 0 && r->calls[i - 1].max_end > start; i--) {
        const sync_call *c = &r->calls[i - 1];
        int64_t a = c->ts > start ? c->ts : start;
        int64_t b = c->end < end ? c->end : end;
        if (b > a)
            r->apis[r->calls[i - 1].api].idle_ns += b - a;
    }
}

static int add_gap(run *r, int64_t start, int64_t end, const hta_event *before,
                   const hta_event *after)
{
    if (hta_grow_array((void **)&r->gaps, &r->cap_gaps, r->n_gaps + 1, sizeof *r->gaps))
        return -1;
    const hta_event *launch = hta_rank_view_launch(r->view, after);
    r->gaps[r->n_gaps++] = (gap){
        .start = start, .end = end, .before = before, .after = after, .launch = launch,
        .step = -1,
        .launch_thread = launch ? hta_cpu_context_of(&r->contexts, launch)->thread : UINT32_MAX};
    return 0;
}

/* The gaps of the union of the GPU work (host waits, cuda_sync records,
 * are none: the GPU is idle while the host waits on it), in order. */
static int find_gaps(run *r, int64_t threshold_ns)
{
    const hta_rank_view *v = r->view;
    const hta_event *last = NULL;
    int64_t covered = 0;
    for (size_t i = 0; i < v->n_gpu; i++) {
        const hta_event *e = v->gpu[i];
        if (hta_rank_view_is_wait(v, e))
            continue;
        int64_t end = hta_rank_view_work_end(v, i);
        if (!last) {
            last = e;
            covered = end;
            continue;
        }
        if (e->ts_ns > covered) {
            int64_t length = e->ts_ns - covered;
            credit_sync_calls(r, covered, e->ts_ns);
            if (length >= threshold_ns) {
                r->idle_above_ns += length;
                if (add_gap(r, covered, e->ts_ns, last, e))
                    return -1;
            } else {
                r->idle_below_ns += length;
            }
        }
        if (end >= covered) {
            covered = end;
            last = e;
        }
    }
    return 0;
}

static int is_dataloader(const char *name)
{
    return strncmp(name, "enumerate(DataLoader)", 21) == 0;
}

static int is_step(const char *name)
{
    return strncmp(name, "ProfilerStep#", 13) == 0;
}

/* What one CPU event tells the gaps it overlaps. */
static void note_cpu_event(run *r, gap *g, const hta_event *e, const char *name)
{
    int64_t a = e->ts_ns > g->start ? e->ts_ns : g->start;
    int64_t b = hta_event_end(e) < g->end ? hta_event_end(e) : g->end;
    int64_t overlap = b - a;
    if (overlap <= 0 && !(e->dur_ns == 0 && e->ts_ns >= g->start && e->ts_ns < g->end))
        return;
    if (sync_api_of(r, e) >= 0 && (!g->sync || overlap > g->sync_overlap)) {
        g->sync = e;
        g->sync_overlap = overlap;
    }
    if (e->cat != r->cpu_op && e->cat != r->user_annotation)
        return;
    if (is_step(name)) {
        if (g->start >= e->ts_ns && g->start < hta_event_end(e))
            g->step = strtoll(name + 13, NULL, 10);
        return;
    }
    g->dataloader |= is_dataloader(name);
    if (hta_cpu_context_of(&r->contexts, e)->thread != g->launch_thread)
        return;
    if (!g->cpu_event || overlap > g->cpu_overlap ||
        (overlap == g->cpu_overlap && e->dur_ns < g->cpu_event->dur_ns)) {
        g->cpu_event = e;
        g->cpu_overlap = overlap;
    }
}

/* Walks the CPU events once, each against the gaps it overlaps. */
static void explain_gaps(run *r)
{
    const hta_trace *t = r->view->trace;
    for (size_t i = 0; r->n_gaps && i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        if (hta_event_is_gpu(e))
            continue;
        /* the first gap ending after e starts */
        size_t lo = HTA_UPPER_BOUND(r->gaps, r->n_gaps, end, e->ts_ns);
        const char *name = NULL;
        for (size_t k = lo; k < r->n_gaps && r->gaps[k].start <= hta_event_end(e); k++) {
            name = name ? name : hta_event_name(t, e);
            note_cpu_event(r, &r->gaps[k], e, name);
        }
    }
}

static const char *cause_of(const run *r, const gap *g)
{
    if (g->sync)
        return "sync";
    if (g->dataloader)
        return "dataloader";
    if (!g->launch || g->launch->ts_ns < g->start)
        return "unknown";
    if (g->cpu_event && g->cpu_event->cat == r->cpu_op &&
        2 * g->cpu_overlap >= g->end - g->start)
        return "cpu_op";
    return "launch_delay";
}

static int put_gaps(run *r, hta_table *t)
{
    const hta_trace *trace = r->view->trace;
    for (size_t i = 0; i < r->n_gaps; i++) {
        const gap *g = &r->gaps[i];
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, r->view->rank_key);
        hta_row_put_i64(&row, g->step);
        hta_row_put_f64(&row, hta_ns_to_us(g->start));
        hta_row_put_f64(&row, hta_ns_to_us(g->end - g->start));
        hta_row_put_str(&row, hta_event_name(trace, g->before));
        hta_row_put_str(&row, hta_event_name(trace, g->after));
        hta_row_put_f64(&row, g->launch ? hta_ns_to_us(g->after->ts_ns - hta_event_end(g->launch))
                                        : NAN);
        hta_row_put_str(&row, g->cpu_event ? hta_event_name(trace, g->cpu_event) : "");
        hta_row_put_f64(&row, g->cpu_event ? hta_ns_to_us(g->cpu_overlap) : 0.0);
        hta_row_put_str(&row, g->sync ? hta_event_name(trace, g->sync) : "");
        hta_row_put_str(&row, cause_of(r, g));
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

static int put_sync_calls(run *r, hta_table *t)
{
    for (size_t k = 0; k < N_SYNC_APIS; k++) {
        const sync_api *api = &r->apis[k];
        if (!api->count)
            continue;
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, r->view->rank_key);
        hta_row_put_str(&row, SYNC_APIS[k]);
        hta_row_put_i64(&row, api->count);
        hta_row_put_f64(&row, hta_ns_to_us(api->total_ns));
        hta_row_put_f64(&row, hta_ns_to_us(api->max_ns));
        hta_row_put_f64(&row, hta_ns_to_us(api->idle_ns));
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

static int emit_metrics(const run *r, hta_tableset *out)
{
    int64_t key = r->view->rank_key;
    return hta_emit_metric(out, key, HTA_METRIC_GPU_GAP_IDLE_ABOVE_THRESHOLD_US, NULL,
                           hta_ns_to_us(r->idle_above_ns)) |
           hta_emit_metric(out, key, HTA_METRIC_GPU_GAP_IDLE_BELOW_THRESHOLD_US, NULL,
                           hta_ns_to_us(r->idle_below_ns)) |
           hta_emit_metric(out, key, HTA_METRIC_GPU_GAPS_ABOVE_THRESHOLD, NULL, (double)r->n_gaps);
}

int hta_gpu_gaps(const hta_rank_view *v, const hta_analysis_settings *opt, hta_tableset *out,
                 hta_error *err)
{
    hta_table *gaps = hta_tableset_table(out, &hta_gpu_gaps_table);
    hta_table *sync = hta_tableset_table(out, &hta_sync_calls_table);
    const hta_trace *t = v->trace;
    run r = {.view = v, .cpu_op = hta_strtab_find(&t->categories, "cpu_op", 6),
             .user_annotation = hta_strtab_find(&t->categories, "user_annotation", 15)};
    int rc = gaps && sync ? 0 : -1;
    int have_contexts = rc == 0 && hta_cpu_contexts_build(&r.contexts, t) == 0;
    rc = have_contexts ? 0 : -1;
    if (rc == 0)
        rc = collect_sync_calls(&r) ||
             find_gaps(&r, (int64_t)llround(opt->gap_threshold_us * 1000.0));
    if (rc == 0) {
        explain_gaps(&r);
        rc = put_gaps(&r, gaps) || put_sync_calls(&r, sync) ||
             (v->n_work && emit_metrics(&r, out));
    }
    if (have_contexts)
        hta_cpu_contexts_free(&r.contexts);
    free(r.calls);
    free(r.gaps);
    free(r.api_of_name);
    return rc ? hta_fail(err, "out of memory in the GPU gap analysis") : 0;
}
