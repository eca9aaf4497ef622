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

/* Parses path with options->threads threads when it is plain JSON of at
 * least options->split_min_bytes (0 = HTA_SPLIT_MIN_BYTES).  Returns 0 with
 * out filled exactly as a serial parse would; -1 with err set when a part
 * ran out of time (a serial retry would only fail again, at byte 0); else
 * 1 with out untouched, for any other reason (gzip, small, a guess that
 * failed, a parse error), and the caller parses serially, which also gives
 * the exact error text and offset. */
#define HTA_SPLIT_MIN_BYTES (16u << 20)
int hta_read_trace_split(const char *path, const hta_read_options *options,
                         const hta_deadline *limit, hta_trace *out, hta_error *err);

#endif
