/* crossrank.c: the cross-rank stage (see crossrank/crossrank.h): the
 * steps of crossrank/steps.c, in their order, each where it runs (the
 * job's graph for the replay, kept from one step to a later one, freed
 * whatever fails); then, on the root, the /ranks rows of the ranks without a trace, which no
 * step is to take for a trace analysed. */
#include "crossrank/crossrank.h"

#include "analysis/ranks_table.h"
#include "crossrank/job_path/replay.h"
#include "crossrank/steps.h"

int hta_crossrank(const hta_processes *pr, hta_crossrank_tables *t,
                  const hta_crossrank_settings *opt, hta_error *err)
{
    int failed = 0;
    for (size_t i = 0; !failed && i < hta_n_crossrank_steps; i++)
        failed = hta_crossrank_step_run(&hta_crossrank_steps[i], pr, t, opt, err) != 0;
    hta_replay_free(t->replay);
    t->replay = NULL;
    if (failed)
        return -1;
    if (pr->me == HTA_ROOT && hta_ranks_add_missing(t->all))
        return hta_fail(err, "out of memory listing the ranks without a trace");
    return 0;
}
