/* parse/rank_name.h: the rank and the host a trace's file name claims. */
#ifndef HTA_RANK_NAME_H
#define HTA_RANK_NAME_H

#include <stddef.h>
#include <stdint.h>

/* Rank number in a file name: "rank" optionally followed by '-' or '_', then
 * digits (rank-3, rank_3, rank3, sampled_rank-1); -1 when absent. */
int64_t hta_rank_from_file_name(const char *path);

/* The host written in a tensorboard_trace_handler file name,
 * HOST_PID.TIMESTAMP.pt.trace.json(.gz), as [start, start + *len) of
 * path; NULL when the name is not one. */
const char *hta_host_from_file_name(const char *path, size_t *len);

#endif
