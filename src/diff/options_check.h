/* diff/options_check.h: whether two runs were analysed alike.
 *
 * A results file records the options that shape its numbers (timeline
 * bins, cutoffs, rounding, the last-step filter, the outlier thresholds,
 * the gap threshold, the step and kernel-sequence patterns, the reader)
 * as root attributes.  Two runs analysed with different ones differ for
 * that reason too, so the diff names each such option; it still compares
 * them. */
#ifndef HTA_OPTIONS_CHECK_H
#define HTA_OPTIONS_CHECK_H

#include <stddef.h>

#include "diff/diff_input.h"

#define HTA_DIFF_NOTE_MAX 200

/* Writes one line per option that differs (without newline) into lines,
 * at most max of them; returns how many differ. */
size_t hta_diff_option_differences(const hta_diff_input *base, const hta_diff_input *new_,
                                   char (*lines)[HTA_DIFF_NOTE_MAX], size_t max);

#endif
