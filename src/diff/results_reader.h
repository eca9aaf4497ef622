/* diff/results_reader.h: an hta-mpi results file opened for reading.
 *
 * `hta-mpi diff` reads two results files, never the traces.  Opening one
 * checks that it is what it claims before anything is compared: an HDF5
 * file, with the schema_version attribute of a results file, of a version
 * this hta-mpi reads (output/schema_version.h), with a /ranks table.  Tables
 * come back as hta_tables, the run's own currency, whatever their columns:
 * integers as int64, floats as double, strings (variable or fixed length)
 * as owned UTF-8; columns of any other type are left out. */
#ifndef HTA_RESULTS_READER_H
#define HTA_RESULTS_READER_H

#include <stdint.h>

#include "util/error.h"
#include "table/table.h"

typedef struct hta_results_file {
    char *path;                /* owned copy */
    int64_t file;              /* HDF5 file id */
    int64_t schema_version;
} hta_results_file;

/* Opens path and checks it is a results file this hta-mpi reads; on
 * failure err holds one line naming the file and the reason. */
int hta_results_open(const char *path, hta_results_file *rf, hta_error *err);
void hta_results_close(hta_results_file *rf);

int hta_results_has(const hta_results_file *rf, const char *name);

/* Reads the table `name` (e.g. "kernels") into set under the same name.
 * A table the file does not have reads as no table (0, nothing added). */
int hta_results_read_table(const hta_results_file *rf, const char *name, hta_tableset *set,
                           hta_error *err);

/* A root attribute: a malloc'd string (NULL when absent or not a string),
 * or a number (0 when found, -1 otherwise). */
char *hta_results_attr_string(const hta_results_file *rf, const char *name);
int hta_results_attr_number(const hta_results_file *rf, const char *name, double *out);

#endif
