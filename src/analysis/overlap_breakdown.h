/* analysis/overlap_breakdown.h: entry point of analysis/overlap_breakdown.c (registry.h). */
#ifndef HTA_OVERLAP_BREAKDOWN_H
#define HTA_OVERLAP_BREAKDOWN_H

#include "analysis/registry.h"

int hta_overlap_breakdown(const hta_rank_view *view, hta_tableset *out, hta_error *err);

#endif
