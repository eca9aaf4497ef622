/* model/rank_view.h: what every analysis reads of one rank.
 *
 * After the step filter a rank's trace becomes an hta_rank_view: the GPU
 * events listed in order of start, an index from correlation id to the
 * launching CPU event, and what several analyses would otherwise each
 * compute again (the per-type unions, the per-stream work).  The view is
 * built once per trace; analyses only read it (src/analysis/). */
#ifndef HTA_RANK_VIEW_H
#define HTA_RANK_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "model/stream_clips.h"
#include "model/stream_work.h"
#include "model/trace.h"
#include "model/type_unions.h"
#include "util/corrmap.h"

typedef struct hta_rank_view {
    const hta_trace *trace;
    int64_t rank_key;          /* value for "rank" columns (see table/table.h) */
    /* The GPU events sorted by (start, end): owned array of pointers into
     * trace->events, a fifth of copies' size. */
    const hta_event **gpu;
    size_t n_gpu;
    /* The communication kernels' positions in gpu, in start order: the
     * collective analyses read them without visiting every GPU event. */
    size_t *comm_at;           /* owned */
    size_t n_comm;
    hta_corrmap cpu_by_correlation; /* CPU-side event index in trace->events */
    hta_type_unions unions;
    hta_stream_work_set stream_work; /* per-stream GPU work in HTA's order */
    /* Synchronisation records (cuda_sync: Kineto's, and both other
     * readers') are host waits drawn on the GPU's row.  They are GPU
     * events above, as HTA has them, for the tables that reproduce HTA;
     * the tables hta-mpi defines (steps, GPU gaps, overlap, timeline) take
     * only the GPU work, the events that are not waits (docs/definitions.md,
     * "Host waits").  wait_cat is their category (UINT32_MAX when none). */
    uint32_t wait_cat;
    size_t n_work;             /* GPU events that are work */
    int64_t work_start, work_end; /* their first start and latest (clipped) end */
    /* Work running past the next record on its stream, clipped there for
     * the tables hta-mpi defines (model/stream_clips.h). */
    hta_stream_clips clips;
    /* With clips, the COMPUTATION and COMMUNICATION unions of the clipped
     * work (hta_rank_view_work_union); NULL without. */
    hta_interval *clipped_of[2];
    size_t clipped_n[2];
} hta_rank_view;

/* Whether a GPU event of the view is a host wait rather than GPU work. */
static inline int hta_rank_view_is_wait(const hta_rank_view *view, const hta_event *e)
{
    return e->cat == view->wait_cat;
}

/* The end of the view's GPU event gpu[pos] in the tables hta-mpi defines:
 * clipped at the next record's start on its stream when it runs past it. */
static inline int64_t hta_rank_view_work_end(const hta_rank_view *view, size_t pos)
{
    return hta_stream_clips_end(&view->clips, pos, view->gpu[pos]);
}

/* The union of the COMPUTATION or COMMUNICATION work as the tables
 * hta-mpi defines read it: clipped (above), else the type's union. */
const hta_interval *hta_rank_view_work_union(const hta_rank_view *view, hta_kernel_type type,
                                             size_t *n);

/* Builds the view of a trace filtered by hta_step_filter, with a second
 * thread when threads > 1, taking over the filter's launches (zeroed here,
 * freed with the view, also on failure); -1 when out of memory. */
int hta_rank_view_build(hta_rank_view *view, const hta_trace *trace, hta_corrmap *launches,
                        int64_t rank_key, int threads);
void hta_rank_view_free(hta_rank_view *view);

/* The launching CPU event of a GPU event, or NULL. */
const hta_event *hta_rank_view_launch(const hta_rank_view *view, const hta_event *gpu);

/* The GPU events with a correlation that no CPU event of the view
 * carries: GPU work whose launch the trace lacks. */
size_t hta_rank_view_unlaunched(const hta_rank_view *view);

#endif
