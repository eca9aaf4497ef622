/* nodes.c: a slow node named as a node (definitions, "Nodes").
 *
 * A bad node (a failing NIC, thermal throttling, a weak HBM stack) shows
 * as its ranks flagged one by one in "outliers"; the action users take is
 * to drain the node, so the question is whether the flagged ranks gather
 * on a node more than chance would put there.  With K of the N analysed
 * ranks flagged, a node holding n ranks of which k are flagged gets the
 * hypergeometric tail P(X >= k) = sum over x >= k of
 * C(K,x) C(N-K,n-x) / C(N,n): the chance that n ranks drawn at random
 * hold that many flagged ones.  Bonferroni over the nodes (P times their
 * number, at most 1) keeps a job whose flags fall at random from naming
 * a node, and the node is named below HTA_NODE_ALPHA, the straggler
 * test's level.  Four slow ranks on four nodes name none: each node holds
 * one, as chance would.
 *
 * "node_metrics" says what is wrong with it: per node the median of its
 * ranks' value of every metric of "rank_metrics", and that median's
 * robust z across the nodes (crossrank/compare/spread.c, noise floor included);
 * "nodes" keeps the metric whose |robust z| is largest and material. */
#include "crossrank/compare/nodes.h"

#include "analysis/metrics.h"
#include "crossrank/compare/spread.h"
#include "crossrank/exchange/hosts.h"
#include "numerics/bounds.h"
#include "numerics/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const hta_column NODE_COLUMNS[HTA_NODES_N_COLUMNS] = {
    [HTA_NODES_NODE] = {"node", HTA_COL_I64},
    [HTA_NODES_HOST] = {"host", HTA_COL_STR},
    [HTA_NODES_RANKS] = {"ranks", HTA_COL_I64},
    [HTA_NODES_FLAGGED_RANKS] = {"flagged_ranks", HTA_COL_I64},
    [HTA_NODES_P_VALUE] = {"p_value", HTA_COL_F64},
    [HTA_NODES_P_BONFERRONI] = {"p_bonferroni", HTA_COL_F64},
    [HTA_NODES_NAMED] = {"named", HTA_COL_I64},
    [HTA_NODES_WORST_METRIC] = {"worst_metric", HTA_COL_STR},
    [HTA_NODES_WORST_ROBUST_Z] = {"worst_robust_z", HTA_COL_F64},
};
const hta_table_spec hta_nodes_table = {
    "nodes", NODE_COLUMNS, HTA_NODES_N_COLUMNS, HTA_TABLE_GATHERED};

static const hta_column NODE_METRIC_COLUMNS[HTA_NODE_METRICS_N_COLUMNS] = {
    [HTA_NODE_METRICS_NODE] = {"node", HTA_COL_I64},
    [HTA_NODE_METRICS_HOST] = {"host", HTA_COL_STR},
    [HTA_NODE_METRICS_METRIC] = {"metric", HTA_COL_STR},
    [HTA_NODE_METRICS_VALUE] = {"value", HTA_COL_F64},
    [HTA_NODE_METRICS_ROBUST_Z] = {"robust_z", HTA_COL_F64},
};
const hta_table_spec hta_node_metrics_table = {
    "node_metrics", NODE_METRIC_COLUMNS, HTA_NODE_METRICS_N_COLUMNS, HTA_TABLE_GATHERED};

/* What is known of one node while it is measured. */
typedef struct node_figures {
    int64_t ranks, flagged;
    const char *worst_metric;  /* borrowed from the metric names */
    double worst_robust_z;
} node_figures;

static double log_choose(int64_t a, int64_t b)
{
    return lgamma((double)a + 1) - lgamma((double)b + 1) - lgamma((double)(a - b) + 1);
}

double hta_hypergeometric_tail(int64_t k, int64_t n, int64_t K, int64_t N)
{
    int64_t lo = n - (N - K) > 0 ? n - (N - K) : 0, hi = K < n ? K : n;
    if (k <= lo)
        return 1.0;
    double p = 0, total = log_choose(N, n);
    for (int64_t x = k; x <= hi; x++)
        p += exp(log_choose(K, x) + log_choose(N - K, n - x) - total);
    return p < 1 ? p : 1;
}

/* Index of rank in h (ascending ranks), or -1. */
static long rank_index(const hta_rank_hosts *h, int64_t rank)
{
    size_t lo = hta_lower_bound_i64(h->rank, h->n_ranks, rank);
    return lo < h->n_ranks && h->rank[lo] == rank ? (long)lo : -1;
}

/* Whether an "outliers" row flags its rank for the node test: every
 * class but "likely", which only counts when its robust z reaches
 * --robust-z too (|z| >= 2 alone happens by chance in a few of the 50
 * metrics of a 32-rank job). */
