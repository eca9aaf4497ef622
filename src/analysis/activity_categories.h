/* analysis/activity_categories.h: entry point of analysis/activity_categories.c (registry.h). */
#ifndef HTA_ACTIVITY_CATEGORIES_H
#define HTA_ACTIVITY_CATEGORIES_H

#include "analysis/registry.h"

int hta_activity_categories(const hta_rank_view *view, hta_tableset *out, hta_error *err);

#endif
