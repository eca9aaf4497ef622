/* kernel_breakdown.c: time per kernel name and per kernel type of a rank
 * (definitions section 4, HTA's get_gpu_kernel_breakdown).
 *
 * Three tables:
 * - "kernels": every kernel name of every GPU event with count, sum, max,
 *   min, mean and sample std (ddof 1, 0 for one instance) of its
 *   durations.  Unlike HTA this keeps OTHER kernels (Context Sync, ...);
 *   their rows are the only ones HTA's untruncated breakdown lacks.
 * - "kernels_top": HTA's view, per COMPUTATION, COMMUNICATION and MEMORY.
 *   When a type has more than num_kernels names, they are ranked by sum
 *   exactly as HTA's pandas sort ranks them (equal sums included) and
 *   those whose cumulative sum exceeds the duration_ratio quantile of the
 *   cumulative sums, or whose position is num_kernels or later, fold into
 *   one "others" row.  HTA then recomputes max/min/mean/std over the
 *   per-name sums of each row (so a kept name shows max = min = mean =
 *   sum), and so does this table; count stays the number of kernel
 *   instances the row covers.  Without folding the rows equal "kernels".
 * - "kernel_type_by_rank": exclusive time of each non-empty combination of
 *   COMPUTATION, COMMUNICATION and MEMORY being active, named as HTA names
 *   them ("COMPUTATION overlapping COMMUNICATION"); OTHER kernels take no
 *   part, as in HTA.  Combinations HTA's sweep passes through without
 *   time are rows at 0, as in HTA (analysis/kernel_type_masks.h).  The
 *   root sums it over ranks (crossrank/compare/kernel_type_totals.c).
 * Rows come in HTA's order within a rank: by kernel type name, then name. */
#include "analysis/kernel_breakdown.h"

#include "analysis/kernel_type_masks.h"
#include "numerics/argsort.h"
#include "numerics/stats.h"
#include "util/large_alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const hta_column KERNEL_COLUMNS[HTA_KERNELS_N_COLUMNS] = {
    [HTA_KERNELS_RANK] = {"rank", HTA_COL_I64},
    [HTA_KERNELS_NAME] = {"name", HTA_COL_STR},
    [HTA_KERNELS_KERNEL_TYPE] = {"kernel_type", HTA_COL_STR},
    [HTA_KERNELS_COUNT] = {"count", HTA_COL_I64},
    [HTA_KERNELS_SUM_US] = {"sum_us", HTA_COL_F64},
    [HTA_KERNELS_MAX_US] = {"max_us", HTA_COL_F64},
    [HTA_KERNELS_MIN_US] = {"min_us", HTA_COL_F64},
    [HTA_KERNELS_MEAN_US] = {"mean_us", HTA_COL_F64},
    [HTA_KERNELS_STDDEV_US] = {"stddev_us", HTA_COL_F64},
};
const hta_table_spec hta_kernels_table = {
    "kernels", KERNEL_COLUMNS, HTA_KERNELS_N_COLUMNS, HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};
