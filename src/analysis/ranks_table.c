/* ranks_table.c: the /ranks table, one row per trace file (see
 * analysis/ranks_table.h). */
#include "analysis/ranks_table.h"

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
