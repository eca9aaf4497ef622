/* test_split_parse.c: one plain file parsed by several threads
 * (parse/split_parse.h) gives exactly the serial parse: on adversarial
 * documents, on errors and timeouts, and on every real trace. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse/read_input.h"
#include "parse/reader.h"
#include "parse/split_parse.h"
#include "util/buf.h"
#include "unit.h"

/* The collective metadata, string ids included (the merge re-interns a
 * part's strings in the order the serial parse meets them). */
static int same_comm(const hta_comm_set *a, const hta_comm_set *b, const char **what)
{
    *what = "collective metadata";
    if (a->n != b->n || a->n_groups != b->n_groups || a->strings.count != b->strings.count)
        return 0;
    for (uint32_t i = 0; i < a->strings.count; i++)
        if (strcmp(a->strings.strings[i], b->strings.strings[i]) != 0)
            return 0;
    for (size_t i = 0; i < a->n; i++) {
        const hta_comm_meta *x = &a->items[i], *y = &b->items[i];
        if (x->event != y->event || x->external_id != y->external_id ||
            x->in_nelems != y->in_nelems || x->out_nelems != y->out_nelems ||
            x->group_size != y->group_size || x->seq != y->seq ||
            x->collective != y->collective || x->dtype != y->dtype ||
            x->pg_name != y->pg_name || x->pg_desc != y->pg_desc ||
            x->pg_ranks != y->pg_ranks || x->in_split != y->in_split ||
            x->out_split != y->out_split)
            return 0;
    }
    for (size_t i = 0; i < a->n_groups; i++)
        if (a->groups[i].name != b->groups[i].name || a->groups[i].desc != b->groups[i].desc ||
            a->groups[i].ranks != b->groups[i].ranks)
            return 0;
    return 1;
}

/* Equal in every field a user can see, ids included (both assign them in
 * first-seen order), not just the strings they name. */
static int same_trace(const hta_trace *a, const hta_trace *b, const char **what)
{
    *what = "counts or metadata";
    if (a->n_events != b->n_events || a->n_extras != b->n_extras || a->rank != b->rank ||
        a->world_size != b->world_size || a->json_bytes != b->json_bytes ||
        a->skipped_events != b->skipped_events || a->fractional_ts != b->fractional_ts ||
        a->names.count != b->names.count || a->categories.count != b->categories.count)
        return 0;
    *what = "string tables";
    for (uint32_t i = 0; i < a->names.count; i++)
        if (strcmp(a->names.strings[i], b->names.strings[i]) != 0)
            return 0;
    for (uint32_t i = 0; i < a->categories.count; i++)
        if (strcmp(a->categories.strings[i], b->categories.strings[i]) != 0)
            return 0;
    *what = "events";
    for (size_t i = 0; i < a->n_events; i++) {
        const hta_event *x = &a->events[i], *y = &b->events[i];
        if (x->ts_ns != y->ts_ns || x->dur_ns != y->dur_ns || x->correlation != y->correlation ||
            x->stream != y->stream || x->name != y->name ||
            x->cat != y->cat || x->flags != y->flags || x->kernel_type != y->kernel_type ||
            strcmp(hta_event_name(a, x), hta_event_name(b, y)) != 0 ||
            strcmp(hta_event_category(a, x), hta_event_category(b, y)) != 0)
            return 0;
    }
    *what = "CPU contexts";
    if (a->cpu_contexts.count != b->cpu_contexts.count)
        return 0;
    for (uint32_t i = 0; i < a->cpu_contexts.count; i++)
        if (strcmp(a->cpu_contexts.strings[i], b->cpu_contexts.strings[i]) != 0)
            return 0;
    if (!same_comm(&a->comm, &b->comm, what))
        return 0;
    *what = "extras";
    for (size_t i = 0; i < a->n_extras; i++) {
        const hta_event_extra *x = &a->extras[i], *y = &b->extras[i];
        if (x->event != y->event || x->correlation != y->correlation || x->bytes != y->bytes ||
            (x->bandwidth_gbps != y->bandwidth_gbps &&
             !(isnan(x->bandwidth_gbps) && isnan(y->bandwidth_gbps))))
            return 0;
    }
    return 1;
}

