/* analysis/timeline.h: the rank x time-bin timeline (definitions section 4).
 *
 * Per rank the analysis keeps merged segments in four layers; after the
 * processes agree on the global range, each bins its own ranks exactly
 * (segments clipped to bin edges) into the "timeline" table: one row per
 * (rank, bin) with compute, communicate, overlap and empty microseconds. */
#ifndef HTA_TIMELINE_H
#define HTA_TIMELINE_H

#include <stdint.h>

#include "model/rank_view.h"
#include "table/table.h"
#include "util/error.h"

enum {
    HTA_LAYER_COMPUTE = 0,      /* union of COMPUTATION kernels */
    HTA_LAYER_COMMUNICATE = 1,  /* union of COMMUNICATION kernels */
    HTA_LAYER_OVERLAP = 2,      /* their intersection */
    HTA_LAYER_EXTENT = 3,       /* first GPU start to last GPU end */
};

int hta_timeline_segments(const hta_rank_view *view, hta_tableset *out, hta_error *err);

/* The columns of _timeline_segments (scratch between stages, never written). */
enum {
    HTA_SEGMENTS_RANK,
    HTA_SEGMENTS_LAYER,
    HTA_SEGMENTS_FIRST_NS,
    HTA_SEGMENTS_LAST_NS,
    HTA_SEGMENTS_SEGMENTS,
    HTA_SEGMENTS_N_COLUMNS
};
extern const hta_table_spec hta_timeline_segments_table;

#endif
