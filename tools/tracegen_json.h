/* tracegen_json.h: what hta-tracegen's layouts with a ground truth share
 * (tracegen_chains.c, tracegen_ops.c): events written into a JSON array,
 * an error exit, a count option. */
#ifndef TRACEGEN_JSON_H
#define TRACEGEN_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Prints "hta-tracegen: MSG DETAIL" and exits with status 2. */
void tg_json_fail(const char *msg, const char *detail);

/* Writes one event (printf-style) into an open JSON array, a comma
 * before it unless *first, which it then clears. */
void tg_json_event(FILE *f, bool *first, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The value of a count option, 1..hi; exits on anything else. */
int64_t tg_json_count(const char *opt, const char *s, int64_t hi);

#endif
