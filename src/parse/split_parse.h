/* parse/split_parse.h: one plain JSON trace parsed as parts on threads.
 *
 * A plain file is cut into byte ranges.  The head parses from byte 0 as
 * usual and stops before the first event at or past its range end; each
 * span finds the first plausible event boundary (`}` `,` `{`) at or past its
 * range start, parses events from there and stops likewise, or at the
 * array's `]`; the tail resumes the top level after that `]` (distributedInfo
 * may come after traceEvents).  A span's start is a guess: it is right only
 * when the previous part, parsing for real, stopped exactly there, which
 * hta_read_trace_split checks before it merges; any doubt means a serial
 * parse, so the result never differs from one. */
#ifndef HTA_SPLIT_PARSE_H
#define HTA_SPLIT_PARSE_H

#include <stdint.h>

#include "model/trace.h"
#include "parse/reader.h"
#include "util/error.h"

#define HTA_SPLIT_MIN_BYTES (16u << 20)

typedef enum hta_split_result {
    HTA_SPLIT_TIMED_OUT = -1,  /* err set: a part ran out of time (a serial
                                  retry would only fail again, at byte 0) */
    HTA_SPLIT_DONE = 0,        /* out filled exactly as a serial parse would */
    HTA_SPLIT_SERIAL = 1,      /* out untouched: any other reason (gzip, small,
                                  a guess that failed, a parse error); the
                                  caller parses serially, which also gives
                                  the exact error text and offset */
} hta_split_result;

/* Parses path with options->threads threads when it is plain JSON of at
 * least options->split_min_bytes (0 = HTA_SPLIT_MIN_BYTES). */
hta_split_result hta_read_trace_split(const char *path, const hta_read_options *options,
                                      const hta_deadline *limit, hta_trace *out,
                                      hta_error *err);

#endif
