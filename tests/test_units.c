/* test_units.c: unit tests of the reader, interval arithmetic, kernel
 * classification, rank detection, the table packing, the radix sorts,
 * value counts and activity category tails, on inputs whose answers are
 * known by construction, and the reader's independence from where its
 * buffer boundaries fall and from how many threads parse a plain file, on
 * every real trace. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include "analysis/activity_categories.h"
#include "cli/options.h"
#include "model/step_filter.h"
#include "numerics/radix_sort.h"
#include "numerics/value_counts.h"
#include "parse/rank_name.h"
#include "parse/reader.h"
#include "parse/split_parse.h"
#include "run/analyse_file.h"
#include "table/packed_ints.h"
#include "table/table_stash.h"
#include "util/buf.h"

static int failures, checks;

#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        checks++;                                                         \
        if (!(cond)) {                                                    \
            failures++;                                                   \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                   \
            printf(__VA_ARGS__);                                          \
            printf("\n");                                                 \
        }                                                                 \
    } while (0)

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
    CHECK(hta_step_filter(&t, 0, &stats, &err) == 0 && stats.applied, "step filter");
    CHECK(t.n_events == 6 && stats.dropped_gpu_events == 1, "kept %zu", t.n_events);
    CHECK(t.n_extras == 4, "extras after the filter %zu", t.n_extras);
    if (t.n_events != 6 || t.n_extras != 4) {
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
    CHECK(hta_rank_view_build(&view, &t, 0, 1) == 0, "view");
    CHECK(hta_rank_view_launch(&view, &t.events[2]) == &t.events[1], "launch by wide correlation");
    CHECK(hta_rank_view_launch(&view, &t.events[4]) == &t.events[3], "launch by narrow correlation");
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
        "\"dur\":5,\"ts\":10,\"name\":\"Context Sync\",\"cat\":\"cuda_sync\",\"ph\":\"X\",\"pid\":\"Spans\"}],"
        "\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":5,\"world_size\":8},\"x\":[true,false,null]}";
    CHECK(parse(json, &t, &err) == 0, "parse: %s", err.text);
    CHECK(t.n_events == 1, "only the complete event with cat and dur is kept: %zu", t.n_events);
    if (t.n_events == 1) {
        CHECK(t.events[0].stream == 4294967295u, "stream %u", t.events[0].stream);
        CHECK(t.events[0].kernel_type == HTA_KT_OTHER, "Context Sync is OTHER");
        CHECK(strcmp(hta_event_name(&t, &t.events[0]), "Context Sync") == 0, "name");
    }
    CHECK(t.rank == 5 && t.world_size == 8, "distributedInfo after traceEvents: %lld", (long long)t.rank);
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
    CHECK(rc != 0 && strstr(err.text, fragment), "'%s' -> '%s' (wanted '%s')", json, err.text, fragment);
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

static void test_interval_union_and_overlap(void)
{
    hta_interval a[] = {{10, 20}, {0, 5}, {5, 7}, {15, 30}, {40, 41}};
    size_t n = hta_intervals_union(a, 5);
    CHECK(n == 3, "touching intervals merge: %zu", n);
    CHECK(a[0].start == 0 && a[0].end == 7 && a[1].start == 10 && a[1].end == 30, "merged");
    CHECK(hta_intervals_length(a, n) == 7 + 20 + 1, "length");
    hta_interval b[] = {{6, 12}, {29, 45}};
    CHECK(hta_intervals_overlap(a, n, b, 2) == 1 + 2 + 1 + 1, "overlap %lld",
          (long long)hta_intervals_overlap(a, n, b, 2));
}

static void test_kernel_types(void)
{
    CHECK(hta_classify_kernel("ncclDevKernel_AllReduce_Sum_f32") == HTA_KT_COMMUNICATION, "nccl");
    CHECK(hta_classify_kernel("void foo<ncclKernel_x>") == HTA_KT_COMMUNICATION, "ncclKernel");
    CHECK(hta_classify_kernel("Memcpy HtoD (Pinned -> Device)") == HTA_KT_MEMORY, "memcpy");
    CHECK(hta_classify_kernel("Memset (Device)") == HTA_KT_MEMORY, "memset");
    CHECK(hta_classify_kernel("ampere_sgemm_128x64_tn") == HTA_KT_COMPUTATION, "gemm");
    CHECK(hta_classify_kernel("Context Sync") == HTA_KT_OTHER, "sync");
    CHECK(hta_classify_kernel("cudaLaunchKernel") == HTA_KT_OTHER, "launch");
    CHECK(hta_classify_kernel("void copyMemcpyKernel") == HTA_KT_OTHER, "contains Memcpy");
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

/* Timeline segments travel packed in a string cell: every value comes
 * back, and no byte is NUL (which would cut the cell short). */
