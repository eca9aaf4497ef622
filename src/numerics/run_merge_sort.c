/* run_merge_sort.c: stable natural merge sort (see numerics/run_merge_sort.h).
 *
 * The ends of the maximal ascending runs (by key, then index) are found
 * once; each round merges neighbouring runs pairwise between v and
 * scratch. */
#include "numerics/run_merge_sort.h"

#include <stdlib.h>
#include <string.h>

static int before(const hta_keyed *x, const hta_keyed *y)
{
    return x->key < y->key || (x->key == y->key && x->index < y->index);
}

/* Merges a[0..na) and b[0..nb) into out. */
static void merge(const hta_keyed *a, size_t na, const hta_keyed *b, size_t nb, hta_keyed *out)
{
    size_t i = 0, j = 0, k = 0;
    while (i < na && j < nb)
        out[k++] = before(&b[j], &a[i]) ? b[j++] : a[i++];
    while (i < na)
        out[k++] = a[i++];
    while (j < nb)
        out[k++] = b[j++];
}

/* One round: merges run pairs of from into to; ends[] (the runs' end
 * offsets) becomes the merged runs'; returns their count. */
static size_t merge_round(const hta_keyed *from, hta_keyed *to, size_t *ends, size_t n_runs)
{
    size_t start = 0, m = 0;
    for (size_t r = 0; r < n_runs; r += 2) {
        size_t mid = ends[r];
        size_t end = r + 1 < n_runs ? ends[r + 1] : mid;
        merge(from + start, mid - start, from + mid, end - mid, to + start);
        ends[m++] = end;
        start = end;
    }
    return m;
}

int hta_run_merge_sort_keyed(hta_keyed *v, size_t n, hta_keyed *scratch)
{
    size_t n_runs = 1;
    for (size_t i = 1; i < n; i++)
        n_runs += before(&v[i], &v[i - 1]);
    if (n_runs == 1)
        return 0;
    size_t stack_ends[64];
    size_t *ends = n_runs <= 64 ? stack_ends : malloc(n_runs * sizeof *ends);
    if (!ends)
        return -1;
    for (size_t i = 1, r = 0; i < n; i++)
        if (before(&v[i], &v[i - 1]))
            ends[r++] = i;
    ends[n_runs - 1] = n;
    hta_keyed *from = v, *to = scratch;
    while (n_runs > 1) {
        n_runs = merge_round(from, to, ends, n_runs);
        hta_keyed *t = from;
        from = to, to = t;
    }
    if (from != v)
        memcpy(v, from, n * sizeof *v);
    if (ends != stack_ends)
        free(ends);
    return 0;
}
