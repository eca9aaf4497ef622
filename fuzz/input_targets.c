/* input_targets.c: the SQLite and CSV reader targets (see targets.h).
 *
 * Both reach the readers the way a run does, through files: the SQLite input
 * is written to a scratch file (SQLite resolves a memfd's /proc path to a
 * name it cannot open), the CSV input is cut into the files of a CUPTI CSV
 * folder in a scratch directory.  Each input is read twice and the two reads
 * must agree in everything (the readers keep no state between files); a kept
 * event must have a non-negative start and duration, and an error must name
 * the input.  An export's devices (hta_nsys_devices) are each read alone as
 * well, the way discovery splits a node's export. */
#define _GNU_SOURCE
#include "targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse/cupti_csv.h"
#include "parse/nsys_sqlite.h"
#include "parse/rocpd_sqlite.h"
#include "parse/rocprof_csv.h"
#include "parse/rocprof_json.h"
#include "checks.h"

#define MAX_DEVICES 4

typedef int (*input_reader)(const char *path, const hta_builder_options *how, hta_trace *out,
                            hta_error *notes, hta_error *err);

/* How much of the two reads must agree: everything, or (for the SQLite
 * reader) the error up to the table, since SQLite's own message about the
 * same corrupt file can differ between two opens ("database disk image is
 * malformed", then "malformed database schema"); and on a corrupt file
 * SQLite may even find the damage on one open and not on the next (what
 * it reads past a damaged cell depends on its page buffers' earlier
 * contents), so there a read that failed on corruption may stand against
 * one that did not, or that failed elsewhere. */
typedef enum { SAME_WHOLE_ERROR, SAME_ERROR_UP_TO_TABLE } error_agreement;

/* Whether err is SQLite's report of a corrupt file. */
static int reports_corruption(int rc, const hta_error *err)
{
    return rc != 0 && strstr(err->text, "malformed") != NULL;
}

/* The length of err's text that two reads must share. */
static size_t agreed_length(const char *text, error_agreement agreement)
{
    if (agreement == SAME_WHOLE_ERROR)
        return strlen(text) + 1;
    const char *p = text;
    for (int separators = 0; separators < 3; separators++) {
        const char *next = strstr(p, ": ");
        if (!next)
            return strlen(text) + 1;
        p = next + 2;
    }
    return (size_t)(p - text);
}

/* Reads path twice with how; both reads must agree, and an error must
 * start with `named` (the input, or what names its files). */
static void read_twice_named(input_reader read, const char *path, const char *named,
                             const hta_builder_options *how, error_agreement agreement);

static void read_twice(input_reader read, const char *path, const hta_builder_options *how,
                       error_agreement agreement)
{
    read_twice_named(read, path, path, how, agreement);
}

static void read_twice_named(input_reader read, const char *path, const char *named,
                             const hta_builder_options *how, error_agreement agreement)
{
    hta_trace first, second;
    hta_error notes = {{0}}, err = {{0}}, notes2 = {{0}}, err2 = {{0}};
    int rc = read(path, how, &first, &notes, &err);
    int rc2 = read(path, how, &second, &notes2, &err2);
    if (agreement == SAME_ERROR_UP_TO_TABLE &&
        (reports_corruption(rc, &err) || reports_corruption(rc2, &err2))) {
        if (!rc)
            hta_trace_free(&first);
        if (!rc2)
            hta_trace_free(&second);
        return;
    }
    hta_fuzz_require(rc == rc2, "the outcome of a second read differs");
    if (rc) {
        size_t n = agreed_length(err.text, agreement);
        hta_fuzz_require(n == agreed_length(err2.text, agreement) &&
                         strncmp(err.text, err2.text, n) == 0,
                         "the error of a second read differs");
        hta_fuzz_require(strncmp(err.text, named, strlen(named)) == 0, "the error names the input");
        hta_fuzz_require(strchr(err.text, '\n') == NULL, "the error is one line");
        return;
    }
    hta_fuzz_require(strcmp(notes.text, notes2.text) == 0, "the notes of a second read differ");
    hta_fuzz_require(hta_fuzz_same_trace(&first, &second), "the events of a second read differ");
    for (size_t i = 0; i < first.n_events; i++)
        hta_fuzz_require(first.events[i].ts_ns >= 0 && first.events[i].dur_ns >= 0,
                "a kept event has a negative time");
    hta_trace_free(&first);
    hta_trace_free(&second);
}

typedef int (*device_lister)(const char *path, long long *devices, size_t cap, size_t *n);

/* Reads path whole, then (each_device) every device it lists alone, the
 * way discovery splits a node's file. */
static void read_devices(input_reader read, device_lister list, const char *path,
                         hta_builder_options *how, int each_device, error_agreement agreement)
{
    read_twice(read, path, how, agreement);
    long long devices[MAX_DEVICES];
    size_t n = 0;
    if (each_device && list(path, devices, MAX_DEVICES, &n) == 0) {
        for (size_t i = 0; i < n; i++) {
            how->one_device = 1;
            how->device = devices[i];
            read_twice(read, path, how, agreement);
        }
    }
}

/* The input after its options byte, written to this process's scratch
 * file `name` (path, room for 64). */
static void write_scratch(char *path, const char *name, const uint8_t *data, size_t size)
{
    snprintf(path, 64, "/tmp/hta-fuzz-%d-%s", (int)getpid(), name);
    FILE *f = fopen(path, "wb");
    hta_fuzz_require(f && fwrite(data + 1, 1, size - 1, f) == size - 1 && fclose(f) == 0,
            "write the input");
}

/* Byte 0: bit 0 reads with --step-regex "^step", bit 1 reads each device
 * the export lists alone too. */
