/* step_filter.c: HTA's "drop the last profiler step" (definitions section 2).
 *
 * The last ProfilerStep is usually cut short by the end of profiling, so HTA
 * keeps CPU-side events that start before it (or, with include_last_step,
 * before its end) and only the GPU events launched by a kept CPU event.
 * Applies only when the rank has at least two distinct ProfilerStep#N
 * names; the trace is compacted in place.  The map of correlations holds
 * every CPU-side one with its first kept event, or marked not kept, so
 * that the GPU events whose correlation no CPU event carries are counted
 * as they are dropped; renumbered as the events move, it is then the
 * view's launch index, which would otherwise take two more passes over
 * the events. */

#include "model/step_filter.h"

#include <stdlib.h>
#include <string.h>

#include "util/corrmap.h"

static int is_profiler_step(const char *name)
{
    return strncmp(name, "ProfilerStep#", 13) == 0;
}

/* A GPU event with a correlation is judged by its launch; everything else
 * (CPU events, and GPU events without correlation) by its own start. */
static int is_cpu_side(const hta_event *e, int64_t correlation)
{
    return !(hta_event_is_gpu(e) && correlation >= 0);
}

/* What one pass over the events finds: the latest-starting
 * ProfilerStep#N event, and the range of the CPU-side correlations, which
 * sizes their map. */
typedef struct step_scan {
    const hta_event *last_step;    /* NULL unless two distinct step names */
    size_t n_correlated;
    int64_t lowest, highest;
} step_scan;

/* Names are tested once per name id rather than once per event; -1 when
 * out of memory. */
static int scan_events(const hta_trace *t, step_scan *scan)
{
    uint8_t *is_step = malloc(t->names.count + 1);
    if (!is_step)
        return -1;
    for (uint32_t id = 0; id < t->names.count; id++)
        is_step[id] = (uint8_t)is_profiler_step(hta_strtab_get(&t->names, id));
    uint32_t first_step_name = UINT32_MAX;
    int distinct_steps = 0;
    const hta_event *last = NULL;
    *scan = (step_scan){.lowest = INT64_MAX, .highest = INT64_MIN};
    for (size_t i = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        int64_t correlation = hta_event_correlation(t, e);
        if (!is_cpu_side(e, correlation))
            continue;
        if (correlation >= 0) {
            scan->n_correlated++;
            scan->lowest = correlation < scan->lowest ? correlation : scan->lowest;
            scan->highest = correlation > scan->highest ? correlation : scan->highest;
        }
        if (!is_step[e->name])
            continue;
        if (first_step_name == UINT32_MAX)
            first_step_name = e->name;
        if (e->name != first_step_name)
            distinct_steps = 2;
        if (!last || e->ts_ns > last->ts_ns)
            last = e;
    }
    free(is_step);
    scan->last_step = distinct_steps < 2 ? NULL : last;
    return 0;
}

/* Where the filter cuts: CPU-side events that start before `at` (or, with
 * include_last_step, at it) are kept.  Without a cut every event is. */
typedef struct step_cut {
    int applies, include_last_step;
    int64_t at;
} step_cut;

static int is_before(const step_cut *cut, const hta_event *e)
{
    return !cut->applies || (cut->include_last_step ? e->ts_ns <= cut->at : e->ts_ns < cut->at);
}

/* The launch of a correlation whose CPU-side events all start after the
 * cut: its GPU events are dropped. */
#define NOT_KEPT (UINT32_MAX - 1)

/* Each correlation's first CPU-side event that the cut keeps, else
 * NOT_KEPT. */
static void index_launches(const hta_trace *t, const step_cut *cut, hta_corrmap *launches)
{
    for (size_t i = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        int64_t correlation = hta_event_correlation(t, e);
        if (!is_cpu_side(e, correlation) || correlation < 0)
            continue;
        uint32_t first;
        if (!is_before(cut, e))
            hta_corrmap_put_first(launches, correlation, NOT_KEPT);
        else if (!hta_corrmap_get(launches, correlation, &first) || first == NOT_KEPT)
            hta_corrmap_put(launches, correlation, (uint32_t)i);
    }
}

/* Compacts the kept events in place; a correlation's first kept CPU-side
 * event takes its new index in the launches. */
static void compact(hta_trace *t, const step_cut *cut, hta_corrmap *launches,
                    hta_step_filter_stats *stats)
{
    /* The extras are compacted along, so each event's is read in step
     * rather than searched for. */
    size_t out = 0, out_extras = 0, out_comm = 0;
    for (size_t i = 0, extra = 0, comm = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        int has_extra = extra < t->n_extras && t->extras[extra].event == i;
        hta_event_extra x = has_extra ? t->extras[extra++] : (hta_event_extra){0};
        int has_comm = comm < t->comm.n && t->comm.items[comm].event == i;
        comm += has_comm;
        int64_t correlation =
            e->flags & HTA_EVENT_WIDE_CORRELATION ? x.correlation : e->correlation;
        uint32_t first = NOT_KEPT;
        int cpu_side = is_cpu_side(e, correlation);
        int known = correlation >= 0 && hta_corrmap_get(launches, correlation, &first);
        int keep = cpu_side ? is_before(cut, e) : first != NOT_KEPT;
        if (!keep) {
            stats->dropped_gpu_events += hta_event_is_gpu(e);
            stats->unlaunched_gpu_events += !cpu_side && !known;
            continue;
        }
        if (cpu_side && first == i)
            hta_corrmap_put(launches, correlation, (uint32_t)out);
        if (has_extra) {
            x.event = out;
            t->extras[out_extras++] = x;
        }
        if (has_comm) {
            t->comm.items[out_comm] = t->comm.items[comm - 1];
            t->comm.items[out_comm++].event = out;
        }
        /* Events before the first dropped one stay where they are: not
         * rewriting them spares a large trace's array a write. */
        if (out != i)
            t->events[out] = *e;
        out++;
    }
    t->n_extras = out_extras;
    t->comm.n = out_comm;
    stats->dropped_events = t->n_events - out;
    t->n_events = out;
    /* Only now: until the last GPU event was judged, they told a dropped
     * launch from none. */
    hta_corrmap_remove_value(launches, NOT_KEPT);
}

int hta_step_filter(hta_trace *t, int include_last_step, hta_step_filter_stats *stats,
                    hta_corrmap *launches, hta_error *err)
{
    memset(stats, 0, sizeof *stats);
    *launches = (hta_corrmap){0};
    step_scan scan;
    if (scan_events(t, &scan) ||
        hta_corrmap_init(launches, scan.n_correlated, scan.lowest, scan.highest))
        return hta_fail(err, "out of memory in the step filter");
    step_cut cut = {.applies = scan.last_step != NULL, .include_last_step = include_last_step};
    if (cut.applies)
        cut.at = include_last_step ? hta_event_end(scan.last_step) : scan.last_step->ts_ns;
    index_launches(t, &cut, launches);
    if (cut.applies) {
        stats->applied = 1;
        compact(t, &cut, launches, stats);
    }
    return 0;
}
