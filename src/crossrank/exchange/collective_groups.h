/* crossrank/exchange/collective_groups.h: collective instances matched
 * by process group (the tables: collective_groups.c; the parts:
 * group_instances.c, group_rank_figures.c, group_results.c), in three
 * parts that can run on
 * different processes (crossrank/collective_exchange.c moves the data
 * between them): each rank's kernels as ops, the matching of an
 * instance's ops on the process that owns it, and each rank's figures
 * from its ops' results; the root then adds the figures to the per-rank
 * wait figures that it and the by-stream matching of collective_wait.c
 * share. */
#ifndef HTA_COLLECTIVE_GROUPS_H
#define HTA_COLLECTIVE_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "crossrank/exchange/rank_ops.h"
#include "table/table.h"
#include "util/error.h"

/* One rank's side of every instance it took part in; one per row of
 * "ranks" (rank order). */
typedef struct rank_waits {
    int64_t rank;
    int failed;                /* no output row */
    int64_t collectives, matched, unmatched, missing, arrived_last, clock_violations;
    int64_t wait_ns, max_end_lag_ns;
    int64_t caused_wait_ns;    /* others' wait at instances it arrived last at */
    int64_t metadata_mismatches; /* instances whose name or size it disagrees on */
    double expected_last;      /* sum of 1 / participants over contested instances */
} rank_waits;

/* What the owner found for one op.  For a point-to-point op (p2p), wait
 * is its own (late sender on a recv, late receiver on a send), caused the
 * peer's, and n_ranks 2 when paired, 1 when not. */
typedef struct hta_op_result {
    int64_t wait_ns, end_lag_ns, caused_ns;
    /* The instance's last arriver (-1 when nobody arrived last), and on
     * it, how much later it arrived than the last of the others (0 on a
     * tie): what crossrank/job_path/delay_costs.c splits the caused wait by. */
    int64_t last_rank, lateness_ns;
    int64_t n_ranks;           /* ranks taking part in the instance */
    int64_t transfer_ns;       /* point-to-point: the pair's transfer */
    uint8_t contested, last, clock_violation, mismatch, p2p;
    uint8_t unused[3];
} hta_op_result;

/* The indices of ops[0..n) in instance order, then rank (an array the
 * caller frees; NULL when out of memory), and whether two ops are of one
 * instance. */
size_t *hta_group_ops_in_instance_order(const hta_group_op *ops, size_t n);
/* The instance order of two ops: group, by_seq, key. */
int hta_group_op_compare_instance(const hta_group_op *a, const hta_group_op *b);
int hta_group_ops_same_instance(const hta_group_op *a, const hta_group_op *b);

/* Whether every rank ends an instance of the collective at once (the
 * data reaches all of them together): all-reduce, all-gather and
 * reduce-scatter. */
int hta_collective_ends_together(const char *collective);

/* Owner: matches ops[0..n), every op of each of its instances, writing
 * results[i] for ops[i]; appends the instances' rows to "collectives" of
 * out (in (group, by_seq, key) order), what the summary needs of them to
 * "_instance_stats", and the instances each analysed member rank missed
 * to "_group_missing".  valid: the analysed ranks,
 * sorted; valid_node: the node of each (NULL when unknown), which tells
 * an instance within one node from one across nodes.  -1 when out of
 * memory. */
int hta_match_group_ops(const hta_comm_catalog *c, const hta_group_op *ops, size_t n,
                        const int64_t *valid, const int64_t *valid_node, size_t n_valid,
                        hta_op_result *results, hta_tableset *out);

/* Rank side: from a rank's ops and their results, its wait figures
 * ("_group_waits"), its rows of "comm_by_group" and the wait per profiler
 * step ("_step_waits"), in out.  -1 when out of memory. */
int hta_rank_group_figures(const hta_comm_catalog *c, const hta_rank_ops *r,
                           const hta_op_result *results, hta_tableset *out);

/* Rank side, for --write-traces: "_kernel_waits", one row per op of r
 * that waited for its peers or arrived last (rank, start_ns, wait_ns,
 * caused_ns, arrived_last, group, collective).  -1 when out of memory. */
int hta_put_kernel_waits(const hta_comm_catalog *c, const hta_rank_ops *r,
                         const hta_op_result *results, hta_tableset *out);

/* The process (of n_processes) that summarises an "_instance_stats" row:
 * by its (description, collective, dtype, size bucket), the same on every
 * process. */
