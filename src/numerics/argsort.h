/* numerics/argsort.h: numpy's quicksort order, ties included. */
#ifndef HTA_ARGSORT_H
#define HTA_ARGSORT_H

#include <stddef.h>
#include <stdint.h>

/* order = the permutation numpy's argsort(kind="quicksort") gives for keys,
 * i.e. pandas' sort_values order, ties included; -1 when out of memory. */
int hta_argsort_like_numpy(const int64_t *keys, size_t n, size_t *order);

/* A key and its position, for callers that can lay their keys out so and
 * spare hta_argsort_like_numpy's copy of them. */
typedef struct hta_keyed {
    int64_t key;
    size_t index;
} hta_keyed;

/* Sorts v by key into numpy's quicksort order: with v[i].index = i on
 * entry, v[i].index is then argsort's order[i]. */
void hta_sort_keyed_like_numpy(hta_keyed *v, size_t n);

#endif
