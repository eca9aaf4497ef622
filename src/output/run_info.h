/* output/run_info.h: what the results file and the summary record about
 * the run itself. */
#ifndef HTA_RUN_INFO_H
#define HTA_RUN_INFO_H

#include <stddef.h>
#include <stdint.h>

typedef struct hta_run_info {
    const char *tool_version;
    int n_processes;
    double wall_seconds;       /* from the start of the work to write_start */
    char *const *trace_paths;  /* the run's files, by file index */
    size_t n_traces;
    int64_t timeline_start_ns, timeline_end_ns; /* global GPU range */
    /* After every process has finished its traces: gathering the tables
     * to the root, then resolving ranks and the cross-rank statistics. */
    double gather_seconds, crossrank_seconds;
    double write_start;        /* MPI_Wtime when the results file is begun */
} hta_run_info;

#endif
