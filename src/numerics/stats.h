/* numerics/stats.h: descriptive statistics shared by the analyses.
 *
 * Quantiles use linear interpolation between order statistics (pandas'
 * default), std is the sample standard deviation (ddof = 1) as in HTA. */
#ifndef HTA_STATS_H
#define HTA_STATS_H

#include <stddef.h>
#include <stdint.h>

typedef struct hta_summary {
    size_t count;
    double mean, std, min, p25, p50, p75, max;
} hta_summary;

/* a + b clamped to the int64 range: totals of absurd inputs (byte counts
 * near 2^63, many events of the longest plausible duration) saturate
 * rather than overflow (docs/robustness.md). */
static inline int64_t hta_add_saturating(int64_t a, int64_t b)
{
    int64_t sum;
    if (!__builtin_add_overflow(a, b, &sum))
        return sum;
    return b > 0 ? INT64_MAX : INT64_MIN;
}

/* Appends count, mean, std, min, p25, p50, p75, max to a row, the column
 * run every summary table shares. */
struct hta_row_builder;
void hta_row_put_summary(struct hta_row_builder *row, const hta_summary *s);

/* Sorts values in place and summarises them (NaN fields when empty). */
void hta_summarize(double *values, size_t n, hta_summary *out);
/* q in [0, 1] of sorted values, linear interpolation; NaN when n == 0. */
double hta_quantile_sorted(const double *sorted, size_t n, double q);
/* Its parts, for values kept otherwise than sorted: quantile q of n >= 1
 * values lies between order statistics lo and lo + 1 at frac, and is
 * hta_quantile_between(value lo, value lo + 1, frac), or value n - 1
 * when lo + 1 == n. */
void hta_quantile_position(size_t n, double q, size_t *lo, double *frac);
double hta_quantile_between(double a, double b, double frac);
void hta_sort_doubles(double *values, size_t n);
double hta_mean(const double *values, size_t n);
double hta_sample_std(const double *values, size_t n, double mean);
/* The sample std of n values whose squared deviations from their mean sum
 * to squares, for callers that add them as they go: 0 for one value, NaN
 * for none, as hta_sample_std. */
double hta_std_from_squares(double squares, size_t n);
/* x rounded to the given decimals as numpy and pandas round (which HTA
 * uses): scale, round half to even, scale back. */
double hta_round_decimals(double x, int decimals);
#endif
