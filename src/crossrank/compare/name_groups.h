/* crossrank/compare/name_groups.h: a root table's rows grouped by a name column.
 *
 * The cross-rank comparisons (/cross_rank/kernels, /cross_rank/ops,
 * /cross_rank/annotations) each walk a per-rank table name by name, in
 * name order, with each name's rows in rank order: a stable counting sort
 * of the rows by interned name, and the name ids sorted by their text. */
#ifndef HTA_NAME_GROUPS_H
#define HTA_NAME_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "table/table.h"
#include "util/strtab.h"

typedef struct hta_name_groups {
    hta_strtab names;          /* owned */
    size_t *start;             /* owned: rows of name k are row_of[start[k] .. start[k + 1]) */
    size_t *row_of;            /* owned, rows in rank order within a name */
    uint32_t *in_name_order;   /* owned: the name ids sorted by their text */
} hta_name_groups;

/* Groups t's rows by the string column name_col: 0, or -1 when out of
 * memory (g is then still safe to free). */
int hta_name_groups_build(const hta_table *t, long name_col, hta_name_groups *g);
void hta_name_groups_free(hta_name_groups *g);

#endif
