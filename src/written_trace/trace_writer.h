/* written_trace/trace_writer.h: a rank's trace written back with the analysis in it.
 *
 * --write-traces DIR: the trace file, byte for byte, into DIR under its
 * own name (gzip when it was gzip), with its critical path marked
 * ("critical": 1 in the args of every event on a step's path, flow
 * events along the path where it crosses between CPU and GPU) and
 * counter tracks appended to traceEvents (queue length per stream,
 * memory bandwidth per copy name, each step's compute / communication /
 * overlap / empty share), for Perfetto and chrome://tracing.  The added
 * events are not complete ("X") events, so hta-mpi reading the written
 * trace gives the same tables. */
#ifndef HTA_TRACE_WRITER_H
#define HTA_TRACE_WRITER_H

#include "model/rank_view.h"
#include "util/buf.h"
#include "util/error.h"

/* Appends the whole text of a trace file, plain or gzip, to out: 0, or -1
 * (errno set, or out of memory). */
int hta_read_trace_text(const char *path, hta_buf *out);

/* Writes path's trace, as view holds it, into dir: 0, or -1 with err. */
int hta_write_trace(const char *path, const hta_rank_view *view, const char *dir,
                    hta_error *err);

/* In a document hta_write_trace wrote, the offset just after the first
 * event it added (pid 999999, "hta-mpi"), where more events can follow
 * as ",{...}"; 0 when there is none. */
size_t hta_written_trace_insert_at(const hta_buf *doc);

#endif
