/* parse/input_reader.h: the trace formats hta-mpi reads, as one table.
 *
 * Every reader fills the same trace model (model/trace.h).  Its row says
 * which names discovery lists, how its content is recognised, how it is
 * read, whether a file can hold several GPUs that are read one at a time
 * (parse/device_entry.h) and which libFuzzer harness covers it.  From
 * this table come discovery (run/discover.c), the dispatch
 * (parse/read_input.c) and the checks that every reader has its harness;
 * the names, --input-format's words and its --help line come from
 * settings/input_formats.h, which the table's rows are keyed by.
 *
 * A file's format is decided by its content, not its name, so a
 * mislabelled file still reads: the rows with a content test are tried in
 * the table's order (the more particular first), and a file that none
 * claims is Kineto JSON. */
#ifndef HTA_INPUT_READER_H
#define HTA_INPUT_READER_H

#include <stddef.h>

#include "util/error.h"
#include "settings/input_formats.h"
#include "model/trace.h"
#include "parse/reader.h"
#include "parse/trace_builder.h"

/* How one input is read: the Kineto reader takes `options`, the readers
 * built on parse/trace_builder.h take `how`. */
typedef struct hta_input_call {
    const hta_read_options *options;   /* NULL: the defaults */
    hta_builder_options how;
} hta_input_call;

typedef struct hta_input_reader {
    hta_input_format format;           /* its name: settings/input_formats.h */
    /* File names discovery lists (name endings), NULL-terminated; for a
     * folder reader, the files whose presence makes a folder one trace. */
    const char *const *suffixes;
    int is_folder;                     /* one trace is a folder of files */
    /* 1 when path's content is this format; NULL for the reader of what
     * no other claims (Kineto JSON). */
    int (*sniff)(const char *path);
    /* Reads path into out (initialised by the callee); on error out is
     * freed and err names the file.  notes receives one line about what
     * the input lacks for some analysis, or stays "". */
    int (*read)(const char *path, const hta_input_call *call, hta_trace *out, hta_error *notes,
                hta_error *err);
    /* The GPUs a file holds, ascending, up to cap (*n = 0 when it does not
     * say); -1 when it cannot be opened.  NULL: a file is one trace. */
    int (*devices)(const char *path, long long *devices, size_t cap, size_t *n);
    /* Names (endings) of files that discovery opens to list their devices
     * although another reader lists them (NULL: none): listing reads a
     * file, and the root lists thousands of Kineto ones. */
    const char *const *device_names;
    const char *fuzz_harness;          /* its line in fuzz/harnesses */
} hta_input_reader;

extern const hta_input_reader hta_input_readers[];
extern const size_t hta_n_input_readers;

/* "auto", "kineto", ...: the /ranks input_format column. */
const char *hta_input_format_name(hta_input_format format);

/* The reader of format (not HTA_INPUT_AUTO). */
const hta_input_reader *hta_input_reader_get(hta_input_format format);

/* The reader an existing input needs, by its content; a device entry
 * (parse/device_entry.h) by its file's. */
const hta_input_reader *hta_input_reader_of(const char *path);

/* The file reader (HTA_INPUT_AUTO: any) whose suffixes end name; NULL
 * when none does. */
const hta_input_reader *hta_input_reader_listing(const char *name, hta_input_format format);

/* The folder reader (HTA_INPUT_AUTO: any) for which dir is one trace;
 * NULL when none. */
const hta_input_reader *hta_input_folder_reader(const char *dir, hta_input_format format);

/* 1 when a reader with devices names path in its device_names. */
int hta_input_may_hold_devices(const char *path);

/* 1 when path starts with SQLite's file header. */
int hta_starts_like_sqlite(const char *path);

#endif
