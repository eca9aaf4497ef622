/* analysis/detail_tables.h: entry point of analysis/detail_tables.c (registry.h). */
#ifndef HTA_DETAIL_TABLES_H
#define HTA_DETAIL_TABLES_H

#include "model/rank_view.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* Per-event tables under detail/, only with --detail. */
int hta_detail_tables(const hta_rank_view *view, const hta_analysis_settings *opt,
                      hta_tableset *out, hta_error *err);

/* The columns of /detail/launches (docs/results-format.md). */
enum {
    HTA_DETAIL_LAUNCHES_RANK,
    HTA_DETAIL_LAUNCHES_CORRELATION,
    HTA_DETAIL_LAUNCHES_LAUNCH_NAME,
    HTA_DETAIL_LAUNCHES_CPU_START_US,
    HTA_DETAIL_LAUNCHES_CPU_DURATION_US,
    HTA_DETAIL_LAUNCHES_GPU_START_US,
    HTA_DETAIL_LAUNCHES_GPU_DURATION_US,
    HTA_DETAIL_LAUNCHES_LAUNCH_DELAY_US,
    HTA_DETAIL_LAUNCHES_STREAM,
    HTA_DETAIL_LAUNCHES_N_COLUMNS
};
extern const hta_table_spec hta_detail_launches_table;

/* The columns of /detail/queue_length (docs/results-format.md). */
enum {
    HTA_DETAIL_QUEUE_LENGTH_RANK,
    HTA_DETAIL_QUEUE_LENGTH_STREAM,
    HTA_DETAIL_QUEUE_LENGTH_TS_US,
    HTA_DETAIL_QUEUE_LENGTH_QUEUE_LENGTH,
    HTA_DETAIL_QUEUE_LENGTH_N_COLUMNS
};
extern const hta_table_spec hta_detail_queue_length_table;

/* The columns of /detail/memory_bw (docs/results-format.md). */
enum {
    HTA_DETAIL_MEMORY_BW_RANK,
    HTA_DETAIL_MEMORY_BW_KIND,
    HTA_DETAIL_MEMORY_BW_TS_US,
    HTA_DETAIL_MEMORY_BW_BANDWIDTH_GBPS,
    HTA_DETAIL_MEMORY_BW_N_COLUMNS
};
extern const hta_table_spec hta_detail_memory_bw_table;

#endif
