/* reader.c: streaming Kineto JSON parser, its top level (see
 * parse/reader.h).
 *
 * The top level accepts an object with traceEvents anywhere or a bare
 * event array; the events are parse/kineto_events.c's, the tokens
 * parse/json_lexer.h's.  The small distributedInfo and deviceProperties
 * objects are captured verbatim as the lexer skips them and parsed with
 * cJSON.
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
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse/json_lexer.h"
#include "parse/json_walk.h"
#include "parse/kineto_events.h"
#include "parse/source.h"
#include "util/buf.h"
#include "util/io_all.h"

/* A span reads from this far before its range so that a boundary whose
 * '{' is at the range start is still seen whole. */
#define SPAN_LOOKBACK_BYTES 4096u

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

/* Reads a small top-level member whole and hands its JSON to apply. */
static int read_recorded_member(lexer *lx, hta_trace *t,
                                void (*apply)(hta_trace *, const hta_buf *))
{
    hta_buf json = {0};
    int complete;
    int rc = hta_json_capture_value(lx, &json, &complete);
    if (rc == 0 && complete && json.data)
        apply(t, &json);
    hta_buf_free(&json);
    return rc;
}

/* The members of the top-level object from the current one on; `more` is
 * what lx_open or lx_next_member said about it. */
static int read_top_members(lexer *lx, kineto_decoder *d, int more, int saw_events)
{
    hta_trace *t = d->trace;
    while (more > 0) {
        if (lx_read_key(lx))
            return -1;
        int rc;
        if (key_is(lx, "traceEvents")) {
            if (lx_peek_token(lx) != '[')
                return lx_error_eof(lx, "traceEvents is not an array");
            saw_events = 1;
            rc = kineto_read_event_array(lx, d);
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

static int read_top_object(lexer *lx, kineto_decoder *d)
{
    return read_top_members(lx, d, lx_open(lx, '{', '}', "expected '{'"), 0);
}

static int read_document_end(lexer *lx)
{
    if (lx_peek_token(lx) != LX_EOF)
        return lx_error(lx, "unexpected data after the end of the JSON document");
    return lx->failed ? -1 : 0;
}

static int read_document(lexer *lx, kineto_decoder *d)
{
    int c = lx_peek_token(lx);
    int rc;
    if (c == LX_EOF)
        return lx->failed ? -1 : lx_error(lx, "empty file");
    lx->bare_array = c == '[';
    if (c == '{')
        rc = read_top_object(lx, d);
    else if (c == '[')
        rc = kineto_read_event_array(lx, d);
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
static int read_span(lexer *lx, kineto_decoder *d, hta_part *part)
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
        if (kineto_read_event(lx, d))
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
static int read_tail(lexer *lx, kineto_decoder *d, const hta_part *part)
{
    if (!part->bare_array && read_top_members(lx, d, lx_next_member(lx, '}'), 1))
        return -1;
    return read_document_end(lx);
}

static int read_part(lexer *lx, kineto_decoder *d, hta_part *part)
{
    switch (part->kind) {
    case HTA_PART_HEAD: {
        int rc = read_document(lx, d);
        part->bare_array = lx->bare_array;
        part->end = lx->stopped ? HTA_PART_STOPPED : HTA_PART_DOCUMENT_END;
        part->end_offset = lx_offset(lx);
        return rc;
    }
    case HTA_PART_SPAN:
        return read_span(lx, d, part);
    case HTA_PART_TAIL:
        return read_tail(lx, d, part);
    }
    return lx_error(lx, "unknown part");
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
    js_scan_level scan;
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
    lx.skip_members = js_skipper(in->scan);
    lx.arrays = in->scan == JS_SCAN_OFF ? NULL : lx_array_memo_new();
    kineto_decoder decoder;
    kineto_decoder_init(&decoder, &lx, out);
    int rc = part ? read_part(&lx, &decoder, part) : read_document(&lx, &decoder);
    if (part && lx.timed_out)
        part->end = HTA_PART_TIMED_OUT;
    out->json_bytes = lx_offset(&lx);
    kineto_decoder_free(&decoder);
    lx_free(&lx);
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

int hta_read_trace_serial(const char *path, const hta_read_options *options,
                          const hta_deadline *limit, hta_trace *out, hta_error *err)
{
    hta_source *src;
    if (hta_source_open(path, options ? options->inflater : HTA_INFLATER_AUTO, &src, err)) {
        hta_trace_init(out);
        return -1;
    }
    lx_input in = {pull_source, src, 0, hta_source_size_hint(src), JS_SCAN_BEST};
    int rc = parse_stream(&in, path, limit, NULL, out, err);
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
    long n = hta_read_all(in->fd, buf, cap, (int64_t)in->pos);
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
    lx_input in = {pull_pread, &file, file.pos, part_bytes(file.fd, part), JS_SCAN_BEST};
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

int hta_read_trace_memory_scanned(const char *data, size_t len, size_t chunk, js_scan_level scan,
                                  const char *label, hta_trace *out, hta_error *err)
{
    memory_input memory = {.data = data, .len = len, .chunk = chunk};
    lx_input in = {pull_memory, &memory, 0, len, scan};
    return parse_stream(&in, label, NULL, NULL, out, err);
}

int hta_read_trace_memory(const char *data, size_t len, size_t chunk, const char *label,
                          hta_trace *out, hta_error *err)
{
    return hta_read_trace_memory_scanned(data, len, chunk, JS_SCAN_BEST, label, out, err);
}

