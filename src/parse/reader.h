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

/* Reads a .json or .json.gz file into out (initialised by the callee).
 * On error out is freed and err names path and offset. */
int hta_read_trace_file(const char *path, const hta_read_options *options, hta_trace *out,
                        hta_error *err);

/* The same parser over bytes in memory, delivered at most `chunk` bytes at
 * a time (0 = the normal buffer size) so tests can put a buffer boundary
 * anywhere; label names the input in errors.  Used by tests and the fuzzer. */
int hta_read_trace_memory(const char *data, size_t len, size_t chunk, const char *label,
                          hta_trace *out, hta_error *err);

/* HTA 0.6.1 rounds every event of a trace with fractional timestamps to
 * whole microseconds, start up and end down (its round_down_time_stamps).
 * Applied on request (--round-like-hta) to reproduce HTA's numbers. */
void hta_round_like_hta(hta_trace *trace);

#endif
