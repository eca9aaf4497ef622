/* analysis/gpu_gaps.h: entry point of analysis/gpu_gaps.c (registry.h). */
#ifndef HTA_GPU_GAPS_H
#define HTA_GPU_GAPS_H

#include "analysis/registry.h"

int hta_gpu_gaps(const hta_rank_view *view, const hta_analysis_settings *opt, hta_tableset *out,
                 hta_error *err);

#endif
