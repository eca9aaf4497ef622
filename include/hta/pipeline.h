/* hta/pipeline.h: a whole run over MPI_COMM_WORLD. */
#ifndef HTA_PIPELINE_H
#define HTA_PIPELINE_H

#include "hta/options.h"

/* Runs every stage; returns the exit code (the same on every process). */
int hta_run(const hta_options *opt, const char *tool_version);

#endif
