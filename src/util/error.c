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
        /* One line whatever the message quotes (a CSV cell, SQLite's
         * schema text): the CLI prints it as one line per file. */
        for (char *c = err->text; *c; c++)
            if ((unsigned char)*c < ' ')
                *c = ' ';
    }
    return -1;
}
