/* reader.c: streaming Kineto JSON parser (see parse/reader.h).
 *
 * Layout: a pull lexer (lx_*) over a refillable buffer; a validating skipper
 * that keeps its nesting stack on the heap; the event decoder, which fills
 * an event_fields scratch record and appends an hta_event only when the
 * event is a complete ("X") event with cat and dur; and the top level, which
 * accepts an object with traceEvents anywhere or a bare event array.
 * The hot paths read in place: a key, or a kept string (name, cat, ph)
 * without escapes, points into the buffer (a refill copies kept strings
 * first), and the usual number forms are converted in one pass there.
 * A NUL and some zero padding follow the data in the buffer, so the scans
 * for tokens and number bytes need no bounds test of their own, and the
 * per-member steps (key, scalar skip, separator) are inline with their
 * rare cases (escapes, the buffer's end, containers) out of line.
 *
 * The same lexer also parses one part of a plain file (parse/split_parse.h):
 * the head stops before the first event at or past a given offset, a span
 * starts at an event boundary it finds itself, and the tail resumes the
 * top level just past the event array.  A stop is one offset comparison
 * per event, so the serial parse pays nothing measurable for it. */
#include "util/clock.h"
#include "util/large_alloc.h"
#include "parse/reader.h"

#include <cjson/cJSON.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse/source.h"
#include "parse/split_parse.h"
#include "model/op_flops.h"
#include "util/buf.h"

#define LX_BUFFER_BYTES (256u << 10)
/* The data in the buffer is followed by this many zero bytes: the NUL at
 * lx->end stops every scan for a token, digit or string byte without a
 * bounds check, and a 16-byte load anywhere before lx->end stays inside
 * the allocation and reads only initialised bytes. */
#define LX_PADDING_BYTES 64u
#define LX_EOF (-1)
#define DISTRIBUTED_INFO_MAX_BYTES (64u << 20)
/* A span reads from this far before its range so that a boundary whose
 * '{' is at the range start is still seen whole. */
#define SPAN_LOOKBACK_BYTES 4096u
#define NEVER_STOP UINT64_MAX

typedef long (*lx_pull_fn)(void *ctx, char *buf, size_t cap, hta_error *err);

/* A string value the decoder keeps until the end of its event.  A string
 * without escapes that lies wholly in the buffer is borrowed from it (no
 * copy); a refill copies borrowed text into `own` before it is overwritten. */
typedef struct lx_text {
    const char *data;
    size_t len;
    int borrowed;
    hta_buf own;
} lx_text;

/* The collective metadata among an event's args (model/comm_meta.h): the
 * strings, in the lexer's comm_text buffers, by index. */
enum {
    COMM_COLLECTIVE, COMM_DTYPE, COMM_PG_NAME, COMM_PG_DESC, COMM_PG_RANKS, COMM_IN_SPLIT,
    COMM_OUT_SPLIT, COMM_N_STRINGS
};
/* ... and its numbers, in the lexer's comm_fields. */
enum { COMM_EXTERNAL_ID, COMM_IN_NELEMS, COMM_OUT_NELEMS, COMM_GROUP_SIZE, COMM_SEQ, COMM_PEER,
       COMM_N_NUMBERS };

/* What of the collective metadata the current event had: in the lexer,
 * not the per-event scratch, so that an event without any costs one
 * store. */
typedef struct comm_fields {
    int64_t number[COMM_N_NUMBERS];
    unsigned strings;          /* bit k: comm_text[k] was read for this event */
    unsigned numbers;          /* bit k: number[k] was read */
} comm_fields;

typedef struct lexer {
    const char *p, *end;
    char *buf;                 /* owned */
    uint64_t base;             /* stream offset of buf[0] */
    int at_eof;
    int failed;
    int timed_out;             /* failed on the deadline, not on the data */
    lx_pull_fn pull;
    void *pull_ctx;
    double timeout_seconds;    /* 0 = no limit */
    double deadline;           /* CLOCK_MONOTONIC seconds, with timeout_seconds */
    const char *label;
    hta_error *err;
    uint64_t stop_at;          /* stop before an event starting here or later */
    int stopped;               /* ... and did: unwind without finishing */
    int bare_array;            /* the document is an event array, not an object */
    hta_buf *record;           /* when set, consumed bytes are appended */
    const char *record_from;
    hta_buf skip_stack;        /* container kinds while skipping */
    lx_text name, cat, ph;
    lx_text pid, tid;          /* as written: a number's text or a string's */
    lx_text input_dims, input_type, concrete_inputs; /* JSON text as written */
    hta_buf context_key, last_context_key; /* see cpu_context_of */
    uint32_t last_context;
    hta_buf op_contexts;       /* per name id: an op_context, see cpu_context_of */
    hta_buf long_key;          /* keys that need decoding land here */
    const char *key;           /* the member name just read: in the buffer or */
    size_t key_len;            /* long_key, valid until the next lexer call */
    hta_buf kernel_types;      /* per name id: hta_kernel_type + 1, 0 = not yet known */
    hta_buf comm_text[COMM_N_STRINGS];      /* collective metadata strings (COMM_*) */
    comm_fields comm;
} lexer;

/* ---- lexer ------------------------------------------------------------ */

static uint64_t lx_offset(const lexer *lx)
{
    return lx->base + (uint64_t)(lx->p - lx->buf);
}

static int lx_error(lexer *lx, const char *what)
{
    if (!lx->failed)
        hta_fail(lx->err, "%s: parse error at byte %llu: %s", lx->label,
                 (unsigned long long)lx_offset(lx), what);
    lx->failed = 1;
    return -1;
}

static void lx_flush_record(lexer *lx)
{
    if (!lx->record)
        return;
    size_t n = (size_t)(lx->p - lx->record_from);
    if (lx->record->len + n > DISTRIBUTED_INFO_MAX_BYTES)
        lx->record = NULL;     /* too large to be metadata: give up on it */
    else
        hta_buf_append(lx->record, lx->record_from, n);
    lx->record_from = lx->p;
}

/* Every pathological input (huge strings, deep nesting, endless events)
 * still consumes bytes, so checking the clock once per buffer bounds the
 * overrun by the time one buffer takes. */
static int lx_out_of_time(lexer *lx)
{
    if (lx->timeout_seconds <= 0 || hta_monotonic_seconds() <= lx->deadline)
        return 0;
    hta_fail(lx->err, "%s: timed out after %g s (--timeout-per-trace) at byte %llu",
             lx->label, lx->timeout_seconds, (unsigned long long)lx_offset(lx));
    lx->failed = lx->timed_out = 1;
    return 1;
}

static int lx_keep_text(lx_text *t)
{
    if (!t->borrowed)
        return 0;
    t->own.len = 0;
    if (hta_buf_append(&t->own, t->data, t->len))
        return -1;
    t->data = t->own.data;
    t->borrowed = 0;
    return 0;
}

static void lx_pad(lexer *lx)
{
    memset(lx->buf + (lx->end - lx->buf), 0, LX_PADDING_BYTES);
}

/* Slow path of lx_peek: the buffer is exhausted. */
static int lx_refill(lexer *lx)
{
    if (lx->at_eof || lx->failed || lx_out_of_time(lx))
        return LX_EOF;
    lx_flush_record(lx);
    if (lx_keep_text(&lx->name) || lx_keep_text(&lx->cat) || lx_keep_text(&lx->ph) ||
        lx_keep_text(&lx->pid) || lx_keep_text(&lx->tid) || lx_keep_text(&lx->input_dims) ||
        lx_keep_text(&lx->input_type) || lx_keep_text(&lx->concrete_inputs)) {
        lx_error(lx, "out of memory");
        return LX_EOF;
    }
    lx->base += (uint64_t)(lx->end - lx->buf);
    long n = lx->pull(lx->pull_ctx, lx->buf, LX_BUFFER_BYTES, lx->err);
    lx->p = lx->record_from = lx->buf;
    lx->end = lx->buf + (n > 0 ? n : 0);
    lx_pad(lx);
    if (n < 0) {
        lx->failed = 1;
        return LX_EOF;
    }
    if (n == 0) {
        lx->at_eof = 1;
        return LX_EOF;
    }
    return (unsigned char)*lx->p;
}

static inline int lx_peek(lexer *lx)
{
    if (lx->p < lx->end)
        return (unsigned char)*lx->p;
    return lx_refill(lx);
}

static inline int is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* Every byte above ' ' ends a run of whitespace: one comparison settles
 * the usual case of a token right after ':' or ','. */
static inline int is_token_byte(char c)
{
    return (unsigned char)c > ' ';
}

/* Byte scanners: pretty-printed traces are a third indentation and most of
 * the rest is long kernel names, so both scans go 16 bytes at a time. */
static const char *skip_spaces(const char *p, const char *end)
{
#ifdef __SSE2__
    const __m128i space = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n');
    const __m128i cr = _mm_set1_epi8('\r'), tab = _mm_set1_epi8('\t');
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, space), _mm_cmpeq_epi8(v, nl)),
                                  _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, tab)));
        unsigned other = ~(unsigned)_mm_movemask_epi8(ws) & 0xFFFFu;
        if (other)
            return p + __builtin_ctz(other);
        p += 16;
    }
#endif
    while (p < end && is_space(*p))
        p++;
    return p;
}

/* First '"' or '\\' in [p, end), or end. */
static inline const char *find_string_end(const char *p, const char *end)
{
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        unsigned hit = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
        if (hit)
            return p + __builtin_ctz(hit);
        p += 16;
    }
#endif
    while (p < end && *p != '"' && *p != '\\')
        p++;
    return p;
}

/* Slow path of lx_peek_token: whitespace or the end of the buffer. */
static int lx_skip_to_token(lexer *lx)
{
    for (;;) {
        lx->p = skip_spaces(lx->p, lx->end);
        if (lx->p < lx->end)
            return (unsigned char)*lx->p;
        if (lx_refill(lx) == LX_EOF)
            return LX_EOF;
    }
}

/* Inline for a token at hand or after one space (`": 1"`, `", "`); the
 * NUL after the data ends both tests at the end of the buffer. */
