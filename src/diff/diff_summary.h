/* diff/diff_summary.h: the diff's short report on stdout.
 *
 * The counts of each kernel class over all ranks, the top N regressions
 * and improvements (all ranks, by change of total time), the kernels only
 * in NEW and only in BASE, the ranks whose compute time changed most
 * (beyond --min-change, with their non-compute and idle time beside it),
 * the collectives whose median transfer time changed most, and the ranks
 * only one run analysed.  The HDF5 file has the rest. */
#ifndef HTA_DIFF_SUMMARY_H
#define HTA_DIFF_SUMMARY_H

#include <stdio.h>

#include "diff/diff_input.h"

void hta_diff_print_summary(FILE *out, const hta_tableset *tables, const hta_diff_input *base,
                            const hta_diff_input *new_, int top, double min_change);

#endif
