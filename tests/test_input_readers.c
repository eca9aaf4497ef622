/* test_input_readers.c: the Nsight Systems SQLite and CUPTI CSV readers on
 * inputs whose answers are known by construction, then on thousands of
 * damaged copies of them (bytes changed, inserted, cut off), which must
 * each either read or fail with one line naming the input, never crash,
 * hang or yield an event the analyses could not take.  Run under the
 * sanitizers in CI, this is a small deterministic fuzzer of both readers. */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse/cupti_csv.h"
#include "parse/input_reader.h"
#include "parse/nsys_sqlite.h"
#include "unit.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint64_t next_random(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len) {
        printf("FAIL cannot write %s\n", path);
        exit(1);
    }
    fclose(f);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc(*len ? *len : 1);
    if (data && fread(data, 1, *len, f) != *len) {
        free(data);
        data = NULL;
    }
    fclose(f);
    return data;
}

/* Every event a reader keeps is one the analyses can take. */
static int events_are_sane(const hta_trace *t)
{
    for (size_t i = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        if (e->ts_ns < 0 || e->dur_ns < 0 || e->name >= t->names.count ||
            e->cat >= t->categories.count)
            return 0;
    }
    for (size_t i = 1; i < t->n_extras; i++)
        if (t->extras[i].event <= t->extras[i - 1].event)
            return 0;
    return 1;
}

static int one_line_naming(const hta_error *err, const char *input)
{
    return strstr(err->text, input) != NULL && strchr(err->text, '\n') == NULL;
}

/* What a read of a damaged input must give: sane events, or one line
 * naming the input.  Counts the outcome in outcomes[read, failed]. */
static void check_damaged_read(int rc, hta_trace *t, const hta_error *err, const char *input,
                               int round, int outcomes[2])
{
    outcomes[rc != 0]++;
    if (rc == 0) {
        CHECK(events_are_sane(t), "round %d: an event the analyses cannot take", round);
        hta_trace_free(t);
    } else {
        CHECK(one_line_naming(err, input), "round %d: error '%s'", round, err->text);
    }
}

/* ---- CUPTI CSV ------------------------------------------------------------ */

static const char KERNELS[] =
    "start,end,dur,name,correlation,stream,device,context,grid,block,shared memory,cat\n"
    "1.000,2.500,1.500,\"void gemm<float, 4>(float*)\",1,7,0,1,\"[1, 1, 1]\",\"[1, 1, "
    "1]\",0,kernel\n"
    "3.000,3.250,0.250,ncclKernel_AllReduce,2,9,0,1,,,0,kernel\n";
static const char RUNTIME[] =
    "start,end,dur,name,correlation,cat\n"
    "0.500,0.900,0.400,cudaLaunchKernel,1,cuda_runtime\n"
    "2.600,2.900,0.300,cudaLaunchKernel,2,cuda_runtime\n";
static const char MEMCPY[] =
    "start,end,name,correlation,stream,bytes\n"
    "4.000,6.000,Memcpy HtoD (Pinned -> Device),3,7,4000\n";

static void write_text_in(const char *dir, const char *file, const char *text)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    write_file(path, text, strlen(text));
}

static void test_csv_folder(const char *dir)
{
    write_text_in(dir, "kernel.csv", KERNELS);
    write_text_in(dir, "cuda_runtime.csv", RUNTIME);
    write_text_in(dir, "gpu_memcpy.csv", MEMCPY);
    hta_builder_options how = {0};
    hta_trace t;
    hta_error notes, err;
    CHECK(hta_read_cupti_csv(dir, &how, &t, &notes, &err) == 0, "%s", err.text);
    CHECK(t.n_events == 5, "%zu events", t.n_events);
    CHECK(notes.text[0] == '\0', "notes: %s", notes.text);
    /* GPU tables first, merged by start: gemm, nccl, memcpy; then launches. */
    CHECK(strcmp(hta_event_name(&t, &t.events[0]), "void gemm<float, 4>(float*)") == 0, "%s",
          hta_event_name(&t, &t.events[0]));
    CHECK(t.events[0].ts_ns == 1000 && t.events[0].dur_ns == 1500, "gemm times");
    CHECK(t.events[1].kernel_type == HTA_KT_COMMUNICATION, "nccl is communication");
    CHECK(t.events[2].flags & HTA_EVENT_HAS_COPY, "copy flagged");
    const hta_event_extra *x = hta_trace_extra(&t, &t.events[2]);
    CHECK(x->bytes == 4000 && x->bandwidth_gbps == 2.0, "bytes %lld bw %g", (long long)x->bytes,
          x->bandwidth_gbps);
    CHECK(!hta_event_is_gpu(&t.events[3]) && hta_event_correlation(&t, &t.events[3]) == 1,
          "launch");
    hta_trace_free(&t);
}

