/* parse/json_lexer.h: the pull lexer under the Kineto reader (private to
 * parse/; json_lexer.c holds the slow paths).
 *
 * The lexer walks a refillable buffer.  The hot paths read in place: a
 * key, or a kept string (name, cat, ph) without escapes, points into the
 * buffer (a refill copies kept strings first), and the usual number forms
 * are converted in one pass there.  A NUL and some zero padding follow
 * the data in the buffer, so the scans for tokens and number bytes need
 * no bounds test of their own.  The per-member steps (key, scalar skip,
 * separator) are inline here, as a member's own work is a few dozen
 * instructions and calls were a large share of it; their rare cases
 * (escapes, the buffer's end, containers) are out of line in
 * json_lexer.c.  Skipping validates and keeps its nesting stack on the
 * heap, so depth is bounded by memory only.
 *
 * The lexer knows JSON only: what a reader builds from it is the reader's
 * (parse/kineto_events.h, parse/json_walk.h).  A reader that borrows
 * texts from the buffer beyond the next refill registers them (kept),
 * and the refill copies them out first. */
#ifndef HTA_JSON_LEXER_H
#define HTA_JSON_LEXER_H

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "parse/json_scan.h"
#include "util/buf.h"
#include "util/error.h"

#define LX_BUFFER_BYTES (256u << 10)
/* The data in the buffer is followed by this many zero bytes: the NUL at
 * lx->end stops every scan for a token, digit or string byte without a
 * bounds check, and a 16-byte load anywhere before lx->end, or the
 * pre-scan's block loads (JS_READ_PAST_BYTES), stay inside the
 * allocation and read only initialised bytes. */
#define LX_PADDING_BYTES 128u
_Static_assert(LX_PADDING_BYTES >= JS_READ_PAST_BYTES,
               "the padding covers the pre-scan's block loads");
#define LX_EOF (-1)
#define NEVER_STOP UINT64_MAX

typedef long (*lx_pull_fn)(void *ctx, char *buf, size_t cap, hta_error *err);

/* A string value a reader keeps for a while (the Kineto decoder: until
 * the end of its event).  A string without escapes that lies wholly in the
 * buffer is borrowed from it (no copy); a refill copies borrowed text of
 * the texts registered in lexer.kept into `own` before it is overwritten. */
typedef struct lx_text {
    const char *data;
    size_t len;
    int borrowed;
    hta_buf own;
} lx_text;

/* The plain arrays a lexer found last (json_lexer.c), so that a repeat,
 * as an op's Input Dims and Input type are, ends after one comparison
 * instead of a scan. */
typedef struct lx_array_memo lx_array_memo;

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
    js_skip_fn skip_members;   /* the pre-scan's (parse/json_scan.h); NULL: none */
    lx_array_memo *arrays;     /* owned; NULL: every array is scanned */
    lx_text *const *kept;      /* a reader's texts a refill copies out; not owned */
    unsigned n_kept;
    hta_buf long_key;          /* keys that need decoding land here */
    const char *key;           /* the member name just read: in the buffer or */
    size_t key_len;            /* long_key, valid until the next lexer call */
} lexer;

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

/* ---- slow paths (json_lexer.c) ---------------------------------------- */

/* Records "LABEL: parse error at byte N: WHAT" once; returns -1. */
int lx_error(lexer *lx, const char *what);
/* lx_error, unless the lexer failed already (a read error, the deadline). */
int lx_error_eof(lexer *lx, const char *what);
/* Appends the bytes consumed since record_from to lx->record. */
void lx_flush_record(lexer *lx);
/* Zeroes the padding after the data. */
void lx_pad(lexer *lx);
/* Slow path of lx_peek: the buffer is exhausted. */
int lx_refill(lexer *lx);
/* Slow path of lx_peek_token: whitespace or the end of the buffer. */
int lx_skip_to_token(lexer *lx);
int lx_expect(lexer *lx, char c, const char *what);
/* Reads a string whose opening quote is current into out, decoding
 * escapes; with out NULL the string is only skipped (escapes unchecked). */
int lx_read_string(lexer *lx, hta_buf *out);
/* Slow path of lx_read_number: any form, anywhere in the buffer. */
int lx_read_any_number(lexer *lx, int want_double, number *out);
/* Slow path of lx_skip_number: the number runs on past the buffer. */
int lx_skip_number_across(lexer *lx);
/* Skips true, false or null, whose first byte is `first`. */
int lx_skip_literal(lexer *lx, int first);
/* Python's json (and so HTA) reads NaN, Infinity and -Infinity: after a
 * lone '-', 1 when "Infinity" followed (consumed), 0 when not, -1 on
 * error; lx_read_nonfinite reads NaN or Infinity at the current byte as
 * a number with neither an integer nor a thousandths value. */
int lx_minus_infinity(lexer *lx);
int lx_read_nonfinite(lexer *lx, number *out);
/* The end of the array starting at p when it holds nothing but arrays,
 * whole numbers without exponent (-?[0-9]+) and strings without escapes
 * (Input Dims, Input type, a kernel's grid and block), else NULL.  Whatever
 * it accepts lx_skip_container accepts too and ends at the same byte; the
 * NUL after the data ends the scan, so the end is at most lx->end. */
