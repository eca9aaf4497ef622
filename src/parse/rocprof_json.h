/* parse/rocprof_json.h: rocprofv3's JSON results (rocprofv3
 * --output-format json, <pid>_results.json) as one rank's trace.
 *
 * The document is {"rocprofiler-sdk-tool": [{metadata, agents, strings,
 * kernel_symbols, buffer_records: {kernel_dispatch, hip_api, marker_api,
 * rccl_api, memory_copy, ...}, ...}]}.  It is streamed through the JSON
 * lexer (parse/json_walk.h), never held as a tree: the dispatch, copy and
 * call records are read member by member into compact records, and only
 * the small members (metadata, agents, strings) are parsed whole.  A
 * dispatch's kernel is kernel_symbols[kernel_id] (formatted_kernel_name,
 * else demangled_kernel_name, else kernel_name); a call's name
 * strings.buffer_records[kind].operations[operation]; a marker's its
 * message in strings.marker_api.  The records then go into the trace
 * model as parse/rocprof_records.h says.
 *
 * The rank is the launcher's variable in the recorded command line
 * (RANK=3 ...), else the one rocprofv3's output path placeholders give
 * (%rank%, %env{OMPI_COMM_WORLD_RANK}%, ...), else (the run's rule) the
 * file name.  The file holds one process; each of its GPU agents with
 * work is a rank, as in a multi-device Nsight export: discovery lists a
 * file of several as "FILE@device=N", N the GPU's index among the node's
 * GPUs (parse/device_entry.h), and the process's recorded rank then goes
 * to none of them.  Listing the GPUs reads the file once more at the
 * root, so discovery opens only the names rocprofv3 writes
 * (HTA_ROCPROF_JSON_NAME); a renamed file is read as one rank. */
#ifndef HTA_ROCPROF_JSON_H
#define HTA_ROCPROF_JSON_H

#include <stddef.h>

#include "util/error.h"
#include "model/trace.h"
#include "parse/source.h"
#include "parse/trace_builder.h"

/* 1 when path (plain or gzip) starts as rocprofv3's JSON results do. */
int hta_is_rocprof_json(const char *path);

/* Reads path into out (initialised by the callee).  On error out is
 * freed and err names the file (and the byte, for a parse error). */
int hta_read_rocprof_json(const char *path, hta_inflater inflater, const hta_builder_options *how,
                          hta_trace *out, hta_error *notes, hta_error *err);

/* The name ending rocprofv3 gives its JSON results. */
#define HTA_ROCPROF_JSON_NAME "_results.json"

/* The GPU agents with kernel dispatches, by index, ascending, up to cap;
 * -1 when the file cannot be read. */
int hta_rocprof_json_devices(const char *path, long long *devices, size_t cap, size_t *n);

#endif