static int flags_rank(const hta_cell *row, long class_col, long robust_col,
                      const hta_crossrank_settings *opt)
{
    return strcmp(row[class_col].s, "likely") != 0 || fabs(row[robust_col].f) >= opt->robust_z;
}

/* Marks the ranks flagged in "outliers" and counts them per node;
 * returns K, the flagged ranks. */
static int64_t count_flagged(const hta_tableset *set, const hta_rank_hosts *h,
                             const hta_crossrank_settings *opt, unsigned char *flagged,
                             node_figures *nodes)
{
    const hta_table *outliers = hta_tableset_find(set, hta_outliers_table.name);
    int64_t total = 0;
    for (size_t r = 0; outliers && r < outliers->n_rows; r++) {
        const hta_cell *row = hta_table_row(outliers, r);
        long i = rank_index(h, row[HTA_OUTLIERS_RANK].i);
        if (i < 0 || flagged[i] ||
            !flags_rank(row, HTA_OUTLIERS_CLASSIFICATION, HTA_OUTLIERS_ROBUST_Z, opt))
            continue;
        flagged[i] = 1;
        nodes[h->node[i]].flagged++;
        total++;
    }
    return total;
}

/* The values of one metric grouped by node: node's values are
 * values[start[node] .. start[node + 1]). */
typedef struct by_node {
    double *values;
    size_t *start;
} by_node;

static int group_by_node(const hta_table *metrics, uint32_t metric, const uint32_t *metric_of,
                         const hta_rank_hosts *h, by_node *g)
{
    uint32_t n_nodes = h->names.count;
    size_t n = metrics->n_rows;
    long *rank_of_row = malloc((n ? n : 1) * sizeof *rank_of_row);
    size_t *fill = calloc(n_nodes + 1, sizeof *fill);
    g->values = malloc((n ? n : 1) * sizeof *g->values);
    g->start = calloc(n_nodes + 1, sizeof *g->start);
    int rc = rank_of_row && fill && g->values && g->start ? 0 : -1;
    for (size_t r = 0; r < n && rc == 0; r++) {
        const hta_cell *row = hta_table_row(metrics, r);
        rank_of_row[r] = metric_of[r] == metric && isfinite(row[HTA_RANK_METRICS_VALUE].f)
                             ? rank_index(h, row[HTA_RANK_METRICS_RANK].i)
                             : -1;
        if (rank_of_row[r] >= 0)
            g->start[h->node[rank_of_row[r]] + 1]++;
    }
    for (uint32_t node = 0; node < n_nodes && rc == 0; node++)
        g->start[node + 1] += g->start[node];
    for (size_t r = 0; r < n && rc == 0; r++)
        if (rank_of_row[r] >= 0) {
            uint32_t node = h->node[rank_of_row[r]];
            g->values[g->start[node] + fill[node]++] =
                hta_table_row(metrics, r)[HTA_RANK_METRICS_VALUE].f;
        }
    free(rank_of_row);
    free(fill);
    return rc;
}

/* The median of each node's values (NaN for a node without one), into
 * medians; the nodes with one are listed in finite[0 .. *n_finite). */
static void node_medians(by_node *g, uint32_t n_nodes, double *medians, double *finite,
                         size_t *n_finite)
{
    *n_finite = 0;
    for (uint32_t node = 0; node < n_nodes; node++) {
        double *v = g->values + g->start[node];
        size_t m = g->start[node + 1] - g->start[node];
        hta_sort_doubles(v, m);
        medians[node] = m ? hta_quantile_sorted(v, m, 0.5) : NAN;
        if (m)
            finite[(*n_finite)++] = medians[node];
    }
}

static void keep_worst(node_figures *f, const char *metric, double rz)
{
    if (isfinite(rz) && (!f->worst_metric || fabs(rz) > fabs(f->worst_robust_z))) {
        f->worst_metric = metric;
        f->worst_robust_z = rz;
    }
}

/* One metric: per node the median of its ranks' values, then their robust
 * z across nodes, into "node_metrics". */
