/* analysis/ranks_table.h: /ranks, what became of each trace file: its
 * rank as the trace claims it, whether it was analysed, and what reading
 * it took.  run/analyse_file.c puts a row per file; run/ranks.c resolves
 * the ranks on the root.  Declared below the stages that read it (the
 * cross-rank statistics, the summary and the results file), not in run/,
 * which lies above them. */
#ifndef HTA_RANKS_TABLE_H
#define HTA_RANKS_TABLE_H

#include <stdint.h>

#include "table/table.h"

typedef struct hta_trace_report {
    int64_t claimed_rank;
    const char *rank_source;
    const char *status;
    const char *error;
    uint64_t bytes, json_bytes, events, skipped_events, gpu_events;
    uint64_t filtered_gpu_events;
    uint64_t unlaunched_gpu_events; /* with a correlation no CPU event carries */
    int step_filter_applied;
    int64_t world_size;
    double first_ts_us, last_ts_us, parse_seconds, analysis_seconds;
    const char *input_format;
    const char *input_notes;   /* what the format lacks for some analysis */
    const char *host;          /* recorded in the trace or its file name, "" unknown */
} hta_trace_report;

/* Appends the file's row (rank column = file index); -1 when out of
 * memory. */
int hta_put_ranks_row(hta_tableset *out, int64_t file_index, int process, int threads,
                      const char *path, const hta_trace_report *r);

/* The columns of /ranks (docs/results-format.md). */
enum {
    HTA_RANKS_RANK,
    HTA_RANKS_CLAIMED_RANK,
    HTA_RANKS_RANK_SOURCE,
    HTA_RANKS_FILE,
    HTA_RANKS_STATUS,
    HTA_RANKS_ERROR,
    HTA_RANKS_BYTES,
    HTA_RANKS_JSON_BYTES,
    HTA_RANKS_EVENTS,
    HTA_RANKS_SKIPPED_EVENTS,
    HTA_RANKS_GPU_EVENTS,
    HTA_RANKS_FILTERED_GPU_EVENTS,
    HTA_RANKS_STEP_FILTER_APPLIED,
    HTA_RANKS_WORLD_SIZE,
    HTA_RANKS_FIRST_TS_US,
    HTA_RANKS_LAST_TS_US,
    HTA_RANKS_PARSE_SECONDS,
    HTA_RANKS_ANALYSIS_SECONDS,
    HTA_RANKS_PROCESS,
    HTA_RANKS_THREADS,
    HTA_RANKS_INPUT_FORMAT,
    HTA_RANKS_INPUT_NOTES,
    HTA_RANKS_HOST,
    HTA_RANKS_UNLAUNCHED_GPU_EVENTS,
    HTA_RANKS_N_COLUMNS
};
extern const hta_table_spec hta_ranks_table;

#endif
