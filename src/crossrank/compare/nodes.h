/* crossrank/compare/nodes.h: "nodes" and "node_metrics", a slow node named as a
 * node. */
#ifndef HTA_NODES_H
#define HTA_NODES_H

#include "crossrank/exchange/hosts.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* Bonferroni-corrected probability below which a node is named. */
#define HTA_NODE_ALPHA 0.001

/* Reads "rank_metrics" and "outliers" (so after the outlier search and
 * the stragglers) and the ranks' nodes in hosts; adds nothing when the
 * hosts are unknown (NULL, or no rank placed). */
int hta_node_statistics(hta_tableset *set, const hta_rank_hosts *hosts,
                        const hta_crossrank_settings *opt, hta_error *err);

/* P(X >= k) for X hypergeometric: n draws from N ranks of which K are
 * flagged. */
double hta_hypergeometric_tail(int64_t k, int64_t n, int64_t K, int64_t N);

/* The columns of /nodes (docs/results-format.md). */
enum {
    HTA_NODES_NODE,
    HTA_NODES_HOST,
    HTA_NODES_RANKS,
    HTA_NODES_FLAGGED_RANKS,
    HTA_NODES_P_VALUE,
    HTA_NODES_P_BONFERRONI,
    HTA_NODES_NAMED,
    HTA_NODES_WORST_METRIC,
    HTA_NODES_WORST_ROBUST_Z,
    HTA_NODES_N_COLUMNS
};
extern const hta_table_spec hta_nodes_table;

/* The columns of /node_metrics (docs/results-format.md). */
enum {
    HTA_NODE_METRICS_NODE,
    HTA_NODE_METRICS_HOST,
    HTA_NODE_METRICS_METRIC,
    HTA_NODE_METRICS_VALUE,
    HTA_NODE_METRICS_ROBUST_Z,
    HTA_NODE_METRICS_N_COLUMNS
};
extern const hta_table_spec hta_node_metrics_table;

#endif