static inline int lx_peek_token(lexer *lx)
{
    const char *p = lx->p;
    if (is_token_byte(*p))
        return (unsigned char)*p;
    if (*p == ' ' && is_token_byte(p[1])) {
        lx->p = p + 1;
        return (unsigned char)p[1];
    }
    return lx_skip_to_token(lx);
}

static int lx_expect(lexer *lx, char c, const char *what)
{
    if (lx_peek_token(lx) != (unsigned char)c)
        return lx_error(lx, what);
    lx->p++;
    return 0;
}

static int lx_error_eof(lexer *lx, const char *what)
{
    return lx->failed ? -1 : lx_error(lx, what);
}

static int hex_value(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int lx_read_hex4(lexer *lx, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hex_value(lx_peek(lx));
        if (h < 0)
            return lx_error(lx, "bad \\u escape");
        lx->p++;
        v = v * 16 + (unsigned)h;
    }
    *out = v;
    return 0;
}

static int put_utf8(hta_buf *out, unsigned cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) { b[0] = (char)cp; n = 1; }
    else if (cp < 0x800) { b[0] = (char)(0xC0 | cp >> 6); b[1] = (char)(0x80 | (cp & 0x3F)); n = 2; }
    else if (cp < 0x10000) { b[0] = (char)(0xE0 | cp >> 12); b[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); b[2] = (char)(0x80 | (cp & 0x3F)); n = 3; }
    else { b[0] = (char)(0xF0 | cp >> 18); b[1] = (char)(0x80 | ((cp >> 12) & 0x3F)); b[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); b[3] = (char)(0x80 | (cp & 0x3F)); n = 4; }
    return hta_buf_append(out, b, n);
}

static int lx_read_escape(lexer *lx, hta_buf *out)
{
    int c = lx_peek(lx);
    if (c == LX_EOF)
        return lx_error_eof(lx, "unterminated string");
    lx->p++;
    switch (c) {
    case '"': case '\\': case '/': return hta_buf_putc(out, (char)c);
    case 'b': return hta_buf_putc(out, '\b');
    case 'f': return hta_buf_putc(out, '\f');
    case 'n': return hta_buf_putc(out, '\n');
    case 'r': return hta_buf_putc(out, '\r');
    case 't': return hta_buf_putc(out, '\t');
    case 'u': {
        unsigned cp;
        if (lx_read_hex4(lx, &cp))
            return -1;
        if (cp >= 0xD800 && cp < 0xDC00 && lx_peek(lx) == '\\') {
            lx->p++;
            if (lx_peek(lx) != 'u')
                return lx_error(lx, "bad surrogate pair");
            lx->p++;
            unsigned low;
            if (lx_read_hex4(lx, &low))
                return -1;
            if (low >= 0xDC00 && low < 0xE000)
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        return put_utf8(out, cp);
    }
    default:
        return lx_error(lx, "bad escape in string");
    }
}

/* Reads a string whose opening quote is current into out, decoding
 * escapes; with out NULL the string is only skipped (escapes unchecked). */
static int lx_read_string(lexer *lx, hta_buf *out)
{
    if (out) {
        out->len = 0;
        if (hta_buf_reserve(out, 0))
            return lx_error(lx, "out of memory");
        out->data[0] = '\0';
    }
    lx->p++;
    for (;;) {
        const char *start = lx->p, *p = find_string_end(lx->p, lx->end);
        if (out && hta_buf_append(out, start, (size_t)(p - start)))
            return lx_error(lx, "out of memory");
        lx->p = p;
        int c = lx_peek(lx);
        if (c == LX_EOF)
            return lx_error_eof(lx, "unterminated string");
        if (c != '"' && c != '\\')
            continue;          /* the buffer was refilled mid-string */
        lx->p++;
        if (c == '"')
            return 0;
        if (!out) {
            if (lx_peek(lx) == LX_EOF)
                return lx_error_eof(lx, "unterminated string");
            lx->p++;           /* the escaped character */
        } else if (lx_read_escape(lx, out)) {
            return lx->failed ? -1 : lx_error(lx, "out of memory");
        }
    }
}

/* The closing quote of the string whose opening quote is current, when
 * the string has no escape and ends inside the buffer (nearly always);
 * else NULL and the caller goes through lx_read_string. */
static inline const char *lx_plain_string_end(const lexer *lx)
{
    const char *q = find_string_end(lx->p + 1, lx->end);
    return q < lx->end && *q == '"' ? q : NULL;
}

static inline int lx_skip_string(lexer *lx)
{
    const char *q = lx_plain_string_end(lx);
    if (!q)
        return lx_read_string(lx, NULL);
    lx->p = q + 1;
    return 0;
}

/* A JSON number in every form the analyses want. */
typedef struct number {
    double value;
    int64_t integer;           /* truncated; valid when integer_ok */
    int64_t thousandths;       /* value x 1000 rounded: us -> ns exactly */
    int integer_ok, thousandths_ok;
    int fractional;            /* written with a fraction or an exponent */
} number;

#define NUMBER_TEXT_MAX 80

/* The bytes a number's text runs over (its grammar is checked after). */
static const unsigned char number_bytes[256] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1,
    ['7'] = 1, ['8'] = 1, ['9'] = 1, ['-'] = 1, ['+'] = 1, ['.'] = 1, ['e'] = 1, ['E'] = 1,
};

static inline int is_number_char(int c)
{
    return number_bytes[(unsigned char)c];
}

static inline int is_digit(char c)
{
    return (unsigned char)(c - '0') < 10;
}

/* Accumulates the decimal digits at p (stopping at limit) onto *whole.
 * Timestamps have 16 digits, so on little-endian machines eight are
 * checked and converted at once (the SWAR steps of simdjson/fast_float). */
static const char *add_digits(const char *p, const char *limit, uint64_t *whole)
{
    uint64_t v = *whole;       /* unsigned: wraps harmlessly past 19 digits */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (uint64_t w; limit - p >= 8; p += 8) {
        memcpy(&w, p, 8);
        uint64_t all_digits = (w & 0xF0F0F0F0F0F0F0F0u) |
                              (((w + 0x0606060606060606u) & 0xF0F0F0F0F0F0F0F0u) >> 4);
        if (all_digits != 0x3333333333333333u)
            break;
        w -= 0x3030303030303030u;
        w = w * 10 + (w >> 8);
        w = ((w & 0x000000FF000000FFu) * (100 + (1000000ull << 32)) +
             ((w >> 16) & 0x000000FF000000FFu) * (1 + (10000ull << 32))) >> 32;
        v = v * 100000000u + w;
    }
#endif
    for (; p < limit && is_digit(*p); p++)
        v = v * 10 + (uint64_t)(*p - '0');
    *whole = v;
    return p;
}

/* Fills out, all but its double value, for an integer part of at most 18
 * digits (no int64 overflow) and up to one fraction: thousandths from the
 * first three fraction digits, rounded half away from zero on the fourth. */
static inline void plain_number(int negative, int64_t whole, const char *frac,
                                size_t frac_digits, number *out)
{
    static const int place[3] = {100, 10, 1};
    int64_t milli = 0;
    for (size_t k = 0; k < frac_digits && k < 3; k++)
        milli += (frac[k] - '0') * place[k];
    out->fractional = frac_digits > 0;
    out->integer = negative ? -whole : whole;
    out->integer_ok = 1;
    out->thousandths_ok = 0;
    if (whole > (INT64_MAX - 1000) / 1000)
        return;                /* beyond ~292 years of microseconds */
    int64_t t = whole * 1000 + milli;
    if (frac_digits > 3 && frac[3] >= '5')
        t++;
    out->thousandths = negative ? -t : t;
    out->thousandths_ok = 1;
}

/* Validates the JSON number grammar on text[0..n) and converts it.  Decimal
 * text is converted digit by digit so that "1712195495519689.047" us becomes
 * exactly 1712195495519689047 ns, which a double cannot hold.  The double
 * value is computed only when want_double is set (or the text needs it). */
static int convert_number(const char *text, size_t n, int want_double, number *out)
{
    size_t i = 0;
    int negative = 0;
    if (i < n && text[i] == '-') { negative = 1; i++; }
    size_t int_start = i;
    while (i < n && text[i] >= '0' && text[i] <= '9') i++;
    size_t int_digits = i - int_start;
    if (int_digits == 0 || (int_digits > 1 && text[int_start] == '0'))
        return -1;
    size_t frac_start = i, frac_digits = 0;
    if (i < n && text[i] == '.') {
        frac_start = ++i;
        while (i < n && text[i] >= '0' && text[i] <= '9') i++;
        frac_digits = i - frac_start;
        if (frac_digits == 0)
            return -1;
    }
    int has_exponent = 0;
    if (i < n && (text[i] == 'e' || text[i] == 'E')) {
        has_exponent = 1;
        i++;
        if (i < n && (text[i] == '+' || text[i] == '-')) i++;
        size_t exp_start = i;
        while (i < n && text[i] >= '0' && text[i] <= '9') i++;
        if (i == exp_start)
            return -1;
    }
    if (i != n)
        return -1;

    out->integer_ok = out->thousandths_ok = 0;
    out->fractional = frac_digits > 0 || has_exponent;
    out->value = NAN;
    if (want_double || has_exponent || int_digits > 18) {
        /* strtod is the costly part of a number; most fields never need it. */
        char tmp[NUMBER_TEXT_MAX];
        memcpy(tmp, text, n);
        tmp[n] = '\0';
        out->value = strtod(tmp, NULL);
    }
    if (has_exponent || int_digits > 18) {
        double scaled = out->value * 1000.0;
        if (isfinite(scaled) && fabs(scaled) < 9.0e18) {
            out->thousandths = llround(scaled);
            out->thousandths_ok = 1;
        }
        if (isfinite(out->value) && fabs(out->value) < 9.0e18 &&
            out->value == floor(out->value)) {
            out->integer = (int64_t)out->value;
            out->integer_ok = 1;
        }
        return 0;
    }
    int64_t whole = 0;
    for (size_t k = int_start; k < int_start + int_digits; k++)
        whole = whole * 10 + (text[k] - '0');
    plain_number(negative, whole, text + frac_start, frac_digits, out);
    return 0;
}

