/* step_filter.c: HTA's "drop the last profiler step" (definitions section 2).
 *
 * The last ProfilerStep is usually cut short by the end of profiling, so HTA
 * keeps CPU-side events that start before it (or, with include_last_step,
 * before its end) and only the GPU events launched by a kept CPU event.
 * Applies only when the rank has at least two distinct ProfilerStep#N
 * names; the trace is compacted in place.  The map of correlations holds
 * every CPU-side one, marked kept or not, so that the GPU events whose
 * correlation no CPU event carries are counted as they are dropped. */

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

int hta_step_filter(hta_trace *t, int include_last_step,
                    hta_step_filter_stats *stats, hta_error *err)
{
    memset(stats, 0, sizeof *stats);
    step_scan scan;
    if (scan_events(t, &scan))
        return hta_fail(err, "out of memory in the step filter");
    if (!scan.last_step)
        return 0;
    stats->applied = 1;
    const hta_event *last_step = scan.last_step;
    int64_t cutoff = include_last_step ? hta_event_end(last_step) : last_step->ts_ns;

    hta_corrmap kept;
    if (hta_corrmap_init(&kept, scan.n_correlated, scan.lowest, scan.highest))
        return hta_fail(err, "out of memory in the step filter");
    for (size_t i = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        int before = include_last_step ? e->ts_ns <= cutoff : e->ts_ns < cutoff;
        int64_t correlation = hta_event_correlation(t, e);
        if (!is_cpu_side(e, correlation) || correlation < 0)
            continue;
        if (before)
            hta_corrmap_put(&kept, correlation, 1);
        else
            hta_corrmap_put_first(&kept, correlation, 0);
    }
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
        uint32_t launched = 0;
        int cpu_side = is_cpu_side(e, correlation);
        int known = !cpu_side && hta_corrmap_get(&kept, correlation, &launched);
        int keep = cpu_side ? (include_last_step ? e->ts_ns <= cutoff : e->ts_ns < cutoff)
                            : launched == 1;
        if (!keep) {
            stats->dropped_gpu_events += hta_event_is_gpu(e);
            stats->unlaunched_gpu_events += !cpu_side && !known;
            continue;
        }
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
    hta_corrmap_free(&kept);
    return 0;
}
