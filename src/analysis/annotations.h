/* analysis/annotations.h: entry point of analysis/annotations.c (registry.h). */
#ifndef HTA_ANNOTATIONS_H
#define HTA_ANNOTATIONS_H

#include "model/rank_view.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

int hta_annotations(const hta_rank_view *view, const hta_analysis_settings *opt,
                    hta_tableset *out, hta_error *err);

/* The columns of /annotations (docs/results-format.md). */
enum {
    HTA_ANNOTATIONS_RANK,
    HTA_ANNOTATIONS_NAME,
    HTA_ANNOTATIONS_COUNT,
    HTA_ANNOTATIONS_SUM_US,
    HTA_ANNOTATIONS_MEAN_US,
    HTA_ANNOTATIONS_MIN_US,
    HTA_ANNOTATIONS_MAX_US,
    HTA_ANNOTATIONS_STD_US,
    HTA_ANNOTATIONS_GPU_EVENTS,
    HTA_ANNOTATIONS_GPU_EVENT_TIME_US,
    HTA_ANNOTATIONS_COMPUTE_US,
    HTA_ANNOTATIONS_COMMUNICATION_US,
    HTA_ANNOTATIONS_CPU_COUNT,
    HTA_ANNOTATIONS_CPU_SUM_US,
    HTA_ANNOTATIONS_CPU_MEAN_US,
    HTA_ANNOTATIONS_CPU_MIN_US,
    HTA_ANNOTATIONS_CPU_MAX_US,
    HTA_ANNOTATIONS_CPU_STD_US,
    HTA_ANNOTATIONS_N_COLUMNS
};
extern const hta_table_spec hta_annotations_table;

/* The columns of /detail/gpu_events (docs/results-format.md). */
enum {
    HTA_DETAIL_GPU_EVENTS_RANK,
    HTA_DETAIL_GPU_EVENTS_TS_US,
    HTA_DETAIL_GPU_EVENTS_DUR_US,
    HTA_DETAIL_GPU_EVENTS_STREAM,
    HTA_DETAIL_GPU_EVENTS_CORRELATION,
    HTA_DETAIL_GPU_EVENTS_NAME,
    HTA_DETAIL_GPU_EVENTS_ANNOTATION,
    HTA_DETAIL_GPU_EVENTS_N_COLUMNS
};
extern const hta_table_spec hta_detail_gpu_events_table;

#endif
