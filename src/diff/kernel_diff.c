/* kernel_diff.c: /diff/kernels and /diff/kernel_set (see diff/kernel_diff.h).
 *
 * The all-ranks rows compare the whole runs: each run's /kernels summed
 * over every rank it analysed, so a rank present in one run only counts in
 * its run's totals (the rank is listed in /diff/rank_metrics).  The
 * per-rank rows compare only ranks both runs analysed: a rank missing from
 * one run would otherwise turn all of its kernels into added or removed. */
#define _GNU_SOURCE /* qsort_r */
#include "diff/kernel_diff.h"

#include "analysis/kernel_breakdown.h"
#include "diff/row_join.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const hta_column KERNEL_COLUMNS[HTA_DIFF_KERNELS_N_COLUMNS] = {
    [HTA_DIFF_KERNELS_RANK] = {"rank", HTA_COL_I64},
    [HTA_DIFF_KERNELS_NAME] = {"name", HTA_COL_STR},
    [HTA_DIFF_KERNELS_KERNEL_TYPE] = {"kernel_type", HTA_COL_STR},
    [HTA_DIFF_KERNELS_CLASS] = {"class", HTA_COL_STR},
    [HTA_DIFF_KERNELS_BASE_COUNT] = {"base_count", HTA_COL_I64},
    [HTA_DIFF_KERNELS_NEW_COUNT] = {"new_count", HTA_COL_I64},
    [HTA_DIFF_KERNELS_BASE_TOTAL_US] = {"base_total_us", HTA_COL_F64},
    [HTA_DIFF_KERNELS_NEW_TOTAL_US] = {"new_total_us", HTA_COL_F64},
    [HTA_DIFF_KERNELS_CHANGE_US] = {"change_us", HTA_COL_F64},
    [HTA_DIFF_KERNELS_REL_CHANGE] = {"rel_change", HTA_COL_F64},
    [HTA_DIFF_KERNELS_BASE_MEAN_US] = {"base_mean_us", HTA_COL_F64},
    [HTA_DIFF_KERNELS_NEW_MEAN_US] = {"new_mean_us", HTA_COL_F64},
    [HTA_DIFF_KERNELS_MEAN_REL_CHANGE] = {"mean_rel_change", HTA_COL_F64},
    [HTA_DIFF_KERNELS_BASE_MAX_US] = {"base_max_us", HTA_COL_F64},
    [HTA_DIFF_KERNELS_NEW_MAX_US] = {"new_max_us", HTA_COL_F64},
};
const hta_table_spec hta_diff_kernels_table = {
    "diff/kernels", KERNEL_COLUMNS, HTA_DIFF_KERNELS_N_COLUMNS, 0};

static const hta_column SET_COLUMNS[HTA_DIFF_KERNEL_SET_N_COLUMNS] = {
    [HTA_DIFF_KERNEL_SET_RANK] = {"rank", HTA_COL_I64},
    [HTA_DIFF_KERNEL_SET_NAME] = {"name", HTA_COL_STR},
    [HTA_DIFF_KERNEL_SET_KERNEL_TYPE] = {"kernel_type", HTA_COL_STR},
    [HTA_DIFF_KERNEL_SET_RUN] = {"run", HTA_COL_STR},
    [HTA_DIFF_KERNEL_SET_COUNT] = {"count", HTA_COL_I64},
    [HTA_DIFF_KERNEL_SET_TOTAL_US] = {"total_us", HTA_COL_F64},
    [HTA_DIFF_KERNEL_SET_MEAN_US] = {"mean_us", HTA_COL_F64},
    [HTA_DIFF_KERNEL_SET_MAX_US] = {"max_us", HTA_COL_F64},
};
const hta_table_spec hta_diff_kernel_set_table = {
    "diff/kernel_set", SET_COLUMNS, HTA_DIFF_KERNEL_SET_N_COLUMNS, 0};

