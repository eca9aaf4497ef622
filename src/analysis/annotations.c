/* annotations.c: time per user annotation ("annotations",
 * docs/definitions.md, CPU ops and user annotations; HTA's
 * get_gpu_user_annotation_breakdown on the GPU and on the CPU, and
 * get_gpu_kernels_with_user_annotations).
 *
 * A gpu_user_annotation is a range on one stream (its tid).  Each GPU event
 * on that stream (kernel, memcpy, memset) belongs to the shortest
 * annotation overlapping it there, both taken as [start, end): HTA paints
 * the annotations longest first, each over every event it overlaps, so
 * the last, shortest one wins; on equal durations the later start does
 * here.  ProfilerStep#N ranges are left out on both sides: they are the
 * step filter's business, and would only swallow the kernels no other
 * annotation covers.  Per (rank, name), over the names of either side:
 *   count, sum / mean / min / max / sample std (0 for one) of the GPU
 *   annotation durations; the GPU events attributed, their summed
 *   duration, and of it COMPUTATION and COMMUNICATION kernels' durations;
 *   the same statistics of the CPU user_annotation durations.
 * Rows by name.  With --detail, "detail/gpu_events" lists every GPU event
 * of every stream with the annotation it was credited to ("" for none):
 * get_gpu_kernels_with_user_annotations' rows, stream by stream in start
 * order. */