static void test_packed_ints_round_trip(void)
{
    static const uint64_t values[] = {0, 1, 126, 127, 128, 16255, 16256, 16257,
                                      1683564901225140123ull, INT64_MAX, UINT64_MAX};
    size_t n = sizeof values / sizeof *values;
    hta_buf packed = {0};
    for (size_t i = 0; i < n; i++)
        CHECK(hta_pack_u64(&packed, values[i]) == 0, "pack");
    CHECK(strlen(packed.data) == packed.len, "no NUL byte inside");
    CHECK(packed.len == 1 + 1 + 1 + 2 + 2 + 2 + 3 + 3 + 9 + 10 + 10, "digits per value");
    const char *p = packed.data;
    uint64_t v;
    for (size_t i = 0; i < n; i++)
        CHECK(hta_unpack_u64(&p, &v) == 1 && v == values[i], "value back");
    CHECK(hta_unpack_u64(&p, &v) == 0, "end of the string");
    hta_buf_free(&packed);
}

/* Series divide out their common factor and come back exactly: whole
 * microseconds, signed values down to INT64_MIN, all zeros. */
static void test_packed_series_round_trip(void)
{
    static const uint64_t micros[] = {0, 2000, 59000, 127000, 1683564901225140000ull};
    static const int64_t signed_values[][3] = {
        {-1000, 0, 3000}, {INT64_MIN, INT64_MAX, -1}, {INT64_MIN, 0, 0}, {0, 0, 0}};
    hta_buf packed = {0};
    CHECK(hta_pack_series(&packed, micros, 5) == 0, "pack series");
    CHECK(strlen(packed.data) == packed.len, "no NUL byte inside");
    CHECK(packed.len == 2 + 1 + 1 + 1 + 2 + 8, "factor 1000, then values / 1000");
    hta_series s;
    uint64_t u;
    hta_series_open(&s, packed.data);
    for (size_t i = 0; i < 5; i++)
        CHECK(hta_series_next(&s, &u) == 1 && u == micros[i], "unsigned value back");
    CHECK(hta_series_next(&s, &u) == 0, "end of the series");
    for (size_t k = 0; k < sizeof signed_values / sizeof *signed_values; k++) {
        packed.len = 0;
        CHECK(hta_pack_signed_series(&packed, signed_values[k], 3) == 0, "pack signed");
        int64_t v;
        hta_series_open(&s, packed.data);
        for (size_t i = 0; i < 3; i++)
            CHECK(hta_series_next_signed(&s, &v) == 1 && v == signed_values[k][i],
                  "signed value back");
        CHECK(hta_series_next_signed(&s, &v) == 0, "end of the signed series");
    }
    hta_series_open(&s, "");
    CHECK(hta_series_next(&s, &u) == 0, "empty series");
    hta_buf_free(&packed);
}

/* A series packed from values produced twice (the timeline's layers) is
 * byte for byte the series packed from an array, all zeros included. */
static void test_packed_series_in_two_passes(void)
{
    static const uint64_t series[][4] = {
        {0, 2000, 59000, 127000}, {3, 6, 9, 12}, {0, 0, 0, 0}, {7, 1, 0, 5}};
    for (size_t k = 0; k < sizeof series / sizeof *series; k++) {
        hta_buf whole = {0}, passes = {0};
        CHECK(hta_pack_series(&whole, series[k], 4) == 0, "pack from the array");
        uint64_t factor = 0;
        for (size_t i = 0; i < 4; i++)
            factor = hta_series_factor(factor, series[k][i]);
        int rc = hta_pack_series_start(&passes, &factor);
        for (size_t i = 0; i < 4; i++)
            rc |= hta_pack_series_value(&passes, series[k][i], factor);
        CHECK(rc == 0 && passes.len == whole.len &&
                  memcmp(passes.data, whole.data, whole.len) == 0,
              "same bytes from two passes");
        hta_buf_free(&whole);
        hta_buf_free(&passes);
    }
}

/* Rows one trace at a time through the stash come back as if appended to
 * one set directly: tables in first-seen order, rows in trace order. */
