/* crossrank/crossrank.h: the cross-rank stage, the one entry the run,
 * the fuzzer and libhta take (definitions section 5).
 *
 * Every process of the run brings its tables matched among the processes
 * (its ranks' communication kernels) once the root has resolved ranks
 * (run/ranks.h) and every process holds the map: the collectives are
 * matched by process group among the processes
 * (crossrank/collective_exchange.h), each process keeps the rows it
 * writes in place, and the figures the root needs are gathered to it;
 * the root then computes the statistics over ranks from the tables it
 * holds, in the order they depend on each other.  Rows are in rank order,
 * so results never depend on the number of processes; a process alone
 * (crossrank/exchange/processes.h) gets the tables a run of one process writes. */
#ifndef HTA_CROSSRANK_H
#define HTA_CROSSRANK_H

#include <stddef.h>
#include <stdint.h>

#include "crossrank/exchange/processes.h"
#include "crossrank/exchange/stage_tables.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* Every process of pr: -1 with err on every process when the matching or
 * the gather failed anywhere, on the root alone when a statistic did (err
 * says why where it failed). */
int hta_crossrank(const hta_processes *pr, hta_crossrank_tables *t,
                  const hta_crossrank_settings *opt, hta_error *err);

#endif
