/* crossrank/exchange/all_to_all.h: the all-to-all(v) traffic matrix and per
 * instance figures (crossrank/exchange/all_to_all.c). */
#ifndef HTA_ALL_TO_ALL_H
#define HTA_ALL_TO_ALL_H

#include <stddef.h>

#include "crossrank/exchange/rank_ops.h"
#include "table/table.h"

/* Loading r->ops[at], an all-to-all of kind k with its "in TAB out NL"
 * split text and the group's members as its rank lists them: sets the
 * op's bytes sent and fingerprint and r->a2a_received[at], and adds what
 * it sent each member to sent[0..n_members) and 1 to *count (nothing when
 * the splits do not fit the group).  -1 when out of memory. */
int hta_a2a_load_op(hta_rank_ops *r, size_t at, const hta_kind_info *k, const char *splits,
                    const int64_t *members, long n_members, int64_t *sent, int64_t *count);
/* After a (rank, group) row: its row of the traffic matrix, sent[j] to
 * members[j] over count instances, into r's cells.  -1 when out of
 * memory. */
int hta_a2a_add_row(hta_rank_ops *r, uint32_t group, int64_t rank, const int64_t *members,
                    long n_members, const int64_t *sent, int64_t count);

/* Owner: one instance's row of "a2a" from its ops ops[o[0..n)] (and,
 * when its splits disagree, of "_a2a_mismatches").  -1 when out of
 * memory. */
int hta_a2a_put_instance(hta_tableset *out, const hta_comm_catalog *c, const hta_group_op *ops,
                         const size_t *o, size_t n);

/* Rank side: "a2a_matrix" rows of r's ranks and
 * "_a2a_ranks" (bytes sent and received per rank).  -1 when out of
 * memory. */
int hta_rank_a2a_figures(const hta_comm_catalog *c, const hta_rank_ops *r, hta_tableset *out);

/* Root: "a2a_matrix" in (group, src, dst) order, each rank's bytes sent
 * and received into "_a2a_metrics" (joined to "rank_metrics" after this
 * step).  -1 with err when out of memory. */
int hta_a2a_results(hta_tableset *set, hta_error *err);

/* The columns of /a2a (docs/results-format.md). */
enum {
    HTA_A2A_GROUP,
    HTA_A2A_SEQ,
    HTA_A2A_COLLECTIVE,
    HTA_A2A_N_RANKS,
    HTA_A2A_BYTES,
    HTA_A2A_WALL_US,
    HTA_A2A_THROUGHPUT_GBPS,
    HTA_A2A_IMBALANCE,
    HTA_A2A_BUSIEST_RANK,
    HTA_A2A_BUSIEST_BYTES,
    HTA_A2A_SPLIT_MISMATCH,
    HTA_A2A_N_COLUMNS
};
extern const hta_table_spec hta_a2a_table;

/* The columns of /a2a_matrix (docs/results-format.md). */
enum {
    HTA_A2A_MATRIX_GROUP,
    HTA_A2A_MATRIX_SRC,
    HTA_A2A_MATRIX_DST,
    HTA_A2A_MATRIX_BYTES,
    HTA_A2A_MATRIX_COUNT,
    HTA_A2A_MATRIX_N_COLUMNS
};
extern const hta_table_spec hta_a2a_matrix_table;

/* The columns of _a2a_mismatches (scratch between stages, never written). */
enum {
    HTA_A2A_MISMATCHES_GROUP,
    HTA_A2A_MISMATCHES_SEQ,
    HTA_A2A_MISMATCHES_N_COLUMNS
};
extern const hta_table_spec hta_a2a_mismatches_table;

/* The columns of _a2a_ranks (scratch between stages, never written). */
enum {
    HTA_A2A_RANKS_RANK,
    HTA_A2A_RANKS_SENT_BYTES,
    HTA_A2A_RANKS_RECEIVED_BYTES,
    HTA_A2A_RANKS_N_COLUMNS
};
extern const hta_table_spec hta_a2a_ranks_table;
/* The columns of "rank_metrics" (analysis/metrics.h). */
extern const hta_table_spec hta_a2a_metrics_table;

#endif
