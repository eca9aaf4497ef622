/* analysis/activity_categories.h: entry point of analysis/activity_categories.c (registry.h). */
#ifndef HTA_ACTIVITY_CATEGORIES_H
#define HTA_ACTIVITY_CATEGORIES_H

#include "model/rank_view.h"
#include "table/table.h"
#include "util/error.h"

int hta_activity_categories(const hta_rank_view *view, hta_tableset *out, hta_error *err);

/* The columns of /activity_categories (docs/results-format.md). */
enum {
    HTA_ACTIVITY_CATEGORIES_RANK,
    HTA_ACTIVITY_CATEGORIES_CATEGORY,
    HTA_ACTIVITY_CATEGORIES_COUNT,
    HTA_ACTIVITY_CATEGORIES_TOTAL_US,
    HTA_ACTIVITY_CATEGORIES_SHARE,
    HTA_ACTIVITY_CATEGORIES_MAX_US,
    HTA_ACTIVITY_CATEGORIES_MIN_US,
    HTA_ACTIVITY_CATEGORIES_TOP1_SHARE,
    HTA_ACTIVITY_CATEGORIES_TOP5_SHARE,
    HTA_ACTIVITY_CATEGORIES_TOP10_SHARE,
    HTA_ACTIVITY_CATEGORIES_TOP1_MEAN_US,
    HTA_ACTIVITY_CATEGORIES_TOP5_MEAN_US,
    HTA_ACTIVITY_CATEGORIES_TOP10_MEAN_US,
    HTA_ACTIVITY_CATEGORIES_N_COLUMNS
};
extern const hta_table_spec hta_activity_categories_table;

#endif
