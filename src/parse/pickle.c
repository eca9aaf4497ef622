/* pickle.c: the pickle subset of Flight Recorder dumps (see parse/pickle.h).
 *
 * One pass over the opcodes with an explicit stack of value pointers (NULL
 * is a MARK), so nesting costs no C stack and a hostile file cannot
 * overflow it.  Every read is checked against the end first; a memo index
 * is bounded by the file's length (each PUT takes at least two bytes), so
 * the memo never grows past the input. */
#include "parse/pickle.h"

#include <stdlib.h>
#include <string.h>

enum {
    OP_MARK = '(', OP_STOP = '.', OP_NONE = 'N', OP_BININT = 'J', OP_BININT1 = 'K',
    OP_BININT2 = 'M', OP_BINUNICODE = 'X', OP_APPEND = 'a', OP_APPENDS = 'e',
    OP_BINGET = 'h', OP_LONG_BINGET = 'j', OP_EMPTY_LIST = ']', OP_BINPUT = 'q',
    OP_LONG_BINPUT = 'r', OP_SETITEM = 's', OP_TUPLE = 't', OP_EMPTY_TUPLE = ')',
    OP_SETITEMS = 'u', OP_BINFLOAT = 'G', OP_EMPTY_DICT = '}', OP_POP = '0',
    OP_PROTO = 0x80, OP_TUPLE1 = 0x85, OP_TUPLE2 = 0x86, OP_TUPLE3 = 0x87,
    OP_NEWTRUE = 0x88, OP_NEWFALSE = 0x89, OP_LONG1 = 0x8a, OP_LONG4 = 0x8b,
    OP_SHORT_BINUNICODE = 0x8c, OP_BINUNICODE8 = 0x8d, OP_MEMOIZE = 0x94, OP_FRAME = 0x95,
};

typedef struct reader {
    const unsigned char *p;
    size_t len, at, op_at;   /* op_at: the offset of the opcode being run */
    unsigned op;
    const char *name;
    hta_pickle_doc *doc;
    hta_pvalue **stack;
    size_t depth, stack_cap;
    hta_pvalue **memo;
    size_t memo_cap, memo_len;   /* memo_len: the indices stored, MEMOIZE's next */
    hta_error *err;
} reader;

const char *hta_pvalue_kind_name(hta_pvalue_kind kind)
{
    static const char *const names[] = {"none", "bool", "int", "float",
                                        "str", "list", "tuple", "dict"};
    return kind <= HTA_PV_DICT ? names[kind] : "?";
}

hta_pvalue *hta_pvalue_new(hta_pickle_doc *doc, hta_pvalue_kind kind)
{
    if (doc->n_all == doc->cap_all) {
        size_t cap = doc->cap_all ? 2 * doc->cap_all : 64;
        hta_pvalue **all = realloc(doc->all, cap * sizeof *all);
        if (!all)
            return NULL;
        doc->all = all;
        doc->cap_all = cap;
    }
    hta_pvalue *v = calloc(1, sizeof *v);
    if (v) {
        v->kind = kind;
        doc->all[doc->n_all++] = v;
    }
    return v;
}

int hta_pvalue_push(hta_pvalue *c, hta_pvalue *v)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 4;
        hta_pvalue **items = realloc(c->items, cap * sizeof *items);
        if (!items)
            return -1;
        c->items = items;
        c->cap = cap;
    }
    c->items[c->n++] = v;
    return 0;
}

void hta_pickle_doc_free(hta_pickle_doc *doc)
{
    for (size_t i = 0; i < doc->n_all; i++) {
        free(doc->all[i]->items);
        free(doc->all[i]->s);
        free(doc->all[i]);
    }
    free(doc->all);
    memset(doc, 0, sizeof *doc);
}

const hta_pvalue *hta_pdict_get(const hta_pvalue *d, const char *key)
{
    if (!d || d->kind != HTA_PV_DICT)
        return NULL;
    size_t klen = strlen(key);
    for (size_t i = d->n; i >= 2; i -= 2) {
        const hta_pvalue *k = d->items[i - 2];
        if (k->kind == HTA_PV_STR && k->s_len == klen && !memcmp(k->s, key, klen))
            return d->items[i - 1];
    }
    return NULL;
}

