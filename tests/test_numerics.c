/* test_numerics.c: the pandas/numpy-exact numerics (src/numerics/): the
 * radix sorts against a stable qsort, the run merge sort against the
 * radix sort, value counts against summarising the values themselves,
 * the bisections against a linear scan. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/bounds.h"
#include "numerics/radix_sort.h"
#include "numerics/run_merge_sort.h"
#include "numerics/stats.h"
#include "numerics/value_counts.h"
#include "unit.h"

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The radix sorts against qsort (glibc's is a stable merge sort): random
 * keys, many ties, negative values and both zeros, whose order must stay
 * the input order. */
static void test_radix_sorts_match_stable_qsort(void)
{
    enum { N = 5000 };
    static int64_t keys[N];
    static size_t order[N];
    static double values[N], expected[N];
    uint64_t state = 88172645463325252ULL;
    for (size_t i = 0; i < N; i++) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        keys[i] = (int64_t)(state % 97) * ((i & 1) ? 1 : -1000000007LL);
        values[i] = i % 7 == 0 ? ((i / 7) % 2 ? -0.0 : 0.0) : (double)keys[i] / 1000.0;
    }
    static int64_t sorted_keys[N];
    memcpy(sorted_keys, keys, sizeof keys);
    CHECK(hta_stable_argsort(sorted_keys, N, order) == 0, "argsort runs");
    int sorted = 1;
    for (size_t i = 1; i < N; i++)
        sorted &= keys[order[i - 1]] < keys[order[i]] ||
                  (keys[order[i - 1]] == keys[order[i]] && order[i - 1] < order[i]);
    for (size_t i = 0; i < N; i++)
        sorted &= sorted_keys[i] == keys[order[i]];
    CHECK(sorted, "argsort is sorted and stable, keys sorted along");
    int64_t few[] = {5, -3, 5, 0, -3};
    size_t few_order[5];
    CHECK(hta_stable_argsort(few, 5, few_order) == 0 && few_order[0] == 1 &&
              few_order[1] == 4 && few_order[2] == 3 && few_order[3] == 0 &&
              few_order[4] == 2 && few[0] == -3 && few[4] == 5,
          "short argsort is stable, keys sorted along");
    static hta_keyed pairs[N];
    for (size_t i = 0; i < N; i++)
        pairs[i] = (hta_keyed){keys[i], i};
    CHECK(hta_stable_sort_keyed(pairs, N) == 0, "keyed sort runs");
    int same = 1;
    for (size_t i = 0; i < N; i++)
        same &= pairs[i].index == order[i] && pairs[i].key == keys[order[i]];
    CHECK(same, "keyed sort = stable argsort");
    memcpy(expected, values, sizeof values);
    qsort(expected, N, sizeof *expected, compare_doubles);
    CHECK(hta_radix_sort_doubles(values, N) == 0, "radix sort runs");
    CHECK(memcmp(values, expected, sizeof values) == 0, "radix sort = stable qsort, bit for bit");
    values[3] = NAN;
    memcpy(expected, values, sizeof values);
    CHECK(hta_radix_sort_doubles(values, N) == -1 &&
              memcmp(values, expected, sizeof values) == 0,
          "NaN refused, values untouched");
}

static int same_summary(const hta_summary *a, const hta_summary *b)
{
    return a->count == b->count && memcmp(&a->mean, &b->mean, 7 * sizeof a->mean) == 0;
}

/* Value counts summarise as hta_summarize over the values, bit for bit:
 * none, one, a queue-like walk of +1/-1 steps that goes negative (the sums
 * of std's squares differ from any other order in the last bits), and a
 * spread of values far from zero. */
static void test_value_counts_summarize_like_values(void)
{
    enum { N = 20000 };
    static double values[N];
    hta_value_counts counts = {0};
    hta_summary expected, got;
    hta_summarize(values, 0, &expected);
    hta_value_counts_summarize(&counts, &got);
    CHECK(got.count == 0 && isnan(got.mean) && isnan(got.std) && isnan(got.min) &&
              isnan(got.p50) && isnan(got.max), "no values: count 0, NaN elsewhere");
    values[0] = -3;
    CHECK(hta_value_counts_add(&counts, -3) == 0, "count one");
    hta_summarize(values, 1, &expected);
    hta_value_counts_summarize(&counts, &got);
    CHECK(same_summary(&got, &expected) && isnan(got.std) && got.p75 == -3,
          "one value: std NaN, every quantile the value");
    hta_value_counts_free(&counts);
    uint64_t state = 88172645463325252ULL;
    int64_t queue = 0;
    for (size_t i = 0; i < N; i++) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        queue += i < N / 3 ? (state % 3 ? 1 : -1) : (state % 3 ? -1 : 1);
        values[i] = (double)queue;
        CHECK(hta_value_counts_add(&counts, queue) == 0, "count %lld", (long long)queue);
    }
    hta_summarize(values, N, &expected);
    hta_value_counts_summarize(&counts, &got);
    CHECK(expected.min < 0 && same_summary(&got, &expected),
          "random walk: mean %.17g/%.17g std %.17g/%.17g p25 %g/%g", got.mean, expected.mean,
          got.std, expected.std, got.p25, expected.p25);
    hta_value_counts_free(&counts);
    for (size_t i = 0; i < 7; i++) {
        values[i] = (double)(1000 + 37 * (int64_t)(i * i % 5));
        hta_value_counts_add(&counts, (int64_t)values[i]);
    }
    hta_summarize(values, 7, &expected);
    hta_value_counts_summarize(&counts, &got);
    CHECK(same_summary(&got, &expected), "sparse values: p25 %g/%g", got.p25, expected.p25);
    hta_value_counts_free(&counts);
}

