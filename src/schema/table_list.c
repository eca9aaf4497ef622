/* table_list.c: every table spec, in one list (see schema/table_list.h).
 *
 * The specs stay with the files that produce them; this list names each
 * once so that tools, tests and the library can walk every table.  It
 * includes producers from analysis/, crossrank/, run/ and diff/, so it
 * lives in a room of its own above all of them: no producer includes it,
 * and the include graph stays downward. */
#include "schema/table_list.h"

#include "analysis/metrics.h"

#include <string.h>

#include "analysis/activity_categories.h"
#include "analysis/annotations.h"
#include "analysis/collectives.h"
#include "analysis/comm_comp_overlap.h"
#include "analysis/comm_ops.h"
#include "analysis/critical_path.h"
#include "analysis/cupti_counters.h"
#include "analysis/detail_tables.h"
#include "analysis/fr_rows.h"
#include "analysis/gpu_gaps.h"
#include "analysis/graph_launches.h"
#include "analysis/idle_time.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/kernel_sequences.h"
#include "analysis/launch_pipelining.h"
#include "analysis/launch_stats.h"
#include "analysis/memory.h"
#include "analysis/memory_bw.h"
#include "analysis/op_perf.h"
#include "analysis/ops.h"
#include "analysis/overlap_breakdown.h"
#include "analysis/queue_length.h"
#include "analysis/ranks_table.h"
#include "analysis/steps.h"
#include "analysis/temporal_breakdown.h"
#include "analysis/timeline.h"
#include "crossrank/exchange/all_to_all.h"
#include "crossrank/exchange/collective_groups.h"
#include "crossrank/compare/collective_wait.h"
#include "crossrank/compare/hang_diagnosis.h"
#include "crossrank/exchange/comm_catalog.h"
#include "crossrank/compare/kernel_comparison.h"
#include "crossrank/compare/kernel_type_totals.h"
#include "crossrank/compare/name_comparison.h"
#include "crossrank/exchange/clock_offsets.h"
#include "crossrank/compare/nodes.h"
#include "crossrank/compare/op_perf_comparison.h"
#include "crossrank/exchange/p2p_pairs.h"
#include "crossrank/compare/p2p_results.h"
#include "crossrank/compare/spread.h"
#include "crossrank/compare/step_comparison.h"
#include "crossrank/compare/step_jitter.h"
#include "crossrank/job_path/delay_costs.h"
#include "crossrank/job_path/global_path.h"
#include "crossrank/compare/stragglers.h"
#include "crossrank/job_path/what_if.h"
#include "crossrank/job_path/replay.h"
#include "diff/collective_diff.h"
#include "diff/kernel_diff.h"
#include "diff/rank_metric_diff.h"
#include "diff/tail_diff.h"
#include "analysis/timeline_bins.h"

/* In the order of docs/results-format.md, then the diff file's, then the
 * scratch tables that pass between stages. */
static const hta_table_spec *const SPECS[] = {
    &hta_ranks_table,
    &hta_temporal_breakdown_table,
    &hta_comm_comp_overlap_table,
    &hta_overlap_breakdown_table,
    &hta_kernel_type_by_rank_table,
    &hta_kernel_type_breakdown_table,
    &hta_kernels_table,
    &hta_kernels_top_table,
    &hta_idle_time_table,
    &hta_launch_stats_table,
    &hta_launch_pipelining_table,
    &hta_queue_length_table,
    &hta_memory_bw_table,
    &hta_activity_categories_table,
    &hta_rank_metrics_table,
    &hta_outliers_table,
    &hta_cross_kernels_table,
    &hta_ops_table,
    &hta_op_perf_table,
    &hta_cross_op_perf_table,
    &hta_annotations_table,
    &hta_kernel_sequences_table,
    &hta_gpu_gaps_table,
    &hta_graph_launches_table,
    &hta_sync_calls_table,
    &hta_memory_table,
    &hta_critical_path_table,
    &hta_critical_path_events_table,
    &hta_critical_path_names_table,
    &hta_cupti_counters_table,
    &hta_cupti_counter_values_table,
    &hta_cupti_kernels_table,
    &hta_cupti_matching_table,
    &hta_cross_ops_table,
    &hta_cross_annotations_table,
    &hta_cross_kernel_sequences_table,
    &hta_collective_wait_table,
    &hta_collectives_table,
    &hta_process_groups_table,
    &hta_collective_summary_table,
    &hta_comm_by_group_table,
    &hta_p2p_table,
    &hta_p2p_summary_table,
    &hta_a2a_table,
    &hta_a2a_matrix_table,
    &hta_pipeline_steps_table,
    &hta_steps_table,
    &hta_cross_steps_table,
    &hta_step_jitter_table,
    &hta_step_jitter_slowest_table,
    &hta_delay_costs_table,
    &hta_delay_parts_table,
    &hta_global_path_table,
    &hta_global_path_names_table,
    &hta_global_path_steps_table,
    &hta_global_path_ranks_table,
    &hta_global_path_imbalance_table,
    &hta_what_if_table,
    &hta_stragglers_table,
    &hta_nodes_table,
    &hta_node_metrics_table,
    &hta_clock_offsets_table,
    &hta_node_clocks_table,
    &hta_clock_shifts_table,
    &hta_timeline_table,
    &hta_fr_ranks_table,
    &hta_fr_groups_table,
    &hta_fr_collectives_table,
    &hta_fr_findings_table,
    &hta_detail_launches_table,
    &hta_detail_queue_length_table,
    &hta_detail_memory_bw_table,
    &hta_detail_gpu_events_table,
    &hta_detail_op_kernels_table,
    &hta_diff_kernels_table,
    &hta_diff_kernel_set_table,
    &hta_diff_rank_metrics_table,
    &hta_diff_tails_table,
    &hta_diff_collectives_table,
    &hta_catalog_groups_table,
    &hta_catalog_kinds_table,
    &hta_collective_kernels_table,
    &hta_comm_ops_table,
    &hta_fr_entries_table,
    &hta_fr_members_table,
    &hta_group_missing_table,
    &hta_group_waits_table,
    &hta_instance_stats_table,
    &hta_kernel_waits_table,
    &hta_timeline_segments_table,
    &hta_step_waits_table,
    &hta_a2a_mismatches_table,
    &hta_a2a_ranks_table,
    &hta_p2p_ranks_table,
    &hta_p2p_steps_table,
    &hta_p2p_unknown_peer_table,
    &hta_step_flops_table,
    &hta_path_intervals_table,
    &hta_path_pieces_table,
    &hta_path_names_table,
    &hta_path_name_times_table,
    &hta_path_walk_table,
    &hta_path_walk_names_table,
    &hta_kernel_runs_table,
    &hta_kernel_durations_table,
    &hta_replay_nodes_table,
    &hta_replay_edges_table,
    &hta_replay_spans_table,
};

size_t hta_table_spec_count(void)
{
    return sizeof SPECS / sizeof *SPECS;
}

const hta_table_spec *hta_table_spec_at(size_t i)
{
    return i < hta_table_spec_count() ? SPECS[i] : NULL;
}

const hta_table_spec *hta_table_spec_find(const char *name)
{
    for (size_t i = 0; i < hta_table_spec_count(); i++)
        if (strcmp(SPECS[i]->name, name) == 0)
            return SPECS[i];
    return NULL;
}