static int measure_metric(const hta_table *metrics, uint32_t metric, const char *name,
                          const uint32_t *metric_of, const hta_rank_hosts *h,
                          const hta_crossrank_settings *opt, node_figures *nodes, hta_table *out)
{
    uint32_t n_nodes = h->names.count;
    by_node g = {0};
    double *medians = malloc(n_nodes * sizeof *medians);
    double *finite = malloc(n_nodes * sizeof *finite);
    size_t n_finite = 0;
    hta_spread s;
    int rc = medians && finite && group_by_node(metrics, metric, metric_of, h, &g) == 0 ? 0 : -1;
    if (rc == 0)
        node_medians(&g, n_nodes, medians, finite, &n_finite);
    if (rc == 0 && n_finite > 0)
        rc = hta_spread_of(finite, n_finite, &s);
    if (rc == 0 && n_finite > 0)
        hta_spread_set_noise_floor(&s, opt->min_effect);
    for (uint32_t node = 0; node < n_nodes && rc == 0 && n_finite > 0; node++) {
        if (!isfinite(medians[node]))
            continue;
        double rz = n_finite > 1 ? hta_spread_robust_z(&s, medians[node]) : NAN;
        if (hta_spread_is_material(&s, medians[node], opt->min_effect))
            keep_worst(&nodes[node], name, rz);
        hta_row_builder row = hta_table_add_row(out);
        hta_row_put_i64(&row, node);
        hta_row_put_str(&row, hta_strtab_get(&h->names, node));
        hta_row_put_str(&row, name);
        hta_row_put_f64(&row, medians[node]);
        hta_row_put_f64(&row, rz);
    }
    free(g.values);
    free(g.start);
    free(medians);
    free(finite);
    return rc;
}

/* Every metric of "rank_metrics", in order of first appearance. */
static int measure_metrics(const hta_tableset *set, const hta_rank_hosts *h,
                           const hta_crossrank_settings *opt, node_figures *nodes,
                           hta_strtab *names, hta_table *out)
{
    const hta_table *metrics = hta_tableset_find(set, hta_rank_metrics_table.name);
    if (!metrics || metrics->n_rows == 0)
        return 0;
    uint32_t *metric_of = malloc(metrics->n_rows * sizeof *metric_of);
    int rc = metric_of ? 0 : -1;
    for (size_t r = 0; r < metrics->n_rows && rc == 0; r++) {
        const char *name = hta_table_row(metrics, r)[HTA_RANK_METRICS_METRIC].s;
        metric_of[r] = hta_strtab_intern(names, name, strlen(name));
        rc = metric_of[r] == UINT32_MAX ? -1 : 0;
    }
    for (uint32_t m = 0; m < names->count && rc == 0; m++)
        rc = measure_metric(metrics, m, hta_strtab_get(names, m), metric_of, h, opt, nodes, out);
    free(metric_of);
    return rc;
}

static void add_node_rows(hta_table *t, const hta_rank_hosts *h, const node_figures *nodes,
                          int64_t flagged)
{
    uint32_t n_nodes = h->names.count;
    for (uint32_t node = 0; node < n_nodes; node++) {
        const node_figures *f = &nodes[node];
        double p = hta_hypergeometric_tail(f->flagged, f->ranks, flagged, (int64_t)h->n_ranks);
        double bonferroni = fmin(1.0, p * n_nodes);
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, node);
        hta_row_put_str(&row, hta_strtab_get(&h->names, node));
        hta_row_put_i64(&row, f->ranks);
        hta_row_put_i64(&row, f->flagged);
        hta_row_put_f64(&row, p);
        hta_row_put_f64(&row, bonferroni);
        hta_row_put_i64(&row, f->flagged > 0 && bonferroni < HTA_NODE_ALPHA);
        hta_row_put_str(&row, f->worst_metric ? f->worst_metric : "");
        hta_row_put_f64(&row, f->worst_metric ? f->worst_robust_z : NAN);
    }
}

int hta_node_statistics(hta_tableset *set, const hta_rank_hosts *h,
                        const hta_crossrank_settings *opt, hta_error *err)
{
    if (!h || h->n_ranks == 0)
        return 0;
    hta_strtab names;
    hta_strtab_init(&names);
    node_figures *nodes = calloc(h->names.count, sizeof *nodes);
    unsigned char *flagged = calloc(h->n_ranks, 1);
    hta_table *node_table = hta_tableset_table(set, &hta_nodes_table);
    hta_table *metric_table = hta_tableset_table(set, &hta_node_metrics_table);
    int rc = nodes && flagged && node_table && metric_table ? 0 : -1;
    for (size_t i = 0; i < h->n_ranks && rc == 0; i++)
        nodes[h->node[i]].ranks++;
    int64_t total = rc == 0 ? count_flagged(set, h, opt, flagged, nodes) : 0;
    if (rc == 0)
        rc = measure_metrics(set, h, opt, nodes, &names, metric_table);
    if (rc == 0)
        add_node_rows(node_table, h, nodes, total);
    free(nodes);
    free(flagged);
    hta_strtab_free(&names);
    return rc ? hta_fail(err, "out of memory measuring the nodes") : 0;
}
