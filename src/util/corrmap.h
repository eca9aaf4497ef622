/* util/corrmap.h: correlation id -> event index.
 *
 * Kineto links a CPU launch to its GPU event through args.correlation; the
 * analyses look launches up by it millions of times, so this is a flat
 * table rather than a general dictionary.  Kineto numbers correlations
 * in one increasing sequence, so the keys are usually dense enough for an
 * array indexed by key - lowest key (no hash, no probe, 4 bytes a slot),
 * used when it is no larger than an open-addressing hash of the same keys,
 * which serves the sparse rest. */
#ifndef HTA_CORRMAP_H
#define HTA_CORRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct hta_corrmap {
    uint32_t *direct;          /* owned, dense keys: value + 1 at key - lowest, 0 = empty */
    int64_t lowest;            /* the lowest key the direct array covers */
    int64_t *keys;             /* owned, hashed keys; INT64_MIN = empty */
    uint32_t *values;          /* owned */
    size_t n_slots, count;     /* n_slots is a power of two, or the direct length */
} hta_corrmap;

/* Sized for up to `expected` keys, all in [lowest, highest]; -1 when out
 * of memory. */
int hta_corrmap_init(hta_corrmap *m, size_t expected, int64_t lowest, int64_t highest);
void hta_corrmap_free(hta_corrmap *m);
/* Adds key -> value unless key is present (the first one wins); value <
 * UINT32_MAX.  1 when it added it. */
int hta_corrmap_put_first(hta_corrmap *m, int64_t key, uint32_t value);
/* Sets key -> value, replacing any value key had; value < UINT32_MAX. */
void hta_corrmap_put(hta_corrmap *m, int64_t key, uint32_t value);
/* Removes every key that maps to value (one pass over the slots). */
void hta_corrmap_remove_value(hta_corrmap *m, uint32_t value);
/* hta_corrmap_get of a hashed map. */
int hta_corrmap_get_hashed(const hta_corrmap *m, int64_t key, uint32_t *value);

/* Returns 1 and sets *value when key is present.  Inline: the analyses
 * look launches up once per GPU event, and the direct array, the usual
 * case, is one load. */
static inline int hta_corrmap_get(const hta_corrmap *m, int64_t key, uint32_t *value)
{
    if (!m->direct)
        return hta_corrmap_get_hashed(m, key, value);
    uint64_t offset = (uint64_t)key - (uint64_t)m->lowest;
    if (key < m->lowest || offset >= m->n_slots || m->direct[offset] == 0)
        return 0;
    *value = m->direct[offset] - 1;
    return 1;
}

#endif
