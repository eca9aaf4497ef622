/* crossrank/exchange/hosts.h: which host (node) each analysed rank ran on. */
#ifndef HTA_HOSTS_H
#define HTA_HOSTS_H

#include <stddef.h>
#include <stdint.h>

#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"
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

/* From "ranks" (resolved, in rank order): with --hostfile the hosts it
 * lists, filling each host's slots in rank order; else with
 * --gpus-per-node N rank r is on node "node<r / N>"; else each file name
 * must be PyTorch's tensorboard_trace_handler's
 * HOST_PID.TIMESTAMP.pt.trace.json (.gz).  A rank none of them places
 * leaves the hosts unknown.  -1 with err when out of memory or when the
 * hostfile cannot be read. */
int hta_rank_hosts_find(const hta_tableset *set, const hta_crossrank_settings *opt,
                        hta_rank_hosts *out, hta_error *err);

/* Open MPI's hostfile: per line a host and its slots (slots=N, default
 * 1); # starts a comment. */
typedef struct hta_hostfile {
    hta_strtab hosts;          /* in the file's order */
    int64_t *slots;            /* owned, slots[host] */
} hta_hostfile;

/* -1 with err naming the file (and line) when it cannot be read or a
 * line is not HOST [slots=N]. */
int hta_hostfile_read(const char *path, hta_hostfile *hf, hta_error *err);
void hta_hostfile_free(hta_hostfile *hf);
void hta_rank_hosts_free(hta_rank_hosts *h);


#endif