int hta_instance_summary_owner(const hta_cell *stats_row, int n_processes);
/* Turns the "_instance_stats" rows of set into "collective_summary" rows,
 * one per key, and removes them; -1 when out of memory. */
int hta_summarize_instances(hta_tableset *set);

/* Root: "process_groups", each group's members as each rank describes
 * them; -1 when out of memory. */
int hta_put_process_groups(const hta_comm_catalog *c, hta_tableset *out);

/* Root: adds "_group_waits" and "_group_missing" to w (n_ranks slots, the
 * rows of "ranks"), "_step_waits" to "steps", and puts
 * "collective_summary" in key order and "comm_by_group" (gathered process
 * by process) in rank order.  -1 with err. */
int hta_add_collective_groups(hta_tableset *set, rank_waits *w, size_t n_ranks, hta_error *err);

/* The columns of /collectives (docs/results-format.md). */
enum {
    HTA_COLLECTIVES_GROUP,
    HTA_COLLECTIVES_GROUP_DESC,
    HTA_COLLECTIVES_SEQ,
    HTA_COLLECTIVES_SEQ_FROM_TRACE,
    HTA_COLLECTIVES_COLLECTIVE,
    HTA_COLLECTIVES_DTYPE,
    HTA_COLLECTIVES_BYTES,
    HTA_COLLECTIVES_GROUP_SIZE,
    HTA_COLLECTIVES_N_RANKS,
    HTA_COLLECTIVES_FIRST_RANK,
    HTA_COLLECTIVES_LAST_RANK,
    HTA_COLLECTIVES_START_US,
    HTA_COLLECTIVES_ARRIVAL_SKEW_US,
    HTA_COLLECTIVES_END_SKEW_US,
    HTA_COLLECTIVES_TRANSFER_US,
    HTA_COLLECTIVES_ALGBW_GBPS,
    HTA_COLLECTIVES_BUSBW_GBPS,
    HTA_COLLECTIVES_TOTAL_WAIT_US,
    HTA_COLLECTIVES_MISMATCHED_RANKS,
    HTA_COLLECTIVES_N_COLUMNS
};
extern const hta_table_spec hta_collectives_table;

/* The columns of /process_groups (docs/results-format.md). */
enum {
    HTA_PROCESS_GROUPS_GROUP,
    HTA_PROCESS_GROUPS_GROUP_DESC,
    HTA_PROCESS_GROUPS_RANKS,
    HTA_PROCESS_GROUPS_N_COLUMNS
};
extern const hta_table_spec hta_process_groups_table;

/* The columns of _instance_stats (scratch between stages, never written). */
enum {
    HTA_INSTANCE_STATS_GROUP_DESC,
    HTA_INSTANCE_STATS_COLLECTIVE,
    HTA_INSTANCE_STATS_DTYPE,
    HTA_INSTANCE_STATS_BYTES,
    HTA_INSTANCE_STATS_TRANSFER_NS,
    HTA_INSTANCE_STATS_ARRIVAL_SKEW_NS,
    HTA_INSTANCE_STATS_WAIT_NS,
    HTA_INSTANCE_STATS_BUSBW_GBPS,
    HTA_INSTANCE_STATS_SCOPE,
    HTA_INSTANCE_STATS_N_COLUMNS
};
extern const hta_table_spec hta_instance_stats_table;
/* Where an instance's ranks ran (HTA_INSTANCE_STATS_SCOPE). */
enum { HTA_SCOPE_UNKNOWN = -1, HTA_SCOPE_ACROSS_NODES = 0, HTA_SCOPE_WITHIN_NODE = 1 };

