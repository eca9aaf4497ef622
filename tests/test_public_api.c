/* test_public_api.c: libhta through its public headers only (this test's
 * include path has include/, not src/), on a real trace:
 *
 * - a trace read (hta/trace.h) counts what the analysis's /ranks row of
 *   the same trace says: events, GPU events, skipped events, world size;
 * - the command's run (hta/run.h) writes a results file whose tables, read
 *   back (hta/results.h), equal the in-process analysis's (hta/analyse.h)
 *   cell for cell, /ranks's timings aside;
 * - every table analysed has the columns its spec (hta_table_spec_find)
 *   declares, and is one the spec says a file holds;
 * - settings take hta-mpi's long options and refuse what hta-mpi refuses;
 * - a bad trace's error names the file and the byte. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hta/hta.h>

#include "unit.h"

/* A column of the one /ranks row that is a trace (the job's other ranks
 * are listed as missing). */
static int64_t ranks_i64(const hta_tableset *set, const char *column)
{
    const hta_table *ranks = hta_tableset_get(set, "ranks");
    long c = ranks ? hta_table_column_index(ranks, column) : -1;
    long status = ranks ? hta_table_column_index(ranks, "status") : -1;
    size_t traces = 0, row = 0;
    for (size_t r = 0; c >= 0 && status >= 0 && r < hta_table_row_count(ranks); r++)
        if (strcmp(hta_table_str(ranks, r, (size_t)status), "missing") != 0) {
            traces++;
            row = r;
        }
    return traces == 1 ? hta_table_i64(ranks, row, (size_t)c) : -2;
}

static void check_trace_counts(const char *path, const hta_tableset *analysed)
{
    hta_error err = {{0}};
    hta_trace *t = hta_trace_read(path, NULL, &err);
    CHECK(t != NULL, "%s: %s", path, err.text);
    if (!t)
        return;
    CHECK((int64_t)hta_trace_event_count(t) == ranks_i64(analysed, "events"), "events");
    CHECK((int64_t)hta_trace_gpu_event_count(t) == ranks_i64(analysed, "gpu_events"),
          "gpu events");
    CHECK((int64_t)hta_trace_skipped_event_count(t) == ranks_i64(analysed, "skipped_events"),
          "skipped events");
    CHECK(hta_trace_world_size(t) == ranks_i64(analysed, "world_size"), "world size");
    CHECK(hta_trace_rank(t) == ranks_i64(analysed, "claimed_rank"), "rank");
    CHECK(hta_trace_gpu_event_count(t) > 0 && hta_trace_gpu_event_count(t) <
              hta_trace_event_count(t), "some events are on the GPU");
    hta_trace_destroy(t);
}

/* Columns of /ranks that differ between two runs of the same trace. */
static int varies(const char *column)
{
    static const char *const varying[] = {"parse_seconds", "analysis_seconds", "process",
                                          "threads"};
    for (size_t i = 0; i < sizeof varying / sizeof *varying; i++)
        if (strcmp(column, varying[i]) == 0)
            return 1;
    return 0;
}

static int same_cell(const hta_table *a, const hta_table *b, size_t r, size_t c)
{
    switch (hta_table_column_type(a, c)) {
    case HTA_COL_I64: return hta_table_i64(a, r, c) == hta_table_i64(b, r, c);
    case HTA_COL_F64: {
        double x = hta_table_f64(a, r, c), y = hta_table_f64(b, r, c);
        return x == y || (x != x && y != y);
    }
    default: return strcmp(hta_table_str(a, r, c), hta_table_str(b, r, c)) == 0;
    }
}

static void check_same_table(const hta_table *mine, const hta_table *file)
{
    const char *name = hta_table_name(mine);
    size_t cols = hta_table_column_count(mine), rows = hta_table_row_count(mine);
    CHECK(hta_table_column_count(file) == cols && hta_table_row_count(file) == rows,
          "%s: %zu x %zu in-process, %zu x %zu in the file", name, rows, cols,
          hta_table_row_count(file), hta_table_column_count(file));
    if (hta_table_column_count(file) != cols || hta_table_row_count(file) != rows)
        return;
    for (size_t c = 0; c < cols; c++) {
        const char *column = hta_table_column_name(mine, c);
        CHECK(strcmp(column, hta_table_column_name(file, c)) == 0 &&
                  hta_table_column_type(mine, c) == hta_table_column_type(file, c),
              "%s: column %zu", name, c);
        size_t differing = 0;
        for (size_t r = 0; r < rows && !varies(column); r++)
            differing += !same_cell(mine, file, r, c);
        CHECK(differing == 0, "%s.%s: %zu rows differ from the file", name, column, differing);
    }
}