static int fail_at(reader *r, const char *what)
{
    return hta_fail(r->err, "%s: byte %zu: %s (pickle opcode 0x%02x)", r->name, r->op_at, what,
                    r->op);
}

static int oom(reader *r)
{
    return fail_at(r, "out of memory");
}

/* The next n bytes, or NULL (with the error) when the file ends first. */
static const unsigned char *take(reader *r, size_t n)
{
    if (n > r->len - r->at) {
        fail_at(r, "truncated");
        return NULL;
    }
    const unsigned char *b = r->p + r->at;
    r->at += n;
    return b;
}

static uint64_t le(const unsigned char *b, size_t n)
{
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;)
        v = v << 8 | b[i];
    return v;
}

/* A length of len_bytes little-endian bytes, then that many bytes (NULL,
 * with the error, when the file ends first). */
static const unsigned char *take_counted(reader *r, size_t len_bytes, uint64_t *n)
{
    const unsigned char *b = take(r, len_bytes);
    if (!b)
        return NULL;
    *n = le(b, len_bytes);
    return take(r, *n);
}


static int push(reader *r, hta_pvalue *v)
{
    if (r->depth == r->stack_cap) {
        size_t cap = r->stack_cap ? 2 * r->stack_cap : 64;
        hta_pvalue **s = realloc(r->stack, cap * sizeof *s);
        if (!s)
            return oom(r);
        r->stack = s;
        r->stack_cap = cap;
    }
    r->stack[r->depth++] = v;
    return 0;
}

static int push_new(reader *r, hta_pvalue_kind kind, hta_pvalue **out)
{
    hta_pvalue *v = hta_pvalue_new(r->doc, kind);
    if (!v)
        return oom(r);
    if (out)
        *out = v;
    return push(r, v);
}

static int simple_value(reader *r, hta_pvalue_kind kind, int64_t i)
{
    hta_pvalue *v = NULL;
    if (push_new(r, kind, &v))
        return -1;
    v->i = i;
    return 0;
}

static hta_pvalue *top(reader *r)
{
    if (r->depth == 0 || !r->stack[r->depth - 1]) {
        fail_at(r, r->depth ? "a mark where a value belongs" : "stack empty");
        return NULL;
    }
    return r->stack[r->depth - 1];
}

/* The index of the topmost MARK, or -1 (with the error). */
static long find_mark(reader *r)
{
    for (size_t i = r->depth; i-- > 0;)
        if (!r->stack[i])
            return (long)i;
    fail_at(r, "no mark on the stack");
    return -1;
}

static int read_int(reader *r, size_t n, int is_signed)
{
    const unsigned char *b = take(r, n);
    if (!b)
        return -1;
    uint64_t u = le(b, n);
    return simple_value(r, HTA_PV_INT,
                        is_signed && n == 4 ? (int64_t)(int32_t)(uint32_t)u : (int64_t)u);
}

/* LONG1/LONG4: n bytes of two's complement, little-endian; more than 8
 * significant bytes do not fit an int64. */
static int read_long(reader *r, size_t len_bytes)
{
    uint64_t n = 0;
    const unsigned char *b = take_counted(r, len_bytes, &n);
    if (!b)
        return -1;
    int negative = n > 0 && (b[n - 1] & 0x80);
    size_t keep = n;
    while (keep > 8 && b[keep - 1] == (negative ? 0xff : 0x00))
        keep--;
    if (keep > 8 || (keep == 8 && n > 8 && ((b[7] & 0x80) != 0) != negative))
        return fail_at(r, "integer does not fit 64 bits");
    uint64_t u = keep ? le(b, keep) : 0;
    if (negative && keep < 8)
        u |= ~UINT64_C(0) << (8 * keep);
    return simple_value(r, HTA_PV_INT, (int64_t)u);
}

static int read_str(reader *r, size_t len_bytes)
{
    uint64_t n = 0;
    const unsigned char *b = take_counted(r, len_bytes, &n);
    if (!b)
        return -1;
    hta_pvalue *v = NULL;
    if (push_new(r, HTA_PV_STR, &v))
        return -1;
    if (!(v->s = malloc(n + 1)))
        return oom(r);
    memcpy(v->s, b, n);
    v->s[n] = '\0';
    v->s_len = n;
    return 0;
}

