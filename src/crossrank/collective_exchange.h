/* crossrank/collective_exchange.h: the matching of collectives by process
 * group spread over the MPI processes (crossrank/collective_exchange.c). */
#ifndef HTA_COLLECTIVE_EXCHANGE_H
#define HTA_COLLECTIVE_EXCHANGE_H

#include <stddef.h>
#include <stdint.h>

#include "crossrank/crossrank.h"
#include "crossrank/exchange/processes.h"
#include "crossrank/exchange/clock_offsets.h"
#include "table/table.h"
#include "util/error.h"

/* Every process, once ranks are resolved: comm_ops is this process's
 * "_comm_ops" (rank-mapped, may be NULL), path holds its ranks' tables
 * of the job's critical path (analysis/critical_path.h; none without
 * --critical-path), walked once the ops are matched
 * (crossrank/job_path/global_path.h), valid the ranks analysed without
 * failure (sorted, the same everywhere), valid_node the node of each
 * (crossrank/exchange/hosts.h; NULL when unknown); clocks what the
 * alignment of the nodes' clocks needs
 * (crossrank/exchange/clock_offsets.h).  out receives this process's
 * share of the tables crossrank/exchange/collective_groups.h describes:
 * the instances it owns, the figures of its ranks (and with
 * keep_kernel_waits, each of its ranks' kernels' wait, "_kernel_waits");
 * gathered to the root in process order, "collectives" is in instance
 * order.  With --replay, the job's graph for the replay is then built
 * into *replay (crossrank/job_path/replay.h; NULL without).  Every
 * process makes the same MPI calls whatever fails; -1 on every process
 * when any failed, err set where it did. */
int hta_exchange_collective_groups(const hta_processes *pr, const hta_table *comm_ops,
                                   const hta_tableset *path, const int64_t *valid,
                                   const int64_t *valid_node, size_t n_valid,
                                   const hta_clock_alignment *clocks,
                                   int keep_kernel_waits, struct hta_replay **replay,
                                   hta_tableset *out, hta_error *err);

/* The cross-rank stage's first step, on every process: the collectives
 * of t->exchanged (emptied) matched among the processes, the rows
 * written in place into t->in_place, what stays on the process into
 * t->kept, the job's graph for the replay into t->replay, and what the
 * root needs gathered to it into t->all.  -1 on every process when any
 * failed. */
int hta_match_collectives(const hta_processes *pr, hta_crossrank_tables *t,
                          const hta_crossrank_settings *opt, hta_error *err);

#endif
