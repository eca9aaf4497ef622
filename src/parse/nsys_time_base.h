/* parse/nsys_time_base.h: the clock an Nsight Systems export's times are on.
 *
 * Nsight records every timestamp in nanoseconds from its session's start
 * and writes the session's UTC start into TARGET_INFO_SESSION_START_TIME
 * (utcEpochNs).  `nsys export` stores them as recorded unless asked to
 * shift them: --ts-normalize=true adds the session start (times become
 * UTC epoch nanoseconds), --ts-shift adds a fixed amount.  Exports of
 * schema 3 record what was done in their metadata: EXPORT_PARAM_TIME_NORMALIZE,
 * EXPORT_PARAM_TIME_SHIFT and, the total shift applied, EXPORT_CONFIG_TIME_SHIFT.
 * Older exports (schema 2, EXPORT_META_DATA) record none of it.
 *
 * One rank per export: ranks are compared on one clock, so every export is
 * put on the UTC epoch clock, which Kineto's traces use too:
 *   - total shift C known:         add start - C (0 when normalised);
 *   - only the parameters known:   add start (unless normalised) - shift;
 *   - nothing recorded (schema 2): add start, unless the first kernel
 *     already starts at or after it (a relative time cannot: it would be
 *     a session decades long), so an export whose times are already
 *     absolute is never shifted;
 *   - no session start: times stay relative, and the reader says so. */
#ifndef HTA_NSYS_TIME_BASE_H
#define HTA_NSYS_TIME_BASE_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* The value of `name` in whichever metadata table the export has
 * (META_DATA_EXPORT, or EXPORT_META_DATA before schema 3), into out;
 * 1 when found, 0 when not. */
int hta_nsys_metadata(sqlite3 *db, const char *name, char *out, size_t size);

typedef struct hta_nsys_time_base {
    int64_t add_ns;   /* added to every start and end */
    int known;        /* 0: no session start, times stay relative */
} hta_nsys_time_base;

/* The shift that puts the export's times on the UTC epoch clock (see
 * above).  first_kernel_ns: the first kernel row's start as stored. */
hta_nsys_time_base hta_nsys_time_base_of(sqlite3 *db, int64_t first_kernel_ns);

/* t + base->add_ns, held within int64_t: a time beyond it is kept at the
 * limit, where the readers' range check drops it. */
int64_t hta_nsys_shifted(const hta_nsys_time_base *base, int64_t t);

#endif
