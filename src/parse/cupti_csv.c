/* cupti_csv.c: CUPTI activity CSV folder reader (see parse/cupti_csv.h).
 *
 * The records (parse/csv_records.h) go one at a time to the file's row
 * decoder. */
#include "parse/cupti_csv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/buf.h"
#include "util/clock.h"
#include "model/event_bounds.h"
#include "parse/csv_records.h"
#include "parse/trace_builder.h"

#define RECORDS_PER_CLOCK_CHECK 65536

/* ---- values ------------------------------------------------------------- */

/* Decimal microseconds to nanoseconds, exactly: [-]digits[.digits], the
 * fraction rounded half up at the fourth digit (as the JSON reader does).
 * -1 when the text is not such a number or is out of range. */
static int parse_us(const char *s, int64_t *ns)
{
    int negative = *s == '-';
    s += negative;
    if (*s < '0' || *s > '9')
        return -1;
    int64_t whole = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (whole > (INT64_MAX / 1000 - 10) / 10)
            return -1;
        whole = whole * 10 + (*s - '0');
    }
    int64_t milli = 0;
    if (*s == '.') {
        s++;
        if (*s < '0' || *s > '9')
            return -1;
        static const int place[3] = {100, 10, 1};
        int k = 0;
        for (; *s >= '0' && *s <= '9'; s++, k++) {
            if (k < 3)
                milli += (*s - '0') * place[k];
            else if (k == 3 && *s >= '5')
                milli++;
        }
    }
    if (*s)
        return -1;
    int64_t v = whole * 1000 + milli;
    *ns = negative ? -v : v;
    return 0;
}

static int parse_integer(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

/* ---- files -------------------------------------------------------------- */

typedef enum file_kind { KIND_GPU, KIND_API, KIND_ANNOTATION } file_kind;

typedef struct csv_source {
    const char *file;          /* in the folder */
    const char *category;      /* Kineto's */
    file_kind kind;
} csv_source;

static const csv_source SOURCES[] = {
    {"kernel.csv", "kernel", KIND_GPU},
    {"conc_kernel.csv", "kernel", KIND_GPU},
    {"gpu_memcpy.csv", "gpu_memcpy", KIND_GPU},
    {"gpu_memset.csv", "gpu_memset", KIND_GPU},
    {"cuda_sync.csv", "cuda_sync", KIND_GPU},
    {"cuda_runtime.csv", "cuda_runtime", KIND_API},
    {"cuda_driver.csv", "cuda_driver", KIND_API},
    {"user_annotation.csv", "user_annotation", KIND_ANNOTATION},
    {NULL, NULL, KIND_GPU},
};

/* Column positions of one file; -1 when absent. */
typedef struct columns {
    long start, end, dur, name, correlation, stream, bytes, device;
} columns;

static int find_columns(hta_csv_file *c, const csv_source *src, columns *col)
{
    const hta_csv_record *h = &c->rec;
    *col = (columns){hta_csv_column(h, "start"), hta_csv_column(h, "end"),
                     hta_csv_column(h, "dur"), hta_csv_column(h, "name"),
                     hta_csv_column(h, "correlation"), hta_csv_column(h, "stream"),
                     hta_csv_column(h, "bytes"), hta_csv_column(h, "device")};
    const char *absent = col->start < 0 ? "start"
                         : col->end < 0 && col->dur < 0 ? "end (or dur)"
                         : col->name < 0 ? "name"
                         : src->kind != KIND_ANNOTATION && col->correlation < 0 ? "correlation"
                         : src->kind == KIND_GPU && col->stream < 0 ? "stream"
                         : NULL;
    if (absent)
        return hta_fail(c->err, "%s: line %lu: no column '%s' in the header", c->path, h->line,
                        absent);
    return 0;
}

static int decode_record(hta_csv_file *c, const csv_source *src, const columns *col,
                         hta_record *rec)
{
    *rec = (hta_record){.correlation = HTA_NO_CORRELATION};
    int64_t dur;
    if (parse_us(hta_csv_value(c, col->start), &rec->ts_ns))
        return hta_fail(c->err, "%s: line %lu: column start: not a time in us '%.40s'", c->path,
                        c->rec.line, hta_csv_value(c, col->start));
    if (col->end >= 0) {
        if (parse_us(hta_csv_value(c, col->end), &rec->end_ns))
            return hta_fail(c->err, "%s: line %lu: column end: not a time in us '%.40s'",
                            c->path, c->rec.line, hta_csv_value(c, col->end));
    } else if (parse_us(hta_csv_value(c, col->dur), &dur)) {
        return hta_fail(c->err, "%s: line %lu: column dur: not a time in us '%.40s'", c->path,
                        c->rec.line, hta_csv_value(c, col->dur));
    } else {
        rec->end_ns = hta_span_end(rec->ts_ns, dur);
    }
    const char *corr = hta_csv_value(c, col->correlation);
    if (*corr && parse_integer(corr, &rec->correlation))
        return hta_fail(c->err, "%s: line %lu: column correlation: not an integer '%.40s'",
                        c->path, c->rec.line, corr);
    if (src->kind == KIND_GPU) {
        rec->is_gpu = 1;
        if (parse_integer(hta_csv_value(c, col->stream), &rec->stream))
            return hta_fail(c->err, "%s: line %lu: column stream: not an integer '%.40s'",
                            c->path, c->rec.line, hta_csv_value(c, col->stream));
    }
    const char *bytes = hta_csv_value(c, col->bytes);
    if (col->bytes >= 0 && *bytes) {
        if (parse_integer(bytes, &rec->bytes))
            return hta_fail(c->err, "%s: line %lu: column bytes: not an integer '%.40s'",
                            c->path, c->rec.line, bytes);
        rec->has_copy = 1;
    }
    return 0;
}

typedef struct csv_reader {
    const char *dir;
    hta_trace_builder builder;
    double timeout_seconds, deadline;
    uint64_t records;
    hta_error *notes, *err;
} csv_reader;

static int out_of_time(csv_reader *r, const hta_csv_file *c)
{
    if (++r->records % RECORDS_PER_CLOCK_CHECK || r->timeout_seconds <= 0 ||
        hta_monotonic_seconds() <= r->deadline)
        return 0;
    return hta_fail(r->err, "%s: timed out after %g s (--timeout-per-trace) at line %lu",
                    c->path, r->timeout_seconds, c->rec.line);
}

static int read_records(csv_reader *r, hta_csv_file *c, const csv_source *src)
{
    int got = hta_csv_next(c);
    if (got <= 0)
        return got < 0 ? -1 : hta_fail(r->err, "%s: empty file (no header row)", c->path);
    columns col;
    if (find_columns(c, src, &col))
        return -1;
    if (strcmp(src->category, "gpu_memcpy") == 0 && col.bytes < 0)
        hta_notes_add(r->notes, "gpu_memcpy.csv has no bytes column: /memory_bw has no "
                                  "bandwidth or bytes");
    uint32_t cat = hta_trace_builder_category(&r->builder, src->category);
    while ((got = hta_csv_next(c)) > 0) {
        hta_record rec;
        if (out_of_time(r, c) || decode_record(c, src, &col, &rec))
            return -1;
        int64_t device;
        if (src->kind == KIND_GPU && !parse_integer(hta_csv_value(c, col.device), &device))
            hta_trace_builder_device(&r->builder, device);
        const char *name = hta_csv_value(c, col.name);
        uint32_t id = src->kind == KIND_ANNOTATION
                          ? hta_trace_builder_annotation(&r->builder, name, strlen(name))
                          : hta_trace_builder_name(&r->builder, name, strlen(name));
        if (hta_trace_builder_add(&r->builder, id, cat, &rec))
            return hta_fail(r->err, "%s: out of memory", c->path);
    }
    return got;
}

static int read_source(csv_reader *r, const csv_source *src, int *found)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", r->dir, src->file) >= (int)sizeof path)
        return hta_fail(r->err, "%s: path too long", r->dir);
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        return hta_fail(r->err, "%s: %s", path, strerror(errno));
    }
    *found = 1;
    hta_csv_file c = {.f = f, .path = path, .err = r->err};
    int rc = read_records(r, &c, src);
    hta_buf_free(&c.rec.text);
    fclose(f);
    return rc;
}

