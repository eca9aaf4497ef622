/* crossrank/exchange/p2p_pairs.h: point-to-point sends paired with their receives
 * where the matching by process group meets them
 * (crossrank/exchange/p2p_pairs.c). */
#ifndef HTA_P2P_PAIRS_H
#define HTA_P2P_PAIRS_H

#include <stddef.h>

#include "crossrank/exchange/collective_groups.h"
#include "crossrank/exchange/rank_ops.h"
#include "table/table.h"

/* Owner: the ops ops[o[0..n)] of one pair instance (HTA_BY_PAIR, rank
 * order): a send and its recv are paired, their results written and
 * their row added to pairs; anything else is unpaired.  -1 when out of
 * memory. */
int hta_match_pair(const hta_comm_catalog *c, const hta_group_op *ops, const size_t *o, size_t n,
                   hta_op_result *results, hta_table *pairs);

/* Rank side: "p2p_summary" from r's sends, "_p2p_ranks" and "_p2p_steps"
 * from its point-to-point ops and their results.  -1 when out of
 * memory. */
int hta_rank_p2p_figures(const hta_comm_catalog *c, const hta_rank_ops *r,
                         const hta_op_result *results, hta_tableset *out);

/* The columns of /p2p (docs/results-format.md). */
enum {
    HTA_P2P_GROUP,
    HTA_P2P_SRC,
    HTA_P2P_DST,
    HTA_P2P_INDEX,
    HTA_P2P_DTYPE,
    HTA_P2P_BYTES,
    HTA_P2P_SEND_START_US,
    HTA_P2P_RECV_START_US,
    HTA_P2P_LATE_SENDER_US,
    HTA_P2P_LATE_RECEIVER_US,
    HTA_P2P_TRANSFER_US,
    HTA_P2P_GBPS,
    HTA_P2P_CLOCK_VIOLATION,
    HTA_P2P_N_COLUMNS
};
extern const hta_table_spec hta_p2p_table;

/* The columns of /p2p_summary (docs/results-format.md). */
enum {
    HTA_P2P_SUMMARY_SRC,
    HTA_P2P_SUMMARY_DST,
    HTA_P2P_SUMMARY_COUNT,
    HTA_P2P_SUMMARY_TOTAL_BYTES,
    HTA_P2P_SUMMARY_TRANSFER_P50_US,
    HTA_P2P_SUMMARY_GBPS_P50,
    HTA_P2P_SUMMARY_LATE_SENDER_US,
    HTA_P2P_SUMMARY_LATE_RECEIVER_US,
    HTA_P2P_SUMMARY_CLOCK_VIOLATIONS,
    HTA_P2P_SUMMARY_N_COLUMNS
};
extern const hta_table_spec hta_p2p_summary_table;

/* The columns of _p2p_ranks (scratch between stages, never written). */
enum {
    HTA_P2P_RANKS_RANK,
    HTA_P2P_RANKS_OPS,
    HTA_P2P_RANKS_UNPAIRED,
    HTA_P2P_RANKS_LATE_SENDER_WAIT_NS,
    HTA_P2P_RANKS_LATE_RECEIVER_WAIT_NS,
    HTA_P2P_RANKS_CAUSED_LATE_SENDER_NS,
    HTA_P2P_RANKS_CLOCK_VIOLATIONS,
    HTA_P2P_RANKS_ARRIVED_LAST, /* paired ops whose half came last: the peer waited */
    HTA_P2P_RANKS_N_COLUMNS
};
extern const hta_table_spec hta_p2p_ranks_table;

/* The columns of _p2p_steps (scratch between stages, never written). */
enum {
    HTA_P2P_STEPS_RANK,
    HTA_P2P_STEPS_STEP,
    HTA_P2P_STEPS_WAIT_NS,
    HTA_P2P_STEPS_EXPOSED_WAIT_NS,
    HTA_P2P_STEPS_RECEIVES,
    HTA_P2P_STEPS_STAGE,
    HTA_P2P_STEPS_STAGES,
    HTA_P2P_STEPS_N_COLUMNS
};
extern const hta_table_spec hta_p2p_steps_table;

#endif
