/* analysis/temporal_breakdown.h: entry point of analysis/temporal_breakdown.c (registry.h). */
#ifndef HTA_TEMPORAL_BREAKDOWN_H
#define HTA_TEMPORAL_BREAKDOWN_H

#include "analysis/registry.h"

int hta_temporal_breakdown(const hta_rank_view *view, hta_tableset *out, hta_error *err);

#endif