#define _GNU_SOURCE /* qsort_r */
#include "analysis/annotations.h"
#include "model/cpu_context.h"
#include "numerics/stats.h"
#include "util/grow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const hta_column COLUMNS[HTA_ANNOTATIONS_N_COLUMNS] = {
    [HTA_ANNOTATIONS_RANK] = {"rank", HTA_COL_I64},
    [HTA_ANNOTATIONS_NAME] = {"name", HTA_COL_STR},
    [HTA_ANNOTATIONS_COUNT] = {"count", HTA_COL_I64},
    [HTA_ANNOTATIONS_SUM_US] = {"sum_us", HTA_COL_F64},
    [HTA_ANNOTATIONS_MEAN_US] = {"mean_us", HTA_COL_F64},
    [HTA_ANNOTATIONS_MIN_US] = {"min_us", HTA_COL_F64},
    [HTA_ANNOTATIONS_MAX_US] = {"max_us", HTA_COL_F64},
    [HTA_ANNOTATIONS_STD_US] = {"std_us", HTA_COL_F64},
    [HTA_ANNOTATIONS_GPU_EVENTS] = {"gpu_events", HTA_COL_I64},
    [HTA_ANNOTATIONS_GPU_EVENT_TIME_US] = {"gpu_event_time_us", HTA_COL_F64},
    [HTA_ANNOTATIONS_COMPUTE_US] = {"compute_us", HTA_COL_F64},
    [HTA_ANNOTATIONS_COMMUNICATION_US] = {"communication_us", HTA_COL_F64},
    [HTA_ANNOTATIONS_CPU_COUNT] = {"cpu_count", HTA_COL_I64},
    [HTA_ANNOTATIONS_CPU_SUM_US] = {"cpu_sum_us", HTA_COL_F64},
    [HTA_ANNOTATIONS_CPU_MEAN_US] = {"cpu_mean_us", HTA_COL_F64},
    [HTA_ANNOTATIONS_CPU_MIN_US] = {"cpu_min_us", HTA_COL_F64},
    [HTA_ANNOTATIONS_CPU_MAX_US] = {"cpu_max_us", HTA_COL_F64},
    [HTA_ANNOTATIONS_CPU_STD_US] = {"cpu_std_us", HTA_COL_F64},
};
const hta_table_spec hta_annotations_table = {
    "annotations", COLUMNS, HTA_ANNOTATIONS_N_COLUMNS, HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

/* Durations of one side: count, sum, min, max and Welford's running
 * mean and squares. */
typedef struct durations {
    int64_t count, sum_ns, min_ns, max_ns;
    double mean, m2;
} durations;

static const hta_column EVENT_COLUMNS[HTA_DETAIL_GPU_EVENTS_N_COLUMNS] = {
    [HTA_DETAIL_GPU_EVENTS_RANK] = {"rank", HTA_COL_I64},
    [HTA_DETAIL_GPU_EVENTS_TS_US] = {"ts_us", HTA_COL_F64},
    [HTA_DETAIL_GPU_EVENTS_DUR_US] = {"dur_us", HTA_COL_F64},
    [HTA_DETAIL_GPU_EVENTS_STREAM] = {"stream", HTA_COL_I64},
    [HTA_DETAIL_GPU_EVENTS_CORRELATION] = {"correlation", HTA_COL_I64},
    [HTA_DETAIL_GPU_EVENTS_NAME] = {"name", HTA_COL_STR},
    [HTA_DETAIL_GPU_EVENTS_ANNOTATION] = {"annotation", HTA_COL_STR},
};
const hta_table_spec hta_detail_gpu_events_table = {
    "detail/gpu_events", EVENT_COLUMNS, HTA_DETAIL_GPU_EVENTS_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

typedef struct name_stats {
    uint32_t name;
    durations gpu, cpu;
    int64_t gpu_events, gpu_event_ns, compute_ns, communication_ns;
} name_stats;

typedef struct annotation {
    const hta_event *e;
    uint32_t group;
    int64_t stream;
} annotation;

typedef struct run {
    const hta_rank_view *view;
    uint32_t *group_of_name;   /* UINT32_MAX = none */
    name_stats *stats;
    size_t n_stats, cap_stats;
    annotation *gpu;           /* the GPU annotations */
    size_t n_gpu, cap_gpu;
    hta_table *events;         /* detail/gpu_events, or NULL without --detail */
} run;

static void add_duration(durations *d, int64_t ns)
{
    if (d->count == 0)
        d->min_ns = d->max_ns = ns;
    d->min_ns = ns < d->min_ns ? ns : d->min_ns;
    d->max_ns = ns > d->max_ns ? ns : d->max_ns;
    d->count++;
    d->sum_ns += ns;
    double delta = (double)ns - d->mean;
    d->mean += delta / (double)d->count;
    d->m2 += delta * ((double)ns - d->mean);
}

static int is_step(const hta_trace *t, const hta_event *e)
{
    return strncmp(hta_event_name(t, e), "ProfilerStep#", 13) == 0;
}

/* The group of a name, UINT32_MAX when out of memory. */
static uint32_t group_of(run *r, uint32_t name)
{
    if (r->group_of_name[name] == UINT32_MAX) {
        if (hta_grow_array((void **)&r->stats, &r->cap_stats, r->n_stats + 1, sizeof *r->stats))
            return UINT32_MAX;
        r->stats[r->n_stats] = (name_stats){.name = name};
        r->group_of_name[name] = (uint32_t)r->n_stats++;
    }
    return r->group_of_name[name];
}

/* Collects both sides' annotations; -1 when out of memory. */
static int collect(run *r, const hta_cpu_contexts *contexts)
{
    const hta_trace *t = r->view->trace;
    uint32_t gpu_cat = hta_strtab_find(&t->categories, "gpu_user_annotation", 19);
    uint32_t cpu_cat = hta_strtab_find(&t->categories, "user_annotation", 15);
    r->cap_stats = r->cap_gpu = 64;
    r->group_of_name = malloc(((size_t)t->names.count + 1) * sizeof *r->group_of_name);
    r->stats = malloc(r->cap_stats * sizeof *r->stats);
    r->gpu = malloc(r->cap_gpu * sizeof *r->gpu);
    if (!r->group_of_name || !r->stats || !r->gpu)
        return -1;
    memset(r->group_of_name, 0xFF, (size_t)t->names.count * sizeof *r->group_of_name);
    for (size_t i = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        if (hta_event_is_gpu(e) || (e->cat != gpu_cat && e->cat != cpu_cat) || is_step(t, e))
            continue;
        uint32_t g = group_of(r, e->name);
        if (g == UINT32_MAX)
            return -1;
        if (e->cat == cpu_cat) {
            add_duration(&r->stats[g].cpu, e->dur_ns);
            continue;
        }
        add_duration(&r->stats[g].gpu, e->dur_ns);
        if (hta_grow_array((void **)&r->gpu, &r->cap_gpu, r->n_gpu + 1, sizeof *r->gpu))
            return -1;
        r->gpu[r->n_gpu++] = (annotation){e, g, hta_cpu_context_of(contexts, e)->tid};
    }
    return 0;
}

/* Stream, then longest first, then earlier start first: the order HTA
 * paints in, per stream. */
static int compare_painting(const void *a, const void *b)
{
    const annotation *x = a, *y = b;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if (x->e->dur_ns != y->e->dur_ns)
        return x->e->dur_ns > y->e->dur_ns ? -1 : 1;
    return (x->e->ts_ns > y->e->ts_ns) - (x->e->ts_ns < y->e->ts_ns);
}

/* First index of events (sorted by start) whose start is >= ts. */
static size_t first_at_or_after(const hta_event *const *events, size_t n, int64_t ts)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (events[mid]->ts_ns < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One detail/gpu_events row per event of the stream, with its label. */
static int put_event_rows(run *r, const hta_stream_work *s, const uint32_t *label)
{
    const hta_trace *trace = r->view->trace;
    for (size_t i = 0; i < s->n; i++) {
        const hta_event *e = s->events[i];
        hta_row_builder row = hta_table_add_row(r->events);
        hta_row_put_i64(&row, r->view->rank_key);
        hta_row_put_f64(&row, hta_ns_to_us(e->ts_ns));
        hta_row_put_f64(&row, hta_ns_to_us(e->dur_ns));
        hta_row_put_i64(&row, s->stream);
        hta_row_put_i64(&row, hta_event_correlation(trace, e));
        hta_row_put_str(&row, hta_event_name(trace, e));
        hta_row_put_str(&row, label[i] == UINT32_MAX
                                  ? "" : hta_strtab_get(&trace->names, r->stats[label[i]].name));
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

/* Paints one stream's events with the annotations a[0..n) (longest
 * first; none when n is 0) and credits each event to its annotation's
 * group. */
static void paint_stream(run *r, const hta_stream_work *s, const annotation *a, size_t n,
                         uint32_t *label, int64_t *max_end)
{
    for (size_t i = 0; i < s->n; i++) {
        label[i] = UINT32_MAX;
        int64_t end = hta_event_end(s->events[i]);
        max_end[i] = i && max_end[i - 1] > end ? max_end[i - 1] : end;
    }
    for (size_t k = 0; k < n; k++) {
        int64_t start = a[k].e->ts_ns, end = hta_event_end(a[k].e);
        size_t i = first_at_or_after(s->events, s->n, start);
        while (i > 0 && max_end[i - 1] > start)
            i--;               /* earlier starts still running at start */
        for (; i < s->n && s->events[i]->ts_ns < end; i++)
            if (hta_event_end(s->events[i]) > start)
                label[i] = a[k].group;
    }
    for (size_t i = 0; i < s->n; i++) {
        if (label[i] == UINT32_MAX)
            continue;
        name_stats *st = &r->stats[label[i]];
        const hta_event *e = s->events[i];
        st->gpu_events++;
        st->gpu_event_ns += e->dur_ns;
        st->compute_ns += e->kernel_type == HTA_KT_COMPUTATION ? e->dur_ns : 0;
        st->communication_ns += e->kernel_type == HTA_KT_COMMUNICATION ? e->dur_ns : 0;
    }
}

static int attribute_gpu_events(run *r)
{
    const hta_stream_work_set *work = &r->view->stream_work;
    qsort(r->gpu, r->n_gpu, sizeof *r->gpu, compare_painting);
    size_t longest = 1;
    for (size_t s = 0; s < work->n_streams; s++)
        longest = work->streams[s].n > longest ? work->streams[s].n : longest;
    uint32_t *label = malloc(longest * sizeof *label);
    int64_t *max_end = malloc(longest * sizeof *max_end);
    int rc = label && max_end ? 0 : -1;
    size_t k = 0;
    for (size_t s = 0; rc == 0 && s < work->n_streams; s++) {
        int64_t stream = work->streams[s].stream;
        while (k < r->n_gpu && r->gpu[k].stream < stream)
            k++;
        size_t end = k;
        while (end < r->n_gpu && r->gpu[end].stream == stream)
            end++;
        if (end > k || r->events)
            paint_stream(r, &work->streams[s], r->gpu + k, end - k, label, max_end);
        if (r->events)
            rc = put_event_rows(r, &work->streams[s], label);
        k = end;
    }
    free(label);
    free(max_end);
    return rc;
}

static void put_durations(hta_row_builder *row, const durations *d)
{
    hta_row_put_i64(row, d->count);
    hta_row_put_f64(row, hta_ns_to_us(d->sum_ns));
    hta_row_put_f64(row, d->count ? d->mean / 1000.0 : NAN);
    hta_row_put_f64(row, d->count ? hta_ns_to_us(d->min_ns) : NAN);
    hta_row_put_f64(row, d->count ? hta_ns_to_us(d->max_ns) : NAN);
    hta_row_put_f64(row, hta_std_from_squares(d->m2, (size_t)d->count) / 1000.0);
}

static int compare_names(const void *a, const void *b, void *trace)
{
    const hta_strtab *names = &((const hta_trace *)trace)->names;
    return strcmp(hta_strtab_get(names, ((const name_stats *)a)->name),
                  hta_strtab_get(names, ((const name_stats *)b)->name));
}

static int put_rows(hta_table *t, run *r)
{
    const hta_trace *trace = r->view->trace;
    for (size_t g = 0; g < r->n_stats; g++) {
        const name_stats *s = &r->stats[g];
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, r->view->rank_key);
        hta_row_put_str(&row, hta_strtab_get(&trace->names, s->name));
        put_durations(&row, &s->gpu);
        hta_row_put_i64(&row, s->gpu_events);
        hta_row_put_f64(&row, hta_ns_to_us(s->gpu_event_ns));
        hta_row_put_f64(&row, hta_ns_to_us(s->compute_ns));
        hta_row_put_f64(&row, hta_ns_to_us(s->communication_ns));
        put_durations(&row, &s->cpu);
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

int hta_annotations(const hta_rank_view *v, const hta_analysis_settings *opt, hta_tableset *out,
                    hta_error *err)
{
    hta_table *t = hta_tableset_table(out, &hta_annotations_table);
    run r = {.view = v};
    if (opt->detail && v->n_gpu > 0)
        r.events = hta_tableset_table(out, &hta_detail_gpu_events_table);
    hta_cpu_contexts contexts;
    int rc = t && (r.events || !opt->detail || v->n_gpu == 0) &&
                     hta_cpu_contexts_build(&contexts, v->trace) == 0 ? 0 : -1;
    if (rc == 0) {
        rc = collect(&r, &contexts) || attribute_gpu_events(&r);
        hta_cpu_contexts_free(&contexts);
    }
    if (rc == 0) {
        /* group_of_name is no longer read: groups may move. */
        qsort_r(r.stats, r.n_stats, sizeof *r.stats, compare_names, (void *)v->trace);
        rc = put_rows(t, &r);
    }
    free(r.group_of_name);
    free(r.stats);
    free(r.gpu);
    return rc ? hta_fail(err, "out of memory in the annotation breakdown") : 0;
}
