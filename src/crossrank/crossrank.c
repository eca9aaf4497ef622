/* crossrank.c: the cross-rank stage (see crossrank/crossrank.h), and the
 * order of its statistics on the root.  The point-to-point and all-to-all
 * figures come first, because they add metrics the outlier search reads;
 * the outliers next because the later steps add rows to their table
 * (collective_wait flags late arrivers); the step comparison and the
 * step-time jitter after collective_wait, which adds the waits to
 * "steps"; the stragglers after it because they read "collective_wait";
 * the delay costs after the stragglers because they read the slower GPUs
 * in "stragglers"; the job's critical path, then the what-if on it,
 * which reads the delay costs, "steps" and the step comparison; and the
 * nodes last because they read every flag in "outliers". */
#include "crossrank/crossrank.h"

#include "analysis/comm_ops.h"
#include "crossrank/exchange/all_to_all.h"
#include "crossrank/exchange/clock_offsets.h"
#include "crossrank/collective_exchange.h"
#include "crossrank/compare/collective_wait.h"
#include "crossrank/job_path/delay_costs.h"
#include "crossrank/job_path/global_path.h"
#include "crossrank/compare/kernel_comparison.h"
#include "crossrank/compare/kernel_type_totals.h"
#include "crossrank/compare/name_comparison.h"
#include "crossrank/compare/nodes.h"
#include "crossrank/compare/op_perf_comparison.h"
#include "crossrank/compare/outliers.h"
#include "crossrank/compare/p2p_results.h"
#include "crossrank/compare/step_comparison.h"
#include "crossrank/compare/step_jitter.h"
#include "crossrank/compare/stragglers.h"
#include "crossrank/job_path/what_if.h"

static int statistics(hta_tableset *set, const hta_crossrank_settings *opt, hta_error *err)
{
    if (hta_clock_offsets_results(set, opt, err) || hta_p2p_results(set, opt, err) ||
        (hta_a2a_results(set) && hta_fail(err, "out of memory summing the all-to-all traffic")) ||
        hta_find_outliers(set, opt, err) || hta_kernel_type_totals(set, err) ||
        hta_kernel_comparison(set, opt, err) || hta_op_and_annotation_comparison(set, opt, err) ||
        hta_op_perf_comparison(set, err) || hta_op_perf_steps(set, err) ||
        hta_collective_wait(set, err) || hta_step_comparison(set, err) ||
        hta_step_jitter(set, err) ||
        hta_rank_stragglers(set, opt, err) || hta_delay_costs(set, err) ||
        hta_global_path_results(set, err) || hta_what_if(set, err) ||
        hta_node_statistics(set, opt, err))
        return -1;
    return 0;
}

/* The collectives matched among the processes; what the root needs of
 * the outcome gathered to it.  -1 on every process when any failed. */
static int match_collectives(const hta_processes *pr, hta_crossrank_tables *t,
                             const hta_crossrank_settings *opt, hta_error *err)
{
    hta_tableset matched = {0};
    const hta_table *comm_ops = hta_tableset_find(t->exchanged, hta_comm_ops_table.name);
    hta_clock_alignment clocks = {opt->align_clocks, pr->me == HTA_ROOT ? t->all : NULL};
    int failed = hta_exchange_collective_groups(pr, comm_ops, t->exchanged, t->valid, t->valid_node,
                                                t->n_valid, &clocks, t->kept != NULL, &matched,
                                                err) != 0;
    hta_tableset_free(t->exchanged);
    int not_taken = !failed && (hta_tableset_take(&matched, HTA_TABLE_IN_PLACE, t->in_place) ||
                                (t->kept && hta_tableset_take_others(&matched, HTA_TABLE_GATHERED,
                                                                     t->kept)));
    hta_tableset_keep(&matched, HTA_TABLE_GATHERED);
    if (!failed && hta_processes_gather_tables(pr, &matched, t->all, err))
        failed = 1;
    if (not_taken && !failed)
        hta_fail(err, "out of memory while matching the collectives");
    hta_tableset_free(&matched);
    return hta_processes_any(pr, failed || not_taken) ? -1 : 0;
}

int hta_crossrank(const hta_processes *pr, hta_crossrank_tables *t,
                  const hta_crossrank_settings *opt, hta_error *err)
{
    if (match_collectives(pr, t, opt, err))
        return -1;
    return pr->me == HTA_ROOT ? statistics(t->all, opt, err) : 0;
}
