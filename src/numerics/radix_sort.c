/* radix_sort.c: stable LSD radix sorts (see numerics/radix_sort.h).
 *
 * A first pass over the keys finds the bits on which they differ; a byte
 * position where all keys agree would move nothing and is skipped (the
 * high bytes of one trace's timestamps, the low bytes of small integers
 * stored as doubles).  A second pass counts the remaining bytes, and each
 * of them, lowest first, is one stable scatter between two buffers.  Keys
 * are unsigned: int64 keys with the sign bit flipped, doubles mapped to
 * integers that order as the doubles do. */
#include "numerics/argsort.h"
#include "numerics/radix_sort.h"
#include "util/large_alloc.h"

#include <stdlib.h>
#include <string.h>

#define KEY_BYTES 8
#define BUCKETS 256
#define SMALL_SORT 32          /* below this, insertion sort is cheaper */

/* The byte positions to sort on, lowest first, and per position the
 * count of each byte value, then the first slot of each. */
typedef struct radix_plan {
    int n_passes;
    int byte[KEY_BYTES];
    size_t slot[KEY_BYTES][BUCKETS];
} radix_plan;

static unsigned digit(uint64_t key, int byte)
{
    return (unsigned)(key >> (8 * byte)) & 0xff;
}

/* A plan for keys whose differing bits are set in differ; NULL when out
 * of memory. */
static radix_plan *plan_new(uint64_t differ)
{
    radix_plan *p = malloc(sizeof *p);
    if (!p)
        return NULL;
    p->n_passes = 0;
    for (int b = 0; b < KEY_BYTES; b++)
        if (digit(differ, b))
            p->byte[p->n_passes++] = b;
    memset(p->slot, 0, (size_t)p->n_passes * sizeof p->slot[0]);
    return p;
}

static void plan_count(radix_plan *p, uint64_t key)
{
    for (int i = 0; i < p->n_passes; i++)
        p->slot[i][digit(key, p->byte[i])]++;
}

/* Turns the counts into each bucket's first slot. */
static void plan_slots(radix_plan *p)
{
    for (int i = 0; i < p->n_passes; i++) {
        size_t first = 0;
        for (int d = 0; d < BUCKETS; d++) {
            size_t count = p->slot[i][d];
            p->slot[i][d] = first;
            first += count;
        }
    }
}

/* Sorts n elements by the plan's bytes, one stable scatter between data
 * and tmp per byte; the result ends in data. */
typedef void (*scatter_fn)(const void *from, void *to, size_t n, size_t *slot, int byte);

static void run_passes(radix_plan *p, void *data, void *tmp, size_t n, size_t size,
                       scatter_fn scatter)
{
    void *from = data, *to = tmp;
    for (int i = 0; i < p->n_passes; i++) {
        scatter(from, to, n, p->slot[i], p->byte[i]);
        void *t = from;
        from = to, to = t;
    }
    if (from != data)
        memcpy(data, from, n * size);
}

/* ---- argsort of int64 keys ---------------------------------------------- */

static void insertion_argsort(int64_t *keys, size_t n, size_t *order)
{
    for (size_t i = 1; i < n; i++) {
        int64_t key = keys[i];
        size_t j = i;
        for (; j > 0 && keys[j - 1] > key; j--) {
            keys[j] = keys[j - 1];
            order[j] = order[j - 1];
        }
        keys[j] = key;
        order[j] = i;
    }
}

static void scatter_pairs(const uint64_t *key, const size_t *index, uint64_t *key_out,
                          size_t *index_out, size_t n, size_t *slot, int byte)
{
    for (size_t i = 0; i < n; i++) {
        size_t to = slot[digit(key[i], byte)]++;
        key_out[to] = key[i];
        index_out[to] = index[i];
    }
}

/* Sorts key[] carrying order[] along, both back in place at the end;
 * key_tmp and index_tmp hold n each. */
static void radix_pairs(radix_plan *p, uint64_t *key, uint64_t *key_tmp, size_t *order,
                        size_t *index_tmp, size_t n)
{
    uint64_t *k_from = key, *k_to = key_tmp;
    size_t *i_from = order, *i_to = index_tmp;
    for (int i = 0; i < p->n_passes; i++) {
        scatter_pairs(k_from, i_from, k_to, i_to, n, p->slot[i], p->byte[i]);
        uint64_t *k = k_from;
        k_from = k_to, k_to = k;
        size_t *ix = i_from;
        i_from = i_to, i_to = ix;
    }
    if (k_from != key) {
        memcpy(key, k_from, n * sizeof *key);
        memcpy(order, i_from, n * sizeof *order);
    }
}

#define SIGN_BIT (UINT64_C(1) << 63)

static int is_sorted(const int64_t *keys, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (keys[i] < keys[i - 1])
            return 0;
    return 1;
}