/* Rows whose times leave the model's bounds, given by start and duration
 * (a duplicated dur column, the first read) or by start and end: each is
 * skipped and counted, never summed past int64; the bounds are kept. */
static const char KERNELS_BY_DURATION[] =
    "start,dur,dur,name,correlation,stream\n"
    "1.000,2.000,9,in,1,7\n"
    "8126725898082287.000,1682725898082297.000,1,start-plus-dur-past-int64,2,7\n"
    "4000000000000000.001,1.000,1,start-past-bound,3,7\n"
    "-9223372036854000.000,1.000,1,start-negative,4,7\n"
    "5.000,-0.001,1,dur-negative,5,7\n"
    "5.000,1000000000000.001,1,dur-past-bound,6,7\n"
    "4000000000000000.000,1000000000000.000,1,on-the-bounds,7,7\n";
static const char ANNOTATIONS_BY_END[] =
    "start,end,name\n"
    "-9223372036854000.000,9223372036854000.000,end-minus-start-past-int64\n"
    "7.000,6.999,end-before-start\n"
    "2.000,3.000,in\n";

static void test_csv_times_out_of_bounds(const char *dir)
{
    char sub[512];
    snprintf(sub, sizeof sub, "%s/bounds", dir);
    CHECK(mkdir(sub, 0700) == 0, "mkdir %s", sub);
    write_text_in(sub, "kernel.csv", KERNELS_BY_DURATION);
    write_text_in(sub, "user_annotation.csv", ANNOTATIONS_BY_END);
    hta_builder_options how = {0};
    hta_trace t;
    hta_error notes, err;
    CHECK(hta_read_cupti_csv(sub, &how, &t, &notes, &err) == 0, "%s", err.text);
    CHECK(t.n_events == 3 && t.skipped_events == 7, "%zu kept, %llu skipped", t.n_events,
          (unsigned long long)t.skipped_events);
    for (size_t i = 0; i < t.n_events; i++) {
        const char *name = hta_event_name(&t, &t.events[i]);
        int in = strcmp(name, "in") == 0;
        CHECK(in || strcmp(name, "on-the-bounds") == 0, "kept %s", name);
        CHECK(in || (t.events[i].ts_ns == 4000000000000000000LL &&
                     t.events[i].dur_ns == 1000000000000000LL),
              "%s: %lld + %lld", name, (long long)t.events[i].ts_ns,
              (long long)t.events[i].dur_ns);
    }
    hta_trace_free(&t);
}

/* One random change of text: a byte replaced, a CSV-meaningful byte
 * inserted, or the end cut off. */
static size_t damage(char *text, size_t len, size_t cap)
{
    static const char meaningful[] = "\",\n\r.-e0 ";
    size_t at = len ? next_random() % len : 0;
    switch (next_random() % 4) {
    case 0:
        if (len)
            text[at] = (char)(next_random() & 0xFF);
        return len;
    case 1:
        if (len + 1 < cap) {
            memmove(text + at + 1, text + at, len - at);
            text[at] = meaningful[next_random() % (sizeof meaningful - 1)];
            return len + 1;
        }
        return len;
    case 2:
        return at;
    default:
        if (len)
            text[at] = meaningful[next_random() % (sizeof meaningful - 1)];
        return len;
    }
}

