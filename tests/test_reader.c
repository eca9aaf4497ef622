/* test_reader.c: the JSON reader (parse/reader.h) on inputs whose answers
 * are known by construction: exact nanoseconds, extras, event selection,
 * escapes, errors with offsets, deep nesting, concatenated gzip members,
 * the rank in a file name; and on every real trace, independence from
 * where buffer boundaries fall and from the gzip library. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "model/rank_view.h"
#include "model/step_filter.h"
#include "parse/rank_name.h"
#include "parse/json_scan.h"
#include "parse/read_input.h"
#include "parse/reader.h"
#include "util/buf.h"
#include "unit.h"

static int parse(const char *json, hta_trace *t, hta_error *err)
{
    return hta_read_trace_memory(json, strlen(json), 0, "mem", t, err);
}

static void test_numbers_are_exact_nanoseconds(void)
{
    hta_trace t;
    hta_error err;
    const char *json =
        "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1712195495519689.047,"
        "\"dur\":63.8135,\"args\":{\"stream\":7,\"correlation\":12}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"ts\":1.5e3,\"dur\":2,"
        "\"args\":{\"Comms Id\":10159970886766084423,\"stream\":\"x\"}}]";
    CHECK(parse(json, &t, &err) == 0, "parse: %s", err.text);
    if (t.n_events != 2)
        return;
    CHECK(t.events[0].ts_ns == 1712195495519689047LL, "ts %lld", (long long)t.events[0].ts_ns);
    CHECK(t.events[0].dur_ns == 63814, "dur rounds half up: %lld", (long long)t.events[0].dur_ns);
    CHECK(hta_event_is_gpu(&t.events[0]) && t.events[0].stream == 7, "gpu stream");
    CHECK(hta_event_correlation(&t, &t.events[0]) == 12, "correlation");
    CHECK(t.events[1].ts_ns == 1500000, "exponent ts %lld", (long long)t.events[1].ts_ns);
    CHECK(!hta_event_is_gpu(&t.events[1]), "string stream is a CPU event");
    CHECK(hta_event_correlation(&t, &t.events[1]) == HTA_NO_CORRELATION, "missing correlation");
    CHECK(t.fractional_ts, "fractional ts noticed");
    hta_trace_free(&t);
}

/* Times in the short forms the word-at-a-time path reads (up to sixteen
 * integer digits, up to seven after a point) and just outside them (the
 * general path): the nanoseconds are the text's digits shifted by three
 * places, rounded half up on the fourth fraction digit, whichever path
 * reads them, also when every number crosses a refill (1-byte pieces);
 * a malformed one is a parse error either way. */
/* Reads json, holding the number text, whole (chunk 0) or in pieces of
 * one byte: 1 with *t to check and free; 0 when a malformed number failed
 * as it must, or the read failed (reported). */
static int read_number_case(const char *json, const char *text, size_t chunk, int malformed,
                            hta_trace *t)
{
    hta_error err;
    int rc = hta_read_trace_memory(json, strlen(json), chunk, "mem", t, &err);
    if (malformed) {
        CHECK(rc != 0 && strstr(err.text, "malformed number"), "%s (pieces of %zu)", text, chunk);
        if (rc == 0)
            hta_trace_free(t);
        return 0;
    }
    CHECK(rc == 0, "%s (pieces of %zu): %s", text, chunk, err.text);
    return rc == 0;
}

/* A CPU op's External id in every digit count, read whole or in pieces
 * of one byte (then never in one load): the id as written where it fits
 * 32 bits (a fraction truncated), none beyond or when negative or not a
 * number; malformed ones fail as any number does. */
