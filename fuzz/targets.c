/* targets.c: what the fuzz targets do with one input (see targets.h).
 *
 * The reader target parses twice, in small refills and in one buffer, and
 * aborts when the two disagree in anything: outcome, error text, events,
 * extras, strings or metadata.  That turns every buffer-boundary bug into a
 * crash even when it corrupts nothing the sanitizers can see.  Both parses
 * use the structural pre-scan (parse/json_scan.h); a third without it, the
 * member-by-member reference, must agree too, and the pre-scan's SIMD
 * classifiers must give the byte loop's masks on every block of the input.
 * It then parses the input as a file with 2 to 7 threads and no size
 * floor, which must agree with one thread in the same way.
 *
 * The analyses target writes the input to a memfd so that it enters through
 * the production entry point, hta_analyse_file, as a real file would; the
 * stages after it are the root's (MPI only moves the packed tables).  It
 * also analyses the input on 2 to 4 threads, whatever its size, and aborts
 * when any table differs from the one-thread run's. */
#define _GNU_SOURCE
#include "targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis/ranks_table.h"
#include "analysis/timeline.h"
#include "output/run_info.h"
#include "output/summary.h"
#include "parse/json_scan.h"
#include "parse/read_input.h"
#include "parse/reader.h"
#include "run/analyse_file.h"
#include "run/discover.h"
#include "run/pipeline.h"
#include "run/ranks.h"
#include "analysis/timeline_bins.h"
#include "checks.h"

/* Writes bytes to a memfd, named by path (room for 64); returns the fd. */
static int memfd_holding(const void *bytes, size_t len, char *path)
{
    int fd = memfd_create("fuzz-trace", 0);
    hta_fuzz_require(fd >= 0, "memfd_create");
    hta_fuzz_require(write(fd, bytes, len) == (ssize_t)len, "write to the memfd");
    snprintf(path, 64, "/proc/self/fd/%d", fd);
    return fd;
}

/* Parsing the JSON as a file with several threads gives what one does. */
static void check_threads_agree(const char *json, size_t len, uint8_t selector)
{
    char path[64];
    int fd = memfd_holding(json, len, path);
    hta_read_options split = {.threads = 2 + selector % 6, .split_min_bytes = 1};
    hta_trace serial, threaded;
    hta_error serial_err = {{0}}, threaded_err = {{0}};
    int serial_rc = hta_read_trace_file(path, NULL, &serial, &serial_err);
    int threaded_rc = hta_read_trace_file(path, &split, &threaded, &threaded_err);
    close(fd);
    hta_fuzz_require(serial_rc == threaded_rc, "the outcome depends on the thread count");
    if (serial_rc) {
        hta_fuzz_require(strcmp(serial_err.text, threaded_err.text) == 0,
                "the error depends on the thread count");
        return;
    }
    hta_fuzz_require(hta_fuzz_same_trace(&serial, &threaded),
                     "the events depend on the thread count");
    hta_trace_free(&serial);
    hta_trace_free(&threaded);
}

/* The SIMD classifiers give the byte loop's masks and carries on every
 * 64-byte block of bytes (the last one padded with zeros). */
static void check_classifiers_agree(const char *bytes, size_t len)
{
    size_t blocks = (len + 63) / 64;
    char *padded = calloc(blocks * 64 + JS_READ_PAST_BYTES, 1);
    hta_fuzz_require(padded != NULL, "out of memory");
    memcpy(padded, bytes, len);
    hta_fuzz_require(js_first_disagreement(JS_SCAN_AVX2, padded, blocks) < 0 &&
                         js_first_disagreement(JS_SCAN_BEST, padded, blocks) < 0,
                     "a SIMD classifier differs from the byte loop");
    free(padded);
}

/* The parse without the pre-scan agrees with the one with it (whole). */
static void check_prescan_agrees(const char *json, size_t len, uint8_t chunk, int rc,
                                 const hta_trace *with, const char *error)
{
    hta_trace without;
    hta_error err = {{0}};
    js_scan_level level = chunk & 1 ? JS_SCAN_OFF : JS_SCAN_PORTABLE;
    int without_rc = hta_read_trace_memory_scanned(json, len, chunk, level, "fuzz", &without, &err);
    hta_fuzz_require(without_rc == rc, "the outcome depends on the pre-scan");
    if (rc) {
        hta_fuzz_require(strcmp(err.text, error) == 0, "the error depends on the pre-scan");
        return;
    }
    hta_fuzz_require(hta_fuzz_same_trace(with, &without), "the events depend on the pre-scan");
    hta_trace_free(&without);
}