/* Fast path of lx_read_number for the forms of nearly every number in a
 * trace, 123 and 123.456: one pass over the buffer, no copy.  0 when the
 * number is anything else or might cross the buffer's end; lx_read_number
 * then does it the general way. */
static int lx_read_plain_number(lexer *lx, number *out)
{
    const char *p = lx->p;
    if (lx->end - p <= NUMBER_TEXT_MAX)
        return 0;
    const char *limit = p + NUMBER_TEXT_MAX - 1; /* longer runs are unusable */
    int negative = *p == '-';
    p += negative;
    const char *digits = p;
    uint64_t whole = 0;
    p = add_digits(p, limit, &whole);
    size_t int_digits = (size_t)(p - digits);
    if (int_digits == 0 || int_digits > 18 || (int_digits > 1 && *digits == '0'))
        return 0;
    const char *frac = p;
    size_t frac_digits = 0;
    if (*p == '.') {
        frac = ++p;
        while (p < limit && is_digit(*p))
            p++;
        frac_digits = (size_t)(p - frac);
        if (frac_digits == 0)
            return 0;
    }
    if (p == limit || is_number_char(*p))
        return 0;
    out->value = NAN;
    plain_number(negative, (int64_t)whole, frac, frac_digits, out);
    lx->p = p;
    return 1;
}

/* Slow path of lx_read_number: any form, anywhere in the buffer.  Numbers
 * longer than any real value (e.g. 10159970886766084423) are validated
 * and marked unusable. */
static int lx_read_any_number(lexer *lx, int want_double, number *out)
{
    char text[NUMBER_TEXT_MAX];
    size_t n = 0, total = 0;
    const char *p = lx->p;
    if (lx->end - p > (long)sizeof text) {
        /* The number cannot cross the end of the buffer. */
        while (n < sizeof text - 1 && is_number_char((unsigned char)*p))
            text[n++] = *p++;
        lx->p = p;
        total = n;
        if (n == sizeof text - 1)
            while (lx_peek(lx) != LX_EOF && is_number_char(*lx->p)) {
                lx->p++;
                total++;
            }
    } else {
        int c;
        while ((c = lx_peek(lx)) != LX_EOF && is_number_char(c)) {
            if (n < sizeof text - 1)
                text[n++] = (char)c;
            total++;
            lx->p++;
        }
    }
    if (lx->failed)
        return -1;
    if (total >= sizeof text - 1) {
        out->value = NAN;
        out->integer_ok = out->thousandths_ok = out->fractional = 0;
        return 0;
    }
    if (convert_number(text, n, want_double, out))
        return lx_error(lx, "malformed number");
    return 0;
}

/* Reads a number at the current position. */
static inline int lx_read_number(lexer *lx, int want_double, number *out)
{
    if (!want_double && lx_read_plain_number(lx, out))
        return 0;
    return lx_read_any_number(lx, want_double, out);
}

/* The end of the run of number bytes at p: the NUL after the data stops it. */
static inline const char *number_bytes_end(const char *p)
{
    while (is_number_char(*p))
        p++;
    return p;
}

/* Slow path of lx_skip_number: the number runs on past the buffer. */
static int lx_skip_number_across(lexer *lx)
{
    while (lx_refill(lx) != LX_EOF) {
        lx->p = number_bytes_end(lx->p);
        if (lx->p < lx->end)
            break;
    }
    return lx->failed ? -1 : 0;
}

/* Skips a number without converting it (values nobody reads). */
static inline int lx_skip_number(lexer *lx)
{
    lx->p = number_bytes_end(lx->p);
    return lx->p < lx->end ? 0 : lx_skip_number_across(lx);
}

/* Skips true, false or null, whose first byte is `first`; fails at the
 * end of the data or on any other byte. */
static int lx_skip_literal(lexer *lx, int first)
{
    static const char *const words[] = {"true", "false", "null"};
    if (first == LX_EOF)
        return lx_error_eof(lx, "unexpected end of data");
    for (int w = 0; w < 3; w++) {
        if (first != words[w][0])
            continue;
        for (const char *s = words[w]; *s; s++) {
            if (lx_peek(lx) != (unsigned char)*s)
                return lx_error_eof(lx, "invalid literal");
            lx->p++;
        }
        return 0;
    }
    return lx_error(lx, "unexpected character");
}

static inline int lx_skip_scalar(lexer *lx, int c)
{
    if (c == '"')
        return lx_skip_string(lx);
    if (c == '-' || is_digit((char)c))
        return lx_skip_number(lx);
    return lx_skip_literal(lx, c);
}

static int lx_skip_member_key(lexer *lx)
{
    if (lx_peek_token(lx) != '"')
        return lx_error_eof(lx, "expected a string key");
    if (lx_skip_string(lx))
        return -1;
    return lx_expect(lx, ':', "expected ':'");
}

/* Pushes a container kind: a plain store while the stack has room (it is
 * never read as a string), the buffer's growth otherwise. */
static inline int push_nesting(hta_buf *stack, char c)
{
    if (stack->len < stack->cap) {
        stack->data[stack->len++] = c;
        return 0;
    }
    return hta_buf_putc(stack, c);
}

/* Skips a container of any depth, validating its structure.  The nesting
 * stack lives in a heap buffer, so depth is bounded by memory only. */
static int lx_skip_container(lexer *lx, int c)
{
    hta_buf *stack = &lx->skip_stack;
    stack->len = 0;
    for (;; c = lx_peek_token(lx)) {
        if (c == '{' || c == '[') {
            lx->p++;
            int close = c == '{' ? '}' : ']';
            if (lx_peek_token(lx) != close) {
                if (push_nesting(stack, (char)c))
                    return lx_error(lx, "out of memory");
                if (c == '{' && lx_skip_member_key(lx))
                    return -1;
                continue;
            }
            lx->p++;           /* an empty container is a complete value */
        } else if (lx_skip_scalar(lx, c)) {
            return -1;
        }
        /* A value is complete: close containers until one wants more. */
        for (;;) {
            if (stack->len == 0)
                return 0;
            char top = stack->data[stack->len - 1];
            c = lx_peek_token(lx);
            if (c == ',') {
                lx->p++;
                if (top == '{' && lx_skip_member_key(lx))
                    return -1;
                break;
            }
            if (c != (top == '{' ? '}' : ']'))
                return lx_error_eof(lx, top == '{' ? "expected ',' or '}'"
                                                   : "expected ',' or ']'");
            lx->p++;
            stack->len--;
        }
    }
}

/* Skips one value; inline, as most are plain strings and numbers that
 * end inside the buffer. */
static inline int lx_skip_value(lexer *lx)
{
    int c = lx_peek_token(lx);
    if (c == '{' || c == '[')
        return lx_skip_container(lx, c);
    return lx_skip_scalar(lx, c);
}

/* Length of the plain key whose opening quote is current when it and its
 * ':' lie in the buffer, else -1.  Most keys are shorter than 15 bytes:
 * one 16-byte block (the padding keeps it in bounds) then settles it from
 * bit masks alone, with no dependent load of the byte found. */
static inline long lx_plain_key_length(const lexer *lx)
{
    const char *start = lx->p + 1;
#ifdef __SSE2__
    __m128i v = _mm_loadu_si128((const __m128i *)start);
    unsigned quotes = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
    unsigned escapes = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
    unsigned colons = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(':')));
    unsigned first_quote = quotes & -quotes;
    if (first_quote && !(escapes & (first_quote - 1)) && (colons & first_quote << 1)) {
        long len = __builtin_ctz(first_quote);
        if (lx->end - start > len + 1)
            return len;
    }
#endif
    const char *q = lx_plain_string_end(lx);
    return q && lx->end - q >= 2 && q[1] == ':' ? q - start : -1;
}

/* Slow path of lx_read_key: a key with escapes, or one near the end of
 * the buffer, decoded into long_key. */
static int lx_read_long_key(lexer *lx)
{
    if (lx_read_string(lx, &lx->long_key))
        return -1;
    lx->key = lx->long_key.data;
    lx->key_len = lx->long_key.len;
    return lx_expect(lx, ':', "expected ':'");
}

/* Reads `"key":`; lx->key then points at the decoded name.  Inline, as
 * are lx_next_member and the skipping of scalars: a member's own work is
 * a few dozen instructions, so calls were a large share of it. */
static inline int lx_read_key(lexer *lx)
{
    if (lx_peek_token(lx) != '"')
        return lx_error_eof(lx, "expected a string key");
    long len = lx_plain_key_length(lx);
    if (len < 0)
        return lx_read_long_key(lx);
    /* The key is read in place: the caller's dispatch comes before any
     * refill. */
    lx->key = lx->p + 1;
    lx->key_len = (size_t)len;
    lx->p += len + 3;
    return 0;
}

