/* crossrank/compare/stragglers.h: ranks that hold the others back. */
#ifndef HTA_STRAGGLERS_H
#define HTA_STRAGGLERS_H

#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* "stragglers" from "collective_wait" and "rank_metrics". */
int hta_rank_stragglers(hta_tableset *set, const hta_crossrank_settings *opt, hta_error *err);

/* The columns of /stragglers (docs/results-format.md). */
enum {
    HTA_STRAGGLERS_RANK,
    HTA_STRAGGLERS_SCORE,
    HTA_STRAGGLERS_FLAGGED,
    HTA_STRAGGLERS_ARRIVED_LAST_SHARE,
    HTA_STRAGGLERS_FAIR_SHARE,
    HTA_STRAGGLERS_COMPUTE_TIME_US,
    HTA_STRAGGLERS_COMPUTE_RATIO,
    HTA_STRAGGLERS_COMPUTE_Z,
    HTA_STRAGGLERS_COMPUTE_ROBUST_Z,
    HTA_STRAGGLERS_REASONS,
    HTA_STRAGGLERS_CAUSED_WAIT_US,
    HTA_STRAGGLERS_CAUSE,
    HTA_STRAGGLERS_N_COLUMNS
};
extern const hta_table_spec hta_stragglers_table;

#endif
