/* crossrank/exchange/rank_ops.h: a rank's communication kernels as ops
 * (crossrank/exchange/rank_ops.c). */
#ifndef HTA_RANK_OPS_H
#define HTA_RANK_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "crossrank/exchange/comm_catalog.h"
#include "table/table.h"
#include "util/error.h"

/* What a rank's all-to-alls of a group sent one peer in all. */
typedef struct hta_a2a_cell {
    uint32_t group;
    int64_t src, dst, bytes, count;
} hta_a2a_cell;

/* A rank's kernels: ops with what only the rank side needs. */
typedef struct hta_rank_ops {
    hta_group_op *ops;         /* owned */
    int64_t *overlap, *step;   /* owned, beside ops */
    int64_t *a2a_received;     /* owned, beside ops: all-to-all bytes received, -1 */
    uint8_t *same_kernel;      /* owned, beside ops: 1 when the previous op's kernel
                                * (a coalesced batch's ops after its first) */
    size_t n;
    hta_a2a_cell *cells;       /* owned: the ranks' rows of the traffic matrix */
    size_t n_cells, cap_cells;
} hta_rank_ops;

/* Unpacks the rows of "_comm_ops" (rank-mapped) into ops; -1 with err
 * when a row is corrupt or out of memory. */
int hta_rank_ops_load(const hta_table *comm_ops, const hta_comm_catalog *c, hta_rank_ops *r,
                      hta_error *err);
void hta_rank_ops_free(hta_rank_ops *r);

#endif
