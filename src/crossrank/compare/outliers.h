/* crossrank/compare/outliers.h: the "outliers" table from "rank_metrics". */
#ifndef HTA_OUTLIERS_H
#define HTA_OUTLIERS_H

#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* Cross-rank statistics on the root (definitions section 5). */
int hta_find_outliers(hta_tableset *set, const hta_crossrank_settings *opt, hta_error *err);

#endif
