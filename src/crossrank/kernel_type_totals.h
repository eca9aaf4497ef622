/* crossrank/kernel_type_totals.h: HTA's kernel-type breakdown of the job. */
#ifndef HTA_KERNEL_TYPE_TOTALS_H
#define HTA_KERNEL_TYPE_TOTALS_H

#include "table/table.h"
#include "util/error.h"

/* Root: HTA's kernel-type breakdown summed over ranks ("kernel_type_breakdown"
 * from the per-rank "kernel_type_by_rank"). */
int hta_kernel_type_totals(hta_tableset *set, hta_error *err);

#endif
