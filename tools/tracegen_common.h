/* tracegen_common.h: what hta-tracegen's job shapes share: an error
 * exit, an allocation that cannot fail, events written into a JSON array
 * (the layouts with a ground truth), a count option. */
#ifndef TRACEGEN_COMMON_H
#define TRACEGEN_COMMON_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Prints "hta-tracegen: MSG DETAIL" and exits with status 2. */
void tg_fail(const char *msg, const char *detail);

/* calloc that exits with "out of memory" instead of returning NULL. */
void *tg_calloc(size_t n, size_t size);

/* Writes one event (printf-style) into an open JSON array, a comma
 * before it unless *first, which it then clears. */
void tg_json_event(FILE *f, bool *first, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The value of a count option, 1..hi; exits on anything else. */
int64_t tg_json_count(const char *opt, const char *s, int64_t hi);

#endif
