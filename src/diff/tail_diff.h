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

#endif