static void test_external_ids_in_every_digit_count(void)
{
    static const struct {
        const char *text;
        long long id;          /* -1: none kept, -2: malformed */
    } cases[] = {
        {"0", 0}, {"7", 7}, {"42", 42}, {"905", 905}, {"8128", 8128}, {"65536", 65536},
        {"999999", 999999}, {"1234567", 1234567}, {"12345678", 12345678},
        {"123456789", 123456789}, {"2147483647", 2147483647LL}, {"2147483648", -1},
        {"123456789012345678", -1}, {"1234567890123456789", -1}, {"1.5", 1}, {"-3", -1},
        {"\"7\"", -1}, {"012", -2}, {"1.", -2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char json[320];
        snprintf(json, sizeof json,
                 "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"n\",\"ts\":1,\"dur\":1,"
                 "\"args\":{\"External id\": %s, \"Record function id\": 0, \"Ev Idx\": 1,"
                 " \"Sequence number\": 12345678, \"Fwd thread id\": 0, \"Input type\": []}}]",
                 cases[i].text);
        for (size_t chunk = 0; chunk <= 1; chunk++) {
            hta_trace t;
            if (!read_number_case(json, cases[i].text, chunk, cases[i].id == -2, &t))
                continue;
            int64_t id = t.n_events == 1 ? hta_event_external_id(&t.events[0]) : -3;
            CHECK(id == cases[i].id, "%s (pieces of %zu) kept as %lld", cases[i].text, chunk,
                  (long long)id);
            hta_trace_free(&t);
        }
    }
}

static void test_times_in_every_digit_count(void)
{
    static const struct {
        const char *text;
        long long ns;          /* -1: the event is not analysable, -2: malformed */
    } cases[] = {
        {"0", 0}, {"7", 7000}, {"12", 12000}, {"1234567", 1234567000LL},
        {"12345678", 12345678000LL}, {"123456789", 123456789000LL},
        {"1683564901225140", 1683564901225140000LL},
        {"4000000000000000", 4000000000000000000LL}, {"4000000000000001", -1},
        {"39999999999999999", -1}, {"9223372036854775", -1},
        {"1.5", 1500}, {"1.25", 1250}, {"0.125", 125}, {"2.1234", 2123}, {"2.1235", 2124},
        {"63.8135", 63814}, {"1712195495519689.047", 1712195495519689047LL},
        {"1712195495519689.0474999", 1712195495519689047LL},
        {"1712195495519689.04750001", 1712195495519689048LL},
        {"4.99999999", 5000}, {"10.0", 10000}, {"1e3", 1000000}, {"1.5E1", 15000},
        {"-1", -1}, {"012", -2}, {"00", -2}, {"1.", -2}, {"1.5.", -2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char json[160];
        snprintf(json, sizeof json,
                 "[{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"n\",\"ts\":%s,\"dur\":1}]",
                 cases[i].text);
        for (size_t chunk = 0; chunk <= 1; chunk++) {
            hta_trace t;
            if (!read_number_case(json, cases[i].text, chunk, cases[i].ns == -2, &t))
                continue;
            if (cases[i].ns >= 0)
                CHECK(t.n_events == 1 && t.events[0].ts_ns == cases[i].ns,
                      "%s (pieces of %zu): %lld", cases[i].text, chunk,
                      t.n_events ? (long long)t.events[0].ts_ns : -1LL);
            else
                CHECK(t.n_events == 0, "%s (pieces of %zu): kept", cases[i].text, chunk);
            hta_trace_free(&t);
        }
    }
}

/* Correlations beyond 32 bits and copy payloads live in the trace's
 * extras: they read back exactly, match launches, and stay with their
 * events when the step filter compacts the trace ahead of them. */
static void test_extras_follow_their_events(void)
{
    const char *json =
        "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ProfilerStep#1\",\"ts\":0,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpyAsync\",\"ts\":250,\"dur\":5,"
        "\"args\":{\"correlation\":7}},"
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD\",\"ts\":260,\"dur\":4,"
        "\"args\":{\"stream\":7,\"correlation\":7,\"bytes\":100,\"memory bandwidth (GB/s)\":3}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"ts\":10,\"dur\":5,"
        "\"args\":{\"correlation\":5000000000}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":20,\"dur\":10,"
        "\"args\":{\"stream\":7,\"correlation\":5000000000}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpyAsync\",\"ts\":30,\"dur\":2,"
        "\"args\":{\"correlation\":8}},"
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoH\",\"ts\":40,\"dur\":4,"
        "\"args\":{\"stream\":7,\"correlation\":8,\"bytes\":64,\"memory bandwidth (GB/s)\":1.5}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::x\",\"ts\":50,\"dur\":1,"
        "\"args\":{\"correlation\":-5}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ProfilerStep#2\",\"ts\":200,\"dur\":100}]";
    hta_trace t;
    hta_error err;
    CHECK(parse(json, &t, &err) == 0, "parse: %s", err.text);
    if (t.n_events != 9)
        return;
    CHECK(t.n_extras == 5, "extras %zu", t.n_extras);
    hta_step_filter_stats stats;
    hta_corrmap launches;
    CHECK(hta_step_filter(&t, 0, &stats, &launches, &err) == 0 && stats.applied, "step filter");
    CHECK(t.n_events == 6 && stats.dropped_gpu_events == 1, "kept %zu", t.n_events);
    CHECK(t.n_extras == 4, "extras after the filter %zu", t.n_extras);
    if (t.n_events != 6 || t.n_extras != 4) {
        hta_corrmap_free(&launches);
        hta_trace_free(&t);
        return;
    }
    CHECK(hta_event_correlation(&t, &t.events[1]) == 5000000000LL, "wide launch correlation");
    CHECK(hta_event_correlation(&t, &t.events[2]) == 5000000000LL, "wide kernel correlation");
    CHECK(hta_event_correlation(&t, &t.events[3]) == 8, "narrow correlation");
    CHECK(hta_event_correlation(&t, &t.events[5]) == -5, "negative correlation kept");
    const hta_event_extra *copy = hta_trace_extra(&t, &t.events[4]);
    CHECK(copy->bytes == 64 && copy->bandwidth_gbps == 1.5, "copy payload %lld %g",
          (long long)copy->bytes, copy->bandwidth_gbps);
    hta_rank_view view;
    CHECK(hta_rank_view_build(&view, &t, &launches, 0, 1) == 0, "view");
    CHECK(hta_rank_view_launch(&view, &t.events[2]) == &t.events[1], "launch by wide correlation");
    CHECK(hta_rank_view_launch(&view, &t.events[4]) == &t.events[3],
          "launch by narrow correlation");
    uint32_t index;
    CHECK(!hta_corrmap_get(&view.cpu_by_correlation, 7, &index),
          "a launch the filter dropped is not in the index");
    hta_rank_view_free(&view);
    hta_trace_free(&t);
}

/* Events denser than the reader's guess of JSON bytes per event outgrow
 * the array it reserved from the input's size, and growth takes over. */
static void test_dense_events_outgrow_the_reservation(void)
{
    enum { EVENTS = 60000 };
    hta_buf json = {0};
    hta_buf_append(&json, "[", 1);
    for (int i = 0; i < EVENTS; i++) {
        char event[96];
        int n = snprintf(event, sizeof event, "%s{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"n%d\","
                         "\"ts\":%d,\"dur\":1}", i ? "," : "", i % 7, i);
        hta_buf_append(&json, event, (size_t)n);
    }
    hta_buf_append(&json, "]", 1);
    hta_trace t;
    hta_error err;
    CHECK(hta_read_trace_memory(json.data, json.len, 0, "dense", &t, &err) == 0, "parse: %s",
          err.text);
    CHECK(t.n_events == EVENTS, "%zu events", t.n_events);
    int in_order = 1;
    for (size_t i = 0; i < t.n_events; i++)
        in_order &= t.events[i].ts_ns == (int64_t)i * 1000 && t.events[i].name == i % 7;
    CHECK(in_order, "events kept in order with their names");
    hta_trace_free(&t);
    hta_buf_free(&json);
}

static void test_event_selection_and_metadata(void)
{
    hta_trace t;
    hta_error err;
    const char *json =
        "{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"process_name\",\"args\":{\"name\":\"x\"}},"
        "{\"ph\":\"X\",\"name\":\"no cat\",\"ts\":1,\"dur\":1},"
        "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"no dur\",\"ts\":1},"
        "{\"ph\":\"i\",\"cat\":\"c\",\"name\":\"instant\",\"ts\":1,\"dur\":1},"
        "{\"args\":{\"nested\":[[[{\"a\":[1,2,{\"b\":null}]}]]],\"stream\":4294967295},"
        "\"dur\":5,\"ts\":10,\"name\":\"Context "
        "Sync\",\"cat\":\"cuda_sync\",\"ph\":\"X\",\"pid\":\"Spans\"}],"
        "\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":5,\"world_size\":8},\"x\":[true,false,"
        "null]}";
    CHECK(parse(json, &t, &err) == 0, "parse: %s", err.text);
    CHECK(t.n_events == 1, "only the complete event with cat and dur is kept: %zu", t.n_events);
    if (t.n_events == 1) {
        CHECK(t.events[0].stream == 4294967295u, "stream %u", t.events[0].stream);
        CHECK(t.events[0].kernel_type == HTA_KT_OTHER, "Context Sync is OTHER");
        CHECK(strcmp(hta_event_name(&t, &t.events[0]), "Context Sync") == 0, "name");
    }
    CHECK(t.rank == 5 && t.world_size == 8, "distributedInfo after traceEvents: %lld",
          (long long)t.rank);
    hta_trace_free(&t);
}

static void test_escapes_are_decoded(void)
{
    hta_trace t;
    hta_error err;
    const char *json = "[{\"ph\":\"X\",\"cat\":\"k\",\"name\":\"a\\\"b\\u00e9\\ud83d\\ude00\\n\","
                       "\"ts\":0,\"dur\":1}]";
    CHECK(parse(json, &t, &err) == 0, "parse: %s", err.text);
    if (t.n_events == 1)
        CHECK(strcmp(hta_event_name(&t, &t.events[0]), "a\"b\xc3\xa9\xf0\x9f\x98\x80\n") == 0,
              "decoded name '%s'", hta_event_name(&t, &t.events[0]));
    hta_trace_free(&t);
}

static void expect_error(const char *json, const char *fragment)
{
    hta_trace t;
    hta_error err = {{0}};
    int rc = parse(json, &t, &err);
    CHECK(rc != 0 && strstr(err.text, fragment), "'%s' -> '%s' (wanted '%s')", json, err.text,
          fragment);
}

static void test_malformed_inputs_fail_with_offsets(void)
{
    expect_error("", "byte 0: empty file");
    expect_error("   ", "empty file");
    expect_error("[{\"ph\":\"X\"", "byte 10:");
    expect_error("[{\"ph\":\"X", "unterminated string");
    expect_error("[{\"ts\":12", "byte 9");
    expect_error("[{\"ts\":1.}]", "malformed number");
    expect_error("[{\"ts\":01}]", "malformed number");
    expect_error("[{\"a\":tru}]", "invalid literal");
    expect_error("[{\"a\":[1,2}]", "expected ',' or ']'");
    expect_error("[1]", "expected an event object");
    expect_error("{\"traceEvents\":[]}x", "byte 18: unexpected data");
    expect_error("{\"schemaVersion\":1}", "no traceEvents");
    expect_error("{\"traceEvents\":[{\"name\":\"\\q\"}]}", "bad escape");
}

/* Python's json, and so HTA, reads NaN, Infinity and -Infinity: the file
 * reads, whatever the refill size; an event whose ts or dur is one is
 * skipped and counted, one that has them only elsewhere is kept. */
static void test_nonfinite_literals(void)
{
    const char *json =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"a\",\"ts\":NaN,\"dur\":1},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"b\",\"ts\":1,\"dur\":Infinity},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"c\",\"ts\":-Infinity,\"dur\":1},"
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"d\",\"pid\":-Infinity,"
        "\"tid\":NaN,\"ts\":5,\"dur\":2,\"args\":{\"stream\":7,\"x\":[NaN,-Infinity,-3],"
        "\"memory bandwidth (GB/s)\":NaN,\"bytes\":Infinity}}],"
        "\"distributedInfo\":{\"rank\":NaN,\"world_size\":-Infinity}}";
    for (size_t refill = 0; refill < 24; refill++) {
        hta_trace t;
        hta_error err = {{0}};
        int rc = hta_read_trace_memory(json, strlen(json), refill, "mem", &t, &err);
        CHECK(rc == 0, "refill %zu: %s", refill, err.text);
        if (rc)
            continue;
        CHECK(t.n_events == 1 && t.skipped_events == 3, "refill %zu: %zu kept, %llu skipped",
              refill, t.n_events, (unsigned long long)t.skipped_events);
        if (t.n_events == 1)
            CHECK(t.events[0].ts_ns == 5000 && t.events[0].dur_ns == 2000 &&
                      strcmp(hta_event_name(&t, &t.events[0]), "d") == 0,
                  "the event with finite times is kept");
        CHECK(t.rank == -1 && t.world_size == -1, "non-finite rank and size are absent");
        hta_trace_free(&t);
    }
    expect_error("[{\"a\":-Inf}]", "invalid literal");
    expect_error("[{\"a\":-x}]", "malformed number");
    expect_error("[{\"ts\":Nan}]", "invalid literal");
}

/* Times out of the model's bounds (a start past 4e15 us or before 0, a
 * duration past 1e12 us or below 0, a start plus duration past int64
 * nanoseconds) are skipped and counted; the bounds themselves are kept. */
static void test_times_out_of_bounds(void)
{
    const char *json =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"a\",\"ts\":8126725898082287,"
        "\"dur\":1682725898082297},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"b\",\"ts\":4000000000000000.001,"
        "\"dur\":1},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"c\",\"ts\":-0.001,\"dur\":1},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"d\",\"ts\":5,\"dur\":-0.001},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"e\",\"ts\":5,"
        "\"dur\":1000000000000.001},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"f\",\"ts\":4000000000000000,"
        "\"dur\":1000000000000},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"g\",\"ts\":0,\"dur\":0}]}";
    hta_trace t;
    hta_error err = {{0}};
    CHECK(parse(json, &t, &err) == 0, "%s", err.text);
    CHECK(t.n_events == 2 && t.skipped_events == 5, "%zu kept, %llu skipped", t.n_events,
          (unsigned long long)t.skipped_events);
    if (t.n_events == 2)
        CHECK(t.events[0].ts_ns == 4000000000000000000LL &&
                  t.events[0].dur_ns == 1000000000000000LL && t.events[1].ts_ns == 0 &&
                  t.events[1].dur_ns == 0,
              "the events on the bounds are kept as written");
    hta_trace_free(&t);
}

/* The context key (model/trace.h) of event i: pid, tid, Input Dims and
 * Input type as written, joined by HTA_CONTEXT_SEPARATOR, shown with '|'. */
static const char *context_key(const hta_trace *t, size_t i, char *out, size_t cap)
{
    snprintf(out, cap, "%s", hta_strtab_get(&t->cpu_contexts, t->events[i].stream));
    for (char *c = out; *c; c++)
        *c = *c == HTA_CONTEXT_SEPARATOR ? '|' : *c;
    return out;
}

/* Op arguments are kept as their JSON text, byte for byte, whether they
 * take the plain-array scan (whole numbers, strings without escapes) or
 * the general skip (fractions, exponents, escapes, deep nesting, values
 * that are not arrays). */
static void test_op_arguments_kept_as_written(void)
{
    static const char *const dims[] = {
        "[[1024, 4096], [], [ ]]", "[ -1 ,\n 0\t]", "[[1.5, 2e3]]", "[\"a\\\"b\", \"\"]",
        "[[[[[[[[[[[[[[[[[[[[7]]]]]]]]]]]]]]]]]]]]", "\"scalar\"", "[[], [\"x\", [3]]]",
    };
    static const char *const written[] = {
        "[[1024, 4096], [], [ ]]", "[ -1 ,\n 0\t]", "[[1.5, 2e3]]", "[\"a\\\"b\", \"\"]",
        "[[[[[[[[[[[[[[[[[[[[7]]]]]]]]]]]]]]]]]]]]", "\"scalar\"", "[[], [\"x\", [3]]]",
    };
    for (size_t k = 0; k < sizeof dims / sizeof dims[0]; k++) {
        char json[512], key[512], want[512];
        snprintf(json, sizeof json,
                 "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":2,"
                 "\"ts\":1,\"dur\":1,\"args\":{\"Input Dims\": %s, \"Input type\":[\"float\"]}}]",
                 dims[k]);
        snprintf(want, sizeof want, "1|2|%s|[\"float\"]|", written[k]);
        hta_trace t;
        hta_error err;
        int rc = parse(json, &t, &err);
        CHECK(rc == 0 && t.n_events == 1, "%s: %s", dims[k], rc ? err.text : "events");
        if (rc)
            continue;
        CHECK(strcmp(context_key(&t, 0, key, sizeof key), want) == 0, "'%s' kept as '%s'", want,
              key);
        hta_trace_free(&t);
    }
    expect_error("[{\"ph\":\"X\",\"args\":{\"Input Dims\":[1,]}}]", "unexpected character");
    expect_error("[{\"ph\":\"X\",\"args\":{\"Input Dims\":[[1] [2]]}}]", "expected ',' or ']'");
    expect_error("[{\"ph\":\"X\",\"args\":{\"Input Dims\":[1}}]", "expected ',' or ']'");
    expect_error("[{\"ph\":\"X\",\"args\":{\"Input type\":[\"a]}}]", "unterminated string");
}

/* Concrete Inputs join the context of the ops whose FLOPs depend on them
 * (a convolution's stride and padding), not of the others, whose values
 * change from call to call; deviceProperties names the GPU. */
static void test_concrete_inputs_and_device(void)
{
    static const char *const ops[] = {"aten::convolution", "aten::select"};
    static const char *const want[] = {"1|2|[[1], []]|[\"float\"]|[\"\", \"[2, 2]\"]",
                                       "1|2|[[1], []]|[\"float\"]|"};
    for (int k = 0; k < 2; k++) {
        char json[512], key[512];
        snprintf(json, sizeof json,
                 "{\"deviceProperties\": [{\"id\": 0, \"name\": \"AMD Instinct MI300X\"}], "
                 "\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":1,"
                 "\"tid\":2,\"ts\":1,\"dur\":1,\"args\":{\"Input Dims\": [[1], []], "
                 "\"Concrete Inputs\": [\"\", \"[2, 2]\"], \"Input type\":[\"float\"]}}]}",
                 ops[k]);
        hta_trace t;
        hta_error err;
        int rc = parse(json, &t, &err);
        CHECK(rc == 0 && t.n_events == 1, "%s: %s", ops[k], rc ? err.text : "events");
        if (rc)
            continue;
        CHECK(strcmp(context_key(&t, 0, key, sizeof key), want[k]) == 0, "%s: '%s' kept as '%s'",
              ops[k], want[k], key);
        CHECK(strcmp(t.device_name, "AMD Instinct MI300X") == 0, "device '%s'", t.device_name);
        hta_trace_free(&t);
    }
}

static void test_deep_nesting_costs_no_stack(void)
{
    size_t depth = 100000;
    size_t len = 2 * depth + 128;
    char *json = malloc(len);
    size_t n = (size_t)sprintf(json, "[{\"ph\":\"X\",\"cat\":\"c\",\"ts\":1,\"dur\":1,\"args\":");
    for (size_t i = 0; i < depth; i++)
        json[n++] = '[';
    for (size_t i = 0; i < depth; i++)
        json[n++] = ']';
    n += (size_t)sprintf(json + n, "}]");
    hta_trace t;
    hta_error err;
    int rc = hta_read_trace_memory(json, n, 0, "deep", &t, &err);
    CHECK(rc == 0 && t.n_events == 1, "deep args: %s", rc ? err.text : "");
    if (rc == 0)
        hta_trace_free(&t);
    free(json);
}

static void test_rank_from_file_name(void)
{
    CHECK(hta_rank_from_file_name("/x/rank-3.json") == 3, "rank-3");
    CHECK(hta_rank_from_file_name("rank_12.json.gz") == 12, "rank_12");
    CHECK(hta_rank_from_file_name("a/rank0.json.gz") == 0, "rank0");
    CHECK(hta_rank_from_file_name("sampled_rank-1.json.gz") == 1, "sampled");
    CHECK(hta_rank_from_file_name("rank_not_found.json.gz") == -1, "none");
    CHECK(hta_rank_from_file_name("rank7dir/trace.json") == -1, "directory part ignored");
}

/* Appends text as one gzip member to f. */
static void write_gzip_member(FILE *f, const char *text)
{
    z_stream z = {0};
    unsigned char out[4096];
    deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (unsigned char *)text;
    z.avail_in = (uInt)strlen(text);
    z.next_out = out;
    z.avail_out = sizeof out;
    deflate(&z, Z_FINISH);
    fwrite(out, 1, sizeof out - z.avail_out, f);
    deflateEnd(&z);
}

/* A JSON document split over concatenated gzip members reads as one, as
 * with gzip -dc, whichever library inflates it. */
static void test_concatenated_gzip_members(void)
{
    char path[] = "/tmp/hta-units-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "wb");
    write_gzip_member(f, "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"a\",\"ts\":1,");
    write_gzip_member(f, "\"dur\":2,\"args\":{\"stream\":7}},");
    write_gzip_member(f, "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"b\",\"ts\":3,\"dur\":4}]");
    fclose(f);
    for (int inflater = HTA_INFLATER_ZLIB; inflater <= HTA_INFLATER_ISAL; inflater++) {
        if (!hta_inflater_available((hta_inflater)inflater))
            continue;
        hta_read_options with = {.inflater = (hta_inflater)inflater};
        hta_trace t;
        hta_error err;
        int rc = hta_read_trace_file(path, &with, &t, &err);
        CHECK(rc == 0 && t.n_events == 2 && t.events[0].dur_ns == 2000 &&
                  t.events[1].ts_ns == 3000,
              "concatenated members, inflater %d: %s", inflater, rc ? err.text : "wrong events");
        if (rc == 0)
            hta_trace_free(&t);
    }
    unlink(path);
}

static int same_events(const hta_trace *a, const hta_trace *b)
{
    if (a->n_events != b->n_events || a->rank != b->rank)
        return 0;
    for (size_t i = 0; i < a->n_events; i++) {
        const hta_event *x = &a->events[i], *y = &b->events[i];
        if (x->ts_ns != y->ts_ns || x->dur_ns != y->dur_ns ||
            hta_event_correlation(a, x) != hta_event_correlation(b, y) ||
            x->stream != y->stream || x->flags != y->flags ||
            strcmp(hta_event_name(a, x), hta_event_name(b, y)) != 0)
            return 0;
    }
    return 1;
}

/* A buffer boundary may fall inside any token: reading in 1, 7 and 4093
 * byte pieces must give exactly the events of one large read; so must
 * either gzip library. */
static void check_chunking_never_changes_events(const char *path, char *data, size_t len)
{
    hta_trace whole;
    hta_error err;
    if (hta_read_trace_file(path, NULL, &whole, &err)) {
        CHECK(0, "%s: %s", path, err.text);
        return;
    }
    size_t chunks[] = {len < 3000000 ? 1 : 5, 7, 4093};
    for (size_t c = 0; c < 3; c++) {
        hta_trace piece;
        int rc = hta_read_trace_memory(data, len, chunks[c], path, &piece, &err);
        CHECK(rc == 0 && same_events(&whole, &piece), "%s in %zu-byte chunks", path, chunks[c]);
        if (rc == 0)
            hta_trace_free(&piece);
    }
    /* Both gzip backends (when built) give the same events. */
    for (int inflater = HTA_INFLATER_ZLIB; inflater <= HTA_INFLATER_ISAL; inflater++) {
        if (!hta_inflater_available((hta_inflater)inflater))
            continue;
        hta_read_options with = {.inflater = (hta_inflater)inflater};
        hta_trace other;
        int rc = hta_read_trace_file(path, &with, &other, &err);
        CHECK(rc == 0 && same_events(&whole, &other), "%s with inflater %d", path, inflater);
        if (rc == 0)
            hta_trace_free(&other);
    }
    hta_trace_free(&whole);
}

/* Reads json, `events` kernels where kernel i is named "k<i>", starts at
 * 1000 + i us, lasts 5 us, on stream 7 with correlation 100 + i, in every
 * chunk size up to 24 bytes (so that a buffer boundary falls at each
 * byte) and a few larger ones, and checks each event's values. */
static void check_numbered_kernels(const hta_buf *json, int events, const char *label)
{
    for (size_t chunk = 0; chunk <= 80; chunk += chunk < 24 ? 1 : 19) {
        hta_trace t;
        hta_error err = {{0}};
        int rc = hta_read_trace_memory(json->data, json->len, chunk, label, &t, &err);
        CHECK(rc == 0 && t.n_events == (size_t)events, "%s, chunk %zu: %zu events: %s", label,
              chunk, rc ? 0 : t.n_events, err.text);
        for (size_t i = 0; rc == 0 && i < t.n_events; i++) {
            const hta_event *e = &t.events[i];
            char name[32];
            snprintf(name, sizeof name, "k%zu", i);
            CHECK(e->ts_ns == (int64_t)(1000 + i) * 1000 && e->dur_ns == 5000 &&
                      hta_event_is_gpu(e) && e->stream == 7 &&
                      hta_event_correlation(&t, e) == (int64_t)(100 + i) &&
                      strcmp(hta_event_name(&t, e), name) == 0,
                  "%s, chunk %zu: event %zu", label, chunk, i);
        }
        if (rc == 0)
            hta_trace_free(&t);
    }
}

/* Kineto's own layout, whose separators, keys and braces the reader
 * takes in one compare each, and layouts just off it (indentation one
 * space longer or shorter, a tab, no space, members swapped, one left
 * out): every event reads to the values it was written with, in every
 * chunk size, so that a buffer boundary falls at each byte. */
static void test_kineto_layout_and_near_misses(void)
{
    enum { MEMBERS = 8 };
    static const char *const kineto_sep[MEMBERS + 1] = {
        "{\n    ", ", ", ", ", ", ", ", ", ",\n    ", ", ", ",\n    ", "\n  }"};
    static const char *const other_sep[] = {",\n     ", ",\n   ", ",\t", ",", ", \n    "};
    static const char *const other_open[] = {"{\n     ", "{\n   ", "{ ", "{"};
    static const char *const other_close[] = {"\n   }", "\n     }", "}", " \n  }"};
    hta_buf json = {0};
    CHECK(hta_buf_append(&json, "[\n  ", 4) == 0, "append");
    int events = 0;
    /* variant 0: Kineto's; then each separator changed, each neighbour
     * pair swapped, pid or tid left out, the args opened or closed
     * otherwise */
    for (int variant = 0; variant < 1 + MEMBERS * 5 + MEMBERS + 2 + 8; variant++, events++) {
        char member[MEMBERS][128];
        int i = events;
        snprintf(member[0], 128, "\"ph\": \"X\"");
        snprintf(member[1], 128, "\"cat\": \"kernel\"");
        snprintf(member[2], 128, "\"name\": \"k%d\"", i);
        snprintf(member[3], 128, "\"pid\": 0");
        snprintf(member[4], 128, "\"tid\": 7");
        snprintf(member[5], 128, "\"ts\": %d", 1000 + i);
        snprintf(member[6], 128, "\"dur\": 5");
        const char *args_open = "{\n      ", *args_close = "\n    }";
        int v = variant - 1;
        if (v >= MEMBERS * 5 + MEMBERS + 2 && v < MEMBERS * 5 + MEMBERS + 6)
            args_open = other_open[v - (MEMBERS * 5 + MEMBERS + 2)];
        else if (v >= MEMBERS * 5 + MEMBERS + 6)
            args_close = other_close[v - (MEMBERS * 5 + MEMBERS + 6)];
        snprintf(member[7], 128, "\"args\": %s\"stream\": 7, \"correlation\": %d%s", args_open,
                 100 + i, args_close);
        const char *sep[MEMBERS + 1];
        memcpy(sep, kineto_sep, sizeof sep);
        int order[MEMBERS] = {0, 1, 2, 3, 4, 5, 6, 7}, skip = -1;
        if (v >= 0 && v < MEMBERS * 5) {
            int k = v / 5;
            sep[k] = k == 0 ? other_open[v % 4] : other_sep[v % 5];
        } else if (v >= MEMBERS * 5 && v < MEMBERS * 5 + MEMBERS - 1) {
            int k = v - MEMBERS * 5;
            order[k] = k + 1;
            order[k + 1] = k;
        } else if (v >= MEMBERS * 5 + MEMBERS - 1 && v < MEMBERS * 5 + MEMBERS + 2) {
            skip = 3 + (v - (MEMBERS * 5 + MEMBERS - 1)) % 2;
        }
        if (events)
            CHECK(hta_buf_append(&json, ",\n  ", 4) == 0, "append");
        for (int k = 0; k < MEMBERS; k++) {
            if (order[k] == skip)
                continue;
            const char *s = sep[k];
            CHECK(hta_buf_append(&json, s, strlen(s)) == 0 &&
                      hta_buf_append(&json, member[order[k]], strlen(member[order[k]])) == 0,
                  "append");
        }
        CHECK(hta_buf_append(&json, sep[MEMBERS], strlen(sep[MEMBERS])) == 0, "append");
    }
    CHECK(hta_buf_append(&json, "\n]\n", 3) == 0, "append");
    check_numbered_kernels(&json, events, "layout");
    hta_buf_free(&json);
}

/* The args keys a kernel or an op carries that nothing reads, matched
 * whole in place when written plainly, and near misses of each (a byte
 * changed in every 8-byte word of the key, one byte longer or shorter,
 * an escape): the members after each are read to the values written, in
 * every chunk size up to 24 bytes, so that a buffer boundary falls at
 * each byte of each key. */
static void test_skipped_args_keys_and_near_misses(void)
{
    static const char *const keys[] = {
        "Sequence number", "registers per thread", "blocks per SM", "warps per SM",
        "est. achieved occupancy %", "Fwd thread id", "block",
    };
    hta_buf json = {0};
    CHECK(hta_buf_append(&json, "[\n  ", 4) == 0, "append");
    int events = 0;
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        size_t len = strlen(keys[k]);
        /* variant 0: the key; 1..len: byte v-1 changed; then longer,
         * shorter, its first letter escaped */
        for (size_t v = 0; v <= len + 3; v++, events++) {
            char key[64];
            snprintf(key, sizeof key, "%s", keys[k]);
            if (v >= 1 && v <= len)
                key[v - 1] = key[v - 1] == 'X' ? 'Y' : 'X';
            else if (v == len + 1)
                snprintf(key, sizeof key, "%ss", keys[k]);
            else if (v == len + 2)
                key[len - 1] = '\0';
            else if (v == len + 3)
                snprintf(key, sizeof key, "\\u%04x%s", (unsigned)keys[k][0], keys[k] + 1);
            char event[512];
            snprintf(event, sizeof event,
                     "%s{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", \"pid\": 0,"
                     " \"tid\": 7,\n    \"ts\": %d, \"dur\": 5,\n    \"args\": {\n      \"%s\":"
                     " 12.5, \"stream\": 7,\n      \"%s\": [1, \"}\"], \"correlation\": %d\n    }\n"
                     "  }",
                     events ? ",\n  " : "", events, 1000 + events, key, key, 100 + events);
            CHECK(hta_buf_append(&json, event, strlen(event)) == 0, "append");
        }
    }
    CHECK(hta_buf_append(&json, "\n]\n", 3) == 0, "append");
    check_numbered_kernels(&json, events, "args keys");
    hta_buf_free(&json);
}

/* The lexer's shortcuts give what the general paths give: a line break
 * with 0 to 20 spaces of indentation before each member (the shortcut
 * reads 16 of them in one block), any other whitespace,
 * and arrays skipped in one scan when plain (numbers and escape-free
 * strings) or the general way when not; in every chunk size, so that a
 * buffer boundary falls at each byte.  A byte that is no token after the
 * indentation is an error at its own offset. */
static void test_indentation_and_skipped_arrays(void)
{
    hta_buf json = {0};
    CHECK(hta_buf_append(&json, "[", 1) == 0, "append");
    for (int spaces = 0; spaces <= 20; spaces++) {
        char pad[32];
        pad[0] = '\n';
        memset(pad + 1, ' ', (size_t)spaces);
        pad[spaces + 1] = '\0';
        char event[512];
        snprintf(event, sizeof event,
                 "%s{%s\"ph\": \"X\",%s\"cat\": \"kernel\",%s\"name\": \"k%d\",%s\"ts\": %d,"
                 "%s\"dur\": 5,%s\"args\": {%s\"grid\": [64, [8, \"a\"], -1],"
                 "%s\"block\": [1e2, \"b\\\"\", [], {\"x\": 1}],%s\"stream\": %d,"
                 "%s\t \r\n\"correlation\": %d%s}%s}",
                 spaces ? "," : "", pad, pad, pad, spaces, pad, 1000 + spaces, pad, pad, pad,
                 pad, pad, 7 + spaces, pad, 100 + spaces, pad, pad);
        CHECK(hta_buf_append(&json, event, strlen(event)) == 0, "append");
    }
    CHECK(hta_buf_append(&json, "\n]\n", 3) == 0, "append");
    for (size_t chunk = 0; chunk <= 80; chunk += chunk < 20 ? 1 : 13) {
        hta_trace t;
        hta_error err = {{0}};
        int rc = hta_read_trace_memory(json.data, json.len, chunk, "indent", &t, &err);
        CHECK(rc == 0 && t.n_events == 21, "chunk %zu: %s", chunk, err.text);
        for (size_t i = 0; rc == 0 && i < t.n_events; i++) {
            const hta_event *e = &t.events[i];
            char name[32];
            snprintf(name, sizeof name, "k%zu", i);
            CHECK(e->ts_ns == (int64_t)(1000 + i) * 1000 && e->dur_ns == 5000 &&
                      e->stream == 7 + i && hta_event_correlation(&t, e) == (int64_t)(100 + i) &&
                      strcmp(hta_event_name(&t, e), name) == 0,
                  "chunk %zu: event %zu", chunk, i);
        }
        if (rc == 0)
            hta_trace_free(&t);
    }
    hta_buf_free(&json);
    for (int spaces = 14; spaces <= 18; spaces++) {
        char bad[64];
        int at = snprintf(bad, sizeof bad, "[{\"ph\":\"X\",\n%*s", spaces, "");
        snprintf(bad + at, sizeof bad - (size_t)at, "\x01\"a\":1}]");
        char want[32];
        snprintf(want, sizeof want, "byte %d: expected a string key", at);
        expect_error(bad, want);
    }
    /* Keys that the in-place match must leave to the general path. */
    const char *keys = "[{\"pha\":\"i\",\"ph\" :\"X\",\"p\":1,\"ts2\":9,\"t\\u0073\":3,"
                       "\"cat\":\"c\",\"names\":\"no\",\"name\":\"n\",\"du\":7,\"dur\"\n:4,"
                       "\"argsx\":{\"stream\":1},\"d\":{}}]";
    hta_trace t;
    hta_error err = {{0}};
    int rc = parse(keys, &t, &err);
    CHECK(rc == 0 && t.n_events == 1 && t.events[0].ts_ns == 3000 && t.events[0].dur_ns == 4000 &&
              !hta_event_is_gpu(&t.events[0]) && strcmp(hta_event_name(&t, &t.events[0]), "n") == 0,
          "keys like the event keys: %s", err.text);
    if (rc == 0)
        hta_trace_free(&t);
    const char *args = "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":2,"
                       "\"args\":{\"streams\":3,\"stream\" :5,\"correlationx\":1,"
                       "\"c\\u006frrelation\":9,\"grid\":{\"x\":[1]},\"queued\":\"no\"}}]";
    rc = parse(args, &t, &err);
    CHECK(rc == 0 && t.n_events == 1 && hta_event_is_gpu(&t.events[0]) &&
              t.events[0].stream == 5 && hta_event_correlation(&t, &t.events[0]) == 9,
          "args keys like the args keys: %s", err.text);
    if (rc == 0)
        hta_trace_free(&t);
    expect_error("[{\"a\":[1,[2,\"x\"}]", "expected ',' or ']'");
    expect_error("[{\"a\":[1,\"x\\", "unterminated string");
}

/* The pre-scan's classifiers (parse/json_scan.h) agree with the byte
 * loop on every mask and carry, block after block: on bytes drawn from
 * the characters it classifies, and on backslash runs of every length
 * ending at every byte around a block boundary before a quote. */
static void expect_same_blocks(const char *bytes, size_t blocks, const char *what)
{
    const js_scan_level levels[] = {JS_SCAN_AVX2, JS_SCAN_BEST};
    for (size_t l = 0; l < 2; l++) {
        const char *used;
        js_classifier(levels[l], &used);
        long at = js_first_disagreement(levels[l], bytes, blocks);
        CHECK(at < 0, "%s: %s differs from the byte loop in block %ld", what, used, at);
    }
}

static void test_prescan_classifiers_agree(void)
{
    enum { BLOCKS = 64 };
    static char bytes[BLOCKS * 64 + JS_READ_PAST_BYTES];
    const char alphabet[] = "\"\\\\\\ \n\r\t:,}{[]0123456789-.eph\"x\x01\x80";
    unsigned seed = 12345;
    for (int round = 0; round < 200; round++) {
        for (size_t i = 0; i < BLOCKS * 64; i++) {
            seed = seed * 1103515245u + 12345u;
            bytes[i] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
        }
        expect_same_blocks(bytes, BLOCKS, "random bytes");
    }
    for (size_t run = 1; run <= 70; run++)
        for (size_t end = run > 50 ? run : 50; end <= 140; end++) {
            memset(bytes, 'a', 4 * 64);
            memset(bytes + end - run, '\\', run);
            bytes[end] = '"';
            bytes[end + 1] = '}';
            expect_same_blocks(bytes, 4, "a backslash run before a quote");
        }
}

/* Parses json with the pre-scan at every level and without it, in refills
 * of 1 to 80 bytes and whole: the same events, memory samples, skipped
 * count and error text each time. */
static void expect_prescan_changes_nothing(const char *json, const char *what)
{
    hta_trace want;
    hta_error want_err = {{0}};
    int want_rc = hta_read_trace_memory_scanned(json, strlen(json), 0, JS_SCAN_OFF, "scan", &want,
                                                &want_err);
    const js_scan_level levels[] = {JS_SCAN_PORTABLE, JS_SCAN_AVX2, JS_SCAN_BEST};
    for (size_t l = 0; l < 3; l++)
        for (size_t chunk = 0; chunk <= 80; chunk += chunk < 20 ? 1 : 13) {
            hta_trace t;
            hta_error err = {{0}};
            int rc = hta_read_trace_memory_scanned(json, strlen(json), chunk, levels[l], "scan", &t,
                                                   &err);
            CHECK(rc == want_rc && strcmp(err.text, want_err.text) == 0 &&
                      (rc || (same_events(&t, &want) && t.skipped_events == want.skipped_events &&
                              t.memory.n == want.memory.n)),
                  "%s: level %zu, chunk %zu: %s / %s", what, l, chunk, err.text, want_err.text);
            if (rc == 0)
                hta_trace_free(&t);
        }
    if (want_rc == 0)
        hta_trace_free(&want);
}

/* An op's arguments repeat: an array whose bytes were found before ends
 * where it ended then, without a scan.  Repeats, arrays that extend or
 * differ late from one seen (also past the memo's 32 hashed bytes and
 * beyond its longest text), a repeat cut short by a malformed rest, and
 * refills at every byte: each event keeps its own text, as written, and
 * errors and offsets are those of the parse without the memo. */
static void test_repeated_arrays_end_where_scanned(void)
{
    static char long_dims[300];
    static char long_other[300];
    memset(long_dims, 0, sizeof long_dims);
    strcpy(long_dims, "[[1]");
    while (strlen(long_dims) < 200)
        strcat(long_dims, ", [2, 3]");
    strcpy(long_other, long_dims);
    strcat(long_dims, "]");
    strcat(long_other, ", [4]]");
    const char *const dims[] = {
        "[[1024, 4096], [4096]]", "[[1024, 4096], [4096]]", "[[1024, 4096], [4096], []]",
        "[[], [], [], [], [], [], [], [], [], [], []]",
        "[[], [], [], [], [], [], [], [], [], [], [], []]",
        "[[], [], [], [], [], [], [], [], [], [], []]", "[]", "[]", "[[1024, 4096], [4096]]",
        long_dims, long_other, long_dims, "[\"float\", \"Scalar\", \"\"]",
        "[\"float\", \"Scalar\", \"\"]",
    };
    const size_t n = sizeof dims / sizeof *dims;
    static char json[8192];
    size_t len = 0;
    len += (size_t)snprintf(json + len, sizeof json - len, "[");
    for (size_t k = 0; k < n; k++)
        len += (size_t)snprintf(json + len, sizeof json - len,
                                "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%zu\",\"pid\":1,"
                                "\"tid\":2,\"ts\":%zu,\"dur\":1,\"args\":{\"Input Dims\": %s}}",
                                k ? ", " : "", k % 3, k + 1, dims[k]);
    snprintf(json + len, sizeof json - len, "]");
    expect_prescan_changes_nothing(json, "repeated arrays");
    const js_scan_level levels[] = {JS_SCAN_OFF, JS_SCAN_BEST};
    for (size_t l = 0; l < 2; l++)
        for (size_t chunk = 0; chunk <= 80; chunk += chunk < 20 ? 1 : 13) {
            hta_trace t;
            hta_error err = {{0}};
            int rc = hta_read_trace_memory_scanned(json, strlen(json), chunk, levels[l], "memo",
                                                   &t, &err);
            CHECK(rc == 0 && t.n_events == n, "level %zu, chunk %zu: %s", l, chunk, err.text);
            if (rc)
                continue;
            for (size_t k = 0; k < n; k++) {
                char key[512], want[512];
                snprintf(want, sizeof want, "1|2|%s||", dims[k]);
                CHECK(strcmp(context_key(&t, k, key, sizeof key), want) == 0,
                      "level %zu, chunk %zu, event %zu kept '%s'", l, chunk, k, key);
            }
            hta_trace_free(&t);
        }
    /* Many arrays alike in their first 16 bytes, more than the memo
     * holds: some share its entries, and each keeps its own end. */
    enum { MANY = 600 };
    char *many = malloc(2 * MANY * 160 + 2);
    CHECK(many != NULL, "out of memory");
    if (!many)
        return;
    len = 0;
    for (size_t k = 0; k < 2 * MANY; k++)
        len += (size_t)sprintf(many + len,
                               "%c{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,"
                               "\"tid\":2,\"ts\":%zu,\"dur\":1,\"args\":{\"Input Dims\": "
                               "[[1024, 4096], [%zu]]}}",
                               k ? ',' : '[', k + 1, (k * 7919) % MANY);
    strcpy(many + len, "]");
    for (size_t l = 0; l < 2; l++)
        for (size_t chunk = 0; chunk <= 4096; chunk += 4093) {
            hta_trace t;
            hta_error err = {{0}};
            int rc = hta_read_trace_memory_scanned(many, strlen(many), chunk, levels[l], "memo",
                                                   &t, &err);
            CHECK(rc == 0 && t.n_events == 2 * MANY, "many: level %zu, chunk %zu: %s", l, chunk,
                  err.text);
            if (rc)
                continue;
            size_t wrong = 0;
            for (size_t k = 0; k < 2 * MANY; k++) {
                char key[512], want[512];
                snprintf(want, sizeof want, "1|2|[[1024, 4096], [%zu]]||", (k * 7919) % MANY);
                wrong += strcmp(context_key(&t, k, key, sizeof key), want) != 0;
            }
            CHECK(wrong == 0, "many: level %zu, chunk %zu: %zu events keep another text", l,
                  chunk, wrong);
            hta_trace_free(&t);
        }
    free(many);
    static const char *const cut[] = {
        "[[1024, 4096], [4096]] x", "[[1024, 4096], [4096]", "[[1024, 4096], [4096]]]",
        "[[1024, 4096], [4096]], 5", "[[1024, 4096], [4096]],}",
    };
    for (size_t c = 0; c < sizeof cut / sizeof *cut; c++) {
        snprintf(json, sizeof json,
                 "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"ts\":1,\"dur\":1,"
                 "\"args\":{\"Input Dims\": [[1024, 4096], [4096]]}}, "
                 "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"ts\":2,\"dur\":1,"
                 "\"args\":{\"Input Dims\": %s}}]",
                 cut[c]);
        expect_prescan_changes_nothing(json, cut[c]);
    }
}

/* A flow event as Kineto writes it is skipped by its layout; each near
 * miss (a number or string the layout's plain forms exclude, another
 * member, a second ph, a cut) is left to the pre-scan's skip or the
 * member-by-member parse, which then keeps, rejects or fails exactly as
 * without the pre-scan, at every refill size. */
static void test_written_flow_events_end_as_parsed(void)
{
    /* ph, id, pid, tid, ts, cat, name, and what follows name */
    static const char *const flows[][8] = {
        {"s", "7", "4515", "4515", "1683564901225235", "\"ac2g\"", "\"ac2g\"", "\n  }"},
        {"f", "7", "0", "25", "4458676522709.059", "\"fwdbwd\"", "\"a}b:,{[ph\"",
         ", \"bp\": \"e\"\n  }"},
        {"f", "0", "0", "0", "0", "\"\"", "\"ph\"", ", \"bp\": \"\"\n  }"},
        {"f", "123456789012345678901234567890", "1", "1",
         "12345678901234567890.12345678901234567890", "\"c\"", "\"n\"", "\n  }"},
        {"s", "07", "1", "1", "1", "\"c\"", "\"n\"", "\n  }"},
        {"s", "7", "01", "1", "1", "\"c\"", "\"n\"", "\n  }"},
        {"s", "7", "1", "1", "01", "\"c\"", "\"n\"", "\n  }"},
        {"s", "7", "1", "1", "1.", "\"c\"", "\"n\"", "\n  }"},
        {"s", "7", "1", "1", "1.05", "\"c\"", "\"n\"", "\n  }"},
        {"s", "7", "1", "1", "1.5.3", "\"c\"", "\"n\"", "\n  }"},
        {"s", "7", "1", "1", "1e5", "\"c\"", "\"n\"", "\n  }"},
        {"s", "7", "-1", "1", "1", "\"c\"", "\"n\"", "\n  }"},
        {"s", "7", "\"1\"", "1", "1", "\"c\"", "\"n\"", "\n  }"},
        {"s", "7", "1", "1", "1", "\"c\"", "\"a\\\"b\"", "\n  }"},
        {"s", "7", "1", "1", "1", "5", "\"n\"", "\n  }"},
        {"s", "7", "1", "1", "1", "\"c\"", "\"n\"", ", \"bp\": 5\n  }"},
        {"s", "7", "1", "1", "1", "\"c\"", "\"n\"", ", \"bp\": \"e\", \"x\": 1\n  }"},
        {"s", "7", "1", "1", "1", "\"c\"", "\"n\"", ", \"ph\": \"X\", \"dur\": 4\n  }"},
        {"s", "7", "1", "1", "2", "\"c\"", "\"n\"", "\n  "},
        {"s", "7", "1", "1", "2", "\"c\"", "\"n", ""},
        {"s", "7", "1", "1", "2", "\"c\"", "\"n\"", "\n  }}"},
        {"s", "7", "1", "1", "2", "\"c\"", "\"n\"", "\n  } x"},
    };
    for (size_t k = 0; k < sizeof flows / sizeof *flows; k++) {
        const char *const *f = flows[k];
        char json[1024];
        snprintf(json, sizeof json,
                 "[{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"a\",\"ts\":1,\"dur\":2},\n  {\n"
                 "    \"ph\": \"%s\", \"id\": %s, \"pid\": %s, \"tid\": %s, \"ts\": %s,\n"
                 "    \"cat\": %s, \"name\": %s%s,{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":3,"
                 "\"args\":{\"Bytes\":5}}]",
                 f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]);
        char what[64];
        snprintf(what, sizeof what, "flow %zu", k);
        expect_prescan_changes_nothing(json, what);
    }
}

