/* discover.c: the list of trace files a run analyses, and their
 * assignment to processes (see run/discover.h).  Runs on the root only; the
 * sorted list is then broadcast, so every process sees the same order. */

#include "run/discover.h"

#include "parse/device_entry.h"
#include "parse/fr_dump.h"
#include "parse/input_reader.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/ranked.h"

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A file the run reads: a name a file reader lists (parse/input_reader.h),
 * of the reader --input-format names if it names one. */
static int is_trace_name(const char *name, int format)
{
    return name[0] != '.' && hta_input_reader_listing(name, (hta_input_format)format) != NULL;
}

/* A Flight Recorder dump (parse/fr_dump.h), recognised by content when
 * --input-format leaves it to content: torch names it <prefix><rank>, so
 * only a name ending in a digit is opened to look. */
static int is_fr_dump(const char *path, const char *name, int format)
{
    size_t n = strlen(name);
    return format == HTA_INPUT_AUTO && name[0] != '.' && n && name[n - 1] >= '0' &&
           name[n - 1] <= '9' && hta_fr_dump_file_sniff(path);
}

/* The bytes of a trace folder's files (its size for assignment). */
static uint64_t folder_bytes(const char *dir)
{
    uint64_t total = 0;
    DIR *d = opendir(dir);
    struct dirent *entry;
    while (d && (entry = readdir(d))) {
        char path[4096];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%s", dir, entry->d_name) < (int)sizeof path &&
            stat(path, &st) == 0 && S_ISREG(st.st_mode))
            total += (uint64_t)st.st_size;
    }
    if (d)
        closedir(d);
    return total;
}

static int is_trace_folder(const char *dir, int format)
{
    return hta_input_folder_reader(dir, (hta_input_format)format) != NULL;
}

static int add_file(hta_file_list *list, const char *path, uint64_t bytes)
{
    char **paths = realloc(list->paths, (list->count + 1) * sizeof *paths);
    if (!paths)
        return -1;
    list->paths = paths;
    uint64_t *sizes = realloc(list->bytes, (list->count + 1) * sizeof *sizes);
    if (!sizes)
        return -1;
    list->bytes = sizes;
    if (!(list->paths[list->count] = strdup(path)))
        return -1;
    list->bytes[list->count++] = bytes;
    return 0;
}

static int scan_directory(const char *dir, int recursive, int format, hta_file_list *list,
                          hta_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return hta_fail(err, "%s: cannot read directory: %s", dir, strerror(errno));
    int rc = 0;
    struct dirent *entry;
    while (rc == 0 && (entry = readdir(d))) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        size_t len = strlen(dir) + strlen(entry->d_name) + 2;
        char *path = malloc(len);
        if (!path) {
            rc = hta_fail(err, "out of memory while listing %s", dir);
            break;
        }
        snprintf(path, len, "%s%s%s", dir, has_suffix(dir, "/") ? "" : "/", entry->d_name);
        /* A trace name that cannot be stat'ed (a dangling link) is still
         * listed: opening it fails, and /ranks records why. */
        struct stat st;
        int found = stat(path, &st) == 0;
        /* A trace folder (CUPTI CSV) is one rank's trace, found at any depth. */
        if (found && S_ISDIR(st.st_mode) && is_trace_folder(path, format)) {
            if (add_file(list, path, folder_bytes(path)))
                rc = hta_fail(err, "out of memory while listing %s", dir);
        } else if (found && S_ISDIR(st.st_mode) && recursive)
            rc = scan_directory(path, recursive, format, list, err);
        else if ((!found || !S_ISDIR(st.st_mode)) &&
                 (is_trace_name(entry->d_name, format) ||
                  (found && is_fr_dump(path, entry->d_name, format))) &&
                 add_file(list, path, found ? (uint64_t)st.st_size : 0))
            rc = hta_fail(err, "out of memory while listing %s", dir);
        free(path);
    }
    closedir(d);
    return rc;
}

/* 1 when dir itself holds trace files (not folders). */
static int holds_trace_files(const char *dir)
{
    int found = 0;
    DIR *d = opendir(dir);
    struct dirent *entry;
    while (d && !found && (entry = readdir(d)))
        found = is_trace_name(entry->d_name, HTA_INPUT_AUTO);
    if (d)
        closedir(d);
    return found;
}

/* An input directory: a trace folder (CUPTI CSV) is one trace, any other
 * is scanned.  A trace folder that also holds trace files is ambiguous
 * unless --input-format says which. */
static int add_directory(const char *dir, const hta_settings *opt, hta_file_list *list,
                         hta_error *err)
{
    const hta_input_reader *folder = hta_input_folder_reader(dir, opt->read.input_format);
    if (!folder)
        return scan_directory(dir, opt->read.recursive, opt->read.input_format, list, err);
    if (opt->read.input_format == HTA_INPUT_AUTO && holds_trace_files(dir))
        return hta_fail(err, "%s: holds both %s files and trace files; say which with "
                             "--input-format %s (the folder is one trace) or the format of "
                             "its trace files", dir, hta_input_format_name(folder->format),
                        hta_input_format_name(folder->format));
    /* Without trailing slashes, so that the folder's name gives its rank. */
    char *name = strdup(dir);
    if (!name)
        return hta_fail(err, "out of memory");
    for (size_t n = strlen(name); n > 1 && name[n - 1] == '/'; n--)
        name[n - 1] = '\0';
    int rc = add_file(list, name, folder_bytes(name)) ? hta_fail(err, "out of memory") : 0;
    free(name);
    return rc;
}

#define MAX_DEVICES 256

