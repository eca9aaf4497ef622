/* analysis/step_series.h: HTA's step-function time series.
 *
 * HTA's queue length and memory bandwidth are running sums of steps (+1
 * when a launch call starts and -1 when its GPU event starts; +bw when a
 * copy starts and -bw when it ends) sorted by time and split per stream or
 * copy kind, and HTA summarises the value after every step.  Where steps
 * tie in time their order changes those values; HTA sorts with pandas'
 * unstable sort, so the series are built in exactly that order (HTA's
 * concatenation order through hta_argsort_like_numpy), which reproduces
 * HTA's summaries to the last bit.
 *
 * The queue length is counted by two rules.  This series serves
 * /queue_length and the written traces' counter tracks, which sample it
 * once per time, after all of that time's steps, so that no tie order
 * changes them.  The critical path (analysis/critical_path_steps.c)
 * counts its own, as HTA's critical path does: not a series but each
 * kernel's queue at its launch and at its start, over the launches of
 * HTA_LAUNCH_STATS_APIS rather than HTA_LAUNCH_QUEUE_APIS, cuda_sync
 * events left out, and at one time launches before starts; numpy's tie
 * order here would give other values where a launch and a start tie, and
 * the path's launch edges would change. */
#ifndef HTA_STEP_SERIES_H
#define HTA_STEP_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "model/classify.h"
#include "model/rank_view.h"
#include "model/trace.h"


#define HTA_COPY_KIND_SIZE 16  /* "Memcpy Unknown" and NUL */

typedef struct hta_step_point {
    int64_t ts_ns;
    double value;              /* after the step; NaN at a copy without bandwidth */
} hta_step_point;

typedef struct hta_step_series {
    uint32_t stream;                 /* queue length: the stream */
    char kind[HTA_COPY_KIND_SIZE];   /* memory bandwidth: the copy kind */
    const hta_step_point *points;    /* into the set's storage, time order */
    size_t n;
} hta_step_series;

typedef struct hta_step_series_set {
    hta_step_series *series;   /* owned; by stream number or kind name */
    size_t n_series;
    hta_step_point *storage;   /* owned */
} hta_step_series_set;

/* Queue length per stream: +1 at the start of each launch call of
 * HTA_LAUNCH_QUEUE_APIS that has a GPU event, -1 at that event's start.
 * -1 when out of memory. */
int hta_queue_length_series(hta_step_series_set *set, const hta_rank_view *view);

/* Receives each point of a walk: its series' index in the set, time and
 * value. */
typedef void (*hta_step_visitor)(void *ctx, size_t series, int64_t ts_ns, double value);

/* The queue length in two steps, for callers that summarise the points as
 * they pass instead of storing them: the series (streams) of the set, with
 * no points; then a walk that hands visit every point in time order and
 * counts each series' points.  Each -1 when out of memory; free the set
 * either way. */
int hta_queue_length_streams(hta_step_series_set *set, const hta_rank_view *view);
int hta_queue_length_walk(hta_step_series_set *set, const hta_rank_view *view,
                          hta_step_visitor visit, void *ctx);

/* Concurrent bandwidth per copy kind over the MEMORY events: +bw at the
 * start, -bw at the end (a 0 duration counts as 1 us, as HTA), the sum
 * reported clamped at 0 against rounding.  -1 when out of memory. */
int hta_memory_bw_series(hta_step_series_set *set, const hta_trace *trace);

void hta_step_series_free(hta_step_series_set *set);

/* The series of a copy kind, or -1. */
long hta_step_series_find_kind(const hta_step_series_set *set, const char *kind);

/* A copy: a GPU event of kernel type MEMORY (definitions section 3). */
static inline int hta_event_is_copy(const hta_event *e)
{
    return hta_event_is_gpu(e) && e->kernel_type == HTA_KT_MEMORY;
}

/* How many of the trace's events are copies (for sizing scratch arrays). */
size_t hta_trace_count_copies(const hta_trace *t);

/* HTA's copy kind of a MEMORY event name: "Memset"; "Memcpy Unknown" for
 * names not starting with "Memcpy"; else the first 11 characters
 * ("Memcpy DtoH"), but the whole first word of a Unified Memory migration
 * ("Memcpy UVM_HtoD", up to 15 characters). */
void hta_copy_kind(const char *name, char kind[HTA_COPY_KIND_SIZE]);

#endif
