/* tracegen_pickle.c: hta-tracegen's pickle writer (see tracegen_pickle.h). */
#define _POSIX_C_SOURCE 200809L

#include "tracegen_pickle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracegen_common.h"

#define FRAME_TARGET 65536

typedef struct {
    unsigned char *data;
    size_t len, cap;
} bytes;

struct tg_pickle {
    int style;                 /* 0: torch; 2..5: Python's protocol */
    bytes out, frame;          /* frame: the open frame (protocol >= 4) */
    uint32_t next_memo, last;
    char **strings;            /* memoised strings, by value ... */
    uint32_t *string_memo;     /* ... and their memo indices */
    size_t n_strings, cap_strings;
    uint32_t *open;            /* Python style: open containers' memo indices */
    size_t depth, cap_open;
};

static void put(tg_pickle *p, const void *data, size_t n)
{
    bytes *b = p->style >= 4 ? &p->frame : &p->out;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *d = realloc(b->data, cap);
        if (!d)
            tg_fail("out of memory", NULL);
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, n);
    b->len += n;
}

static void op(tg_pickle *p, unsigned char code)
{
    put(p, &code, 1);
}

static void put_le(tg_pickle *p, uint64_t v, size_t n)
{
    unsigned char b[8];
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    put(p, b, n);
}

/* Memoises the value just written under the next index. */
static uint32_t memoise(tg_pickle *p)
{
    uint32_t index = p->next_memo++;
    if (p->style >= 4)
        op(p, 0x94);   /* MEMOIZE */
    else if (index < 256) {
        op(p, 'q');    /* BINPUT */
        put_le(p, index, 1);
    } else {
        op(p, 'r');    /* LONG_BINPUT */
        put_le(p, index, 4);
    }
    return index;
}

void tg_pk_get(tg_pickle *p, uint32_t index)
{
    if (index < 256) {
        op(p, 'h');    /* BINGET */
        put_le(p, index, 1);
    } else {
        op(p, 'j');    /* LONG_BINGET */
        put_le(p, index, 4);
    }
    p->last = index;
}

tg_pickle *tg_pk_new(int style)
{
    tg_pickle *p = tg_calloc(1, sizeof *p);
    p->style = style;
    unsigned char proto[2] = {0x80, (unsigned char)(style ? style : 2)};
    bytes *b = &p->out;
    b->data = tg_calloc(4096, 1);
    b->cap = 4096;
    memcpy(b->data, proto, 2);
    b->len = 2;
    return p;
}

static void open_container(tg_pickle *p, unsigned char empty, size_t n)
{
    op(p, empty);
    if (p->style) {
        if (p->depth == p->cap_open) {
            p->cap_open = p->cap_open ? 2 * p->cap_open : 16;
            p->open = realloc(p->open, p->cap_open * sizeof *p->open);
            if (!p->open)
                tg_fail("out of memory", NULL);
        }
        p->open[p->depth++] = memoise(p);
        if (n > 1)
            op(p, '(');
        p->open[p->depth - 1] |= n == 1 ? 0x80000000u : 0;   /* one item: SETITEM/APPEND */
        if (n == 0)
            p->open[p->depth - 1] |= 0x40000000u;            /* none: nothing */
    } else
        op(p, '(');
}

static void close_container(tg_pickle *p, unsigned char many, unsigned char one)
{
    if (!p->style) {
        op(p, many);
        p->last = memoise(p);
        return;
    }
    uint32_t top = p->open[--p->depth];
    if (top & 0x80000000u)
        op(p, one);
    else if (!(top & 0x40000000u))
        op(p, many);
    p->last = top & 0x3fffffffu;
}

void tg_pk_dict_begin(tg_pickle *p, size_t n) { open_container(p, '}', n); }
void tg_pk_dict_end(tg_pickle *p) { close_container(p, 'u', 's'); }
void tg_pk_list_begin(tg_pickle *p, size_t n) { open_container(p, ']', n); }
void tg_pk_list_end(tg_pickle *p) { close_container(p, 'e', 'a'); }

void tg_pk_tuple2(tg_pickle *p)
{
    op(p, 0x86);   /* TUPLE2 */
    p->last = memoise(p);
}

void tg_pk_str(tg_pickle *p, const char *s)
{
    for (size_t i = 0; i < p->n_strings; i++)
        if (!strcmp(p->strings[i], s)) {
            tg_pk_get(p, p->string_memo[i]);
            return;
        }
    size_t n = strlen(s);
    if (p->style >= 4 && n < 256) {
        op(p, 0x8c);   /* SHORT_BINUNICODE */
        put_le(p, n, 1);
    } else {
        op(p, 'X');    /* BINUNICODE */
        put_le(p, n, 4);
    }
    put(p, s, n);
    if (p->n_strings == p->cap_strings) {
        p->cap_strings = p->cap_strings ? 2 * p->cap_strings : 64;
        p->strings = realloc(p->strings, p->cap_strings * sizeof *p->strings);
        p->string_memo = realloc(p->string_memo, p->cap_strings * sizeof *p->string_memo);
        if (!p->strings || !p->string_memo)
            tg_fail("out of memory", NULL);
    }
    p->strings[p->n_strings] = strdup(s);
    p->string_memo[p->n_strings++] = p->last = memoise(p);
}

/* LONG1: torch writes 8 bytes, Python the fewest that hold the value. */
static void put_long1(tg_pickle *p, int64_t v)
{
    size_t n = 8;
    if (p->style)
        while (n > 1 && ((v >> (8 * (n - 1) - 1)) == 0 || (v >> (8 * (n - 1) - 1)) == -1))
            n--;
    op(p, 0x8a);
    put_le(p, n, 1);
    put_le(p, (uint64_t)v, n);
}

void tg_pk_int(tg_pickle *p, int64_t v)
{
    if (v >= 0 && v < 256) {
        op(p, 'K');
        put_le(p, (uint64_t)v, 1);
    } else if (v >= 0 && v < 65536) {
        op(p, 'M');
        put_le(p, (uint64_t)v, 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        op(p, 'J');
        put_le(p, (uint64_t)(uint32_t)(int32_t)v, 4);
    } else
        put_long1(p, v);
}

void tg_pk_float(tg_pickle *p, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    unsigned char b[9] = {'G'};
    for (int i = 0; i < 8; i++)
        b[1 + i] = (unsigned char)(u >> (56 - 8 * i));
    put(p, b, 9);
}

void tg_pk_bool(tg_pickle *p, int v) { op(p, v ? 0x88 : 0x89); }
void tg_pk_none(tg_pickle *p) { op(p, 'N'); }
uint32_t tg_pk_last(const tg_pickle *p) { return p->last; }

static void flush_frame(tg_pickle *p)
{
    if (p->style < 4 || !p->frame.len)
        return;
    int style = p->style;
    bytes frame = p->frame;
    p->frame = (bytes){0};
    p->style = 0;   /* the header and the frame go to out */
    op(p, 0x95);
    put_le(p, frame.len, 8);
    put(p, frame.data, frame.len);
    p->style = style;
    free(frame.data);
}

void tg_pk_commit(tg_pickle *p)
{
    if (p->frame.len >= FRAME_TARGET)
        flush_frame(p);
}

void tg_pk_finish(tg_pickle *p, const char *path)
{
    op(p, '.');
    flush_frame(p);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p->out.data, 1, p->out.len, f) != p->out.len || fclose(f))
        tg_fail("cannot write ", path);
    for (size_t i = 0; i < p->n_strings; i++)
        free(p->strings[i]);
    free(p->strings);
    free(p->string_memo);
    free(p->open);
    free(p->out.data);
    free(p);
}
