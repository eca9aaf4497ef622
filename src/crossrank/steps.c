/* steps.c: the cross-rank steps in the order they run, each with the
 * tables it reads, writes and frees (crossrank/steps.h).
 *
 * The Flight Recorder dumps' groups are diagnosed first, each by the
 * process that owns it (before the collective matching, which consumes
 * the exchanged tables); then the collectives are matched, on every
 * process, and what the root needs is gathered to it.  On the root: the
 * point-to-point and all-to-all figures, whose metrics are joined to
 * "rank_metrics" for the outlier search; the outliers; the comparisons
 * of per-rank tables; the traced FLOPs and the collective waits, which
 * fill their columns of "steps" before the step comparison and jitter
 * read them (the late arrivers the waits flag are joined to "outliers");
 * the stragglers, which read "collective_wait"; the delay costs, which
 * read "stragglers"; the job's critical path; the what-if, on every
 * process (the job replayed under scenarios the root chooses from the
 * delay costs and the stragglers; the job's graph was built during the
 * matching), which reads the step comparison; and the nodes last,
 * because they read every flag in "outliers".
 * The order is checked against the declarations by
 * tests/test_crossrank_steps.c. */
#include "crossrank/steps.h"

#include "analysis/annotations.h"
#include "analysis/collectives.h"
#include "analysis/comm_ops.h"
#include "analysis/critical_path.h"
#include "analysis/fr_rows.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/kernel_sequences.h"
#include "analysis/metrics.h"
#include "analysis/op_perf.h"
#include "analysis/ops.h"
#include "analysis/ranks_table.h"
#include "analysis/steps.h"
#include "crossrank/collective_exchange.h"
#include "crossrank/compare/collective_wait.h"
#include "crossrank/compare/hang_diagnosis.h"
#include "crossrank/compare/kernel_comparison.h"
#include "crossrank/compare/kernel_type_totals.h"
#include "crossrank/compare/name_comparison.h"
#include "crossrank/compare/nodes.h"
#include "crossrank/compare/op_perf_comparison.h"
#include "crossrank/compare/outliers.h"
#include "crossrank/compare/p2p_results.h"
#include "crossrank/compare/spread.h"
#include "crossrank/compare/step_comparison.h"
#include "crossrank/compare/step_jitter.h"
#include "crossrank/compare/stragglers.h"
#include "crossrank/exchange/all_to_all.h"
#include "crossrank/exchange/clock_offsets.h"
#include "crossrank/exchange/collective_groups.h"
#include "crossrank/exchange/p2p_pairs.h"
#include "crossrank/job_path/delay_costs.h"
#include "crossrank/job_path/global_path.h"
#include "crossrank/job_path/replay.h"
#include "crossrank/job_path/what_if.h"

/* A list of tables: whole (T) or one column (COLUMN). */
#define TABLES(...) ((const hta_crossrank_io[]){__VA_ARGS__, {NULL, NULL}})
#define T(spec) {&(spec), NULL}
#define COLUMN(spec, name) {&(spec), name}
#define NONE ((const hta_crossrank_io[]){{NULL, NULL}})
/* The step that appends the rows of the scratch table part to into. */
#define JOIN(name, part_spec, into_spec)                                                           \
    {name, HTA_CROSSRANK_ROOT, .part = &(part_spec), .into = &(into_spec),                         \
     .reads = TABLES(T(part_spec)), .writes = TABLES(T(into_spec)),                               \
     .frees = TABLES(T(part_spec))}

