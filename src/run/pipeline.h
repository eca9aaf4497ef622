/* run/pipeline.h: a whole run over MPI_COMM_WORLD. */
#ifndef HTA_PIPELINE_H
#define HTA_PIPELINE_H

#include "run/head_start.h"
#include "run/ranks.h"
#include "cli/options.h"

/* Runs every stage; returns the exit code (the same on every process).
 * head: this process's head start, adopted when it analysed the right
 * file (run/head_start.h). */
int hta_run(const hta_options *opt, const char *tool_version, hta_head_start *head);

/* Root, after the gather: hta_resolve_ranks, then every cross-rank table,
 * in run order. */
int hta_root_statistics(hta_tableset *set, const hta_options *opt, hta_rank_map *map,
                        hta_error *err);

#endif