/* After a member: 1 when another follows, 0 at the closing bracket. */
static inline int lx_next_member(lexer *lx, char close)
{
    int c = lx_peek_token(lx);
    if (c == ',') {
        lx->p++;
        return 1;
    }
    if (c == (unsigned char)close) {
        lx->p++;
        return 0;
    }
    return lx_error_eof(lx, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
}

/* Enters an object: 1 when it has members, 0 when empty, -1 on error. */
static int lx_open(lexer *lx, char open, char close, const char *what)
{
    if (lx_expect(lx, open, what))
        return -1;
    if (lx_peek_token(lx) == (unsigned char)close) {
        lx->p++;
        return 0;
    }
    return 1;
}

/* Inline with a literal: the length test settles most mismatches and the
 * comparison of a constant length compiles to a load or two. */
static inline int key_is(const lexer *lx, const char *s)
{
    size_t n = strlen(s);
    return lx->key_len == n && memcmp(lx->key, s, n) == 0;
}

/* ---- events ----------------------------------------------------------- */

typedef struct event_fields {
    int has_ts, has_dur, has_cat, has_name, has_stream;
    int fractional_ts, fractional_dur;
    int64_t ts_ns, dur_ns;
    int64_t stream, correlation, bytes;
    double bandwidth_gbps;
    int has_copy;
    int has_pid, has_tid, has_input_dims, has_input_type, has_concrete_inputs; /* texts in the lexer */
    int64_t wait_on_stream, wait_record_correlation; /* -1 when absent */
    hta_memory_sample memory;  /* the args of a [memory] event */
} event_fields;

/* Reads a numeric field; a non-numeric value is skipped and reported as 0. */
static int read_numeric(lexer *lx, number *out, int *is_number, int want_double)
{
    int c = lx_peek_token(lx);
    *is_number = c == '-' || (c >= '0' && c <= '9');
    if (!*is_number)
        return lx_skip_value(lx);
    return lx_read_number(lx, want_double, out);
}

/* ---- CPU side: pid, tid, External id, Input Dims, Input type, Concrete Inputs */

static int lx_read_text(lexer *lx, lx_text *t);

/* Slow path of read_id_text: a string, a number running past the
 * buffer, or another value (skipped; the field counts as absent). */
static int read_id_text_slowly(lexer *lx, lx_text *out, int *has)
{
    int c = lx_peek_token(lx);
    if (c == '"') {
        *has = 1;
        return lx_read_text(lx, out);
    }
    if (c != '-' && !is_digit((char)c))
        return lx_skip_value(lx);
    *has = 1;
    /* A refill must not keep an earlier event's text into the bytes
     * gathered here. */
    out->borrowed = 0;
    out->own.len = 0;
    for (; (c = lx_peek(lx)) != LX_EOF && is_number_char(c); lx->p++)
        if (hta_buf_putc(&out->own, (char)c))
            return lx_error(lx, "out of memory");
    out->data = out->own.data;
    out->len = out->own.len;
    return lx->failed ? -1 : 0;
}

/* Reads a pid or tid as its text: a number's bytes, borrowed from the
 * buffer like a kept string, or a string's content.  Inline: every event
 * has both, and the usual number costs what skipping it did. */
static inline int read_id_text(lexer *lx, lx_text *out, int *has)
{
    lx_peek_token(lx);
    const char *p = lx->p;
    if (is_digit(*p)) {
        const char *end = number_bytes_end(p);
        if (end < lx->end) {
            out->data = p;
            out->len = (size_t)(end - p);
            out->borrowed = 1;
            lx->p = end;
            *has = 1;
            return 0;
        }
    }
    return read_id_text_slowly(lx, out, has);
}

/* Argument texts longer than this are dropped (whatever the buffer
 * holds, so that the result never depends on where a refill falls). */
#define ARG_TEXT_MAX (64u << 10)

/* Deepest nesting scan_plain_array follows. */
#define PLAIN_ARRAY_DEPTH 16

/* The end of the array starting at p when it holds nothing but arrays,
 * whole numbers without exponent (-?[0-9]+) and strings without escapes
 * (Input Dims and Input type nearly always), else NULL.  Whatever it
 * accepts lx_skip_value accepts too and ends at the same byte; NUL ends
 * the scan, so the zero bytes past the buffer's data keep it in bounds. */
static const char *scan_plain_array(const char *p)
{
    int depth = 0;
    for (;;) {
        /* A value is due (or, right after '[', the ']' of an empty one). */
        while (is_space(*p))
            p++;
        if (*p == '[') {
            if (++depth > PLAIN_ARRAY_DEPTH)
                return NULL;
            p++;
            while (is_space(*p))
                p++;
            if (*p != ']')
                continue;
            depth--;
            p++;
        } else if (*p == '"') {
            for (p++; *p != '"'; p++)
                if (*p == '\\' || *p == '\0')
                    return NULL;
            p++;
        } else {
            p += *p == '-';
            if (!is_digit(*p))
                return NULL;
            while (is_digit(*p))
                p++;
        }
        /* A value ended: close arrays until one wants more. */
        for (;;) {
            if (depth == 0)
                return p;
            while (is_space(*p))
                p++;
            if (*p == ',') {
                p++;
                break;
            }
            if (*p != ']')
                return NULL;
            depth--;
            p++;
        }
    }
}

/* Reads any value as its JSON text, as written: borrowed from the buffer
 * when the buffer holds the longest text kept (nearly always), else
 * recorded across refills.  Whitespace stays: one writer lays out one
 * value one way, and the contexts drop it once each (cpu_context.c). */
static int read_json_text(lexer *lx, lx_text *out, int *has)
{
    lx_peek_token(lx);
    const char *start = lx->p;
    uint64_t base = lx->base;
    out->borrowed = 0;         /* a refill must not keep an earlier event's text */
    const char *plain_end = *start == '[' ? scan_plain_array(start) : NULL;
    if (plain_end && plain_end <= lx->end) {
        size_t len = (size_t)(plain_end - start);
        lx->p = plain_end;
        *has = len <= ARG_TEXT_MAX;
        if (*has)
            *out = (lx_text){.data = start, .len = len, .borrowed = 1, .own = out->own};
        return 0;
    }
    if ((size_t)(lx->end - start) > ARG_TEXT_MAX + 1) {
        int rc = lx_skip_value(lx);
        size_t len = (size_t)(lx->p - start);
        *has = rc == 0 && lx->base == base && len > 0 && len <= ARG_TEXT_MAX;
        if (*has)
            *out = (lx_text){.data = start, .len = len, .borrowed = 1, .own = out->own};
        return rc;
    }
    hta_buf *own = &out->own;
    own->len = 0;
    lx->record = own;
    lx->record_from = start;
    int rc = lx_skip_value(lx);
    lx_flush_record(lx);
    int complete = lx->record != NULL;
    lx->record = NULL;
    *has = rc == 0 && complete && own->len > 0 && own->len <= ARG_TEXT_MAX;
    out->data = own->data;
    out->len = own->len;
    return rc;
}

/* ---- [memory] instant events ------------------------------------------ */

/* A whole number into *out, left as it was unless the value is one. */
static int read_whole(lexer *lx, int64_t *out)
{
    number v;
    int numeric;
    if (read_numeric(lx, &v, &numeric, 0))
        return -1;
    if (numeric && v.integer_ok)
        *out = v.integer;
    return 0;
}

/* Device Type and Device Id are int32 fields. */
static int read_memory_number(lexer *lx, void *out)
{
    int64_t v = INT64_MIN;
    if (read_whole(lx, &v))
        return -1;
    if (v >= INT32_MIN && v <= INT32_MAX)
        *(int32_t *)out = (int32_t)v;
    return 0;
}

/* pid, tid, Input Dims, Input type, Concrete Inputs (model/cpu_context.h) */
#define CONTEXT_FIELDS 5

static int append_text(hta_buf *b, const char *s, size_t len, int present)
{
    return hta_buf_append(b, present ? s : "", present ? len : 0);
}

/* memcmp for texts that may be absent (NULL, length 0). */
static inline int same_bytes(const char *a, const char *b, size_t n)
{
    return n == 0 || memcmp(a, b, n) == 0;
}

/* Whether the event has no arguments in its context and the same pid and
 * tid text as the last such event. */
static int repeats_last_thread(const lexer *lx, const event_fields *f)
{
    const hta_buf *last = &lx->last_context_key;
    size_t pid = f->has_pid ? lx->pid.len : 0, tid = f->has_tid ? lx->tid.len : 0;
    return !f->has_input_dims && !f->has_input_type && !f->has_concrete_inputs && last->data &&
           last->len == pid + tid + CONTEXT_FIELDS - 1 && same_bytes(last->data, lx->pid.data, pid) &&
           last->data[pid] == HTA_CONTEXT_SEPARATOR &&
           same_bytes(last->data + pid + 1, lx->tid.data, tid);
}

static size_t text_len(const lx_text *t, int present)
{
    return present ? t->len : 0;
}

/* Whether key is the context key of the event's texts (compared piece by
 * piece where they lie, without building the event's key). */
static int is_key_of(const hta_buf *key, const lexer *lx, const event_fields *f, int concrete)
{
    const lx_text *piece[CONTEXT_FIELDS] = {&lx->pid, &lx->tid, &lx->input_dims, &lx->input_type,
                                            &lx->concrete_inputs};
    const int present[CONTEXT_FIELDS] = {f->has_pid, f->has_tid, f->has_input_dims,
                                         f->has_input_type, concrete};
    size_t total = CONTEXT_FIELDS - 1;
    for (int k = 0; k < CONTEXT_FIELDS; k++)
        total += text_len(piece[k], present[k]);
    if (!key->data || key->len != total)
        return 0;
    const char *at = key->data;
    for (int k = 0; k < CONTEXT_FIELDS; k++) {
        size_t n = text_len(piece[k], present[k]);
        if (!same_bytes(at, piece[k]->data, n) ||
            (k < CONTEXT_FIELDS - 1 && at[n] != HTA_CONTEXT_SEPARATOR))
            return 0;
        at += n + 1;
    }
    return 1;
}

/* The last context of the ops of one name, with its key, and whether
 * ops of that name keep their Concrete Inputs. */
typedef struct op_context {
    hta_buf key;
    uint32_t id;
    int keeps_concrete;        /* 0 not known yet, 1 no, 2 yes */
} op_context;

/* Concrete Inputs differ from call to call for many ops (indexes,
 * sizes): kept for all they would multiply the contexts.  Only the ops
 * whose FLOPs depend on them keep them (model/op_flops.h). */
static int keeps_concrete_inputs(op_context *c, const hta_trace *t, uint32_t name)
{
    if (!c->keeps_concrete)
        c->keeps_concrete = hta_op_needs_concrete_inputs(hta_strtab_get(&t->names, name)) ? 2 : 1;
    return c->keeps_concrete == 2;
}

/* The op_context of name id, zeroed when new; NULL when out of memory. */
static op_context *op_context_of(lexer *lx, uint32_t name)
{
    hta_buf *all = &lx->op_contexts;
    size_t need = ((size_t)name + 1) * sizeof(op_context);
    if (need > all->len) {
        if (hta_buf_reserve(all, need - all->len))
            return NULL;
        memset(all->data + all->len, 0, need - all->len);
        all->len = need;
    }
    return (op_context *)all->data + name;
}

/* The context id of a CPU event (model/trace.h): its key interned.  Most
 * CPU events without arguments (runtime calls) follow one of the same
 * thread, whose id is reused without building the key; an op usually has
 * the arguments its name had last time, and a comparison with that key
 * is much cheaper than hashing it.  UINT32_MAX when out of memory. */
static uint32_t cpu_context_of(lexer *lx, hta_trace *t, uint32_t name, const event_fields *f)
{
    if (repeats_last_thread(lx, f))
        return lx->last_context;
    op_context *last = NULL;
    int concrete = 0;          /* the Concrete Inputs are kept */
    if (f->has_input_dims || f->has_input_type || f->has_concrete_inputs) {
        if (!(last = op_context_of(lx, name)))
            return UINT32_MAX;
        concrete = f->has_concrete_inputs && keeps_concrete_inputs(last, t, name);
        if (is_key_of(&last->key, lx, f, concrete))
            return last->id;
    }
    hta_buf *key = &lx->context_key;
    key->len = 0;
    const char sep = HTA_CONTEXT_SEPARATOR;
    if (append_text(key, lx->pid.data, lx->pid.len, f->has_pid) || hta_buf_putc(key, sep) ||
        append_text(key, lx->tid.data, lx->tid.len, f->has_tid) || hta_buf_putc(key, sep) ||
        append_text(key, lx->input_dims.data, lx->input_dims.len, f->has_input_dims) ||
        hta_buf_putc(key, sep) ||
        append_text(key, lx->input_type.data, lx->input_type.len, f->has_input_type) ||
        hta_buf_putc(key, sep) ||
        append_text(key, lx->concrete_inputs.data, lx->concrete_inputs.len, concrete))
        return UINT32_MAX;
    if (!last) {
        uint32_t id = hta_strtab_intern(&t->cpu_contexts, key->data, key->len);
        hta_buf swap = lx->last_context_key;
        lx->last_context_key = *key;
        *key = swap;
        lx->last_context = id;
        return id;
    }
    last->id = hta_strtab_intern(&t->cpu_contexts, key->data, key->len);
    hta_buf swap = last->key;
    last->key = *key;
    *key = swap;
    return last->id;
}

/* Where a CPU event keeps its External id: in its correlation field when
 * it has no correlation and the id fits. */
static int keeps_external_id(const event_fields *f, int64_t external_id)
{
    return f->correlation == HTA_NO_CORRELATION && external_id >= 0 &&
           external_id <= INT32_MAX;
}

typedef enum args_key {
    ARGS_OTHER, ARGS_STREAM, ARGS_CORRELATION, ARGS_BYTES, ARGS_BANDWIDTH, ARGS_EXTERNAL_ID,
    ARGS_IN_NELEMS, ARGS_OUT_NELEMS, ARGS_GROUP_SIZE, ARGS_SEQ, ARGS_PEER, ARGS_COMM_STRING,
    ARGS_INPUT_DIMS, ARGS_INPUT_TYPE, ARGS_CONCRETE_INPUTS, ARGS_MEMORY_BYTES, ARGS_DEVICE_ID,
    ARGS_DEVICE_TYPE,
    ARGS_TOTAL_RESERVED, ARGS_TOTAL_ALLOCATED,
    ARGS_RANGE_COUNTER         /* any member of a cuda_profiler_range event */
} args_key;

/* The args member lx->key names: its length leaves one or two candidates;
 * *string is the comm_text index of an ARGS_COMM_STRING. */
static inline args_key args_key_of(const lexer *lx, int *string)
{
    switch (lx->key_len) {
    case 3: return key_is(lx, "Seq") ? ARGS_SEQ : ARGS_OTHER;
    case 5:
        if (key_is(lx, "bytes"))
            return ARGS_BYTES;
        if (key_is(lx, "Bytes"))
            return ARGS_MEMORY_BYTES;
        *string = COMM_DTYPE;
        return key_is(lx, "dtype") ? ARGS_COMM_STRING : ARGS_OTHER;
    case 6: return key_is(lx, "stream") ? ARGS_STREAM : ARGS_OTHER;
    case 8: return key_is(lx, "Dst Rank") || key_is(lx, "Src Rank") ? ARGS_PEER : ARGS_OTHER;
    case 9: return key_is(lx, "Device Id") ? ARGS_DEVICE_ID : ARGS_OTHER;
    case 10:
        return key_is(lx, "Group size")   ? ARGS_GROUP_SIZE
               : key_is(lx, "Input Dims") ? ARGS_INPUT_DIMS
               : key_is(lx, "Input type") ? ARGS_INPUT_TYPE
                                          : ARGS_OTHER;
    case 11:
        return key_is(lx, "correlation")   ? ARGS_CORRELATION
               : key_is(lx, "External id") ? ARGS_EXTERNAL_ID
               : key_is(lx, "Device Type") ? ARGS_DEVICE_TYPE
                                           : ARGS_OTHER;
    case 13:
        if (key_is(lx, "In msg nelems"))
            return ARGS_IN_NELEMS;
        *string = COMM_IN_SPLIT;
        return key_is(lx, "In split size") ? ARGS_COMM_STRING : ARGS_OTHER;
    case 14:
        if (key_is(lx, "Out msg nelems"))
            return ARGS_OUT_NELEMS;
        if (key_is(lx, "Total Reserved"))
            return ARGS_TOTAL_RESERVED;
        *string = COMM_OUT_SPLIT;
        return key_is(lx, "Out split size") ? ARGS_COMM_STRING : ARGS_OTHER;
    case 15:
        if (key_is(lx, "Total Allocated"))
            return ARGS_TOTAL_ALLOCATED;
        if (key_is(lx, "Concrete Inputs"))
            return ARGS_CONCRETE_INPUTS;
        *string = COMM_COLLECTIVE;
        return key_is(lx, "Collective name") ? ARGS_COMM_STRING : ARGS_OTHER;
    case 18: *string = COMM_PG_NAME; return key_is(lx, "Process Group Name") ? ARGS_COMM_STRING : ARGS_OTHER;
    case 19: *string = COMM_PG_RANKS; return key_is(lx, "Process Group Ranks") ? ARGS_COMM_STRING : ARGS_OTHER;
    case 23: return key_is(lx, "memory bandwidth (GB/s)") ? ARGS_BANDWIDTH : ARGS_OTHER;
    case 25: *string = COMM_PG_DESC; return key_is(lx, "Process Group Description") ? ARGS_COMM_STRING : ARGS_OTHER;
    default: return ARGS_OTHER;
    }
}

/* Number k of the collective metadata, when an integer. */
static int read_comm_number(lexer *lx, int k)
{
    number v;
    int numeric;
    if (read_numeric(lx, &v, &numeric, 0))
        return -1;
    if (numeric && v.integer_ok) {
        lx->comm.number[k] = v.integer;
        lx->comm.numbers |= 1u << k;
    }
    return 0;
}

/* An id (External id: on most events, needed on few) as number k: a run
 * of digits in the buffer costs no more than skipping it; any other form
 * goes the general way. */
static inline int read_id_field(lexer *lx, int k)
{
    lx_peek_token(lx);
    const char *p = lx->p, *q = p;
    if (lx->end - p > NUMBER_TEXT_MAX) {
        uint64_t v = 0;
        while (is_digit(*q) && q - p < 18)
            v = v * 10 + (uint64_t)(*q++ - '0');
        if (q > p && !is_number_char(*q) && (*p != '0' || q - p == 1)) {
            lx->comm.number[k] = (int64_t)v;
            lx->comm.numbers |= 1u << k;
            lx->p = q;
            return 0;
        }
    }
    return read_comm_number(lx, k);
}

/* A string of the collective metadata, copied: it must outlive refills
 * until the event is stored, and only communication events carry one. */
static int read_comm_string(lexer *lx, int k)
{
    if (lx_peek_token(lx) != '"')
        return lx_skip_value(lx);
    lx->comm.strings |= 1u << k;
    return lx_read_string(lx, &lx->comm_text[k]);
}

/* A CUPTI range-profiler event: every numeric arg is a counter. */
static int is_profiler_range(const lexer *lx, const event_fields *f)
{
    static const char CAT[] = "cuda_profiler_range";
    return f->has_cat && lx->cat.len == sizeof CAT - 1 && memcmp(lx->cat.data, CAT, sizeof CAT - 1) == 0;
}

static int read_range_counter(lexer *lx, hta_trace *t)
{
    number v;
    int numeric;
    /* The key is in the lexer's buffer until the value is read. */
    char key[256];
    size_t len = lx->key_len < sizeof key ? lx->key_len : sizeof key - 1;
    memcpy(key, lx->key, len);
    if (read_numeric(lx, &v, &numeric, 1))
        return -1;
    if (numeric && hta_trace_push_range_counter(t, key, len, v.value))
        return lx_error(lx, "out of memory");
    return 0;
}

static int read_event_args(lexer *lx, hta_trace *t, event_fields *f)
{
    if (lx_peek_token(lx) != '{')
        return lx_skip_value(lx);
    int more = lx_open(lx, '{', '}', "expected '{'");
    int range = is_profiler_range(lx, f);
    while (more > 0) {
        if (lx_read_key(lx))
            return -1;
        number v;
        int numeric, string = 0, rc = 0;
        switch (range ? ARGS_RANGE_COUNTER : args_key_of(lx, &string)) {
        case ARGS_RANGE_COUNTER: rc = read_range_counter(lx, t); break;
        case ARGS_STREAM:
            if (read_numeric(lx, &v, &numeric, 0))
                return -1;
            if (numeric) {
                f->has_stream = 1;
                f->stream = v.integer_ok ? v.integer : -1;
            }
            break;
        case ARGS_CORRELATION:
            if (read_numeric(lx, &v, &numeric, 0))
                return -1;
            if (numeric && v.integer_ok)
                f->correlation = v.integer;
            break;
        case ARGS_BYTES:
            if (read_numeric(lx, &v, &numeric, 0))
                return -1;
            if (numeric && v.integer_ok) {
                f->bytes = v.integer;
                f->has_copy = 1;
            }
            break;
        case ARGS_BANDWIDTH:
            if (read_numeric(lx, &v, &numeric, 1))
                return -1;
            if (numeric) {
                f->bandwidth_gbps = v.value;
                f->has_copy = 1;
            }
            break;
        case ARGS_EXTERNAL_ID: rc = read_id_field(lx, COMM_EXTERNAL_ID); break;
        case ARGS_IN_NELEMS: rc = read_comm_number(lx, COMM_IN_NELEMS); break;
        case ARGS_OUT_NELEMS: rc = read_comm_number(lx, COMM_OUT_NELEMS); break;
        case ARGS_GROUP_SIZE: rc = read_comm_number(lx, COMM_GROUP_SIZE); break;
        case ARGS_SEQ: rc = read_comm_number(lx, COMM_SEQ); break;
        case ARGS_PEER: rc = read_comm_number(lx, COMM_PEER); break;
        case ARGS_COMM_STRING: rc = read_comm_string(lx, string); break;
        case ARGS_INPUT_DIMS: rc = read_json_text(lx, &lx->input_dims, &f->has_input_dims); break;
        case ARGS_INPUT_TYPE: rc = read_json_text(lx, &lx->input_type, &f->has_input_type); break;
        case ARGS_CONCRETE_INPUTS:
            rc = read_json_text(lx, &lx->concrete_inputs, &f->has_concrete_inputs);
            break;
        case ARGS_MEMORY_BYTES: rc = read_whole(lx, &f->memory.bytes); break;
        case ARGS_DEVICE_ID: rc = read_memory_number(lx, &f->memory.device); break;
        case ARGS_DEVICE_TYPE: rc = read_memory_number(lx, &f->memory.device_type); break;
        case ARGS_TOTAL_RESERVED: rc = read_whole(lx, &f->memory.total_reserved); break;
        case ARGS_TOTAL_ALLOCATED: rc = read_whole(lx, &f->memory.total_allocated); break;
        default:
            if (key_is(lx, "wait_on_stream") || key_is(lx, "wait_on_cuda_event_record_corr_id")) {
                int64_t *to = lx->key_len == 14 ? &f->wait_on_stream : &f->wait_record_correlation;
                rc = read_numeric(lx, &v, &numeric, 0);
                if (rc == 0 && numeric && v.integer_ok)
                    *to = v.integer;
            } else {
                rc = lx_skip_value(lx);
            }
            break;
        }
        if (rc)
            return -1;
        more = lx_next_member(lx, '}');
    }
    return more;
}

static int read_time_field(lexer *lx, int64_t *out, int *has, int *fractional)
{
    number v;
    int numeric;
    if (read_numeric(lx, &v, &numeric, 0))
        return -1;
    if (numeric && v.thousandths_ok) {
        *out = v.thousandths;
        *has = 1;
        *fractional = v.fractional;
    }
    return 0;
}

/* Reads the string whose opening quote is current into t. */
static int lx_read_text(lexer *lx, lx_text *t)
{
    const char *q = lx_plain_string_end(lx);
    if (q) {
        t->data = lx->p + 1;
        t->len = (size_t)(q - t->data);
        t->borrowed = 1;
        lx->p = q + 1;
        return 0;
    }
    t->borrowed = 0;
    if (lx_read_string(lx, &t->own))
        return -1;
    t->data = t->own.data;
    t->len = t->own.len;
    return 0;
}

static int read_string_field(lexer *lx, lx_text *out, int *has)
{
    if (lx_peek_token(lx) != '"')
        return lx_skip_value(lx);
    *has = 1;
    return lx_read_text(lx, out);
}

/* The kernel type of a GPU event's name, classified once per name: kernel
 * names are long and classifying scans them for several substrings. */
static int kernel_type_of(lexer *lx, const hta_trace *t, uint32_t name)
{
    hta_buf *known = &lx->kernel_types;
    if (name >= known->len) {
        size_t more = name + 1 - known->len;
        if (hta_buf_reserve(known, more))
            return -1;
        memset(known->data + known->len, 0, more);
        known->len += more;
    }
    if (!known->data[name])
        known->data[name] = (char)(1 + hta_classify_kernel(hta_strtab_get(&t->names, name)));
    return known->data[name] - 1;
}

/* Correlations that fit the event's 32 bits (all that Kineto writes in
 * practice) stay there; any other goes to the event's extra. */
static int is_narrow_correlation(int64_t correlation)
{
    return correlation >= HTA_NO_CORRELATION && correlation <= INT32_MAX;
}

/* The interned id of comm string k of the event, or HTA_COMM_NO_STRING;
 * *failed when out of memory. */
static uint32_t comm_string_id(lexer *lx, hta_trace *t, int k, int *failed)
{
    if (!(lx->comm.strings & 1u << k))
        return HTA_COMM_NO_STRING;
    const hta_buf *b = &lx->comm_text[k];
    uint32_t id = hta_strtab_intern(&t->comm.strings, b->len ? b->data : "", b->len);
    *failed |= id == UINT32_MAX;
    return id;
}

static int64_t comm_number(const lexer *lx, int k)
{
    return lx->comm.numbers & 1u << k ? lx->comm.number[k] : -1;
}

/* The last stored event's entry in the collective metadata: every
 * communication kernel has one (its External id joins it to its launching
 * op when it carries no metadata), a CPU op only when it names a
 * collective (record_param_comms). */
static int store_comm_meta(lexer *lx, hta_trace *t, const hta_event *e)
{
    int gpu_comm = hta_event_is_gpu(e) && e->kernel_type == HTA_KT_COMMUNICATION;
    if (!gpu_comm && !(lx->comm.strings & 1u << COMM_COLLECTIVE))
        return 0;
    int failed = 0;
    hta_comm_meta m = {
        .event = t->n_events - 1, .external_id = comm_number(lx, COMM_EXTERNAL_ID),
        .in_nelems = comm_number(lx, COMM_IN_NELEMS),
        .out_nelems = comm_number(lx, COMM_OUT_NELEMS),
        .group_size = comm_number(lx, COMM_GROUP_SIZE), .seq = comm_number(lx, COMM_SEQ),
        .peer = comm_number(lx, COMM_PEER),
        .collective = comm_string_id(lx, t, COMM_COLLECTIVE, &failed),
        .dtype = comm_string_id(lx, t, COMM_DTYPE, &failed),
        .pg_name = comm_string_id(lx, t, COMM_PG_NAME, &failed),
        .pg_desc = comm_string_id(lx, t, COMM_PG_DESC, &failed),
        .pg_ranks = comm_string_id(lx, t, COMM_PG_RANKS, &failed),
        .in_split = comm_string_id(lx, t, COMM_IN_SPLIT, &failed),
        .out_split = comm_string_id(lx, t, COMM_OUT_SPLIT, &failed)};
    return failed || hta_comm_set_push(&t->comm, &m) ? lx_error(lx, "out of memory") : 0;
}

static int store_event(lexer *lx, hta_trace *t, const event_fields *f)
{
    hta_event *e = hta_trace_push_event(t);
    uint32_t name = hta_strtab_intern(&t->names, lx->name.data, lx->name.len);
    uint32_t cat = hta_strtab_intern(&t->categories, lx->cat.data, lx->cat.len);
    if (!e || name == UINT32_MAX || cat > UINT16_MAX)
        return lx_error(lx, "out of memory");
    e->ts_ns = f->ts_ns;
    e->dur_ns = f->dur_ns;
    e->name = name;
    e->cat = (uint16_t)cat;
    if (f->has_stream) {
        e->flags |= HTA_EVENT_GPU;
        e->stream = (uint32_t)f->stream;
        int kernel_type = kernel_type_of(lx, t, name);
        if (kernel_type < 0)
            return lx_error(lx, "out of memory");
        e->kernel_type = (uint8_t)kernel_type;
    } else {
        uint32_t context = cpu_context_of(lx, t, name, f);
        if (context == UINT32_MAX)
            return lx_error(lx, "out of memory");
        e->stream = context;
    }
    int narrow = is_narrow_correlation(f->correlation);
    e->correlation = narrow ? (int32_t)f->correlation : HTA_NO_CORRELATION;
    int64_t external_id = comm_number(lx, COMM_EXTERNAL_ID);
    if (!f->has_stream && keeps_external_id(f, external_id)) {
        e->flags |= HTA_EVENT_EXTERNAL_ID;
        e->correlation = (int32_t)external_id;
    }
    /* A sync waiting on a recorded event is what the critical path's
     * event-sync edges need; one waiting on nothing (-1) is not kept. */
    int has_wait = f->wait_record_correlation >= 0;
    uint8_t extra_flags = (uint8_t)((f->has_copy ? HTA_EVENT_HAS_COPY : 0) |
                                    (narrow ? 0 : HTA_EVENT_WIDE_CORRELATION) |
                                    (has_wait ? HTA_EVENT_HAS_WAIT : 0));
    if (extra_flags &&
        hta_trace_push_extra(t, (hta_event_extra){.correlation = f->correlation,
                                                  .bandwidth_gbps = f->bandwidth_gbps,
                                                  .bytes = f->bytes,
                                                  .wait_on_stream = f->wait_on_stream,
                                                  .wait_record_correlation =
                                                      f->wait_record_correlation},
                                 extra_flags))
        return lx_error(lx, "out of memory");
    return store_comm_meta(lx, t, e);
}

/* The rule for complete events (docs/robustness.md): one is analysed when
 * it has cat and numeric ts and dur within plausible bounds; any other is
 * skipped and counted, never an error, so one odd event does not cost the
 * rank.  The bounds keep every difference and sum of event times that the
 * analyses form far inside int64 nanoseconds. */
#define MAX_TS_NS 4000000000000000000LL /* 4e15 us: the year 2096 */
#define MAX_DUR_NS 1000000000000000LL   /* 1e12 us: 11.6 days */

static int is_analysable(const event_fields *f)
{
    return f->has_cat && f->has_ts && f->has_dur && f->ts_ns >= 0 && f->ts_ns <= MAX_TS_NS &&
           f->dur_ns >= 0 && f->dur_ns <= MAX_DUR_NS;
}

static int is_memory_event(const lexer *lx, const event_fields *f)
{
    return lx->ph.len == 1 && lx->ph.data[0] == 'i' && f->has_name && lx->name.len == 8 &&
           memcmp(lx->name.data, "[memory]", 8) == 0;
}

/* Keeps a [memory] event with a usable time (docs/robustness.md's bounds). */
static int store_memory_sample(lexer *lx, hta_trace *t, event_fields *f)
{
    if (!f->has_ts || f->ts_ns < 0 || f->ts_ns > MAX_TS_NS)
        return 0;
    f->memory.ts_ns = f->ts_ns;
    return hta_memory_samples_push(&t->memory, f->memory) ? lx_error(lx, "out of memory") : 0;
}

typedef enum event_key {
    EVENT_OTHER, EVENT_PH, EVENT_CAT, EVENT_NAME, EVENT_TS, EVENT_DUR, EVENT_ARGS,
    EVENT_PID, EVENT_TID
} event_key;

/* The event member lx->key names: its length leaves one or two candidates. */
static inline event_key event_key_of(const lexer *lx)
{
    switch (lx->key_len) {
    case 2: return key_is(lx, "ph") ? EVENT_PH : key_is(lx, "ts") ? EVENT_TS : EVENT_OTHER;
    case 3: return key_is(lx, "cat")   ? EVENT_CAT
                   : key_is(lx, "dur") ? EVENT_DUR
                   : key_is(lx, "pid") ? EVENT_PID
                   : key_is(lx, "tid") ? EVENT_TID
                                       : EVENT_OTHER;
    case 4: return key_is(lx, "name") ? EVENT_NAME : key_is(lx, "args") ? EVENT_ARGS : EVENT_OTHER;
    default: return EVENT_OTHER;
    }
}

/* Decodes one event object and keeps it when it is a complete event. */
static int read_event(lexer *lx, hta_trace *t)
{
    if (lx_peek_token(lx) != '{')
        return lx_error_eof(lx, "expected an event object");
    event_fields f = {.correlation = HTA_NO_CORRELATION, .bytes = -1,
                      .wait_on_stream = -1, .wait_record_correlation = -1,
                      .bandwidth_gbps = NAN,
                      .memory = {.total_allocated = -1, .total_reserved = -1, .device = -1,
                                 .device_type = -1}};
    lx->comm.strings = lx->comm.numbers = 0;
    size_t first_counter = t->n_range_counters;
    int has_ph = 0;
    int more = lx_open(lx, '{', '}', "expected '{'");
    while (more > 0) {
        if (lx_read_key(lx))
            return -1;
        int rc;
        switch (event_key_of(lx)) {
        case EVENT_PH: rc = read_string_field(lx, &lx->ph, &has_ph); break;
        case EVENT_CAT: rc = read_string_field(lx, &lx->cat, &f.has_cat); break;
        case EVENT_NAME: rc = read_string_field(lx, &lx->name, &f.has_name); break;
        case EVENT_TS: rc = read_time_field(lx, &f.ts_ns, &f.has_ts, &f.fractional_ts); break;
        case EVENT_DUR: rc = read_time_field(lx, &f.dur_ns, &f.has_dur, &f.fractional_dur); break;
        case EVENT_ARGS: rc = read_event_args(lx, t, &f); break;
        case EVENT_PID: rc = read_id_text(lx, &lx->pid, &f.has_pid); break;
        case EVENT_TID: rc = read_id_text(lx, &lx->tid, &f.has_tid); break;
        default: rc = lx_skip_value(lx); break;
        }
        if (rc)
            return -1;
        more = lx_next_member(lx, '}');
    }
    if (more < 0)
        return -1;
    int complete = has_ph && lx->ph.len == 1 && lx->ph.data[0] == 'X';
    if (!complete) {
        t->n_range_counters = first_counter; /* an event not kept keeps no counters */
        return has_ph && is_memory_event(lx, &f) ? store_memory_sample(lx, t, &f) : 0;
    }
    if (!is_analysable(&f)) {
        t->skipped_events++;
        t->n_range_counters = first_counter;
        return 0;
    }
    t->fractional_ts |= f.fractional_ts;
    if (!f.has_name)
        lx->name = (lx_text){.data = "", .own = lx->name.own};
    if (store_event(lx, t, &f))
        return -1;
    if (is_profiler_range(lx, &f) && hta_trace_push_range(t, first_counter))
        return lx_error(lx, "out of memory");
    return 0;
}

/* 1 when the next event starts at or past lx->stop_at: the caller then
 * returns without reading it and every level above unwinds.  The serial
 * parse never stops and pays one comparison. */
static inline int lx_stops_here(lexer *lx)
{
    if (lx->stop_at == NEVER_STOP)
        return 0;
    lx_peek_token(lx);
    if (lx_offset(lx) < lx->stop_at)
        return 0;
    lx->stopped = 1;
    return 1;
}

static int read_event_array(lexer *lx, hta_trace *t)
{
    int more = lx_open(lx, '[', ']', "traceEvents is not an array");
    while (more > 0) {
        if (lx_stops_here(lx))
            return 0;
        if (read_event(lx, t))
            return -1;
        more = lx_next_member(lx, ']');
    }
    lx->stop_at = NEVER_STOP;  /* only the first event array is split */
    return more;
}

/* ---- top level -------------------------------------------------------- */

/* A member that is a whole number in [0, 2^63), else -1 (absent, negative,
 * fractional or too large for int64: converting those is undefined). */
static int64_t whole_member(const cJSON *object, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
    if (!cJSON_IsNumber(item))
        return -1;
    double v = item->valuedouble;
    return v >= 0 && v < 9223372036854775808.0 && v == floor(v) ? (int64_t)v : -1;
}

/* A string member interned in the trace's comm strings, else absent. */
static uint32_t pg_string(hta_trace *t, const cJSON *object, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
    const char *s = cJSON_IsString(item) ? item->valuestring : NULL;
    return s ? hta_strtab_intern(&t->comm.strings, s, strlen(s)) : HTA_COMM_NO_STRING;
}

/* distributedInfo.pg_config: each group's name, description and ranks
 * (written back as "[0, 1]", the form the kernels' args use).  Best
 * effort, like the rest of distributedInfo: a malformed entry is left out. */
static void read_pg_config(hta_trace *t, const cJSON *groups)
{
    const cJSON *g, *list = cJSON_IsArray(groups) ? groups : NULL;
    cJSON_ArrayForEach(g, list)
    {
        const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(g, "ranks"), *r;
        hta_buf text = {0};
        int ok = cJSON_IsArray(ranks) && hta_buf_putc(&text, '[') == 0;
        const cJSON *members = ok ? ranks : NULL;
        cJSON_ArrayForEach(r, members)
        {
            /* A rank outside int64 (1e999 reads as inf) cannot be converted:
             * such a group's ranks are unusable, like a non-number's. */
            ok = ok && cJSON_IsNumber(r) && fabs(r->valuedouble) < 0x1p62;
            if (!ok)
                break;
            char num[32];
            int n = snprintf(num, sizeof num, "%s%lld", r == ranks->child ? "" : ", ",
                             (long long)r->valuedouble);
            ok = hta_buf_append(&text, num, (size_t)n) == 0;
        }
        ok = ok && hta_buf_putc(&text, ']') == 0;
        hta_pg_config pg = {pg_string(t, g, "pg_name"), pg_string(t, g, "pg_desc"),
                            ok ? hta_strtab_intern(&t->comm.strings, text.data, text.len)
                               : HTA_COMM_NO_STRING};
        if (ok && pg.name != HTA_COMM_NO_STRING && pg.ranks != UINT32_MAX)
            (void)hta_comm_set_push_group(&t->comm, &pg);
        hta_buf_free(&text);
    }
}

static void apply_distributed_info(hta_trace *t, const hta_buf *json)
{
    cJSON *root = cJSON_ParseWithLength(json->data, json->len);
    if (!root)
        return;
    int64_t rank = whole_member(root, "rank"), world_size = whole_member(root, "world_size");
    if (rank >= 0)
        t->rank = rank;
    if (world_size >= 0)
        t->world_size = world_size;
    read_pg_config(t, cJSON_GetObjectItemCaseSensitive(root, "pg_config"));
    cJSON_Delete(root);
}

/* deviceProperties[0].name: the GPU the peaks are looked up by. */
static void apply_device_properties(hta_trace *t, const hta_buf *json)
{
    cJSON *root = cJSON_ParseWithLength(json->data, json->len);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(root, 0), "name");
    if (cJSON_IsString(name))
        snprintf(t->device_name, sizeof t->device_name, "%s", name->valuestring);
    cJSON_Delete(root);
}