static void test_table_stash_keeps_order(void)
{
    static const hta_column cols[] = {{"rank", HTA_COL_I64}, {"name", HTA_COL_STR}};
    static const char *const tables[][2] = {{"ranks", NULL}, {"kernels", "ranks"}};
    hta_table_stash stash = {0};
    for (int trace = 0; trace < 2; trace++) {
        hta_tableset set = {0};
        for (int k = 0; k < 2 && tables[trace][k]; k++) {
            hta_row_builder r =
                hta_table_add_row(hta_tableset_find_or_create(&set, tables[trace][k], cols, 2));
            hta_row_put_i64(&r, trace);
            hta_row_put_str(&r, tables[trace][k]);
            CHECK(hta_row_done(&r) == 0, "row");
        }
        CHECK(hta_table_stash_add(&stash, &set) == 0, "stash a trace");
        hta_tableset_free(&set);
    }
    hta_tableset out = {0};
    hta_error err;
    CHECK(hta_table_stash_unpack(&stash, &out, &err) == 0, "unpack");
    CHECK(out.n_tables == 2 && strcmp(out.tables[0]->name, "ranks") == 0 &&
              strcmp(out.tables[1]->name, "kernels") == 0, "tables in first-seen order");
    const hta_table *ranks = hta_tableset_find(&out, "ranks");
    CHECK(ranks && ranks->n_rows == 2 && hta_table_row(ranks, 0)[0].i == 0 &&
              hta_table_row(ranks, 1)[0].i == 1, "rows in trace order");
    CHECK(strcmp(hta_table_row(out.tables[1], 0)[1].s, "kernels") == 0, "string survives");
    hta_tableset_free(&out);
    hta_table_stash_free(&stash);
}

/* Large tables are deflated in the stash and come back byte for byte, and
 * take less room there than packed. */
static void test_table_stash_deflates_large_tables(void)
{
    static const hta_column cols[] = {{"rank", HTA_COL_I64}, {"segments", HTA_COL_STR}};
    size_t len = 600 << 10;
    char *text = malloc(len + 1);
    for (size_t i = 0; text && i < len; i++)
        text[i] = (char)('a' + (i * i / 7) % 26);
    if (!text)
        return;
    text[len] = '\0';
    hta_tableset set = {0}, out = {0};
    hta_row_builder r = hta_table_add_row(hta_tableset_find_or_create(&set, "_segments", cols, 2));
    hta_row_put_i64(&r, 7);
    hta_row_put_str(&r, text);
    CHECK(hta_row_done(&r) == 0, "row");
    hta_table_stash stash = {0};
    hta_error err;
    CHECK(hta_table_stash_add(&stash, &set) == 0 && stash.entries[0].deflated_len > 0 &&
              stash.entries[0].deflated_len < len, "deflated");
    CHECK(hta_table_stash_unpack(&stash, &out, &err) == 0, "unpack");
    const hta_table *t = hta_tableset_find(&out, "_segments");
    CHECK(t && t->n_rows == 1 && strcmp(hta_table_row(t, 0)[1].s, text) == 0,
          "string back byte for byte");
    hta_tableset_free(&set);
    hta_tableset_free(&out);
    hta_table_stash_free(&stash);
    free(text);
}

/* The stash tests' traces: trace k has one row, k and a string of random
 * letters (deflated to about 0.6x).  stash_plan lists their lengths: rows
 * below the deflate threshold until the memory budget is full (4 KB of
 * room each for the packing's names and lengths), then one more (to disk),
 * a small one (in memory beside it), a large deflated one (to disk) and a
 * small one; where each must go is in_file. */
#define STASH_ROW 200000
#define STASH_MAX_TRACES 64

static size_t stash_plan(size_t *lens, int *in_file)
{
    static const size_t tail_lens[] = {STASH_ROW, 3000, 3 * STASH_ROW, 3000};
    static const int tail_in_file[] = {1, 0, 1, 0};
    size_t n = 0;
    for (size_t kept = STASH_ROW + 4096;
         kept <= HTA_STASH_MEMORY_BYTES && n < STASH_MAX_TRACES - 4; kept += STASH_ROW + 4096)
        lens[n] = STASH_ROW, in_file[n++] = 0;
    for (size_t i = 0; i < 4; i++)
        lens[n] = tail_lens[i], in_file[n++] = tail_in_file[i];
    return n;
}

static char *stash_text(int k, size_t len)
{
    char *text = malloc(len + 1);
    uint64_t state = 0x9e3779b97f4a7c15ull * (uint64_t)(k + 1);
    for (size_t i = 0; text && i < len; i++) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        text[i] = (char)('a' + state % 26);
    }
    if (text)
        text[len] = '\0';
    return text;
}

static void stash_traces(hta_table_stash *stash, const size_t *lens, size_t n)
{
    static const hta_column cols[] = {{"rank", HTA_COL_I64}, {"text", HTA_COL_STR}};
    for (size_t k = 0; k < n; k++) {
        char *text = stash_text((int)k, lens[k]);
        hta_tableset set = {0};
        hta_row_builder r = hta_table_add_row(hta_tableset_find_or_create(&set, "t", cols, 2));
        hta_row_put_i64(&r, (int64_t)k);
        hta_row_put_str(&r, text ? text : "");
        CHECK(text && hta_row_done(&r) == 0 && hta_table_stash_add(stash, &set) == 0,
              "stash trace %zu", k);
        hta_tableset_free(&set);
        free(text);
    }
}

