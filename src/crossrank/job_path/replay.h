/* crossrank/job_path/replay.h: the job's steps replayed from their
 * dependency graph, as measured and under what-if scenarios
 * (crossrank/job_path/replay.c; docs/crossrank.md, "/what_if"). */
#ifndef HTA_REPLAY_H
#define HTA_REPLAY_H

#include "crossrank/exchange/collective_groups.h"
#include "crossrank/exchange/rank_ops.h"
#include "crossrank/exchange/processes.h"
#include "crossrank/job_path/scenarios.h"
#include "table/table.h"
#include "util/error.h"

/* The job's graph, spread over the processes: each holds its ranks'. */
typedef struct hta_replay hta_replay;

/* Every process, once its ranks' ops have their results (r and res may be
 * empty): the graph of the steps of the ranks whose "_replay_nodes" and
 * "_replay_edges" path holds (analysis/critical_path.h), joined at the
 * ops' instances, and their kernels' medians over the ranks, into *out
 * (the caller frees with hta_replay_free); NULL on every process when no
 * process holds a graph.  -1 on every process when one failed, err set
 * where it did. */
int hta_replay_build(const hta_processes *pr, const hta_tableset *path, const hta_rank_ops *r,
                     const hta_op_result *res, hta_replay **out, hta_error *err);
void hta_replay_free(hta_replay *x);

/* Every process, each with the same scenarios sc[0..n_sc) (sc[0] as
 * measured): replays them, exchanging only the instances' arrival times
 * with the other processes, and puts per (step, scenario) its ranks'
 * longest replayed and measured spans into "_replay_spans" of out.  -1
 * on every process when one failed, err set where it did. */
int hta_replay_run(hta_replay *x, const hta_scenario *sc, size_t n_sc, hta_tableset *out,
                   hta_error *err);

/* The columns of _replay_spans (scratch between stages, never written). */
enum {
    HTA_REPLAY_SPANS_STEP,
    HTA_REPLAY_SPANS_SCENARIO,
    HTA_REPLAY_SPANS_REPLAYED_NS,
    HTA_REPLAY_SPANS_MEASURED_NS,
    HTA_REPLAY_SPANS_N_COLUMNS
};
extern const hta_table_spec hta_replay_spans_table;

#endif