/* Reads a top-level member whole and hands its JSON to apply. */
static int read_recorded_member(lexer *lx, hta_trace *t,
                                void (*apply)(hta_trace *, const hta_buf *))
{
    hta_buf json = {0};
    lx_peek_token(lx);
    lx->record = &json;
    lx->record_from = lx->p;
    int rc = lx_skip_value(lx);
    lx_flush_record(lx);
    int complete = lx->record != NULL;
    lx->record = NULL;
    if (rc == 0 && complete && json.data)
        apply(t, &json);
    hta_buf_free(&json);
    return rc;
}

/* The members of the top-level object from the current one on; `more` is
 * what lx_open or lx_next_member said about it. */
static int read_top_members(lexer *lx, hta_trace *t, int more, int saw_events)
{
    while (more > 0) {
        if (lx_read_key(lx))
            return -1;
        int rc;
        if (key_is(lx, "traceEvents")) {
            if (lx_peek_token(lx) != '[')
                return lx_error_eof(lx, "traceEvents is not an array");
            saw_events = 1;
            rc = read_event_array(lx, t);
        } else if (key_is(lx, "distributedInfo")) {
            rc = read_recorded_member(lx, t, apply_distributed_info);
        } else if (key_is(lx, "deviceProperties")) {
            rc = read_recorded_member(lx, t, apply_device_properties);
        } else {
            rc = lx_skip_value(lx);
        }
        if (rc)
            return -1;
        if (lx->stopped)
            return 0;
        more = lx_next_member(lx, '}');
    }
    if (more < 0)
        return -1;
    if (!saw_events)
        return lx_error(lx, "no traceEvents array in the top-level object");
    return 0;
}

