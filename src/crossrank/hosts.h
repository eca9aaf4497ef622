/* crossrank/hosts.h: which host (node) each analysed rank ran on. */
#ifndef HTA_HOSTS_H
#define HTA_HOSTS_H

#include <stddef.h>
#include <stdint.h>

#include "table/table.h"
#include "util/strtab.h"

/* The analysed ranks, ascending, and the node of each; nodes are numbered
 * by their lowest rank and named in names (names.count nodes).  n_ranks
 * is 0 when the hosts are unknown. */
typedef struct hta_rank_hosts {
    int64_t *rank;             /* owned */
    uint32_t *node;            /* owned, node[i] of rank[i] */
    size_t n_ranks;
    hta_strtab names;
} hta_rank_hosts;

/* From "ranks" (resolved, in rank order): with gpus_per_node > 0 rank r
 * is on node "node<r / gpus_per_node>"; else each file name must be
 * PyTorch's tensorboard_trace_handler's HOST_PID.TIMESTAMP.pt.trace.json
 * (.gz), or the hosts are unknown.  -1 when out of memory. */
int hta_rank_hosts_find(const hta_tableset *set, int gpus_per_node, hta_rank_hosts *out);
void hta_rank_hosts_free(hta_rank_hosts *h);


/* The host written in a tensorboard_trace_handler file name, as
 * [start, start + *len) of path; NULL when the name is not one. */
const char *hta_host_from_file_name(const char *path, size_t *len);

#endif