int hta_fuzz_reader(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *json = (const char *)data + 1;
    size_t len = size - 1;
    hta_trace pieces, whole;
    hta_error pieces_err = {{0}}, whole_err = {{0}};
    int pieces_rc = hta_read_trace_memory(json, len, data[0], "fuzz", &pieces, &pieces_err);
    int whole_rc = hta_read_trace_memory(json, len, 0, "fuzz", &whole, &whole_err);
    hta_fuzz_require(pieces_rc == whole_rc, "the outcome depends on the refill size");
    check_classifiers_agree(json, len);
    check_prescan_agrees(json, len, data[0], whole_rc, &whole, whole_err.text);
    if (pieces_rc) {
        hta_fuzz_require(strcmp(pieces_err.text, whole_err.text) == 0,
                "the error depends on the refill size");
        hta_fuzz_require(strstr(whole_err.text, "fuzz: ") == whole_err.text,
                         "the error names the input");
        check_threads_agree(json, len, data[0]);
        return 0;
    }
    hta_fuzz_require(hta_fuzz_same_trace(&pieces, &whole), "the events depend on the refill size");
    for (size_t i = 0; i < whole.n_events; i++)
        hta_fuzz_require(whole.events[i].dur_ns >= 0 && whole.events[i].ts_ns >= 0,
                "a kept event has a negative time");
    hta_trace_free(&pieces);
    hta_trace_free(&whole);
    check_threads_agree(json, len, data[0]);
    return 0;
}

/* Byte 0 of an analyses input: bit 0 --round-like-hta, bit 1
 * --include-last-step, bit 2 --detail, bit 3 the file is analysed twice
 * (two ranks for the cross-rank statistics), bits 4-7 --bins (0 = 30). */
static void options_from_byte(uint8_t b, hta_settings *opt)
{
    hta_settings_defaults(opt);
    opt->analysis.round_like_hta = b & 1;
    opt->analysis.include_last_step = (b >> 1) & 1;
    opt->analysis.detail = (b >> 2) & 1;
    opt->analysis.critical_path = (b >> 3) & 1;
    if (b >> 4)
        opt->analysis.bins = b >> 4;
    opt->output.path = "fuzz.h5";
}

/* The root's part of a run, on this process's own tables. */
static void finish_like_root(hta_tableset *mine, const hta_settings *opt)
{
    hta_error err = {{0}};
    int64_t start, end;
    if (hta_timeline_local_range(mine, &start, &end))
        hta_timeline_bin(mine, opt->analysis.bins, start, end, &err);
    hta_buf packed = {0};
    hta_tableset all = {0};
    hta_fuzz_require(hta_tableset_pack(mine, &packed) == 0, "tables pack");
    hta_fuzz_require(hta_tableset_merge(&all, packed.data, packed.len, &err) == 0, "tables merge");
    hta_buf_free(&packed);
    hta_rank_map map;
    if (hta_crossrank_alone(&all, opt, &map, &err) == 0) {
        char name[] = "fuzz", *paths[] = {name};
        hta_run_info info = {.tool_version = "fuzz", .n_processes = 1, .trace_paths = paths,
                             .n_traces = 1};
        hta_print_summary(&all, &opt->output, &info);
    }
    hta_rank_map_free(&map);
    hta_tableset_free(&all);
}

/* The tables as bytes, the ranks table left out: its timings and thread
 * count differ between runs. */
static void pack_without_ranks(const hta_tableset *set, hta_buf *out)
{
    hta_buf all = {0};
    hta_tableset copy = {0};
    hta_error err = {{0}};
    hta_fuzz_require(hta_tableset_pack(set, &all) == 0, "tables pack");
    hta_fuzz_require(hta_tableset_merge(&copy, all.data, all.len, &err) == 0, "tables merge");
    hta_tableset_remove(&copy, hta_ranks_table.name);
    hta_fuzz_require(hta_tableset_pack(&copy, out) == 0, "tables pack");
    hta_buf_free(&all);
    hta_tableset_free(&copy);
}

/* Analysing on several threads gives what one thread does. */
static void check_analysis_threads_agree(const char *path, uint64_t bytes,
                                         const hta_tableset *serial, hta_settings opt,
                                         uint8_t selector)
{
    opt.run.threads = 2 + selector % 3;
    opt.run.threaded_min_events = 1;
    hta_tableset threaded = {0};
    hta_fuzz_require(hta_analyse_file(path, bytes, 0, 0, &opt, &threaded) == 0,
                     "threaded analyse_file");
    hta_buf a = {0}, b = {0};
    pack_without_ranks(serial, &a);
    pack_without_ranks(&threaded, &b);
    hta_fuzz_require(a.len == b.len && memcmp(a.data, b.data, a.len) == 0,
            "the tables depend on the thread count");
    hta_buf_free(&a);
    hta_buf_free(&b);
    hta_tableset_free(&threaded);
}

int hta_fuzz_analyses(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    hta_settings opt;
    options_from_byte(data[0], &opt);
    char path[64];
    int fd = memfd_holding(data + 1, size - 1, path);
    hta_tableset mine = {0};
    int copies = data[0] & 8 ? 2 : 1;
    for (int i = 0; i < copies; i++)
        hta_fuzz_require(hta_analyse_file(path, size - 1, i, 0, &opt, &mine) == 0, "analyse_file");
    if (copies == 1)
        check_analysis_threads_agree(path, size - 1, &mine, opt, data[0]);
    close(fd);
    finish_like_root(&mine, &opt);
    hta_tableset_free(&mine);
    return 0;
}
