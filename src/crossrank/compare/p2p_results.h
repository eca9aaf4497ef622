/* crossrank/compare/p2p_results.h: the root's point-to-point tables
 * (crossrank/compare/p2p_results.c). */
#ifndef HTA_P2P_RESULTS_H
#define HTA_P2P_RESULTS_H

#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* Puts "p2p_summary" in (src, dst) order, sums "_p2p_ranks" per rank
 * (counting "_p2p_unknown_peer" kernels as unpaired), puts the ranks'
 * point-to-point metrics in "_p2p_metrics" and builds "pipeline_steps"
 * (m = opt->microbatches when above 0).  -1 with err when out of
 * memory. */
int hta_p2p_results(hta_tableset *set, const hta_crossrank_settings *opt, hta_error *err);

/* The columns of /pipeline_steps (docs/results-format.md). */
enum {
    HTA_PIPELINE_STEPS_RANK,
    HTA_PIPELINE_STEPS_STEP,
    HTA_PIPELINE_STEPS_STAGE,
    HTA_PIPELINE_STEPS_STAGES,
    HTA_PIPELINE_STEPS_MICROBATCHES,
    HTA_PIPELINE_STEPS_STEP_TIME_US,
    HTA_PIPELINE_STEPS_COMPUTE_US,
    HTA_PIPELINE_STEPS_BUBBLE_US,
    HTA_PIPELINE_STEPS_BUBBLE_FRACTION,
    HTA_PIPELINE_STEPS_EXPECTED_BUBBLE_FRACTION,
    HTA_PIPELINE_STEPS_P2P_WAIT_US,
    HTA_PIPELINE_STEPS_EXPOSED_P2P_WAIT_US,
    HTA_PIPELINE_STEPS_N_COLUMNS
};
extern const hta_table_spec hta_pipeline_steps_table;
/* The columns of "rank_metrics" (analysis/metrics.h), a row per paired
 * rank and metric. */
extern const hta_table_spec hta_p2p_metrics_table;

#endif