static void test_damaged_csv(const char *dir)
{
    char path[512], text[1024];
    snprintf(path, sizeof path, "%s/kernel.csv", dir);
    int outcomes[2] = {0, 0};
    for (int round = 0; round < 3000; round++) {
        size_t len = sizeof KERNELS - 1;
        memcpy(text, KERNELS, len);
        for (int k = 1 + (int)(next_random() % 4); k > 0; k--)
            len = damage(text, len, sizeof text);
        write_file(path, text, len);
        hta_builder_options how = {0};
        hta_trace t;
        hta_error notes, err;
        check_damaged_read(hta_read_cupti_csv(dir, &how, &t, &notes, &err), &t, &err, dir, round,
                           outcomes);
    }
    CHECK(outcomes[0] > 100 && outcomes[1] > 100, "damaged CSV: %d read, %d failed",
          outcomes[0], outcomes[1]);
}

/* ---- Nsight Systems SQLite -------------------------------------------------- */

static void exec_sql(sqlite3 *db, const char *sql)
{
    char *message = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &message) != SQLITE_OK) {
        printf("FAIL sql: %s\n", message ? message : "?");
        exit(1);
    }
}

static void make_export(const char *path)
{
    unlink(path);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        exit(1);
    exec_sql(db,
             "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
             "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, "
             "deviceId INTEGER, streamId INTEGER, correlationId INTEGER, "
             "demangledName INTEGER, shortName INTEGER);"
             "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, "
             "correlationId INTEGER, nameId INTEGER);"
             "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, "
             "streamId INTEGER, correlationId INTEGER, bytes INTEGER, memKind INTEGER);"
             "INSERT INTO StringIds VALUES (0, 'gemm'), (1, 'cudaLaunchKernel_v7000'), "
             "(2, 'cuLaunchKernel');"
             "BEGIN;");
    for (int i = 0; i < 400; i++) {
        char sql[256];
        snprintf(sql, sizeof sql,
                 "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%d, %d, 0, 7, %d, 0, 0);"
                 "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (%d, %d, %d, %d);",
                 10000 * i + 500, 10000 * i + 2500, i, 10000 * i, 10000 * i + 300, i,
                 1 + (i % 2));
        exec_sql(db, sql);
    }
    /* No ENUM table: memKind 2 is Device in Nsight's numbering. */
    exec_sql(db, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (3000, 3500, 7, 9999, 1000, 2);"
                 "COMMIT;");
    sqlite3_close(db);
}

static void test_export(const char *path)
{
    make_export(path);
    hta_builder_options how = {0};
    hta_trace t;
    hta_error notes, err;
    CHECK(hta_read_nsys_sqlite(path, &how, &t, &notes, &err) == 0, "%s", err.text);
    CHECK(t.n_events == 801, "%zu events", t.n_events);
    /* Kernels and the memset merged by start: the memset (3000 ns) comes
     * between the first two kernels (500 and 10500 ns). */
    CHECK(strcmp(hta_event_name(&t, &t.events[1]), "Memset (Device)") == 0, "%s",
          hta_event_name(&t, &t.events[1]));
    CHECK(hta_trace_extra(&t, &t.events[1])->bandwidth_gbps == 2.0, "memset bandwidth");
    size_t runtime = 0, driver = 0;
    for (size_t i = 0; i < t.n_events; i++) {
        const char *cat = hta_event_category(&t, &t.events[i]);
        const char *name = hta_event_name(&t, &t.events[i]);
        runtime += strcmp(cat, "cuda_runtime") == 0 && strcmp(name, "cudaLaunchKernel") == 0;
        driver += strcmp(cat, "cuda_driver") == 0 && strcmp(name, "cuLaunchKernel") == 0;
    }
    CHECK(runtime == 200 && driver == 200, "%zu runtime, %zu driver calls", runtime, driver);
    CHECK(strstr(notes.text, "RUNTIME") == NULL, "notes: %s", notes.text);
    hta_trace_free(&t);
}

/* Rows whose end minus start leaves int64, ends before starts, and one call
 * stored twice whose outer record spans all of int64: each is skipped and
 * counted, and no difference of their times is formed. */
