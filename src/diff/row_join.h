/* diff/row_join.h: pairing the rows of two tables that share a key.
 *
 * Every comparison `hta-mpi diff` makes is a full outer join: the rows of
 * the BASE table and of the NEW table with equal key columns meet, and a
 * row whose key is in one table only meets nothing (NULL).  Both tables
 * are ordered by the key (an index array, the tables are not touched), so
 * the pairs arrive in key order whatever order the files hold. */
#ifndef HTA_ROW_JOIN_H
#define HTA_ROW_JOIN_H

#include <stddef.h>

#include "util/error.h"
#include "table/table.h"

/* Called once per key: base_row or new_row is NULL when the key is in the
 * other table only.  Nonzero stops the join and is returned. */
typedef int (*hta_join_fn)(const hta_cell *base_row, const hta_cell *new_row, void *ctx);

/* Joins base and new (either may be NULL: no rows) on the named key
 * columns, which both must have with the same types.  -1 with err set when
 * a key column is missing or out of memory. */
int hta_join_rows(const hta_table *base, const hta_table *new_, const char *const *keys,
                  size_t n_keys, hta_join_fn fn, void *ctx, hta_error *err);

#endif
