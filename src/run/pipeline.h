/* run/pipeline.h: a whole run over MPI_COMM_WORLD. */
#ifndef HTA_PIPELINE_H
#define HTA_PIPELINE_H

#include "run/head_start.h"
#include "cli/options.h"

/* Runs every stage; returns the exit code (the same on every process).
 * head: this process's head start, adopted when it analysed the right
 * file (hta/head_start.h). */
int hta_run(const hta_options *opt, const char *tool_version, hta_head_start *head);

#endif
