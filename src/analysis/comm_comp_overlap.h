/* analysis/comm_comp_overlap.h: entry point of analysis/comm_comp_overlap.c (registry.h). */
#ifndef HTA_COMM_COMP_OVERLAP_H
#define HTA_COMM_COMP_OVERLAP_H

#include "analysis/registry.h"

int hta_comm_comp_overlap(const hta_rank_view *view, hta_tableset *out, hta_error *err);

#endif
