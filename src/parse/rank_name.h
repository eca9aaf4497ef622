/* parse/rank_name.h: the rank a trace's file name claims. */
#ifndef HTA_RANK_NAME_H
#define HTA_RANK_NAME_H

#include <stdint.h>

/* Rank number in a file name: "rank" optionally followed by '-' or '_', then
 * digits (rank-3, rank_3, rank3, sampled_rank-1); -1 when absent. */
int64_t hta_rank_from_file_name(const char *path);

#endif
