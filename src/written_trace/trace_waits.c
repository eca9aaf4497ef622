/* trace_waits.c: see written_trace/trace_waits.h. */
#include "written_trace/trace_waits.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "written_trace/trace_rewrite.h"
#include "written_trace/trace_writer.h"
#include "util/buf.h"

enum { W_RANK, W_START, W_WAIT, W_CAUSED, W_LAST, W_GROUP, W_COLLECTIVE };

static void put_text(hta_buf *b, const char *s)
{
    hta_buf_append(b, s, strlen(s));
}

static void put_wait_event(hta_buf *b, const hta_cell *row)
{
    char head[160];
    snprintf(head, sizeof head,
             ",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"hta_mpi\",\"name\":\"%s\",\"pid\":999999,"
             "\"tid\":1,\"ts\":%.3f,\"args\":{\"wait_us\":",
             row[W_WAIT].i > 0 ? "wait for peers" : "arrived last",
             (double)row[W_START].i / 1000.0);
    put_text(b, head);
    hta_json_put_number(b, (double)row[W_WAIT].i / 1000.0);
    put_text(b, ",\"caused_wait_us\":");
    hta_json_put_number(b, (double)row[W_CAUSED].i / 1000.0);
    put_text(b, row[W_LAST].i ? ",\"arrived_last\":1,\"group\":" : ",\"arrived_last\":0,\"group\":");
    hta_json_put_string(b, row[W_GROUP].s);
    put_text(b, ",\"collective\":");
    hta_json_put_string(b, row[W_COLLECTIVE].s);
    put_text(b, "}}");
}

/* The thread name of the track, then one event per row of rank. */
static int wait_events(const hta_table *waits, int64_t rank, hta_buf *b)
{
    static const char track[] = ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":999999,"
                                "\"tid\":1,\"args\":{\"name\":\"collective wait\"}}";
    size_t n = 0;
    for (size_t i = 0; i < waits->n_rows; i++) {
        const hta_cell *row = hta_table_row(waits, i);
        if (row[W_RANK].i != rank)
            continue;
        if (n++ == 0)
            put_text(b, track);
        put_wait_event(b, row);
    }
    return n > 0 && !b->data ? -1 : 0;
}

int hta_add_waits_to_written_trace(const char *path, const hta_table *waits, int64_t rank,
                                   hta_error *err)
{
    hta_buf doc = {0}, events = {0};
    size_t n = strlen(path);
    int gz = n > 3 && strcmp(path + n - 3, ".gz") == 0;
    errno = 0;
    int rc = hta_read_trace_text(path, &doc) || wait_events(waits, rank, &events);
    size_t at = rc ? 0 : hta_written_trace_insert_at(&doc);
    if (rc == 0 && at > 0 && events.len > 0)
        rc = hta_rewrite_trace_with(path, gz, &doc, at, &events);
    hta_buf_free(&doc);
    hta_buf_free(&events);
    return rc ? hta_fail(err, "%s: could not add the collective waits: %s", path,
                         errno ? strerror(errno) : "out of memory")
              : 0;
}