const hta_crossrank_step hta_crossrank_steps[] = {
    {"hang diagnosis", HTA_CROSSRANK_ALL_PROCESSES, .everywhere = hta_hang_diagnosis,
     .reads = TABLES(T(hta_fr_entries_table), T(hta_fr_members_table)),
     .writes = TABLES(T(hta_fr_groups_table), T(hta_fr_collectives_table),
                      T(hta_fr_findings_table)),
     .frees = TABLES(T(hta_fr_entries_table), T(hta_fr_members_table))},
    {"collective matching", HTA_CROSSRANK_ALL_PROCESSES, .everywhere = hta_match_collectives,
     .reads = TABLES(T(hta_comm_ops_table), T(hta_path_intervals_table),
                     T(hta_path_pieces_table), T(hta_path_names_table),
                     T(hta_kernel_runs_table), T(hta_kernel_durations_table),
                     T(hta_replay_nodes_table), T(hta_replay_edges_table),
                     T(hta_ranks_table), T(hta_collective_kernels_table)),
     .writes = TABLES(T(hta_collectives_table), T(hta_process_groups_table),
                      T(hta_collective_summary_table), T(hta_comm_by_group_table),
                      T(hta_group_waits_table), T(hta_group_missing_table),
                      T(hta_step_waits_table), T(hta_kernel_waits_table), T(hta_p2p_table),
                      T(hta_p2p_summary_table), T(hta_p2p_ranks_table), T(hta_p2p_steps_table),
                      T(hta_a2a_table), T(hta_a2a_matrix_table), T(hta_a2a_ranks_table),
                      T(hta_node_clocks_table), T(hta_clock_shifts_table),
                      T(hta_delay_parts_table),
                      T(hta_path_walk_table), T(hta_path_walk_names_table)),
     .frees = TABLES(T(hta_comm_ops_table), T(hta_path_intervals_table),
                     T(hta_path_pieces_table), T(hta_path_names_table),
                     T(hta_kernel_runs_table), T(hta_kernel_durations_table),
                     T(hta_replay_nodes_table), T(hta_replay_edges_table))},
    {"clock offsets", HTA_CROSSRANK_ROOT, .root_nodes = hta_clock_offsets_results,
     .reads = TABLES(T(hta_node_clocks_table)), .writes = TABLES(T(hta_clock_offsets_table)),
     .frees = TABLES(T(hta_node_clocks_table))},
    {"point-to-point", HTA_CROSSRANK_ROOT, .root = hta_p2p_results,
     .reads = TABLES(T(hta_p2p_summary_table), T(hta_p2p_ranks_table), T(hta_p2p_steps_table),
                     T(hta_p2p_unknown_peer_table), T(hta_comm_by_group_table),
                     T(hta_steps_table)),
     .writes = TABLES(T(hta_p2p_summary_table), T(hta_p2p_ranks_table),
                      T(hta_comm_by_group_table), T(hta_pipeline_steps_table),
                      T(hta_p2p_metrics_table)),
     .frees = TABLES(T(hta_p2p_steps_table), T(hta_p2p_unknown_peer_table))},
    JOIN("point-to-point metrics joined", hta_p2p_metrics_table, hta_rank_metrics_table),
    {"all-to-all", HTA_CROSSRANK_ROOT, .root_fixed = hta_a2a_results,
     .reads = TABLES(T(hta_a2a_matrix_table), T(hta_a2a_ranks_table)),
     .writes = TABLES(T(hta_a2a_matrix_table), T(hta_a2a_metrics_table)),
     .frees = TABLES(T(hta_a2a_ranks_table))},
    JOIN("all-to-all metrics joined", hta_a2a_metrics_table, hta_rank_metrics_table),
    {"outlier search", HTA_CROSSRANK_ROOT, .root = hta_find_outliers,
     .reads = TABLES(T(hta_rank_metrics_table)), .writes = TABLES(T(hta_outliers_table)),
     .frees = NONE},
    {"kernel type totals", HTA_CROSSRANK_ROOT, .root_fixed = hta_kernel_type_totals,
     .reads = TABLES(T(hta_kernel_type_by_rank_table)),
     .writes = TABLES(T(hta_kernel_type_breakdown_table)), .frees = NONE},
    {"kernel comparison", HTA_CROSSRANK_ROOT, .root = hta_kernel_comparison,
     .reads = TABLES(T(hta_kernels_table)), .writes = TABLES(T(hta_cross_kernels_table)),
     .frees = NONE},
    {"op and annotation comparison", HTA_CROSSRANK_ROOT,
     .root = hta_op_and_annotation_comparison,
     .reads = TABLES(T(hta_ops_table), T(hta_annotations_table), T(hta_kernel_sequences_table)),
     .writes = TABLES(T(hta_cross_ops_table), T(hta_cross_annotations_table),
                      T(hta_cross_kernel_sequences_table)),
     .frees = NONE},
    {"op performance comparison", HTA_CROSSRANK_ROOT, .root_fixed = hta_op_perf_comparison,
     .reads = TABLES(T(hta_op_perf_table)), .writes = TABLES(T(hta_cross_op_perf_table)),
     .frees = NONE},
    {"traced FLOPs per step", HTA_CROSSRANK_ROOT, .root_fixed = hta_op_perf_steps,
     .reads = TABLES(T(hta_steps_table), T(hta_step_flops_table)),
     .writes = TABLES(COLUMN(hta_steps_table, "traced_flops"),
                      COLUMN(hta_steps_table, "traced_mfu_pct")),
     .frees = NONE},
    {"collective wait", HTA_CROSSRANK_ROOT, .root_fixed = hta_collective_wait,
     .reads = TABLES(T(hta_ranks_table), T(hta_collective_kernels_table),
                     T(hta_group_waits_table), T(hta_group_missing_table),
                     T(hta_comm_by_group_table), T(hta_step_waits_table), T(hta_steps_table),
                     T(hta_clock_shifts_table), T(hta_missing_ranks_table),
                     T(hta_process_groups_table)),
     .writes = TABLES(T(hta_collective_wait_table), T(hta_late_arrivers_table),
                      COLUMN(hta_steps_table, "wait_us")),
     .frees = TABLES(T(hta_group_waits_table), T(hta_group_missing_table),
                     T(hta_step_waits_table))},
    JOIN("late arrivers flagged", hta_late_arrivers_table, hta_outliers_table),
    {"step comparison", HTA_CROSSRANK_ROOT, .root_fixed = hta_step_comparison,
     .reads = TABLES(T(hta_steps_table), COLUMN(hta_steps_table, "wait_us")),
     .writes = TABLES(T(hta_cross_steps_table)), .frees = NONE},
    {"step jitter", HTA_CROSSRANK_ROOT, .root_fixed = hta_step_jitter,
     .reads = TABLES(T(hta_steps_table), COLUMN(hta_steps_table, "wait_us")),
     .writes = TABLES(T(hta_step_jitter_table), T(hta_step_jitter_slowest_table)),
     .frees = NONE},
    {"straggler ranks", HTA_CROSSRANK_ROOT, .root = hta_rank_stragglers,
     .reads = TABLES(T(hta_ranks_table), T(hta_rank_metrics_table),
                     T(hta_collective_wait_table), T(hta_p2p_ranks_table), T(hta_steps_table),
                     COLUMN(hta_steps_table, "wait_us")),
     .writes = TABLES(T(hta_stragglers_table)), .frees = NONE},
    {"delay costs", HTA_CROSSRANK_ROOT, .root = hta_delay_costs,
     .reads = TABLES(T(hta_stragglers_table), T(hta_steps_table),
                     COLUMN(hta_steps_table, "wait_us"), T(hta_delay_parts_table)),
     .writes = TABLES(T(hta_delay_costs_table)), .frees = TABLES(T(hta_delay_parts_table))},
    {"job critical path", HTA_CROSSRANK_ROOT, .root_fixed = hta_global_path_results,
     .reads = TABLES(T(hta_path_walk_table), T(hta_path_walk_names_table),
                     T(hta_path_name_times_table)),
     .writes = TABLES(T(hta_global_path_table), T(hta_global_path_steps_table),
                      T(hta_global_path_ranks_table), T(hta_global_path_names_table),
                      T(hta_global_path_imbalance_table)),
     .frees = TABLES(T(hta_path_walk_table), T(hta_path_walk_names_table),
                     T(hta_path_name_times_table))},
    {"what-if", HTA_CROSSRANK_ALL_PROCESSES, .everywhere = hta_what_if,
     .reads = TABLES(T(hta_delay_costs_table), T(hta_stragglers_table), T(hta_ranks_table),
                     T(hta_cross_steps_table)),
     .writes = TABLES(T(hta_what_if_table)), .frees = NONE},
    {"node statistics", HTA_CROSSRANK_ROOT, .root_nodes = hta_node_statistics,
     .reads = TABLES(T(hta_rank_metrics_table), T(hta_outliers_table)),
     .writes = TABLES(T(hta_nodes_table), T(hta_node_metrics_table)), .frees = NONE},
};
const size_t hta_n_crossrank_steps = sizeof hta_crossrank_steps / sizeof *hta_crossrank_steps;