/* Unpacks the stash and packs the result into packed, to compare runs byte
 * for byte. */
static int stash_unpacked_bytes(const hta_table_stash *stash, hta_buf *packed, hta_error *err)
{
    hta_tableset out = {0};
    int rc = hta_table_stash_unpack(stash, &out, err) || hta_tableset_pack(&out, packed);
    hta_tableset_free(&out);
    return rc;
}

static size_t stash_entries_in_file(const hta_table_stash *stash)
{
    size_t n = 0;
    for (size_t i = 0; i < stash->n_entries; i++)
        n += stash->entries[i].in_file != 0;
    return n;
}

static int dir_is_empty(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    int empty = d != NULL;
    while (d && (e = readdir(d)))
        empty &= strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    if (d)
        closedir(d);
    return empty;
}

/* Entries beyond the memory budget go to an unlinked file in $TMPDIR,
 * those that fit stay in memory, in between too, and all come back in
 * order; a file that can no longer be read back is an error, not lost or
 * garbled rows.  The bytes of the unpacked tables go to reference. */
static void test_table_stash_spills_beyond_budget(hta_buf *reference)
{
    size_t lens[STASH_MAX_TRACES];
    int in_file[STASH_MAX_TRACES];
    size_t n = stash_plan(lens, in_file);
    char dir[] = "/tmp/hta-units-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "temporary directory");
    setenv("TMPDIR", dir, 1);
    hta_table_stash stash = {0};
    stash_traces(&stash, lens, n);
    CHECK(stash.n_entries == n, "%zu entries", stash.n_entries);
    for (size_t k = 0; k < stash.n_entries; k++)
        CHECK(stash.entries[k].in_file == in_file[k], "trace %zu (%zu bytes) in file: %d", k,
              lens[k], stash.entries[k].in_file);
    CHECK(stash.entries[n - 2].deflated_len > 0, "the large entry on disk is deflated");
    CHECK(stash.memory.len <= HTA_STASH_MEMORY_BYTES, "memory within budget: %zu",
          stash.memory.len);
    CHECK(dir_is_empty(dir), "no named file left in $TMPDIR");

    hta_tableset out = {0};
    hta_error err;
    CHECK(hta_table_stash_unpack(&stash, &out, &err) == 0, "unpack: %s", err.text);
    const hta_table *t = hta_tableset_find(&out, "t");
    CHECK(t && t->n_rows == n, "one row per trace");
    for (size_t k = 0; t && k < t->n_rows && k < n; k++) {
        char *text = stash_text((int)k, lens[k]);
        CHECK(text && hta_table_row(t, k)[0].i == (int64_t)k &&
                  strcmp(hta_table_row(t, k)[1].s, text) == 0, "trace %zu back as stashed", k);
        free(text);
    }
    CHECK(hta_tableset_pack(&out, reference) == 0, "pack");
    hta_tableset_free(&out);

    CHECK(stash.file.open && ftruncate(stash.file.fd, 0) == 0, "truncate the spill file");
    CHECK(hta_table_stash_unpack(&stash, &out, &err) != 0 && strstr(err.text, "temporary file"),
          "a lost spill file is an error: %s", err.text);
    hta_tableset_free(&out);
    hta_table_stash_free(&stash);
    unsetenv("TMPDIR");
    rmdir(dir);
}

/* Without a usable temporary file (no such directory, a file in its place,
 * a file size limit below the first entry to spill), every entry stays in
 * memory and the tables come back the same.  Writing past the limit would
 * end the process with SIGXFSZ: the stash must not try. */
static void test_table_stash_keeps_entries_without_disk(const hta_buf *reference)
{
    size_t lens[STASH_MAX_TRACES];
    int in_file[STASH_MAX_TRACES];
    size_t n = stash_plan(lens, in_file);
    char not_a_dir[] = "/tmp/hta-units-file-XXXXXX";
    int fd = mkstemp(not_a_dir);
    CHECK(fd >= 0, "temporary file");
    const struct {
        const char *tmpdir;
        rlim_t file_size_limit;
        int error;
    } cases[] = {{"/nonexistent/hta-units", RLIM_INFINITY, ENOENT},
                 {not_a_dir, RLIM_INFINITY, ENOTDIR},
                 {"/tmp", 64 << 10, EFBIG}};
    struct rlimit limit;
    getrlimit(RLIMIT_FSIZE, &limit);
    for (int i = 0; i < 3; i++) {
        setenv("TMPDIR", cases[i].tmpdir, 1);
        struct rlimit lower = {cases[i].file_size_limit, limit.rlim_max};
        CHECK(cases[i].file_size_limit == RLIM_INFINITY || setrlimit(RLIMIT_FSIZE, &lower) == 0,
              "file size limit");
        hta_table_stash stash = {0};
        stash_traces(&stash, lens, n);
        setrlimit(RLIMIT_FSIZE, &limit);
        hta_buf bytes = {0};
        hta_error err;
        CHECK(stash.n_entries == n && stash_entries_in_file(&stash) == 0 && stash.file.unusable,
              "case %d: every entry in memory", i);
        CHECK(stash.file.error == cases[i].error, "case %d: the reason, %s", i,
              strerror(stash.file.error));
        CHECK(stash_unpacked_bytes(&stash, &bytes, &err) == 0, "unpack: %s", err.text);
        CHECK(bytes.len == reference->len && memcmp(bytes.data, reference->data, bytes.len) == 0,
              "case %d: the same tables as with the file", i);
        hta_buf_free(&bytes);
        hta_table_stash_free(&stash);
    }
    unsetenv("TMPDIR");
    if (fd >= 0)
        close(fd);
    unlink(not_a_dir);
}

