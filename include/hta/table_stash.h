/* hta/table_stash.h: the result tables a process keeps between its traces,
 * packed and deflated.
 *
 * A process analyses its traces one after another and keeps every trace's
 * rows until the gather, so what they take adds up over its traces, under
 * each later trace's own peak.  Right after each trace its tables are
 * packed (hta_tableset_pack: 8 bytes a number, each string once) into one
 * growing buffer, deflated from 256 KB (generated traces from ~150 MB):
 * 0.64x of the packed bytes on generated traces, 0.28-0.45x on real ones.
 * After the last trace they are unpacked once into the same tables, rows
 * and order as if every trace had appended to them directly. */
#ifndef HTA_TABLE_STASH_H
#define HTA_TABLE_STASH_H

#include "hta/buf.h"
#include "hta/error.h"
#include "hta/table.h"

typedef struct hta_table_stash {
    hta_buf packed;            /* owned; one entry per trace (see table_stash.c) */
} hta_table_stash;

/* Appends one trace's tables: 0, or -1 when out of memory. */
int hta_table_stash_add(hta_table_stash *stash, const hta_tableset *set);
/* Appends every stashed trace's rows to out, in the order they were added. */
int hta_table_stash_unpack(const hta_table_stash *stash, hta_tableset *out, hta_error *err);
void hta_table_stash_free(hta_table_stash *stash);

#endif
