/* analysis/memory_bw.h: entry point of analysis/memory_bw.c (registry.h). */
#ifndef HTA_MEMORY_BW_H
#define HTA_MEMORY_BW_H

#include "model/rank_view.h"
#include "table/table.h"
#include "util/error.h"

int hta_memory_bw(const hta_rank_view *view, hta_tableset *out, hta_error *err);

/* The columns of /memory_bw (docs/results-format.md). */
enum {
    HTA_MEMORY_BW_RANK,
    HTA_MEMORY_BW_KIND,
    HTA_MEMORY_BW_COUNT,
    HTA_MEMORY_BW_MEAN_GBPS,
    HTA_MEMORY_BW_STD_GBPS,
    HTA_MEMORY_BW_MIN_GBPS,
    HTA_MEMORY_BW_P25_GBPS,
    HTA_MEMORY_BW_P50_GBPS,
    HTA_MEMORY_BW_P75_GBPS,
    HTA_MEMORY_BW_MAX_GBPS,
    HTA_MEMORY_BW_BYTES,
    HTA_MEMORY_BW_BUSY_US,
    HTA_MEMORY_BW_N_COLUMNS
};
extern const hta_table_spec hta_memory_bw_table;

#endif