/* The columns of /collective_summary (docs/results-format.md). */
enum {
    HTA_COLLECTIVE_SUMMARY_GROUP_DESC,
    HTA_COLLECTIVE_SUMMARY_COLLECTIVE,
    HTA_COLLECTIVE_SUMMARY_DTYPE,
    HTA_COLLECTIVE_SUMMARY_BUCKET_MAX_BYTES,
    HTA_COLLECTIVE_SUMMARY_COUNT,
    HTA_COLLECTIVE_SUMMARY_TOTAL_BYTES,
    HTA_COLLECTIVE_SUMMARY_TRANSFER_P50_US,
    HTA_COLLECTIVE_SUMMARY_TRANSFER_P90_US,
    HTA_COLLECTIVE_SUMMARY_TRANSFER_MAX_US,
    HTA_COLLECTIVE_SUMMARY_BUSBW_P50_GBPS,
    HTA_COLLECTIVE_SUMMARY_BUSBW_MIN_GBPS,
    HTA_COLLECTIVE_SUMMARY_MEAN_ARRIVAL_SKEW_US,
    HTA_COLLECTIVE_SUMMARY_TOTAL_WAIT_US,
    HTA_COLLECTIVE_SUMMARY_WITHIN_NODE_COUNT,
    HTA_COLLECTIVE_SUMMARY_WITHIN_NODE_BUSBW_P50_GBPS,
    HTA_COLLECTIVE_SUMMARY_ACROSS_NODES_COUNT,
    HTA_COLLECTIVE_SUMMARY_ACROSS_NODES_BUSBW_P50_GBPS,
    HTA_COLLECTIVE_SUMMARY_N_COLUMNS
};
extern const hta_table_spec hta_collective_summary_table;

/* The columns of /comm_by_group (docs/results-format.md). */
enum {
    HTA_COMM_BY_GROUP_RANK,
    HTA_COMM_BY_GROUP_GROUP,
    HTA_COMM_BY_GROUP_GROUP_DESC,
    HTA_COMM_BY_GROUP_INSTANCES,
    HTA_COMM_BY_GROUP_COMM_US,
    HTA_COMM_BY_GROUP_OVERLAPPED_US,
    HTA_COMM_BY_GROUP_EXPOSED_US,
    HTA_COMM_BY_GROUP_EXPOSED_WAIT_US,
    HTA_COMM_BY_GROUP_EXPOSED_TRANSFER_US,
    HTA_COMM_BY_GROUP_WAIT_US,
    HTA_COMM_BY_GROUP_ARRIVED_LAST,
    HTA_COMM_BY_GROUP_P2P_OPS,
    HTA_COMM_BY_GROUP_LATE_SENDER_US,
    HTA_COMM_BY_GROUP_LATE_RECEIVER_US,
    HTA_COMM_BY_GROUP_UNPAIRED,
    HTA_COMM_BY_GROUP_N_COLUMNS
};
extern const hta_table_spec hta_comm_by_group_table;

/* The columns of _group_waits (scratch between stages, never written). */
enum {
    HTA_GROUP_WAITS_RANK,
    HTA_GROUP_WAITS_COLLECTIVES,
    HTA_GROUP_WAITS_ARRIVED_LAST,
    HTA_GROUP_WAITS_CLOCK_VIOLATIONS,
    HTA_GROUP_WAITS_WAIT_NS,
    HTA_GROUP_WAITS_MAX_END_LAG_NS,
    HTA_GROUP_WAITS_CAUSED_WAIT_NS,
    HTA_GROUP_WAITS_METADATA_MISMATCHES,
    HTA_GROUP_WAITS_EXPECTED_LAST,
    HTA_GROUP_WAITS_N_COLUMNS
};
extern const hta_table_spec hta_group_waits_table;

/* The columns of _group_missing (scratch between stages, never written). */
enum {
    HTA_GROUP_MISSING_RANK,
    HTA_GROUP_MISSING_MISSING,
    HTA_GROUP_MISSING_N_COLUMNS
};
extern const hta_table_spec hta_group_missing_table;

/* The columns of _step_waits (scratch between stages, never written). */
enum {
    HTA_STEP_WAITS_RANK,
    HTA_STEP_WAITS_STEP,
    HTA_STEP_WAITS_WAIT_US,
    HTA_STEP_WAITS_N_COLUMNS
};
extern const hta_table_spec hta_step_waits_table;

/* The columns of _kernel_waits (scratch between stages, never written). */
enum {
    HTA_KERNEL_WAITS_RANK,
    HTA_KERNEL_WAITS_START_NS,
    HTA_KERNEL_WAITS_WAIT_NS,
    HTA_KERNEL_WAITS_CAUSED_NS,
    HTA_KERNEL_WAITS_ARRIVED_LAST,
    HTA_KERNEL_WAITS_GROUP,
    HTA_KERNEL_WAITS_COLLECTIVE,
    HTA_KERNEL_WAITS_N_COLUMNS
};
extern const hta_table_spec hta_kernel_waits_table;

#endif
