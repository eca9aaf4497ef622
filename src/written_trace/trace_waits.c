/* trace_waits.c: see written_trace/trace_waits.h. */
#include "written_trace/trace_waits.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crossrank/exchange/collective_groups.h"
#include "written_trace/trace_rewrite.h"
#include "written_trace/trace_writer.h"
#include "util/buf.h"

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
             row[HTA_KERNEL_WAITS_WAIT_NS].i > 0 ? "wait for peers" : "arrived last",
             (double)row[HTA_KERNEL_WAITS_START_NS].i / 1000.0);
    put_text(b, head);
    hta_json_put_number(b, (double)row[HTA_KERNEL_WAITS_WAIT_NS].i / 1000.0);
    put_text(b, ",\"caused_wait_us\":");
    hta_json_put_number(b, (double)row[HTA_KERNEL_WAITS_CAUSED_NS].i / 1000.0);
    put_text(b, row[HTA_KERNEL_WAITS_ARRIVED_LAST].i ? ",\"arrived_last\":1,\"group\":"
                                                     : ",\"arrived_last\":0,\"group\":");
    hta_json_put_string(b, row[HTA_KERNEL_WAITS_GROUP].s);
    put_text(b, ",\"collective\":");
    hta_json_put_string(b, row[HTA_KERNEL_WAITS_COLLECTIVE].s);
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
        if (row[HTA_KERNEL_WAITS_RANK].i != rank)
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

static int compare_rank(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The ranks waits has rows of, sorted; NULL when out of memory. */
static int64_t *ranks_held(const hta_table *waits, size_t *n)
{
    int64_t *held = malloc((waits && waits->n_rows ? waits->n_rows : 1) * sizeof *held);
    *n = 0;
    for (size_t i = 0; held && waits && i < waits->n_rows; i++)
        if (*n == 0 || held[*n - 1] != hta_table_row(waits, i)[HTA_KERNEL_WAITS_RANK].i)
            held[(*n)++] = hta_table_row(waits, i)[HTA_KERNEL_WAITS_RANK].i;
    if (held)
        qsort(held, *n, sizeof *held, compare_rank);
    return held;
}

int hta_add_waits_to_written_traces(const char *dir, char *const *paths,
                                    const int64_t *rank_of_file, size_t n_files,
                                    const hta_table *waits, hta_error *err)
{
    size_t n = 0;
    int64_t *held = ranks_held(waits, &n);
    if (!held)
        return hta_fail(err, "out of memory adding the collective waits to the written traces");
    int rc = 0;
    for (size_t f = 0; n && f < n_files; f++) {
        int64_t rank = rank_of_file[f];
        if (rank < 0 || !bsearch(&rank, held, n, sizeof *held, compare_rank))
            continue;
        const char *base = strrchr(paths[f], '/');
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, base ? base + 1 : paths[f]);
        hta_error one = {{0}};
        if (access(path, F_OK) == 0 && hta_add_waits_to_written_trace(path, waits, rank, &one) &&
            rc == 0) {
            *err = one;
            rc = -1;
        }
    }
    free(held);
    return rc;
}
