/* analysis/launch_pipelining.h: entry point of analysis/launch_pipelining.c (registry.h). */
#ifndef HTA_LAUNCH_PIPELINING_H
#define HTA_LAUNCH_PIPELINING_H

#include "model/rank_view.h"
#include "table/table.h"
#include "util/error.h"

int hta_launch_pipelining(const hta_rank_view *view, hta_tableset *out, hta_error *err);

/* The columns of /launch_pipelining (docs/results-format.md). */
enum {
    HTA_LAUNCH_PIPELINING_RANK,
    HTA_LAUNCH_PIPELINING_LAUNCHES,
    HTA_LAUNCH_PIPELINING_GPU_BUSY_AT_LAUNCH,
    HTA_LAUNCH_PIPELINING_GPU_IDLE_AT_LAUNCH,
    HTA_LAUNCH_PIPELINING_BUSY_SHARE,
    HTA_LAUNCH_PIPELINING_TOP_WAITED_KERNELS,
    HTA_LAUNCH_PIPELINING_N_COLUMNS
};
extern const hta_table_spec hta_launch_pipelining_table;

#endif
