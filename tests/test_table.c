/* test_table.c: result tables (src/table/): packed integer series, the
 * tables' pack and merge, and the stash that keeps a process's tables
 * between its traces, in memory, in a temporary file, or in memory when no
 * file can be had. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "table/packed_ints.h"
#include "table/table.h"
#include "table/table_stash.h"
#include "util/buf.h"
#include "unit.h"

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

static void test_table_pack_round_trip(void)
{
    static const hta_column cols[] = {
        {"rank", HTA_COL_I64}, {"name", HTA_COL_STR}, {"v", HTA_COL_F64}};
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

/* Sorting by the first column keeps rows already in order as they are
 * (ties in row order) and orders the rest stably, a late smaller key
 * included. */
static void test_table_sort_keeps_order(void)
{
    static const hta_column cols[] = {{"rank", HTA_COL_I64}, {"row", HTA_COL_I64}};
    static const int64_t in_order[] = {1, 1, 2, 5, 5}, late[] = {1, 1, 2, 5, 0};
    static const int64_t late_sorted_rows[] = {4, 0, 1, 2, 3};
    for (int k = 0; k < 2; k++) {
        hta_tableset set = {0};
        hta_table *t = hta_tableset_find_or_create(&set, "s", cols, 2);
        for (int64_t i = 0; i < 5; i++) {
            hta_row_builder r = hta_table_add_row(t);
            hta_row_put_i64(&r, (k ? late : in_order)[i]);
            hta_row_put_i64(&r, i);
            CHECK(hta_row_done(&r) == 0, "row");
        }
        CHECK(hta_table_sort_by_first_column(t) == 0, "sorted");
        for (size_t i = 0; i < 5; i++)
            CHECK(hta_table_row(t, i)[1].i == (k ? late_sorted_rows[i] : (int64_t)i),
                  "rows in stable order");
        hta_tableset_free(&set);
    }
}

/* The bisections of a table sorted by a column: the first row at or
 * above a key in column 1 (runs of equal keys, keys below, between and
 * above), and the first row of a key in column 0, -1 when absent. */
static void test_table_lower_bound(void)
{
    static const hta_column cols[] = {{"rank", HTA_COL_I64}, {"step", HTA_COL_I64}};
    static const int64_t steps[] = {-3, 2, 2, 2, 7};
    hta_tableset set = {0};
    hta_table *t = hta_tableset_find_or_create(&set, "b", cols, 2);
    for (int64_t i = 0; i < 5; i++) {
        hta_row_builder r = hta_table_add_row(t);
        hta_row_put_i64(&r, 10 * (i / 2));
        hta_row_put_i64(&r, steps[i]);
        CHECK(hta_row_done(&r) == 0, "row");
    }
    static const int64_t keys[] = {-4, -3, 0, 2, 3, 7, 8};
    static const size_t want[] = {0, 0, 1, 1, 4, 4, 5};
    for (size_t k = 0; k < 7; k++)
        CHECK(hta_table_lower_bound(t, 1, keys[k]) == want[k], "lower bound of %lld: %zu",
              (long long)keys[k], hta_table_lower_bound(t, 1, keys[k]));
    CHECK(hta_table_find_sorted(t, 10) == 2 && hta_table_find_sorted(t, 20) == 4 &&
              hta_table_find_sorted(t, 5) == -1 && hta_table_find_sorted(t, 30) == -1,
          "find by the first column");
    hta_tableset_free(&set);
}

/* A table's flags travel with it (the root routes what it merged by
 * them); a spec of the same name with other flags is refused; take and
 * keep sort a set by flags, in order. */
