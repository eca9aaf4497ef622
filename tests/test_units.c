/* test_units.c: unit tests of the reader, interval arithmetic, kernel
 * classification, rank detection, the table packing and the radix sorts, on inputs whose
 * answers are known by construction, and the reader's independence from
 * where its buffer boundaries fall, on every real trace. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "hta/analysis.h"
#include "hta/radix_sort.h"
#include "hta/reader.h"
#include "hta/run.h"

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
    CHECK(t.events[0].correlation == 12, "correlation");
    CHECK(t.events[1].ts_ns == 1500000, "exponent ts %lld", (long long)t.events[1].ts_ns);
    CHECK(!hta_event_is_gpu(&t.events[1]), "string stream is a CPU event");
    CHECK(t.events[1].correlation == HTA_NO_CORRELATION, "missing correlation");
    CHECK(t.fractional_ts, "fractional ts noticed");
    hta_trace_free(&t);
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

static void test_table_pack_round_trip(void)
{
    static const hta_column cols[] = {{"rank", HTA_COL_I64}, {"name", HTA_COL_STR}, {"v", HTA_COL_F64}};
    hta_tableset a = {0}, b = {0};
    hta_table *t = hta_tableset_table(&a, "x/y", cols, 3);
    for (int i = 0; i < 3; i++) {
        hta_row r = hta_table_add_row(t);
        hta_row_put_i64(&r, 2 - i);
        hta_row_put_str(&r, i == 1 ? "" : "kernel \xc3\xa9");
        hta_row_put_f64(&r, i * 0.5);
        CHECK(hta_row_done(&r) == 0, "row");
    }
    hta_row bad = hta_table_add_row(t);
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
        if (x->ts_ns != y->ts_ns || x->dur_ns != y->dur_ns || x->correlation != y->correlation ||
            x->stream != y->stream || x->flags != y->flags ||
            strcmp(hta_event_name(a, x), hta_event_name(b, y)) != 0)
            return 0;
    }
    return 1;
}

/* A buffer boundary may fall inside any token: reading in 1, 7 and 4093
 * byte pieces must give exactly the events of one large read; so must
 * either gzip library. */
static void test_chunking_never_changes_events(const char *traces)
{
    char root[4096];
    snprintf(root, sizeof root, "%s/hta", traces);
    DIR *d = opendir(root);
    CHECK(d != NULL, "cannot open %s", root);
    struct dirent *folder;
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
            hta_trace whole;
            hta_error err;
            if (!data || hta_read_trace_file(path, NULL, &whole, &err)) {
                CHECK(0, "%s: %s", path, data ? err.text : "unreadable");
                free(data);
                continue;
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
            free(data);
        }
        if (fd)
            closedir(fd);
    }
    if (d)
        closedir(d);
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

int main(int argc, char **argv)
{
    test_numbers_are_exact_nanoseconds();
    test_event_selection_and_metadata();
    test_escapes_are_decoded();
    test_malformed_inputs_fail_with_offsets();
    test_deep_nesting_costs_no_stack();
    test_interval_union_and_overlap();
    test_kernel_types();
    test_rank_from_file_name();
    test_table_pack_round_trip();
    test_radix_sorts_match_stable_qsort();
    test_concatenated_gzip_members();
    if (argc > 1)
        test_chunking_never_changes_events(argv[1]);
    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures ? 1 : 0;
}
