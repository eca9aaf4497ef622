/* hta/corrmap.h: correlation id -> event index.
 *
 * Kineto links a CPU launch to its GPU event through args.correlation; the
 * analyses look launches up by it millions of times, so this is a flat
 * open-addressing table rather than a general dictionary. */
#ifndef HTA_CORRMAP_H
#define HTA_CORRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct hta_corrmap {
    int64_t *keys;             /* owned; INT64_MIN = empty */
    uint32_t *values;          /* owned */
    size_t n_slots, count;     /* n_slots is a power of two */
} hta_corrmap;

/* Sized for up to `expected` keys; -1 when out of memory. */
int hta_corrmap_init(hta_corrmap *m, size_t expected);
void hta_corrmap_free(hta_corrmap *m);
/* Adds key -> value unless key is present (the first one wins). */
void hta_corrmap_put_first(hta_corrmap *m, int64_t key, uint32_t value);
/* Returns 1 and sets *value when key is present. */
int hta_corrmap_get(const hta_corrmap *m, int64_t key, uint32_t *value);

#endif
