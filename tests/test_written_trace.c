/* test_written_trace.c: a trace written back by --write-traces
 * (written_trace/), on a hand-written trace whose counter tracks are known:
 * the queue length on stream 7 is one sample per time, the value after all
 * of that time's changes (a launch and a kernel start at 110 us leave it
 * at 2), the bandwidth track of a copy rises at its start and falls at its
 * end, the input's events are copied unchanged but for the critical
 * path's marks, and text inserted after hta-mpi's first event lands
 * there. */
#define _GNU_SOURCE /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/rank_view.h"
#include "model/step_filter.h"
#include "parse/read_input.h"
#include "unit.h"
#include "util/buf.h"
#include "written_trace/trace_rewrite.h"
#include "written_trace/trace_writer.h"

#define RUNTIME(ts, corr)                                                                 \
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": " \
    #ts ", \"dur\": 2, \"pid\": 1, \"tid\": 1, \"args\": {\"correlation\": " #corr "}},"
#define KERNEL(ts, dur, corr)                                                              \
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sgemm\", \"ts\": " #ts ", \"dur\": " #dur \
    ", \"pid\": 0, \"tid\": 7, \"args\": {\"stream\": 7, \"correlation\": " #corr "}},"

/* Launches at 100, 105 and 110 us; their kernels start at 110, 120, 130. */
static const char TRACE[] =
    "{\"traceEvents\": [" RUNTIME(100, 1) RUNTIME(105, 2) RUNTIME(110, 3)
    KERNEL(110, 10, 1) KERNEL(120, 10, 2) KERNEL(130, 5, 3)
    "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pinned -> Device)\","
    " \"ts\": 140, \"dur\": 4, \"pid\": 0, \"tid\": 8,"
    " \"args\": {\"stream\": 8, \"bytes\": 4000, \"memory bandwidth (GB/s)\": 1.5}}"
    "]}";

typedef struct sample {
    double ts, value;
} sample;

/* The samples of the counter named name, in document order. */
static size_t samples_of(const char *doc, const char *name, const char *arg, sample *out,
                         size_t cap)
{
    char key[128], fmt[128];
    snprintf(key, sizeof key, "\"name\":\"%s\"", name);
    snprintf(fmt, sizeof fmt, ",\"pid\":999999,\"tid\":0,\"ts\":%%lf,\"args\":{\"%s\":%%lf}}",
             arg);
    size_t n = 0;
    for (const char *p = strstr(doc, key); p && n < cap; p = strstr(p + 1, key))
        if (sscanf(p + strlen(key), fmt, &out[n].ts, &out[n].value) == 2)
            n++;
    return n;
}

static int read_text(const char *path, hta_buf *out)
{
    out->len = 0;
    return hta_read_trace_text(path, out) || hta_buf_putc(out, '\0');
}

/* Whether doc begins with the first n bytes of trace once its critical
 * path marks are left out. */
static int same_but_marks(const char *doc, const char *trace, size_t n)
{
    static const char MARK[] = "\"critical\":1,";
    size_t i = 0;
    while (i < n) {
        if (strncmp(doc, MARK, sizeof MARK - 1) == 0)
            doc += sizeof MARK - 1;
        else if (*doc++ != trace[i++])
            return 0;
    }
    return 1;
}

static void check_counters(const char *doc)
{
    static const sample queue[] = {{100, 1}, {105, 2}, {110, 2}, {120, 1}, {130, 0}};
    sample got[16];
    size_t n = samples_of(doc, "queue length (stream 7)", "queue length", got, 16);
    CHECK(n == 5, "queue length samples %zu, want 5 (one per time)", n);
    for (size_t i = 0; i < n && i < 5; i++)
        CHECK(got[i].ts == queue[i].ts && got[i].value == queue[i].value,
              "queue sample %zu: %g at %g us, want %g at %g us", i, got[i].value, got[i].ts,
              queue[i].value, queue[i].ts);
    n = samples_of(doc, "memory bandwidth (Memcpy HtoD (Pinned -> Device))", "GB/s", got, 16);
    CHECK(n == 2 && got[0].ts == 140 && got[0].value == 1.5 && got[1].ts == 144 &&
              got[1].value == 0,
          "bandwidth samples %zu: %g at %g, %g at %g", n, n ? got[0].value : 0,
          n ? got[0].ts : 0, n > 1 ? got[1].value : 0, n > 1 ? got[1].ts : 0);
    CHECK(strstr(doc, "\"critical\":1,") != NULL, "the path (the whole trace: no steps) marked");
    CHECK(same_but_marks(doc, TRACE, strlen(TRACE) - 2),
          "the input's events are copied unchanged but for the marks");
}

/* Inserts an instant event after hta-mpi's first event, as the cross-rank
 * additions do, and finds it there. */
static void check_insert(const char *path, hta_buf *doc)
{
    doc->len--; /* the NUL read_text added */
    size_t at = hta_written_trace_insert_at(doc);
    CHECK(at > 0, "hta-mpi's first event found");
    hta_buf text = {0};
    const char *event = ",\n{\"ph\":\"i\",\"name\":\"test\",\"pid\":999999,\"tid\":1,\"ts\":1}";
    CHECK(hta_buf_append(&text, event, strlen(event)) == 0 &&
              hta_rewrite_trace_with(path, 0, doc, at, &text) == 0,
          "rewritten");
    hta_buf again = {0};
    CHECK(read_text(path, &again) == 0 && again.len == doc->len + text.len + 1 &&
              memcmp(again.data + at, event, strlen(event)) == 0 &&
              memcmp(again.data, doc->data, at) == 0,
          "the event follows hta-mpi's first one, the rest unchanged");
    hta_buf_free(&text);
    hta_buf_free(&again);
}

int main(void)
{
    char dir[] = "/tmp/hta-written-trace.XXXXXX", in[64], out_dir[64], out[80];
    if (!mkdtemp(dir))
        return 1;
    snprintf(in, sizeof in, "%s/trace.json", dir);
    snprintf(out_dir, sizeof out_dir, "%s/out", dir);
    snprintf(out, sizeof out, "%s/trace.json", out_dir);
    FILE *f = fopen(in, "w");
    CHECK(f && fputs(TRACE, f) >= 0 && fclose(f) == 0, "input written");
    hta_trace t;
    hta_error err = {0};
    hta_rank_view view;
    hta_step_filter_stats filtered;
    hta_corrmap launches;
    CHECK(hta_read_trace_file(in, NULL, &t, &err) == 0, "read: %s", err.text);
    CHECK(hta_step_filter(&t, 0, &filtered, &launches, &err) == 0, "filter: %s", err.text);
    CHECK(hta_rank_view_build(&view, &t, &launches, 0, 1) == 0, "view");
    CHECK(hta_write_trace(in, &view, out_dir, &err) == 0, "write: %s", err.text);
    hta_buf doc = {0};
    CHECK(read_text(out, &doc) == 0, "written trace read back");
    if (doc.data) {
        check_counters(doc.data);
        check_insert(out, &doc);
    }
    hta_buf_free(&doc);
    hta_rank_view_free(&view);
    hta_trace_free(&t);
    unlink(out);
    rmdir(out_dir);
    unlink(in);
    rmdir(dir);
    return unit_finish();
}
