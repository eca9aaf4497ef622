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
 * NaN (shares of a zero total are NaN too).
 *
 * Only each category's longest 10% are ever held, not a copy of every
 * duration (megabytes on a large trace).  A first pass counts, sums and bounds
 * each category and counts its durations by length class (powers of two).
 * The count fixes k, how many longest durations the category keeps, and
 * the classes tell which of them holds the k-th longest: the boundary
 * class.  The second pass keeps every duration of a longer class outright,
 * the longest of the boundary class in a min-heap filling the remaining
 * slots, and turns every shorter event away with one comparison.  The
 * categories' k slots lie back to back in one array, a tenth of the events
 * at most.  (A min-heap open to every event cost a third more instructions
 * than the copy: in a generated trace's order about 2k durations entered it
 * and each sank some log2(k) levels.  Now only boundary-class durations
 * can, the worst case being durations that grow through that class.)  The
 * longest 5% are then selected inside the kept 10% and the longest 1%
 * inside those, in linear time.  The sums are exact integers, so the values
 * do not depend on the order events are met in.  Rows come out in
 * category-name order so that the table does not depend on file order. */
#include "analysis/activity_categories.h"

#include "util/large_alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const hta_column COLUMNS[HTA_ACTIVITY_CATEGORIES_N_COLUMNS] = {
    [HTA_ACTIVITY_CATEGORIES_RANK] = {"rank", HTA_COL_I64},
    [HTA_ACTIVITY_CATEGORIES_CATEGORY] = {"category", HTA_COL_STR},
    [HTA_ACTIVITY_CATEGORIES_COUNT] = {"count", HTA_COL_I64},
    [HTA_ACTIVITY_CATEGORIES_TOTAL_US] = {"total_us", HTA_COL_F64},
    [HTA_ACTIVITY_CATEGORIES_SHARE] = {"share", HTA_COL_F64},
    [HTA_ACTIVITY_CATEGORIES_MAX_US] = {"max_us", HTA_COL_F64},
    [HTA_ACTIVITY_CATEGORIES_MIN_US] = {"min_us", HTA_COL_F64},
    [HTA_ACTIVITY_CATEGORIES_TOP1_SHARE] = {"top1_share", HTA_COL_F64},
    [HTA_ACTIVITY_CATEGORIES_TOP5_SHARE] = {"top5_share", HTA_COL_F64},
    [HTA_ACTIVITY_CATEGORIES_TOP10_SHARE] = {"top10_share", HTA_COL_F64},
    [HTA_ACTIVITY_CATEGORIES_TOP1_MEAN_US] = {"top1_mean_us", HTA_COL_F64},
    [HTA_ACTIVITY_CATEGORIES_TOP5_MEAN_US] = {"top5_mean_us", HTA_COL_F64},
    [HTA_ACTIVITY_CATEGORIES_TOP10_MEAN_US] = {"top10_mean_us", HTA_COL_F64},
};
const hta_table_spec hta_activity_categories_table = {
    "activity_categories", COLUMNS, HTA_ACTIVITY_CATEGORIES_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

static const int TAIL_PERCENTS[] = {1, 5, 10};
#define N_TAILS (sizeof TAIL_PERCENTS / sizeof TAIL_PERCENTS[0])
#define WIDEST_TAIL (N_TAILS - 1)

/* Length classes: class b > 0 holds the durations in [2^b, 2^(b+1)) and
 * class 0 all the others up to 1, the negative durations --round-like-hta
 * gives sub-microsecond events included, so that a class never decreases
 * with the duration. */
#define N_LENGTH_CLASSES 64

static int length_class(int64_t d)
{
    uint64_t at_least_1 = (uint64_t)(d > 0 ? d : 0) | 1;
    return __builtin_clzll(at_least_1) ^ 63; /* 63 - clz, one bsr */
}

/* A category's summary with its count of each length class (first pass)
 * and its k longest durations (second pass), in longest[0, k): first the
 * durations of classes longer than the boundary, then a min-heap of the
 * boundary class's longest, filled in arrival order and ordered once
 * full. */
typedef struct category {
    /* Only a longer duration enters: the longest duration below the
     * boundary class until the heap is full, then the heap's shortest;
     * INT64_MAX when k is 0. */
    int64_t entry;
    int64_t total, min, max;
    size_t n;
    size_t by_length[N_LENGTH_CLASSES];
    int boundary;
    int64_t *longest;
    size_t n_longer;
    int64_t *heap;
    size_t n_heap, cap_heap;
} category;

static size_t tail_size(size_t n, size_t k)
{
    return n * (size_t)TAIL_PERCENTS[k] / 100;
}

/* Counts, sums, bounds and classes every category's durations; NULL when
 * out of memory. */
static category *summarize(const hta_trace *t)
{
    category *cats = calloc(t->categories.count ? t->categories.count : 1, sizeof *cats);
    if (!cats)
        return NULL;
    for (size_t c = 0; c < t->categories.count; c++) {
        cats[c].min = INT64_MAX;
        cats[c].max = INT64_MIN;
    }
    for (size_t i = 0; i < t->n_events; i++) {
        category *c = &cats[t->events[i].cat];
        int64_t d = t->events[i].dur_ns;
        if (d < c->min)
            c->min = d;
        if (d > c->max)
            c->max = d;
        c->total += d;
        c->by_length[length_class(d)]++;
    }
    for (size_t c = 0; c < t->categories.count; c++)
        for (int b = 0; b < N_LENGTH_CLASSES; b++)
            cats[c].n += cats[c].by_length[b];
    return cats;
}

/* Prepares the second pass of a category whose k longest go to kept[0, k):
 * its boundary is the length class of the k-th longest duration. */
static void plan_longest(category *c, int64_t *kept, size_t k)
{
    c->longest = kept;
    if (k == 0) {
        c->entry = INT64_MAX;
        return;
    }
    size_t longer = 0;
    int b = N_LENGTH_CLASSES - 1;
    for (; longer + c->by_length[b] < k; b--)
        longer += c->by_length[b];
    c->boundary = b;
    c->heap = kept + longer;
    c->cap_heap = k - longer;
    /* Every duration of class 0 must enter while the heap fills; none is
     * INT64_MIN: the reader's are 0 to 1e15 ns, and rounding like HTA
     * takes at most 1 us off. */
    c->entry = b > 0 ? (int64_t)((UINT64_C(1) << b) - 1) : INT64_MIN;
}

/* Gives every category its slice of one array sized for its widest tail;
 * NULL when out of memory. */
static int64_t *reserve_longest(category *cats, size_t n_cat)
{
    size_t kept = 0;
    for (size_t c = 0; c < n_cat; c++)
        kept += tail_size(cats[c].n, WIDEST_TAIL);
    int64_t *all = hta_large_malloc((kept ? kept : 1) * sizeof *all);
    if (!all)
        return NULL;
    for (size_t c = 0, at = 0; c < n_cat; c++) {
        size_t k = tail_size(cats[c].n, WIDEST_TAIL);
        plan_longest(&cats[c], all + at, k);
        at += k;
    }
    return all;
}

/* Puts x at h[top] of the n-element min-heap h whose subtrees below top are
 * heaps.  Bottom-up: the hole walks down the shorter children to a leaf,
 * one comparison a level, then x climbs back only as far as it must; an
 * entering duration usually belongs near the leaves, where a top-down sift
 * would compare twice a level all the way down. */
static void sift_down(int64_t *h, size_t n, size_t top, int64_t x)
{
    size_t i = top, child;
    for (; (child = 2 * i + 1) + 1 < n; i = child) {
        child += h[child + 1] < h[child];
        h[i] = h[child];
    }
    if (child < n) {
        h[i] = h[child];
        i = child;
    }
    for (size_t parent; i > top && x < h[parent = (i - 1) / 2]; i = parent)
        h[i] = h[parent];
    h[i] = x;
}

/* Keeps d, longer than c->entry, in place of the heap's shortest once the
 * heap is full. */
static void keep_longer(category *c, int64_t d)
{
    if (length_class(d) > c->boundary) {
        c->longest[c->n_longer++] = d;
    } else if (c->n_heap < c->cap_heap) {
        c->heap[c->n_heap++] = d;
        if (c->n_heap < c->cap_heap)
            return;
        /* Full: order it as a heap once rather than on every arrival. */
        for (size_t i = c->n_heap / 2; i-- > 0;)
            sift_down(c->heap, c->n_heap, i, c->heap[i]);
        c->entry = c->heap[0];
    } else {
        sift_down(c->heap, c->n_heap, 0, d);
        c->entry = c->heap[0];
    }
}

static void keep_longest(const hta_trace *t, category *cats)
{
    for (size_t i = 0; i < t->n_events; i++) {
        category *c = &cats[t->events[i].cat];
        if (t->events[i].dur_ns > c->entry)
            keep_longer(c, t->events[i].dur_ns);
    }
}

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

/* One row from a category of n >= 1 events, whose kept durations it
 * reorders. */
static int add_category_row(hta_table *table, int64_t rank_key, const char *name,
                            category *c, int64_t grand_total)
{
    size_t top_n[N_TAILS];
    for (size_t k = 0; k < N_TAILS; k++)
        top_n[k] = tail_size(c->n, k);
    /* Each narrower tail is selected inside the next wider one. */
    for (size_t k = WIDEST_TAIL; k-- > 0;)
        select_longest(c->longest, top_n[k + 1], top_n[k]);
    hta_row_builder row = hta_table_add_row(table);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_str(&row, name);
    hta_row_put_i64(&row, (int64_t)c->n);
    hta_row_put_f64(&row, hta_ns_to_us(c->total));
    hta_row_put_f64(&row, ratio(c->total, grand_total));
    hta_row_put_f64(&row, hta_ns_to_us(c->max));
    hta_row_put_f64(&row, hta_ns_to_us(c->min));
    int64_t top_sum[N_TAILS];
    for (size_t k = 0; k < N_TAILS; k++) {
        top_sum[k] = sum_durations(c->longest, top_n[k]);
        hta_row_put_f64(&row, top_n[k] ? ratio(top_sum[k], c->total) : 0.0);
    }
    for (size_t k = 0; k < N_TAILS; k++)
        hta_row_put_f64(&row, top_n[k] ? hta_ns_to_us(top_sum[k]) / (double)top_n[k] : NAN);
    return hta_row_done(&row);
}

static int add_rows(const hta_rank_view *v, category *cats, size_t n_cat,
                    const named_id *order, hta_tableset *out)
{
    hta_table *table = hta_tableset_table(out, &hta_activity_categories_table);
    if (!table)
        return -1;
    int64_t grand_total = 0;
    for (size_t c = 0; c < n_cat; c++)
        grand_total += cats[c].total;
    for (size_t i = 0; i < n_cat; i++) {
        category *c = &cats[order[i].id];
        /* The step filter may have removed every event of a category. */
        if (c->n && add_category_row(table, v->rank_key, order[i].name, c, grand_total))
            return -1;
    }
    return 0;
}

int hta_activity_categories(const hta_rank_view *v, hta_tableset *out, hta_error *err)
{
    const hta_trace *t = v->trace;
    if (t->n_events == 0)
        return 0;
    size_t n_cat = t->categories.count;
    category *cats = summarize(t);
    int64_t *longest = NULL;
    named_id *order = NULL;
    int rc = cats && (longest = reserve_longest(cats, n_cat)) ? 0 : -1;
    if (rc == 0) {
        keep_longest(t, cats);
        if (!(order = categories_by_name(t)))
            rc = -1;
    }
    if (rc == 0)
        rc = add_rows(v, cats, n_cat, order, out);
    free(order);
    free(longest);
    free(cats);
    return rc ? hta_fail(err, "out of memory in the activity categories") : 0;
}
