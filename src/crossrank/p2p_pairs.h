/* crossrank/p2p_pairs.h: point-to-point sends paired with their receives
 * where the matching by process group meets them
 * (crossrank/p2p_pairs.c). */
#ifndef HTA_P2P_PAIRS_H
#define HTA_P2P_PAIRS_H

#include <stddef.h>

#include "crossrank/collective_groups.h"
#include "crossrank/comm_catalog.h"
#include "table/table.h"

/* The owner's table of pairs ("p2p"), NULL when out of memory. */
hta_table *hta_p2p_pairs_table(hta_tableset *out);

/* The per-rank figures ("_p2p_ranks": rank, ops, unpaired, late sender
 * and late receiver wait, caused late-sender wait, clock violations, in
 * ns), NULL when out of memory. */
hta_table *hta_p2p_ranks_table(hta_tableset *out);

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

#endif