const hta_table_spec hta_kernels_top_table = {
    "kernels_top", KERNEL_COLUMNS, HTA_KERNELS_N_COLUMNS, HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

static const hta_column TYPE_COLUMNS[HTA_KERNEL_TYPE_BY_RANK_N_COLUMNS] = {
    [HTA_KERNEL_TYPE_BY_RANK_RANK] = {"rank", HTA_COL_I64},
    [HTA_KERNEL_TYPE_BY_RANK_KERNEL_TYPE] = {"kernel_type", HTA_COL_STR},
    [HTA_KERNEL_TYPE_BY_RANK_SUM_US] = {"sum_us", HTA_COL_F64},
};
const hta_table_spec hta_kernel_type_by_rank_table = {
    "kernel_type_by_rank", TYPE_COLUMNS, HTA_KERNEL_TYPE_BY_RANK_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};


/* The kernel types HTA breaks down, in the order of its bit mask
 * (COMPUTATION = 1, COMMUNICATION = 2, MEMORY = 4): the hta_kernel_type
 * values 0, 1, 2. */
#define N_ANALYSED_TYPES 3

typedef struct kernel_stats {
    const char *name;
    hta_kernel_type type;
    int64_t count;
    int64_t sum_ns;            /* exact, for ranking */
    double sum_us, max_us, min_us, mean_us, stddev_us;
} kernel_stats;

static int compare_type_then_name(const void *a, const void *b)
{
    const kernel_stats *x = a, *y = b;
    int by_type = strcmp(hta_kernel_type_name(x->type), hta_kernel_type_name(y->type));
    return by_type ? by_type : strcmp(x->name, y->name);
}

/* Statistics of n >= 1 values in us. */
static kernel_stats summarize(const char *name, hta_kernel_type type, int64_t count,
                              const double *values, size_t n)
{
    kernel_stats s = {.name = name, .type = type, .count = count,
                      .max_us = values[0], .min_us = values[0]};
    for (size_t i = 0; i < n; i++) {
        s.sum_us += values[i];
        s.max_us = values[i] > s.max_us ? values[i] : s.max_us;
        s.min_us = values[i] < s.min_us ? values[i] : s.min_us;
    }
    s.mean_us = hta_mean(values, n);
    s.stddev_us = hta_sample_std(values, n, s.mean_us);
    return s;
}

/* row_of[name] = 1 + the row of each kernel name of the view, rows
 * numbered in name-id order; returns the number of rows. */
static size_t number_names(const hta_rank_view *v, uint32_t *row_of)
{
    for (size_t i = 0; i < v->n_gpu; i++)
        row_of[v->gpu[i]->name] = 1;
    size_t n = 0;
    for (uint32_t name = 0; name < v->trace->names.count; name++)
        if (row_of[name])
            row_of[name] = (uint32_t)++n;
    return n;
}

/* Count, sums, max and min per name, adding each name's durations in view
 * order as summarize() would over the name's values. */
static void add_durations(const hta_rank_view *v, const uint32_t *row_of, kernel_stats *rows)
{
    for (size_t i = 0; i < v->n_gpu; i++) {
        const hta_event *e = v->gpu[i];
        kernel_stats *s = &rows[row_of[e->name] - 1];
        double us = hta_ns_to_us(e->dur_ns);
        if (s->count++ == 0) {
            s->name = hta_strtab_get(&v->trace->names, e->name);
            s->type = (hta_kernel_type)e->kernel_type;
            s->max_us = s->min_us = us;
        }
        s->sum_us += us;
        s->max_us = us > s->max_us ? us : s->max_us;
        s->min_us = us < s->min_us ? us : s->min_us;
        s->sum_ns = hta_add_saturating(s->sum_ns, e->dur_ns);
    }
}

/* The second pass of the sample std: squared deviations from each name's
 * mean, in view order as hta_sample_std adds them. */
static void add_deviations(const hta_rank_view *v, const uint32_t *row_of, kernel_stats *rows,
                           double *squares)
{
    for (size_t i = 0; i < v->n_gpu; i++) {
        size_t r = row_of[v->gpu[i]->name] - 1;
        double d = hta_ns_to_us(v->gpu[i]->dur_ns) - rows[r].mean_us;
        squares[r] += d * d;
    }
}

/* One kernel_stats per distinct name, sorted by type name then name;
 * NULL when out of memory.  Two passes over the view (sums, then the
 * deviations from the means) keep only a row per name, not every
 * duration. */
static kernel_stats *stats_per_name(const hta_rank_view *v, size_t *n)
{
    uint32_t *row_of = calloc((size_t)v->trace->names.count + 1, sizeof *row_of);
    size_t n_rows = row_of ? number_names(v, row_of) : 0;
    kernel_stats *rows = row_of ? calloc(n_rows + 1, sizeof *rows) : NULL;
    double *squares = rows ? calloc(n_rows + 1, sizeof *squares) : NULL;
    if (squares) {
        add_durations(v, row_of, rows);
        for (size_t r = 0; r < n_rows; r++)
            rows[r].mean_us = rows[r].sum_us / (double)rows[r].count;
        add_deviations(v, row_of, rows, squares);
        for (size_t r = 0; r < n_rows; r++) {
            rows[r].stddev_us = hta_std_from_squares(squares[r], (size_t)rows[r].count);
            /* Summed in integer ns: exact for nanosecond-resolution traces. */
            rows[r].sum_us = hta_ns_to_us(rows[r].sum_ns);
        }
        *n = n_rows;
        qsort(rows, n_rows, sizeof *rows, compare_type_then_name);
    } else {
        free(rows);
        rows = NULL;
    }
    free(row_of);
    free(squares);
    return rows;
}

static int put_kernel_row(hta_table *t, int64_t rank_key, const kernel_stats *s)
{
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_str(&row, s->name);
    hta_row_put_str(&row, hta_kernel_type_name(s->type));
    hta_row_put_i64(&row, s->count);
    hta_row_put_f64(&row, s->sum_us);
    hta_row_put_f64(&row, s->max_us);
    hta_row_put_f64(&row, s->min_us);
    hta_row_put_f64(&row, s->mean_us);
    hta_row_put_f64(&row, s->stddev_us);
    return hta_row_done(&row);
}

static int put_kernel_rows(hta_tableset *out, const hta_table_spec *table, int64_t rank_key,
                           const kernel_stats *rows, size_t n)
{
    hta_table *t = hta_tableset_table(out, table);
    if (!t)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (put_kernel_row(t, rank_key, &rows[i]))
            return -1;
    return 0;
}

/* Work space of the top view, sized for the most names of one type. */
typedef struct top_scratch {
    int64_t *keys;
    size_t *order;
    double *cumsum, *sorted, *folded;
    kernel_stats *ranked, *top;
} top_scratch;

static void top_scratch_free(top_scratch *s)
{
    free(s->keys);
    free(s->order);
    free(s->cumsum);
    free(s->sorted);
    free(s->folded);
    free(s->ranked);
    free(s->top);
}

static int top_scratch_alloc(top_scratch *s, size_t n)
{
    s->keys = hta_large_malloc(n * sizeof *s->keys);
    s->order = hta_large_malloc(n * sizeof *s->order);
    s->cumsum = hta_large_malloc(n * sizeof *s->cumsum);
    s->sorted = hta_large_malloc(n * sizeof *s->sorted);
    s->folded = hta_large_malloc(n * sizeof *s->folded);
    s->ranked = hta_large_malloc(n * sizeof *s->ranked);
    s->top = hta_large_malloc(n * sizeof *s->top);
    if (s->keys && s->order && s->cumsum && s->sorted && s->folded && s->ranked && s->top)
        return 0;
    top_scratch_free(s);
    return -1;
}

/* HTA ranks a type's names, given in name order, with pandas'
 * sort_values("sum", ascending=False): numpy's unstable quicksort of the
 * reversed column, read backwards.  The same permutation keeps HTA's
 * choice among equal sums at the num_kernels cut. */
static int rank_like_hta(const kernel_stats *rows, size_t n, top_scratch *s)
{
    for (size_t i = 0; i < n; i++)
        s->keys[i] = rows[n - 1 - i].sum_ns;
    if (hta_argsort_like_numpy(s->keys, n, s->order))
        return -1;
    for (size_t j = 0; j < n; j++)
        s->ranked[j] = rows[n - 1 - s->order[n - 1 - j]];
    return 0;
}

/* HTA's fold of the n ranked names of one type into kept rows plus
 * "others" in s->top, sorted by name; returns the number of rows. */
static size_t fold_ranked(size_t n, const hta_analysis_settings *opt, top_scratch *s)
{
    double running = 0;
    for (size_t i = 0; i < n; i++)
        s->cumsum[i] = running += s->ranked[i].sum_us;
    memcpy(s->sorted, s->cumsum, n * sizeof *s->sorted);
    hta_sort_doubles(s->sorted, n);
    double cut = hta_quantile_sorted(s->sorted, n, opt->duration_ratio);

    size_t kept = 0, n_folded = 0;
    int64_t folded_count = 0;
    for (size_t i = 0; i < n; i++) {
        const kernel_stats *k = &s->ranked[i];
        if (s->cumsum[i] > cut || i >= (size_t)opt->num_kernels) {
            s->folded[n_folded++] = k->sum_us;
            folded_count += k->count;
        } else {
            s->top[kept++] = summarize(k->name, k->type, k->count, &k->sum_us, 1);
        }
    }
    s->top[kept++] = summarize("others", s->ranked[0].type, folded_count, s->folded, n_folded);
    qsort(s->top, kept, sizeof *s->top, compare_type_then_name);
    return kept;
}

/* kernels_top for the analysed types; rows is sorted by type then name, so
 * each type is one run of rows. */
static int put_top_rows(hta_tableset *out, const hta_rank_view *v, const hta_analysis_settings *opt,
                        const kernel_stats *rows, size_t n)
{
    top_scratch s;
    if (top_scratch_alloc(&s, n))
        return -1;
    int rc = 0;
    for (size_t first = 0, end; first < n && rc == 0; first = end) {
        for (end = first; end < n && rows[end].type == rows[first].type; end++)
            ;
        size_t m = end - first;
        if (rows[first].type >= N_ANALYSED_TYPES)
            continue;
        if (m <= (size_t)opt->num_kernels) {
            rc = put_kernel_rows(out, &hta_kernels_top_table, v->rank_key, rows + first, m);
            continue;
        }
        rc = rank_like_hta(rows + first, m, &s);
        if (rc == 0)
            rc = put_kernel_rows(out, &hta_kernels_top_table, v->rank_key, s.top,
                                 fold_ranked(m, opt, &s));
    }
    top_scratch_free(&s);
    return rc;
}

/* "COMPUTATION overlapping MEMORY" for mask 5: HTA joins the active types
 * in the order of their bits. */
static void combination_name(unsigned mask, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int type = 0; type < N_ANALYSED_TYPES; type++)
        if (mask & (1u << type))
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? " overlapping " : "",
                                    hta_kernel_type_name((hta_kernel_type)type));
}

