/* spread.c: how a metric spreads over ranks, and the "outliers" rows that
 * report a rank standing apart (definitions section 5).
 *
 * Both scores are kept because they fail differently: the classic z can
 * never exceed (n - 1) / sqrt(n) with n ranks, so it misses a lone outlier
 * among few ranks, while the robust z (median and MAD) is not pulled
 * towards the outlier it is measuring.  When more than half the ranks
 * share one value the MAD is 0 and the robust z falls back to the mean
 * absolute deviation from the median (the 1.2533 factor makes both
 * estimate the standard deviation of normal data).
 *
 * The noise floor.  Ranks of one job that do the same work are often
 * near-identical: their MAD is a fraction of a percent of the median, so
 * a rank 1-2% off (a memory copy's bandwidth, an overlap ratio) gets a
 * robust z in the hundreds, though no user would call it slow: timings of
 * one job vary by a percent or two between ranks and runs.  Both scores
 * therefore divide by at least noise_floor = 2 x --min-effect x |median|
 * (2%): when the ranks agree closely a rank must lie 7% from the median to
 * be a robust outlier (4-6% for the classic z), while among ranks that
 * really spread the floor changes nothing. */
#include "crossrank/compare/spread.h"

#include "numerics/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define NOISE_FLOOR_EFFECTS 2.0

const hta_column hta_outliers_columns[HTA_OUTLIERS_N_COLUMNS] = {
    [HTA_OUTLIERS_METRIC] = {"metric", HTA_COL_STR},
    [HTA_OUTLIERS_RANK] = {"rank", HTA_COL_I64},
    [HTA_OUTLIERS_VALUE] = {"value", HTA_COL_F64},
    [HTA_OUTLIERS_MEAN] = {"mean", HTA_COL_F64},
    [HTA_OUTLIERS_STD] = {"std", HTA_COL_F64},
    [HTA_OUTLIERS_Z] = {"z", HTA_COL_F64},
    [HTA_OUTLIERS_MEDIAN] = {"median", HTA_COL_F64},
    [HTA_OUTLIERS_MAD] = {"mad", HTA_COL_F64},
    [HTA_OUTLIERS_ROBUST_Z] = {"robust_z", HTA_COL_F64},
    [HTA_OUTLIERS_CLASSIFICATION] = {"classification", HTA_COL_STR},
};
const hta_table_spec hta_outliers_table = {
    "outliers", hta_outliers_columns, HTA_OUTLIERS_N_COLUMNS, HTA_TABLE_GATHERED};

static double median_of(double *values, size_t n)
{
    hta_sort_doubles(values, n);
    return hta_quantile_sorted(values, n, 0.5);
}

int hta_spread_of(const double *values, size_t n, hta_spread *out)
{
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return -1;
    out->mean = hta_mean(values, n);
    out->std = hta_sample_std(values, n, out->mean);
    for (size_t i = 0; i < n; i++)
        v[i] = values[i];
    out->median = median_of(v, n);
    double abs_sum = 0;
    for (size_t i = 0; i < n; i++) {
        v[i] = fabs(values[i] - out->median);
        abs_sum += v[i];
    }
    out->mean_abs_dev = n ? abs_sum / (double)n : NAN;
    out->mad = median_of(v, n);
    out->noise_floor = 0;
    free(v);
    return 0;
}

void hta_spread_set_noise_floor(hta_spread *s, double min_effect)
{
    s->noise_floor = NOISE_FLOOR_EFFECTS * min_effect * fabs(s->median);
}

double hta_spread_z(const hta_spread *s, double x)
{
    double scale = fmax(s->std, s->noise_floor);
    return scale > 0 ? (x - s->mean) / scale : NAN;
}

double hta_spread_robust_z(const hta_spread *s, double x)
{
    double sigma = s->mad > 0 ? s->mad / 0.6745 : 1.2533 * s->mean_abs_dev;
    double scale = fmax(sigma, s->noise_floor);
    return scale > 0 ? (x - s->median) / scale : NAN;
}

int hta_spread_is_material(const hta_spread *s, double x, double min_effect)
{
    return fabs(x - s->median) >= min_effect * fabs(s->median);
}

int hta_spread_list_outliers(const hta_spread *s, const int64_t *ranks, const double *v,
                             size_t n, double robust_z, double min_effect, hta_buf *out)
{
    out->len = 0;
    for (size_t i = 0; i < n; i++) {
        double rz = hta_spread_robust_z(s, v[i]);
        if (!(isfinite(rz) && fabs(rz) >= robust_z && hta_spread_is_material(s, v[i], min_effect)))
            continue;
        char text[32];
        int len = snprintf(text, sizeof text, "%s%lld", out->len ? "," : "", (long long)ranks[i]);
        if (hta_buf_append(out, text, (size_t)len))
            return -1;
    }
    return 0;
}


int hta_add_outlier(hta_table *t, const char *metric, int64_t rank, double value,
                    const hta_spread *s, const char *classification)
{
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_str(&row, metric);
    hta_row_put_i64(&row, rank);
    hta_row_put_f64(&row, value);
    hta_row_put_f64(&row, s->mean);
    hta_row_put_f64(&row, s->std);
    hta_row_put_f64(&row, hta_spread_z(s, value));
    hta_row_put_f64(&row, s->median);
    hta_row_put_f64(&row, s->mad);
    hta_row_put_f64(&row, hta_spread_robust_z(s, value));
    hta_row_put_str(&row, classification);
    return hta_row_done(&row);
}

void hta_spread_put_row(hta_row_builder *row, const int64_t *ranks, const double *v, size_t n,
                        const hta_spread *s, const hta_buf *outliers)
{
    size_t lo = 0, hi = 0;
    for (size_t i = 0; i < n; i++) {
        lo = v[i] < v[lo] ? i : lo;
        hi = v[i] > v[hi] ? i : hi;
    }
    hta_row_put_i64(row, (int64_t)n);
    hta_row_put_f64(row, s->mean);
    hta_row_put_f64(row, s->std);
    hta_row_put_f64(row, v[lo]);
    hta_row_put_i64(row, ranks[lo]);
    hta_row_put_f64(row, v[hi]);
    hta_row_put_i64(row, ranks[hi]);
    hta_row_put_str(row, outliers->len ? outliers->data : "");
}
