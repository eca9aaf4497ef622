/* crossrank/job_path/what_if.h: what fixing a rank, a stage or the
 * network buys, the job replayed under each scenario
 * (crossrank/job_path/what_if.c, what_if_results.c). */
#ifndef HTA_WHAT_IF_H
#define HTA_WHAT_IF_H

#include "crossrank/exchange/processes.h"
#include "crossrank/exchange/stage_tables.h"
#include "crossrank/job_path/what_if_choice.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* Every process, with the job's graph in t->replay (nothing without it;
 * freed): the root chooses the scenarios (what_if_choice.h), every
 * process replays its ranks under them, and the root puts "what_if"
 * from the spans and "cross_rank/steps".  -1 on every process when the
 * replay failed, on the root alone when the choice or the rows did. */
int hta_what_if(const hta_processes *pr, hta_crossrank_tables *t,
                const hta_crossrank_settings *opt, hta_error *err);

/* Root: "what_if" from "_replay_spans" of spans and "cross_rank/steps"
 * of set, for the scenarios of c; -1 when out of memory. */
int hta_what_if_rows(hta_tableset *set, const hta_table *spans, const hta_what_if_choice *c);

/* The columns of /what_if (docs/results-format.md). */
enum {
    HTA_WHAT_IF_STEP,
    HTA_WHAT_IF_SCENARIO,
    HTA_WHAT_IF_RANKS,
    HTA_WHAT_IF_MEASURED_STEP_TIME_US,
    HTA_WHAT_IF_REPLAYED_STEP_TIME_US,
    HTA_WHAT_IF_PREDICTED_STEP_TIME_US,
    HTA_WHAT_IF_SAVING_US,
    HTA_WHAT_IF_SAVING_PCT,
    HTA_WHAT_IF_NOTE,
    HTA_WHAT_IF_N_COLUMNS
};
extern const hta_table_spec hta_what_if_table;

#endif
