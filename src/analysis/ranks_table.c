/* ranks_table.c: the /ranks table, one row per trace file and one per
 * rank of the recorded world size without a trace (see
 * analysis/ranks_table.h).
 *
 * A job's traces record its world size; ranks below it that no trace
 * holds are listed before the cross-rank statistics (so that the
 * collectives they should have joined count as missing) and get their
 * /ranks row only after them, so that no statistic takes them for a trace
 * analysed. */
#include "analysis/ranks_table.h"

#include <math.h>
#include <stdlib.h>

static const hta_column RANK_COLUMNS[HTA_RANKS_N_COLUMNS] = {
    [HTA_RANKS_RANK] = {"rank", HTA_COL_I64},
    [HTA_RANKS_CLAIMED_RANK] = {"claimed_rank", HTA_COL_I64},
    [HTA_RANKS_RANK_SOURCE] = {"rank_source", HTA_COL_STR},
    [HTA_RANKS_FILE] = {"file", HTA_COL_STR},
    [HTA_RANKS_STATUS] = {"status", HTA_COL_STR},
    [HTA_RANKS_ERROR] = {"error", HTA_COL_STR},
    [HTA_RANKS_BYTES] = {"bytes", HTA_COL_I64},
    [HTA_RANKS_JSON_BYTES] = {"json_bytes", HTA_COL_I64},
    [HTA_RANKS_EVENTS] = {"events", HTA_COL_I64},
    [HTA_RANKS_SKIPPED_EVENTS] = {"skipped_events", HTA_COL_I64},
    [HTA_RANKS_GPU_EVENTS] = {"gpu_events", HTA_COL_I64},
    [HTA_RANKS_FILTERED_GPU_EVENTS] = {"filtered_gpu_events", HTA_COL_I64},
    [HTA_RANKS_STEP_FILTER_APPLIED] = {"step_filter_applied", HTA_COL_I64},
    [HTA_RANKS_WORLD_SIZE] = {"world_size", HTA_COL_I64},
    [HTA_RANKS_FIRST_TS_US] = {"first_ts_us", HTA_COL_F64},
    [HTA_RANKS_LAST_TS_US] = {"last_ts_us", HTA_COL_F64},
    [HTA_RANKS_PARSE_SECONDS] = {"parse_seconds", HTA_COL_F64},
    [HTA_RANKS_ANALYSIS_SECONDS] = {"analysis_seconds", HTA_COL_F64},
    [HTA_RANKS_PROCESS] = {"process", HTA_COL_I64},
    [HTA_RANKS_THREADS] = {"threads", HTA_COL_I64},
    [HTA_RANKS_INPUT_FORMAT] = {"input_format", HTA_COL_STR},
    [HTA_RANKS_INPUT_NOTES] = {"input_notes", HTA_COL_STR},
    [HTA_RANKS_HOST] = {"host", HTA_COL_STR},
    [HTA_RANKS_UNLAUNCHED_GPU_EVENTS] = {"unlaunched_gpu_events", HTA_COL_I64},
};
const hta_table_spec hta_ranks_table = {
    "ranks", RANK_COLUMNS, HTA_RANKS_N_COLUMNS, HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

static const hta_column MISSING_COLUMNS[HTA_MISSING_RANKS_N_COLUMNS] = {
    [HTA_MISSING_RANKS_RANK] = {"rank", HTA_COL_I64},
    [HTA_MISSING_RANKS_WORLD_SIZE] = {"world_size", HTA_COL_I64},
};
const hta_table_spec hta_missing_ranks_table = {
    "_missing_ranks", MISSING_COLUMNS, HTA_MISSING_RANKS_N_COLUMNS, HTA_TABLE_SCRATCH};

int hta_put_ranks_row(hta_tableset *out, int64_t file_index, int process, int threads,
                      const char *path, const hta_trace_report *r)
{
    hta_table *t = hta_tableset_table(out, &hta_ranks_table);
    if (!t)
        return -1;
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, file_index);
    hta_row_put_i64(&row, r->claimed_rank);
    hta_row_put_str(&row, r->rank_source);
    hta_row_put_str(&row, path);
    hta_row_put_str(&row, r->status);
    hta_row_put_str(&row, r->error);
    hta_row_put_i64(&row, (int64_t)r->bytes);
    hta_row_put_i64(&row, (int64_t)r->json_bytes);
    hta_row_put_i64(&row, (int64_t)r->events);
    hta_row_put_i64(&row, (int64_t)r->skipped_events);
    hta_row_put_i64(&row, (int64_t)r->gpu_events);
    hta_row_put_i64(&row, (int64_t)r->filtered_gpu_events);
    hta_row_put_i64(&row, r->step_filter_applied);
    hta_row_put_i64(&row, r->world_size);
    hta_row_put_f64(&row, r->first_ts_us);
    hta_row_put_f64(&row, r->last_ts_us);
    hta_row_put_f64(&row, r->parse_seconds);
    hta_row_put_f64(&row, r->analysis_seconds);
    hta_row_put_i64(&row, process);
    hta_row_put_i64(&row, threads);
    hta_row_put_str(&row, r->input_format);
    hta_row_put_str(&row, r->input_notes);
    hta_row_put_str(&row, r->host ? r->host : "");
    hta_row_put_i64(&row, (int64_t)r->unlaunched_gpu_events);
    return hta_row_done(&row);
}

static int64_t recorded_world_size(const hta_table *ranks)
{
    int64_t world = 0;
    for (size_t r = 0; r < ranks->n_rows; r++) {
        int64_t w = hta_table_row(ranks, r)[HTA_RANKS_WORLD_SIZE].i;
        world = w > world ? w : world;
    }
    return world;
}

int hta_ranks_find_missing(hta_tableset *set, int (*wanted)(const void *ctx, int64_t rank),
                           const void *ctx)
{
    const hta_table *ranks = hta_tableset_find(set, hta_ranks_table.name);
    int64_t world = ranks ? recorded_world_size(ranks) : 0;
    hta_table *t = NULL;
    for (int64_t rank = 0; rank < world; rank++) {
        if (hta_table_find_sorted(ranks, rank) >= 0 || (wanted && !wanted(ctx, rank)))
            continue;
        if (!t && !(t = hta_tableset_table(set, &hta_missing_ranks_table)))
            return -1;
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, rank);
        hta_row_put_i64(&row, world);
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

int hta_ranks_add_missing(hta_tableset *set)
{
    const hta_table *missing = hta_tableset_find(set, hta_missing_ranks_table.name);
    hta_table *ranks = hta_tableset_find(set, hta_ranks_table.name);
    if (!missing || !ranks)
        return 0;
    for (size_t i = 0; i < missing->n_rows; i++) {
        const hta_cell *m = hta_table_row(missing, i);
        hta_trace_report r = {.claimed_rank = -1, .rank_source = "world_size",
                              .status = HTA_RANKS_MISSING, .error = "",
                              .world_size = m[HTA_MISSING_RANKS_WORLD_SIZE].i,
                              .first_ts_us = NAN, .last_ts_us = NAN, .parse_seconds = NAN,
                              .analysis_seconds = NAN, .input_format = "", .input_notes = "",
                              .host = ""};
        if (hta_put_ranks_row(set, m[HTA_MISSING_RANKS_RANK].i, -1, 0, "", &r))
            return -1;
    }
    hta_tableset_remove(set, hta_missing_ranks_table.name);
    return hta_table_sort_by_first_column(ranks);
}
