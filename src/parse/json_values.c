/* json_values.c: a JSON document as pickle values (see parse/json_values.h).
 * Recursive descent over an in-memory text: these documents are small
 * (a ring buffer of a few thousand entries), so the Kineto lexer's
 * streaming and refills are not needed. */
#include "parse/json_values.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct jv {
    const unsigned char *p;
    size_t len, at;
    const char *name;
    hta_pickle_doc *doc;
    hta_error *err;
} jv;

static int jv_fail(jv *j, const char *what)
{
    return hta_fail(j->err, "%s: byte %zu: %s", j->name, j->at, what);
}

static void skip_space(jv *j)
{
    while (j->at < j->len && (j->p[j->at] == ' ' || j->p[j->at] == '\t' ||
                              j->p[j->at] == '\n' || j->p[j->at] == '\r'))
        j->at++;
}

static int peek(jv *j)
{
    skip_space(j);
    return j->at < j->len ? j->p[j->at] : -1;
}

static int expect_word(jv *j, const char *word)
{
    size_t n = strlen(word);
    if (j->len - j->at < n || memcmp(j->p + j->at, word, n))
        return jv_fail(j, "invalid literal");
    j->at += n;
    return 0;
}

static hta_pvalue *new_value(jv *j, hta_pvalue_kind kind)
{
    hta_pvalue *v = hta_pvalue_new(j->doc, kind);
    if (!v)
        jv_fail(j, "out of memory");
    return v;
}

