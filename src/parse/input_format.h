/* parse/input_format.h: which reader a trace input needs.
 *
 * Three sources fill the same trace model (model/trace.h): a Kineto JSON
 * file (.json, .json.gz), an Nsight Systems SQLite export (one file per
 * rank) and a folder of CUPTI activity CSV files (one folder per rank).
 * The format of a file is decided by its first bytes, not its name, so a
 * mislabelled file still reads; a directory is a CUPTI folder when it
 * holds kernel.csv or conc_kernel.csv. */
#ifndef HTA_INPUT_FORMAT_H
#define HTA_INPUT_FORMAT_H

#include <stddef.h>

typedef enum hta_input_format {
    HTA_INPUT_AUTO = 0,        /* decided per input, as above */
    HTA_INPUT_KINETO = 1,
    HTA_INPUT_NSYS_SQLITE = 2,
    HTA_INPUT_CUPTI_CSV = 3,
} hta_input_format;

/* "auto", "kineto", "nsys-sqlite", "cupti-csv": the /ranks input_format
 * column, and the --input-format words of settings/settings.h in the
 * same order (tests/test_settings.c checks they agree). */
const char *hta_input_format_name(hta_input_format format);

/* 1 when dir holds kernel.csv or conc_kernel.csv. */
int hta_is_cupti_csv_dir(const char *dir);

/* The format of an existing input: a directory is CUPTI CSV, a file
 * starting with SQLite's header an Nsight export, anything else Kineto. */
hta_input_format hta_input_format_of(const char *path);

/* One GPU of an Nsight Systems export that holds several: the run lists
 * it as "EXPORT@device=N" (discovery splits such an export into one trace
 * per device unless --merge-devices), and /ranks shows that name.  Returns
 * 1 and fills base (the export's path) and *device when path is such an
 * entry of an existing file, else 0. */
int hta_device_entry_parse(const char *path, char *base, size_t cap, long long *device);

/* Writes the entry name of an export's device into out (of cap bytes);
 * -1 when it does not fit. */
int hta_device_entry_name(const char *export_path, long long device, char *out, size_t cap);

#endif
