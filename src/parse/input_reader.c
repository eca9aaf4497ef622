/* input_reader.c: the readers' table (see parse/input_reader.h). */
#include "parse/input_reader.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "parse/cupti_csv.h"
#include "parse/device_entry.h"
#include "parse/nsys_sqlite.h"
#include "parse/read_input.h"
#include "parse/rocpd_sqlite.h"
#include "parse/rocprof_csv.h"
#include "parse/rocprof_json.h"

static const char *const FORMAT_NAMES[] = {"auto", HTA_INPUT_FORMATS(HTA_INPUT_FORMAT_WORD)};

const char *hta_input_format_name(hta_input_format format)
{
    return format >= HTA_INPUT_AUTO && format < HTA_INPUT_N_FORMATS ? FORMAT_NAMES[format] : "?";
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

int hta_starts_like_sqlite(const char *path)
{
    static const char magic[16] = "SQLite format 3";
    char head[16];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head && memcmp(head, magic, sizeof head) == 0;
}

/* ---- the readers' rows ------------------------------------------------ */

static int read_kineto(const char *path, const hta_input_call *call, hta_trace *out,
                       hta_error *notes, hta_error *err)
{
    (void)notes;
    return hta_read_trace_file(path, call->options, out, err);
}

static int read_rocpd(const char *path, const hta_input_call *call, hta_trace *out,
                      hta_error *notes, hta_error *err)
{
    return hta_read_rocpd(path, &call->how, out, notes, err);
}

static int read_rocprof_csv(const char *path, const hta_input_call *call, hta_trace *out,
                            hta_error *notes, hta_error *err)
{
    return hta_read_rocprof_csv(path, &call->how, out, notes, err);
}

static int is_nsys_sqlite(const char *path)
{
    return hta_starts_like_sqlite(path) || has_suffix(path, ".sqlite");
}

static int read_nsys_sqlite(const char *path, const hta_input_call *call, hta_trace *out,
                            hta_error *notes, hta_error *err)
{
    return hta_read_nsys_sqlite(path, &call->how, out, notes, err);
}

static int is_directory(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int read_cupti_csv(const char *path, const hta_input_call *call, hta_trace *out,
                          hta_error *notes, hta_error *err)
{
    return hta_read_cupti_csv(path, &call->how, out, notes, err);
}

static int read_rocprof_json(const char *path, const hta_input_call *call, hta_trace *out,
                             hta_error *notes, hta_error *err)
{
    return hta_read_rocprof_json(path, call->options ? call->options->inflater : HTA_INFLATER_AUTO,
                                 &call->how, out, notes, err);
}

#define SUFFIXES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* In the order content tests are tried: the more particular first. */
const hta_input_reader hta_input_readers[] = {
    {.format = HTA_INPUT_KINETO, .suffixes = SUFFIXES(".json", ".json.gz"),
     .read = read_kineto, .fuzz_harness = "reader"},
    {.format = HTA_INPUT_ROCPD, .suffixes = SUFFIXES(".db"), .sniff = hta_is_rocpd,
     .read = read_rocpd, .devices = hta_rocpd_devices, .fuzz_harness = "rocpd"},
    {.format = HTA_INPUT_NSYS_SQLITE, .suffixes = SUFFIXES(".sqlite"), .sniff = is_nsys_sqlite,
     .read = read_nsys_sqlite, .devices = hta_nsys_devices, .fuzz_harness = "nsys_sqlite"},
    {.format = HTA_INPUT_CUPTI_CSV, .suffixes = SUFFIXES("kernel.csv", "conc_kernel.csv"),
     .is_folder = 1, .sniff = is_directory, .read = read_cupti_csv,
     .fuzz_harness = "cupti_csv"},
    {.format = HTA_INPUT_ROCPROF_JSON, .suffixes = SUFFIXES(".json", ".json.gz"),
     .sniff = hta_is_rocprof_json, .read = read_rocprof_json, .devices = hta_rocprof_json_devices,
     .device_names = SUFFIXES(HTA_ROCPROF_JSON_NAME, HTA_ROCPROF_JSON_NAME ".gz"),
     .fuzz_harness = "rocprof_json"},
    {.format = HTA_INPUT_ROCPROF_CSV, .suffixes = SUFFIXES(HTA_ROCPROF_KERNEL_CSV),
     .sniff = hta_is_rocprof_csv, .read = read_rocprof_csv, .fuzz_harness = "rocprof_csv"},
};
const size_t hta_n_input_readers = sizeof hta_input_readers / sizeof *hta_input_readers;

/* ---- lookups ------------------------------------------------------------ */

const hta_input_reader *hta_input_reader_get(hta_input_format format)
{
    for (size_t i = 0; i < hta_n_input_readers; i++)
        if (hta_input_readers[i].format == format)
            return &hta_input_readers[i];
    return NULL;
}

const hta_input_reader *hta_input_reader_of(const char *path)
{
    char base[4096];
    long long device;
    if (hta_device_entry_parse(path, base, sizeof base, &device))
        path = base;
    const hta_input_reader *fallback = NULL;
    for (size_t i = 0; i < hta_n_input_readers; i++) {
        const hta_input_reader *r = &hta_input_readers[i];
        if (!r->sniff)
            fallback = r;
        else if (r->sniff(path))
            return r;
    }
    return fallback;
}

int hta_input_may_hold_devices(const char *path)
{
    for (size_t i = 0; i < hta_n_input_readers; i++) {
        const hta_input_reader *r = &hta_input_readers[i];
        for (size_t k = 0; r->devices && r->device_names && r->device_names[k]; k++)
            if (has_suffix(path, r->device_names[k]))
                return 1;
    }
    return 0;
}

static int wanted(const hta_input_reader *r, hta_input_format format)
{
    return format == HTA_INPUT_AUTO || format == r->format;
}

const hta_input_reader *hta_input_reader_listing(const char *name, hta_input_format format)
{
    for (size_t i = 0; i < hta_n_input_readers; i++) {
        const hta_input_reader *r = &hta_input_readers[i];
        for (size_t k = 0; !r->is_folder && wanted(r, format) && r->suffixes[k]; k++)
            if (has_suffix(name, r->suffixes[k]))
                return r;
    }
    return NULL;
}

static int has_file(const char *dir, const char *name)
{
    char path[4096];
    struct stat st;
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    return n > 0 && (size_t)n < sizeof path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

const hta_input_reader *hta_input_folder_reader(const char *dir, hta_input_format format)
{
    for (size_t i = 0; i < hta_n_input_readers; i++) {
        const hta_input_reader *r = &hta_input_readers[i];
        for (size_t k = 0; r->is_folder && wanted(r, format) && r->suffixes[k]; k++)
            if (has_file(dir, r->suffixes[k]))
                return r;
    }
    return NULL;
}
