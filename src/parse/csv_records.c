/* csv_records.c: RFC 4180 records one at a time (see parse/csv_records.h). */
#include "parse/csv_records.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const char *hta_csv_field(const hta_csv_record *r, size_t i)
{
    return r->text.data + r->starts[i];
}

static int end_field(hta_csv_file *c)
{
    hta_csv_record *r = &c->rec;
    if (r->n == HTA_CSV_MAX_FIELDS)
        return hta_fail(c->err, "%s: line %lu: more than %d columns", c->path, r->line,
                        HTA_CSV_MAX_FIELDS);
    if (hta_buf_putc(&r->text, '\0'))
        return hta_fail(c->err, "%s: out of memory", c->path);
    r->n++;
    r->starts[r->n] = r->text.len;
    return 0;
}

int hta_csv_next(hta_csv_file *c)
{
    hta_csv_record *r = &c->rec;
    r->text.len = 0;
    r->n = 0;
    r->starts[0] = 0;
    r->line = c->line + 1;
    int ch = getc_unlocked(c->f), quoted = 0, any = 0;
    for (;; ch = getc_unlocked(c->f)) {
        if (ch == EOF) {
            if (ferror(c->f))
                return hta_fail(c->err, "%s: line %lu: %s", c->path, r->line, strerror(errno));
            if (quoted)
                return hta_fail(c->err, "%s: line %lu: unterminated quoted field", c->path,
                                r->line);
            if (!any)
                return 0;
            c->line++;
            return end_field(c) ? -1 : 1;
        }
        any = 1;
        if (quoted) {
            if (ch == '"') {
                int next = getc_unlocked(c->f);
                if (next == '"') {
                    if (hta_buf_putc(&r->text, '"'))
                        return hta_fail(c->err, "%s: out of memory", c->path);
                    continue;
                }
                quoted = 0;
                ungetc(next, c->f);
                continue;
            }
            if (ch == '\n')
                c->line++;
            if (hta_buf_putc(&r->text, (char)ch))
                return hta_fail(c->err, "%s: out of memory", c->path);
            continue;
        }
        if (ch == '"' && r->text.len == r->starts[r->n]) {
            quoted = 1;
        } else if (ch == ',') {
            if (end_field(c))
                return -1;
        } else if (ch == '\n') {
            c->line++;
            if (r->text.len > r->starts[r->n] && r->text.data[r->text.len - 1] == '\r')
                r->text.len--;
            if (end_field(c))
                return -1;
            if (r->n == 1 && hta_csv_field(r, 0)[0] == '\0') { /* a blank line */
                r->n = 0;
                r->text.len = 0;
                r->line = c->line + 1;
                any = 0;
                continue;
            }
            return 1;
        } else if (hta_buf_putc(&r->text, (char)ch)) {
            return hta_fail(c->err, "%s: out of memory", c->path);
        }
    }
}

long hta_csv_column(const hta_csv_record *header, const char *name)
{
    for (size_t i = 0; i < header->n; i++)
        if (strcasecmp(hta_csv_field(header, i), name) == 0)
            return (long)i;
    return -1;
}

const char *hta_csv_value(const hta_csv_file *c, long k)
{
    return k >= 0 && (size_t)k < c->rec.n ? hta_csv_field(&c->rec, (size_t)k) : "";
}
