/* tracegen_writer.c: see tracegen_writer.h. */
#define _POSIX_C_SOURCE 200809L

#include "tracegen_writer.h"

#include "tracegen_common.h"

void tg_writer_flush(tg_writer *w)
{
    if (w->len == 0)
        return;
    if (!w->failed) {
        if (w->kind == SINK_FILE)
            w->failed = fwrite(w->buf, 1, w->len, w->fp) != w->len;
        else if (w->kind == SINK_GZIP)
            w->failed = gzwrite(w->gz, w->buf, (unsigned)w->len) != (int)w->len;
    }
    w->total += w->len;
    w->len = 0;
}

void tg_writer_reset(tg_writer *w, tg_sink_kind kind)
{
    w->kind = kind;
    w->fp = NULL;
    w->gz = NULL;
    w->len = 0;
    w->total = 0;
    w->events = 0;
    w->failed = false;
}

bool tg_writer_open_file(tg_writer *w, const char *path, bool gzip)
{
    tg_writer_reset(w, gzip ? SINK_GZIP : SINK_FILE);
    if (gzip) {
        w->gz = gzopen(path, "wb6");
        if (!w->gz)
            return false;
        gzbuffer(w->gz, 1u << 20);
        return true;
    }
    w->fp = fopen(path, "wb");
    if (!w->fp)
        return false;
    setvbuf(w->fp, NULL, _IONBF, 0); /* we already buffer 8 MB ourselves */
    return true;
}

void tg_writer_make_room(tg_writer *w)
{
    if (OUT_BUF_SIZE - w->len < EVENT_MAX)
        tg_writer_flush(w);
}

bool tg_writer_close(tg_writer *w)
{
    tg_writer_flush(w);
    bool ok = !w->failed;
    if (w->kind == SINK_FILE && w->fp)
        ok = (fclose(w->fp) == 0) && ok;
    if (w->kind == SINK_GZIP && w->gz)
        ok = (gzclose(w->gz) == Z_OK) && ok;
    w->fp = NULL;
    w->gz = NULL;
    return ok;
}

static const char DIGIT_PAIRS[] = "00010203040506070809"
                                  "10111213141516171819"
                                  "20212223242526272829"
                                  "30313233343536373839"
                                  "40414243444546474849"
                                  "50515253545556575859"
                                  "60616263646566676869"
                                  "70717273747576777879"
                                  "80818283848586878889"
                                  "90919293949596979899";

static char *format_u64(char *p, uint64_t v)
{
    char tmp[24];
    char *q = tmp + sizeof tmp;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        q -= 2;
        memcpy(q, DIGIT_PAIRS + 2 * r, 2);
    }
    if (v >= 10) {
        q -= 2;
        memcpy(q, DIGIT_PAIRS + 2 * v, 2);
    } else {
        *--q = (char)('0' + v);
    }
    size_t n = (size_t)(tmp + sizeof tmp - q);
    memcpy(p, q, n);
    return p + n;
}

static char *format_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return format_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return format_u64(p, (uint64_t)v);
}

/* v is in millionths; prints like printf("%.6f", v / 1e6). */
static char *format_fixed6(char *p, int64_t v)
{
    p = format_u64(p, (uint64_t)(v / 1000000));
    *p++ = '.';
    int64_t frac = v % 1000000;
    for (int i = 5; i >= 0; i--) {
        p[i] = (char)('0' + frac % 10);
        frac /= 10;
    }
    return p + 6;
}

/* Copies src to dst dropping whitespace outside JSON strings (--compact). */
static size_t strip_json_whitespace(char *dst, size_t cap, const char *src)
{
    size_t n = 0;
    bool in_string = false;
    for (const char *p = src; *p; p++) {
        char ch = *p;
        if (!in_string && (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r'))
            continue;
        if (ch == '"')
            in_string = !in_string;
        if (n + 1 >= cap)
            tg_fail("internal error: JSON fragment too long", NULL);
        dst[n++] = ch;
    }
    dst[n] = '\0';
    return n;
}

tg_str tg_json_layout(bool compact, const char *pretty, char *buf, size_t cap)
{
    if (!compact)
        return str_of(pretty);
    uint32_t n = (uint32_t)strip_json_whitespace(buf, cap, pretty);
    return (tg_str){buf, n};
}

void tg_template_compile(tg_template *t, const char *src, bool compact)
{
    if (compact) {
        strip_json_whitespace(t->text, sizeof t->text, src);
    } else {
        if (strlen(src) >= sizeof t->text)
            tg_fail("internal error: template too long", NULL);
        strcpy(t->text, src);
    }
    const char *p = t->text, *lit = p;
    int n = 0;
    for (;;) {
        if (n >= MAX_SEGS)
            tg_fail("internal error: template has too many holes", NULL);
        if (*p == '\0') {
            t->seg[n] = (tg_seg){lit, (uint32_t)(p - lit), SEG_END};
            return;
        }
        if (p[0] == '$' && (p[1] == 'd' || p[1] == 's' || p[1] == 'f')) {
            uint8_t kind = p[1] == 'd' ? SEG_INT : p[1] == 's' ? SEG_STR : SEG_FIX6;
            t->seg[n++] = (tg_seg){lit, (uint32_t)(p - lit), kind};
            p += 2;
            lit = p;
            continue;
        }
        p++;
    }
}

void tg_template_write(tg_writer *w, const tg_template *t, const tg_arg *args)
{
    char *p = w->buf + w->len;
    for (const tg_seg *sg = t->seg;; sg++) {
        memcpy(p, sg->lit, sg->len);
        p += sg->len;
        switch (sg->kind) {
        case SEG_END:
            w->len = (size_t)(p - w->buf);
            return;
        case SEG_INT:
            p = format_i64(p, args->i);
            break;
        case SEG_STR:
            memcpy(p, args->s, args->n);
            p += args->n;
            break;
        case SEG_FIX6:
            p = format_fixed6(p, args->i);
            break;
        }
        args++;
    }
}
