/* crossrank/compare/name_comparison.h: one per-rank figure per name, compared across
 * ranks ("cross_rank/ops", "cross_rank/annotations").
 *
 * The root holds a per-rank table with a name column (rows in rank order
 * after hta_resolve_ranks).  Per name, the value column is summed over a
 * rank's rows (an op's rows per argument signature), and the per-rank
 * sums are compared as /cross_rank/kernels compares mean durations: ranks
 * with the name, mean and sample std over them, smallest and largest with
 * their ranks, and the ranks whose sum stands apart (|robust z| >=
 * --robust-z and past --min-effect).  Names whose sum is 0 on every rank
 * are left out.  Rows by name. */
#ifndef HTA_NAME_COMPARISON_H
#define HTA_NAME_COMPARISON_H

#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

typedef struct hta_name_comparison {
    const hta_table_spec *from; /* per-rank table */
    long name;                 /* its name column */
    long value;                /* its column summed per (rank, name): int64
                                  or float64, NaN counting as 0 */
    const hta_table_spec *into; /* the cross-rank table */
} hta_name_comparison;

int hta_compare_names(hta_tableset *set, const hta_crossrank_settings *opt,
                      const hta_name_comparison *c, hta_error *err);

/* "cross_rank/ops" (GPU busy time), "cross_rank/annotations" (GPU
 * annotation time) and "cross_rank/kernel_sequences" (count). */
int hta_op_and_annotation_comparison(hta_tableset *set, const hta_crossrank_settings *opt,
                                     hta_error *err);

/* The columns of /cross_rank/ops, /cross_rank/annotations and
 * /cross_rank/kernel_sequences (docs/results-format.md). */
enum {
    HTA_CROSS_NAMES_NAME,
    HTA_CROSS_NAMES_N_RANKS,
    HTA_CROSS_NAMES_MEAN_US,
    HTA_CROSS_NAMES_STD_US,
    HTA_CROSS_NAMES_MIN_US,
    HTA_CROSS_NAMES_MIN_RANK,
    HTA_CROSS_NAMES_MAX_US,
    HTA_CROSS_NAMES_MAX_RANK,
    HTA_CROSS_NAMES_OUTLIER_RANKS,
    HTA_CROSS_NAMES_N_COLUMNS
};
extern const hta_table_spec hta_cross_ops_table;
extern const hta_table_spec hta_cross_annotations_table;
extern const hta_table_spec hta_cross_kernel_sequences_table;

#endif
