/* trace_sink.c: see written_trace/trace_sink.h. */
#include "written_trace/trace_sink.h"

#include <string.h>

#include "model/trace.h"
#include "util/buf.h"
#include "written_trace/trace_rewrite.h"

void wt_put(wt_sink *o, const char *p, size_t n)
{
    if (o->failed || n == 0)
        return;
    if (o->gz)
        o->failed = gzwrite(o->gz, p, (unsigned)n) != (int)n;
    else
        o->failed = fwrite(p, 1, n, o->file) != n;
}

void wt_puts(wt_sink *o, const char *s)
{
    wt_put(o, s, strlen(s));
}

void wt_put_event(wt_sink *o, int *first, const char *text)
{
    wt_puts(o, *first ? "\n" : ",\n");
    *first = 0;
    wt_puts(o, text);
}

void wt_put_counter(wt_sink *o, int *first, const char *name, int64_t ts, const char *arg,
                    double value)
{
    hta_buf b = {0};
    hta_buf_append(&b, "{\"ph\":\"C\",\"cat\":\"hta_mpi\",\"name\":", 33);
    hta_json_put_string(&b, name);
    char tail[256];
    snprintf(tail, sizeof tail, ",\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"args\":{\"%s\":%.6g}}",
             WT_ANALYSIS_PID, hta_ns_to_us(ts), arg, value);
    hta_buf_append(&b, tail, strlen(tail));
    wt_put_event(o, first, b.data ? b.data : "");
    hta_buf_free(&b);
}
