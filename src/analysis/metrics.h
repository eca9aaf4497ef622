/* analysis/metrics.h: every per-rank metric, declared once
 * (analysis/metrics.c, docs/definitions.md "Per-rank metrics").
 *
 * A metric is a scalar per rank that an analysis or a cross-rank step
 * records in "rank_metrics" (rank, metric, value) for the outlier search,
 * the stragglers, the nodes, the reports and the diff.  Emitters and
 * readers name it by its id; its name is spelt only here.  A name with
 * "%s" is a family, one metric per part (a copy kind), the part written
 * in lower case with spaces as underscores. */
#ifndef HTA_METRICS_H
#define HTA_METRICS_H

#include <stdint.h>

#include "table/table.h"

/* How the outlier search uses a metric: its spread over the ranks
 * (rank_metrics), or not at all because a test of its own flags it
 * (an "outliers" row from its producer). */
typedef enum {
    HTA_METRIC_SEARCHED,
    HTA_METRIC_OWN_TEST
} hta_metric_search;

/* When a rank's value can be trusted: always, or not when the rank's
 * CUDA graph replays were not all recorded (the unrecorded replays' GPU
 * time counts as idle, so the value is only an upper bound; the search
 * leaves it out, analysis/graph_launches.c). */
typedef enum {
    HTA_METRIC_MEASURED,
    HTA_METRIC_IDLE_BOUND
} hta_metric_reliability;

/* X(ID, name, unit, producer, search, reliability). */
#define HTA_METRICS(X)                                                                             \
    X(IDLE_TIME_US, "idle_time_us", "us", "analysis/temporal_breakdown.c", SEARCHED, IDLE_BOUND)   \
    X(COMPUTE_TIME_US, "compute_time_us", "us", "analysis/temporal_breakdown.c", SEARCHED,         \
      MEASURED)                                                                                    \
    X(NON_COMPUTE_TIME_US, "non_compute_time_us", "us", "analysis/temporal_breakdown.c", SEARCHED, \
      MEASURED)                                                                                    \
    X(KERNEL_TIME_US, "kernel_time_us", "us", "analysis/temporal_breakdown.c", SEARCHED, MEASURED) \
    X(IDLE_TIME_PCTG, "idle_time_pctg", "%", "analysis/temporal_breakdown.c", SEARCHED,            \
      IDLE_BOUND)                                                                                  \
    X(COMPUTE_TIME_PCTG, "compute_time_pctg", "%", "analysis/temporal_breakdown.c", SEARCHED,      \
      MEASURED)                                                                                    \
    X(NON_COMPUTE_TIME_PCTG, "non_compute_time_pctg", "%", "analysis/temporal_breakdown.c",        \
      SEARCHED, MEASURED)                                                                          \
    X(COMP_COMM_OVERLAP_PCTG, "comp_comm_overlap_pctg", "%", "analysis/comm_comp_overlap.c",       \
      SEARCHED, MEASURED)                                                                          \
    X(COMPUTE_US, "compute_us", "us", "analysis/overlap_breakdown.c", SEARCHED, MEASURED)          \
    X(COMMUNICATE_US, "communicate_us", "us", "analysis/overlap_breakdown.c", SEARCHED, MEASURED)  \
    X(OVERLAP_US, "overlap_us", "us", "analysis/overlap_breakdown.c", SEARCHED, MEASURED)          \
    X(EMPTY_US, "empty_us", "us", "analysis/overlap_breakdown.c", SEARCHED, MEASURED)              \
    X(COMPUTE_RATIO, "compute_ratio", "ratio", "analysis/overlap_breakdown.c", SEARCHED, MEASURED) \
    X(COMMUNICATE_RATIO, "communicate_ratio", "ratio", "analysis/overlap_breakdown.c", SEARCHED,   \
      MEASURED)                                                                                    \
    X(OVERLAP_RATIO, "overlap_ratio", "ratio", "analysis/overlap_breakdown.c", SEARCHED, MEASURED) \
    X(EMPTY_RATIO, "empty_ratio", "ratio", "analysis/overlap_breakdown.c", SEARCHED, MEASURED)     \
    X(IDLE_HOST_WAIT_US, "idle_host_wait_us", "us", "analysis/idle_time.c", SEARCHED, IDLE_BOUND)  \
    X(IDLE_KERNEL_WAIT_US, "idle_kernel_wait_us", "us", "analysis/idle_time.c", SEARCHED,          \
      IDLE_BOUND)                                                                                  \
    X(IDLE_OTHER_US, "idle_other_us", "us", "analysis/idle_time.c", SEARCHED, IDLE_BOUND)          \
    X(LAUNCH_DELAY_P50_US, "launch_delay_p50_us", "us", "analysis/launch_stats.c", SEARCHED,       \
      MEASURED)                                                                                    \
    X(LAUNCH_DELAY_P99_US, "launch_delay_p99_us", "us", "analysis/launch_stats.c", SEARCHED,       \
      MEASURED)                                                                                    \
    X(MEMORY_BW_MEAN_GBPS, "memory_bw_%s_mean_gbps", "GB/s", "analysis/memory_bw.c", SEARCHED,     \
      MEASURED)                                                                                    \
    X(STEP_TIME_MEAN_US, "step_time_mean_us", "us", "analysis/steps.c", SEARCHED, MEASURED)        \
    X(STEP_TIME_CV, "step_time_cv", "ratio", "analysis/steps.c", SEARCHED, MEASURED)               \
    X(MEMORY_PEAK_ALLOCATED_BYTES, "memory_peak_allocated_bytes", "bytes", "analysis/memory.c",    \
      SEARCHED, MEASURED)                                                                          \
    X(MEMORY_PEAK_RESERVED_BYTES, "memory_peak_reserved_bytes", "bytes", "analysis/memory.c",      \
      SEARCHED, MEASURED)                                                                          \
    X(CRITICAL_PATH_CPU_BOUND_PCT, "critical_path_cpu_bound_pct", "%", "analysis/critical_path.c", \
      SEARCHED, MEASURED)                                                                          \
    X(CRITICAL_PATH_COMM_BOUND_PCT, "critical_path_comm_bound_pct", "%",                           \
      "analysis/critical_path.c", SEARCHED, MEASURED)                                              \
    X(DATA_LOADING_US, "data_loading_us", "us", "analysis/data_loading.c", SEARCHED, MEASURED)     \
    X(QUEUE_TIME_AT_MAX_US, "queue_time_at_max_us", "us", "analysis/queue_length.c", SEARCHED,     \
      MEASURED)                                                                                    \
    X(GEMM_TFLOPS, "gemm_tflops", "TFLOP/s", "analysis/op_perf.c", SEARCHED, MEASURED)             \
    X(GEMM_PCT_PEAK, "gemm_pct_peak", "%", "analysis/op_perf.c", SEARCHED, MEASURED)               \
    X(ATTENTION_TFLOPS, "attention_tflops", "TFLOP/s", "analysis/op_perf.c", SEARCHED, MEASURED)   \
    X(GPU_GAP_IDLE_ABOVE_THRESHOLD_US, "gpu_gap_idle_above_threshold_us", "us",                    \
      "analysis/gpu_gaps.c", SEARCHED, IDLE_BOUND)                                                 \
    X(GPU_GAP_IDLE_BELOW_THRESHOLD_US, "gpu_gap_idle_below_threshold_us", "us",                    \
      "analysis/gpu_gaps.c", SEARCHED, IDLE_BOUND)                                                 \
    X(GPU_GAPS_ABOVE_THRESHOLD, "gpu_gaps_above_threshold", "count", "analysis/gpu_gaps.c",        \
      SEARCHED, MEASURED)                                                                          \
    X(P2P_WAIT_US, "p2p_wait_us", "us", "crossrank/compare/p2p_results.c", SEARCHED, MEASURED)     \
    X(P2P_CAUSED_WAIT_US, "p2p_caused_wait_us", "us", "crossrank/compare/p2p_results.c", SEARCHED, \
      MEASURED)                                                                                    \
    X(A2A_BYTES_SENT, "a2a_bytes_sent", "bytes", "crossrank/exchange/all_to_all.c", SEARCHED,      \
      MEASURED)                                                                                    \
    X(A2A_BYTES_RECEIVED, "a2a_bytes_received", "bytes", "crossrank/exchange/all_to_all.c",        \
      SEARCHED, MEASURED)                                                                          \
    X(ARRIVED_LAST_SHARE, "arrived_last_share", "fraction", "crossrank/compare/collective_wait.c", \
      OWN_TEST, MEASURED)

