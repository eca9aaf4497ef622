/* rank_view.c: the sorted GPU events, correlation index, per-type
 * interval unions and per-stream work order every analysis shares (see
 * hta/analysis.h).  Built once per rank so that no analysis sorts, indexes
 * or merges the same events again. */
#include "hta/analysis.h"

#include <stdlib.h>
#include <string.h>

static int compare_gpu_events(const void *a, const void *b)
{
    const hta_event *x = a, *y = b;
    if (x->ts_ns != y->ts_ns)
        return x->ts_ns < y->ts_ns ? -1 : 1;
    if (x->dur_ns != y->dur_ns)
        return x->dur_ns < y->dur_ns ? -1 : 1;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if (x->correlation != y->correlation)
        return x->correlation < y->correlation ? -1 : 1;
    return (x->name > y->name) - (x->name < y->name);
}

int hta_rank_view_build(hta_rank_view *view, const hta_trace *trace, int64_t rank_key)
{
    memset(view, 0, sizeof *view);
    view->trace = trace;
    view->rank_key = rank_key;
    size_t n_gpu = 0, n_cpu_correlated = 0;
    int64_t lowest = INT64_MAX, highest = INT64_MIN;
    for (size_t i = 0; i < trace->n_events; i++) {
        const hta_event *e = &trace->events[i];
        if (hta_event_is_gpu(e)) {
            n_gpu++;
        } else if (e->correlation >= 0) {
            n_cpu_correlated++;
            lowest = e->correlation < lowest ? e->correlation : lowest;
            highest = e->correlation > highest ? e->correlation : highest;
        }
    }
    view->gpu = malloc((n_gpu ? n_gpu : 1) * sizeof *view->gpu);
    if (!view->gpu ||
        hta_corrmap_init(&view->cpu_by_correlation, n_cpu_correlated, lowest, highest)) {
        hta_rank_view_free(view);
        return -1;
    }
    for (size_t i = 0; i < trace->n_events; i++) {
        const hta_event *e = &trace->events[i];
        if (hta_event_is_gpu(e))
            view->gpu[view->n_gpu++] = *e;
        else if (e->correlation >= 0)
            hta_corrmap_put_first(&view->cpu_by_correlation, e->correlation, (uint32_t)i);
    }
    qsort(view->gpu, view->n_gpu, sizeof *view->gpu, compare_gpu_events);
    for (size_t i = 0; i < view->n_gpu; i++) {
        if (i == 0 || hta_event_end(&view->gpu[i]) > view->gpu_end)
            view->gpu_end = hta_event_end(&view->gpu[i]);
    }
    view->gpu_start = view->n_gpu ? view->gpu[0].ts_ns : 0;
    if (hta_type_unions_build(&view->unions, view->gpu, view->n_gpu) ||
        hta_stream_work_build(&view->stream_work, trace)) {
        hta_rank_view_free(view);
        return -1;
    }
    return 0;
}

void hta_rank_view_free(hta_rank_view *view)
{
    free(view->gpu);
    hta_corrmap_free(&view->cpu_by_correlation);
    hta_type_unions_free(&view->unions);
    hta_stream_work_free(&view->stream_work);
    memset(view, 0, sizeof *view);
}

const hta_event *hta_rank_view_launch(const hta_rank_view *view, const hta_event *gpu)
{
    uint32_t index;
    if (gpu->correlation < 0 ||
        !hta_corrmap_get(&view->cpu_by_correlation, gpu->correlation, &index))
        return NULL;
    return &view->trace->events[index];
}
