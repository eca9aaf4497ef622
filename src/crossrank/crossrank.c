/* crossrank.c: the order of the cross-rank statistics (see
 * crossrank/crossrank.h).  The point-to-point and all-to-all figures come
 * first, because
 * they add metrics the outlier search reads; the outliers next because the later
 * steps add rows to their table (collective_wait flags late arrivers),
 * the step comparison after collective_wait, which adds the waits to
 * "steps", the stragglers after it because they read "collective_wait",
 * and the nodes last because they read every flag in "outliers". */
#include "crossrank/crossrank.h"

#include "crossrank/all_to_all.h"
#include "crossrank/collective_wait.h"
#include "crossrank/kernel_comparison.h"
#include "crossrank/kernel_type_totals.h"
#include "crossrank/name_comparison.h"
#include "crossrank/nodes.h"
#include "crossrank/op_perf_comparison.h"
#include "crossrank/outliers.h"
#include "crossrank/p2p_results.h"
#include "crossrank/step_comparison.h"
#include "crossrank/stragglers.h"

int hta_crossrank_statistics(hta_tableset *set, const hta_crossrank_settings *opt, hta_error *err)
{
    if (hta_p2p_results(set, opt, err) ||
        (hta_a2a_results(set) && hta_fail(err, "out of memory summing the all-to-all traffic")) ||
        hta_find_outliers(set, opt, err) || hta_kernel_type_totals(set, err) ||
        hta_kernel_comparison(set, opt, err) || hta_op_and_annotation_comparison(set, opt, err) ||
        hta_op_perf_comparison(set, err) || hta_op_perf_steps(set, err) ||
        hta_collective_wait(set, err) || hta_step_comparison(set, err) ||
        hta_rank_stragglers(set, opt, err) || hta_node_statistics(set, opt, err))
        return -1;
    return 0;
}