static void write_temp_file(char *path, const char *data, size_t len)
{
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "wb");
    fwrite(data, 1, len, f);
    fclose(f);
}

/* Parses path with `threads` threads and no size floor, so that even a
 * small file splits; *split says whether the split itself succeeded (else
 * hta_read_trace_file fell back to the serial parse). */
static int parse_threaded(const char *path, int threads, hta_trace *t, hta_error *err,
                          int *split)
{
    hta_read_options with = {.threads = threads, .split_min_bytes = 1};
    hta_deadline none = {0};
    hta_trace direct;
    *split = hta_read_trace_split(path, &with, &none, &direct, err) == HTA_SPLIT_DONE;
    if (*split)
        hta_trace_free(&direct);
    return hta_read_trace_file(path, &with, t, err);
}

static const int THREAD_COUNTS[] = {2, 3, 4, 7};

/* Serial and threaded parses of path agree for every thread count,
 * including on the error text; returns how many split cleanly. */
static int check_threads_match_serial(const char *path, const char *label)
{
    hta_trace serial;
    hta_error serial_err = {{0}};
    int serial_rc = hta_read_trace_file(path, NULL, &serial, &serial_err);
    int clean = 0;
    for (size_t i = 0; i < sizeof THREAD_COUNTS / sizeof *THREAD_COUNTS; i++) {
        hta_trace t;
        hta_error err = {{0}};
        int split;
        int rc = parse_threaded(path, THREAD_COUNTS[i], &t, &err, &split);
        clean += split;
        const char *what = "";
        CHECK(rc == serial_rc, "%s, %d threads: rc %d, serial %d (%s)", label,
              THREAD_COUNTS[i], rc, serial_rc, err.text);
        if (rc == 0 && serial_rc == 0)
            CHECK(same_trace(&serial, &t, &what), "%s, %d threads: %s differ", label,
                  THREAD_COUNTS[i], what);
        if (rc && serial_rc)
            CHECK(strcmp(err.text, serial_err.text) == 0, "%s, %d threads: '%s' vs '%s'",
                  label, THREAD_COUNTS[i], err.text, serial_err.text);
        if (rc == 0)
            hta_trace_free(&t);
    }
    if (serial_rc == 0)
        hta_trace_free(&serial);
    return clean;
}

/* Events whose names, categories and args vary so that later parts see
 * new strings in their own order, with copies, GPU events, skipped "X"
 * events and fractional ts; `tricky` fills names and args with `},{`,
 * `}, {` and nested objects, where a guessed boundary can land. */
static void append_events(hta_buf *b, int n, int tricky)
{
    char event[512];
    for (int i = 0; i < n; i++) {
        const char *name = tricky ? "x\"}, {\\\"ph\\\":\\\"X\\\"},{ y" : "kernel";
        const char *args = tricky ? "\"args\":{\"stream\":7,\"nested\":[{\"a\":{\"b\":1}},"
                                    "{\"c\":[{},{}]}, {\"d\":\"}\\n,\\t{\"}],\"bytes\":64}"
                                  : "\"args\":{\"stream\":7,\"correlation\":5}";
        switch (i % 5) {
        case 4: /* a collective with metadata: strings shared across parts */
            snprintf(event, sizeof event,
                     "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_AllReduce\","
                     "\"ts\":%d,\"dur\":4,\"args\":{\"stream\":9,\"correlation\":%d,"
                     "\"Collective name\":\"%s\",\"dtype\":\"%s\",\"In msg nelems\":%d,"
                     "\"Process Group Name\":\"%d\",\"Process Group Ranks\":\"[0, 1]\"}}",
                     1000 + i, i, i % 3 ? "allreduce" : "allgather", i % 7 ? "Float" : "BFloat16",
                     i, i % 11);
            break;
        case 0:
            snprintf(event, sizeof event,
                     "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s %d\",\"ts\":%d.5,"
                     "\"dur\":3,%s}", name, i % 97, 1000 + i, args);
            break;
        case 1:
            snprintf(event, sizeof event,
                     "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy %d\",\"ts\":%d,"
                     "\"dur\":2,\"args\":{\"stream\":3,\"bytes\":%d,"
                     "\"memory bandwidth (GB/s)\":%d.25}}", i % 5, 1000 + i, i, i % 13);
            break;
        case 2:
            snprintf(event, sizeof event, "{\"ph\":\"X\",\"name\":\"no cat %d\",\"ts\":1}", i);
            break;
        default:
            snprintf(event, sizeof event,
                     "{\"ph\":\"i\",\"cat\":\"cpu_op %d\",\"name\":\"{\\\"}\",\"ts\":%d}",
                     i % 3, i);
        }
        if (i)
            hta_buf_append(b, i % 2 ? ",\n  " : ",", i % 2 ? 4 : 1);
        hta_buf_append(b, event, strlen(event));
    }
}

