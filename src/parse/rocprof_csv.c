/* rocprof_csv.c: rocprofv3's CSV files (see parse/rocprof_csv.h). */
#include "parse/rocprof_csv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/csv_records.h"
#include "parse/rocprof_records.h"
#include "util/strtab.h"

/* The files beside the kernel file, by their name ending. */
typedef enum { FILE_KERNELS, FILE_COPIES, FILE_API } file_kind;

static const struct {
    const char *ending;
    file_kind kind;
} FILES[] = {
    {HTA_ROCPROF_KERNEL_CSV, FILE_KERNELS}, {"memory_copy_trace.csv", FILE_COPIES},
    {"hip_api_trace.csv", FILE_API},        {"marker_api_trace.csv", FILE_API},
    {"rccl_api_trace.csv", FILE_API},
};

enum { COL_NAME, COL_CORRELATION, COL_START, COL_END, COL_AGENT, COL_STREAM, COL_QUEUE,
       COL_SOURCE, COL_BYTES, COL_DOMAIN, N_COLUMNS };

/* Each kind's columns: the first four required. */
static const char *const COLUMNS[][N_COLUMNS] = {
    [FILE_KERNELS] = {"Kernel_Name", "Correlation_Id", "Start_Timestamp", "End_Timestamp",
                      "Agent_Id", "Stream_Id", "Queue_Id"},
    [FILE_COPIES] = {"Direction", "Correlation_Id", "Start_Timestamp", "End_Timestamp",
                     "Destination_Agent_Id", "Stream_Id", "Queue_Id", "Source_Agent_Id",
                     "Bytes"},
    [FILE_API] = {"Function", "Correlation_Id", "Start_Timestamp", "End_Timestamp",
                  [COL_DOMAIN] = "Domain"},
};

typedef struct csv_reader {
    hta_error *err, *notes;
    hta_strtab names;
    rp_records records;
} csv_reader;

int hta_is_rocprof_csv(const char *path)
{
    char line[1024];
    FILE *f = fopen(path, "rb");
    int found = f && fgets(line, sizeof line, f) && strstr(line, "Kernel_Name") &&
                strstr(line, "Start_Timestamp");
    if (f)
        fclose(f);
    return found;
}