/* Columns of a /kernels table (either file's, or the all-ranks sums). */
typedef struct kernel_columns {
    long rank, name, type, count, sum, max;
} kernel_columns;

static int find_columns(const hta_table *t, kernel_columns *c, hta_error *err)
{
    if (!t)
        return 0;
    static const int wanted[] = {HTA_KERNELS_RANK,  HTA_KERNELS_NAME,   HTA_KERNELS_KERNEL_TYPE,
                                 HTA_KERNELS_COUNT, HTA_KERNELS_SUM_US, HTA_KERNELS_MAX_US};
    long *out[] = {&c->rank, &c->name, &c->type, &c->count, &c->sum, &c->max};
    for (size_t i = 0; i < 6; i++)
        if ((*out[i] = hta_diff_column(t, &hta_kernels_table, wanted[i])) < 0)
            return hta_fail(err, "/kernels has no column %s",
                            hta_kernels_table.columns[wanted[i]].name);
    return 0;
}

/* One run's figures of one kernel; present = 0 when the run lacks it. */
typedef struct kernel_side {
    int present;
    int64_t count;
    double total, max;
    const char *type;
} kernel_side;

static kernel_side side_of(const hta_cell *row, const kernel_columns *c)
{
    if (!row)
        return (kernel_side){0, 0, 0, NAN, NULL};
    return (kernel_side){1, row[c->count].i, row[c->sum].f, row[c->max].f, row[c->type].s};
}

static double mean_of(const kernel_side *s)
{
    return s->count ? s->total / (double)s->count : NAN;
}

const char *hta_diff_kernel_class(int in_base, int in_new, double base_total, double new_total,
                                  double min_change)
{
    if (!in_base)
        return "added";
    if (!in_new)
        return "removed";
    if (base_total == new_total)
        return "unchanged";
    double rel = hta_rel_change(base_total, new_total);
    if (!isnan(rel) && fabs(rel) <= min_change)
        return "unchanged";
    return new_total > base_total ? "slower" : "faster";
}

typedef struct join_ctx {
    const hta_diff_input *base, *new_;
    kernel_columns cb, cn;
    int per_rank;              /* 0: the all-ranks tables */
    double min_change;
    hta_table *kernels, *set;
} join_ctx;

static int put_set_row(join_ctx *j, int64_t rank, const char *name, const char *run,
                       const kernel_side *s)
{
    hta_row_builder row = hta_table_add_row(j->set);
    hta_row_put_i64(&row, rank);
    hta_row_put_str(&row, name);
    hta_row_put_str(&row, s->type);
    hta_row_put_str(&row, run);
    hta_row_put_i64(&row, s->count);
    hta_row_put_f64(&row, s->total);
    hta_row_put_f64(&row, mean_of(s));
    hta_row_put_f64(&row, s->max);
    return hta_row_done(&row);
}

static int put_kernel_row(join_ctx *j, int64_t rank, const char *name, const kernel_side *b,
                          const kernel_side *n)
{
    hta_row_builder row = hta_table_add_row(j->kernels);
    hta_row_put_i64(&row, rank);
    hta_row_put_str(&row, name);
    hta_row_put_str(&row, b->present ? b->type : n->type);
    hta_row_put_str(&row, hta_diff_kernel_class(b->present, n->present, b->total, n->total,
                                                j->min_change));
    hta_row_put_i64(&row, b->count);
    hta_row_put_i64(&row, n->count);
    hta_row_put_f64(&row, b->total);
    hta_row_put_f64(&row, n->total);
    hta_row_put_f64(&row, n->total - b->total);
    hta_row_put_f64(&row, b->present ? (n->present ? hta_rel_change(b->total, n->total) : -1.0)
                                     : NAN);
    hta_row_put_f64(&row, mean_of(b));
    hta_row_put_f64(&row, mean_of(n));
    hta_row_put_f64(&row, hta_rel_change(mean_of(b), mean_of(n)));
    hta_row_put_f64(&row, b->max);
    hta_row_put_f64(&row, n->max);
    return hta_row_done(&row);
}

