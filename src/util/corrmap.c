/* corrmap.c: flat int64 -> uint32 hash table (see hta/corrmap.h).
 * Fixed capacity (4/3 of the expected count, rounded up to a power of two)
 * because the number of keys is known before filling. */
#include "hta/corrmap.h"

#include <stdlib.h>

#define EMPTY_KEY INT64_MIN

static size_t slot_of(const hta_corrmap *m, int64_t key)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 17) & (m->n_slots - 1);
}

int hta_corrmap_init(hta_corrmap *m, size_t expected)
{
    m->n_slots = 16;
    /* At most 3/4 full: linear probing stays short, and the table is a
     * sizeable part of a rank's memory. */
    while (m->n_slots < expected + expected / 3 + 1)
        m->n_slots *= 2;
    m->count = 0;
    m->keys = malloc(m->n_slots * sizeof *m->keys);
    m->values = malloc(m->n_slots * sizeof *m->values);
    if (!m->keys || !m->values) {
        hta_corrmap_free(m);
        return -1;
    }
    for (size_t i = 0; i < m->n_slots; i++)
        m->keys[i] = EMPTY_KEY;
    return 0;
}

void hta_corrmap_free(hta_corrmap *m)
{
    free(m->keys);
    free(m->values);
    m->keys = NULL;
    m->values = NULL;
    m->n_slots = m->count = 0;
}

void hta_corrmap_put_first(hta_corrmap *m, int64_t key, uint32_t value)
{
    if (key == EMPTY_KEY || m->count + 1 >= m->n_slots) /* keep one slot empty */
        return;
    size_t mask = m->n_slots - 1;
    for (size_t i = slot_of(m, key);; i = (i + 1) & mask) {
        if (m->keys[i] == key)
            return;
        if (m->keys[i] == EMPTY_KEY) {
            m->keys[i] = key;
            m->values[i] = value;
            m->count++;
            return;
        }
    }
}

int hta_corrmap_get(const hta_corrmap *m, int64_t key, uint32_t *value)
{
    if (!m->n_slots || key == EMPTY_KEY)
        return 0;
    size_t mask = m->n_slots - 1;
    for (size_t i = slot_of(m, key);; i = (i + 1) & mask) {
        if (m->keys[i] == key) {
            *value = m->values[i];
            return 1;
        }
        if (m->keys[i] == EMPTY_KEY)
            return 0;
    }
}
