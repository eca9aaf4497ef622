/* analysis/ranks_table.h: /ranks, what became of each trace file: its
 * rank as the trace claims it, whether it was analysed, and what reading
 * it took.  run/analyse_file.c puts a row per file; run/ranks.c resolves
 * the ranks on the root.  Declared below the stages that read it (the
 * cross-rank statistics, the summary and the results file), not in run/,
 * which lies above them. */
#ifndef HTA_RANKS_TABLE_H
#define HTA_RANKS_TABLE_H

#include <stdint.h>
#include <string.h>

#include "table/table.h"

/* The status of a rank of the recorded world size (distributedInfo's
 * world_size, an Nsight export's MPI_RANKS or launcher environment) that
 * no trace was found for: its /ranks row has no file. */
#define HTA_RANKS_MISSING "missing"

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

/* Whether a /ranks row's status is that of a trace analysed: neither
 * failed nor missing. */
static inline int hta_ranks_status_analysed(const char *status)
{
    return strcmp(status, "failed") != 0 && strcmp(status, HTA_RANKS_MISSING) != 0;
}

/* Root, once the ranks are resolved: "_missing_ranks", the ranks below
 * the largest world size the traces record that no row of /ranks holds
 * and wanted keeps (wanted(ctx, rank); NULL keeps every rank).  -1 when
 * out of memory. */
int hta_ranks_find_missing(hta_tableset *set, int (*wanted)(const void *ctx, int64_t rank),
                           const void *ctx);

/* Root, after the cross-rank statistics, which count what the missing
 * ranks lacked: a /ranks row with status "missing" per row of
 * "_missing_ranks", /ranks kept in rank order.  -1 when out of memory. */
int hta_ranks_add_missing(hta_tableset *set);

/* The columns of "_missing_ranks" (scratch on the root, never written). */
enum {
    HTA_MISSING_RANKS_RANK,
    HTA_MISSING_RANKS_WORLD_SIZE,
    HTA_MISSING_RANKS_N_COLUMNS
};
extern const hta_table_spec hta_missing_ranks_table;

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