int hta_read_cupti_csv(const char *dir, const hta_builder_options *how, hta_trace *out,
                       hta_error *notes, hta_error *err)
{
    csv_reader r = {.dir = dir, .timeout_seconds = how->timeout_seconds, .notes = notes,
                    .err = err};
    if (how->timeout_seconds > 0)
        r.deadline = hta_monotonic_seconds() + how->timeout_seconds;
    notes->text[0] = '\0';
    hta_trace_init(out);
    int kernels = 0, runtime = 0;
    int rc = hta_trace_builder_init(&r.builder, out, how->step_regex)
                 ? hta_fail(err, "%s: --step-regex does not compile", dir) : 0;
    for (const csv_source *s = SOURCES; rc == 0 && s->file; s++) {
        int found = 0;
        if (s->kind == KIND_GPU)
            hta_trace_builder_begin_gpu_table(&r.builder);
        else if (s == SOURCES || s[-1].kind == KIND_GPU)
            rc = hta_trace_builder_merge_gpu_tables(&r.builder)
                     ? hta_fail(err, "%s: out of memory ordering the GPU records", dir) : 0;
        if (rc == 0)
            rc = read_source(&r, s, &found);
        if (s->kind == KIND_GPU && strcmp(s->category, "kernel") == 0)
            kernels |= found;
        if (s->kind == KIND_API)
            runtime |= found;
    }
    if (rc == 0 && !kernels)
        rc = hta_fail(err, "%s: no kernel.csv or conc_kernel.csv in the folder", dir);
    if (rc == 0)
        hta_trace_builder_device_note(&r.builder, notes);
    if (rc == 0 && !runtime)
        hta_notes_add(notes, "no cuda_runtime.csv or cuda_driver.csv: launch statistics, "
                             "queue length and launch pipelining are empty");
    hta_trace_builder_free(&r.builder);
    if (rc) {
        hta_trace_free(out);
        return -1;
    }
    return 0;
}
