/* parse/nsys_sqlite.h: an Nsight Systems SQLite export as one rank's trace.
 *
 * `nsys export --type sqlite` writes one table per record kind.  The reader
 * turns the CUDA and NVTX tables into the Kineto trace model, with Kineto's
 * categories and names, so every analysis runs unchanged:
 *   CUPTI_ACTIVITY_KIND_KERNEL           -> "kernel" (demangled name)
 *   CUPTI_ACTIVITY_KIND_MEMCPY           -> "gpu_memcpy" "Memcpy HtoD (Pinned -> Device)"
 *   CUPTI_ACTIVITY_KIND_MEMSET           -> "gpu_memset" "Memset (Device)"
 *   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION  -> "cuda_sync" "Stream Sync", ...
 *   CUPTI_ACTIVITY_KIND_RUNTIME          -> "cuda_runtime" / "cuda_driver"
 *   NVTX_EVENTS (ranges)                 -> "user_annotation"
 * (docs/definitions.md, "Inputs", maps every column).  Only the kernel
 * table is required; the others are read when present.  The rank comes
 * from the launcher's variables (RANK, OMPI_COMM_WORLD_RANK, ...) in the
 * environment the export records, when it does.  Tables are read
 * one after the other in their stored order, one row at a time, into the
 * compact event array: memory is the events' 32 bytes each plus the
 * distinct names, whatever the file's size.
 *
 * An export holding several GPUs (a node's processes profiled together) is
 * read one device at a time (hta_builder_options.one_device): that
 * device's GPU records, and the runtime calls and NVTX ranges of the
 * processes with a context on it; its rank from MPI_RANKS when nsys traced
 * MPI. */
#ifndef HTA_NSYS_SQLITE_H
#define HTA_NSYS_SQLITE_H

#include "util/error.h"
#include "model/trace.h"
#include "parse/trace_builder.h"

/* Reads the export at path into out (initialised by the callee).  On error
 * out is freed and err names the file, the export's schema version when
 * known and the table.
 * `notes` receives what the export lacks for some analysis, and that it
 * holds several devices, on one line (empty when nothing). */
int hta_read_nsys_sqlite(const char *path, const hta_builder_options *how, hta_trace *out,
                         hta_error *notes, hta_error *err);

/* The devices of an export (its CUDA contexts, TARGET_INFO_CUDA_CONTEXT_INFO),
 * ascending, up to cap: discovery makes one trace of each when there are
 * several.  *n = 0 when the export does not say (then it is one trace).
 * -1 when the file cannot be opened. */
int hta_nsys_devices(const char *path, long long *devices, size_t cap, size_t *n);

#endif
