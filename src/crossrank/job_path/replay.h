/* crossrank/job_path/replay.h: the job's steps replayed from their
 * dependency graph, as measured and under what-if scenarios
 * (crossrank/job_path/replay.c; docs/crossrank.md, Replay). */
#ifndef HTA_REPLAY_H
#define HTA_REPLAY_H

#include "crossrank/exchange/collective_groups.h"
#include "crossrank/exchange/rank_ops.h"
#include "crossrank/exchange/processes.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* Every process, once its ranks' ops have their results (r and res may be
 * empty): replays the steps of the ranks whose "_replay_nodes" and
 * "_replay_edges" path holds (analysis/critical_path.h), exchanging only
 * the instances' arrival times with the other processes, once per
 * scenario of what_if (crossrank/job_path/scenarios.h), and puts per
 * (step, scenario) its ranks' longest replayed and measured spans into
 * "_replay_spans" of out (gathered).  Nothing when no process holds a
 * graph.  -1 on every process when one failed, err set where it did. */
int hta_replay_job(const hta_processes *pr, const hta_tableset *path, const hta_rank_ops *r,
                   const hta_op_result *res, const char *what_if, hta_tableset *out,
                   hta_error *err);

/* Root: "replay" from "_replay_spans", which it then drops, and
 * "cross_rank/steps", for the scenarios of opt->what_if; -1 with err. */
int hta_replay_results(hta_tableset *set, const hta_crossrank_settings *opt, hta_error *err);

/* The columns of _replay_spans (scratch between stages, never written). */
enum {
    HTA_REPLAY_SPANS_STEP,
    HTA_REPLAY_SPANS_SCENARIO,
    HTA_REPLAY_SPANS_REPLAYED_NS,
    HTA_REPLAY_SPANS_MEASURED_NS,
    HTA_REPLAY_SPANS_N_COLUMNS
};
extern const hta_table_spec hta_replay_spans_table;

/* The columns of /replay (docs/results-format.md). */
enum {
    HTA_REPLAY_STEP,
    HTA_REPLAY_SCENARIO,
    HTA_REPLAY_RANKS,
    HTA_REPLAY_MEASURED_STEP_TIME_US,
    HTA_REPLAY_REPLAYED_STEP_TIME_US,
    HTA_REPLAY_PREDICTED_STEP_TIME_US,
    HTA_REPLAY_SAVING_US,
    HTA_REPLAY_SAVING_PCT,
    HTA_REPLAY_NOTE,
    HTA_REPLAY_N_COLUMNS
};
extern const hta_table_spec hta_replay_table;

#endif
