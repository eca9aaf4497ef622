/* argsort.c: the order numpy's argsort(kind="quicksort") gives, exactly
 * (see numerics/argsort.h).
 *
 * HTA sorts its time series with pandas' sort_values, whose default is
 * numpy's introsort: not stable, so among equal timestamps the order
 * depends on the input order and on the algorithm's swaps.  The running
 * sums HTA then reports (queue length, memory bandwidth) take a different
 * value at every such tie, so reproducing HTA's numbers needs the very same
 * permutation.  This is numpy 1.24's aquicksort (the numpy HTA's expected
 * values were computed with): median-of-3 quicksort down to partitions of
 * 16, insertion sort below, heapsort past a depth limit of 2 log2(n).
 *
 * numpy moves indices and reads each key through its index; this moves
 * (key, index) pairs, which makes the same comparisons and the same swaps,
 * hence the same permutation, without a cache miss per comparison once
 * the array outgrows the cache. */
#include "numerics/argsort.h"

#include "util/large_alloc.h"
#include "numerics/stats.h"

#include <stdlib.h>

#define SMALL_PARTITION 15     /* numpy's SMALL_QUICKSORT */
#define STACK_SIZE 128         /* numpy's PYA_QS_STACK: 2 x bits of npy_intp */

typedef hta_keyed keyed;

static void swap(keyed *a, keyed *b)
{
    keyed t = *a;
    *a = *b;
    *b = t;
}

static int floor_log2(size_t n)
{
    int depth = 0;
    while (n >>= 1)
        depth++;
    return depth;
}

/* Moves tmp down from slot i of the 1-based heap a[1..n], as numpy does. */
static void sift_down(keyed *a, size_t n, size_t i, keyed tmp)
{
    for (size_t j = i << 1; j <= n;) {
        if (j < n && a[j].key < a[j + 1].key)
            j++;
        if (!(tmp.key < a[j].key))
            break;
        a[i] = a[j];
        i = j;
        j += j;
    }
    a[i] = tmp;
}

/* numpy's aheapsort on v[0..n), used when a partition nests too deep. */
static void heapsort_pairs(keyed *v, size_t n)
{
    keyed *a = v - 1;          /* 1-based heap indexing, as numpy */
    for (size_t l = n >> 1; l > 0; --l)
        sift_down(a, n, l, a[l]);
    while (n > 1) {
        keyed tmp = a[n];
        a[n] = a[1];
        n -= 1;
        sift_down(a, n, 1, tmp);
    }
}

/* Partitions [pl, pr] around the median of three; returns the pivot slot. */
static keyed *partition(keyed *pl, keyed *pr)
{
    keyed *pm = pl + ((pr - pl) >> 1);
    if (pm->key < pl->key)
        swap(pm, pl);
    if (pr->key < pm->key)
        swap(pr, pm);
    if (pm->key < pl->key)
        swap(pm, pl);
    int64_t pivot = pm->key;
    keyed *pi = pl, *pj = pr - 1;
    swap(pm, pj);
    for (;;) {
        do
            ++pi;
        while (pi->key < pivot);
        do
            --pj;
        while (pivot < pj->key);
        if (pi >= pj)
            break;
        swap(pi, pj);
    }
    swap(pi, pr - 1);
    return pi;
}

static void insertion_sort(keyed *pl, keyed *pr)
{
    for (keyed *pi = pl + 1; pi <= pr; ++pi) {
        keyed v = *pi;
        keyed *pj = pi, *pk = pi - 1;
        while (pj > pl && v.key < pk->key)
            *pj-- = *pk--;
        *pj = v;
    }
}

static void introsort(keyed *v, size_t n)
{
    keyed *pl = v, *pr = v + n - 1;
    keyed *stack[STACK_SIZE], **sptr = stack;
    int depth[STACK_SIZE], *psdepth = depth;
    int cdepth = floor_log2(n) * 2;
    for (;;) {
        if (cdepth < 0) {
            heapsort_pairs(pl, (size_t)(pr - pl) + 1);
        } else {
            /* The larger side goes on the stack, the smaller is split on. */
            while (pr - pl > SMALL_PARTITION) {
                keyed *pi = partition(pl, pr);
                if (pi - pl < pr - pi) {
                    *sptr++ = pi + 1;
                    *sptr++ = pr;
                    pr = pi - 1;
                } else {
                    *sptr++ = pl;
                    *sptr++ = pi - 1;
                    pl = pi + 1;
                }
                *psdepth++ = --cdepth;
            }
            insertion_sort(pl, pr);
        }
        if (sptr == stack)
            break;
        pr = *(--sptr);
        pl = *(--sptr);
        cdepth = *(--psdepth);
    }
}

void hta_sort_keyed_like_numpy(hta_keyed *v, size_t n)
{
    if (n > 1)
        introsort(v, n);
}

int hta_argsort_like_numpy(const int64_t *keys, size_t n, size_t *order)
{
    keyed *v = hta_large_malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = (keyed){keys[i], i};
    hta_sort_keyed_like_numpy(v, n);
    for (size_t i = 0; i < n; i++)
        order[i] = v[i].index;
    free(v);
    return 0;
}