const char *lx_plain_array_end(const char *p);
/* lx_plain_array_end(p) for p in the buffer, through lx->arrays when set:
 * the bytes of an array accepted before, found again at p, end where
 * they ended then, as the scan reads no byte past the array's end. */
const char *lx_array_end(lexer *lx, const char *p);
/* A memo for lx->arrays, or NULL when out of memory (then arrays are
 * scanned, to the same ends). */
lx_array_memo *lx_array_memo_new(void);
/* Skips a container of any depth, validating its structure. */
int lx_skip_container(lexer *lx, int c);
/* Slow path of lx_read_key: a key with escapes, or near the buffer's end. */
int lx_read_long_key(lexer *lx);
/* Frees what the lexer owns (the buffer, its stacks); not the kept texts. */
void lx_free(lexer *lx);

/* ---- hot paths -------------------------------------------------------- */

static inline uint64_t lx_offset(const lexer *lx)
{
    return lx->base + (uint64_t)(lx->p - lx->buf);
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

static inline int is_number_char(int c)
{
    return number_bytes[(unsigned char)c];
}

static inline int is_digit(char c)
{
    return (unsigned char)(c - '0') < 10;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LX_SWAR_DIGITS 1
#define EVERY_BYTE(b) (0x0101010101010101u * (uint8_t)(b))

/* How many of the eight bytes of w, in memory order, are decimal digits
 * before the first that is not.  A byte's class depends on its own bits
 * and a carry from the bytes before it, which are digits and carry none,
 * so the first non-digit is found exactly. */
static inline unsigned digits_in_word(uint64_t w)
{
    uint64_t other = ((w & EVERY_BYTE(0xF0)) |
                      (((w + EVERY_BYTE(0x06)) & EVERY_BYTE(0xF0)) >> 4)) ^ EVERY_BYTE(0x33);
    return other ? (unsigned)__builtin_ctzll(other) / 8 : 8;
}

/* The value of eight digit values (0-9, one a byte, the first in the
 * lowest byte): the SWAR steps of simdjson/fast_float. */
static inline uint64_t eight_digits_value(uint64_t w)
{
    w = w * 10 + (w >> 8);
    return ((w & 0x000000FF000000FFu) * (100 + (1000000ull << 32)) +
            ((w >> 16) & 0x000000FF000000FFu) * (1 + (10000ull << 32))) >> 32;
}

/* The value of the first n (1-8) digits of the word w: the bytes after
 * them, whatever they are (a borrow runs only towards them), are shifted
 * out and n leading zeros in. */
static inline uint64_t leading_digits_value(uint64_t w, unsigned n)
{
    return eight_digits_value((w - EVERY_BYTE('0')) << 8 * (8 - n));
}
#endif

/* Accumulates the decimal digits at p (stopping at limit) onto *whole.
 * Timestamps have 16 digits, so on little-endian machines eight are
 * checked and converted at once. */
static inline const char *add_digits(const char *p, const char *limit, uint64_t *whole)
{
    uint64_t v = *whole;       /* unsigned: wraps harmlessly past 19 digits */
#ifdef LX_SWAR_DIGITS
    for (uint64_t w; limit - p >= 8; p += 8) {
        memcpy(&w, p, 8);
        if (digits_in_word(w) != 8)
            break;
        v = v * 100000000u + eight_digits_value(w - EVERY_BYTE('0'));
    }
#endif
    for (; p < limit && is_digit(*p); p++)
        v = v * 10 + (uint64_t)(*p - '0');
    *whole = v;
    return p;
}

/* Whole parts beyond this (~292 years of microseconds) have no
 * thousandths in int64. */
#define THOUSANDTHS_WHOLE_MAX ((INT64_MAX - 1000) / 1000)

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
    if (whole > THOUSANDTHS_WHOLE_MAX)
        return;
    int64_t t = whole * 1000 + milli;
    if (frac_digits > 3 && frac[3] >= '5')
        t++;
    out->thousandths = negative ? -t : t;
    out->thousandths_ok = 1;
}

/* Fast path of lx_read_number for the forms of nearly every number in a
 * trace, 123 and 123.456: one pass over the buffer, no copy.  0 when the
 * number is anything else or might cross the buffer's end; lx_read_number
 * then does it the general way. */
static inline int lx_read_plain_number(lexer *lx, number *out)
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

/* Reads a number at the current position. */
static inline int lx_read_number(lexer *lx, int want_double, number *out)
{
    if (!want_double && lx_read_plain_number(lx, out))
        return 0;
    return lx_read_any_number(lx, want_double, out);
}

/* Fast path for a time as Kineto writes it, microseconds with up to
 * sixteen digits and at most seven after a point: when the number at the
 * current position has that form and ends inside the buffer, 1, with
 * *thousandths (microseconds x 1000: nanoseconds, rounded as
 * plain_number rounds) and *fractional; else 0 with nothing consumed,
 * and lx_read_number reads the number to the same values where this path
 * answers.  Word loads settle eight digits at a time; they reach at most
 * 25 bytes past the current byte, inside the padding. */
static inline int lx_read_fixed_point(lexer *lx, int64_t *thousandths, int *fractional)
{
#ifdef LX_SWAR_DIGITS
    const char *p = lx->p;
    uint64_t w;
    memcpy(&w, p, 8);
    unsigned n = digits_in_word(w);
    if (n == 0 || (n > 1 && *p == '0'))
        return 0;
    uint64_t whole = leading_digits_value(w, n);
    if (n == 8) {
        static const uint64_t power[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                          100000000};
        memcpy(&w, p + 8, 8);
        unsigned more = digits_in_word(w);
        if (more == 8 && is_digit(p[16]))
            return 0;
        if (more)
            whole = whole * power[more] + leading_digits_value(w, more);
        n += more;
    }
    const char *q = p + n;
    int64_t milli = 0;
    int point = *q == '.';
    if (point) {
        memcpy(&w, q + 1, 8);
        unsigned digits = digits_in_word(w);
        if (digits == 0 || digits == 8)
            return 0;
        uint64_t d = w - EVERY_BYTE('0');
        milli = (int64_t)(d & 0xFF) * 100;
        if (digits > 1)
            milli += (int64_t)(d >> 8 & 0xFF) * 10;
        if (digits > 2)
            milli += (int64_t)(d >> 16 & 0xFF);
        if (digits > 3 && (d >> 24 & 0xFF) >= 5)
            milli++;
        q += 1 + digits;
    }
    if (q >= lx->end || is_number_char(*q) || whole > THOUSANDTHS_WHOLE_MAX)
        return 0;
    *thousandths = (int64_t)whole * 1000 + milli;
    *fractional = point;
    lx->p = q;
    return 1;
#else
    (void)lx;
    (void)thousandths;
    (void)fractional;
    return 0;
#endif
}

/* The end of the run of number bytes at p: the NUL after the data stops it. */
static inline const char *number_bytes_end(const char *p)
{
    while (is_number_char(*p))
        p++;
    return p;
}

/* Skips a number without converting it (values nobody reads). */
static inline int lx_skip_number(lexer *lx)
{
    lx->p = number_bytes_end(lx->p);
    return lx->p < lx->end ? 0 : lx_skip_number_across(lx);
}

/* A '-' that a digit does not follow (the padding past the data is no
 * digit) goes the slow way: -Infinity, or a number split after its sign. */
static inline int lx_skip_scalar(lexer *lx, int c)
{
    if (c == '"')
        return lx_skip_string(lx);
    if (is_digit((char)c) || (c == '-' && is_digit(lx->p[1])))
        return lx_skip_number(lx);
    return lx_skip_literal(lx, c);
}

/* Skips one value; inline, as most are plain strings and numbers that
 * end inside the buffer. */
static inline int lx_skip_value(lexer *lx)
{
    int c = lx_peek_token(lx);
    if (c == '[') {
        const char *end = lx_array_end(lx, lx->p);
        if (end) {
            lx->p = end;
            return 0;
        }
    }
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

/* Whether the n bytes (n <= 16) at p, which is at most lx->end of some
 * lexer, are those of lit, readable for 16 bytes and holding no NUL: one
 * 16-byte compare, in bounds by the padding; as the byte at lx->end is a
 * NUL, a match ends inside the data. */
static inline int lx_bytes_are(const char *p, const char *lit, unsigned n)
{
#ifdef __SSE2__
    __m128i here = _mm_loadu_si128((const __m128i *)p);
    __m128i want_bytes = _mm_loadu_si128((const __m128i *)lit);
    unsigned same = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(here, want_bytes));
    unsigned want = (1u << n) - 1;
    return (same & want) == want;
#else
    return memcmp(p, lit, n) == 0;
#endif
}

/* lx_bytes_are at the current position.  A reader that knows how its
 * writer lays out members takes a separator, whitespace and the next key
 * at once. */
static inline int lx_is_at(const lexer *lx, const char *lit, unsigned n)
{
    return lx_bytes_are(lx->p, lit, n);
}

/* lx_is_at, and the bytes consumed when so. */
static inline int lx_take_literal(lexer *lx, const char *lit, unsigned n)
{
    if (!lx_is_at(lx, lit, n))
        return 0;
    lx->p += n;
    return 1;
}

/* Enters an object or array: 1 when it has members, 0 when empty, -1 on
 * error.  Inline: every event opens one or two. */
static inline int lx_open(lexer *lx, char open, char close, const char *what)
{
    if (lx_peek_token(lx) != (unsigned char)open)
        return lx_error(lx, what);
    lx->p++;
    if (lx_peek_token(lx) == (unsigned char)close) {
        lx->p++;
        return 0;
    }
    return 1;
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

/* Inline with a literal: the length test settles most mismatches and the
 * comparison of a constant length compiles to a load or two. */
static inline int key_is(const lexer *lx, const char *s)
{
    size_t n = strlen(s);
    return lx->key_len == n && memcmp(lx->key, s, n) == 0;
}

/* Reads the string whose opening quote is current into t. */
static inline int lx_read_text(lexer *lx, lx_text *t)
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

#endif
