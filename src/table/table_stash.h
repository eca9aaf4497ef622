/* table/table_stash.h: the result tables a process keeps between its traces,
 * packed and deflated, in memory up to a small budget and on disk beyond.
 *
 * A process analyses its traces one after another and keeps every trace's
 * rows until the gather; in memory, what they take would add up over its
 * traces under each later trace's own peak.  Right after each trace its
 * tables are packed (hta_tableset_pack: 8 bytes a number, each string
 * once) and, from 256 KB, deflated.  The entry stays in memory while the stash's memory holds
 * at most HTA_STASH_MEMORY_BYTES with it; otherwise it is written to an
 * unlinked temporary file (table/spill_file.h), and only its offset and
 * lengths stay in memory.  So many small traces never touch the disk, and
 * large ones add nothing to the peak beyond the budget.  When the file
 * cannot be created or written, entries stay in memory: nothing is lost.
 * After the last trace the entries are unpacked once, one at a time, into
 * the same tables, rows and order as if every trace had appended to them
 * directly. */
#ifndef HTA_TABLE_STASH_H
#define HTA_TABLE_STASH_H

#include "util/buf.h"
#include "util/error.h"
#include "table/spill_file.h"
#include "table/table.h"

#define HTA_STASH_MEMORY_BYTES ((size_t)1 << 20)

typedef struct hta_stash_entry {
    uint64_t at;           /* offset in the stash's memory or in its file */
    uint64_t packed_len;   /* the packed tables' bytes */
    uint64_t deflated_len; /* 0: kept as packed */
    int in_file;
} hta_stash_entry;

typedef struct hta_table_stash {
    hta_buf memory;           /* owned; the entries kept in memory, back to back */
    hta_spill_file file;      /* owned; the entries written to disk */
    hta_stash_entry *entries; /* owned; one per trace, in order */
    size_t n_entries, cap_entries;
} hta_table_stash;

/* Appends one trace's tables: 0, or -1 when out of memory. */
int hta_table_stash_add(hta_table_stash *stash, const hta_tableset *set);
/* Appends every stashed trace's rows to out, in the order they were added;
 * fails when out of memory or when the file cannot be read back. */
int hta_table_stash_unpack(const hta_table_stash *stash, hta_tableset *out, hta_error *err);
void hta_table_stash_free(hta_table_stash *stash);

#endif
