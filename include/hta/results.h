/* hta/results.h: a results file written by hta-mpi, read back.
 *
 * Opening checks that the file is a results file of a schema this libhta
 * reads (docs/results-format.md); its tables come back with their columns
 * as int64, double or UTF-8 string, whatever their storage. */
#ifndef HTA_PUBLIC_RESULTS_H
#define HTA_PUBLIC_RESULTS_H

#include "hta/api.h"
#include "hta/error.h"
#include "hta/table.h"

typedef struct hta_results_file hta_results_file;

/* NULL with err naming the file and the reason when it is not one. */
HTA_API hta_results_file *hta_results_file_open(const char *path, hta_error *err);
HTA_API void hta_results_file_close(hta_results_file *rf);

HTA_API int hta_results_file_has_table(const hta_results_file *rf, const char *name);
/* The table `name` ("kernels", "cross_rank/kernels"), read once and
 * kept until hta_results_file_close; NULL with err when the file lacks
 * it or it cannot be read. */
HTA_API const hta_table *hta_results_file_table(hta_results_file *rf, const char *name,
                                          hta_error *err);

#endif
