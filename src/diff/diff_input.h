/* diff/diff_input.h: one side of `hta-mpi diff`, a results file's tables.
 *
 * Each side is read once, up front: the tables the comparisons use (small:
 * one row per rank, per (rank, kernel) or per (rank, metric)) and the list
 * of ranks the run analysed (in /ranks, not failed).  The comparisons then
 * work on hta_tables alone (diff/row_join.h) and never touch HDF5. */
#ifndef HTA_DIFF_INPUT_H
#define HTA_DIFF_INPUT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "diff/results_reader.h"
#include "table/table.h"

typedef struct hta_diff_input {
    hta_results_file file;
    hta_tableset tables;       /* owned: the tables below, those present */
    int64_t *ranks;            /* owned, sorted: ranks analysed (not failed) */
    size_t n_ranks;
} hta_diff_input;

/* Opens path and reads /ranks, /kernels, /rank_metrics, /temporal_breakdown,
 * /overlap_breakdown, /activity_categories and /collective_summary. */
int hta_diff_input_load(const char *path, hta_diff_input *in, hta_error *err);
void hta_diff_input_free(hta_diff_input *in);

/* The table of in that spec declares, or NULL when the file has none. */
const hta_table *hta_diff_table(const hta_diff_input *in, const hta_table_spec *spec);
/* Where column k of spec is in t, a table read back from a file: found by
 * its name, since a file of another schema version may order the columns
 * otherwise; -1 when t lacks it. */
long hta_diff_column(const hta_table *t, const hta_table_spec *spec, int k);
int hta_diff_input_has_rank(const hta_diff_input *in, int64_t rank);

/* Relative change (new - base) / |base| and ratio new / base; NaN where
 * base is 0 or either is NaN, so no made-up infinity reaches a table. */
static inline double hta_rel_change(double base, double new_)
{
    return base != 0 && !isnan(base) && !isnan(new_) ? (new_ - base) / fabs(base) : NAN;
}

static inline double hta_ratio(double base, double new_)
{
    return base != 0 && !isnan(base) && !isnan(new_) ? new_ / base : NAN;
}

#endif
