/* util/error.h: errors as values.
 *
 * Every fallible function takes an hta_error* and returns nonzero on
 * failure after filling it with one human-readable line (control characters
 * of quoted input become spaces).  Nothing below the
 * CLI prints: the caller decides whether the line becomes a warning, a
 * failed rank in /ranks, or an exit code. */
#ifndef HTA_ERROR_H
#define HTA_ERROR_H

#include <stdarg.h>

#include "hta/error.h" /* hta_error itself is public */

/* Formats the message into err (if err is non-NULL) and returns -1 so that
 * callers can write `return hta_fail(err, "...")`. */
int hta_fail(hta_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
