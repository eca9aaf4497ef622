/* util/grow.h: a growable array of fixed-size items (util/grow.c). */
#ifndef HTA_GROW_H
#define HTA_GROW_H

#include <stddef.h>

/* Makes *items (capacity *cap items of `size` bytes) hold at least `need`
 * items, doubling so that pushing one at a time stays linear: 0, or -1
 * when out of memory or the size overflows, the array then as it was. */
int hta_grow_array(void **items, size_t *cap, size_t need, size_t size);

#endif