static int join_kernel(const hta_cell *base_row, const hta_cell *new_row, void *ctx)
{
    join_ctx *j = ctx;
    const hta_cell *any = base_row ? base_row : new_row;
    const kernel_columns *c = base_row ? &j->cb : &j->cn;
    int64_t rank = j->per_rank ? any[c->rank].i : HTA_DIFF_ALL_RANKS;
    if (j->per_rank && !(hta_diff_input_has_rank(j->base, rank) &&
                         hta_diff_input_has_rank(j->new_, rank)))
        return 0;
    const char *name = any[c->name].s;
    kernel_side b = side_of(base_row, &j->cb), n = side_of(new_row, &j->cn);
    if (put_kernel_row(j, rank, name, &b, &n))
        return -1;
    if (!b.present)
        return put_set_row(j, rank, name, "new", &n);
    if (!n.present)
        return put_set_row(j, rank, name, "base", &b);
    return 0;
}

typedef struct name_order {
    const hta_table *table;
    long name;
} name_order;

static int compare_by_name(const void *x, const void *y, void *ctx)
{
    const name_order *o = ctx;
    size_t i = *(const size_t *)x, k = *(const size_t *)y;
    return strcmp(hta_table_row(o->table, i)[o->name].s, hta_table_row(o->table, k)[o->name].s);
}

static int put_sum(hta_table *sums, const hta_cell *first, const kernel_columns *c,
                   int64_t count, double total, double max)
{
    hta_row_builder row = hta_table_add_row(sums);
    hta_row_put_i64(&row, HTA_DIFF_ALL_RANKS);
    hta_row_put_str(&row, first[c->name].s);
    hta_row_put_str(&row, first[c->type].s);
    hta_row_put_i64(&row, count);
    hta_row_put_f64(&row, total);
    hta_row_put_f64(&row, max);
    return hta_row_done(&row);
}

/* One run's /kernels summed over its ranks, one row per name, into
 * scratch: the first columns of /kernels, up to max_us, so that the
 * same joins read both. */
static int sum_over_ranks(const hta_table *t, const kernel_columns *c, hta_tableset *scratch,
                          hta_table **out)
{
    const hta_table_spec sums_spec = {"_kernel_sums", hta_kernels_table.columns,
                                      HTA_KERNELS_MAX_US + 1, HTA_TABLE_SCRATCH};
    *out = NULL;
    if (!t)
        return 0;
    hta_table *sums = hta_tableset_table(scratch, &sums_spec);
    size_t *order = malloc((t->n_rows ? t->n_rows : 1) * sizeof *order);
    if (!sums || !order) {
        free(order);
        return -1;
    }
    for (size_t i = 0; i < t->n_rows; i++)
        order[i] = i;
    name_order by_name = {t, c->name};
    qsort_r(order, t->n_rows, sizeof *order, compare_by_name, &by_name);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < t->n_rows;) {
        const hta_cell *first = hta_table_row(t, order[i]);
        int64_t count = 0;
        double total = 0, max = -INFINITY;
        for (; i < t->n_rows && strcmp(hta_table_row(t, order[i])[c->name].s,
                                       first[c->name].s) == 0; i++) {
            const hta_cell *row = hta_table_row(t, order[i]);
            count += row[c->count].i;
            total += row[c->sum].f;
            max = fmax(max, row[c->max].f);
        }
        rc = put_sum(sums, first, c, count, total, max);
    }
    free(order);
    *out = sums;
    return rc;
}

/* Rows by rank, then the absolute change of the total, largest first. */
static int compare_kernel_rows(const void *x, const void *y, void *ctx)
{
    (void)ctx;
    const hta_cell *a = x, *b = y;
    if (a[HTA_DIFF_KERNELS_RANK].i != b[HTA_DIFF_KERNELS_RANK].i)
        return a[HTA_DIFF_KERNELS_RANK].i < b[HTA_DIFF_KERNELS_RANK].i ? -1 : 1;
    double ca = fabs(a[HTA_DIFF_KERNELS_CHANGE_US].f), cb = fabs(b[HTA_DIFF_KERNELS_CHANGE_US].f);
    if (ca != cb)
        return ca > cb ? -1 : 1;
    return strcmp(a[HTA_DIFF_KERNELS_NAME].s, b[HTA_DIFF_KERNELS_NAME].s);
}