static void test_export_times_out_of_bounds(const char *path)
{
    make_export(path);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        exit(1);
    exec_sql(db,
             "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES "
             "(-9223372036854775807, 9223372036854775807, 0, 7, 500, 0, 0), "
             "(9000, 8999, 0, 7, 501, 0, 0), "
             "(4000000000000000001, 4000000000000000002, 0, 7, 502, 0, 0);"
             "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES "
             "(-9223372036854775807, 9223372036854775807, 503, 1), "
             "(4000000000, 4000000010, 503, 1);");
    sqlite3_close(db);
    hta_builder_options how = {0};
    hta_trace t;
    hta_error notes, err;
    CHECK(hta_read_nsys_sqlite(path, &how, &t, &notes, &err) == 0, "%s", err.text);
    CHECK(t.n_events == 801 && t.skipped_events == 4, "%zu kept, %llu skipped", t.n_events,
          (unsigned long long)t.skipped_events);
    hta_trace_free(&t);
}

static void test_damaged_export(const char *path)
{
    make_export(path);
    size_t len;
    char *good = read_file(path, &len);
    CHECK(good != NULL && len > 4096, "export of %zu bytes", good ? len : 0);
    if (!good)
        return;
    char *bad = malloc(len);
    int outcomes[2] = {0, 0};
    for (int round = 0; round < 400; round++) {
        memcpy(bad, good, len);
        size_t n = len;
        for (int k = 1 + (int)(next_random() % 8); k > 0; k--) {
            size_t at = next_random() % n;
            if (next_random() % 8 == 0)
                n = at > 0 ? at : 1;              /* cut off */
            else
                bad[at] = (char)(next_random() & 0xFF);
        }
        write_file(path, bad, n);
        hta_builder_options how = {0};
        hta_trace t;
        hta_error notes, err;
        check_damaged_read(hta_read_nsys_sqlite(path, &how, &t, &notes, &err), &t, &err, path,
                           round, outcomes);
    }
    CHECK(outcomes[0] > 10 && outcomes[1] > 10, "damaged export: %d read, %d failed",
          outcomes[0], outcomes[1]);
    free(bad);
    free(good);
}

/* 1 when fuzz/harnesses lists the harness name (the first word of a line). */
static int harness_listed(const char *name)
{
    FILE *f = fopen(FUZZ_DIR "/harnesses", "r");
    char line[512], first[128];
    int listed = 0;
    while (f && !listed && fgets(line, sizeof line, f))
        listed = sscanf(line, "%127s", first) == 1 && strcmp(first, name) == 0;
    if (f)
        fclose(f);
    return listed;
}

/* Every format has one reader, and every reader its libFuzzer harness,
 * listed in fuzz/harnesses (which the build and fuzz/run.sh follow). */
static void test_reader_table(void)
{
    for (int f = HTA_INPUT_AUTO + 1; f < HTA_INPUT_N_FORMATS; f++) {
        int rows = 0;
        for (size_t i = 0; i < hta_n_input_readers; i++)
            rows += (int)hta_input_readers[i].format == f;
        CHECK(rows == 1, "%s: %d readers", hta_input_format_name((hta_input_format)f), rows);
    }
    int fallbacks = 0;
    for (size_t i = 0; i < hta_n_input_readers; i++) {
        const hta_input_reader *r = &hta_input_readers[i];
        CHECK(harness_listed(r->fuzz_harness), "%s: fuzz/harnesses leaves out %s",
              hta_input_format_name(r->format), r->fuzz_harness);
        CHECK(r->suffixes[0] && r->read, "%s: suffixes and read", hta_input_format_name(r->format));
        fallbacks += r->sniff == NULL;
    }
    CHECK(fallbacks == 1, "%d readers take what no other claims", fallbacks);
}

int main(void)
{
    test_reader_table();
    char dir[] = "/tmp/hta-input-readers.XXXXXX";
    if (!mkdtemp(dir)) {
        printf("FAIL mkdtemp\n");
        return 1;
    }
    char db[600];
    snprintf(db, sizeof db, "%s/rank-0.sqlite", dir);
    test_csv_folder(dir);
    test_damaged_csv(dir);
    test_csv_times_out_of_bounds(dir);
    test_export(db);
    test_export_times_out_of_bounds(db);
    test_damaged_export(db);
    char cleanup[700];
    snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", dir);
    if (system(cleanup) != 0)
        printf("note: could not remove %s\n", dir);
    return unit_finish();
}