static int put_type_rows(hta_tableset *out, const hta_rank_view *v)
{
    int64_t by_mask[1u << N_ANALYSED_TYPES];
    hta_intervals_exclusive(v->unions.of, v->unions.n, N_ANALYSED_TYPES, by_mask);
    uint32_t timed = 0, seen;
    for (unsigned mask = 1; mask < (1u << N_ANALYSED_TYPES); mask++)
        timed |= by_mask[mask] > 0 ? 1u << mask : 0;
    if (hta_kernel_type_masks_like_hta(v->unions.of, v->unions.n, N_ANALYSED_TYPES, timed,
                                       &seen))
        return -1;
    hta_table *t = hta_tableset_table(out, &hta_kernel_type_by_rank_table);
    if (!t)
        return -1;
    for (unsigned mask = 1; mask < (1u << N_ANALYSED_TYPES); mask++) {
        if (!(seen & (1u << mask)))
            continue;
        char name[128];
        combination_name(mask, name, sizeof name);
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, v->rank_key);
        hta_row_put_str(&row, name);
        hta_row_put_f64(&row, hta_ns_to_us(by_mask[mask] > 0 ? by_mask[mask] : 0));
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

int hta_kernel_breakdown(const hta_rank_view *v, const hta_analysis_settings *opt,
                         hta_tableset *out, hta_error *err)
{
    if (v->n_gpu == 0)
        return 0;
    size_t n;
    kernel_stats *rows = stats_per_name(v, &n);
    if (!rows)
        return hta_fail(err, "out of memory in the kernel breakdown");
    int rc = put_kernel_rows(out, &hta_kernels_table, v->rank_key, rows, n) ||
             put_top_rows(out, v, opt, rows, n) || put_type_rows(out, v);
    free(rows);
    return rc ? hta_fail(err, "out of memory in the kernel breakdown") : 0;
}