static void check_results_file(const char *trace, const hta_tableset *analysed)
{
    char dir[] = "/tmp/hta-public-api-XXXXXX", out[64];
    if (!mkdtemp(dir))
        return;
    snprintf(out, sizeof out, "%s/r.h5", dir);
    char *argv_[] = {"hta-mpi", "-q", "-o", out, (char *)trace, NULL};
    char **argv = argv_;
    int argc = 5;
    hta_error err = {{0}};
    hta_settings *s = hta_settings_new();
    CHECK(hta_command_parse(s, argc, argv, &err) == HTA_COMMAND_RUN, "parse: %s", err.text);
    CHECK(hta_command_run(s, &argc, &argv) == HTA_EXIT_OK, "the run failed");
    hta_settings_destroy(s);
    hta_results_file *rf = hta_results_file_open(out, &err);
    CHECK(rf != NULL, "%s", err.text);
    for (size_t i = 0; rf && i < hta_tableset_count(analysed); i++) {
        const hta_table *mine = hta_tableset_at(analysed, i);
        CHECK(hta_results_file_has_table(rf, hta_table_name(mine)), "%s listed",
              hta_table_name(mine));
        const hta_table *file = hta_results_file_table(rf, hta_table_name(mine), &err);
        CHECK(file != NULL, "%s", err.text);
        if (file)
            check_same_table(mine, file);
    }
    CHECK(!rf || !hta_results_file_has_table(rf, "no_such_table"), "a missing table listed");
    CHECK(!rf || hta_results_file_table(rf, "no_such_table", &err) == NULL,
          "a missing table read");
    CHECK(strstr(err.text, "no_such_table") != NULL, "%s", err.text);
    hta_results_file_close(rf);
    CHECK(hta_results_file_open(trace, &err) == NULL && strstr(err.text, trace),
          "a trace opened as a results file");
    unlink(out);
    rmdir(dir);
}

static void check_specs(const hta_tableset *analysed)
{
    size_t n = hta_table_spec_count(), unwritten = 0;
    CHECK(n > 40 && hta_table_spec_at(n) == NULL, "%zu specs", n);
    for (size_t i = 0; i < n; i++) {
        const hta_table_spec *spec = hta_table_spec_at(i);
        CHECK(hta_table_spec_find(hta_table_spec_name(spec)) == spec, "spec %zu", i);
        unwritten += !hta_table_spec_is_written(spec);
    }
    CHECK(unwritten > 0 && !hta_table_spec_is_written(hta_table_spec_find("timeline")),
          "scratch and binned specs");
    CHECK(hta_table_spec_find("no_such_table") == NULL, "a spec for no table");
    for (size_t t = 0; t < hta_tableset_count(analysed); t++) {
        const hta_table *table = hta_tableset_at(analysed, t);
        const hta_table_spec *spec = hta_table_spec_find(hta_table_name(table));
        CHECK(spec && hta_table_spec_is_written(spec), "%s: no spec of a written table",
              hta_table_name(table));
        size_t cols = spec ? hta_table_spec_column_count(spec) : 0;
        CHECK(cols == 0 || cols == hta_table_column_count(table), "%s: columns",
              hta_table_name(table));
        for (size_t c = 0; c < cols && cols == hta_table_column_count(table); c++)
            CHECK(strcmp(hta_table_spec_column_name(spec, c),
                         hta_table_column_name(table, c)) == 0 &&
                      hta_table_spec_column_type(spec, c) == hta_table_column_type(table, c),
                  "%s: column %zu", hta_table_name(table), c);
    }
}

static void check_settings(void)
{
    hta_error err = {{0}};
    hta_settings *s = hta_settings_new();
    CHECK(hta_settings_takes_value("bins") == 1 && hta_settings_takes_value("detail") == 0 &&
              hta_settings_takes_value("help") == -1 &&
              hta_settings_takes_value("no-such") == -1, "takes_value");
    CHECK(hta_settings_set(s, "bins", "7", &err) == 0, "%s", err.text);
    CHECK(hta_settings_set(s, "detail", NULL, &err) == 0, "%s", err.text);
    CHECK(hta_settings_set(s, "bins", "0", &err) != 0 && strstr(err.text, "--bins"),
          "--bins 0 accepted: %s", err.text);
    CHECK(hta_settings_set(s, "detail", "yes", &err) != 0, "a value for a flag");
    CHECK(hta_settings_set(s, "no-such", "1", &err) != 0 && strstr(err.text, "no-such"),
          "unknown option: %s", err.text);
    hta_settings_destroy(s);
}

static void check_bad_trace(void)
{
    char path[] = "/tmp/hta-public-api-XXXXXX.json";
    int fd = mkstemps(path, 5);
    const char text[] = "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1";
    CHECK(fd >= 0 && write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1),
          "temporary trace");
    close(fd);
    hta_error err = {{0}};
    CHECK(hta_trace_read(path, NULL, &err) == NULL, "a truncated trace read");
    CHECK(strstr(err.text, path) && strstr(err.text, "byte"), "%s", err.text);
    CHECK(hta_analyse_trace(path, NULL, &err) == NULL && strstr(err.text, path),
          "a truncated trace analysed: %s", err.text);
    unlink(path);
}

int main(int argc, char **argv)
{
    check_settings();
    check_bad_trace();
    const char *traces = unit_real_traces(argc, argv);
    if (traces) {
        char trace[4096];
        snprintf(trace, sizeof trace, "%s/hta/nccl_data/nccl_data.json.gz", traces);
        hta_error err = {{0}};
        hta_tableset *analysed = hta_analyse_trace(trace, NULL, &err);
        CHECK(analysed != NULL, "%s", err.text);
        if (analysed) {
            CHECK(hta_tableset_count(analysed) > 20, "tables");
            check_trace_counts(trace, analysed);
            check_specs(analysed);
            check_results_file(trace, analysed);
            hta_tableset_destroy(analysed);
        }
    }
    printf("libhta %s\n", hta_version());
    return unit_finish();
}
