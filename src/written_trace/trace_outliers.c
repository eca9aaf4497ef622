/* trace_outliers.c: outlier flags into the written traces (see
 * written_trace/trace_outliers.h), rewritten as written_trace/trace_rewrite.h does. */
#include "written_trace/trace_outliers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ranks_table.h"
#include "crossrank/compare/spread.h"
#include "written_trace/trace_rewrite.h"
#include "written_trace/trace_writer.h"
#include "util/buf.h"

/* `"hta_mpi":{...},` for rank: its rows of the outliers table. */
static void metadata_of(const hta_table *outliers, int64_t rank, hta_buf *b)
{
    char head[64];
    snprintf(head, sizeof head, "\"hta_mpi\":{\"rank\":%lld,\"outliers\":[", (long long)rank);
    hta_buf_append(b, head, strlen(head));
    int first = 1;
    for (size_t i = 0; outliers && i < outliers->n_rows; i++) {
        const hta_cell *row = hta_table_row(outliers, i);
        if (row[HTA_OUTLIERS_RANK].i != rank)
            continue;
        hta_buf_append(b, first ? "{\"metric\":" : ",{\"metric\":", first ? 10 : 11);
        first = 0;
        hta_json_put_string(b, row[HTA_OUTLIERS_METRIC].s);
        hta_buf_append(b, ",\"value\":", 9);
        hta_json_put_number(b, row[HTA_OUTLIERS_VALUE].f);
        hta_buf_append(b, ",\"z\":", 5);
        hta_json_put_number(b, row[HTA_OUTLIERS_Z].f);
        hta_buf_append(b, ",\"robust_z\":", 12);
        hta_json_put_number(b, row[HTA_OUTLIERS_ROBUST_Z].f);
        hta_buf_append(b, ",\"classification\":", 18);
        hta_json_put_string(b, row[HTA_OUTLIERS_CLASSIFICATION].s);
        hta_buf_putc(b, '}');
    }
    hta_buf_append(b, "]},", 3);
}

/* Writes doc with meta inserted after its first '{' to path, compressed
 * when gz: 0, or -1. */
static int rewrite(const char *path, int gz, const hta_buf *doc, const hta_buf *meta)
{
    const char *open = memchr(doc->data, '{', doc->len);
    const char *bracket = memchr(doc->data, '[', doc->len);
    if (!open || (bracket && bracket < open))
        return 0;              /* a bare event array has no top level */
    return hta_rewrite_trace_with(path, gz, doc, (size_t)(open - doc->data) + 1, meta);
}

int hta_add_outliers_to_written_traces(const hta_tableset *all, const char *dir,
                                       hta_error *err)
{
    const hta_table *ranks = hta_tableset_find(all, hta_ranks_table.name);
    const hta_table *outliers = hta_tableset_find(all, hta_outliers_table.name);
    if (!ranks)
        return 0;
    for (size_t i = 0; i < ranks->n_rows; i++) {
        const hta_cell *row = hta_table_row(ranks, i);
        if (!hta_ranks_status_analysed(row[HTA_RANKS_STATUS].s))
            continue;
        const char *base = strrchr(row[HTA_RANKS_FILE].s, '/');
        base = base ? base + 1 : row[HTA_RANKS_FILE].s;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, base);
        size_t n = strlen(path);
        int gz = n > 3 && strcmp(path + n - 3, ".gz") == 0;
        hta_buf doc = {0}, meta = {0};
        metadata_of(outliers, row[HTA_RANKS_RANK].i, &meta);
        int rc = hta_read_trace_text(path, &doc) || !meta.data || rewrite(path, gz, &doc, &meta);
        hta_buf_free(&doc);
        hta_buf_free(&meta);
        if (rc)
            return hta_fail(err, "%s: could not add the outlier flags: %s", path,
                            errno ? strerror(errno) : "out of memory");
    }
    return 0;
}
