/* parse/reader.h: stream-parse a Kineto trace into compact event arrays.
 *
 * The JSON is never held whole: a pull lexer walks a fixed buffer, decodes
 * only the fields the analyses use (ph, cat, name, ts, dur and a few args)
 * and skips everything else with a validating, non-recursive skipper, so a
 * 100 000-level nested value or a 100 MB string costs no stack.  The small
 * distributedInfo object is captured verbatim and parsed with cJSON.
 * Errors name the file and the byte offset in the uncompressed JSON. */
#ifndef HTA_READER_H
#define HTA_READER_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "parse/json_scan.h"
#include "parse/source.h"
#include "model/trace.h"

/* How to read one file; a zeroed struct (or NULL) means no timeout, the
 * fastest available inflater and one thread. */
typedef struct hta_read_options {
    double timeout_seconds;    /* fail with "timed out after N s" beyond it */
    hta_inflater inflater;     /* gzip backend */
    int threads;               /* parse a plain file with this many (<= 1: one);
                                  gzip input is always one stream */
    uint64_t split_min_bytes;  /* smaller files parse serially; 0 = 16 MiB */
} hta_read_options;


/* The same parser over bytes in memory, delivered at most `chunk` bytes at
 * a time (0 = the normal buffer size) so tests can put a buffer boundary
 * anywhere; label names the input in errors.  Used by tests and the fuzzer. */
int hta_read_trace_memory(const char *data, size_t len, size_t chunk, const char *label,
                          hta_trace *out, hta_error *err);
/* ... with the pre-scan of the given level (parse/json_scan.h), so that
 * tests and the fuzzer compare it with the member-by-member parse. */
int hta_read_trace_memory_scanned(const char *data, size_t len, size_t chunk, js_scan_level scan,
                                  const char *label, hta_trace *out, hta_error *err);

/* The parts of a plain file parsed on threads (parse/split_parse.h). */

/* An absolute time limit shared by every part and a serial retry. */
typedef struct hta_deadline {
    double timeout_seconds;    /* 0 = none; quoted in the error */
    double at;                 /* CLOCK_MONOTONIC seconds */
} hta_deadline;

hta_deadline hta_deadline_from(double timeout_seconds);

/* Reads a .json or .json.gz file into out (initialised by the callee) as
 * one stream, within the deadline (NULL: none); parse/read_input.h's
 * hta_read_trace_file chooses between this and the parts on threads.
 * On error out is freed and err names path and offset. */
int hta_read_trace_serial(const char *path, const hta_read_options *options,
                          const hta_deadline *limit, hta_trace *out, hta_error *err);

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

#endif