static int read_top_object(lexer *lx, hta_trace *t)
{
    return read_top_members(lx, t, lx_open(lx, '{', '}', "expected '{'"), 0);
}

static int read_document_end(lexer *lx)
{
    if (lx_peek_token(lx) != LX_EOF)
        return lx_error(lx, "unexpected data after the end of the JSON document");
    return lx->failed ? -1 : 0;
}

static int read_document(lexer *lx, hta_trace *t)
{
    int c = lx_peek_token(lx);
    int rc;
    if (c == LX_EOF)
        return lx->failed ? -1 : lx_error(lx, "empty file");
    lx->bare_array = c == '[';
    if (c == '{')
        rc = read_top_object(lx, t);
    else if (c == '[')
        rc = read_event_array(lx, t);
    else
        return lx_error(lx, "not a JSON trace (expected '{' or '[')");
    if (rc)
        return -1;
    if (lx->stopped)
        return 0;
    return read_document_end(lx);
}

/* Moves to the next `}` `,` `{` (any whitespace between) whose '{' lies at
 * or past `from`: 1 there, 0 when the data ends first.  The match may be
 * inside a string; the caller's validation catches that. */
static int lx_seek_event_start(lexer *lx, uint64_t from)
{
    for (;;) {
        const char *close = memchr(lx->p, '}', (size_t)(lx->end - lx->p));
        if (!close) {
            lx->p = lx->end;
            if (lx_refill(lx) == LX_EOF)
                return lx->failed ? -1 : 0;
            continue;
        }
        lx->p = close + 1;
        if (lx_peek_token(lx) != ',')
            continue;
        lx->p++;
        if (lx_peek_token(lx) == '{' && lx_offset(lx) >= from)
            return 1;
    }
}

