/* crossrank/exchange/stream_kernels.h: the communication kernels without
 * collective metadata, as the root matches them: by stream and order
 * (crossrank/exchange/stream_kernels.c). */
#ifndef HTA_STREAM_KERNELS_H
#define HTA_STREAM_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "table/table.h"

typedef struct hta_stream_kernel {
    size_t slot;               /* its rank's row in /ranks */
    int64_t rank, stream, start_ns, end_ns;
    int ends_together;         /* an all-reduce, all-gather or reduce-scatter */
} hta_stream_kernel;

/* One stream's kernels grouped by rank: participant j's k-th kernel is
 * first[j][k]; the first `common` of each are matched instances. */
typedef struct hta_stream_block {
    const hta_stream_kernel **first; /* owned array, room for every rank */
    size_t *count;                   /* owned */
    size_t n;                        /* participants */
    size_t common;
} hta_stream_block;

/* "_collectives" unpacked: *n kernels sorted by (stream, rank, ordinal)
 * into *out (owned, NULL when none).  -1 when out of memory, or with
 * *corrupt set when a row's rank is not in ranks or its series are
 * shorter than its kernel count. */
int hta_stream_kernels_load(const hta_table *t, const hta_table *ranks, hta_stream_kernel **out,
                            size_t *n, int *corrupt);

/* -1 when out of memory. */
int hta_stream_block_init(hta_stream_block *b, size_t n_ranks);
void hta_stream_block_free(hta_stream_block *b);
/* The block of the stream starting at c[0]; returns how many kernels of
 * c[0..n) it holds. */
size_t hta_stream_block_split(const hta_stream_kernel *c, size_t n, hta_stream_block *b);

#endif
