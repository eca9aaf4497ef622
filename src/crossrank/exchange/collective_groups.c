/* collective_groups.c: collective instances by process group.
 *
 * Input: "_comm_ops" (analysis/comm_ops.c), every communication kernel
 * whose collective metadata is known, packed per (rank, group) and
 * unpacked here into compact ops.  A process group issues its
 * collectives in the same order on each of its ranks, whatever stream each
 * rank runs them on, so one instance is (group, Seq) when PyTorch recorded
 * Seq, else (group, k-th kernel of that group on the rank).  Only the
 * ranks that ran a kernel of the group take part in its instances; a
 * member rank of the group (its "Process Group Ranks", else pg_config)
 * that was analysed but has no kernel for an instance counts it as
 * "missing".  Ranks are the traces' global ranks, so the members listed by
 * the group are global too.
 *
 * The work is split so that no process needs every rank's kernels
 * (crossrank/collective_exchange.c runs the parts on different
 * processes): the owner of an instance matches its ops and returns each
 * op's result; the process holding a rank turns its ops' results into the
 * rank's figures; the root adds the figures up.  Groups and kinds travel
 * as numbers of a catalog every process builds the same way
 * (crossrank/exchange/comm_catalog.c).
 *
 * Per instance ("collectives", one row each): bytes (input buffer for
 * all-reduce, broadcast, reduce, all-to-all and reduce-scatter, output
 * buffer for all-gather: the full message, as nccl-tests counts it), the
 * first and last arriving rank, arrival skew (latest start - earliest
 * start), end skew (latest end - earliest end), transfer time (the
 * shortest duration: on the last rank to arrive the kernel only
 * transfers), algbw = bytes / transfer time and busbw = algbw x the
 * nccl-tests factor for n = group size (all-reduce 2(n-1)/n; all-gather,
 * reduce-scatter, all-to-all (n-1)/n; others 1), in GB/s of 1e9 bytes.
 * A rank whose collective name or element count differs from the lowest
 * rank's at the same instance is listed in "mismatched_ranks" and counted
 * on the rank, never silently matched as agreeing.
 *
 * "collective_summary": one row per (group description, collective,
 * dtype, message size bucket = the smallest power of two >= bytes), from
 * each instance's figures ("_instance_stats"), which the owners send to
 * the process summarising that key, so that no process holds every
 * instance; the root only puts the rows in key order.  The instance rows
 * themselves stay with their owners, which write them into the results
 * file (output/hdf5_in_place.c).
 *
 * "comm_by_group": per rank and group, the communication time, the part
 * computation overlapped, the exposed rest split into waiting for the last
 * peer and transferring, the wait and the last arrivals.
 *
 * This file declares the tables (but "_kernel_waits", beside the figures
 * it holds); the three stages are group_instances.c (an owner's
 * instances), group_rank_figures.c (a rank's figures) and
 * group_results.c (on the root). */
#include "crossrank/exchange/collective_groups.h"

static const hta_column INSTANCE_COLUMNS[HTA_COLLECTIVES_N_COLUMNS] = {
    [HTA_COLLECTIVES_GROUP] = {"group", HTA_COL_STR},
    [HTA_COLLECTIVES_GROUP_DESC] = {"group_desc", HTA_COL_STR},
    [HTA_COLLECTIVES_SEQ] = {"seq", HTA_COL_I64},
    [HTA_COLLECTIVES_SEQ_FROM_TRACE] = {"seq_from_trace", HTA_COL_I64},
    [HTA_COLLECTIVES_COLLECTIVE] = {"collective", HTA_COL_STR},
    [HTA_COLLECTIVES_DTYPE] = {"dtype", HTA_COL_STR},
    [HTA_COLLECTIVES_BYTES] = {"bytes", HTA_COL_I64},
    [HTA_COLLECTIVES_GROUP_SIZE] = {"group_size", HTA_COL_I64},
    [HTA_COLLECTIVES_N_RANKS] = {"n_ranks", HTA_COL_I64},
    [HTA_COLLECTIVES_FIRST_RANK] = {"first_rank", HTA_COL_I64},
    [HTA_COLLECTIVES_LAST_RANK] = {"last_rank", HTA_COL_I64},
    [HTA_COLLECTIVES_START_US] = {"start_us", HTA_COL_F64},
    [HTA_COLLECTIVES_ARRIVAL_SKEW_US] = {"arrival_skew_us", HTA_COL_F64},
    [HTA_COLLECTIVES_END_SKEW_US] = {"end_skew_us", HTA_COL_F64},
    [HTA_COLLECTIVES_TRANSFER_US] = {"transfer_us", HTA_COL_F64},
    [HTA_COLLECTIVES_ALGBW_GBPS] = {"algbw_gbps", HTA_COL_F64},
    [HTA_COLLECTIVES_BUSBW_GBPS] = {"busbw_gbps", HTA_COL_F64},
    [HTA_COLLECTIVES_TOTAL_WAIT_US] = {"total_wait_us", HTA_COL_F64},
    [HTA_COLLECTIVES_MISMATCHED_RANKS] = {"mismatched_ranks", HTA_COL_STR},
};
const hta_table_spec hta_collectives_table = {
    "collectives", INSTANCE_COLUMNS, HTA_COLLECTIVES_N_COLUMNS, HTA_TABLE_IN_PLACE};

