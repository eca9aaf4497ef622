/* written_trace/trace_sink.h: where a written trace goes, plain or gzip,
 * and the events hta-mpi adds to it (private to written_trace/).
 *
 * A write error is kept in the sink and reported once at the end, so the
 * writers go on without a test after every event. */
#ifndef HTA_TRACE_SINK_H
#define HTA_TRACE_SINK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

/* The added events' pid, named "hta-mpi" by a metadata event, except
 * flows, which sit on the tracks of the events they join. */
#define WT_ANALYSIS_PID 999999

typedef struct wt_sink {
    FILE *file;
    gzFile gz;
    int failed;
} wt_sink;

void wt_put(wt_sink *o, const char *p, size_t n);
void wt_puts(wt_sink *o, const char *s);

/* One more element of traceEvents: a comma before it unless *first,
 * which it then clears. */
void wt_put_event(wt_sink *o, int *first, const char *text);

/* A counter event ("ph": "C") on hta-mpi's track: name, time and one
 * value under arg. */
void wt_put_counter(wt_sink *o, int *first, const char *name, int64_t ts, const char *arg,
                    double value);

#endif