typedef enum hta_metric_id {
#define HTA_METRIC_ID(id, ...) HTA_METRIC_##id,
    HTA_METRICS(HTA_METRIC_ID)
#undef HTA_METRIC_ID
    HTA_N_METRICS
} hta_metric_id;

typedef struct hta_metric_info {
    const char *name, *unit, *producer;
    hta_metric_search search;
    hta_metric_reliability reliability;
} hta_metric_info;

/* Indexed by hta_metric_id. */
extern const hta_metric_info hta_metrics[HTA_N_METRICS];

/* The metric a "rank_metrics" row names (a family's member included), or
 * NULL when none is declared by that name. */
const hta_metric_info *hta_metric_named(const char *name);
/* Whether name is metric id's (not a family). */
int hta_metric_is(const char *name, hta_metric_id id);
/* The name of id, a family's with part filled in, into buf (size bytes,
 * truncated as snprintf does). */
void hta_metric_name(hta_metric_id id, const char *part, char *buf, size_t size);

/* Records a rank's value of a metric in "rank_metrics" (created when
 * missing); part: a family's member, else NULL.  -1 when out of memory. */
int hta_emit_metric(hta_tableset *out, int64_t rank_key, hta_metric_id id, const char *part,
                    double value);
/* The same into the table t of "rank_metrics" itself. */
int hta_put_metric(hta_table *t, int64_t rank_key, hta_metric_id id, const char *part,
                   double value);

/* The columns of /rank_metrics (docs/results-format.md). */
enum {
    HTA_RANK_METRICS_RANK,
    HTA_RANK_METRICS_METRIC,
    HTA_RANK_METRICS_VALUE,
    HTA_RANK_METRICS_N_COLUMNS
};
extern const hta_table_spec hta_rank_metrics_table;
/* Its columns, which a cross-rank step's own table of metrics shares:
 * that table's rows are joined to "rank_metrics" (crossrank/steps.h). */
extern const hta_column hta_rank_metrics_columns[HTA_RANK_METRICS_N_COLUMNS];

#endif
