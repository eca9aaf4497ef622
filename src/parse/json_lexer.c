/* json_lexer.c: the lexer's slow paths (see parse/json_lexer.h). */
#include "parse/json_lexer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/clock.h"

#define DISTRIBUTED_INFO_MAX_BYTES (64u << 20)

int lx_error(lexer *lx, const char *what)
{
    if (!lx->failed)
        hta_fail(lx->err, "%s: parse error at byte %llu: %s", lx->label,
                 (unsigned long long)lx_offset(lx), what);
    lx->failed = 1;
    return -1;
}

void lx_flush_record(lexer *lx)
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

void lx_pad(lexer *lx)
{
    memset(lx->buf + (lx->end - lx->buf), 0, LX_PADDING_BYTES);
}

/* Slow path of lx_peek: the buffer is exhausted. */
int lx_refill(lexer *lx)
{
    if (lx->at_eof || lx->failed || lx_out_of_time(lx))
        return LX_EOF;
    lx_flush_record(lx);
    for (unsigned k = 0; k < lx->n_kept; k++)
        if (lx_keep_text(lx->kept[k])) {
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

/* The token after a line break and up to 16 spaces of indentation (how
 * Kineto lays out its members), or NULL for any other whitespace.  Every
 * byte between is checked to be a space and the byte found is a token
 * byte, so the result is skip_spaces's; the padding keeps the load in
 * bounds. */
static const char *indented_token(const char *p, const char *end)
{
#ifdef __SSE2__
    if (*p != '\n')
        return NULL;
    __m128i v = _mm_loadu_si128((const __m128i *)(p + 1));
    unsigned spaces = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')));
    const char *q = p + 1 + __builtin_ctz(~spaces);
    return q < end && is_token_byte(*q) ? q : NULL;
#else
    (void)p;
    (void)end;
    return NULL;
#endif
}

/* Slow path of lx_peek_token: whitespace or the end of the buffer. */
int lx_skip_to_token(lexer *lx)
{
    const char *token = indented_token(lx->p, lx->end);
    if (token) {
        lx->p = token;
        return (unsigned char)*token;
    }
    for (;;) {
        lx->p = skip_spaces(lx->p, lx->end);
        if (lx->p < lx->end)
            return (unsigned char)*lx->p;
        if (lx_refill(lx) == LX_EOF)
            return LX_EOF;
    }
}

int lx_expect(lexer *lx, char c, const char *what)
{
    if (lx_peek_token(lx) != (unsigned char)c)
        return lx_error(lx, what);
    lx->p++;
    return 0;
}

int lx_error_eof(lexer *lx, const char *what)
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
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | cp >> 6);
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | cp >> 12);
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | cp >> 18);
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
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
int lx_read_string(lexer *lx, hta_buf *out)
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

/* Slow path of lx_read_number: any form, anywhere in the buffer.  Numbers
 * longer than any real value (e.g. 10159970886766084423) are validated
 * and marked unusable. */
int lx_read_any_number(lexer *lx, int want_double, number *out)
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
    if (n == 1 && text[0] == '-') {
        int infinity = lx_minus_infinity(lx);
        if (infinity < 0)
            return -1;
        if (infinity) {
            out->value = -INFINITY;
            out->integer_ok = out->thousandths_ok = out->fractional = 0;
            return 0;
        }
    }
    if (total >= sizeof text - 1) {
        out->value = NAN;
        out->integer_ok = out->thousandths_ok = out->fractional = 0;
        return 0;
    }
    if (convert_number(text, n, want_double, out))
        return lx_error(lx, "malformed number");
    return 0;
}

/* Slow path of lx_skip_number: the number runs on past the buffer. */
int lx_skip_number_across(lexer *lx)
{
    while (lx_refill(lx) != LX_EOF) {
        lx->p = number_bytes_end(lx->p);
        if (lx->p < lx->end)
            break;
    }
    return lx->failed ? -1 : 0;
}

/* Consumes word, which must come next. */
static int lx_match_word(lexer *lx, const char *word)
{
    for (const char *s = word; *s; s++) {
        if (lx_peek(lx) != (unsigned char)*s)
            return lx_error_eof(lx, "invalid literal");
        lx->p++;
    }
    return 0;
}

int lx_minus_infinity(lexer *lx)
{
    if (lx_peek(lx) != 'I')
        return lx->failed ? -1 : 0;
    return lx_match_word(lx, "Infinity") ? -1 : 1;
}

int lx_read_nonfinite(lexer *lx, number *out)
{
    int nan = lx_peek(lx) == 'N';
    if (lx_match_word(lx, nan ? "NaN" : "Infinity"))
        return -1;
    out->value = nan ? NAN : INFINITY;
    out->integer_ok = out->thousandths_ok = out->fractional = 0;
    return 0;
}

