/* activity_categories.c: where a rank's recorded time goes by activity
 * category, CUPTI-notebook style (definitions section 4, "Activity
 * categories"; HTA has no equivalent).
 *
 * Every kept event of the rank counts, CPU and GPU alike, under its "cat"
 * string (kernel, cuda_runtime, cpu_op, ...).  Per category: count, total
 * and share of the total over all categories, max, min, and how heavy the
 * tail is: the fraction of the category's total held by its top 1%, 5% and
 * 10% longest events and their mean.  The top-k count is floor(n * p / 100)
 * in integer arithmetic, so it is exact where the notebook's int(n * 0.01)
 * can land one below an integer; when it is 0 the share is 0 and the mean
 * NaN (shares of a zero total are NaN too).  Durations are bucketed by
 * category (a counting sort on the small category id); in each bucket a
 * selection moves the longest 10% to the front, then the longest 5% within
 * those, then the longest 1%: linear time, where sorting every category
 * cost more than all the other analyses together.  Rows come out in
 * category-name order so that the table does not depend on file order. */
#include "hta/analysis.h"
#include "hta/large_alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const hta_column COLUMNS[] = {
    {"rank", HTA_COL_I64},
    {"category", HTA_COL_STR},
    {"count", HTA_COL_I64},
    {"total_us", HTA_COL_F64},
    {"share", HTA_COL_F64},
    {"max_us", HTA_COL_F64},
    {"min_us", HTA_COL_F64},
    {"top1_share", HTA_COL_F64},
    {"top5_share", HTA_COL_F64},
    {"top10_share", HTA_COL_F64},
    {"top1_mean_us", HTA_COL_F64},
    {"top5_mean_us", HTA_COL_F64},
    {"top10_mean_us", HTA_COL_F64},
};

static const int TAIL_PERCENTS[] = {1, 5, 10};
#define N_TAILS (sizeof TAIL_PERCENTS / sizeof TAIL_PERCENTS[0])

/* Durations of every event grouped by category: category c owns
 * durations[first[c] .. first[c + 1]). */
typedef struct category_durations {
    int64_t *durations;
    size_t *first;             /* n_categories + 1 offsets */
    size_t n_categories;
} category_durations;

static void swap(int64_t *a, int64_t *b)
{
    int64_t t = *a;
    *a = *b;
    *b = t;
}

/* Reorders d so that d[0 .. k) are its k largest values (in no order):
 * quickselect with a median-of-three pivot. */
static void select_longest(int64_t *d, size_t n, size_t k)
{
    size_t lo = 0, hi = n;     /* the boundary k lies in [lo, hi) */
    while (k > lo && k < hi && hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (d[mid] > d[lo]) swap(&d[mid], &d[lo]);
        if (d[hi - 1] > d[lo]) swap(&d[hi - 1], &d[lo]);
        if (d[mid] > d[hi - 1]) swap(&d[mid], &d[hi - 1]);
        int64_t pivot = d[hi - 1];
        /* Three-way partition: larger | equal | smaller than the pivot. */
        size_t gt = lo, i = lo, lt = hi;
        while (i < lt) {
            if (d[i] > pivot)
                swap(&d[gt++], &d[i++]);
            else if (d[i] < pivot)
                swap(&d[i], &d[--lt]);
            else
                i++;
        }
        if (k <= gt)
            hi = gt;
        else if (k >= lt)
            lo = lt;
        else
            return;            /* the boundary falls among equal values */
    }
}

static int group_by_category(const hta_trace *t, category_durations *g)
{
    size_t n_cat = t->categories.count;
    g->n_categories = n_cat;
    g->durations = hta_large_malloc((t->n_events ? t->n_events : 1) * sizeof *g->durations);
    g->first = calloc(n_cat + 1, sizeof *g->first);
    size_t *fill = calloc(n_cat + 1, sizeof *fill);
    if (!g->durations || !g->first || !fill) {
        free(fill);
        return -1;
    }
    for (size_t i = 0; i < t->n_events; i++)
        g->first[t->events[i].cat + 1]++;
    for (size_t c = 0; c < n_cat; c++)
        g->first[c + 1] += g->first[c];
    memcpy(fill, g->first, (n_cat + 1) * sizeof *fill);
    for (size_t i = 0; i < t->n_events; i++)
        g->durations[fill[t->events[i].cat]++] = t->events[i].dur_ns;
    free(fill);
    return 0;
}

