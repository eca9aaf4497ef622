/* hta/input_format.h: which reader a trace input needs.
 *
 * Three sources fill the same trace model (hta/trace.h): a Kineto JSON
 * file (.json, .json.gz), an Nsight Systems SQLite export (one file per
 * rank) and a folder of CUPTI activity CSV files (one folder per rank).
 * The format of a file is decided by its first bytes, not its name, so a
 * mislabelled file still reads; a directory is a CUPTI folder when it
 * holds kernel.csv or conc_kernel.csv. */
#ifndef HTA_INPUT_FORMAT_H
#define HTA_INPUT_FORMAT_H

typedef enum hta_input_format {
    HTA_INPUT_AUTO = 0,        /* decided per input, as above */
    HTA_INPUT_KINETO = 1,
    HTA_INPUT_NSYS_SQLITE = 2,
    HTA_INPUT_CUPTI_CSV = 3,
} hta_input_format;

/* "auto", "kineto", "nsys-sqlite", "cupti-csv": the --input-format values
 * and the /ranks input_format column. */
const char *hta_input_format_name(hta_input_format format);

/* The format named by text, or -1. */
int hta_input_format_parse(const char *text);

/* 1 when dir holds kernel.csv or conc_kernel.csv. */
int hta_is_cupti_csv_dir(const char *dir);

/* The format of an existing input: a directory is CUPTI CSV, a file
 * starting with SQLite's header an Nsight export, anything else Kineto. */
hta_input_format hta_input_format_of(const char *path);

#endif
