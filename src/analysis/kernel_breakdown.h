/* analysis/kernel_breakdown.h: entry point of analysis/kernel_breakdown.c (registry.h). */
#ifndef HTA_KERNEL_BREAKDOWN_H
#define HTA_KERNEL_BREAKDOWN_H

#include "analysis/registry.h"

int hta_kernel_breakdown(const hta_rank_view *view, const hta_analysis_settings *opt,
                         hta_tableset *out, hta_error *err);

#endif
