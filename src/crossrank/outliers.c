/* outliers.c: ranks whose metric stands apart (definitions section 5).
 *
 * For each metric in "rank_metrics": the classic z-score against mean and
 * sample std, and the robust z against median and MAD, because with few
 * ranks |z| cannot exceed (n - 1) / sqrt(n).  A practical floor
 * (--min-effect, a fraction of |median|) keeps timing noise of a few
 * microseconds from being reported. */
#include "hta/run.h"
#include "hta/stats.h"
#include "hta/strtab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const hta_column OUTLIER_COLUMNS[] = {
    {"metric", HTA_COL_STR}, {"rank", HTA_COL_I64}, {"value", HTA_COL_F64},
    {"mean", HTA_COL_F64}, {"std", HTA_COL_F64}, {"z", HTA_COL_F64},
    {"median", HTA_COL_F64}, {"mad", HTA_COL_F64}, {"robust_z", HTA_COL_F64},
    {"classification", HTA_COL_STR},
};

typedef struct metric_sample {
    int64_t rank;
    double value;
} metric_sample;

typedef struct metric_stats {
    double mean, std, median, mad, mean_abs_dev;
} metric_stats;

static double median_of(double *values, size_t n)
{
    hta_sort_doubles(values, n);
    return hta_quantile_sorted(values, n, 0.5);
}

static int compute_stats(const metric_sample *s, size_t n, metric_stats *out)
{
    double *v = malloc(n * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = s[i].value;
    out->mean = hta_mean(v, n);
    out->std = hta_sample_std(v, n, out->mean);
    out->median = median_of(v, n);
    double abs_sum = 0;
    for (size_t i = 0; i < n; i++) {
        v[i] = fabs(s[i].value - out->median);
        abs_sum += v[i];
    }
    out->mean_abs_dev = abs_sum / (double)n;
    out->mad = median_of(v, n);
    free(v);
    return 0;
}

static double robust_z(const metric_stats *st, double x)
{
    if (st->mad > 0)
        return 0.6745 * (x - st->median) / st->mad;
    if (st->mean_abs_dev > 0)
        return (x - st->median) / (1.2533 * st->mean_abs_dev);
    return NAN;
}

static const char *classify(const hta_options *opt, const metric_stats *st,
                            double x, double z, double rz)
{
    if (fabs(x - st->median) < opt->min_effect * fabs(st->median))
        return NULL;
    if (isfinite(z) && fabs(z) >= opt->z_outlier)
        return "outlier";
    if (isfinite(z) && fabs(z) >= opt->z_likely)
        return "likely";
    if (isfinite(rz) && fabs(rz) >= opt->robust_z)
        return "robust";
    return NULL;
}

static int flag_metric(hta_table *out, const char *metric, const metric_sample *s,
                       size_t n, const hta_options *opt)
{
    if (n < 2)
        return 0;
    metric_stats st;
    if (compute_stats(s, n, &st))
        return -1;
    for (size_t i = 0; i < n; i++) {
        double x = s[i].value;
        double z = st.std > 0 ? (x - st.mean) / st.std : NAN;
        double rz = robust_z(&st, x);
        const char *cls = classify(opt, &st, x, z, rz);
        if (!cls)
            continue;
        hta_row row = hta_table_add_row(out);
        hta_row_put_str(&row, metric);
        hta_row_put_i64(&row, s[i].rank);
        hta_row_put_f64(&row, x);
        hta_row_put_f64(&row, st.mean);
        hta_row_put_f64(&row, st.std);
        hta_row_put_f64(&row, z);
        hta_row_put_f64(&row, st.median);
        hta_row_put_f64(&row, st.mad);
        hta_row_put_f64(&row, rz);
        hta_row_put_str(&row, cls);
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

/* Groups the (rank, metric, value) rows by metric, in order of first
 * appearance, and flags each group. */
int hta_find_outliers(hta_tableset *set, const hta_options *opt, hta_error *err)
{
    hta_table *out = hta_tableset_table(set, "outliers", OUTLIER_COLUMNS,
                                        sizeof OUTLIER_COLUMNS / sizeof OUTLIER_COLUMNS[0]);
    if (!out)
        return hta_fail(err, "out of memory");
    const hta_table *metrics = hta_tableset_find(set, "rank_metrics");
    if (!metrics || metrics->n_rows == 0)
        return 0;
    hta_strtab names;
    hta_strtab_init(&names);
    size_t n = metrics->n_rows;
    uint32_t *metric_of = malloc(n * sizeof *metric_of);
    metric_sample *samples = malloc(n * sizeof *samples);
    int rc = metric_of && samples ? 0 : -1;
    for (size_t r = 0; r < n && rc == 0; r++) {
        const hta_cell *row = hta_table_row(metrics, r);
        metric_of[r] = hta_strtab_intern(&names, row[1].s, strlen(row[1].s));
        rc = metric_of[r] == UINT32_MAX ? -1 : 0;
    }
    for (uint32_t m = 0; m < names.count && rc == 0; m++) {
        size_t k = 0;
        for (size_t r = 0; r < n; r++) {
            const hta_cell *row = hta_table_row(metrics, r);
            if (metric_of[r] == m && isfinite(row[2].f))
                samples[k++] = (metric_sample){row[0].i, row[2].f};
        }
        rc = flag_metric(out, hta_strtab_get(&names, m), samples, k, opt);
    }
    free(metric_of);
    free(samples);
    hta_strtab_free(&names);
    return rc ? hta_fail(err, "out of memory while searching outliers") : 0;
}
