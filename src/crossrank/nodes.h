/* crossrank/nodes.h: "nodes" and "node_metrics", a slow node named as a
 * node. */
#ifndef HTA_NODES_H
#define HTA_NODES_H

#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* Bonferroni-corrected probability below which a node is named. */
#define HTA_NODE_ALPHA 0.001

/* Reads "ranks" (for the hosts), "rank_metrics" and "outliers" (so after
 * the outlier search and the stragglers); adds nothing when the hosts are
 * unknown. */
int hta_node_statistics(hta_tableset *set, const hta_crossrank_settings *opt, hta_error *err);

/* P(X >= k) for X hypergeometric: n draws from N ranks of which K are
 * flagged. */
double hta_hypergeometric_tail(int64_t k, int64_t n, int64_t K, int64_t N);

#endif