/* Rows by rank, BASE's names first, then time, largest first. */
static int compare_set_rows(const void *x, const void *y, void *ctx)
{
    (void)ctx;
    const hta_cell *a = x, *b = y;
    if (a[HTA_DIFF_KERNEL_SET_RANK].i != b[HTA_DIFF_KERNEL_SET_RANK].i)
        return a[HTA_DIFF_KERNEL_SET_RANK].i < b[HTA_DIFF_KERNEL_SET_RANK].i ? -1 : 1;
    int run = strcmp(a[HTA_DIFF_KERNEL_SET_RUN].s, b[HTA_DIFF_KERNEL_SET_RUN].s);
    if (run)
        return run;
    if (a[HTA_DIFF_KERNEL_SET_TOTAL_US].f != b[HTA_DIFF_KERNEL_SET_TOTAL_US].f)
        return a[HTA_DIFF_KERNEL_SET_TOTAL_US].f > b[HTA_DIFF_KERNEL_SET_TOTAL_US].f ? -1 : 1;
    return strcmp(a[HTA_DIFF_KERNEL_SET_NAME].s, b[HTA_DIFF_KERNEL_SET_NAME].s);
}

static void sort_rows(hta_table *t, int (*cmp)(const void *, const void *, void *))
{
    if (t->n_rows > 1)
        qsort_r(t->cells, t->n_rows, t->n_columns * sizeof(hta_cell), cmp, NULL);
}

int hta_diff_kernels(const hta_diff_input *base, const hta_diff_input *new_, double min_change,
                     hta_tableset *out, hta_error *err)
{
    const char *const per_rank_keys[] = {hta_kernels_table.columns[HTA_KERNELS_RANK].name,
                                         hta_kernels_table.columns[HTA_KERNELS_NAME].name};
    const char *const all_keys[] = {per_rank_keys[1]};
    const hta_table *kb = hta_diff_table(base, &hta_kernels_table);
    const hta_table *kn = hta_diff_table(new_, &hta_kernels_table);
    join_ctx j = {.base = base, .new_ = new_, .min_change = min_change};
    j.kernels = hta_tableset_table(out, &hta_diff_kernels_table);
    j.set = hta_tableset_table(out, &hta_diff_kernel_set_table);
    if (!j.kernels || !j.set)
        return hta_fail(err, "out of memory");
    if (find_columns(kb, &j.cb, err) || find_columns(kn, &j.cn, err))
        return -1;
    hta_tableset scratch[2] = {{0}};
    hta_table *sb, *sn;
    int rc = sum_over_ranks(kb, &j.cb, &scratch[0], &sb) ||
                     sum_over_ranks(kn, &j.cn, &scratch[1], &sn)
                 ? hta_fail(err, "out of memory")
                 : 0;
    join_ctx all = j;
    err->text[0] = '\0';
    if (rc == 0)
        rc = find_columns(sb, &all.cb, err) || find_columns(sn, &all.cn, err)
                 ? -1
                 : hta_join_rows(sb, sn, all_keys, 1, join_kernel, &all, err);
    j.per_rank = 1;
    if (rc == 0)
        rc = hta_join_rows(kb, kn, per_rank_keys, 2, join_kernel, &j, err);
    if (rc && !err->text[0])
        hta_fail(err, "out of memory");
    hta_tableset_free(&scratch[0]);
    hta_tableset_free(&scratch[1]);
    sort_rows(j.kernels, compare_kernel_rows);
    sort_rows(j.set, compare_set_rows);
    return rc ? -1 : 0;
}
