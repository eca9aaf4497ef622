/* crossrank/compare/kernel_type_totals.h: HTA's kernel-type breakdown of the job. */
#ifndef HTA_KERNEL_TYPE_TOTALS_H
#define HTA_KERNEL_TYPE_TOTALS_H

#include "table/table.h"
#include "util/error.h"

/* Root: HTA's kernel-type breakdown summed over ranks ("kernel_type_breakdown"
 * from the per-rank "kernel_type_by_rank"). */
int hta_kernel_type_totals(hta_tableset *set, hta_error *err);

/* The columns of /kernel_type_breakdown (docs/results-format.md). */
enum {
    HTA_KERNEL_TYPE_BREAKDOWN_KERNEL_TYPE,
    HTA_KERNEL_TYPE_BREAKDOWN_SUM_US,
    HTA_KERNEL_TYPE_BREAKDOWN_PERCENTAGE,
    HTA_KERNEL_TYPE_BREAKDOWN_N_COLUMNS
};
extern const hta_table_spec hta_kernel_type_breakdown_table;

#endif
