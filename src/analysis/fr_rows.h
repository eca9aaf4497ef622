/* analysis/fr_rows.h: one Flight Recorder dump's rows, for the hang
 * diagnosis on the root (crossrank/compare/hang_diagnosis.h).
 *
 * A dump is not a trace: it holds a rank's last collectives, not events
 * to analyse, so no analysis of the registry runs on it.  Its rows go to
 * three tables, each with the file's index in its rank column until the
 * root resolves ranks: /fr_ranks (what the dump holds), and two scratch
 * tables sent to their groups' owners for the diagnosis: "_fr_entries"
 * (one row per entry) and "_fr_members" (one row per process group the
 * rank is a member of, with pg_status's sequence numbers and the rank's
 * newest entry, what it was doing last). */
#ifndef HTA_FR_ROWS_H
#define HTA_FR_ROWS_H

#include <stdint.h>

#include "parse/fr_dump.h"
#include "table/table.h"
#include "util/buf.h"

enum {
    HTA_FR_RANKS_RANK,
    HTA_FR_RANKS_FILE,
    HTA_FR_RANKS_VERSION,
    HTA_FR_RANKS_ENCODING,
    HTA_FR_RANKS_COMM_LIB_VERSION,
    HTA_FR_RANKS_ENTRIES,
    HTA_FR_RANKS_FIRST_RECORD,
    HTA_FR_RANKS_LAST_RECORD,
    HTA_FR_RANKS_WRAPPED,
    HTA_FR_RANKS_GROUPS,
    HTA_FR_RANKS_N_COLUMNS
};
extern const hta_table_spec hta_fr_ranks_table;

enum {
    HTA_FR_ENTRY_RANK,
    HTA_FR_ENTRY_GROUP,
    HTA_FR_ENTRY_DESC,
    HTA_FR_ENTRY_SEQ,
    HTA_FR_ENTRY_P2P_SEQ,
    HTA_FR_ENTRY_IS_P2P,
    HTA_FR_ENTRY_OP,
    HTA_FR_ENTRY_INPUT_SIZES,
    HTA_FR_ENTRY_OUTPUT_SIZES,
    HTA_FR_ENTRY_INPUT_DTYPES,
    HTA_FR_ENTRY_OUTPUT_DTYPES,
    HTA_FR_ENTRY_STATE,          /* hta_fr_state */
    HTA_FR_ENTRY_RECORD_ID,
    HTA_FR_ENTRY_FRAMES,         /* "name (file:line) <- ...", innermost first */
    HTA_FR_ENTRY_N_COLUMNS
};
extern const hta_table_spec hta_fr_entries_table;

enum {
    HTA_FR_MEMBER_RANK,
    HTA_FR_MEMBER_GROUP,
    HTA_FR_MEMBER_DESC,
    HTA_FR_MEMBER_RANKS,         /* the group's global ranks, "0,1,2" ("": unknown) */
    HTA_FR_MEMBER_LAST_ENQUEUED, /* pg_status; -1: not written */
    HTA_FR_MEMBER_LAST_STARTED,
    HTA_FR_MEMBER_LAST_COMPLETED,
    HTA_FR_MEMBER_LAST_ENTRY,    /* the rank's newest entry (hta_fr_describe); "": none */
    HTA_FR_MEMBER_N_COLUMNS
};
extern const hta_table_spec hta_fr_members_table;

/* An entry in words: "OP #SEQ of group GROUP (STATE): FRAMES". */
int hta_fr_describe(hta_buf *b, const char *op, int64_t seq, const char *group, int64_t state,
                    const char *frames);

/* The rank a dump claims: its "rank" key, else the number ending its file
 * name (torch writes <prefix><rank>); -1 when neither. */
int64_t hta_fr_claimed_rank(const hta_fr_dump *dump, const char *path);

/* Appends the dump's rows; rank is the claimed one, which decides the
 * groups it is a member of.  -1 when out of memory. */
int hta_fr_put_rows(const hta_fr_dump *dump, const char *path, int64_t file_index,
                    int64_t rank, hta_tableset *out);

#endif
