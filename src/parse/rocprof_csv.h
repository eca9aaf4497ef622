/* parse/rocprof_csv.h: rocprofv3's CSV files (--output-format csv, ROCm
 * 6's default) as one rank's trace.
 *
 * rocprofv3 writes one file per record kind beside each other, named
 * <prefix>kernel_trace.csv (<prefix> usually "<pid>_"),
 * <prefix>hip_api_trace.csv, <prefix>memory_copy_trace.csv,
 * <prefix>marker_api_trace.csv and <prefix>rccl_api_trace.csv.  The run
 * lists the kernel file (required); the others with its prefix are read
 * when present.  Columns are found by their header names, in any order:
 *   kernel_trace       Kernel_Name, Correlation_Id, Start_Timestamp,
 *                      End_Timestamp; Agent_Id, Stream_Id, Queue_Id
 *   memory_copy_trace  Direction, Correlation_Id, Start_Timestamp,
 *                      End_Timestamp; Stream_Id, Source_Agent_Id,
 *                      Destination_Agent_Id, Bytes
 *   *_api_trace        Domain, Function, Correlation_Id,
 *                      Start_Timestamp, End_Timestamp
 * Times are integer nanoseconds.  The records go into the trace model as
 * parse/rocprof_records.h says; the rank comes from the file name. */
#ifndef HTA_ROCPROF_CSV_H
#define HTA_ROCPROF_CSV_H

#include "util/error.h"
#include "model/trace.h"
#include "parse/trace_builder.h"

/* The name ending of the file the run lists. */
#define HTA_ROCPROF_KERNEL_CSV "kernel_trace.csv"

/* 1 when path's first line is a rocprofv3 kernel trace header. */
int hta_is_rocprof_csv(const char *path);

/* Reads the kernel file at path and its siblings into out (initialised
 * by the callee).  On error out is freed and err names the file and
 * line. */
int hta_read_rocprof_csv(const char *path, const hta_builder_options *how, hta_trace *out,
                         hta_error *notes, hta_error *err);

#endif
