/* outliers.c: ranks whose metric stands apart (definitions section 5).
 *
 * For each metric in "rank_metrics": the classic z-score against mean and
 * sample std, and the robust z against median and MAD (crossrank/compare/spread.c
 * says why both).  A practical floor (--min-effect, a fraction of
 * |median|) keeps timing noise of a few microseconds from being reported.
 * A rank whose CUDA graph replays were not all recorded keeps its idle
 * metrics out of the search: its idle time is only an upper bound. */
#include "crossrank/compare/outliers.h"

#include "analysis/graph_launches.h"
#include "analysis/metrics.h"
#include "crossrank/compare/spread.h"
#include "util/strtab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *classify(const hta_crossrank_settings *opt, const hta_spread *s, double x)
{
    if (!hta_spread_is_material(s, x, opt->min_effect))
        return NULL;
    double z = hta_spread_z(s, x), rz = hta_spread_robust_z(s, x);
    if (isfinite(z) && fabs(z) >= opt->z_outlier)
        return "outlier";
    if (isfinite(z) && fabs(z) >= opt->z_likely)
        return "likely";
    if (isfinite(rz) && fabs(rz) >= opt->robust_z)
        return "robust";
    return NULL;
}

static int flag_metric(hta_table *out, const char *metric, const int64_t *ranks,
                       const double *values, size_t n, const hta_crossrank_settings *opt)
{
    if (n < 2)
        return 0;
    hta_spread s;
    if (hta_spread_of(values, n, &s))
        return -1;
    hta_spread_set_noise_floor(&s, opt->min_effect);
    for (size_t i = 0; i < n; i++) {
        const char *cls = classify(opt, &s, values[i]);
        if (cls && hta_add_outlier(out, metric, ranks[i], values[i], &s, cls))
            return -1;
    }
    return 0;
}

static int compare_rank(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Whether the search leaves the rank's value of the metric out: a
 * metric declared an idle bound, on a rank whose graph replays were not
 * all recorded, is an upper bound, not a measurement
 * (analysis/graph_launches.c). */
static int left_out(const hta_metric_info *m, int64_t rank, const int64_t *under, size_t n_under)
{
    return n_under && m && m->reliability == HTA_METRIC_IDLE_BOUND &&
           bsearch(&rank, under, n_under, sizeof *under, compare_rank);
}

/* Groups the (rank, metric, value) rows by metric, in order of first
 * appearance, and flags each group. */
int hta_find_outliers(hta_tableset *set, const hta_crossrank_settings *opt, hta_error *err)
{
    hta_table *out = hta_tableset_table(set, &hta_outliers_table);
    if (!out)
        return hta_fail(err, "out of memory");
    const hta_table *metrics = hta_tableset_find(set, hta_rank_metrics_table.name);
    if (!metrics || metrics->n_rows == 0)
        return 0;
    hta_strtab names;
    hta_strtab_init(&names);
    size_t n = metrics->n_rows;
    uint32_t *metric_of = malloc(n * sizeof *metric_of);
    int64_t *ranks = malloc(n * sizeof *ranks);
    double *values = malloc(n * sizeof *values);
    size_t n_under = 0;
    int64_t *under = hta_graph_under_recorded_ranks(set, &n_under);
    int rc = metric_of && ranks && values && under ? 0 : -1;
    for (size_t r = 0; r < n && rc == 0; r++) {
        const hta_cell *row = hta_table_row(metrics, r);
        const char *metric = row[HTA_RANK_METRICS_METRIC].s;
        metric_of[r] = hta_strtab_intern(&names, metric, strlen(metric));
        rc = metric_of[r] == UINT32_MAX ? -1 : 0;
    }
    for (uint32_t m = 0; m < names.count && rc == 0; m++) {
        size_t k = 0;
        const char *name = hta_strtab_get(&names, m);
        const hta_metric_info *info = hta_metric_named(name);
        for (size_t r = 0; r < n; r++) {
            const hta_cell *row = hta_table_row(metrics, r);
            if (metric_of[r] == m && isfinite(row[HTA_RANK_METRICS_VALUE].f) &&
                !left_out(info, row[HTA_RANK_METRICS_RANK].i, under, n_under)) {
                ranks[k] = row[HTA_RANK_METRICS_RANK].i;
                values[k++] = row[HTA_RANK_METRICS_VALUE].f;
            }
        }
        rc = flag_metric(out, name, ranks, values, k, opt);
    }
    free(under);
    free(metric_of);
    free(ranks);
    free(values);
    hta_strtab_free(&names);
    return rc ? hta_fail(err, "out of memory while searching outliers") : 0;
}
