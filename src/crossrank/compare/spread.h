/* crossrank/compare/spread.h: how one metric spreads over ranks, and the
 * "outliers" table every cross-rank statistic reports into. */
#ifndef HTA_SPREAD_H
#define HTA_SPREAD_H

#include <stddef.h>
#include <stdint.h>

#include "table/table.h"
#include "util/buf.h"

/* Classic (mean, sample std) and robust (median, MAD; mean absolute
 * deviation from the median when the MAD is 0) spread. */
typedef struct hta_spread {
    double mean, std, median, mad, mean_abs_dev;
    double noise_floor;        /* least standard deviation the scores assume */
} hta_spread;

/* -1 when out of memory.  The noise floor starts at 0. */
int hta_spread_of(const double *values, size_t n, hta_spread *out);
/* Sets the noise floor to 2 x min_effect x |median| (crossrank/compare/spread.c
 * says why). */
void hta_spread_set_noise_floor(hta_spread *s, double min_effect);
/* (x - mean) / max(std, noise floor); NaN when both are 0. */
double hta_spread_z(const hta_spread *s, double x);
/* (x - median) / max(MAD / 0.6745, noise floor), with 1.2533 x the mean
 * absolute deviation for MAD / 0.6745 when the MAD is 0; NaN when all
 * are 0. */
double hta_spread_robust_z(const hta_spread *s, double x);
/* Whether x is far enough from the median to be reported at all: at
 * least min_effect x |median| (--min-effect). */
int hta_spread_is_material(const hta_spread *s, double x, double min_effect);
/* Writes into `out` the comma-separated ranks whose value stands apart:
 * robust z at least `robust_z` and material (empty when none); -1 when out
 * of memory. */
int hta_spread_list_outliers(const hta_spread *s, const int64_t *ranks, const double *v,
                             size_t n, double robust_z, double min_effect, hta_buf *out);

/* Appends what every row of a name compared across ranks ends with
 * (cross_rank/kernels, cross_rank/ops, ...): n_ranks, mean_us, std_us,
 * min_us, min_rank, max_us, max_rank (the first rank on ties) and
 * outlier_ranks, from v (the value of each rank in ranks), its spread s
 * and its listed outliers. */
void hta_spread_put_row(hta_row_builder *row, const int64_t *ranks, const double *v, size_t n,
                        const hta_spread *s, const hta_buf *outliers);

/* Appends a row to /outliers (hta_outliers_table): the metric, rank,
 * value, the spread's figures, z, robust z and the classification. */
int hta_add_outlier(hta_table *outliers, const char *metric, int64_t rank, double value,
                    const hta_spread *s, const char *classification);

/* The columns of /outliers (docs/results-format.md). */
enum {
    HTA_OUTLIERS_METRIC,
    HTA_OUTLIERS_RANK,
    HTA_OUTLIERS_VALUE,
    HTA_OUTLIERS_MEAN,
    HTA_OUTLIERS_STD,
    HTA_OUTLIERS_Z,
    HTA_OUTLIERS_MEDIAN,
    HTA_OUTLIERS_MAD,
    HTA_OUTLIERS_ROBUST_Z,
    HTA_OUTLIERS_CLASSIFICATION,
    HTA_OUTLIERS_N_COLUMNS
};
extern const hta_table_spec hta_outliers_table;
/* Its columns, which a step's own table of flagged ranks shares: that
 * table's rows are joined to "outliers" (crossrank/steps.h). */
extern const hta_column hta_outliers_columns[HTA_OUTLIERS_N_COLUMNS];

#endif