/* A document: optional prefix, the events, optional suffix. */
static hta_buf make_document(const char *prefix, int n, int tricky, const char *suffix)
{
    hta_buf b = {0};
    hta_buf_append(&b, prefix, strlen(prefix));
    append_events(&b, n, tricky);
    hta_buf_append(&b, suffix, strlen(suffix));
    return b;
}

static void check_document(const hta_buf *doc, const char *label, int must_split)
{
    char path[] = "/tmp/hta-split-XXXXXX";
    write_temp_file(path, doc->data, doc->len);
    int clean = check_threads_match_serial(path, label);
    if (must_split)
        CHECK(clean > 0, "%s: no thread count split cleanly", label);
    unlink(path);
}

/* Where a range starts inside a string holding `},{` or inside nested
 * args, the guess is wrong and must be caught; top-level keys after
 * traceEvents and a bare array must come through a split unchanged. */
static void test_threads_on_adversarial_documents(void)
{
    const char *top = "{\"schemaVersion\":1,\"traceEvents\":[";
    hta_buf doc = make_document(top, 400, 0,
                                "],\"distributedInfo\":{\"rank\":3,\"world_size\":8},"
                                "\"displayTimeUnit\":\"ns\"}");
    check_document(&doc, "distributedInfo after traceEvents", 1);
    hta_buf_free(&doc);

    doc = make_document("{\"distributedInfo\":{\"rank\":2},\"traceEvents\":[", 400, 0,
                        "],\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"late\",\"name\":\"again\","
                        "\"ts\":1,\"dur\":1}],\"distributedInfo\":{\"world_size\":4}}\n");
    check_document(&doc, "a second traceEvents and distributedInfo after", 1);
    hta_buf_free(&doc);

    doc = make_document("[", 400, 0, "]");
    check_document(&doc, "bare array", 1);
    hta_buf_free(&doc);

    doc = make_document(top, 400, 1, "]}");
    check_document(&doc, "boundaries in strings and nested args", 0);
    hta_buf_free(&doc);

    /* One huge event in the middle: every split point but the outer ones
     * falls inside its name, which is all `},{` patterns. */
    doc = make_document(top, 3, 0, ",{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"");
    for (int i = 0; i < 20000; i++)
        hta_buf_append(&doc, i % 2 ? "}, {" : "},{", i % 2 ? 4 : 3);
    const char *rest =
        "\",\"ts\":5,\"dur\":1},{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"z\",\"ts\":6,\"dur\":1}]}";
    hta_buf_append(&doc, rest, strlen(rest));
    char path[] = "/tmp/hta-split-XXXXXX";
    write_temp_file(path, doc.data, doc.len);
    hta_read_options two = {.threads = 2, .split_min_bytes = 1};
    hta_deadline none = {0};
    hta_trace t;
    hta_error err;
    CHECK(hta_read_trace_split(path, &two, &none, &t, &err) == HTA_SPLIT_SERIAL,
          "a boundary guessed inside a string was accepted");
    check_threads_match_serial(path, "boundaries inside one long string");
    unlink(path);
    hta_buf_free(&doc);
}

/* A file large enough (two threads: over 32 MiB) that the smallest part
 * is MIN_PART_BYTES rather than a 16th of a thread's share, cut into
 * the finer tail of parts that evens out the threads' finish: the same
 * trace as the serial parse, split cleanly with two threads. */
static void test_threads_on_a_large_document(void)
{
    hta_buf doc = make_document("{\"traceEvents\":[", 360000, 0, "]}");
    CHECK(doc.len > (34u << 20), "only %zu bytes", doc.len);
    char path[] = "/tmp/hta-split-XXXXXX";
    write_temp_file(path, doc.data, doc.len);
    hta_trace t;
    hta_error err;
    int split;
    CHECK(parse_threaded(path, 2, &t, &err, &split) == 0 && split,
          "two threads did not split cleanly");
    if (split)
        hta_trace_free(&t);
    check_threads_match_serial(path, "large document");
    unlink(path);
    hta_buf_free(&doc);
}

/* A bad byte anywhere gives the serial error text with its absolute
 * offset, whichever part meets it. */
static void test_threads_report_serial_errors(void)
{
    const char *cuts[] = {"head", "middle", "end"};
    for (int c = 0; c < 3; c++) {
        hta_buf doc = make_document("{\"traceEvents\":[", 600, 0, "]}");
        size_t at = c == 0 ? doc.len / 10 : c == 1 ? doc.len / 2 : doc.len - 40;
        char *colon = memchr(doc.data + at, ':', doc.len - at);
        *colon = ';';
        char label[64];
        snprintf(label, sizeof label, "malformed in the %s", cuts[c]);
        char path[] = "/tmp/hta-split-XXXXXX";
        write_temp_file(path, doc.data, doc.len);
        hta_trace t;
        hta_error err = {{0}};
        int split;
        int rc = parse_threaded(path, 3, &t, &err, &split);
        char offset[64];
        snprintf(offset, sizeof offset, "parse error at byte %zu:", (size_t)(colon - doc.data));
        CHECK(rc != 0 && !split && strstr(err.text, offset),
              "%s: '%s' should name %s", label, err.text, offset);
        check_threads_match_serial(path, label);
        unlink(path);
        hta_buf_free(&doc);
    }
}

/* Out of time, the split reports the timeout as the serial parse does,
 * instead of retrying with the budget spent. */
static void test_threads_time_out_like_serial(void)
{
    hta_buf doc = make_document("{\"traceEvents\":[", 20000, 0, "]}");
    char path[] = "/tmp/hta-split-XXXXXX";
    write_temp_file(path, doc.data, doc.len);
    hta_read_options serial = {.timeout_seconds = 1e-9};
    hta_read_options threaded = {.timeout_seconds = 1e-9, .threads = 4, .split_min_bytes = 1};
    hta_trace t;
    hta_error serial_err = {{0}}, err = {{0}};
    int serial_rc = hta_read_trace_file(path, &serial, &t, &serial_err);
    int rc = hta_read_trace_file(path, &threaded, &t, &err);
    CHECK(serial_rc && rc && strstr(serial_err.text, "timed out after 1e-09 s") &&
              strcmp(err.text, serial_err.text) == 0,
          "timeout: '%s' vs serial '%s'", err.text, serial_err.text);
    unlink(path);
    hta_buf_free(&doc);
}

/* Every real trace, decompressed to a plain file, parses identically with
 * 2, 3, 4 and 7 threads, and splits cleanly for at least one count. */
static void check_threads_never_change_events(const char *path, char *data, size_t len)
{
    char plain[] = "/tmp/hta-split-XXXXXX";
    write_temp_file(plain, data, len);
    int clean = check_threads_match_serial(plain, path);
    /* The head stops at its range end, so when the array starts past half
     * the file (a tiny trace with big metadata) even two threads fall back
     * to the serial parse, correctly. */
    const char *events = strstr(data, "\"traceEvents\"");
    if (events && (size_t)(events - data) < len / 2)
        CHECK(clean > 0, "%s: no thread count split cleanly", path);
    unlink(plain);
}

int main(int argc, char **argv)
{
    test_threads_on_adversarial_documents();
    test_threads_on_a_large_document();
    test_threads_report_serial_errors();
    test_threads_time_out_like_serial();
    const char *traces = unit_real_traces(argc, argv);
    if (traces) {
        int n = for_each_real_trace(traces, check_threads_never_change_events);
        CHECK(n >= 10, "only %d real traces under %s", n, traces);
    }
    return unit_finish();
}
