/* argsort.c: the order numpy's argsort(kind="quicksort") gives, exactly
 * (see hta/stats.h).
 *
 * HTA sorts its time series with pandas' sort_values, whose default is
 * numpy's introsort: not stable, so among equal timestamps the order
 * depends on the input order and on the algorithm's swaps.  The running
 * sums HTA then reports (queue length, memory bandwidth) take a different
 * value at every such tie, so reproducing HTA's numbers needs the very same
 * permutation.  This is numpy 1.24's aquicksort (the numpy HTA's expected
 * values were computed with): median-of-3 quicksort down to partitions of
 * 16, insertion sort below, heapsort past a depth limit of 2 log2(n). */
#include "hta/stats.h"

#define SMALL_PARTITION 15     /* numpy's SMALL_QUICKSORT */
#define STACK_SIZE 128         /* numpy's PYA_QS_STACK: 2 x bits of npy_intp */

static void swap(size_t *a, size_t *b)
{
    size_t t = *a;
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
static void sift_down(const int64_t *keys, size_t *a, size_t n, size_t i, size_t tmp)
{
    for (size_t j = i << 1; j <= n;) {
        if (j < n && keys[a[j]] < keys[a[j + 1]])
            j++;
        if (!(keys[tmp] < keys[a[j]]))
            break;
        a[i] = a[j];
        i = j;
        j += j;
    }
    a[i] = tmp;
}

/* numpy's aheapsort on order[0..n), used when a partition nests too deep. */
static void heapsort_indices(const int64_t *keys, size_t *order, size_t n)
{
    size_t *a = order - 1;     /* 1-based heap indexing, as numpy */
    for (size_t l = n >> 1; l > 0; --l)
        sift_down(keys, a, n, l, a[l]);
    while (n > 1) {
        size_t tmp = a[n];
        a[n] = a[1];
        n -= 1;
        sift_down(keys, a, n, 1, tmp);
    }
}

/* Partitions [pl, pr] around the median of three; returns the pivot slot. */
static size_t *partition(const int64_t *keys, size_t *pl, size_t *pr)
{
    size_t *pm = pl + ((pr - pl) >> 1);
    if (keys[*pm] < keys[*pl])
        swap(pm, pl);
    if (keys[*pr] < keys[*pm])
        swap(pr, pm);
    if (keys[*pm] < keys[*pl])
        swap(pm, pl);
    int64_t pivot = keys[*pm];
    size_t *pi = pl, *pj = pr - 1;
    swap(pm, pj);
    for (;;) {
        do
            ++pi;
        while (keys[*pi] < pivot);
        do
            --pj;
        while (pivot < keys[*pj]);
        if (pi >= pj)
            break;
        swap(pi, pj);
    }
    swap(pi, pr - 1);
    return pi;
}

static void insertion_sort(const int64_t *keys, size_t *pl, size_t *pr)
{
    for (size_t *pi = pl + 1; pi <= pr; ++pi) {
        size_t vi = *pi;
        int64_t v = keys[vi];
        size_t *pj = pi, *pk = pi - 1;
        while (pj > pl && v < keys[*pk])
            *pj-- = *pk--;
        *pj = vi;
    }
}

void hta_argsort_like_numpy(const int64_t *keys, size_t n, size_t *order)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    if (n < 2)
        return;
    size_t *pl = order, *pr = order + n - 1;
    size_t *stack[STACK_SIZE], **sptr = stack;
    int depth[STACK_SIZE], *psdepth = depth;
    int cdepth = floor_log2(n) * 2;
    for (;;) {
        if (cdepth < 0) {
            heapsort_indices(keys, pl, (size_t)(pr - pl) + 1);
        } else {
            /* The larger side goes on the stack, the smaller is split on. */
            while (pr - pl > SMALL_PARTITION) {
                size_t *pi = partition(keys, pl, pr);
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
            insertion_sort(keys, pl, pr);
        }
        if (sptr == stack)
            break;
        pr = *(--sptr);
        pl = *(--sptr);
        cdepth = *(--psdepth);
    }
}
