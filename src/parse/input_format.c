/* input_format.c: which reader a trace input needs (see parse/input_format.h). */
#include "parse/input_format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const NAMES[] = {"auto", "kineto", "nsys-sqlite", "cupti-csv"};

const char *hta_input_format_name(hta_input_format format)
{
    return format >= HTA_INPUT_AUTO && format <= HTA_INPUT_CUPTI_CSV ? NAMES[format] : "?";
}

static int has_file(const char *dir, const char *name)
{
    char path[4096];
    struct stat st;
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    return n > 0 && (size_t)n < sizeof path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int hta_is_cupti_csv_dir(const char *dir)
{
    return has_file(dir, "kernel.csv") || has_file(dir, "conc_kernel.csv");
}

/* SQLite's 16-byte file header. */
static int starts_like_sqlite(const char *path)
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

#define DEVICE_SUFFIX "@device="

int hta_device_entry_parse(const char *path, char *base, size_t cap, long long *device)
{
    const char *at = strstr(path, DEVICE_SUFFIX);
    while (at && strstr(at + 1, DEVICE_SUFFIX))
        at = strstr(at + 1, DEVICE_SUFFIX);
    if (!at || (size_t)(at - path) >= cap)
        return 0;
    const char *digits = at + strlen(DEVICE_SUFFIX);
    char *end;
    long long v = strtoll(digits, &end, 10);
    if (end == digits || *end || v < 0)
        return 0;
    memcpy(base, path, (size_t)(at - path));
    base[at - path] = '\0';
    struct stat st;
    if (stat(base, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    *device = v;
    return 1;
}

int hta_device_entry_name(const char *export_path, long long device, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s" DEVICE_SUFFIX "%lld", export_path, device);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

hta_input_format hta_input_format_of(const char *path)
{
    char base[4096];
    long long device;
    if (hta_device_entry_parse(path, base, sizeof base, &device))
        return HTA_INPUT_NSYS_SQLITE;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return HTA_INPUT_CUPTI_CSV;
    size_t n = strlen(path);
    if (starts_like_sqlite(path) || (n >= 7 && strcmp(path + n - 7, ".sqlite") == 0))
        return HTA_INPUT_NSYS_SQLITE;
    return HTA_INPUT_KINETO;
}