/* The run merge sort gives a stable sort's order of the listing (index
 * order) whatever order the pairs come in: nearly sorted runs, reversed,
 * random, many ties, more runs than its 64 on the stack. */
static void test_run_merge_sort_orders_by_key_then_index(void)
{
    enum { N = 3000 };
    static hta_keyed listed[N], want[N], got[N], scratch[N];
    uint64_t state = 2463534242ULL;
    for (int layout = 0; layout < 3; layout++) {
        for (size_t i = 0; i < N; i++) {
            state ^= state << 13, state ^= state >> 7, state ^= state << 17;
            int64_t key = layout == 0   ? (int64_t)(i / 3) - (int64_t)(i % 50 == 0) * 40
                          : layout == 1 ? (int64_t)(N - i) / 4
                                        : (int64_t)(state % 61) - 30;
            listed[i] = (hta_keyed){key, i};
        }
        memcpy(want, listed, sizeof listed);
        CHECK(hta_stable_sort_keyed(want, N) == 0, "radix sort runs");
        /* Handed over in another order: the listing's halves swapped. */
        memcpy(got, listed + N / 2, (N - N / 2) * sizeof *got);
        memcpy(got + (N - N / 2), listed, (N / 2) * sizeof *got);
        CHECK(hta_run_merge_sort_keyed(got, N, scratch) == 0, "merge sort runs");
        int same = 1;
        for (size_t i = 0; i < N; i++)
            same &= got[i].key == want[i].key && got[i].index == want[i].index;
        CHECK(same, "layout %d: run merge sort = stable sort of the listing", layout);
    }
    hta_keyed one = {7, 0};
    CHECK(hta_run_merge_sort_keyed(&one, 1, scratch) == 0 && one.key == 7, "one pair");
}

typedef struct window {
    int32_t tag; /* puts the key at a nonzero offset */
    int64_t start, end;
} window;

/* The first of v[0..n) at least key (after: past key), by a scan. */
static size_t scan_bound(const window *v, size_t n, int64_t key, int after)
{
    size_t i = 0;
    while (i < n && (after ? v[i].end <= key : v[i].end < key))
        i++;
    return i;
}

/* HTA_LOWER_BOUND and HTA_UPPER_BOUND against a linear scan, on arrays
 * of 0 to 40 elements with runs of equal keys, negative keys, and keys
 * below, between, on and above the values; hta_lower_bound_i64 on the
 * same values. */
static void test_bounds_match_a_scan(void)
{
    window v[40];
    int64_t plain[40];
    uint64_t state = 2463534242ULL;
    for (size_t n = 0; n <= 40; n++) {
        int64_t at = -50;
        for (size_t i = 0; i < n; i++) {
            state ^= state << 13, state ^= state >> 7, state ^= state << 17;
            at += (int64_t)(state % 4); /* steps of 0 repeat a key */
            v[i] = (window){(int32_t)i, -at, at};
            plain[i] = at;
        }
        for (int64_t key = -52; key <= at + 2; key++) {
            size_t lower = HTA_LOWER_BOUND(v, n, end, key);
            size_t upper = HTA_UPPER_BOUND(v, n, end, key);
            CHECK(lower == scan_bound(v, n, key, 0), "lower bound of %lld in %zu: %zu",
                  (long long)key, n, lower);
            CHECK(upper == scan_bound(v, n, key, 1), "upper bound of %lld in %zu: %zu",
                  (long long)key, n, upper);
            CHECK(hta_lower_bound_i64(plain, n, key) == lower, "i64 lower bound of %lld in %zu",
                  (long long)key, n);
        }
    }
    CHECK(HTA_LOWER_BOUND((window *)NULL, 0, start, 0) == 0, "empty array");
}

int main(int argc, char **argv)
{
    test_bounds_match_a_scan();
    test_radix_sorts_match_stable_qsort();
    test_run_merge_sort_orders_by_key_then_index();
    test_value_counts_summarize_like_values();
    (void)argc;
    (void)argv;
    return unit_finish();
}
