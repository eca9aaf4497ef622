/* crossrank/collective_groups.h: collective instances matched by process group
 * on the root (crossrank/collective_groups.c), and the per-rank wait
 * figures that it and the by-stream matching of collective_wait.c share. */
#ifndef HTA_COLLECTIVE_GROUPS_H
#define HTA_COLLECTIVE_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "table/table.h"
#include "util/error.h"

/* One rank's side of every instance it took part in; one per row of
 * "ranks" (rank order). */
typedef struct rank_waits {
    int64_t rank;
    int failed;                /* no output row */
    int64_t collectives, matched, unmatched, missing, arrived_last, clock_violations;
    int64_t wait_ns, max_end_lag_ns;
    int64_t caused_wait_ns;    /* others' wait at instances it arrived last at */
    int64_t metadata_mismatches; /* instances whose name or size it disagrees on */
    double expected_last;      /* sum of 1 / participants over contested instances */
} rank_waits;

/* Matches "_comm_ops" (analysis/comm_ops.c) by (group, Seq), else (group,
 * k-th of the group on the rank), writes "collectives" and
 * "collective_summary", and adds each rank's part to w (n_ranks slots,
 * the rows of "ranks").  0 when there is nothing to match; -1 with err. */
int hta_match_collective_groups(hta_tableset *set, rank_waits *w, size_t n_ranks,
                                hta_error *err);

#endif
