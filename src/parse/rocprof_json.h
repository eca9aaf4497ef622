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
 * file name.  The file holds one process; its GPU agents with work form
 * one rank, noted when there are several. */
#ifndef HTA_ROCPROF_JSON_H
#define HTA_ROCPROF_JSON_H

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

#endif