/* Events from the boundary at or past part->from until one starts at or
 * past part->stop_at or the array closes. */
static int read_span(lexer *lx, hta_trace *t, hta_part *part)
{
    int found = lx_seek_event_start(lx, part->from);
    if (found <= 0) {
        part->end = HTA_PART_NO_BOUNDARY;
        return found;
    }
    part->first_event = lx_offset(lx);
    int more = 1;
    while (more > 0) {
        if (lx_stops_here(lx))
            break;
        if (read_event(lx, t))
            return -1;
        more = lx_next_member(lx, ']');
    }
    if (more < 0)
        return -1;
    part->end = more ? HTA_PART_STOPPED : HTA_PART_ARRAY_END;
    part->end_offset = lx_offset(lx);
    return 0;
}

/* The document after the event array's ']', as read_document would go on. */
static int read_tail(lexer *lx, hta_trace *t, const hta_part *part)
{
    if (!part->bare_array && read_top_members(lx, t, lx_next_member(lx, '}'), 1))
        return -1;
    return read_document_end(lx);
}

static int read_part(lexer *lx, hta_trace *t, hta_part *part)
{
    switch (part->kind) {
    case HTA_PART_HEAD: {
        int rc = read_document(lx, t);
        part->bare_array = lx->bare_array;
        part->end = lx->stopped ? HTA_PART_STOPPED : HTA_PART_DOCUMENT_END;
        part->end_offset = lx_offset(lx);
        return rc;
    }
    case HTA_PART_SPAN:
        return read_span(lx, t, part);
    case HTA_PART_TAIL:
        return read_tail(lx, t, part);
    }
    return lx_error(lx, "unknown part");
}

