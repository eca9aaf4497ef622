/* crossrank/compare/hang_diagnosis.h: who a hung job waits for, from the
 * ranks' NCCL Flight Recorder dumps (analysis/fr_rows.h).
 *
 * Per process group, the members' entries are compared at each collective
 * sequence number (collective_seq_id).  A seq older than a member's first
 * recorded entry in the group is "not recorded" (its ring wrapped), never
 * missing.  At each seq, in order:
 *  - skipped: a member's entry differs from the others' at seq N and
 *    equals the others' at N + 1 (its sequence runs one short): it is
 *    left out of the later comparisons of the group;
 *  - op_mismatch, size_mismatch, dtype_mismatch: members disagree on the
 *    collective, on the input or output sizes, on the dtypes; the culprits
 *    are the members outside the majority (more than half of the members
 *    that recorded it), none when there is no majority;
 *  - not_joined: a member whose last enqueued seq (from its entries and
 *    its pg_status) is below the seq others enqueued: it is behind;
 *  - stuck: every member started the group's last seq and none completed
 *    it, with no finding above to explain it: the network or NCCL;
 *    undecided instead when a member's dump is absent;
 *  - dump_missing: a member of the group has no dump;
 *  - p2p_not_joined: a send or receive not completed whose peer (by the
 *    group ranks in its profiling_name) has no unfinished receive or send
 *    to match it: the peer never posted it.
 * The majority never depends on which dump was read first, nor the
 * findings on the number of processes.  Point-to-point
 * entries (is_p2p) are kept out of the collective sequence. */
#ifndef HTA_HANG_DIAGNOSIS_H
#define HTA_HANG_DIAGNOSIS_H

#include "crossrank/exchange/processes.h"
#include "crossrank/exchange/stage_tables.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* Every process: "_fr_entries" and "_fr_members" (rank-resolved, among
 * its exchanged tables, which it removes) sent to their groups' owners,
 * each group diagnosed there, and "fr_groups", "fr_collectives" and
 * "fr_findings" gathered to the root in group order; nothing when no
 * process read a dump.  -1 on every process when any failed. */
int hta_hang_diagnosis(const hta_processes *pr, hta_crossrank_tables *t,
                       const hta_crossrank_settings *opt, hta_error *err);

/* The columns of /fr_groups: one row per (group, member). */
enum {
    HTA_FR_GROUPS_GROUP,
    HTA_FR_GROUPS_RANK,
    HTA_FR_GROUPS_DESC,
    HTA_FR_GROUPS_HAS_DUMP,
    HTA_FR_GROUPS_FIRST_RECORDED,
    HTA_FR_GROUPS_LAST_ENQUEUED,
    HTA_FR_GROUPS_LAST_STARTED,
    HTA_FR_GROUPS_LAST_COMPLETED,
    HTA_FR_GROUPS_N_COLUMNS
};
extern const hta_table_spec hta_fr_groups_table;

/* The columns of /fr_collectives: one row per (group, seq). */
enum {
    HTA_FR_COLL_GROUP,
    HTA_FR_COLL_SEQ,
    HTA_FR_COLL_OP,
    HTA_FR_COLL_MEMBERS,
    HTA_FR_COLL_RECORDED,
    HTA_FR_COLL_NOT_RECORDED,
    HTA_FR_COLL_SCHEDULED,
    HTA_FR_COLL_STARTED,
    HTA_FR_COLL_COMPLETED,
    HTA_FR_COLL_SIZES_AGREE,
    HTA_FR_COLL_DTYPES_AGREE,
    HTA_FR_COLL_MATCH_STATE,
    HTA_FR_COLL_N_COLUMNS
};
extern const hta_table_spec hta_fr_collectives_table;

/* The columns of /fr_findings. */
enum {
    HTA_FR_FINDINGS_KIND,
    HTA_FR_FINDINGS_GROUP,
    HTA_FR_FINDINGS_DESC,
    HTA_FR_FINDINGS_SEQ,
    HTA_FR_FINDINGS_OP,
    HTA_FR_FINDINGS_CULPRIT_RANKS,
    HTA_FR_FINDINGS_WAITING_RANKS,
    HTA_FR_FINDINGS_DETAIL,
    HTA_FR_FINDINGS_CULPRIT_FRAMES,
    HTA_FR_FINDINGS_N_COLUMNS
};
extern const hta_table_spec hta_fr_findings_table;

#endif