/* The members after a ph that reads nothing, with the block boundaries
 * of the pre-scan (64 bytes from the member after ph) at every byte of
 * them: skipped when plain, left to the member-by-member parse when not,
 * which then keeps, rejects or fails exactly as without the pre-scan. */
static void test_prescan_skips_only_what_nothing_reads(void)
{
    static const char *const tails[] = {
        "\"id\": 7, \"pid\": 4515, \"tid\": 25, \"ts\": 4458676522709.059,\n    "
        "\"cat\": \"ac2g\", \"name\": \"a}b:,{[ph\", \"bp\": \"e\"\n  }", /* skipped */
        "\"ts\":5,\"ph\":\"X\",\"cat\":\"c\",\"name\":\"n\",\"dur\":1}",  /* ph again: kept */
        "\"ts\":5,\"p\\u0068\":\"X\",\"cat\":\"c\",\"name\":\"n\",\"dur\":1}",
        "\"ts\": 0123}",
        "\"ts\": 1.5.3}",
        "\"ts\": 1.}",
        "\"ts\": .5}",
        "\"ts\": 1..2}",
        "\"ts\": 0.5, \"dur\": 00.5}",
        "\"ts\": 0.5, \"dur\": 10.05}",
        "\"ts\": -}",
        "\"ts\": 1e}",
        "\"name\": \"\\q\"}",
        "\"name\": \"\\\\\\\\\\\\\\\"\", \"ts\": 00}",
        "\"args\": {\"a\": [1, {}]}, \"ts\": 1}",
        "\"a\" 1}",
        "\"a\": 1 2}",
        "\"a\": 1,}",
        "\"a\": \"b\" \"c\": 1}",
        "\"a\":}",
        "\"a\": 1",
        "\"a\": nul}",
        "\"a\": true, \"b\": null, \"c\": -1.5e3}",
        "\"ph\": \"i\"}",
        "}",
    };
    static const char *const phs[] = {"f", "s", "M", "X ", "i", "X"};
    for (size_t t = 0; t < sizeof tails / sizeof *tails; t++)
        for (size_t ph = 0; ph < sizeof phs / sizeof *phs; ph++)
            for (int pad = 0; pad <= 70; pad += ph == 0 ? 1 : 23) {
                char json[512];
                snprintf(json, sizeof json,
                         "[{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"a\",\"ts\":1,\"dur\":2},"
                         "{\"ph\": \"%s\",%*s%s,{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":3,"
                         "\"args\":{\"Bytes\":5}}]",
                         phs[ph], pad, "", tails[t]);
                char what[64];
                snprintf(what, sizeof what, "tail %zu, ph %s, %d spaces", t, phs[ph], pad);
                expect_prescan_changes_nothing(json, what);
            }
    /* ... and the plain tail is indeed skipped at every boundary, the
     * others not (the parse above would hide a skip that never happens). */
    for (size_t t = 0; t < 3; t++)
        for (int pad = 0; pad <= 70; pad++) {
            static char region[256 + JS_READ_PAST_BYTES];
            memset(region, 0, sizeof region);
            int len = snprintf(region, 256, ",%*s%s, {", pad, "", tails[t]);
            const char *want = t == 0 ? strrchr(region, '}') : NULL;
            /* without AVX2 only the byte loop's skip exists */
            const js_scan_level levels[] = {JS_SCAN_PORTABLE, JS_SCAN_AVX2, JS_SCAN_BEST};
            for (size_t l = 0; l < 3; l++) {
                js_skip_fn skip = js_skipper(levels[l]);
                if (!skip)
                    continue;
                CHECK(skip(region, region + len) == want,
                      "skip of tail %zu after %d spaces, level %zu", t, pad, l);
                CHECK(skip(region, region + (want ? want - region : len)) == NULL,
                      "a skip that would reach the buffer's end, tail %zu, level %zu", t, l);
            }
        }
}

int main(int argc, char **argv)
{
    test_prescan_classifiers_agree();
    test_prescan_skips_only_what_nothing_reads();
    test_repeated_arrays_end_where_scanned();
    test_written_flow_events_end_as_parsed();
    test_numbers_are_exact_nanoseconds();
    test_times_in_every_digit_count();
    test_external_ids_in_every_digit_count();
    test_dense_events_outgrow_the_reservation();
    test_extras_follow_their_events();
    test_event_selection_and_metadata();
    test_escapes_are_decoded();
    test_malformed_inputs_fail_with_offsets();
    test_indentation_and_skipped_arrays();
    test_kineto_layout_and_near_misses();
    test_skipped_args_keys_and_near_misses();
    test_nonfinite_literals();
    test_times_out_of_bounds();
    test_op_arguments_kept_as_written();
    test_concrete_inputs_and_device();
    test_deep_nesting_costs_no_stack();
    test_rank_from_file_name();
    test_concatenated_gzip_members();
    const char *traces = unit_real_traces(argc, argv);
    if (traces) {
        int n = for_each_real_trace(traces, check_chunking_never_changes_events);
        CHECK(n >= 10, "only %d real traces under %s", n, traces);
    }
    return unit_finish();
}