static void lexer_free(lexer *lx)
{
    free(lx->buf);
    hta_buf_free(&lx->skip_stack);
    hta_buf_free(&lx->long_key);
    hta_buf_free(&lx->name.own);
    hta_buf_free(&lx->cat.own);
    hta_buf_free(&lx->ph.own);
    hta_buf_free(&lx->pid.own);
    hta_buf_free(&lx->tid.own);
    hta_buf_free(&lx->input_dims.own);
    hta_buf_free(&lx->input_type.own);
    hta_buf_free(&lx->concrete_inputs.own);
    hta_buf_free(&lx->context_key);
    hta_buf_free(&lx->last_context_key);
    for (size_t i = 0; i < lx->op_contexts.len / sizeof(op_context); i++)
        hta_buf_free(&((op_context *)lx->op_contexts.data)[i].key);
    hta_buf_free(&lx->op_contexts);
    hta_buf_free(&lx->kernel_types);
    for (int k = 0; k < COMM_N_STRINGS; k++)
        hta_buf_free(&lx->comm_text[k]);
}

/* Real traces have a few hundred bytes of JSON per kept event, so this
 * guess from the input's size reserves enough event array for the usual
 * trace without a copy or a remap, and room for whole huge pages in a
 * mid-sized trace (a smaller reservation leaves its growth to page
 * faults).  It costs address space of a third of the JSON's size; only
 * what is filled becomes resident. */
#define JSON_BYTES_PER_EVENT_GUESS 128

/* Where a parse reads from: pull fills the buffer from ctx; the stream
 * starts at byte `base` of the input and is expected to yield about
 * expected_bytes (0 = unknown). */
typedef struct lx_input {
    lx_pull_fn pull;
    void *ctx;
    uint64_t base;
    uint64_t expected_bytes;
} lx_input;

/* Parses the stream: the whole document when part is NULL, else that part.
 * The deadline is absolute so that a serial retry after a failed split
 * keeps the caller's budget. */
static int parse_stream(const lx_input *in, const char *label, const hta_deadline *limit,
                        hta_part *part, hta_trace *out, hta_error *err)
{
    lexer lx = {.pull = in->pull, .pull_ctx = in->ctx, .base = in->base, .label = label,
                .err = err,
                .stop_at = part && part->kind != HTA_PART_TAIL ? part->stop_at : NEVER_STOP};
    if (limit && limit->timeout_seconds > 0) {
        lx.timeout_seconds = limit->timeout_seconds;
        lx.deadline = limit->at;
    }
    hta_trace_init(out);
    (void)hta_trace_reserve(out, (size_t)(in->expected_bytes / JSON_BYTES_PER_EVENT_GUESS), 0);
    lx.buf = malloc(LX_BUFFER_BYTES + LX_PADDING_BYTES);
    if (!lx.buf)
        return hta_fail(err, "%s: out of memory", label);
    hta_populate(lx.buf, in->expected_bytes && in->expected_bytes < LX_BUFFER_BYTES
                             ? (size_t)in->expected_bytes
                             : LX_BUFFER_BYTES);
    lx.p = lx.end = lx.record_from = lx.buf;
    lx_pad(&lx);
    int rc = part ? read_part(&lx, out, part) : read_document(&lx, out);
    if (part && lx.timed_out)
        part->end = HTA_PART_TIMED_OUT;
    out->json_bytes = lx_offset(&lx);
    lexer_free(&lx);
    if (rc)
        hta_trace_free(out);
    return rc;
}

static long pull_source(void *ctx, char *buf, size_t cap, hta_error *err)
{
    return hta_source_read(ctx, buf, cap, err);
}

hta_deadline hta_deadline_from(double timeout_seconds)
{
    hta_deadline d = {.timeout_seconds = timeout_seconds > 0 ? timeout_seconds : 0};
    if (d.timeout_seconds > 0)
        d.at = hta_monotonic_seconds() + d.timeout_seconds;
    return d;
}

int hta_read_trace_file(const char *path, const hta_read_options *options, hta_trace *out,
                        hta_error *err)
{
    hta_deadline limit = hta_deadline_from(options ? options->timeout_seconds : 0);
    if (options && options->threads > 1) {
        hta_split_result split = hta_read_trace_split(path, options, &limit, out, err);
        if (split != HTA_SPLIT_SERIAL)
            return split == HTA_SPLIT_DONE ? 0 : -1;
    }
    hta_source *src;
    if (hta_source_open(path, options ? options->inflater : HTA_INFLATER_AUTO, &src, err)) {
        hta_trace_init(out);
        return -1;
    }
    lx_input in = {pull_source, src, 0, hta_source_size_hint(src)};
    int rc = parse_stream(&in, path, &limit, NULL, out, err);
    hta_source_close(src);
    return rc;
}

typedef struct file_input {
    int fd;
    uint64_t pos;
} file_input;

static long pull_pread(void *ctx, char *buf, size_t cap, hta_error *err)
{
    file_input *in = ctx;
    ssize_t n;
    do
        n = pread(in->fd, buf, cap, (off_t)in->pos);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return hta_fail(err, "read error at byte %llu: %s", (unsigned long long)in->pos,
                        strerror(errno));
    in->pos += (uint64_t)n;
    return (long)n;
}

/* The bytes of the file that a part's events come from, for sizing: its
 * range, the last one's ending at the end of the file. */
static uint64_t part_bytes(int fd, const hta_part *part)
{
    struct stat st;
    if (part->kind == HTA_PART_TAIL || fstat(fd, &st) != 0)
        return 0;
    uint64_t end = part->stop_at < (uint64_t)st.st_size ? part->stop_at : (uint64_t)st.st_size;
    return end > part->from ? end - part->from : 0;
}

int hta_read_part(const char *path, const hta_deadline *limit, hta_part *part,
                  hta_trace *out, hta_error *err)
{
    file_input file = {.fd = open(path, O_RDONLY | O_CLOEXEC)};
    if (file.fd < 0) {
        hta_trace_init(out);
        return hta_fail(err, "%s: %s", path, strerror(errno));
    }
    if (part->kind == HTA_PART_SPAN)
        file.pos = part->from > SPAN_LOOKBACK_BYTES ? part->from - SPAN_LOOKBACK_BYTES : 0;
    else if (part->kind == HTA_PART_TAIL)
        file.pos = part->from;
    lx_input in = {pull_pread, &file, file.pos, part_bytes(file.fd, part)};
    int rc = parse_stream(&in, path, limit, part, out, err);
    close(file.fd);
    return rc;
}

typedef struct memory_input {
    const char *data;
    size_t len, pos, chunk;
} memory_input;

static long pull_memory(void *ctx, char *buf, size_t cap, hta_error *err)
{
    (void)err;
    memory_input *in = ctx;
    size_t n = in->len - in->pos < cap ? in->len - in->pos : cap;
    if (in->chunk && n > in->chunk)
        n = in->chunk;
    memcpy(buf, in->data + in->pos, n);
    in->pos += n;
    return (long)n;
}

int hta_read_trace_memory(const char *data, size_t len, size_t chunk, const char *label,
                          hta_trace *out, hta_error *err)
{
    memory_input memory = {.data = data, .len = len, .chunk = chunk};
    lx_input in = {pull_memory, &memory, 0, len};
    return parse_stream(&in, label, NULL, NULL, out, err);
}
