/* stats.c: mean, sample std and interpolated quantiles (see numerics/stats.h). */
#include "numerics/radix_sort.h"
#include "numerics/stats.h"
#include "table/table.h"

#include <math.h>
#include <stdlib.h>

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Below this a radix sort's passes cost more than qsort. */
#define RADIX_FROM 64

/* The radix sort gives qsort's order (glibc's qsort is a stable merge
 * sort); qsort stays for short arrays and for NaN, whose order only that
 * merge sort defines. */
void hta_sort_doubles(double *values, size_t n)
{
    if (n < RADIX_FROM || hta_radix_sort_doubles(values, n))
        qsort(values, n, sizeof *values, compare_doubles);
}

void hta_quantile_position(size_t n, double q, size_t *lo, double *frac)
{
    double pos = q * (double)(n - 1);
    *lo = (size_t)floor(pos);
    *frac = pos - (double)*lo;
}

double hta_quantile_between(double a, double b, double frac)
{
    /* numpy's lerp, bit for bit: from the nearer neighbour, so that HTA's
     * comparisons against a quantile (the top-kernels cut) come out the
     * same. */
    return frac >= 0.5 ? b - (b - a) * (1.0 - frac) : a + (b - a) * frac;
}

double hta_quantile_sorted(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return NAN;
    size_t lo;
    double frac;
    hta_quantile_position(n, q, &lo, &frac);
    if (lo + 1 >= n)
        return sorted[n - 1];
    return hta_quantile_between(sorted[lo], sorted[lo + 1], frac);
}

double hta_mean(const double *values, size_t n)
{
    if (n == 0)
        return NAN;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += values[i];
    return sum / (double)n;
}

double hta_sample_std(const double *values, size_t n, double mean)
{
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (values[i] - mean) * (values[i] - mean);
    return hta_std_from_squares(ss, n);
}

double hta_std_from_squares(double squares, size_t n)
{
    if (n < 2)
        return n == 1 ? 0.0 : NAN;
    return sqrt(squares / (double)(n - 1));
}

double hta_round_decimals(double x, int decimals)
{
    double scale = pow(10.0, decimals);
    return rint(x * scale) / scale;
}

void hta_summarize(double *values, size_t n, hta_summary *out)
{
    hta_sort_doubles(values, n);
    out->count = n;
    out->mean = hta_mean(values, n);
    out->std = n ? hta_sample_std(values, n, out->mean) : NAN;
    if (n == 1)
        out->std = NAN;        /* pandas: std of one value is NaN */
    out->min = n ? values[0] : NAN;
    out->max = n ? values[n - 1] : NAN;
    out->p25 = hta_quantile_sorted(values, n, 0.25);
    out->p50 = hta_quantile_sorted(values, n, 0.50);
    out->p75 = hta_quantile_sorted(values, n, 0.75);
}

void hta_row_put_summary(hta_row_builder *row, const hta_summary *s)
{
    hta_row_put_i64(row, (int64_t)s->count);
    hta_row_put_f64(row, s->mean);
    hta_row_put_f64(row, s->std);
    hta_row_put_f64(row, s->min);
    hta_row_put_f64(row, s->p25);
    hta_row_put_f64(row, s->p50);
    hta_row_put_f64(row, s->p75);
    hta_row_put_f64(row, s->max);
}
