/* analysis/idle_time.h: entry point of analysis/idle_time.c (registry.h). */
#ifndef HTA_IDLE_TIME_H
#define HTA_IDLE_TIME_H

#include "model/rank_view.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

int hta_idle_time(const hta_rank_view *view, const hta_analysis_settings *opt,
                  hta_tableset *out, hta_error *err);

/* The columns of /idle_time (docs/results-format.md). */
enum {
    HTA_IDLE_TIME_RANK,
    HTA_IDLE_TIME_STREAM,
    HTA_IDLE_TIME_IDLE_CATEGORY,
    HTA_IDLE_TIME_IDLE_TIME_US,
    HTA_IDLE_TIME_IDLE_TIME_RATIO,
    HTA_IDLE_TIME_COUNT,
    HTA_IDLE_TIME_MEAN_US,
    HTA_IDLE_TIME_STD_US,
    HTA_IDLE_TIME_MIN_US,
    HTA_IDLE_TIME_P25_US,
    HTA_IDLE_TIME_P50_US,
    HTA_IDLE_TIME_P75_US,
    HTA_IDLE_TIME_MAX_US,
    HTA_IDLE_TIME_N_COLUMNS
};
extern const hta_table_spec hta_idle_time_table;

#endif
