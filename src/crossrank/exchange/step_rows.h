/* crossrank/exchange/step_rows.h: the rows of "steps" by (rank, step number), for
 * the root's figures that add to a rank's step (the waits at its
 * collectives, its traced FLOPs). */
#ifndef HTA_STEP_ROWS_H
#define HTA_STEP_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "table/table.h"

typedef struct hta_step_rows hta_step_rows;

/* An index of t's rows; NULL when out of memory. */
hta_step_rows *hta_step_rows_index(hta_table *t);
/* The row of (rank, step), or NULL. */
hta_cell *hta_step_rows_find(const hta_step_rows *ix, int64_t rank, int64_t step);
void hta_step_rows_free(hta_step_rows *ix);

#endif