int hta_fuzz_nsys_sqlite(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    char path[64];
    write_scratch(path, "export.sqlite", data, size);
    hta_builder_options how = {.step_regex = data[0] & 1 ? "^step" : NULL};
    read_devices(hta_read_nsys_sqlite, hta_nsys_devices, path, &how, data[0] & 2,
                 SAME_ERROR_UP_TO_TABLE);
    unlink(path);
    return 0;
}

/* Byte 0: bit 0 reads with --step-regex "^step", bit 1 reads each agent
 * the database lists alone too. */
int hta_fuzz_rocpd(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    char path[64];
    write_scratch(path, "results.db", data, size);
    hta_builder_options how = {.step_regex = data[0] & 1 ? "^step" : NULL};
    read_devices(hta_read_rocpd, hta_rocpd_devices, path, &how, data[0] & 2,
                 SAME_ERROR_UP_TO_TABLE);
    unlink(path);
    return 0;
}

/* The files of a CSV folder, in the order the input's parts fill them. */
static const char *const CSV_FILES[] = {"kernel.csv", "cuda_runtime.csv", "gpu_memcpy.csv",
                                        "gpu_memset.csv", "cuda_sync.csv", "user_annotation.csv",
                                        "cuda_driver.csv"};
#define N_CSV_FILES (sizeof CSV_FILES / sizeof *CSV_FILES)

/* This process's scratch folder (dir, room for 64), emptied of the CSV
 * files. */
static void csv_scratch(char *dir)
{
    snprintf(dir, 64, "/tmp/hta-fuzz-csv-%d", (int)getpid());
    hta_fuzz_require(mkdir(dir, 0700) == 0 || access(dir, W_OK) == 0, "mkdir the scratch folder");
    char path[128];
    for (size_t i = 0; i < N_CSV_FILES; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, CSV_FILES[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/conc_kernel.csv", dir);
    unlink(path);
}

/* Cuts the input after its options byte into the files `files` (n of
 * them, each under dir with prefix), at HTA_FUZZ_CSV_SEPARATOR. */
static void write_parts(const uint8_t *data, size_t size, const char *dir, const char *prefix,
                        const char *const *files, size_t n)
{
    const char *p = (const char *)data + 1, *end = (const char *)data + size;
    for (size_t i = 0; i < n && p <= end; i++) {
        const char *cut = memmem(p, (size_t)(end - p), HTA_FUZZ_CSV_SEPARATOR,
                                 strlen(HTA_FUZZ_CSV_SEPARATOR));
        const char *stop = cut ? cut : end;
        char path[160];
        snprintf(path, sizeof path, "%s/%s%s", dir, prefix, files[i]);
        FILE *f = fopen(path, "wb");
        hta_fuzz_require(f && fwrite(p, 1, (size_t)(stop - p), f) == (size_t)(stop - p) &&
                             fclose(f) == 0,
                         "write a CSV file");
        if (!cut)
            break;
        p = cut + strlen(HTA_FUZZ_CSV_SEPARATOR);
    }
}

int hta_fuzz_cupti_csv(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    char dir[64];
    csv_scratch(dir);
    const char *files[N_CSV_FILES];
    memcpy(files, CSV_FILES, sizeof files);
    if (data[0] & 2)
        files[0] = "conc_kernel.csv";
    write_parts(data, size, dir, "", files, N_CSV_FILES);
    hta_builder_options how = {.step_regex = data[0] & 1 ? "^step" : NULL};
    read_twice(hta_read_cupti_csv, dir, &how, SAME_WHOLE_ERROR);
    return 0;
}

/* rocprofv3's CSV files, in the order the input's parts fill them. */
static const char *const ROCPROF_CSV_FILES[] = {"kernel_trace.csv", "hip_api_trace.csv",
                                                "memory_copy_trace.csv",
                                                "marker_api_trace.csv", "rccl_api_trace.csv"};
#define N_ROCPROF_CSV_FILES (sizeof ROCPROF_CSV_FILES / sizeof *ROCPROF_CSV_FILES)

int hta_fuzz_rocprof_csv(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    char dir[64], path[160];
    csv_scratch(dir);
    for (size_t i = 0; i < N_ROCPROF_CSV_FILES; i++) {
        snprintf(path, sizeof path, "%s/9_%s", dir, ROCPROF_CSV_FILES[i]);
        unlink(path);
    }
    write_parts(data, size, dir, "9_", ROCPROF_CSV_FILES, N_ROCPROF_CSV_FILES);
    char prefix[80];
    snprintf(path, sizeof path, "%s/9_%s", dir, ROCPROF_CSV_FILES[0]);
    snprintf(prefix, sizeof prefix, "%s/9_", dir);
    hta_builder_options how = {.step_regex = data[0] & 1 ? "^step" : NULL};
    /* An error names the file of the set at fault. */
    read_twice_named(hta_read_rocprof_csv, path, prefix, &how, SAME_WHOLE_ERROR);
    return 0;
}

static int read_rocprof_json(const char *path, const hta_builder_options *how, hta_trace *out,
                             hta_error *notes, hta_error *err)
{
    return hta_read_rocprof_json(path, HTA_INFLATER_AUTO, how, out, notes, err);
}

/* Byte 0: bit 0 reads with --step-regex "^step", bit 1 reads each GPU
 * the results list alone too. */
int hta_fuzz_rocprof_json(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    char path[64];
    write_scratch(path, "results.json", data, size);
    hta_builder_options how = {.step_regex = data[0] & 1 ? "^step" : NULL};
    read_devices(read_rocprof_json, hta_rocprof_json_devices, path, &how, data[0] & 2,
                 SAME_WHOLE_ERROR);
    unlink(path);
    return 0;
}
