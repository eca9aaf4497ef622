/* crossrank/compare/collective_wait.h: wait states at matched collectives. */
#ifndef HTA_COLLECTIVE_WAIT_H
#define HTA_COLLECTIVE_WAIT_H

#include <stddef.h>
#include <stdint.h>

#include "table/table.h"
#include "util/error.h"

/* Whether a rank that arrived last at arrived_last of its matched
 * collectives, where fair_share is the share chance alone would give it,
 * arrives last far more often than chance among n_ranks ranks
 * (crossrank/compare/collective_wait.c explains the test). */
int hta_is_late_arriver(int64_t arrived_last, int64_t matched, double fair_share,
                        size_t n_ranks);

/* "collective_wait" from the per-rank "_collectives" (by stream) and
 * "_comm_ops" (by process group: crossrank/exchange/collective_groups.c)
 * tables; flags ranks that arrive last too often as "straggler" in
 * "_late_arrivers", rows of "outliers" joined to it after this step. */
int hta_collective_wait(hta_tableset *set, hta_error *err);

/* The columns of /collective_wait (docs/results-format.md). */
enum {
    HTA_COLLECTIVE_WAIT_RANK,
    HTA_COLLECTIVE_WAIT_COLLECTIVES,
    HTA_COLLECTIVE_WAIT_MATCHED,
    HTA_COLLECTIVE_WAIT_UNMATCHED,
    HTA_COLLECTIVE_WAIT_MISSING,
    HTA_COLLECTIVE_WAIT_TOTAL_WAIT_US,
    HTA_COLLECTIVE_WAIT_MEAN_WAIT_US,
    HTA_COLLECTIVE_WAIT_ARRIVED_LAST,
    HTA_COLLECTIVE_WAIT_ARRIVED_LAST_SHARE,
    HTA_COLLECTIVE_WAIT_FAIR_SHARE,
    HTA_COLLECTIVE_WAIT_MAX_END_SKEW_US,
    HTA_COLLECTIVE_WAIT_CLOCK_VIOLATIONS,
    HTA_COLLECTIVE_WAIT_CAUSED_WAIT_US,
    HTA_COLLECTIVE_WAIT_METADATA_MISMATCHES,
    HTA_COLLECTIVE_WAIT_N_COLUMNS
};
extern const hta_table_spec hta_collective_wait_table;
/* The columns of "outliers" (crossrank/compare/spread.h). */
extern const hta_table_spec hta_late_arrivers_table;

#endif
