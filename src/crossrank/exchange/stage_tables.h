/* crossrank/exchange/stage_tables.h: the tables a process brings to the
 * cross-rank stage and receives from it (crossrank/crossrank.h), which
 * every step that runs on every process takes. */
#ifndef HTA_STAGE_TABLES_H
#define HTA_STAGE_TABLES_H

#include <stddef.h>
#include <stdint.h>

#include "crossrank/exchange/hosts.h"
#include "table/table.h"

/* What a process brings to the stage and what it receives. */
typedef struct hta_crossrank_tables {
    hta_tableset *all;         /* root: the gathered tables, ranks resolved;
                                  the cross-rank tables are added */
    hta_tableset *exchanged;   /* its HTA_TABLE_EXCHANGED tables, rank-mapped;
                                  emptied */
    const int64_t *valid;      /* the ranks analysed without failure, sorted,
                                  the same on every process */
    const int64_t *valid_node; /* the node of each (crossrank/exchange/hosts.h), which
                                  splits /collective_summary; NULL: unknown */
    size_t n_valid;
    const hta_rank_hosts *hosts; /* root: the analysed ranks' nodes, found
                                  once (run/ranks.h); NULL: unknown */
    hta_tableset *in_place;    /* receives the rows it writes in place */
    hta_tableset *kept;        /* receives what stays on it (each of its ranks'
                                  kernel waits, for --write-traces); NULL:
                                  nothing kept */
    struct hta_replay *replay; /* the job's graph, from the matching to the
                                  what-if (crossrank/job_path/replay.h);
                                  NULL: no replay */
} hta_crossrank_tables;

#endif