/* Adds path to list, or, for a file holding several devices (an Nsight
 * Systems export of a node), one entry per device (each with its share of
 * the bytes, for the assignment). */
static int add_file_devices(hta_file_list *list, const hta_input_reader *reader,
                            const char *path, uint64_t bytes)
{
    long long devices[MAX_DEVICES];
    size_t n;
    if (reader->devices(path, devices, MAX_DEVICES, &n) || n < 2)
        return add_file(list, path, bytes);
    for (size_t i = 0; i < n; i++) {
        char entry[4096 + 32];
        if (hta_device_entry_name(path, devices[i], entry, sizeof entry) ||
            add_file(list, entry, bytes / n))
            return -1;
    }
    return 0;
}

/* The reader of a listed path when it can hold several devices, else
 * NULL.  The names of readers that cannot are not opened, but for the
 * names a device reader claims (parse/input_reader.h): the root lists
 * thousands of Kineto files. */
static const hta_input_reader *device_reader(const char *path, hta_input_format format)
{
    const hta_input_reader *r = format != HTA_INPUT_AUTO ? hta_input_reader_get(format)
                                                         : hta_input_reader_listing(path, format);
    if (!r || (format == HTA_INPUT_AUTO && (r->devices || hta_input_may_hold_devices(path))))
        r = hta_input_reader_of(path);
    return r->devices ? r : NULL;
}

/* One trace per device of every file that holds several, unless
 * --merge-devices. */
static int split_devices(hta_file_list *list, const hta_settings *opt, hta_error *err)
{
    hta_input_format format = (hta_input_format)opt->read.input_format;
    if (opt->read.merge_devices ||
        (format != HTA_INPUT_AUTO && !hta_input_reader_get(format)->devices))
        return 0;
    hta_file_list split = {0};
    for (size_t i = 0; i < list->count; i++) {
        const char *path = list->paths[i];
        const hta_input_reader *reader = device_reader(path, format);
        if (reader ? add_file_devices(&split, reader, path, list->bytes[i])
                   : add_file(&split, path, list->bytes[i])) {
            hta_file_list_free(&split);
            return hta_fail(err, "out of memory while listing the traces");
        }
    }
    hta_file_list_free(list);
    *list = split;
    return 0;
}

/* The error of an input without traces, naming what discovery lists. */
static int no_trace_files(hta_error *err)
{
    char names[512] = "";
    size_t n = 0;
    for (size_t i = 0; i < hta_n_input_readers && n < sizeof names; i++) {
        const hta_input_reader *r = &hta_input_readers[i];
        for (size_t k = 0; r->suffixes[k] && n < sizeof names; k++)
            if ((!r->is_folder || k == 0) && !strstr(names, r->suffixes[k]))
                n += (size_t)snprintf(names + n, sizeof names - n, "%s%s%s", n ? ", " : "",
                                      r->is_folder ? "folders with " : "*", r->suffixes[k]);
    }
    return hta_fail(err, "no trace files (%s) found in the given input", names);
}

typedef struct sized_path {
    char *path;
    uint64_t bytes;
} sized_path;

static int compare_paths(const void *a, const void *b)
{
    return strcmp(((const sized_path *)a)->path, ((const sized_path *)b)->path);
}

int hta_discover(const hta_settings *opt, hta_file_list *out, hta_error *err)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < opt->run.n_inputs; i++) {
        const char *input = opt->run.inputs[i];
        struct stat st;
        if (stat(input, &st) != 0) {
            hta_file_list_free(out);
            return hta_fail(err, "%s: %s", input, strerror(errno));
        }
        int rc = S_ISDIR(st.st_mode) ? add_directory(input, opt, out, err)
                                     : (add_file(out, input, (uint64_t)st.st_size)
                                            ? hta_fail(err, "out of memory") : 0);
        if (rc) {
            hta_file_list_free(out);
            return -1;
        }
    }
    if (out->count == 0)
        return no_trace_files(err);
    if (split_devices(out, opt, err)) {
        hta_file_list_free(out);
        return -1;
    }
    size_t n = out->count;
    sized_path *entries = malloc(n * sizeof *entries);
    if (!entries) {
        hta_file_list_free(out);
        return hta_fail(err, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        entries[i] = (sized_path){out->paths[i], out->bytes[i]};
    qsort(entries, n, sizeof *entries, compare_paths);
    for (size_t i = 0; i < n; i++) {
        out->paths[i] = entries[i].path;
        out->bytes[i] = entries[i].bytes;
    }
    free(entries);
    for (size_t i = 1; i < n; i++)
        if (strcmp(out->paths[i], out->paths[i - 1]) == 0) {
            hta_fail(err, "%s: named twice in the input", out->paths[i]);
            hta_file_list_free(out);
            return -1;
        }
    return 0;
}

int hta_assign(const hta_file_list *list, int n_processes, int *owner)
{
    size_t n = list->count;
    hta_ranked *order = malloc((n ? n : 1) * sizeof *order);
    uint64_t *load = calloc((size_t)n_processes, sizeof *load);
    if (!order || !load) {
        free(order);
        free(load);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = (hta_ranked){(double)list->bytes[i], i};
    hta_rank_descending(order, n);
    for (size_t k = 0; k < n; k++) {
        int best = 0;
        for (int p = 1; p < n_processes; p++)
            if (load[p] < load[best])
                best = p;
        owner[order[k].row] = best;
        /* +1 so that empty files still spread across processes. */
        load[best] += list->bytes[order[k].row] + 1;
    }
    free(order);
    free(load);
    return 0;
}
