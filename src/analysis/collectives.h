/* analysis/collectives.h: entry point of analysis/collectives.c (registry.h). */
#ifndef HTA_COLLECTIVES_H
#define HTA_COLLECTIVES_H

#include "analysis/registry.h"

/* "_collectives": every COMMUNICATION kernel for the root's wait-state
 * analysis (crossrank/collective_wait.c), packed per (rank, stream). */
int hta_collectives(const hta_rank_view *view, hta_tableset *out, hta_error *err);

#endif
