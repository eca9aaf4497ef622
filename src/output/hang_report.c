/* hang_report.c: the "Hang diagnosis" section (see output/hang_report.h).
 * A hung job's findings are few (one or two per group), so every one is
 * printed; /fr_collectives has the collectives themselves. */
#include "output/hang_report.h"

#include <stdio.h>
#include <string.h>

#include "analysis/fr_rows.h"
#include "crossrank/compare/hang_diagnosis.h"

/* What a finding of each kind asks the reader to look at next. */
static const char *next_step(const char *kind)
{
    static const struct {
        const char *kind, *next;
    } STEPS[] = {
        {"not_joined", "what the culprit was doing instead (its last entry below): a hang in "
                       "another group, on the CPU or in data loading"},
        {"skipped", "the culprit's code path: a collective called on some ranks only "
                    "(a condition on the rank, an early exit)"},
        {"size_mismatch", "the culprit's tensor shapes at that call (uneven batches, "
                          "padding, a rank-dependent shape)"},
        {"dtype_mismatch", "the culprit's dtypes at that call (autocast, a rank-dependent "
                           "cast)"},
        {"op_mismatch", "the collective order on the culprit: the ranks call different "
                        "collectives at the same point"},
        {"stuck", "the network and NCCL (NCCL_DEBUG=INFO, link errors, the NIC), not a rank"},
        {"undecided", "the missing dump: rerun with TORCH_FR_DUMP_TEMP_FILE on a shared "
                      "file system"},
        {"dump_missing", "why the rank wrote no dump (it crashed, or its file system is "
                         "not the others')"},
        {"p2p_not_joined", "what the peer was doing instead (its last entry below): a "
                           "pipeline schedule whose sends and receives do not pair up"},
    };
    for (size_t i = 0; i < sizeof STEPS / sizeof STEPS[0]; i++)
        if (!strcmp(STEPS[i].kind, kind))
            return STEPS[i].next;
    return "";
}

void hta_print_hang_report(const hta_tableset *set)
{
    const hta_table *ranks = hta_tableset_find(set, hta_fr_ranks_table.name);
    const hta_table *t = hta_tableset_find(set, hta_fr_findings_table.name);
    if (!ranks)
        return;
    size_t wrapped = 0;
    for (size_t r = 0; r < ranks->n_rows; r++)
        wrapped += hta_table_row(ranks, r)[HTA_FR_RANKS_WRAPPED].i != 0;
    printf("\nHang diagnosis (%zu Flight Recorder dumps, %zu with wrapped rings; see "
           "/fr_findings, /fr_collectives):\n", ranks->n_rows, wrapped);
    if (!t || t->n_rows == 0) {
        printf("  no finding: every group's members agree and none is stuck.\n");
        return;
    }
    const char *group = NULL;
    for (size_t r = 0; r < t->n_rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        if (!group || strcmp(group, row[HTA_FR_FINDINGS_GROUP].s)) {
            group = row[HTA_FR_FINDINGS_GROUP].s;
            printf("  group %s (%s):\n", group, row[HTA_FR_FINDINGS_DESC].s);
        }
        const char *culprits = row[HTA_FR_FINDINGS_CULPRIT_RANKS].s;
        if (row[HTA_FR_FINDINGS_SEQ].i >= 0)
            printf("    %s at #%lld (%s): culprit %s, waiting %s\n", row[HTA_FR_FINDINGS_KIND].s,
                   (long long)row[HTA_FR_FINDINGS_SEQ].i, row[HTA_FR_FINDINGS_OP].s,
                   culprits[0] ? culprits : "none (the dumps cannot tell)",
                   row[HTA_FR_FINDINGS_WAITING_RANKS].s[0] ? row[HTA_FR_FINDINGS_WAITING_RANKS].s
                                                           : "none");
        else
            printf("    %s: rank(s) %s\n", row[HTA_FR_FINDINGS_KIND].s, culprits);
        printf("      %s\n", row[HTA_FR_FINDINGS_DETAIL].s);
        printf("      next: %s\n", next_step(row[HTA_FR_FINDINGS_KIND].s));
        if (row[HTA_FR_FINDINGS_CULPRIT_FRAMES].s[0])
            printf("      %s\n", row[HTA_FR_FINDINGS_CULPRIT_FRAMES].s);
    }
}
