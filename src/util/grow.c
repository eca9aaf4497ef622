/* grow.c: see util/grow.h.  The many small arrays that analyses and
 * writers fill one item at a time; the event array, the one large
 * allocation per rank, grows its own way (model/trace.c). */
#include "util/grow.h"

#include <stdint.h>
#include <stdlib.h>

#define FIRST_CAPACITY 16

int hta_grow_array(void **items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : FIRST_CAPACITY;
    while (n < need && n <= SIZE_MAX / 2)
        n *= 2;
    if (n < need || n > SIZE_MAX / size)
        return -1;
    void *grown = realloc(*items, n * size);
    if (!grown)
        return -1;
    *items = grown;
    *cap = n;
    return 0;
}