/* Appends the rows of part to into, when both exist, keeping a per-rank
 * into in rank order (a stable sort: a rank's rows keep theirs), then
 * removes part. */
static int join_rows(hta_tableset *set, const hta_table_spec *part, const hta_table_spec *into,
                     hta_error *err)
{
    const hta_table *from = hta_tableset_find(set, part->name);
    hta_table *to = hta_tableset_find(set, into->name);
    int rc = 0;
    for (size_t i = 0; from && to && rc == 0 && i < from->n_rows; i++)
        rc = hta_table_copy_row(to, from, i);
    if (rc == 0 && from && to && (into->flags & HTA_TABLE_PER_RANK))
        rc = hta_table_sort_by_first_column(to);
    hta_tableset_remove(set, part->name);
    return rc ? hta_fail(err, "out of memory joining %s to %s", part->name, into->name) : 0;
}

int hta_crossrank_step_run(const hta_crossrank_step *s, const hta_processes *pr,
                           hta_crossrank_tables *t, const hta_crossrank_settings *opt,
                           hta_error *err)
{
    if (s->where == HTA_CROSSRANK_ALL_PROCESSES)
        return s->everywhere(pr, t, opt, err);
    if (pr->me != HTA_ROOT)
        return 0;
    if (s->into)
        return join_rows(t->all, s->part, s->into, err);
    if (s->root_nodes)
        return s->root_nodes(t->all, t->hosts, opt, err);
    return s->root ? s->root(t->all, opt, err) : s->root_fixed(t->all, err);
}
