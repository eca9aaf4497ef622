/* analysis/idle_time.h: entry point of analysis/idle_time.c (registry.h). */
#ifndef HTA_IDLE_TIME_H
#define HTA_IDLE_TIME_H

#include "analysis/registry.h"

int hta_idle_time(const hta_rank_view *view, const hta_analysis_settings *opt,
                  hta_tableset *out, hta_error *err);

#endif
