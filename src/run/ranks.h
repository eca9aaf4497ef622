/* run/ranks.h: from file indices to ranks, on the root after the gather,
 * and on every process for its own tables. */
#ifndef HTA_RANKS_H
#define HTA_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "crossrank/exchange/hosts.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* Where each file's rows go: rank_of_file[file index] is the trace's rank,
 * or -1 when its rows are dropped (failed, duplicate, outside --ranks). */
typedef struct hta_rank_map {
    int64_t *rank_of_file;     /* owned */
    int64_t *node_of_file;     /* owned: the node of the file's rank
                                  (crossrank/exchange/hosts.h), -1 for none;
                                  NULL when the nodes are unknown */
    size_t n_files;
    hta_rank_hosts hosts;      /* root: the node of every kept rank, found
                                  once (n_ranks 0 when unknown) */
} hta_rank_map;

void hta_rank_map_free(hta_rank_map *map);

/* The ranks the map keeps (rank_of_file >= 0), ascending, in an array the
 * caller frees; *n receives their number.  NULL when out of memory. */
int64_t *hta_rank_map_kept_ranks(const hta_rank_map *map, size_t *n);

/* Root, after hta_resolve_ranks: the nodes of the kept ranks
 * (crossrank/exchange/hosts.h) into map->hosts, the one place the run
 * reads --hostfile for them, and the node of every kept file's rank into
 * map->node_of_file, left NULL when the hosts are unknown.  -1 with err
 * when out of memory or the hostfile cannot be read. */
int hta_rank_map_find_nodes(hta_rank_map *map, const hta_tableset *set,
                            const hta_crossrank_settings *opt, hta_error *err);

/* The node of each of the n ranks in kept (ascending, from
 * hta_rank_map_kept_ranks) into *nodes, an array the caller frees; *nodes
 * is NULL when the nodes are unknown.  -1 when out of memory. */
int hta_rank_map_kept_nodes(const hta_rank_map *map, const int64_t *kept, size_t n,
                            int64_t **nodes);

/* Root, after the gather: turns file indices into ranks (distributedInfo,
 * then file name, then the lowest free number), fails later duplicates,
 * drops excluded ranks and sorts every per-rank table by rank.  *map
 * receives the decisions, for the processes' own tables. */
int hta_resolve_ranks(hta_tableset *set, const hta_rank_list *wanted, hta_rank_map *map,
                      hta_error *err);

/* Relabels the rank-keyed tables of set (other than "ranks") with the map,
 * drops the rows it drops, and sorts them by rank (stable). */
int hta_apply_rank_map(hta_tableset *set, const hta_rank_map *map, hta_error *err);

#endif
