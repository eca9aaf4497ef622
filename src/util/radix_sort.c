/* radix_sort.c: stable LSD radix sorts (see hta/radix_sort.h).
 *
 * One pass over the keys counts every byte position at once; a byte
 * position where all keys share one value would move nothing and is
 * skipped; each remaining byte, lowest first, is one stable scatter
 * between two buffers.  Keys are unsigned: int64 keys are offset by their
 * minimum, doubles mapped to integers that order as the doubles do. */
#include "hta/radix_sort.h"

#include <stdlib.h>
#include <string.h>

#define KEY_BYTES 8
#define BUCKETS 256
#define SMALL_SORT 32          /* below this, insertion sort is cheaper */

typedef struct byte_counts {
    size_t at[KEY_BYTES][BUCKETS];
} byte_counts;

static void count_key(byte_counts *c, uint64_t key)
{
    for (int b = 0; b < KEY_BYTES; b++)
        c->at[b][(key >> (8 * b)) & 0xff]++;
}

/* The byte positions where keys differ, lowest first, with their counts
 * turned into each bucket's first slot.  any_key is one of the n keys. */
static int plan_passes(byte_counts *c, size_t n, uint64_t any_key, int *passes)
{
    int n_passes = 0;
    for (int b = 0; b < KEY_BYTES; b++) {
        if (c->at[b][(any_key >> (8 * b)) & 0xff] == n)
            continue;
        size_t first = 0;
        for (int d = 0; d < BUCKETS; d++) {
            size_t count = c->at[b][d];
            c->at[b][d] = first;
            first += count;
        }
        passes[n_passes++] = b;
    }
    return n_passes;
}

/* ---- argsort of int64 keys ---------------------------------------------- */

static void insertion_argsort(const int64_t *keys, size_t n, size_t *order)
{
    for (size_t i = 1; i < n; i++) {
        size_t index = order[i], j = i;
        for (; j > 0 && keys[order[j - 1]] > keys[index]; j--)
            order[j] = order[j - 1];
        order[j] = index;
    }
}

static void scatter_pairs(const uint64_t *key, const size_t *index, uint64_t *key_out,
                          size_t *index_out, size_t n, size_t *first, int byte)
{
    for (size_t i = 0; i < n; i++) {
        size_t slot = first[(key[i] >> (8 * byte)) & 0xff]++;
        key_out[slot] = key[i];
        index_out[slot] = index[i];
    }
}

int hta_stable_argsort(const int64_t *keys, size_t n, size_t *order)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    if (n < SMALL_SORT) {
        insertion_argsort(keys, n, order);
        return 0;
    }
    uint64_t *key = malloc(n * sizeof *key), *key_tmp = malloc(n * sizeof *key_tmp);
    size_t *index_tmp = malloc(n * sizeof *index_tmp);
    byte_counts *counts = calloc(1, sizeof *counts);
    int rc = key && key_tmp && index_tmp && counts ? 0 : -1;
    if (rc == 0) {
        int64_t min = keys[0];
        for (size_t i = 1; i < n; i++)
            min = keys[i] < min ? keys[i] : min;
        for (size_t i = 0; i < n; i++) {
            key[i] = (uint64_t)keys[i] - (uint64_t)min; /* order-preserving, no overflow */
            count_key(counts, key[i]);
        }
        int passes[KEY_BYTES];
        int n_passes = plan_passes(counts, n, key[0], passes);
        uint64_t *key_from = key, *key_to = key_tmp;
        size_t *index_from = order, *index_to = index_tmp;
        for (int p = 0; p < n_passes; p++) {
            scatter_pairs(key_from, index_from, key_to, index_to, n, counts->at[passes[p]],
                          passes[p]);
            uint64_t *k = key_from;
            key_from = key_to, key_to = k;
            size_t *ix = index_from;
            index_from = index_to, index_to = ix;
        }
        if (index_from != order)
            memcpy(order, index_from, n * sizeof *order);
    }
    free(key);
    free(key_tmp);
    free(index_tmp);
    free(counts);
    return rc;
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

static void scatter_doubles(const double *v, double *out, size_t n, size_t *first, int byte)
{
    for (size_t i = 0; i < n; i++)
        out[first[(double_key(v[i]) >> (8 * byte)) & 0xff]++] = v[i];
}

int hta_radix_sort_doubles(double *values, size_t n)
{
    if (n < 2)
        return 0;
    byte_counts *counts = calloc(1, sizeof *counts);
    double *tmp = counts ? malloc(n * sizeof *tmp) : NULL;
    if (!tmp) {
        free(counts);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (values[i] != values[i]) { /* NaN */
            free(counts);
            free(tmp);
            return -1;
        }
        count_key(counts, double_key(values[i]));
    }
    int passes[KEY_BYTES];
    int n_passes = plan_passes(counts, n, double_key(values[0]), passes);
    double *from = values, *to = tmp;
    for (int p = 0; p < n_passes; p++) {
        scatter_doubles(from, to, n, counts->at[passes[p]], passes[p]);
        double *t = from;
        from = to, to = t;
    }
    if (from != values)
        memcpy(values, from, n * sizeof *values);
    free(counts);
    free(tmp);
    return 0;
}
