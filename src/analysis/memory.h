/* analysis/memory.h: entry point of analysis/memory.c (registry.h). */
#ifndef HTA_MEMORY_H
#define HTA_MEMORY_H

#include "model/rank_view.h"
#include "table/table.h"
#include "util/error.h"

int hta_memory(const hta_rank_view *view, hta_tableset *out, hta_error *err);

/* The columns of /memory (docs/results-format.md). */
enum {
    HTA_MEMORY_RANK,
    HTA_MEMORY_DEVICE_TYPE,
    HTA_MEMORY_DEVICE,
    HTA_MEMORY_SAMPLES,
    HTA_MEMORY_ALLOCATIONS,
    HTA_MEMORY_FREES,
    HTA_MEMORY_PEAK_ALLOCATED_BYTES,
    HTA_MEMORY_PEAK_ALLOCATED_AT_US,
    HTA_MEMORY_PEAK_RESERVED_BYTES,
    HTA_MEMORY_PEAK_RESERVED_AT_US,
    HTA_MEMORY_LAST_ALLOCATED_BYTES,
    HTA_MEMORY_N_COLUMNS
};
extern const hta_table_spec hta_memory_table;

#endif