/* A group's members are the same for each of its instances, so they are
 * listed once per group (as each rank describes it) rather than per
 * instance: /collectives is written with fixed-length strings, as wide as
 * the widest value, and the member list of a large group is kilobytes. */
static const hta_column PROCESS_GROUP_COLUMNS[HTA_PROCESS_GROUPS_N_COLUMNS] = {
    [HTA_PROCESS_GROUPS_GROUP] = {"group", HTA_COL_STR},
    [HTA_PROCESS_GROUPS_GROUP_DESC] = {"group_desc", HTA_COL_STR},
    [HTA_PROCESS_GROUPS_RANKS] = {"ranks", HTA_COL_STR},
};
const hta_table_spec hta_process_groups_table = {
    "process_groups", PROCESS_GROUP_COLUMNS, HTA_PROCESS_GROUPS_N_COLUMNS, HTA_TABLE_GATHERED};


/* What the root's summary needs of each instance ("collectives" itself is
 * written by its owners, output/hdf5_in_place.c). */
static const hta_column STATS_COLUMNS[HTA_INSTANCE_STATS_N_COLUMNS] = {
    [HTA_INSTANCE_STATS_GROUP_DESC] = {"group_desc", HTA_COL_STR},
    [HTA_INSTANCE_STATS_COLLECTIVE] = {"collective", HTA_COL_STR},
    [HTA_INSTANCE_STATS_DTYPE] = {"dtype", HTA_COL_STR},
    [HTA_INSTANCE_STATS_BYTES] = {"bytes", HTA_COL_I64},
    [HTA_INSTANCE_STATS_TRANSFER_NS] = {"transfer_ns", HTA_COL_I64},
    [HTA_INSTANCE_STATS_ARRIVAL_SKEW_NS] = {"arrival_skew_ns", HTA_COL_I64},
    [HTA_INSTANCE_STATS_WAIT_NS] = {"wait_ns", HTA_COL_I64},
    [HTA_INSTANCE_STATS_BUSBW_GBPS] = {"busbw_gbps", HTA_COL_F64},
    [HTA_INSTANCE_STATS_SCOPE] = {"scope", HTA_COL_I64},
};
const hta_table_spec hta_instance_stats_table = {
    "_instance_stats", STATS_COLUMNS, HTA_INSTANCE_STATS_N_COLUMNS,
    HTA_TABLE_EXCHANGED | HTA_TABLE_SCRATCH};

static const hta_column SUMMARY_COLUMNS[HTA_COLLECTIVE_SUMMARY_N_COLUMNS] = {
    [HTA_COLLECTIVE_SUMMARY_GROUP_DESC] = {"group_desc", HTA_COL_STR},
    [HTA_COLLECTIVE_SUMMARY_COLLECTIVE] = {"collective", HTA_COL_STR},
    [HTA_COLLECTIVE_SUMMARY_DTYPE] = {"dtype", HTA_COL_STR},
    [HTA_COLLECTIVE_SUMMARY_BUCKET_MAX_BYTES] = {"bucket_max_bytes", HTA_COL_I64},
    [HTA_COLLECTIVE_SUMMARY_COUNT] = {"count", HTA_COL_I64},
    [HTA_COLLECTIVE_SUMMARY_TOTAL_BYTES] = {"total_bytes", HTA_COL_I64},
    [HTA_COLLECTIVE_SUMMARY_TRANSFER_P50_US] = {"transfer_p50_us", HTA_COL_F64},
    [HTA_COLLECTIVE_SUMMARY_TRANSFER_P90_US] = {"transfer_p90_us", HTA_COL_F64},
    [HTA_COLLECTIVE_SUMMARY_TRANSFER_MAX_US] = {"transfer_max_us", HTA_COL_F64},
    [HTA_COLLECTIVE_SUMMARY_BUSBW_P50_GBPS] = {"busbw_p50_gbps", HTA_COL_F64},
    [HTA_COLLECTIVE_SUMMARY_BUSBW_MIN_GBPS] = {"busbw_min_gbps", HTA_COL_F64},
    [HTA_COLLECTIVE_SUMMARY_MEAN_ARRIVAL_SKEW_US] = {"mean_arrival_skew_us", HTA_COL_F64},
    [HTA_COLLECTIVE_SUMMARY_TOTAL_WAIT_US] = {"total_wait_us", HTA_COL_F64},
    [HTA_COLLECTIVE_SUMMARY_WITHIN_NODE_COUNT] = {"within_node_count", HTA_COL_I64},
    [HTA_COLLECTIVE_SUMMARY_WITHIN_NODE_BUSBW_P50_GBPS] = {"within_node_busbw_p50_gbps",
                                                           HTA_COL_F64},
    [HTA_COLLECTIVE_SUMMARY_ACROSS_NODES_COUNT] = {"across_nodes_count", HTA_COL_I64},
    [HTA_COLLECTIVE_SUMMARY_ACROSS_NODES_BUSBW_P50_GBPS] = {"across_nodes_busbw_p50_gbps",
                                                            HTA_COL_F64},
};
const hta_table_spec hta_collective_summary_table = {
    "collective_summary", SUMMARY_COLUMNS, HTA_COLLECTIVE_SUMMARY_N_COLUMNS, HTA_TABLE_GATHERED};

