/* crossrank/stragglers.h: ranks that hold the others back. */
#ifndef HTA_STRAGGLERS_H
#define HTA_STRAGGLERS_H

#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* "stragglers" from "collective_wait" and "rank_metrics". */
int hta_rank_stragglers(hta_tableset *set, const hta_crossrank_settings *opt, hta_error *err);

#endif
