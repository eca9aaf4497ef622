/* diff/tail_diff.h: how the longest events of each category changed.
 *
 * /diff/tails: per (rank, activity category of /activity_categories), for
 * the ranks both runs analysed: each run's count and total, and NEW / BASE
 * of the total, of the mean of the top 1, 5 and 10% longest events and of
 * the share of the category's time they hold (the CUPTI notebook's
 * compare_analysis).  No all-ranks row: the top 1% of all ranks' events
 * is not a function of each rank's top 1%, and the files keep no more. */
#ifndef HTA_TAIL_DIFF_H
#define HTA_TAIL_DIFF_H

#include "diff/diff_input.h"

int hta_diff_tails(const hta_diff_input *base, const hta_diff_input *new_, hta_tableset *out,
                   hta_error *err);

/* The columns of /diff/tails (docs/results-format.md). */
enum {
    HTA_DIFF_TAILS_RANK,
    HTA_DIFF_TAILS_CATEGORY,
    HTA_DIFF_TAILS_STATUS,
    HTA_DIFF_TAILS_BASE_COUNT,
    HTA_DIFF_TAILS_NEW_COUNT,
    HTA_DIFF_TAILS_BASE_TOTAL_US,
    HTA_DIFF_TAILS_NEW_TOTAL_US,
    HTA_DIFF_TAILS_TOTAL_RATIO,
    HTA_DIFF_TAILS_BASE_TOP1_MEAN_US,
    HTA_DIFF_TAILS_NEW_TOP1_MEAN_US,
    HTA_DIFF_TAILS_TOP1_MEAN_RATIO,
    HTA_DIFF_TAILS_BASE_TOP1_SHARE,
    HTA_DIFF_TAILS_NEW_TOP1_SHARE,
    HTA_DIFF_TAILS_TOP1_SHARE_RATIO,
    HTA_DIFF_TAILS_BASE_TOP5_MEAN_US,
    HTA_DIFF_TAILS_NEW_TOP5_MEAN_US,
    HTA_DIFF_TAILS_TOP5_MEAN_RATIO,
    HTA_DIFF_TAILS_BASE_TOP5_SHARE,
    HTA_DIFF_TAILS_NEW_TOP5_SHARE,
    HTA_DIFF_TAILS_TOP5_SHARE_RATIO,
    HTA_DIFF_TAILS_BASE_TOP10_MEAN_US,
    HTA_DIFF_TAILS_NEW_TOP10_MEAN_US,
    HTA_DIFF_TAILS_TOP10_MEAN_RATIO,
    HTA_DIFF_TAILS_BASE_TOP10_SHARE,
    HTA_DIFF_TAILS_NEW_TOP10_SHARE,
    HTA_DIFF_TAILS_TOP10_SHARE_RATIO,
    HTA_DIFF_TAILS_N_COLUMNS
};
extern const hta_table_spec hta_diff_tails_table;

#endif
