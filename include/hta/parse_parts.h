/* hta/parse_parts.h: one plain JSON trace parsed as parts on threads.
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
#ifndef HTA_PARSE_PARTS_H
#define HTA_PARSE_PARTS_H

#include <stdint.h>

#include "util/error.h"
#include "parse/reader.h"
#include "model/trace.h"

/* An absolute time limit shared by every part and a serial retry. */
typedef struct hta_deadline {
    double timeout_seconds;    /* 0 = none; quoted in the error */
    double at;                 /* CLOCK_MONOTONIC seconds */
} hta_deadline;

hta_deadline hta_deadline_from(double timeout_seconds);

typedef enum hta_part_kind {
    HTA_PART_HEAD,             /* from byte 0 */
    HTA_PART_SPAN,             /* events from a guessed boundary */
    HTA_PART_TAIL,             /* the top level after the event array */
} hta_part_kind;

typedef enum hta_part_end {
    HTA_PART_DOCUMENT_END,     /* head only: the whole document was parsed */
    HTA_PART_STOPPED,          /* before an event at end_offset */
    HTA_PART_ARRAY_END,        /* the event array closed; end_offset is past ']' */
    HTA_PART_NO_BOUNDARY,      /* span only: no boundary up to the end of data */
    HTA_PART_TIMED_OUT,        /* failed on the deadline; the error says where */
} hta_part_end;

typedef struct hta_part {
    hta_part_kind kind;
    uint64_t from;             /* span: boundary at or past it; tail: past ']' */
    uint64_t stop_at;          /* head, span: stop before an event starting here */
    int bare_array;            /* head sets it, tail needs it */
    hta_part_end end;          /* set by the parse */
    uint64_t first_event;      /* span: offset of the '{' it started at */
    uint64_t end_offset;
} hta_part;

/* Parses one part of the plain file at path into out, initialised by the
 * callee.  Each part opens the file itself, so the kernel's read-ahead
 * follows each part's sequential reads.  Offsets in errors are absolute;
 * on error out is freed. */
int hta_read_part(const char *path, const hta_deadline *limit, hta_part *part,
                  hta_trace *out, hta_error *err);

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
