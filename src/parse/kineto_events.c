/* kineto_events.c: the Kineto event decoder (see parse/kineto_events.h).
 *
 * One event object at a time fills an event_fields scratch record; an
 * hta_event is appended only when the event is a complete ("X") event
 * with cat and dur, a [memory] instant event becomes a memory sample, and
 * the args the analyses use (collective metadata, ids, Input Dims, stream
 * waits) are read on the way.  Everything else is skipped unread. */
#include "parse/kineto_events.h"

#include "model/event_bounds.h"
#include "model/op_flops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct event_fields {
    int has_ts, has_dur, has_cat, has_name, has_stream;
    int fractional_ts, fractional_dur;
    int64_t ts_ns, dur_ns;
    int64_t stream, correlation, bytes;
    double bandwidth_gbps;
    int has_copy;
    int has_pid, has_tid, has_input_dims, has_input_type, has_concrete_inputs; /* decoder texts */
    int64_t wait_on_stream, wait_record_correlation; /* -1 when absent */
    hta_memory_sample memory;  /* the args of a [memory] event */
} event_fields;

/* Reads a numeric field; a non-numeric value is skipped and reported as 0.
 * NaN, Infinity and -Infinity are numbers without an integer or
 * thousandths value: a time so written leaves its event unanalysable
 * (skipped and counted). */
static int read_numeric(lexer *lx, number *out, int *is_number, int want_double)
{
    int c = lx_peek_token(lx);
    *is_number = c == '-' || (c >= '0' && c <= '9');
    if (!*is_number) {
        *is_number = c == 'N' || c == 'I';
        return *is_number ? lx_read_nonfinite(lx, out) : lx_skip_value(lx);
    }
    return lx_read_number(lx, want_double, out);
}

/* ---- CPU side: pid, tid, External id, Input Dims, Input type, Concrete Inputs */

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
    if (lx->failed)
        return -1;
    if (out->len == 1 && out->data[0] == '-') {
        int infinity = lx_minus_infinity(lx);   /* -Infinity: the field is absent */
        *has = infinity == 0;
        return infinity < 0 ? -1 : 0;
    }
    return 0;
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
    const char *plain_end = *start == '[' ? lx_array_end(lx, start) : NULL;
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
static int repeats_last_thread(const kineto_decoder *d, const event_fields *f)
{
    const hta_buf *last = &d->last_context_key;
    size_t pid = f->has_pid ? d->pid.len : 0, tid = f->has_tid ? d->tid.len : 0;
    return !f->has_input_dims && !f->has_input_type && !f->has_concrete_inputs && last->data &&
           last->len == pid + tid + CONTEXT_FIELDS - 1 &&
           same_bytes(last->data, d->pid.data, pid) &&
           last->data[pid] == HTA_CONTEXT_SEPARATOR &&
           same_bytes(last->data + pid + 1, d->tid.data, tid);
}

static size_t text_len(const lx_text *t, int present)
{
    return present ? t->len : 0;
}

/* Whether key is the context key of the event's texts (compared piece by
 * piece where they lie, without building the event's key). */
