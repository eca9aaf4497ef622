/* trace_rewrite.c: see written_trace/trace_rewrite.h. */
#include "written_trace/trace_rewrite.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

int hta_rewrite_trace_with(const char *path, int gz, const hta_buf *doc, size_t at,
                           const hta_buf *text)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    size_t tail = doc->len - at;
    int ok;
    if (gz) {
        gzFile out = gzopen(tmp, "wb1");
        ok = out && gzwrite(out, doc->data, (unsigned)at) == (int)at &&
             gzwrite(out, text->data, (unsigned)text->len) == (int)text->len &&
             gzwrite(out, doc->data + at, (unsigned)tail) == (int)tail;
        ok = out && gzclose(out) == Z_OK && ok;
    } else {
        FILE *out = fopen(tmp, "wb");
        ok = out && fwrite(doc->data, 1, at, out) == at &&
             fwrite(text->data, 1, text->len, out) == text->len &&
             fwrite(doc->data + at, 1, tail, out) == tail;
        ok = out && fclose(out) == 0 && ok;
    }
    if (!ok || rename(tmp, path)) {
        remove(tmp);
        return -1;
    }
    return 0;
}

void hta_json_put_number(hta_buf *b, double v)
{
    char text[64];
    if (isfinite(v))
        snprintf(text, sizeof text, "%.17g", v);
    else
        strcpy(text, "null");
    hta_buf_append(b, text, strlen(text));
}

void hta_json_put_string(hta_buf *b, const char *s)
{
    hta_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            hta_buf_putc(b, '\\');
        if ((unsigned char)*s >= 0x20)
            hta_buf_putc(b, *s);
    }
    hta_buf_putc(b, '"');
}
