/* written_trace/trace_rewrite.h: adding to a trace --write-traces already wrote.
 *
 * What the cross-rank phase learns (outlier flags, each collective's wait
 * for its peers) reaches the written traces after the rank's process wrote
 * them, so they are rewritten whole through a temporary file beside them,
 * renamed over them when complete: a failure leaves the trace as it was. */
#ifndef HTA_TRACE_REWRITE_H
#define HTA_TRACE_REWRITE_H

#include <stddef.h>

#include "util/buf.h"

/* Writes doc to path, gzip when gz, with text inserted at byte offset at:
 * 0, or -1 (errno set). */
int hta_rewrite_trace_with(const char *path, int gz, const hta_buf *doc, size_t at,
                           const hta_buf *text);

/* JSON values appended to b: a number (null for what JSON cannot hold),
 * a string (quotes and backslashes escaped, control bytes dropped). */
void hta_json_put_number(hta_buf *b, double v);
void hta_json_put_string(hta_buf *b, const char *s);

#endif
