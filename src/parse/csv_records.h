/* parse/csv_records.h: a CSV file read one record at a time.
 *
 * A small RFC 4180 record reader (quoted fields, doubled quotes, CRLF,
 * newlines inside quotes: kernel names hold commas; blank lines skipped).
 * Line numbers in errors are those of the record's first line, as an
 * editor shows them.  Shared by the CUPTI and rocprofv3 CSV readers,
 * which find their columns by the header's names. */
#ifndef HTA_CSV_RECORDS_H
#define HTA_CSV_RECORDS_H

#include <stddef.h>
#include <stdio.h>

#include "util/buf.h"
#include "util/error.h"

#define HTA_CSV_MAX_FIELDS 256

typedef struct hta_csv_record {
    hta_buf text;              /* the fields, each NUL-terminated */
    size_t starts[HTA_CSV_MAX_FIELDS];
    size_t n;
    unsigned long line;        /* first line of the record */
} hta_csv_record;

typedef struct hta_csv_file {
    FILE *f;
    const char *path;
    unsigned long line;        /* lines read so far */
    hta_csv_record rec;
    hta_error *err;
} hta_csv_file;

/* Reads the next record into c->rec: 1, 0 at the end of the file, -1 on
 * error (err names the file and line). */
int hta_csv_next(hta_csv_file *c);

/* Field i of a record. */
const char *hta_csv_field(const hta_csv_record *r, size_t i);

/* The index of the header's column `name` (any case), or -1. */
long hta_csv_column(const hta_csv_record *header, const char *name);

/* The value of column k of the current record, "" when the record is
 * short or k is -1. */
const char *hta_csv_value(const hta_csv_file *c, long k);

#endif
