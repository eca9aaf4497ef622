/* tracegen_common.c: see tracegen_common.h. */
#define _POSIX_C_SOURCE 200809L

#include "tracegen_common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

void tg_fail(const char *msg, const char *detail)
{
    fprintf(stderr, "hta-tracegen: %s%s\n", msg, detail ? detail : "");
    exit(2);
}

void *tg_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        tg_fail("out of memory", NULL);
    return p;
}

void tg_json_event(FILE *f, bool *first, const char *fmt, ...)
{
    va_list ap;
    fputs(*first ? "\n" : ",\n", f);
    *first = false;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
}

int64_t tg_json_count(const char *opt, const char *s, int64_t hi)
{
    char *end;
    errno = 0;
    long long v = s ? strtoll(s, &end, 10) : 0;
    if (!s || errno || *end || v < 1 || v > hi) {
        char detail[200];
        snprintf(detail, sizeof detail, "%s '%s'", opt, s ? s : "");
        tg_fail("bad value for ", detail);
    }
    return v;
}
