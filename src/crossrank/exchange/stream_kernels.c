/* stream_kernels.c: "_collectives" (analysis/collectives.c) unpacked on
 * the root, and split into per-stream blocks for matching by stream and
 * order (crossrank/compare/collective_wait.c) and for measuring the
 * hosts' clocks (crossrank/exchange/clock_offsets.c).
 *
 * A row holds one (rank, stream) with its kernels in start order, so
 * ordering the rows by (stream, rank) orders the kernels by (stream,
 * rank, ordinal): within a stream each rank's kernels are then one run,
 * and the k-th of every run is the stream's k-th instance. */
#include "crossrank/exchange/stream_kernels.h"

#include "analysis/collectives.h"
#include "table/packed_ints.h"

#include <stdlib.h>

/* A row of "_collectives" with its rank's slot, to order the rows. */
typedef struct stream_row {
    const hta_cell *cells;
    size_t slot;
} stream_row;

static int compare_stream_then_rank(const void *a, const void *b)
{
    const stream_row *x = a, *y = b;
    int64_t sx = x->cells[HTA_COLLECTIVE_KERNELS_STREAM].i;
    int64_t sy = y->cells[HTA_COLLECTIVE_KERNELS_STREAM].i;
    if (sx != sy)
        return sx < sy ? -1 : 1;
    return (x->slot > y->slot) - (x->slot < y->slot);
}

/* Appends the row's kernels to out; -1 when its series are shorter than
 * its kernel count. */
static int unpack_stream(const hta_cell *row, size_t slot, hta_stream_kernel *out)
{
    hta_series gaps, durations, together;
    hta_series_open(&gaps, row[HTA_COLLECTIVE_KERNELS_START_GAPS].s);
    hta_series_open(&durations, row[HTA_COLLECTIVE_KERNELS_DURATIONS].s);
    hta_series_open(&together, row[HTA_COLLECTIVE_KERNELS_ENDS_TOGETHER].s);
    int64_t start = row[HTA_COLLECTIVE_KERNELS_FIRST_START_NS].i;
    for (int64_t k = 0; k < row[HTA_COLLECTIVE_KERNELS_KERNELS].i; k++) {
        uint64_t gap, ends_together;
        int64_t duration;
        if (!hta_series_next(&gaps, &gap) || !hta_series_next_signed(&durations, &duration) ||
            !hta_series_next(&together, &ends_together))
            return -1;
        start += (int64_t)gap;
        out[k] = (hta_stream_kernel){slot, row[HTA_COLLECTIVE_KERNELS_RANK].i,
                                     row[HTA_COLLECTIVE_KERNELS_STREAM].i, start,
                                     start + duration, ends_together != 0};
    }
    return 0;
}

static size_t count_kernels(const hta_table *t)
{
    size_t n = 0;
    for (size_t r = 0; r < t->n_rows; r++)
        n += (size_t)hta_table_row(t, r)[HTA_COLLECTIVE_KERNELS_KERNELS].i;
    return n;
}

int hta_stream_kernels_load(const hta_table *t, const hta_table *ranks, hta_stream_kernel **out,
                            size_t *n, int *corrupt)
{
    *out = NULL;
    *n = t ? count_kernels(t) : 0;
    *corrupt = 0;
    if (*n == 0)
        return 0;
    stream_row *rows = malloc(t->n_rows * sizeof *rows);
    *out = malloc(*n * sizeof **out);
    int rc = rows && *out ? 0 : -1;
    for (size_t r = 0; rc == 0 && r < t->n_rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        long k = hta_table_find_sorted(ranks, row[HTA_COLLECTIVE_KERNELS_RANK].i);
        *corrupt = k < 0;
        rc = -*corrupt;
        rows[r] = (stream_row){row, (size_t)k};
    }
    if (rc == 0)
        qsort(rows, t->n_rows, sizeof *rows, compare_stream_then_rank);
    for (size_t r = 0, at = 0; rc == 0 && r < t->n_rows; r++) {
        *corrupt = unpack_stream(rows[r].cells, rows[r].slot, &(*out)[at]) != 0;
        rc = -*corrupt;
        at += (size_t)rows[r].cells[HTA_COLLECTIVE_KERNELS_KERNELS].i;
    }
    free(rows);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

int hta_stream_block_init(hta_stream_block *b, size_t n_ranks)
{
    *b = (hta_stream_block){malloc((n_ranks ? n_ranks : 1) * sizeof *b->first),
                            malloc((n_ranks ? n_ranks : 1) * sizeof *b->count), 0, 0};
    if (b->first && b->count)
        return 0;
    hta_stream_block_free(b);
    return -1;
}

void hta_stream_block_free(hta_stream_block *b)
{
    free(b->first);
    free(b->count);
    *b = (hta_stream_block){0};
}

size_t hta_stream_block_split(const hta_stream_kernel *c, size_t n, hta_stream_block *b)
{
    size_t end = 1;
    while (end < n && c[end].stream == c[0].stream)
        end++;
    b->n = 0;
    b->common = SIZE_MAX;
    for (size_t i = 0; i < end; i++) {
        if (i == 0 || c[i].slot != c[i - 1].slot) {
            b->first[b->n] = &c[i];
            b->count[b->n++] = 0;
        }
        b->count[b->n - 1]++;
    }
    for (size_t j = 0; j < b->n; j++)
        b->common = b->count[j] < b->common ? b->count[j] : b->common;
    return end;
}