static int hex4(jv *j, unsigned *out)
{
    if (j->len - j->at < 4)
        return jv_fail(j, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int c = j->p[j->at++];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return jv_fail(j, "invalid \\u escape");
        v = v << 4 | (unsigned)d;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(unsigned char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xc0 | cp >> 6);
        o[1] = (unsigned char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xe0 | cp >> 12);
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (unsigned char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (unsigned char)(0xf0 | cp >> 18);
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (unsigned char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A \u escape, with its low surrogate when it is a high one. */
static int unicode_escape(jv *j, unsigned char *o, size_t *n)
{
    unsigned cp, low;
    if (hex4(j, &cp))
        return -1;
    if (cp >= 0xd800 && cp < 0xdc00 && j->len - j->at >= 6 && j->p[j->at] == '\\' &&
        j->p[j->at + 1] == 'u') {
        j->at += 2;
        if (hex4(j, &low))
            return -1;
        if (low >= 0xdc00 && low < 0xe000)
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
    }
    *n += put_utf8(o + *n, cp);
    return 0;
}

/* The string at j->at (its opening quote); escaped text never grows, so
 * the raw length bounds the decoded one. */
static hta_pvalue *read_string(jv *j)
{
    size_t start = ++j->at, end = start;
    while (end < j->len && j->p[end] != '"')
        end += j->p[end] == '\\' ? 2 : 1;
    if (end >= j->len) {
        jv_fail(j, "unterminated string");
        return NULL;
    }
    hta_pvalue *v = new_value(j, HTA_PV_STR);
    if (!v || !(v->s = malloc(end - start + 1))) {
        if (v)
            jv_fail(j, "out of memory");
        return NULL;
    }
    unsigned char *o = (unsigned char *)v->s;
    size_t n = 0;
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    while (j->at < end) {
        unsigned char c = j->p[j->at++];
        if (c != '\\') {
            o[n++] = c;
            continue;
        }
        c = j->p[j->at++];
        const char *k = c ? strchr(from, c) : NULL;
        if (k)
            o[n++] = (unsigned char)to[k - from];
        else if (c != 'u' || unicode_escape(j, o, &n)) {
            if (c != 'u')
                jv_fail(j, "invalid escape");
            return NULL;
        }
    }
    j->at = end + 1;
    o[n] = '\0';
    v->s_len = n;
    return v;
}

static hta_pvalue *read_number(jv *j)
{
    size_t start = j->at;
    int fractional = 0;
    while (j->at < j->len && j->p[j->at] && strchr("+-0123456789.eE", j->p[j->at])) {
        fractional |= j->p[j->at] == '.' || j->p[j->at] == 'e' || j->p[j->at] == 'E';
        j->at++;
    }
    char text[80];
    size_t n = j->at - start;
    if (n == 0 || n >= sizeof text) {
        jv_fail(j, "invalid number");
        return NULL;
    }
    memcpy(text, j->p + start, n);
    text[n] = '\0';
    char *end;
    errno = 0;
    long long i = fractional ? 0 : strtoll(text, &end, 10);
    int exact = !fractional && errno == 0 && *end == '\0';
    hta_pvalue *v = new_value(j, exact ? HTA_PV_INT : HTA_PV_FLOAT);
    if (!v)
        return NULL;
    if (exact)
        v->i = i;
    else {
        v->f = strtod(text, &end);
        if (*end) {
            jv_fail(j, "invalid number");
            return NULL;
        }
    }
    return v;
}

static hta_pvalue *read_value(jv *j, int depth);

/* An array or an object: values (an object's as key, value pairs). */
static hta_pvalue *read_container(jv *j, int depth, int object)
{
    hta_pvalue *c = new_value(j, object ? HTA_PV_DICT : HTA_PV_LIST);
    if (!c)
        return NULL;
    j->at++;
    int close = object ? '}' : ']';
    if (peek(j) == close) {
        j->at++;
        return c;
    }
    for (;;) {
        if (object && peek(j) != '"') {
            jv_fail(j, "expected a key");
            return NULL;
        }
        hta_pvalue *key = object ? read_string(j) : NULL;
        if (object && (!key || peek(j) != ':')) {
            if (key)
                jv_fail(j, "expected ':'");
            return NULL;
        }
        j->at += object;
        hta_pvalue *v = read_value(j, depth + 1);
        if (!v || (key && hta_pvalue_push(c, key)) || hta_pvalue_push(c, v)) {
            if (v)
                jv_fail(j, "out of memory");
            return NULL;
        }
        int sep = peek(j);
        j->at++;
        if (sep == close)
            return c;
        if (sep != ',') {
            j->at--;
            jv_fail(j, object ? "expected ',' or '}'" : "expected ',' or ']'");
            return NULL;
        }
    }
}

static hta_pvalue *literal(jv *j, const char *word, hta_pvalue_kind kind, int64_t i)
{
    if (expect_word(j, word))
        return NULL;
    hta_pvalue *v = new_value(j, kind);
    if (v)
        v->i = i;
    return v;
}

static hta_pvalue *read_value(jv *j, int depth)
{
    if (depth > HTA_JSON_VALUES_DEPTH) {
        jv_fail(j, "nested too deeply");
        return NULL;
    }
    switch (peek(j)) {
    case '{': return read_container(j, depth, 1);
    case '[': return read_container(j, depth, 0);
    case '"': return read_string(j);
    case 't': return literal(j, "true", HTA_PV_BOOL, 1);
    case 'f': return literal(j, "false", HTA_PV_BOOL, 0);
    case 'n': return literal(j, "null", HTA_PV_NONE, 0);
    case -1: jv_fail(j, "truncated"); return NULL;
    default: return read_number(j);
    }
}

int hta_json_values_read(const unsigned char *bytes, size_t len, const char *name,
                         hta_pickle_doc *doc, hta_error *err)
{
    memset(doc, 0, sizeof *doc);
    jv j = {.p = bytes, .len = len, .name = name, .doc = doc, .err = err};
    doc->root = read_value(&j, 0);
    if (doc->root && peek(&j) != -1) {
        jv_fail(&j, "text after the document");
        doc->root = NULL;
    }
    if (!doc->root) {
        hta_pickle_doc_free(doc);
        return -1;
    }
    return 0;
}