int hta_stable_argsort(int64_t *keys, size_t n, size_t *order)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    /* Often so: a stream's events, launches of one thread, in trace order. */
    if (is_sorted(keys, n))
        return 0;
    if (n < SMALL_SORT) {
        insertion_argsort(keys, n, order);
        return 0;
    }
    uint64_t *key_tmp = hta_large_malloc(n * sizeof *key_tmp);
    size_t *index_tmp = hta_large_malloc(n * sizeof *index_tmp);
    radix_plan *plan = NULL;
    /* The keys are sorted in place as unsigned integers with the sign bit
     * flipped, which order as the signed values do. */
    uint64_t *key = (uint64_t *)keys;
    if (key_tmp && index_tmp) {
        uint64_t differ = 0;
        for (size_t i = 0; i < n; i++)
            differ |= key[i] ^ key[0];
        plan = plan_new(differ);
    }
    if (plan) {
        for (size_t i = 0; i < n; i++) {
            key[i] ^= SIGN_BIT;
            plan_count(plan, key[i]);
        }
        plan_slots(plan);
        radix_pairs(plan, key, key_tmp, order, index_tmp, n);
        for (size_t i = 0; i < n; i++)
            key[i] ^= SIGN_BIT;
    }
    int rc = plan ? 0 : -1;
    free(key_tmp);
    free(index_tmp);
    free(plan);
    return rc;
}

/* ---- (key, index) pairs ------------------------------------------------- */

static uint64_t keyed_digit_key(const hta_keyed *v)
{
    return (uint64_t)v->key ^ SIGN_BIT;
}

static int is_sorted_keyed(const hta_keyed *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (v[i].key < v[i - 1].key)
            return 0;
    return 1;
}

static void scatter_keyed(const void *from, void *to, size_t n, size_t *slot, int byte)
{
    const hta_keyed *in = from;
    hta_keyed *out = to;
    for (size_t i = 0; i < n; i++)
        out[slot[digit(keyed_digit_key(&in[i]), byte)]++] = in[i];
}

int hta_stable_sort_keyed_using(hta_keyed *v, size_t n, hta_keyed *scratch)
{
    if (n < 2 || is_sorted_keyed(v, n))
        return 0;
    uint64_t differ = 0;
    for (size_t i = 0; i < n; i++)
        differ |= keyed_digit_key(&v[i]) ^ keyed_digit_key(&v[0]);
    radix_plan *plan = plan_new(differ);
    hta_keyed *tmp = scratch ? scratch : hta_large_malloc(n * sizeof *tmp);
    if (!plan || !tmp) {
        free(plan);
        if (tmp != scratch)
            free(tmp);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        plan_count(plan, keyed_digit_key(&v[i]));
    plan_slots(plan);
    run_passes(plan, v, tmp, n, sizeof *v, scatter_keyed);
    free(plan);
    if (tmp != scratch)
        free(tmp);
    return 0;
}

int hta_stable_sort_keyed(hta_keyed *v, size_t n)
{
    return hta_stable_sort_keyed_using(v, n, NULL);
}

/* ---- doubles ------------------------------------------------------------ */

/* An unsigned key ordering as the double does, -0.0 as 0.0: negative
 * values flip all bits (larger magnitude, smaller key), others set the
 * sign bit. */
static uint64_t double_key(double x)
{
    uint64_t bits;
    if (x == 0)
        x = 0.0;
    memcpy(&bits, &x, sizeof bits);
    return bits >> 63 ? ~bits : bits | (UINT64_C(1) << 63);
}

static void scatter_doubles(const void *from, void *to, size_t n, size_t *slot, int byte)
{
    const double *v = from;
    double *out = to;
    for (size_t i = 0; i < n; i++)
        out[slot[digit(double_key(v[i]), byte)]++] = v[i];
}

/* The plan for values, or NULL when one is NaN or out of memory. */
static radix_plan *plan_doubles(const double *values, size_t n)
{
    uint64_t first = double_key(values[0]), differ = 0;
    for (size_t i = 0; i < n; i++) {
        if (values[i] != values[i])
            return NULL;
        differ |= double_key(values[i]) ^ first;
    }
    radix_plan *plan = plan_new(differ);
    if (!plan)
        return NULL;
    for (size_t i = 0; i < n; i++)
        plan_count(plan, double_key(values[i]));
    plan_slots(plan);
    return plan;
}

int hta_radix_sort_doubles(double *values, size_t n)
{
    if (n < 2)
        return 0;
    radix_plan *plan = plan_doubles(values, n);
    double *tmp = plan ? hta_large_malloc(n * sizeof *tmp) : NULL;
    if (!tmp) {
        free(plan);
        return -1;
    }
    run_passes(plan, values, tmp, n, sizeof *values, scatter_doubles);
    free(plan);
    free(tmp);
    return 0;
}
