/* diff/collective_diff.h: collectives of two runs, before and after.
 *
 * /diff/collectives, when both runs have /collective_summary: one row per
 * (group_desc, collective, dtype, bucket_max_bytes) in either run, status
 * both / only_in_base / only_in_new, and for every numeric column X of
 * BASE's summary that NEW also has: base_X, new_X and X_ratio = NEW / BASE
 * (transfer times, bus bandwidths, arrival skew, wait). */
#ifndef HTA_COLLECTIVE_DIFF_H
#define HTA_COLLECTIVE_DIFF_H

#include "diff/diff_input.h"

/* Adds nothing when either run lacks /collective_summary. */
int hta_diff_collectives(const hta_diff_input *base, const hta_diff_input *new_,
                         hta_tableset *out, hta_error *err);

/* /diff/collectives: the keys, status, then base_X, new_X and X_ratio
 * for each numeric column both files' /collective_summary have. */
extern const hta_table_spec hta_diff_collectives_table;
/* Its status column, after the four keys. */
#define HTA_DIFF_COLLECTIVES_STATUS 4
/* Where X_ratio is in t, a /diff/collectives, for X column k of
 * /collective_summary; -1 when t lacks it. */
long hta_diff_collectives_ratio(const hta_table *t, int k);

#endif