/* Skips true, false, null, NaN, Infinity or -Infinity, whose first byte
 * is `first` (for '-', a number that a refill split after its sign goes
 * on as a number); fails at the end of the data or on any other byte. */
int lx_skip_literal(lexer *lx, int first)
{
    static const char *const words[] = {"true", "false", "null", "NaN", "Infinity"};
    if (first == LX_EOF)
        return lx_error_eof(lx, "unexpected end of data");
    if (first == '-') {
        lx->p++;
        if (is_digit((char)lx_peek(lx)))
            return lx_skip_number(lx);
        int infinity = lx_minus_infinity(lx);
        return infinity < 0 ? -1 : infinity ? 0 : lx_error_eof(lx, "malformed number");
    }
    for (size_t w = 0; w < sizeof words / sizeof *words; w++)
        if (first == words[w][0])
            return lx_match_word(lx, words[w]);
    return lx_error(lx, "unexpected character");
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
/* Deepest nesting lx_plain_array_end follows. */
#define PLAIN_ARRAY_DEPTH 16

/* One pass with no nesting stack of its own: a plain array needs only
 * its depth. */
const char *lx_plain_array_end(const char *p)
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

/* Two ways in each of 256 sets, chosen by a hash of an array's first 32
 * bytes (bytes past its end included: the padding keeps them readable,
 * and a different guess only costs a scan); arrays longer than an
 * entry's text are always scanned.  64 KiB a lexer, touched as used. */
#define ARRAY_MEMO_SET_BITS 8
#define ARRAY_MEMO_TEXT 127
_Static_assert(LX_PADDING_BYTES >= 32, "the padding covers the hash's loads");

typedef struct array_memo_entry {
    uint8_t len;               /* 0: empty */
    char text[ARRAY_MEMO_TEXT];
} array_memo_entry;

struct lx_array_memo {
    array_memo_entry set[1u << ARRAY_MEMO_SET_BITS][2];
};

lx_array_memo *lx_array_memo_new(void)
{
    return calloc(1, sizeof(lx_array_memo));
}

static array_memo_entry *array_memo_set(lx_array_memo *m, const char *p)
{
    uint64_t w[4];
    memcpy(w, p, sizeof w);
    uint64_t h = (w[0] ^ w[2] * 0x9E3779B97F4A7C15u) * 0xFF51AFD7ED558CCDu ^
                 (w[1] ^ w[3] * 0xC4CEB9FE1A85EC53u);
    h *= 0x9E3779B97F4A7C15u;
    return m->set[h >> (64 - ARRAY_MEMO_SET_BITS)];
}

/* Whether the entry's text is at p, with room bytes of data from p.
 * Most texts are at most 32 bytes: two 16-byte compares, the padding and
 * the entry's size keeping the loads in bounds. */
static inline int array_memo_is_at(const array_memo_entry *e, const char *p, ptrdiff_t room)
{
    unsigned n = e->len;
    if (n == 0 || n > room)
        return 0;
#ifdef __SSE2__
    if (n <= 32) {
        __m128i lo = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)p),
                                    _mm_loadu_si128((const __m128i *)e->text));
        __m128i hi = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 16)),
                                    _mm_loadu_si128((const __m128i *)(e->text + 16)));
        uint32_t same = (uint32_t)_mm_movemask_epi8(lo) |
                        (uint32_t)_mm_movemask_epi8(hi) << 16;
        uint32_t want = n == 32 ? UINT32_MAX : (1u << n) - 1;
        return (same & want) == want;
    }
#endif
    return memcmp(p, e->text, n) == 0;
}

const char *lx_array_end(lexer *lx, const char *p)
{
    if (!lx->arrays)
        return lx_plain_array_end(p);
    array_memo_entry *set = array_memo_set(lx->arrays, p);
    for (int way = 0; way < 2; way++)
        if (array_memo_is_at(&set[way], p, lx->end - p))
            return p + set[way].len;
    const char *end = lx_plain_array_end(p);
    if (end && end - p <= ARRAY_MEMO_TEXT) {
        set[1] = set[0];
        set[0].len = (uint8_t)(end - p);
        memcpy(set[0].text, p, set[0].len);
    }
    return end;
}

int lx_skip_container(lexer *lx, int c)
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

/* Slow path of lx_read_key: a key with escapes, or one near the end of
 * the buffer, decoded into long_key. */
int lx_read_long_key(lexer *lx)
{
    if (lx_read_string(lx, &lx->long_key))
        return -1;
    lx->key = lx->long_key.data;
    lx->key_len = lx->long_key.len;
    return lx_expect(lx, ':', "expected ':'");
}

void lx_free(lexer *lx)
{
    free(lx->buf);
    free(lx->arrays);
    hta_buf_free(&lx->skip_stack);
    hta_buf_free(&lx->long_key);
}
