/* model/stream_clips.h: GPU work that runs past the next record on its
 * stream, clipped at that record's start.
 *
 * A stream runs its work in order, so a record whose end lies after the
 * next record's start on the same stream (seen on ROCm traces) claims
 * time the stream spent on the next one: it inflates busy time and every
 * union of GPU work.  Perfetto clips such a slice at the next one's start;
 * the tables hta-mpi defines (steps, GPU gaps, the work's span) read the
 * clipped ends through hta_stream_clips_end, and the tables that reproduce
 * HTA keep the records as HTA reads them (docs/definitions.md,
 * "Overlapping work on one stream").  Clipped records are few, so they
 * are kept sparsely, by position in the view's start order. */
#ifndef HTA_STREAM_CLIPS_H
#define HTA_STREAM_CLIPS_H

#include <stddef.h>
#include <stdint.h>

#include "model/trace.h"
#include "util/error.h"

typedef struct hta_stream_clip {
    size_t at;                 /* the record's position in the view */
    int64_t end;               /* its clipped end */
} hta_stream_clip;

typedef struct hta_stream_clips {
    hta_stream_clip *clip;     /* owned, by position */
    size_t n, cap;
    int64_t clipped_ns;        /* time cut off, summed */
} hta_stream_clips;

/* Finds the clipped records among gpu[0..n) (sorted by start, then end),
 * leaving out the host waits (category wait_cat).  -1 when out of
 * memory. */
int hta_stream_clips_build(hta_stream_clips *c, const hta_event *const *gpu, size_t n,
                           uint32_t wait_cat);
void hta_stream_clips_free(hta_stream_clips *c);

/* Appends to notes (a rank's /ranks.input_notes, "; " between notes) how
 * many records were clipped and the time cut off; nothing when none. */
void hta_stream_clips_note(const hta_stream_clips *c, hta_error *notes);

/* The end of gpu[pos] = e, clipped when it overlaps the next on its stream. */
int64_t hta_stream_clips_end(const hta_stream_clips *c, size_t pos, const hta_event *e);

#endif
