/* schema/table_list.h: every table hta-mpi makes, results file and diff
 * file, written or scratch, as the specs their producers declare
 * (table/table.h).  For walking them all (tests, the library's users);
 * code that makes or reads a table includes its producer's header. */
#ifndef HTA_TABLE_LIST_H
#define HTA_TABLE_LIST_H

#include <stddef.h>

#include "table/table.h"

size_t hta_table_spec_count(void);
/* The i-th spec (0 <= i < hta_table_spec_count()), else NULL. */
const hta_table_spec *hta_table_spec_at(size_t i);
/* The spec named name (without the leading '/'), or NULL. */
const hta_table_spec *hta_table_spec_find(const char *name);

#endif
