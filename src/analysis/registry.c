/* registry.c: the analyses every rank runs, in order. */
#include "analysis/registry.h"

#include "analysis/activity_categories.h"
#include "analysis/annotations.h"
#include "analysis/collectives.h"
#include "analysis/comm_comp_overlap.h"
#include "analysis/critical_path.h"
#include "analysis/cupti_counters.h"
#include "analysis/data_loading.h"
#include "analysis/detail_tables.h"
#include "analysis/gpu_gaps.h"
#include "analysis/graph_launches.h"
#include "analysis/idle_time.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/launch_pipelining.h"
#include "analysis/launch_stats.h"
#include "analysis/memory.h"
#include "analysis/memory_bw.h"
#include "analysis/ops.h"
#include "analysis/overlap_breakdown.h"
#include "analysis/queue_length.h"
#include "analysis/steps.h"
#include "analysis/temporal_breakdown.h"
#include "analysis/timeline.h"

const hta_analysis hta_analyses[HTA_N_ANALYSES] = {
    [HTA_ANALYSIS_TEMPORAL_BREAKDOWN] = {"temporal_breakdown", .run_fixed = hta_temporal_breakdown},
    [HTA_ANALYSIS_COMM_COMP_OVERLAP] = {"comm_comp_overlap", .run_fixed = hta_comm_comp_overlap},
    [HTA_ANALYSIS_KERNEL_BREAKDOWN] = {"kernel_breakdown", .run = hta_kernel_breakdown},
    [HTA_ANALYSIS_OVERLAP_BREAKDOWN] = {"overlap_breakdown", .run_fixed = hta_overlap_breakdown},
    [HTA_ANALYSIS_IDLE_TIME] = {"idle_time", .run = hta_idle_time},
    [HTA_ANALYSIS_LAUNCH_STATS] = {"launch_stats", .run = hta_launch_stats},
    [HTA_ANALYSIS_LAUNCH_PIPELINING] = {"launch_pipelining", .run_fixed = hta_launch_pipelining},
    [HTA_ANALYSIS_QUEUE_LENGTH] = {"queue_length", .run_fixed = hta_queue_length},
    [HTA_ANALYSIS_MEMORY_BW] = {"memory_bw", .run_fixed = hta_memory_bw},
    [HTA_ANALYSIS_TIMELINE] = {"timeline", .run_fixed = hta_timeline_segments},
    [HTA_ANALYSIS_ACTIVITY_CATEGORIES] = {"activity_categories",
                                          .run_fixed = hta_activity_categories},
    [HTA_ANALYSIS_COLLECTIVES] = {"collectives", .run_fixed = hta_collectives},
    [HTA_ANALYSIS_DATA_LOADING] = {"data_loading", .run_fixed = hta_data_loading},
    [HTA_ANALYSIS_STEPS] = {"steps", .run_fixed = hta_steps},
    [HTA_ANALYSIS_DETAIL_TABLES] = {"detail_tables", .run = hta_detail_tables},
    [HTA_ANALYSIS_OPS] = {"ops", .run = hta_ops},
    [HTA_ANALYSIS_ANNOTATIONS] = {"annotations", .run = hta_annotations},
    [HTA_ANALYSIS_GPU_GAPS] = {"gpu_gaps", .run = hta_gpu_gaps},
    [HTA_ANALYSIS_MEMORY] = {"memory", .run_fixed = hta_memory},
    [HTA_ANALYSIS_CRITICAL_PATH] = {"critical_path", .run = hta_critical_path},
    [HTA_ANALYSIS_CUPTI_COUNTERS] = {"cupti_counters", .run_fixed = hta_cupti_counters},
    [HTA_ANALYSIS_GRAPH_LAUNCHES] = {"graph_launches", .run_fixed = hta_graph_launches,
                                     .note = hta_graph_launches_note},
};

const size_t hta_n_analyses = HTA_N_ANALYSES;

int hta_analysis_run(const hta_analysis *a, const hta_rank_view *view,
                     const hta_analysis_settings *opt, hta_tableset *out, hta_error *err)
{
    return a->run ? a->run(view, opt, out, err) : a->run_fixed(view, out, err);
}

void hta_analyses_note(const hta_tableset *set, int64_t rank_key, hta_error *notes)
{
    for (size_t i = 0; i < HTA_N_ANALYSES; i++)
        if (hta_analyses[i].note)
            hta_analyses[i].note(set, rank_key, notes);
}

/* On a large trace: the longest first, so that what is left at the end is
 * short, except that the three with the most scratch (the queue length,
 * the op walk and the launch statistics) come where they do not run side
 * by side: while the queue length runs, the other thread does the four
 * after it, and the op walk and the launch statistics are three apart. */
const hta_analysis_id hta_analysis_schedule[HTA_N_ANALYSES] = {
    HTA_ANALYSIS_CRITICAL_PATH,
    HTA_ANALYSIS_QUEUE_LENGTH,
    HTA_ANALYSIS_MEMORY_BW,
    HTA_ANALYSIS_COLLECTIVES,
    HTA_ANALYSIS_STEPS,
    HTA_ANALYSIS_IDLE_TIME,
    HTA_ANALYSIS_OPS,
    HTA_ANALYSIS_KERNEL_BREAKDOWN,
    HTA_ANALYSIS_LAUNCH_PIPELINING,
    HTA_ANALYSIS_TIMELINE,
    HTA_ANALYSIS_LAUNCH_STATS,
    HTA_ANALYSIS_ACTIVITY_CATEGORIES,
    HTA_ANALYSIS_GPU_GAPS,
    HTA_ANALYSIS_OVERLAP_BREAKDOWN,
    HTA_ANALYSIS_ANNOTATIONS,
    HTA_ANALYSIS_DATA_LOADING,
    HTA_ANALYSIS_COMM_COMP_OVERLAP,
    HTA_ANALYSIS_TEMPORAL_BREAKDOWN,
    HTA_ANALYSIS_MEMORY,
    HTA_ANALYSIS_CUPTI_COUNTERS,
    HTA_ANALYSIS_DETAIL_TABLES,
    HTA_ANALYSIS_GRAPH_LAUNCHES,
};