static int read_float(reader *r)
{
    const unsigned char *b = take(r, 8);
    if (!b)
        return -1;
    uint64_t u = 0;
    for (int i = 0; i < 8; i++)
        u = u << 8 | b[i];
    hta_pvalue *v = NULL;
    if (push_new(r, HTA_PV_FLOAT, &v))
        return -1;
    memcpy(&v->f, &u, sizeof v->f);
    return 0;
}

static int memo_put(reader *r, uint64_t index)
{
    hta_pvalue *v = top(r);
    if (!v)
        return -1;
    if (index >= r->len)
        return fail_at(r, "memo index beyond any the file could hold");
    if (index >= r->memo_cap) {
        size_t cap = r->memo_cap ? r->memo_cap : 64;
        while (cap <= index)
            cap *= 2;
        hta_pvalue **memo = realloc(r->memo, cap * sizeof *memo);
        if (!memo)
            return oom(r);
        memset(memo + r->memo_cap, 0, (cap - r->memo_cap) * sizeof *memo);
        r->memo = memo;
        r->memo_cap = cap;
    }
    r->memo_len += !r->memo[index];
    r->memo[index] = v;
    return 0;
}

static int memo_get(reader *r, size_t index_bytes)
{
    const unsigned char *b = take(r, index_bytes);
    if (!b)
        return -1;
    uint64_t index = le(b, index_bytes);
    if (index >= r->memo_cap || !r->memo[index])
        return fail_at(r, "memo index never stored");
    return push(r, r->memo[index]);
}

static int memo_put_op(reader *r, size_t index_bytes)
{
    const unsigned char *b = take(r, index_bytes);
    return b ? memo_put(r, le(b, index_bytes)) : -1;
}

/* Moves the values above the topmost mark into container (a list's or
 * dict's items, in pairs for a dict) and drops the mark. */
static int pop_marked_into(reader *r, hta_pvalue *container, int pairs)
{
    long mark = find_mark(r);
    if (mark < 0)
        return -1;
    size_t first = (size_t)mark + 1;
    if (pairs && (r->depth - first) % 2)
        return fail_at(r, "odd number of items for a dict");
    for (size_t i = first; i < r->depth; i++)
        if (!r->stack[i])
            return fail_at(r, "a mark where a value belongs");
    for (size_t i = first; i < r->depth; i++)
        if (hta_pvalue_push(container, r->stack[i]))
            return oom(r);
    r->depth = (size_t)mark;
    return 0;
}

/* The container just below the topmost mark, which APPENDS and SETITEMS
 * fill. */
static hta_pvalue *marked_container(reader *r, hta_pvalue_kind kind)
{
    long mark = find_mark(r);
    if (mark < 0)
        return NULL;
    if (mark == 0 || !r->stack[mark - 1] || r->stack[mark - 1]->kind != kind) {
        fail_at(r, kind == HTA_PV_DICT ? "items for something not a dict"
                                       : "items for something not a list");
        return NULL;
    }
    return r->stack[mark - 1];
}

static int fill_marked(reader *r, hta_pvalue_kind kind)
{
    hta_pvalue *c = marked_container(r, kind);
    return c ? pop_marked_into(r, c, kind == HTA_PV_DICT) : -1;
}

/* APPEND and SETITEM: one value (or key and value) into the container
 * below it. */
static int fill_one(reader *r, hta_pvalue_kind kind)
{
    size_t n = kind == HTA_PV_DICT ? 2 : 1;
    if (r->depth < n + 1)
        return fail_at(r, "stack empty");
    hta_pvalue *c = r->stack[r->depth - n - 1];
    for (size_t i = r->depth - n - 1; i < r->depth; i++)
        if (!r->stack[i])
            return fail_at(r, "a mark where a value belongs");
    if (c->kind != kind)
        return fail_at(r, "items for something of another type");
    for (size_t i = r->depth - n; i < r->depth; i++)
        if (hta_pvalue_push(c, r->stack[i]))
            return oom(r);
    r->depth -= n;
    return 0;
}