/* The whole number in text, or the one at its end ("Agent 2" -> 2). */
static int integer_in(const char *text, int64_t *out)
{
    const char *p = text + strlen(text);
    while (p > text && p[-1] >= '0' && p[-1] <= '9')
        p--;
    if (!*p || (p != text && p[-1] != ' ' && p[-1] != '-'))
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(p == text ? text : p - (p[-1] == '-'), &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static int64_t optional_integer(const hta_csv_file *c, long column, int64_t absent)
{
    int64_t v;
    return column >= 0 && integer_in(hta_csv_value(c, column), &v) == 0 ? v : absent;
}

static int required_integer(const hta_csv_file *c, long column, const char *what, int64_t *out)
{
    const char *text = hta_csv_value(c, column);
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (!errno && end != text && !*end) {
        *out = v;
        return 0;
    }
    return hta_fail(c->err, "%s: line %lu: %s '%s' is not a whole number", c->path,
                    c->rec.line, what, hta_csv_value(c, column));
}

/* The record's name, kept in the reader's names. */
static const char *keep_name(csv_reader *r, const char *name)
{
    uint32_t id = hta_strtab_intern(&r->names, name, strlen(name));
    return id == UINT32_MAX ? NULL : hta_strtab_get(&r->names, id);
}

/* One row into its record kind; API rows of domains not carried are
 * left out. */
static int read_row(csv_reader *r, hta_csv_file *c, file_kind kind, const long *col)
{
    rp_record rec = {.agent = -1, .process = -1, .bytes = -1, .in_count = -1, .out_count = -1};
    int64_t correlation;
    if (required_integer(c, col[COL_START], "Start_Timestamp", &rec.start) ||
        required_integer(c, col[COL_END], "End_Timestamp", &rec.end) ||
        required_integer(c, col[COL_CORRELATION], "Correlation_Id", &correlation))
        return -1;
    rec.correlation = correlation > 0 ? correlation : HTA_NO_CORRELATION;
    const char *name = hta_csv_value(c, col[COL_NAME]);
    rp_kind as = RP_KERNELS;
    char copy_name[160];
    if (kind == FILE_API) {
        int api = hta_rocprof_api_kind(hta_csv_value(c, col[COL_DOMAIN]));
        if (api < 0)
            return 0;
        as = (rp_kind)api;
    } else {
        int from_device = kind == FILE_COPIES && strstr(name, "DEVICE_TO_") != NULL;
        rec.agent = optional_integer(c, col[from_device ? COL_SOURCE : COL_AGENT], -1);
        rec.stream = optional_integer(c, col[COL_STREAM], optional_integer(c, col[COL_QUEUE], 0));
    }
    if (kind == FILE_COPIES) {
        as = RP_COPIES;
        rec.bytes = optional_integer(c, col[COL_BYTES], -1);
        hta_rocprof_copy_name(name, copy_name, sizeof copy_name);
        name = copy_name;
    }
    if (!(rec.name = keep_name(r, name)) || hta_rp_push(&r->records, as, &rec))
        return hta_fail(c->err, "%s: out of memory", c->path);
    return 0;
}

static int read_rows(csv_reader *r, hta_csv_file *c, file_kind kind)
{
    int got = hta_csv_next(c);
    if (got <= 0)
        return got < 0 ? -1 : hta_fail(r->err, "%s: empty file (no header row)", c->path);
    long col[N_COLUMNS];
    for (int k = 0; k < N_COLUMNS; k++) {
        const char *name = COLUMNS[kind][k];
        col[k] = name ? hta_csv_column(&c->rec, name) : -1;
        if (col[k] < 0 && (k < 4 || (kind == FILE_API && k == COL_DOMAIN)))
            return hta_fail(r->err, "%s: line %lu: no column '%s' in the header", c->path,
                            c->rec.line, name);
    }
    if (kind == FILE_COPIES && col[COL_BYTES] < 0)
        hta_notes_add(r->notes, "memory_copy_trace.csv has no Bytes column (rocprofv3 writes "
                                "none): /memory_bw has no bandwidth or bytes");
    while ((got = hta_csv_next(c)) > 0)
        if (read_row(r, c, kind, col))
            return -1;
    return got;
}

/* Reads the file of FILES[i] beside the kernel file; a missing sibling is
 * no error. */
static int read_file(csv_reader *r, const char *kernel_path, size_t i)
{
    char path[4096];
    size_t prefix = strlen(kernel_path) - strlen(HTA_ROCPROF_KERNEL_CSV);
    if (snprintf(path, sizeof path, "%.*s%s", (int)prefix, kernel_path, FILES[i].ending) >=
        (int)sizeof path)
        return hta_fail(r->err, "%s: path too long", kernel_path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno == ENOENT && i > 0 ? 0 : hta_fail(r->err, "%s: %s", path, strerror(errno));
    hta_csv_file c = {.f = f, .path = path, .err = r->err};
    int rc = read_rows(r, &c, FILES[i].kind);
    hta_buf_free(&c.rec.text);
    fclose(f);
    return rc;
}

int hta_read_rocprof_csv(const char *path, const hta_builder_options *how, hta_trace *out,
                         hta_error *notes, hta_error *err)
{
    csv_reader r = {.err = err, .notes = notes};
    hta_strtab_init(&r.names);
    notes->text[0] = '\0';
    hta_trace_init(out);
    size_t n = strlen(path), k = strlen(HTA_ROCPROF_KERNEL_CSV);
    int rc = n < k || strcmp(path + n - k, HTA_ROCPROF_KERNEL_CSV) != 0
                 ? hta_fail(err, "%s: not a rocprofv3 kernel trace (its name must end in "
                                 HTA_ROCPROF_KERNEL_CSV ")", path)
                 : 0;
    for (size_t i = 0; rc == 0 && i < sizeof FILES / sizeof *FILES; i++)
        rc = read_file(&r, path, i);
    hta_trace_builder b;
    if (rc == 0 && hta_trace_builder_init(&b, out, how->step_regex))
        rc = hta_fail(err, "%s: --step-regex does not compile", path);
    else if (rc == 0) {
        hta_builder_options whole = *how;
        whole.one_device = 0;
        rc = hta_rocprof_emit(&r.records, path, &whole, &b, notes, err);
        hta_trace_builder_free(&b);
    }
    hta_rp_free(&r.records);
    hta_strtab_free(&r.names);
    if (rc)
        hta_trace_free(out);
    return rc;
}
