/* analysis/timeline_bins.h: the "timeline" table binned from each rank's
 * segments (analysis/timeline.h) once the processes agree on the range. */
#ifndef HTA_TIMELINE_BINS_H
#define HTA_TIMELINE_BINS_H

#include <stdint.h>

#include "table/table.h"
#include "util/error.h"

/* This process's extent of all segments; returns 0 when it has none. */
int hta_timeline_local_range(const hta_tableset *set, int64_t *start, int64_t *end);

/* Replaces the segments with "timeline" rows over [start, end) in `bins`
 * equal bins. */
int hta_timeline_bin(hta_tableset *set, int bins, int64_t start, int64_t end,
                     hta_error *err);

/* The columns of /timeline (docs/results-format.md). */
enum {
    HTA_TIMELINE_RANK,
    HTA_TIMELINE_BIN,
    HTA_TIMELINE_COMPUTE_US,
    HTA_TIMELINE_COMMUNICATE_US,
    HTA_TIMELINE_OVERLAP_US,
    HTA_TIMELINE_EMPTY_US,
    HTA_TIMELINE_N_COLUMNS
};
extern const hta_table_spec hta_timeline_table;

#endif
