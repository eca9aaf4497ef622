/* hta/analysis.h: the per-rank analyses and what they share.
 *
 * After the step filter a rank's trace becomes an hta_rank_view: the GPU
 * events listed in order of start, and an index from correlation id
 * to the launching CPU event.  Each analysis is one file with one entry
 * point of type hta_analysis_fn that reads the view and appends rows to
 * result tables; hta_analyses lists them in the order they run. */
#ifndef HTA_ANALYSIS_H
#define HTA_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "hta/corrmap.h"
#include "hta/error.h"
#include "hta/interval.h"
#include "hta/options.h"
#include "hta/stream_work.h"
#include "hta/table.h"
#include "hta/trace.h"

/* The view's GPU events of each kernel type as merged intervals
 * (definitions section 4): every analysis that combines types reads these
 * instead of merging the events again.  Of the union of all types only
 * its span and covered time are kept, all that is read of it. */
typedef struct hta_type_unions {
    hta_interval *storage;     /* owned, the lists back to back */
    const hta_interval *of[HTA_KT_OTHER + 1]; /* indexed by hta_kernel_type */
    size_t n[HTA_KT_OTHER + 1];
    int64_t all_start, all_end; /* first GPU start, latest GPU end */
    int64_t all_length;        /* time the union of all covers */
} hta_type_unions;

typedef struct hta_rank_view {
    const hta_trace *trace;
    int64_t rank_key;          /* value for "rank" columns (see hta/table.h) */
    /* The GPU events sorted by (start, end): owned array of pointers into
     * trace->events, a fifth of copies' size. */
    const hta_event **gpu;
    size_t n_gpu;
    hta_corrmap cpu_by_correlation; /* CPU-side event index in trace->events */
    hta_type_unions unions;
    hta_stream_work_set stream_work; /* per-stream GPU work in HTA's order */
} hta_rank_view;

/* Merges sorted GPU events by type (part of building the view); -1 when
 * out of memory. */
int hta_type_unions_build(hta_type_unions *u, const hta_event *const *gpu, size_t n_gpu);
void hta_type_unions_free(hta_type_unions *u);

/* Builds the view of a filtered trace, with a second thread when threads
 * > 1; -1 when out of memory. */
int hta_rank_view_build(hta_rank_view *view, const hta_trace *trace, int64_t rank_key,
                        int threads);
void hta_rank_view_free(hta_rank_view *view);

/* The launching CPU event of a GPU event, or NULL. */
const hta_event *hta_rank_view_launch(const hta_rank_view *view, const hta_event *gpu);

/* Step filter (definitions section 2), applied in place before the view. */
typedef struct hta_step_filter_stats {
    int applied;               /* the rank had >= 2 ProfilerStep#N names */
    size_t dropped_gpu_events;
    size_t dropped_events;
} hta_step_filter_stats;

int hta_step_filter(hta_trace *trace, int include_last_step,
                    hta_step_filter_stats *stats, hta_error *err);

typedef int (*hta_analysis_fn)(const hta_rank_view *view, const hta_options *opt,
                               hta_tableset *out, hta_error *err);

typedef struct hta_analysis {
    const char *name;
    hta_analysis_fn run;
} hta_analysis;

extern const hta_analysis hta_analyses[];
extern const size_t hta_n_analyses;
/* hta_analyses' indices in the order threads take them (run_analyses.c);
 * results keep the registry's order. */
extern const size_t hta_analysis_schedule[];

/* Records a per-rank scalar for the cross-rank outlier search
 * (table "rank_metrics": rank, metric, value). */
int hta_emit_metric(hta_tableset *out, int64_t rank_key, const char *metric, double value);

/* Entry points, one per file in src/analysis/. */
int hta_temporal_breakdown(const hta_rank_view *view, const hta_options *opt,
                           hta_tableset *out, hta_error *err);
int hta_activity_categories(const hta_rank_view *view, const hta_options *opt,
                            hta_tableset *out, hta_error *err);
/* Per-event tables under detail/, only with --detail. */
int hta_detail_tables(const hta_rank_view *view, const hta_options *opt,
                      hta_tableset *out, hta_error *err);
int hta_comm_comp_overlap(const hta_rank_view *view, const hta_options *opt,
                          hta_tableset *out, hta_error *err);
int hta_kernel_breakdown(const hta_rank_view *view, const hta_options *opt,
                         hta_tableset *out, hta_error *err);
int hta_overlap_breakdown(const hta_rank_view *view, const hta_options *opt,
                          hta_tableset *out, hta_error *err);
int hta_idle_time(const hta_rank_view *view, const hta_options *opt,
                  hta_tableset *out, hta_error *err);
int hta_launch_stats(const hta_rank_view *view, const hta_options *opt,
                     hta_tableset *out, hta_error *err);
int hta_launch_pipelining(const hta_rank_view *view, const hta_options *opt,
                          hta_tableset *out, hta_error *err);
int hta_queue_length(const hta_rank_view *view, const hta_options *opt,
                     hta_tableset *out, hta_error *err);
int hta_memory_bw(const hta_rank_view *view, const hta_options *opt,
                  hta_tableset *out, hta_error *err);
/* "ops": GPU work per CPU op (analysis/ops.c), and in the same walk
 * "kernel_sequences" (analysis/kernel_sequences.c). */
int hta_ops(const hta_rank_view *view, const hta_options *opt, hta_tableset *out,
            hta_error *err);
/* "gpu_gaps" and "sync_calls": GPU idle gaps, their causes, and the
 * synchronising calls (analysis/gpu_gaps.c). */
int hta_gpu_gaps(const hta_rank_view *view, const hta_options *opt, hta_tableset *out,
                 hta_error *err);
/* "memory": allocator peaks per device (analysis/memory.c). */
int hta_memory(const hta_rank_view *view, const hta_options *opt, hta_tableset *out,
               hta_error *err);
/* "annotations": GPU and CPU user annotations (analysis/annotations.c). */
int hta_annotations(const hta_rank_view *view, const hta_options *opt, hta_tableset *out,
                    hta_error *err);
/* "_collectives": every COMMUNICATION kernel for the root's wait-state
 * analysis (crossrank/collective_wait.c), packed per (rank, stream). */
int hta_collectives(const hta_rank_view *view, const hta_options *opt,
                    hta_tableset *out, hta_error *err);

/* Nanoseconds to the microseconds every output column uses. */
static inline double hta_ns_to_us(int64_t ns)
{
    return (double)ns / 1000.0;
}

#endif
