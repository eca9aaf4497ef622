/* output/summary_ops.h: the summary's lines on CPU ops and GPU gaps. */
#ifndef HTA_SUMMARY_OPS_H
#define HTA_SUMMARY_OPS_H

#include "table/table.h"

/* Prints the CPU ops and the GEMM, convolution and attention op shapes
 * with the most GPU time over all ranks, and the longest GPU gaps with
 * their causes (nothing when the tables are empty). */
void hta_print_ops_summary(const hta_tableset *set);

#endif
