/* analysis/graph_launches.h: entry point of analysis/graph_launches.c (registry.h). */
#ifndef HTA_GRAPH_LAUNCHES_H
#define HTA_GRAPH_LAUNCHES_H

#include <stddef.h>
#include <stdint.h>

#include "model/rank_view.h"
#include "table/table.h"
#include "util/error.h"

int hta_graph_launches(const hta_rank_view *view, hta_tableset *out, hta_error *err);

/* Its note on a rank (hta_analysis_note_fn): graph replays the profiler
 * did not record, or recorded short, which make its idle time an upper
 * bound. */
void hta_graph_launches_note(const hta_tableset *set, int64_t rank_key, hta_error *notes);

/* The ranks whose rows of "graph_launches" in set (in rank order) show a
 * replay that left no GPU event or a short one, ascending, in an array
 * the caller frees (*n of them); NULL when out of memory. */
int64_t *hta_graph_under_recorded_ranks(const hta_tableset *set, size_t *n);

/* The columns of /graph_launches (docs/results-format.md). */
enum {
    HTA_GRAPH_LAUNCHES_RANK,
    HTA_GRAPH_LAUNCHES_SIGNATURE,
    HTA_GRAPH_LAUNCHES_FIRST_KERNEL,
    HTA_GRAPH_LAUNCHES_LAUNCHES,
    HTA_GRAPH_LAUNCHES_RECORDED,
    HTA_GRAPH_LAUNCHES_KERNELS,
    HTA_GRAPH_LAUNCHES_GPU_EVENTS,
    HTA_GRAPH_LAUNCHES_KERNELS_MIN,
    HTA_GRAPH_LAUNCHES_KERNELS_MAX,
    HTA_GRAPH_LAUNCHES_SPAN_P50_US,
    HTA_GRAPH_LAUNCHES_BUSY_P50_US,
    HTA_GRAPH_LAUNCHES_CPU_LAUNCH_P50_US,
    HTA_GRAPH_LAUNCHES_LAUNCH_DELAY_P50_US,
    HTA_GRAPH_LAUNCHES_SHORT_REPLAYS,
    HTA_GRAPH_LAUNCHES_SHORT_OF,
    HTA_GRAPH_LAUNCHES_N_COLUMNS
};
extern const hta_table_spec hta_graph_launches_table;

#endif