static const hta_column BY_GROUP_COLUMNS[HTA_COMM_BY_GROUP_N_COLUMNS] = {
    [HTA_COMM_BY_GROUP_RANK] = {"rank", HTA_COL_I64},
    [HTA_COMM_BY_GROUP_GROUP] = {"group", HTA_COL_STR},
    [HTA_COMM_BY_GROUP_GROUP_DESC] = {"group_desc", HTA_COL_STR},
    [HTA_COMM_BY_GROUP_INSTANCES] = {"instances", HTA_COL_I64},
    [HTA_COMM_BY_GROUP_COMM_US] = {"comm_us", HTA_COL_F64},
    [HTA_COMM_BY_GROUP_OVERLAPPED_US] = {"overlapped_us", HTA_COL_F64},
    [HTA_COMM_BY_GROUP_EXPOSED_US] = {"exposed_us", HTA_COL_F64},
    [HTA_COMM_BY_GROUP_EXPOSED_WAIT_US] = {"exposed_wait_us", HTA_COL_F64},
    [HTA_COMM_BY_GROUP_EXPOSED_TRANSFER_US] = {"exposed_transfer_us", HTA_COL_F64},
    [HTA_COMM_BY_GROUP_WAIT_US] = {"wait_us", HTA_COL_F64},
    [HTA_COMM_BY_GROUP_ARRIVED_LAST] = {"arrived_last", HTA_COL_I64},
    [HTA_COMM_BY_GROUP_P2P_OPS] = {"p2p_ops", HTA_COL_I64},
    [HTA_COMM_BY_GROUP_LATE_SENDER_US] = {"late_sender_us", HTA_COL_F64},
    [HTA_COMM_BY_GROUP_LATE_RECEIVER_US] = {"late_receiver_us", HTA_COL_F64},
    [HTA_COMM_BY_GROUP_UNPAIRED] = {"unpaired", HTA_COL_I64},
};
const hta_table_spec hta_comm_by_group_table = {
    "comm_by_group", BY_GROUP_COLUMNS, HTA_COMM_BY_GROUP_N_COLUMNS, HTA_TABLE_GATHERED};

/* A rank's figures over its group-matched kernels, for the root. */
static const hta_column WAIT_COLUMNS[HTA_GROUP_WAITS_N_COLUMNS] = {
    [HTA_GROUP_WAITS_RANK] = {"rank", HTA_COL_I64},
    [HTA_GROUP_WAITS_COLLECTIVES] = {"collectives", HTA_COL_I64},
    [HTA_GROUP_WAITS_ARRIVED_LAST] = {"arrived_last", HTA_COL_I64},
    [HTA_GROUP_WAITS_CLOCK_VIOLATIONS] = {"clock_violations", HTA_COL_I64},
    [HTA_GROUP_WAITS_WAIT_NS] = {"wait_ns", HTA_COL_I64},
    [HTA_GROUP_WAITS_MAX_END_LAG_NS] = {"max_end_lag_ns", HTA_COL_I64},
    [HTA_GROUP_WAITS_CAUSED_WAIT_NS] = {"caused_wait_ns", HTA_COL_I64},
    [HTA_GROUP_WAITS_METADATA_MISMATCHES] = {"metadata_mismatches", HTA_COL_I64},
    [HTA_GROUP_WAITS_EXPECTED_LAST] = {"expected_last", HTA_COL_F64},
};
const hta_table_spec hta_group_waits_table = {
    "_group_waits", WAIT_COLUMNS, HTA_GROUP_WAITS_N_COLUMNS,
    HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};
static const hta_column MISSING_COLUMNS[HTA_GROUP_MISSING_N_COLUMNS] = {
    [HTA_GROUP_MISSING_RANK] = {"rank", HTA_COL_I64},
    [HTA_GROUP_MISSING_MISSING] = {"missing", HTA_COL_I64},
};
const hta_table_spec hta_group_missing_table = {
    "_group_missing", MISSING_COLUMNS, HTA_GROUP_MISSING_N_COLUMNS,
    HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};
static const hta_column STEP_WAIT_COLUMNS[HTA_STEP_WAITS_N_COLUMNS] = {
    [HTA_STEP_WAITS_RANK] = {"rank", HTA_COL_I64},
    [HTA_STEP_WAITS_STEP] = {"step", HTA_COL_I64},
    [HTA_STEP_WAITS_WAIT_US] = {"wait_us", HTA_COL_F64},
};
const hta_table_spec hta_step_waits_table = {
    "_step_waits", STEP_WAIT_COLUMNS, HTA_STEP_WAITS_N_COLUMNS,
    HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};
