/* error.c: formatting of hta_error values (see util/error.h). */
#include "util/error.h"

#include <stdio.h>

int hta_fail(hta_error *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->text, sizeof err->text, fmt, ap);
        va_end(ap);
    }
    return -1;
}
