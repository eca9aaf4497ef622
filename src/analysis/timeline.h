/* analysis/timeline.h: the rank x time-bin timeline (definitions section 4).
 *
 * Per rank the analysis keeps merged segments in four layers; after the
 * processes agree on the global range, each bins its own ranks exactly
 * (segments clipped to bin edges) into the "timeline" table: one row per
 * (rank, bin) with compute, communicate, overlap and empty microseconds. */
#ifndef HTA_TIMELINE_H
#define HTA_TIMELINE_H

#include <stdint.h>

#include "analysis/registry.h"

#define HTA_TIMELINE_SEGMENTS "_timeline_segments"

enum {
    HTA_LAYER_COMPUTE = 0,      /* union of COMPUTATION kernels */
    HTA_LAYER_COMMUNICATE = 1,  /* union of COMMUNICATION kernels */
    HTA_LAYER_OVERLAP = 2,      /* their intersection */
    HTA_LAYER_EXTENT = 3,       /* first GPU start to last GPU end */
};

int hta_timeline_segments(const hta_rank_view *view, hta_tableset *out, hta_error *err);

#endif
