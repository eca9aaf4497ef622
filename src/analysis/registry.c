/* registry.c: the analyses every rank runs, in order. */
#include "hta/analysis.h"
#include "hta/critical_path.h"
#include "hta/cupti_counters.h"
#include "hta/timeline.h"

const hta_analysis hta_analyses[] = {
    {"temporal_breakdown", hta_temporal_breakdown},
    {"comm_comp_overlap", hta_comm_comp_overlap},
    {"kernel_breakdown", hta_kernel_breakdown},
    {"overlap_breakdown", hta_overlap_breakdown},
    {"idle_time", hta_idle_time},
    {"launch_stats", hta_launch_stats},
    {"launch_pipelining", hta_launch_pipelining},
    {"queue_length", hta_queue_length},
    {"memory_bw", hta_memory_bw},
    {"timeline", hta_timeline_segments},
    {"activity_categories", hta_activity_categories},
    {"collectives", hta_collectives},
    {"detail_tables", hta_detail_tables},
    {"ops", hta_ops},
    {"annotations", hta_annotations},
    {"gpu_gaps", hta_gpu_gaps},
    {"memory", hta_memory},
    {"critical_path", hta_critical_path},
    {"cupti_counters", hta_cupti_counters},
};

const size_t hta_n_analyses = sizeof hta_analyses / sizeof hta_analyses[0];

/* On a large trace: the longest first, so that what is left at the end is
 * short, and the two with the most scratch (the queue length and the
 * launch statistics, 16 MB each on a 1 GB trace) one after the other
 * rather than side by side.  Indices into hta_analyses. */
enum { TEMPORAL, COMM_COMP, KERNELS, OVERLAP, IDLE, LAUNCH_STATS, PIPELINING, QUEUE,
       MEMORY_BW, TIMELINE, ACTIVITY, COLLECTIVES, DETAIL, OPS, ANNOTATIONS, GAPS,
       MEMORY, CRITICAL_PATH, CUPTI, N_ANALYSES };
_Static_assert(N_ANALYSES == sizeof hta_analyses / sizeof hta_analyses[0],
               "one schedule slot per analysis");
const size_t hta_analysis_schedule[N_ANALYSES] = {
    CRITICAL_PATH, QUEUE, IDLE, TIMELINE, MEMORY_BW, LAUNCH_STATS, ACTIVITY, PIPELINING,
    KERNELS, COLLECTIVES, OVERLAP, TEMPORAL, COMM_COMP, OPS, ANNOTATIONS, GAPS,
    MEMORY, CUPTI, DETAIL,
};

static const hta_column METRIC_COLUMNS[] = {
    {"rank", HTA_COL_I64}, {"metric", HTA_COL_STR}, {"value", HTA_COL_F64},
};

int hta_emit_metric(hta_tableset *out, int64_t rank_key, const char *metric, double value)
{
    hta_table *t = HTA_TABLE(out, "rank_metrics", METRIC_COLUMNS);
    if (!t)
        return -1;
    hta_row row = hta_table_add_row(t);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_str(&row, metric);
    hta_row_put_f64(&row, value);
    return hta_row_done(&row);
}