static void test_table_pack_round_trip(void)
{
    static const hta_column cols[] = {{"rank", HTA_COL_I64}, {"name", HTA_COL_STR}, {"v", HTA_COL_F64}};
    hta_tableset a = {0}, b = {0};
    hta_table *t = hta_tableset_find_or_create(&a, "x/y", cols, 3);
    for (int i = 0; i < 3; i++) {
        hta_row_builder r = hta_table_add_row(t);
        hta_row_put_i64(&r, 2 - i);
        hta_row_put_str(&r, i == 1 ? "" : "kernel \xc3\xa9");
        hta_row_put_f64(&r, i * 0.5);
        CHECK(hta_row_done(&r) == 0, "row");
    }
    hta_row_builder bad = hta_table_add_row(t);
    hta_row_put_str(&bad, "wrong type");
    CHECK(hta_row_done(&bad) != 0 && t->n_rows == 3, "type mismatch rejected, no half row");
    hta_buf packed = {0};
    hta_error err;
    CHECK(hta_tableset_pack(&a, &packed) == 0, "pack");
    CHECK(hta_tableset_merge(&b, packed.data, packed.len, &err) == 0, "merge");
    CHECK(hta_tableset_merge(&b, packed.data, packed.len, &err) == 0, "merge twice appends");
    hta_tableset c = {0};
    CHECK(hta_tableset_merge(&c, packed.data, packed.len - 3, &err) != 0, "truncated rejected");
    hta_tableset_free(&c);
    hta_table *u = hta_tableset_find(&b, "x/y");
    CHECK(u && u->n_rows == 6, "rows");
    if (u) {
        hta_table_sort_by_first_column(u);
        CHECK(hta_table_row(u, 0)[0].i == 0 && hta_table_row(u, 0)[2].f == 1.0, "sorted, stable");
        CHECK(strcmp(hta_table_row(u, 5)[1].s, "kernel \xc3\xa9") == 0, "string survives");
    }
    hta_buf_free(&packed);
    hta_tableset_free(&a);
    hta_tableset_free(&b);
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

static char *inflate_file(const char *path, size_t *len)
{
    gzFile f = gzopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    char *data = malloc(cap);
    int got;
    while ((got = gzread(f, data + n, (unsigned)(cap - n))) > 0) {
        n += (size_t)got;
        if (n == cap)
            data = realloc(data, cap *= 2);
    }
    gzclose(f);
    *len = n;
    return data;
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

typedef void (*real_trace_check)(const char *path, char *data, size_t len);

/* Runs check on every real trace under traces/hta with its decompressed
 * bytes, NUL-terminated; returns how many traces there were. */
static int for_each_real_trace(const char *traces, real_trace_check check)
{
    char root[4096];
    snprintf(root, sizeof root, "%s/hta", traces);
    DIR *d = opendir(root);
    CHECK(d != NULL, "cannot open %s", root);
    struct dirent *folder;
    int files = 0;
    while (d && (folder = readdir(d))) {
        if (folder->d_name[0] == '.')
            continue;
        char dir[8192];
        snprintf(dir, sizeof dir, "%s/%s", root, folder->d_name);
        DIR *fd = opendir(dir);
        struct dirent *file;
        while (fd && (file = readdir(fd))) {
            if (file->d_name[0] == '.')
                continue;
            char path[12288];
            snprintf(path, sizeof path, "%s/%s", dir, file->d_name);
            size_t len;
            char *data = inflate_file(path, &len);
            CHECK(data != NULL, "%s: unreadable", path);
            if (!data)
                continue;
            data[len] = '\0';  /* inflate_file always leaves room */
            check(path, data, len);
            files++;
            free(data);
        }
        if (fd)
            closedir(fd);
    }
    if (d)
        closedir(d);
    return files;
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

/* ---- one plain file parsed by several threads ------------------------- */

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
        switch (i % 4) {
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
    const char *rest = "\",\"ts\":5,\"dur\":1},{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"z\",\"ts\":6,\"dur\":1}]}";
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

/* One trace's tables as bytes, analysed on `threads` threads whatever its
 * size, with --detail; the ranks table (timings, thread count) left out. */
static hta_buf analysed_tables(const char *path, int threads)
{
    hta_options opt;
    hta_options_defaults(&opt);
    opt.detail = 1;
    opt.threads = threads;
    opt.threaded_min_events = 1;
    hta_tableset set = {0};
    hta_buf packed = {0};
    CHECK(hta_analyse_file(path, 0, 0, 0, &opt, &set) == 0, "%s: out of memory", path);
    hta_tableset_remove(&set, "ranks");
    CHECK(hta_tableset_pack(&set, &packed) == 0, "%s: cannot pack", path);
    hta_tableset_free(&set);
    return packed;
}

/* Every real trace gives the same tables with 1 to 4 analysis threads. */
static void check_analysis_threads_never_change_tables(const char *path, char *data,
                                                       size_t len)
{
    (void)data;
    (void)len;
    hta_buf serial = analysed_tables(path, 1);
    for (int threads = 2; threads <= 4; threads++) {
        hta_buf threaded = analysed_tables(path, threads);
        CHECK(threaded.len == serial.len && memcmp(threaded.data, serial.data, serial.len) == 0,
              "%s: %d analysis threads change the tables", path, threads);
        hta_buf_free(&threaded);
    }
    hta_buf_free(&serial);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The radix sorts against qsort (glibc's is a stable merge sort): random
 * keys, many ties, negative values and both zeros, whose order must stay
 * the input order. */
static void test_radix_sorts_match_stable_qsort(void)
{
    enum { N = 5000 };
    static int64_t keys[N];
    static size_t order[N];
    static double values[N], expected[N];
    uint64_t state = 88172645463325252ULL;
    for (size_t i = 0; i < N; i++) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        keys[i] = (int64_t)(state % 97) * ((i & 1) ? 1 : -1000000007LL);
        values[i] = i % 7 == 0 ? ((i / 7) % 2 ? -0.0 : 0.0) : (double)keys[i] / 1000.0;
    }
    static int64_t sorted_keys[N];
    memcpy(sorted_keys, keys, sizeof keys);
    CHECK(hta_stable_argsort(sorted_keys, N, order) == 0, "argsort runs");
    int sorted = 1;
    for (size_t i = 1; i < N; i++)
        sorted &= keys[order[i - 1]] < keys[order[i]] ||
                  (keys[order[i - 1]] == keys[order[i]] && order[i - 1] < order[i]);
    for (size_t i = 0; i < N; i++)
        sorted &= sorted_keys[i] == keys[order[i]];
    CHECK(sorted, "argsort is sorted and stable, keys sorted along");
    int64_t few[] = {5, -3, 5, 0, -3};
    size_t few_order[5];
    CHECK(hta_stable_argsort(few, 5, few_order) == 0 && few_order[0] == 1 &&
              few_order[1] == 4 && few_order[2] == 3 && few_order[3] == 0 &&
              few_order[4] == 2 && few[0] == -3 && few[4] == 5,
          "short argsort is stable, keys sorted along");
    static hta_keyed pairs[N];
    for (size_t i = 0; i < N; i++)
        pairs[i] = (hta_keyed){keys[i], i};
    CHECK(hta_stable_sort_keyed(pairs, N) == 0, "keyed sort runs");
    int same = 1;
    for (size_t i = 0; i < N; i++)
        same &= pairs[i].index == order[i] && pairs[i].key == keys[order[i]];
    CHECK(same, "keyed sort = stable argsort");
    memcpy(expected, values, sizeof values);
    qsort(expected, N, sizeof *expected, compare_doubles);
    CHECK(hta_radix_sort_doubles(values, N) == 0, "radix sort runs");
    CHECK(memcmp(values, expected, sizeof values) == 0, "radix sort = stable qsort, bit for bit");
    values[3] = NAN;
    memcpy(expected, values, sizeof values);
    CHECK(hta_radix_sort_doubles(values, N) == -1 &&
              memcmp(values, expected, sizeof values) == 0,
          "NaN refused, values untouched");
}

static int compare_longest_first(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

/* The activity_categories row of n durations as the definitions give it,
 * from a sorted copy: count, total, share, max, min, the three tail shares
 * and the three tail means, formed as the analysis forms them. */
static void sorted_tail_row(const int64_t *durs, size_t n, int64_t grand_total, double row[11])
{
    static int64_t longest[20000];
    memcpy(longest, durs, n * sizeof *durs);
    qsort(longest, n, sizeof *longest, compare_longest_first);
    int64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += longest[i];
    row[0] = (double)n;
    row[1] = hta_ns_to_us(total);
    row[2] = grand_total ? (double)total / (double)grand_total : NAN;
    row[3] = hta_ns_to_us(longest[0]);
    row[4] = hta_ns_to_us(longest[n - 1]);
    static const size_t percents[3] = {1, 5, 10};
    for (size_t p = 0; p < 3; p++) {
        size_t k = n * percents[p] / 100;
        int64_t top = 0;
        for (size_t i = 0; i < k; i++)
            top += longest[i];
        row[5 + p] = !k ? 0.0 : total ? (double)top / (double)total : NAN;
        row[8 + p] = k ? hta_ns_to_us(top) / (double)k : NAN;
    }
}

/* Category "a" holds durs in order and "b" the same reversed, interleaved
 * in one trace; both rows must be the sorted definition's, bit for bit. */
static void check_tails_match_sorting(const char *what, const int64_t *durs, size_t n)
{
    hta_trace t;
    hta_trace_init(&t);
    uint32_t a = hta_strtab_intern(&t.categories, "a", 1);
    uint32_t b = hta_strtab_intern(&t.categories, "b", 1);
    int64_t grand_total = 0;
    for (size_t i = 0; i < n; i++) {
        hta_event *ea = hta_trace_push_event(&t), *eb = hta_trace_push_event(&t);
        if (!ea || !eb)
            return;
        ea->cat = (uint16_t)a, ea->dur_ns = durs[i], ea->ts_ns = (int64_t)i * 1000000;
        eb->cat = (uint16_t)b, eb->dur_ns = durs[n - 1 - i], eb->ts_ns = ea->ts_ns;
        grand_total += 2 * durs[i];
    }
    hta_rank_view view = {.trace = &t};
    hta_options opt;
    hta_options_defaults(&opt);
    hta_tableset set = {0};
    hta_error err;
    CHECK(hta_activity_categories(&view, &opt, &set, &err) == 0, "%s: %s", what, err.text);
    hta_table *table = hta_tableset_find(&set, "activity_categories");
    CHECK(table && table->n_rows == 2, "%s: two rows", what);
    double want[11];
    sorted_tail_row(durs, n, grand_total, want);
    for (size_t r = 0; table && r < table->n_rows; r++) {
        const hta_cell *row = hta_table_row(table, r);
        CHECK(row[2].i == (int64_t)n, "%s: count %lld", what, (long long)row[2].i);
        for (size_t c = 1; c < 11; c++)
            CHECK(memcmp(&row[2 + c].f, &want[c], sizeof want[c]) == 0,
                  "%s row %zu column %s: %.17g, sorted %.17g", what, r,
                  table->columns[2 + c].name, row[2 + c].f, want[c]);
    }
    hta_tableset_free(&set);
    hta_trace_free(&t);
}

/* Activity categories keep only each category's longest 10%: against a full
 * sort on the orders and values that could trip that up.  Fewer than 10
 * events (no tails), tails of exactly 1, 5 and 10 events, durations only
 * ever entering the kept set (ascending, also all within one power of two),
 * ties where the kept set ends, zeros, the negative durations of
 * --round-like-hta, and a wide random spread with repeats. */
static void test_activity_tails_match_sorting(void)
{
    enum { N = 20000 };
    static int64_t d[N];
    static const size_t few[] = {9, 10, 20, 100};
    for (size_t f = 0; f < sizeof few / sizeof few[0]; f++) {
        size_t n = few[f];
        for (size_t i = 0; i < n; i++)
            d[i] = (int64_t)((i * 7 + 3) % n + 1) * 1000;
        char what[32];
        snprintf(what, sizeof what, "%zu distinct", n);
        check_tails_match_sorting(what, d, n);
    }
    for (size_t i = 0; i < 5000; i++)
        d[i] = 37 * (int64_t)(i + 1);
    check_tails_match_sorting("ascending", d, 5000);
    for (size_t i = 0; i < 3000; i++)
        d[i] = 4096 + (int64_t)i;
    check_tails_match_sorting("ascending in one power of two", d, 3000);
    for (size_t i = 0; i < 1000; i++)
        d[i] = i < 950 ? 6000 : 7000;
    check_tails_match_sorting("ties at the end of the kept set", d, 1000);
    for (size_t i = 0; i < 100; i++)
        d[i] = 5000;
    check_tails_match_sorting("all equal", d, 100);
    for (size_t i = 0; i < 30; i++)
        d[i] = 0;
    check_tails_match_sorting("zeros", d, 30);
    for (size_t i = 0; i < 1000; i++)
        d[i] = (int64_t)(i * 7919 % 2001) - 1000;
    check_tails_match_sorting("negative, zero and positive", d, 1000);
    for (size_t i = 0; i < 40; i++)
        d[i] = -1000 + (int64_t)(i % 3);
    check_tails_match_sorting("all negative", d, 40);
    uint64_t state = 88172645463325252ULL;
    for (size_t i = 0; i < N; i++) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        d[i] = i % 4 == 3 ? d[state % i] : (int64_t)((state >> 20) >> (state % 44));
    }
    check_tails_match_sorting("random spread with repeats", d, N);
}

static int same_summary(const hta_summary *a, const hta_summary *b)
{
    return a->count == b->count && memcmp(&a->mean, &b->mean, 7 * sizeof a->mean) == 0;
}

/* Value counts summarise as hta_summarize over the values, bit for bit:
 * none, one, a queue-like walk of +1/-1 steps that goes negative (the sums
 * of std's squares differ from any other order in the last bits), and a
 * spread of values far from zero. */
static void test_value_counts_summarize_like_values(void)
{
    enum { N = 20000 };
    static double values[N];
    hta_value_counts counts = {0};
    hta_summary expected, got;
    hta_summarize(values, 0, &expected);
    hta_value_counts_summarize(&counts, &got);
    CHECK(got.count == 0 && isnan(got.mean) && isnan(got.std) && isnan(got.min) &&
              isnan(got.p50) && isnan(got.max), "no values: count 0, NaN elsewhere");
    values[0] = -3;
    CHECK(hta_value_counts_add(&counts, -3) == 0, "count one");
    hta_summarize(values, 1, &expected);
    hta_value_counts_summarize(&counts, &got);
    CHECK(same_summary(&got, &expected) && isnan(got.std) && got.p75 == -3,
          "one value: std NaN, every quantile the value");
    hta_value_counts_free(&counts);
    uint64_t state = 88172645463325252ULL;
    int64_t queue = 0;
    for (size_t i = 0; i < N; i++) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        queue += i < N / 3 ? (state % 3 ? 1 : -1) : (state % 3 ? -1 : 1);
        values[i] = (double)queue;
        CHECK(hta_value_counts_add(&counts, queue) == 0, "count %lld", (long long)queue);
    }
    hta_summarize(values, N, &expected);
    hta_value_counts_summarize(&counts, &got);
    CHECK(expected.min < 0 && same_summary(&got, &expected),
          "random walk: mean %.17g/%.17g std %.17g/%.17g p25 %g/%g", got.mean, expected.mean,
          got.std, expected.std, got.p25, expected.p25);
    hta_value_counts_free(&counts);
    for (size_t i = 0; i < 7; i++) {
        values[i] = (double)(1000 + 37 * (int64_t)(i * i % 5));
        hta_value_counts_add(&counts, (int64_t)values[i]);
    }
    hta_summarize(values, 7, &expected);
    hta_value_counts_summarize(&counts, &got);
    CHECK(same_summary(&got, &expected), "sparse values: p25 %g/%g", got.p25, expected.p25);
    hta_value_counts_free(&counts);
}

int main(int argc, char **argv)
{
    test_numbers_are_exact_nanoseconds();
    test_dense_events_outgrow_the_reservation();
    test_extras_follow_their_events();
    test_event_selection_and_metadata();
    test_escapes_are_decoded();
    test_malformed_inputs_fail_with_offsets();
    test_deep_nesting_costs_no_stack();
    test_interval_union_and_overlap();
    test_kernel_types();
    test_rank_from_file_name();
    test_packed_ints_round_trip();
    test_packed_series_round_trip();
    test_packed_series_in_two_passes();
    test_table_pack_round_trip();
    test_table_stash_keeps_order();
    test_table_stash_deflates_large_tables();
    hta_buf stash_reference = {0};
    test_table_stash_spills_beyond_budget(&stash_reference);
    test_table_stash_keeps_entries_without_disk(&stash_reference);
    hta_buf_free(&stash_reference);
    test_radix_sorts_match_stable_qsort();
    test_value_counts_summarize_like_values();
    test_activity_tails_match_sorting();
    test_concatenated_gzip_members();
    test_threads_on_adversarial_documents();
    test_threads_report_serial_errors();
    test_threads_time_out_like_serial();
    if (argc > 1) {
        int n = for_each_real_trace(argv[1], check_chunking_never_changes_events);
        CHECK(n >= 10, "only %d real traces under %s", n, argv[1]);
        for_each_real_trace(argv[1], check_threads_never_change_events);
        for_each_real_trace(argv[1], check_analysis_threads_never_change_tables);
    }
    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures ? 1 : 0;
}