static int is_key_of(const hta_buf *key, const kineto_decoder *d, const event_fields *f,
                     int concrete)
{
    const lx_text *piece[CONTEXT_FIELDS] = {&d->pid, &d->tid, &d->input_dims, &d->input_type,
                                            &d->concrete_inputs};
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
static op_context *op_context_of(kineto_decoder *d, uint32_t name)
{
    hta_buf *all = &d->op_contexts;
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
static uint32_t cpu_context_of(kineto_decoder *d, uint32_t name, const event_fields *f)
{
    hta_trace *t = d->trace;
    if (repeats_last_thread(d, f))
        return d->last_context;
    op_context *last = NULL;
    int concrete = 0;          /* the Concrete Inputs are kept */
    if (f->has_input_dims || f->has_input_type || f->has_concrete_inputs) {
        if (!(last = op_context_of(d, name)))
            return UINT32_MAX;
        concrete = f->has_concrete_inputs && keeps_concrete_inputs(last, t, name);
        if (is_key_of(&last->key, d, f, concrete))
            return last->id;
    }
    hta_buf *key = &d->context_key;
    key->len = 0;
    const char sep = HTA_CONTEXT_SEPARATOR;
    if (append_text(key, d->pid.data, d->pid.len, f->has_pid) || hta_buf_putc(key, sep) ||
        append_text(key, d->tid.data, d->tid.len, f->has_tid) || hta_buf_putc(key, sep) ||
        append_text(key, d->input_dims.data, d->input_dims.len, f->has_input_dims) ||
        hta_buf_putc(key, sep) ||
        append_text(key, d->input_type.data, d->input_type.len, f->has_input_type) ||
        hta_buf_putc(key, sep) ||
        append_text(key, d->concrete_inputs.data, d->concrete_inputs.len, concrete))
        return UINT32_MAX;
    if (!last) {
        uint32_t id = hta_strtab_intern(&t->cpu_contexts, key->data, key->len);
        hta_buf swap = d->last_context_key;
        d->last_context_key = *key;
        *key = swap;
        d->last_context = id;
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

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MEMBER_HEADS 1
/* The 8 bytes at p equal those at want. */
static inline int same_word(const char *p, const char *want)
{
    uint64_t w, v;
    memcpy(&w, p, 8);
    memcpy(&v, want, 8);
    return w == v;
}

/* Whether the bytes at the key's opening quote start with the n-byte
 * member head `"key":` (the caller made sure that 16 bytes are in the
 * buffer; a longer head must fit too); then the key is read.  One 8-byte
 * compare per 8 bytes of the head, the last one overlapping. */
static inline int takes_member_head(lexer *lx, const char *head, size_t n)
{
    uint64_t w, want = 0;
    memcpy(&w, lx->p, 8);
    memcpy(&want, head, n < 8 ? n : 8);
    if (n < 8)
        w &= (1ull << 8 * n) - 1;
    if (w != want)
        return 0;
    if (n > 16 && lx->end - lx->p < (ptrdiff_t)n)
        return 0;
    for (size_t at = 8; at + 8 < n; at += 8)
        if (!same_word(lx->p + at, head + at))
            return 0;
    if (n > 8 && !same_word(lx->p + n - 8, head + n - 8))
        return 0;
    lx->key = lx->p + 1;
    lx->key_len = n - 3;
    lx->p += n;
    return 1;
}
#endif

typedef enum args_key {
    ARGS_ERROR, ARGS_OTHER, ARGS_STREAM, ARGS_CORRELATION, ARGS_BYTES, ARGS_BANDWIDTH,
    ARGS_EXTERNAL_ID,
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
    case 18:
        *string = COMM_PG_NAME;
        return key_is(lx, "Process Group Name") ? ARGS_COMM_STRING : ARGS_OTHER;
    case 19:
        *string = COMM_PG_RANKS;
        return key_is(lx, "Process Group Ranks") ? ARGS_COMM_STRING : ARGS_OTHER;
    case 23: return key_is(lx, "memory bandwidth (GB/s)") ? ARGS_BANDWIDTH : ARGS_OTHER;
    case 25:
        *string = COMM_PG_DESC;
        return key_is(lx, "Process Group Description") ? ARGS_COMM_STRING : ARGS_OTHER;
    default: return ARGS_OTHER;
    }
}

/* Number k of the collective metadata, when an integer. */
static int read_comm_number(lexer *lx, comm_fields *comm, int k)
{
    number v;
    int numeric;
    if (read_numeric(lx, &v, &numeric, 0))
        return -1;
    if (numeric && v.integer_ok) {
        comm->number[k] = v.integer;
        comm->numbers |= 1u << k;
    }
    return 0;
}

/* An id (External id: on most events, needed on few) as number k: a run
 * of digits in the buffer costs no more than skipping it; any other form
 * goes the general way. */
static inline int read_id_field(lexer *lx, comm_fields *comm, int k)
{
    lx_peek_token(lx);
    const char *p = lx->p, *q = p;
    if (lx->end - p > NUMBER_TEXT_MAX) {
        uint64_t v = 0;
#ifdef LX_SWAR_DIGITS
        uint64_t w;
        memcpy(&w, p, 8);
        unsigned n = digits_in_word(w);
        if (n < 8) {           /* most ids: every digit from one load */
            v = n ? leading_digits_value(w, n) : 0;
            q = p + n;
        }
#endif
        while (is_digit(*q) && q - p < 18)
            v = v * 10 + (uint64_t)(*q++ - '0');
        if (q > p && !is_number_char(*q) && (*p != '0' || q - p == 1)) {
            comm->number[k] = (int64_t)v;
            comm->numbers |= 1u << k;
            lx->p = q;
            return 0;
        }
    }
    return read_comm_number(lx, comm, k);
}

/* A string of the collective metadata, copied: it must outlive refills
 * until the event is stored, and only communication events carry one. */
static int read_comm_string(lexer *lx, kineto_decoder *d, int k)
{
    if (lx_peek_token(lx) != '"')
        return lx_skip_value(lx);
    d->comm.strings |= 1u << k;
    return lx_read_string(lx, &d->comm_text[k]);
}

/* A CUPTI range-profiler event: every numeric arg is a counter. */
static int is_profiler_range(const kineto_decoder *d, const event_fields *f)
{
    static const char CAT[] = "cuda_profiler_range";
    return f->has_cat && d->cat.len == sizeof CAT - 1 &&
           memcmp(d->cat.data, CAT, sizeof CAT - 1) == 0;
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

/* Reads the next args key: the keys most events carry (an op's, a
 * runtime call's, a kernel's, read or not), written plainly, are matched
 * in place like the event keys (read_event_key), each to what args_key_of
 * says of it; any other goes through lx_read_key. */
static inline args_key read_args_key(lexer *lx, int *string)
{
#ifdef MEMBER_HEADS
    if (lx_peek_token(lx) == '"' && lx->end - lx->p >= 16) {
        switch (lx->p[1]) {
        case 'E':
            if (takes_member_head(lx, "\"External id\":", 14))
                return ARGS_EXTERNAL_ID;
            break;
        case 'c':
            if (takes_member_head(lx, "\"correlation\":", 14))
                return ARGS_CORRELATION;
            if (takes_member_head(lx, "\"cbid\":", 7) ||
                takes_member_head(lx, "\"context\":", 10))
                return ARGS_OTHER;
            break;
        case 's':
            if (takes_member_head(lx, "\"stream\":", 9))
                return ARGS_STREAM;
            if (takes_member_head(lx, "\"shared memory\":", 16))
                return ARGS_OTHER;
            break;
        case 'I':
            if (takes_member_head(lx, "\"Input Dims\":", 13))
                return ARGS_INPUT_DIMS;
            if (takes_member_head(lx, "\"Input type\":", 13))
                return ARGS_INPUT_TYPE;
            break;
        case 'F':
            if (takes_member_head(lx, "\"Fwd thread id\":", 16))
                return ARGS_OTHER;
            break;
        case 'S':
            if (takes_member_head(lx, "\"Sequence number\":", 18))
                return ARGS_OTHER;
            break;
        case 'r':
            if (takes_member_head(lx, "\"registers per thread\":", 23))
                return ARGS_OTHER;
            break;
        case 'w':
            if (takes_member_head(lx, "\"warps per SM\":", 15))
                return ARGS_OTHER;
            break;
        case 'e':
            if (takes_member_head(lx, "\"est. achieved occupancy %\":", 28))
                return ARGS_OTHER;
            break;
        case 'q':
            if (takes_member_head(lx, "\"queued\":", 9))
                return ARGS_OTHER;
            break;
        case 'd':
            if (takes_member_head(lx, "\"device\":", 9))
                return ARGS_OTHER;
            break;
        case 'g':
            if (takes_member_head(lx, "\"grid\":", 7))
                return ARGS_OTHER;
            break;
        case 'b':
            if (takes_member_head(lx, "\"block\":", 8) ||
                takes_member_head(lx, "\"blocks per SM\":", 16))
                return ARGS_OTHER;
            break;
        default: break;
        }
    }
#endif
    return lx_read_key(lx) ? ARGS_ERROR : args_key_of(lx, string);
}

/* How Kineto opens an event's args, up to the first key's quote, and
 * closes them (its line breaks and indentation): each taken in one
 * compare; any other layout token by token, to the same result. */
static const char kineto_args_open[16] = "{\n      \"";
#define KINETO_ARGS_OPEN_LEN 9
static const char kineto_args_close[16] = "\n    }";
#define KINETO_ARGS_CLOSE_LEN 6

static int read_event_args(lexer *lx, kineto_decoder *d, event_fields *f)
{
    if (lx_peek_token(lx) != '{')
        return lx_skip_value(lx);
    int more = 1;
    if (lx_is_at(lx, kineto_args_open, KINETO_ARGS_OPEN_LEN))
        lx->p += KINETO_ARGS_OPEN_LEN - 1; /* to the key's opening quote */
    else
        more = lx_open(lx, '{', '}', "expected '{'");
    int range = is_profiler_range(d, f);
    while (more > 0) {
        int numeric, string = 0, rc = 0;
        args_key key = read_args_key(lx, &string);
        if (key == ARGS_ERROR)
            return -1;
        number v;
        switch (range ? ARGS_RANGE_COUNTER : key) {
        case ARGS_RANGE_COUNTER: rc = read_range_counter(lx, d->trace); break;
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
        case ARGS_EXTERNAL_ID: rc = read_id_field(lx, &d->comm, COMM_EXTERNAL_ID); break;
        case ARGS_IN_NELEMS: rc = read_comm_number(lx, &d->comm, COMM_IN_NELEMS); break;
        case ARGS_OUT_NELEMS: rc = read_comm_number(lx, &d->comm, COMM_OUT_NELEMS); break;
        case ARGS_GROUP_SIZE: rc = read_comm_number(lx, &d->comm, COMM_GROUP_SIZE); break;
        case ARGS_SEQ: rc = read_comm_number(lx, &d->comm, COMM_SEQ); break;
        case ARGS_PEER: rc = read_comm_number(lx, &d->comm, COMM_PEER); break;
        case ARGS_COMM_STRING: rc = read_comm_string(lx, d, string); break;
        case ARGS_INPUT_DIMS: rc = read_json_text(lx, &d->input_dims, &f->has_input_dims); break;
        case ARGS_INPUT_TYPE: rc = read_json_text(lx, &d->input_type, &f->has_input_type); break;
        case ARGS_CONCRETE_INPUTS:
            rc = read_json_text(lx, &d->concrete_inputs, &f->has_concrete_inputs);
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
        if (*lx->p == '\n' && lx_take_literal(lx, kineto_args_close, KINETO_ARGS_CLOSE_LEN))
            return 0;
        more = lx_next_member(lx, '}');
    }
    return more;
}

static int read_time_field(lexer *lx, int64_t *out, int *has, int *fractional)
{
    if (is_digit((char)lx_peek_token(lx)) && lx_read_fixed_point(lx, out, fractional)) {
        *has = 1;
        return 0;
    }
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

static int read_string_field(lexer *lx, lx_text *out, int *has)
{
    if (lx_peek_token(lx) != '"')
        return lx_skip_value(lx);
    *has = 1;
    return lx_read_text(lx, out);
}

/* The kernel type of a GPU event's name, classified once per name: kernel
 * names are long and classifying scans them for several substrings. */
static int kernel_type_of(kineto_decoder *d, uint32_t name)
{
    const hta_trace *t = d->trace;
    hta_buf *known = &d->kernel_types;
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
static uint32_t comm_string_id(kineto_decoder *d, int k, int *failed)
{
    if (!(d->comm.strings & 1u << k))
        return HTA_COMM_NO_STRING;
    const hta_buf *b = &d->comm_text[k];
    uint32_t id = hta_strtab_intern(&d->trace->comm.strings, b->len ? b->data : "", b->len);
    *failed |= id == UINT32_MAX;
    return id;
}

static int64_t comm_number(const kineto_decoder *d, int k)
{
    return d->comm.numbers & 1u << k ? d->comm.number[k] : -1;
}

/* The last stored event's entry in the collective metadata: every
 * communication kernel has one (its External id joins it to its launching
 * op when it carries no metadata), a CPU op only when it names a
 * collective (record_param_comms). */
static int store_comm_meta(lexer *lx, kineto_decoder *d, const hta_event *e)
{
    hta_trace *t = d->trace;
    int gpu_comm = hta_event_is_gpu(e) && e->kernel_type == HTA_KT_COMMUNICATION;
    if (!gpu_comm && !(d->comm.strings & 1u << COMM_COLLECTIVE))
        return 0;
    int failed = 0;
    hta_comm_meta m = {
        .event = t->n_events - 1, .external_id = comm_number(d, COMM_EXTERNAL_ID),
        .in_nelems = comm_number(d, COMM_IN_NELEMS),
        .out_nelems = comm_number(d, COMM_OUT_NELEMS),
        .group_size = comm_number(d, COMM_GROUP_SIZE), .seq = comm_number(d, COMM_SEQ),
        .peer = comm_number(d, COMM_PEER),
        .collective = comm_string_id(d, COMM_COLLECTIVE, &failed),
        .dtype = comm_string_id(d, COMM_DTYPE, &failed),
        .pg_name = comm_string_id(d, COMM_PG_NAME, &failed),
        .pg_desc = comm_string_id(d, COMM_PG_DESC, &failed),
        .pg_ranks = comm_string_id(d, COMM_PG_RANKS, &failed),
        .in_split = comm_string_id(d, COMM_IN_SPLIT, &failed),
        .out_split = comm_string_id(d, COMM_OUT_SPLIT, &failed)};
    return failed || hta_comm_set_push(&t->comm, &m) ? lx_error(lx, "out of memory") : 0;
}

static int store_event(lexer *lx, kineto_decoder *d, const event_fields *f)
{
    hta_trace *t = d->trace;
    hta_event *e = hta_trace_push_event(t);
    uint32_t name = hta_strtab_intern_memo(&t->names, &d->names, d->name.data, d->name.len);
    uint32_t cat =
        hta_strtab_intern_memo(&t->categories, &d->categories, d->cat.data, d->cat.len);
    if (!e || name == UINT32_MAX || cat > UINT16_MAX)
        return lx_error(lx, "out of memory");
    e->ts_ns = f->ts_ns;
    e->dur_ns = f->dur_ns;
    e->name = name;
    e->cat = (uint16_t)cat;
    if (f->has_stream) {
        e->flags |= HTA_EVENT_GPU;
        e->stream = (uint32_t)f->stream;
        int kernel_type = kernel_type_of(d, name);
        if (kernel_type < 0)
            return lx_error(lx, "out of memory");
        e->kernel_type = (uint8_t)kernel_type;
    } else {
        uint32_t context = cpu_context_of(d, name, f);
        if (context == UINT32_MAX)
            return lx_error(lx, "out of memory");
        e->stream = context;
    }
    int narrow = is_narrow_correlation(f->correlation);
    e->correlation = narrow ? (int32_t)f->correlation : HTA_NO_CORRELATION;
    int64_t external_id = comm_number(d, COMM_EXTERNAL_ID);
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
    return store_comm_meta(lx, d, e);
}

/* The rule for complete events (docs/robustness.md): one is analysed when
 * it has cat and numeric ts and dur within the bounds (model/event_bounds.h);
 * any other is skipped and counted, never an error, so one odd event does
 * not cost the rank. */
static int is_analysable(const event_fields *f)
{
    return f->has_cat && f->has_ts && f->has_dur && hta_span_is_analysable(f->ts_ns, f->dur_ns);
}

static int is_memory_event(const kineto_decoder *d, const event_fields *f)
{
    return d->ph.len == 1 && d->ph.data[0] == 'i' && f->has_name && d->name.len == 8 &&
           memcmp(d->name.data, "[memory]", 8) == 0;
}

/* Keeps a [memory] event with a usable time (docs/robustness.md's bounds). */
static int store_memory_sample(lexer *lx, hta_trace *t, event_fields *f)
{
    if (!f->has_ts || !hta_span_is_analysable(f->ts_ns, 0))
        return 0;
    f->memory.ts_ns = f->ts_ns;
    return hta_memory_samples_push(&t->memory, f->memory) ? lx_error(lx, "out of memory") : 0;
}

typedef enum event_key {
    EVENT_ERROR, EVENT_OTHER, EVENT_PH, EVENT_CAT, EVENT_NAME, EVENT_TS, EVENT_DUR, EVENT_ARGS,
    EVENT_PID, EVENT_TID, EVENT_KEYS
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

/* Reads the next member's key: the event keys the decoder reads, written
 * plainly with the ':' right after the quote (as Kineto writes them), are
 * recognised from one 8-byte load, which settles both the key and what it
 * names; any other key goes through lx_read_key. */
static inline event_key read_event_key(lexer *lx)
{
#ifdef MEMBER_HEADS
    if (lx_peek_token(lx) == '"' && lx->end - lx->p >= 16) {
        switch (lx->p[1]) {
        case 'p':
            if (takes_member_head(lx, "\"ph\":", 5))
                return EVENT_PH;
            if (takes_member_head(lx, "\"pid\":", 6))
                return EVENT_PID;
            break;
        case 't':
            if (takes_member_head(lx, "\"ts\":", 5))
                return EVENT_TS;
            if (takes_member_head(lx, "\"tid\":", 6))
                return EVENT_TID;
            break;
        case 'c':
            if (takes_member_head(lx, "\"cat\":", 6))
                return EVENT_CAT;
            break;
        case 'n':
            if (takes_member_head(lx, "\"name\":", 7))
                return EVENT_NAME;
            break;
        case 'd':
            if (takes_member_head(lx, "\"dur\":", 6))
                return EVENT_DUR;
            break;
        case 'a':
            if (takes_member_head(lx, "\"args\":", 7))
                return EVENT_ARGS;
            break;
        default: break;
        }
    }
#endif
    return lx_read_key(lx) ? EVENT_ERROR : event_key_of(lx);
}

/* What Kineto writes between an event's members (their order, its line
 * breaks and indentation): each separator with the next key, taken in
 * one compare instead of token by token.  Any other layout goes token by
 * token, to the same result. */
typedef struct written_head {
    char text[16];             /* whitespace, separator and `"key":` */
    unsigned len;              /* 0: no guess */
    unsigned key_at;           /* where the key's name starts in text */
    event_key key;             /* EVENT_KEYS: the event's closing brace */
} written_head;

static const written_head kineto_first_head = {"{\n    \"ph\":", 11, 7, EVENT_PH};

/* By the member just read, the one Kineto writes next. */
static const written_head kineto_next_head[EVENT_KEYS] = {
    [EVENT_PH] = {", \"cat\":", 8, 3, EVENT_CAT},
    [EVENT_CAT] = {", \"name\":", 9, 3, EVENT_NAME},
    [EVENT_NAME] = {", \"pid\":", 8, 3, EVENT_PID},
    [EVENT_PID] = {", \"tid\":", 8, 3, EVENT_TID},
    [EVENT_TID] = {",\n    \"ts\":", 11, 7, EVENT_TS},
    [EVENT_TS] = {", \"dur\":", 8, 3, EVENT_DUR},
    [EVENT_DUR] = {",\n    \"args\":", 13, 7, EVENT_ARGS},
    [EVENT_ARGS] = {"\n  }", 4, 0, EVENT_KEYS},
};

/* 1 when head follows as written, consumed up to the next value (or past
 * the closing brace), with *key what it names; else 0, nothing consumed. */
static inline int takes_written_head(lexer *lx, const written_head *head, event_key *key)
{
    if (!head->len || !lx_take_literal(lx, head->text, head->len))
        return 0;
    if (head->key != EVENT_KEYS) {
        lx->key = lx->p - head->len + head->key_at;
        lx->key_len = head->len - head->key_at - 2;
    }
    *key = head->key;
    return 1;
}

/* Whether the event's other members can matter: ph "X" (a complete
 * event) or "i" (perhaps a [memory] sample). */
static inline int ph_is_read(const lx_text *ph)
{
    return ph->len == 1 && (ph->data[0] == 'X' || ph->data[0] == 'i');
}

#ifdef LX_SWAR_DIGITS
/* The end of the run of digits at p, eight bytes a load: the NUL after
 * the data ends a run, so the loads reach at most 7 bytes past it, inside
 * the padding. */
static inline const char *digits_end(const char *p)
{
    for (uint64_t w;; p += 8) {
        memcpy(&w, p, 8);
        unsigned n = digits_in_word(w);
        if (n < 8)
            return p + n;
    }
}

/* The end of a number of the form (0|[1-9][0-9]*)(\.[0-9]+)? at p, else
 * NULL: the pre-scan's plain numbers (parse/json_scan.h). */
static inline const char *plain_number_end(const char *p)
{
    const char *q = digits_end(p);
    if (q == p || (*p == '0' && q - p > 1))
        return NULL;
    if (*q != '.')
        return q;
    const char *r = digits_end(q + 1);
    return r == q + 1 ? NULL : r;
}

/* The closing quote of the string at p (its opening quote) when it holds
 * no backslash and ends before end, else NULL. */
static inline const char *plain_string_close(const char *p, const char *end)
{
    const char *q = find_string_end(p + 1, end);
    return q < end && *q == '"' ? q : NULL;
}

/* A flow event's members after its ph, as Kineto writes them: each piece
 * is the separator and key taken at once, then a plain value. */
typedef struct written_member {
    char head[16];
    unsigned len;
    int string;                /* the value is a string, else a number */
} written_member;

static const written_member kineto_flow_members[] = {
    {", \"id\": ", 8, 0},  {", \"pid\": ", 9, 0}, {", \"tid\": ", 9, 0},
    {", \"ts\": ", 8, 0},  {",\n    \"cat\": ", 13, 1}, {", \"name\": ", 10, 1},
};
static const char kineto_flow_bp[16] = ", \"bp\": ";
#define KINETO_FLOW_BP_LEN 8

/* The end of the plain value at p (a string or a number), else NULL. */
static inline const char *written_value_end(const char *p, int string, const char *end)
{
    if (!string)
        return plain_number_end(p);
    const char *q = *p == '"' ? plain_string_close(p, end) : NULL;
    return q ? q + 1 : NULL;
}

/* The closing brace of a flow event written as Kineto writes it, its
 * members (id, pid, tid, ts, cat, name, then bp or not) right after the
 * ph at p, each a plain key and a plain number or string, all before
 * end; else NULL.  What it accepts the pre-scan's skip accepts too
 * (parse/json_scan.h) and ends at the same brace, without classifying
 * blocks: one compare a key, eight digits a load.  Out of line: inlined,
 * it made the member loop around it costlier than it saved. */
static __attribute__((noinline)) const char *written_flow_end(const char *p, const char *end)
{
    for (size_t m = 0; m < sizeof kineto_flow_members / sizeof *kineto_flow_members; m++) {
        const written_member *w = &kineto_flow_members[m];
        if (!lx_bytes_are(p, w->head, w->len) ||
            !(p = written_value_end(p + w->len, w->string, end)))
            return NULL;
    }
    if (lx_bytes_are(p, kineto_flow_bp, KINETO_FLOW_BP_LEN) &&
        !(p = written_value_end(p + KINETO_FLOW_BP_LEN, 1, end)))
        return NULL;
    const written_head *close = &kineto_next_head[EVENT_ARGS];
    return lx_bytes_are(p, close->text, close->len) ? p + close->len - 1 : NULL;
}
#else
static const char *written_flow_end(const char *p, const char *end)
{
    (void)p;
    (void)end;
    return NULL;
}
#endif

/* Moves to the closing brace of an event whose ph reads nothing of it,
 * when its members are proved plain, by Kineto's layout for a flow event
 * or else by the pre-scan (parse/json_scan.h): the member loop then ends
 * at once, as it would have after them.  Without the pre-scan nothing is
 * skipped: the member-by-member parse is the reference. */
static inline void skip_unread_members(lexer *lx)
{
    if (!lx->skip_members)
        return;
    const char *close = written_flow_end(lx->p, lx->end);
    if (!close)
        close = lx->skip_members(lx->p, lx->end);
    if (close)
        lx->p = close;
}

/* Decodes one event object and keeps it when it is a complete event. */
int kineto_read_event(lexer *lx, kineto_decoder *d)
{
    if (lx_peek_token(lx) != '{')
        return lx_error_eof(lx, "expected an event object");
    event_fields f = {.correlation = HTA_NO_CORRELATION, .bytes = -1,
                      .wait_on_stream = -1, .wait_record_correlation = -1,
                      .bandwidth_gbps = NAN,
                      .memory = {.total_allocated = -1, .total_reserved = -1, .device = -1,
                                 .device_type = -1}};
    d->comm.strings = d->comm.numbers = 0;
    size_t first_counter = d->trace->n_range_counters;
    int has_ph = 0;
    event_key key = EVENT_OTHER;
    int key_taken = takes_written_head(lx, &kineto_first_head, &key);
    int more = key_taken ? 1 : lx_open(lx, '{', '}', "expected '{'");
    while (more > 0) {
        if (!key_taken)
            key = read_event_key(lx);
        if (key == EVENT_ERROR)
            return -1;
        int rc;
        switch (key) {
        case EVENT_PH:
            rc = read_string_field(lx, &d->ph, &has_ph);
            if (rc == 0 && has_ph && !ph_is_read(&d->ph))
                skip_unread_members(lx);
            break;
        case EVENT_CAT: rc = read_string_field(lx, &d->cat, &f.has_cat); break;
        case EVENT_NAME: rc = read_string_field(lx, &d->name, &f.has_name); break;
        case EVENT_TS: rc = read_time_field(lx, &f.ts_ns, &f.has_ts, &f.fractional_ts); break;
        case EVENT_DUR: rc = read_time_field(lx, &f.dur_ns, &f.has_dur, &f.fractional_dur); break;
        case EVENT_ARGS: rc = read_event_args(lx, d, &f); break;
        case EVENT_PID: rc = read_id_text(lx, &d->pid, &f.has_pid); break;
        case EVENT_TID: rc = read_id_text(lx, &d->tid, &f.has_tid); break;
        default: rc = lx_skip_value(lx); break;
        }
        if (rc)
            return -1;
        key_taken = takes_written_head(lx, &kineto_next_head[key], &key);
        more = key_taken ? key != EVENT_KEYS : lx_next_member(lx, '}');
    }
    if (more < 0)
        return -1;
    hta_trace *t = d->trace;
    int complete = has_ph && d->ph.len == 1 && d->ph.data[0] == 'X';
    if (!complete) {
        t->n_range_counters = first_counter; /* an event not kept keeps no counters */
        return has_ph && is_memory_event(d, &f) ? store_memory_sample(lx, t, &f) : 0;
    }
    if (!is_analysable(&f)) {
        t->skipped_events++;
        t->n_range_counters = first_counter;
        return 0;
    }
    t->fractional_ts |= f.fractional_ts;
    if (!f.has_name)
        d->name = (lx_text){.data = "", .own = d->name.own};
    if (store_event(lx, d, &f))
        return -1;
    if (is_profiler_range(d, &f) && hta_trace_push_range(t, first_counter))
        return lx_error(lx, "out of memory");
    return 0;
}

int kineto_read_event_array(lexer *lx, kineto_decoder *d)
{
    int more = lx_open(lx, '[', ']', "traceEvents is not an array");
    while (more > 0) {
        if (lx_stops_here(lx))
            return 0;
        if (kineto_read_event(lx, d))
            return -1;
        more = lx_next_member(lx, ']');
    }
    lx->stop_at = NEVER_STOP;  /* only the first event array is split */
    return more;
}

void kineto_decoder_init(kineto_decoder *d, lexer *lx, hta_trace *t)
{
    *d = (kineto_decoder){.trace = t};
    lx_text *kept[KINETO_KEPT_TEXTS] = {&d->name, &d->cat, &d->ph, &d->pid, &d->tid,
                                        &d->input_dims, &d->input_type, &d->concrete_inputs};
    memcpy(d->kept, kept, sizeof kept);
    lx->kept = d->kept;
    lx->n_kept = KINETO_KEPT_TEXTS;
}

void kineto_decoder_free(kineto_decoder *d)
{
    for (int k = 0; k < KINETO_KEPT_TEXTS; k++)
        hta_buf_free(&d->kept[k]->own);
    hta_buf_free(&d->context_key);
    hta_buf_free(&d->last_context_key);
    for (size_t i = 0; i < d->op_contexts.len / sizeof(op_context); i++)
        hta_buf_free(&((op_context *)d->op_contexts.data)[i].key);
    hta_buf_free(&d->op_contexts);
    hta_buf_free(&d->kernel_types);
    for (int k = 0; k < COMM_N_STRINGS; k++)
        hta_buf_free(&d->comm_text[k]);
}