static int tuple_of(reader *r, size_t n)
{
    if (r->depth < n)
        return fail_at(r, "stack empty");
    hta_pvalue *t = hta_pvalue_new(r->doc, HTA_PV_TUPLE);
    if (!t)
        return oom(r);
    for (size_t i = r->depth - n; i < r->depth; i++)
        if (!r->stack[i])
            return fail_at(r, "a mark where a value belongs");
    for (size_t i = r->depth - n; i < r->depth; i++)
        if (hta_pvalue_push(t, r->stack[i]))
            return oom(r);
    r->depth -= n;
    return push(r, t);
}

static int tuple_marked(reader *r)
{
    hta_pvalue *t = hta_pvalue_new(r->doc, HTA_PV_TUPLE);
    if (!t)
        return oom(r);
    return pop_marked_into(r, t, 0) ? -1 : push(r, t);
}

static int read_proto(reader *r)
{
    const unsigned char *b = take(r, 1);
    if (!b)
        return -1;
    if (b[0] < 2 || b[0] > 5)
        return fail_at(r, "pickle protocol outside 2..5");
    return 0;
}

/* One opcode; 1 at STOP. */
static int step(reader *r)
{
    switch (r->op) {
    case OP_PROTO: return read_proto(r);
    case OP_FRAME: return take(r, 8) ? 0 : -1;   /* framing only groups bytes */
    case OP_STOP: return 1;
    case OP_MARK: return push(r, NULL);
    case OP_POP: return top(r) ? (r->depth--, 0) : -1;
    case OP_EMPTY_DICT: return push_new(r, HTA_PV_DICT, NULL);
    case OP_EMPTY_LIST: return push_new(r, HTA_PV_LIST, NULL);
    case OP_EMPTY_TUPLE: return push_new(r, HTA_PV_TUPLE, NULL);
    case OP_SETITEMS: return fill_marked(r, HTA_PV_DICT);
    case OP_APPENDS: return fill_marked(r, HTA_PV_LIST);
    case OP_SETITEM: return fill_one(r, HTA_PV_DICT);
    case OP_APPEND: return fill_one(r, HTA_PV_LIST);
    case OP_TUPLE: return tuple_marked(r);
    case OP_TUPLE1: return tuple_of(r, 1);
    case OP_TUPLE2: return tuple_of(r, 2);
    case OP_TUPLE3: return tuple_of(r, 3);
    case OP_NONE: return simple_value(r, HTA_PV_NONE, 0);
    case OP_NEWTRUE: return simple_value(r, HTA_PV_BOOL, 1);
    case OP_NEWFALSE: return simple_value(r, HTA_PV_BOOL, 0);
    case OP_BININT1: return read_int(r, 1, 0);
    case OP_BININT2: return read_int(r, 2, 0);
    case OP_BININT: return read_int(r, 4, 1);
    case OP_LONG1: return read_long(r, 1);
    case OP_LONG4: return read_long(r, 4);
    case OP_BINFLOAT: return read_float(r);
    case OP_SHORT_BINUNICODE: return read_str(r, 1);
    case OP_BINUNICODE: return read_str(r, 4);
    case OP_BINUNICODE8: return read_str(r, 8);
    case OP_BINPUT: return memo_put_op(r, 1);
    case OP_LONG_BINPUT: return memo_put_op(r, 4);
    case OP_MEMOIZE: return memo_put(r, r->memo_len);
    case OP_BINGET: return memo_get(r, 1);
    case OP_LONG_BINGET: return memo_get(r, 4);
    default: return fail_at(r, "unsupported opcode");
    }
}

int hta_pickle_read(const unsigned char *bytes, size_t len, const char *name,
                    hta_pickle_doc *doc, hta_error *err)
{
    memset(doc, 0, sizeof *doc);
    reader r = {.p = bytes, .len = len, .name = name, .doc = doc, .err = err};
    int rc = 0;
    while (rc == 0) {
        if (r.at >= r.len) {
            r.op_at = r.at;
            rc = hta_fail(err, "%s: byte %zu: truncated (no STOP opcode)", name, r.at);
            break;
        }
        r.op_at = r.at;
        r.op = r.p[r.at++];
        rc = step(&r);
    }
    if (rc == 1) {
        if (r.depth != 1 || !r.stack[0])
            rc = fail_at(&r, "STOP with other than one value on the stack");
        else {
            doc->root = r.stack[0];
            rc = 0;
        }
    }
    free(r.stack);
    free(r.memo);
    if (rc)
        hta_pickle_doc_free(doc);
    return rc;
}
