/* crossrank/kernel_comparison.h: each kernel compared over ranks. */
#ifndef HTA_KERNEL_COMPARISON_H
#define HTA_KERNEL_COMPARISON_H

#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* "cross_rank/kernels" from the per-rank "kernels" table. */
int hta_kernel_comparison(hta_tableset *set, const hta_crossrank_settings *opt, hta_error *err);

#endif
