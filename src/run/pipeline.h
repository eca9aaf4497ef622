/* run/pipeline.h: a whole run over MPI_COMM_WORLD, in the order data
 * flows:
 *
 *   discover (root, run/discover.h)  ->  assign (every process, same answer)
 *   -> analyse each assigned file (run/analyse_file.h: parse, step filter,
 *      view, analyses) -> gather tables to the root -> resolve ranks
 *      (run/ranks.h) -> cross-rank (crossrank/crossrank.h) -> write
 *      (output/results_file.h). */
#ifndef HTA_PIPELINE_H
#define HTA_PIPELINE_H

#include "run/head_start.h"
#include "run/ranks.h"
#include "settings/settings.h"

/* Runs every stage; returns the exit code (the same on every process).
 * head: this process's head start, adopted when it analysed the right
 * file (run/head_start.h). */
int hta_run(const hta_settings *opt, const char *tool_version, hta_head_start *head);

/* The stages after the gather for a process alone, without MPI (the
 * fuzzer, libhta's hta_analyse_trace): hta_resolve_ranks on set, then the
 * cross-rank stage of a run of one process (crossrank/crossrank.h), its
 * rows written in place left in set. */
int hta_crossrank_alone(hta_tableset *set, const hta_settings *opt, hta_rank_map *map,
                        hta_error *err);

#endif
