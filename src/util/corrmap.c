/* corrmap.c: flat int64 -> uint32 table (see util/corrmap.h).
 * Fixed capacity because the number and range of the keys are known
 * before filling: a direct array when it takes no more memory than the
 * hash table would (zeroed, so pages never touched cost
 * nothing), else a hash table at most 3/4 full (4/3 of the expected
 * count, rounded up to a power of two). */
#include "util/corrmap.h"
#include "util/large_alloc.h"

#include <stdlib.h>

#define EMPTY_KEY INT64_MIN
/* A hashed key's value once removed: the key keeps its slot, so that the
 * probe sequences through it stay intact. */
#define REMOVED UINT32_MAX

static size_t slot_of(const hta_corrmap *m, int64_t key)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 17) & (m->n_slots - 1);
}

static int init_direct(hta_corrmap *m, int64_t lowest, size_t range)
{
    m->lowest = lowest;
    m->n_slots = range;
    m->direct = hta_large_zeroed(range * sizeof *m->direct);
    return m->direct ? 0 : -1;
}

/* At most 3/4 full: linear probing stays short, and the table is a
 * sizeable part of a rank's memory. */
static size_t hashed_slots(size_t expected)
{
    size_t n = 16;
    while (n < expected + expected / 3 + 1)
        n *= 2;
    return n;
}

static int init_hashed(hta_corrmap *m, size_t expected)
{
    m->n_slots = hashed_slots(expected);
    m->keys = hta_large_malloc(m->n_slots * sizeof *m->keys);
    m->values = hta_large_malloc(m->n_slots * sizeof *m->values);
    if (!m->keys || !m->values)
        return -1;
    for (size_t i = 0; i < m->n_slots; i++)
        m->keys[i] = EMPTY_KEY;
    return 0;
}

int hta_corrmap_init(hta_corrmap *m, size_t expected, int64_t lowest, int64_t highest)
{
    *m = (hta_corrmap){0};
    /* The range in unsigned arithmetic: no overflow for any int64 pair. */
    uint64_t range = highest >= lowest ? (uint64_t)highest - (uint64_t)lowest + 1 : 0;
    size_t hashed_bytes = hashed_slots(expected) * (sizeof *m->keys + sizeof *m->values);
    int rc = range && range <= hashed_bytes / sizeof *m->direct
                 ? init_direct(m, lowest, (size_t)range)
                 : init_hashed(m, expected);
    if (rc)
        hta_corrmap_free(m);
    return rc;
}

void hta_corrmap_free(hta_corrmap *m)
{
    hta_large_zeroed_free(m->direct, m->n_slots * sizeof *m->direct);
    free(m->keys);
    free(m->values);
    *m = (hta_corrmap){0};
}

/* The direct slot of key, or NULL when outside the array. */
static uint32_t *direct_slot(const hta_corrmap *m, int64_t key)
{
    uint64_t offset = (uint64_t)key - (uint64_t)m->lowest;
    return key >= m->lowest && offset < m->n_slots ? &m->direct[offset] : NULL;
}

/* The hashed slot holding key, else the empty slot where it would go
 * (keyed to it); NULL when key cannot go in. */
static uint32_t *hashed_slot(hta_corrmap *m, int64_t key, int *present)
{
    *present = 0;
    if (key == EMPTY_KEY)
        return NULL;
    size_t mask = m->n_slots - 1;
    for (size_t i = slot_of(m, key);; i = (i + 1) & mask) {
        *present = m->keys[i] == key;
        if (*present)
            return &m->values[i];
        if (m->keys[i] == EMPTY_KEY) {
            if (m->count + 1 >= m->n_slots) /* keep one slot empty */
                return NULL;
            m->keys[i] = key;
            return &m->values[i];
        }
    }
}

int hta_corrmap_put_first(hta_corrmap *m, int64_t key, uint32_t value)
{
    int present = 0;
    uint32_t *slot = m->direct ? direct_slot(m, key) : hashed_slot(m, key, &present);
    if (!slot || (present && *slot != REMOVED) || (m->direct && *slot != 0))
        return 0;
    *slot = m->direct ? value + 1 : value; /* direct: 0 = empty */
    m->count += !present;
    return 1;
}

void hta_corrmap_put(hta_corrmap *m, int64_t key, uint32_t value)
{
    int present = 0;
    uint32_t *slot = m->direct ? direct_slot(m, key) : hashed_slot(m, key, &present);
    if (!slot)
        return;
    m->count += m->direct ? *slot == 0 : !present;
    *slot = m->direct ? value + 1 : value;
}

void hta_corrmap_remove_value(hta_corrmap *m, uint32_t value)
{
    for (size_t i = 0; m->direct && i < m->n_slots; i++)
        if (m->direct[i] == value + 1) {
            m->direct[i] = 0;
            m->count--;
        }
    for (size_t i = 0; m->keys && i < m->n_slots; i++)
        if (m->keys[i] != EMPTY_KEY && m->values[i] == value)
            m->values[i] = REMOVED;
}

int hta_corrmap_get_hashed(const hta_corrmap *m, int64_t key, uint32_t *value)
{
    if (!m->n_slots || key == EMPTY_KEY)
        return 0;
    size_t mask = m->n_slots - 1;
    for (size_t i = slot_of(m, key);; i = (i + 1) & mask) {
        if (m->keys[i] == key) {
            *value = m->values[i];
            return *value != REMOVED;
        }
        if (m->keys[i] == EMPTY_KEY)
            return 0;
    }
}
