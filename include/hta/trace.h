/* hta/trace.h: one rank's trace read into the event model.
 *
 * Any input hta-mpi reads: a Kineto .json or .json.gz, an Nsight Systems
 * SQLite export, a CUPTI CSV folder (the "input-format" setting forces
 * one; by default the content decides).  The events themselves stay
 * internal: what a program sees are the counts below. */
#ifndef HTA_PUBLIC_TRACE_H
#define HTA_PUBLIC_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "hta/api.h"
#include "hta/error.h"
#include "hta/settings.h"

typedef struct hta_trace hta_trace;

/* Reads path with the reading settings of s ("input-format", "inflater",
 * "threads", "timeout-per-trace", "step-regex"); s may be NULL for the
 * defaults.  NULL with err naming the file when it cannot be read. */
HTA_API hta_trace *hta_trace_read(const char *path, const hta_settings *s, hta_error *err);
HTA_API void hta_trace_destroy(hta_trace *t);

/* Events kept, and those on the GPU (kernels, copies, sets). */
HTA_API size_t hta_trace_event_count(const hta_trace *t);
HTA_API size_t hta_trace_gpu_event_count(const hta_trace *t);
/* Events read but not usable (no category, start or duration). */
HTA_API uint64_t hta_trace_skipped_event_count(const hta_trace *t);
/* The rank and world size the trace records; -1 when it records none. */
HTA_API int64_t hta_trace_rank(const hta_trace *t);
HTA_API int64_t hta_trace_world_size(const hta_trace *t);

#endif
