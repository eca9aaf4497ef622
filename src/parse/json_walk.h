/* parse/json_walk.h: a JSON file handed to a caller's walk over the pull
 * lexer (parse/json_lexer.h), for readers of documents other than
 * Kineto's (rocprofv3's results).  The file is streamed, plain or gzip
 * (parse/source.h), through one buffer: no tree of the document is
 * built.  A walk uses the lexer's member steps (lx_open, lx_read_key,
 * key_is, lx_next_member, lx_read_number, lx_read_text, lx_skip_value)
 * and, for a small member it wants whole, hta_json_capture_value. */
#ifndef HTA_JSON_WALK_H
#define HTA_JSON_WALK_H

#include "parse/json_lexer.h"
#include "parse/source.h"
#include "util/buf.h"
#include "util/error.h"

typedef int (*hta_json_walk_fn)(lexer *lx, void *ctx);

/* Opens path and calls walk(lx, ctx) with a lexer at its first byte;
 * errors (the lexer's: "PATH: parse error at byte N: WHAT", a read
 * error, the deadline) go to err.  timeout_seconds > 0: give up beyond
 * it.  Returns walk's result, or -1 when the file cannot be opened. */
int hta_json_walk_file(const char *path, hta_inflater inflater, double timeout_seconds,
                       hta_json_walk_fn walk, void *ctx, hta_error *err);

/* Skips the value at the current position, appending its JSON text to
 * json (for cJSON to parse when small).  *complete is 0 when the value's
 * text could not all be kept (out of memory). */
int hta_json_capture_value(lexer *lx, hta_buf *json, int *complete);

#endif