static int64_t sum_durations(const int64_t *d, size_t n)
{
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += d[i];
    return sum;
}

/* Category ids in name order; the comparison needs the trace's names. */
typedef struct named_id {
    const char *name;
    uint32_t id;
} named_id;

static int compare_names(const void *a, const void *b)
{
    return strcmp(((const named_id *)a)->name, ((const named_id *)b)->name);
}

static named_id *categories_by_name(const hta_trace *t)
{
    named_id *order = malloc((t->categories.count ? t->categories.count : 1) * sizeof *order);
    if (!order)
        return NULL;
    for (uint32_t c = 0; c < t->categories.count; c++)
        order[c] = (named_id){hta_strtab_get(&t->categories, c), c};
    qsort(order, t->categories.count, sizeof *order, compare_names);
    return order;
}

static double ratio(int64_t part, int64_t whole)
{
    return whole != 0 ? (double)part / (double)whole : NAN;
}

static void min_max(const int64_t *d, size_t n, int64_t *min, int64_t *max)
{
    *min = *max = d[0];
    for (size_t i = 1; i < n; i++) {
        if (d[i] < *min)
            *min = d[i];
        if (d[i] > *max)
            *max = d[i];
    }
}

/* One row from the category's n >= 1 durations, which it reorders. */
static int add_category_row(hta_table *table, int64_t rank_key, const char *name,
                            int64_t *d, size_t n, int64_t grand_total)
{
    int64_t total = sum_durations(d, n), min, max;
    min_max(d, n, &min, &max);
    size_t top_n[N_TAILS];
    for (size_t k = 0; k < N_TAILS; k++)
        top_n[k] = n * (size_t)TAIL_PERCENTS[k] / 100;
    /* Widest tail first, each narrower one selected inside the last. */
    for (size_t k = N_TAILS, within = n; k-- > 0; within = top_n[k])
        select_longest(d, within, top_n[k]);
    hta_row row = hta_table_add_row(table);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_str(&row, name);
    hta_row_put_i64(&row, (int64_t)n);
    hta_row_put_f64(&row, hta_ns_to_us(total));
    hta_row_put_f64(&row, ratio(total, grand_total));
    hta_row_put_f64(&row, hta_ns_to_us(max));
    hta_row_put_f64(&row, hta_ns_to_us(min));
    int64_t top_sum[N_TAILS];
    for (size_t k = 0; k < N_TAILS; k++) {
        top_sum[k] = sum_durations(d, top_n[k]);
        hta_row_put_f64(&row, top_n[k] ? ratio(top_sum[k], total) : 0.0);
    }
    for (size_t k = 0; k < N_TAILS; k++)
        hta_row_put_f64(&row, top_n[k] ? hta_ns_to_us(top_sum[k]) / (double)top_n[k] : NAN);
    return hta_row_done(&row);
}

static int add_rows(const hta_rank_view *v, const category_durations *g,
                    const named_id *order, hta_tableset *out)
{
    hta_table *table = HTA_TABLE(out, "activity_categories", COLUMNS);
    if (!table)
        return -1;
    int64_t grand_total = sum_durations(g->durations, g->first[g->n_categories]);
    for (size_t i = 0; i < g->n_categories; i++) {
        size_t c = order[i].id, n = g->first[c + 1] - g->first[c];
        /* The step filter may have removed every event of a category. */
        if (n && add_category_row(table, v->rank_key, order[i].name,
                                  g->durations + g->first[c], n, grand_total))
            return -1;
    }
    return 0;
}

int hta_activity_categories(const hta_rank_view *v, const hta_options *opt,
                            hta_tableset *out, hta_error *err)
{
    (void)opt;
    if (v->trace->n_events == 0)
        return 0;
    category_durations g = {0};
    named_id *order = NULL;
    int rc = group_by_category(v->trace, &g);
    if (rc == 0 && !(order = categories_by_name(v->trace)))
        rc = -1;
    if (rc == 0)
        rc = add_rows(v, &g, order, out);
    free(order);
    free(g.durations);
    free(g.first);
    return rc ? hta_fail(err, "out of memory in the activity categories") : 0;
}
