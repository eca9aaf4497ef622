/* analysis/collectives.h: entry point of analysis/collectives.c (registry.h). */
#ifndef HTA_COLLECTIVES_H
#define HTA_COLLECTIVES_H

#include "model/rank_view.h"
#include "table/table.h"
#include "util/error.h"

/* "_collectives": every COMMUNICATION kernel for the root's wait-state
 * analysis (crossrank/compare/collective_wait.c), packed per (rank, stream). */
int hta_collectives(const hta_rank_view *view, hta_tableset *out, hta_error *err);

/* The columns of _collectives (scratch between stages, never written). */
enum {
    HTA_COLLECTIVE_KERNELS_RANK,
    HTA_COLLECTIVE_KERNELS_STREAM,
    HTA_COLLECTIVE_KERNELS_KERNELS,
    HTA_COLLECTIVE_KERNELS_FIRST_START_NS,
    HTA_COLLECTIVE_KERNELS_START_GAPS,
    HTA_COLLECTIVE_KERNELS_DURATIONS,
    HTA_COLLECTIVE_KERNELS_ENDS_TOGETHER,
    HTA_COLLECTIVE_KERNELS_N_COLUMNS
};
extern const hta_table_spec hta_collective_kernels_table;

/* The columns of _p2p_unknown_peer (scratch between stages, never written). */
enum {
    HTA_P2P_UNKNOWN_PEER_RANK,
    HTA_P2P_UNKNOWN_PEER_KERNELS,
    HTA_P2P_UNKNOWN_PEER_N_COLUMNS
};
extern const hta_table_spec hta_p2p_unknown_peer_table;

#endif
