/* hta/crossrank.h: statistics over ranks, computed on the root after the
 * gather (definitions section 5; run.h has the stage order).
 *
 * Every cross-rank table is built from the per-rank tables the root holds
 * once hta_resolve_ranks has mapped and sorted them: rows are in rank
 * order, so results never depend on the number of processes. */
#ifndef HTA_CROSSRANK_H
#define HTA_CROSSRANK_H

#include <stddef.h>
#include <stdint.h>

#include "hta/error.h"
#include "hta/options.h"
#include "hta/table.h"

/* How one metric spreads over ranks: classic (mean, sample std) and
 * robust (median, MAD; mean absolute deviation from the median when the
 * MAD is 0). */
typedef struct hta_spread {
    double mean, std, median, mad, mean_abs_dev;
    double noise_floor;        /* least standard deviation the scores assume */
} hta_spread;

/* -1 when out of memory.  The noise floor starts at 0. */
int hta_spread_of(const double *values, size_t n, hta_spread *out);
/* Sets the noise floor to 2 x min_effect x |median| (crossrank/spread.c
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

/* The "outliers" table, created (empty) when absent; NULL when out of
 * memory. */
hta_table *hta_outliers_table(hta_tableset *set);
/* Appends a row to it: the metric, rank, value, the spread's figures, z,
 * robust z and the classification. */
int hta_add_outlier(hta_table *outliers, const char *metric, int64_t rank, double value,
                    const hta_spread *s, const char *classification);

/* Whether a rank that arrived last at arrived_last of its matched
 * collectives, where fair_share is the share chance alone would give it,
 * arrives last far more often than chance among n_ranks ranks
 * (crossrank/collective_wait.c explains the test). */
int hta_is_late_arriver(int64_t arrived_last, int64_t matched, double fair_share,
                        size_t n_ranks);

/* "cross_rank/kernels" from the per-rank "kernels" table. */
int hta_kernel_comparison(hta_tableset *set, const hta_options *opt, hta_error *err);
/* "collective_wait" from the per-rank "_collectives" table; flags ranks
 * that arrive last too often in "outliers" as "straggler". */
int hta_collective_wait(hta_tableset *set, hta_error *err);
/* "cross_rank/steps" from the per-rank "steps" table. */
int hta_step_comparison(hta_tableset *set, hta_error *err);
/* "stragglers" from "collective_wait" and "rank_metrics". */
int hta_rank_stragglers(hta_tableset *set, const hta_options *opt, hta_error *err);

#endif