static void test_table_flags_route(void)
{
    static const hta_column cols[] = {{"rank", HTA_COL_I64}};
    static const hta_table_spec in_place = {"a", cols, 1, HTA_TABLE_PER_RANK | HTA_TABLE_IN_PLACE};
    static const hta_table_spec gathered = {"b", cols, 1, HTA_TABLE_GATHERED};
    static const hta_table_spec local = {"_c", cols, 1, HTA_TABLE_SCRATCH};
    static const hta_table_spec exchanged = {"_d", cols, 1, HTA_TABLE_EXCHANGED};
    hta_tableset set = {0}, merged = {0}, taken = {0};
    const hta_table_spec *specs[] = {&in_place, &gathered, &local, &exchanged};
    for (size_t i = 0; i < 4; i++)
        CHECK(hta_tableset_table(&set, specs[i]) != NULL, "created");
    hta_table_spec other = gathered;
    other.flags = HTA_TABLE_IN_PLACE;
    CHECK(hta_tableset_table(&set, &other) == NULL, "same name, other flags refused");
    hta_buf packed = {0};
    hta_error err;
    CHECK(hta_tableset_pack(&set, &packed) == 0 &&
              hta_tableset_merge(&merged, packed.data, packed.len, &err) == 0,
          "pack, merge");
    for (size_t i = 0; i < 4; i++) {
        const hta_table *t = hta_tableset_find(&merged, specs[i]->name);
        CHECK(t && t->flags == specs[i]->flags, "flags survive the gather");
    }
    CHECK(hta_tableset_take(&merged, HTA_TABLE_IN_PLACE | HTA_TABLE_EXCHANGED, &taken) == 0,
          "take");
    CHECK(taken.n_tables == 2 && strcmp(taken.tables[0]->name, "a") == 0 &&
              strcmp(taken.tables[1]->name, "_d") == 0,
          "taken in order");
    hta_tableset_keep(&merged, HTA_TABLE_GATHERED);
    CHECK(merged.n_tables == 1 && strcmp(merged.tables[0]->name, "b") == 0,
          "only the gathered table left");
    hta_buf_free(&packed);
    hta_tableset_free(&set);
    hta_tableset_free(&merged);
    hta_tableset_free(&taken);
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

/* What the stash of stash_traces must give back, built without a stash:
 * the same rows in one set, packed. */
static void stash_expected_bytes(const size_t *lens, size_t n, hta_buf *packed)
{
    static const hta_column cols[] = {{"rank", HTA_COL_I64}, {"text", HTA_COL_STR}};
    hta_tableset set = {0};
    hta_table *t = hta_tableset_find_or_create(&set, "t", cols, 2);
    for (size_t k = 0; t && k < n; k++) {
        char *text = stash_text((int)k, lens[k]);
        hta_row_builder r = hta_table_add_row(t);
        hta_row_put_i64(&r, (int64_t)k);
        hta_row_put_str(&r, text ? text : "");
        CHECK(text && hta_row_done(&r) == 0, "expected row %zu", k);
        free(text);
    }
    CHECK(t && hta_tableset_pack(&set, packed) == 0, "pack the expected tables");
    hta_tableset_free(&set);
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
 * garbled rows. */
static void test_table_stash_spills_beyond_budget(void)
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
    hta_buf bytes = {0}, expected = {0};
    stash_expected_bytes(lens, n, &expected);
    CHECK(hta_tableset_pack(&out, &bytes) == 0 && bytes.len == expected.len &&
              memcmp(bytes.data, expected.data, bytes.len) == 0,
          "the same tables as without a stash");
    hta_buf_free(&bytes);
    hta_buf_free(&expected);
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
static void test_table_stash_keeps_entries_without_disk(void)
{
    size_t lens[STASH_MAX_TRACES];
    int in_file[STASH_MAX_TRACES];
    size_t n = stash_plan(lens, in_file);
    hta_buf expected = {0};
    stash_expected_bytes(lens, n, &expected);
    const hta_buf *reference = &expected;
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
              "case %d: the same tables as without a stash", i);
        hta_buf_free(&bytes);
        hta_table_stash_free(&stash);
    }
    unsetenv("TMPDIR");
    if (fd >= 0)
        close(fd);
    unlink(not_a_dir);
    hta_buf_free(&expected);
}

int main(int argc, char **argv)
{
    test_packed_ints_round_trip();
    test_packed_series_round_trip();
    test_packed_series_in_two_passes();
    test_table_pack_round_trip();
    test_table_sort_keeps_order();
    test_table_lower_bound();
    test_table_flags_route();
    test_table_stash_keeps_order();
    test_table_stash_deflates_large_tables();
    test_table_stash_spills_beyond_budget();
    test_table_stash_keeps_entries_without_disk();
    (void)argc;
    (void)argv;
    return unit_finish();
}
