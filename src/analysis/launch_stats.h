/* analysis/launch_stats.h: entry point of analysis/launch_stats.c (registry.h). */
#ifndef HTA_LAUNCH_STATS_H
#define HTA_LAUNCH_STATS_H

#include "analysis/registry.h"

int hta_launch_stats(const hta_rank_view *view, const hta_analysis_settings *opt,
                     hta_tableset *out, hta_error *err);

#endif
