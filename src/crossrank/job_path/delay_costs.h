/* crossrank/job_path/delay_costs.h: the wait each rank's lateness costs the job,
 * direct and propagated (crossrank/job_path/delay_costs.c). */
#ifndef HTA_DELAY_COSTS_H
#define HTA_DELAY_COSTS_H

#include "crossrank/exchange/collective_groups.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* Rank side: from a rank's ops and their results, its parts of the delay
 * costs summed per (rank blamed, step) into "_delay_parts" of out.  -1
 * when out of memory. */
int hta_rank_delay_parts(const hta_rank_ops *r, const hta_op_result *results,
                         hta_tableset *out);

/* Root: "delay_costs" from "_delay_parts" and "steps" (opt: its
 * --min-effect floor). */
int hta_delay_costs(hta_tableset *set, const hta_crossrank_settings *opt, hta_error *err);

/* The columns of /delay_costs (docs/results-format.md). */
enum {
    HTA_DELAY_COSTS_RANK,
    HTA_DELAY_COSTS_STEP,
    HTA_DELAY_COSTS_DIRECT_US,
    HTA_DELAY_COSTS_PROPAGATED_US,
    HTA_DELAY_COSTS_TOTAL_US,
    HTA_DELAY_COSTS_CAUSE,
    HTA_DELAY_COSTS_N_COLUMNS
};
extern const hta_table_spec hta_delay_costs_table;

enum {
    HTA_DELAY_PARTS_RANK,
    HTA_DELAY_PARTS_STEP,
    HTA_DELAY_PARTS_DIRECT_US,
    HTA_DELAY_PARTS_PROPAGATED_US,
    HTA_DELAY_PARTS_OWN_LATENESS_US,
    HTA_DELAY_PARTS_N_COLUMNS
};
extern const hta_table_spec hta_delay_parts_table;

#endif
