/* parse/cupti_csv.h: a folder of CUPTI activity CSV files as one rank's trace.
 *
 * The CUPTI notebook dumps each activity kind to its own CSV file, with a
 * header row naming the columns (start, end, dur, name, correlation,
 * stream, device, context, grid, block, shared memory, cat; times in
 * microseconds, with fractions).  Each file becomes the Kineto category
 * of its name:
 *   kernel.csv, conc_kernel.csv  -> "kernel"      (required: one of them)
 *   gpu_memcpy.csv, gpu_memset.csv -> "gpu_memcpy", "gpu_memset"
 *   cuda_runtime.csv, cuda_driver.csv -> "cuda_runtime", "cuda_driver"
 *   cuda_sync.csv, user_annotation.csv -> "cuda_sync", "user_annotation"
 *     (hta-mpi's additions: the notebook's dump has no such files)
 * Columns are found by their header names, in any order; extra columns
 * are ignored.  Times are converted from their decimal text exactly (to
 * the nanosecond), so a trace dumped with three decimals loses nothing.
 * Files are read one record at a time into the compact event array. */
#ifndef HTA_CUPTI_CSV_H
#define HTA_CUPTI_CSV_H

#include "util/error.h"
#include "model/trace.h"
#include "parse/trace_builder.h"

/* Reads the folder dir into out (initialised by the callee).  On error
 * out is freed and err names the file and line.  `notes` receives
 * what the folder lacks for some analysis, and that it holds several
 * devices, on one line (empty when nothing). */
int hta_read_cupti_csv(const char *dir, const hta_builder_options *how, hta_trace *out,
                       hta_error *notes, hta_error *err);

#endif
