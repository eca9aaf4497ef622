/* strtab.c: string interning with an open-addressing hash of ids.
 *
 * The slot array stores id + 1 so that a zeroed array is empty, and is kept
 * at most half full; strings are individually allocated because they are
 * few compared with events. */
#include "util/strtab.h"

#include <stdlib.h>
#include <string.h>

static uint64_t load64(const char *s)
{
    uint64_t w;
    memcpy(&w, s, 8);
    return w;
}

static uint32_t load32(const char *s)
{
    uint32_t w;
    memcpy(&w, s, 4);
    return w;
}

static uint64_t mix(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
    return h ^ (h >> 32);
}

/* The bytes after the last whole word, read as overlapping loads that
 * cover all of them (the length is in the seed, so overlaps are harmless)
 * and need no call to memcpy. */
static uint64_t tail_bytes(const char *s, size_t len, size_t i)
{
    if (len >= 8)
        return i < len ? load64(s + len - 8) : 0;
    if (len >= 4)
        return load32(s) | (uint64_t)load32(s + len - 4) << 32;
    if (len > 0)
        return (unsigned char)s[0] | (uint64_t)(unsigned char)s[len / 2] << 8 |
               (uint64_t)(unsigned char)s[len - 1] << 16;
    return 0;
}

/* Every byte counts, so many names of one length still spread.  Kernel
 * names run to hundreds of bytes and every event's name is hashed once:
 * four independent lanes per 32 bytes keep the multipliers busy instead
 * of waiting on one chain of them. */
static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t a = 0x9E3779B97F4A7C15ULL ^ len, b = 0xC2B2AE3D27D4EB4FULL;
    uint64_t c = 0x165667B19E3779F9ULL, d = 0x27D4EB2F165667C5ULL;
    size_t i = 0;
    for (; i + 32 <= len; i += 32) {
        a = mix(a, load64(s + i));
        b = mix(b, load64(s + i + 8));
        c = mix(c, load64(s + i + 16));
        d = mix(d, load64(s + i + 24));
    }
    uint64_t h = i ? mix(mix(mix(a, b), c), d) : a;
    for (; i + 8 <= len; i += 8)
        h = mix(h, load64(s + i));
    h = (h ^ tail_bytes(s, len, i)) * 0xC4CEB9FE1A85EC53ULL;
    return h ^ (h >> 29);
}

void hta_strtab_init(hta_strtab *t)
{
    memset(t, 0, sizeof *t);
}

void hta_strtab_free(hta_strtab *t)
{
    for (uint32_t i = 0; i < t->count; i++)
        free(t->strings[i]);
    free(t->strings);
    free(t->lengths);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static int slot_matches(const hta_strtab *t, uint32_t slot, const char *s, size_t len)
{
    uint32_t id = t->slots[slot] - 1;
    return t->lengths[id] == len && memcmp(t->strings[id], s, len) == 0;
}

static uint32_t find_slot(const hta_strtab *t, const char *s, size_t len)
{
    uint32_t mask = t->n_slots - 1;
    uint32_t i = (uint32_t)hash_bytes(s, len) & mask;
    while (t->slots[i] && !slot_matches(t, i, s, len))
        i = (i + 1) & mask;
    return i;
}

static int grow_slots(hta_strtab *t)
{
    uint32_t n = t->n_slots ? t->n_slots * 2 : 256;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    free(t->slots);
    t->slots = slots;
    t->n_slots = n;
    for (uint32_t id = 0; id < t->count; id++)
        t->slots[find_slot(t, t->strings[id], t->lengths[id])] = id + 1;
    return 0;
}

uint32_t hta_strtab_find(const hta_strtab *t, const char *s, size_t len)
{
    if (!t->n_slots)
        return UINT32_MAX;
    uint32_t slot = find_slot(t, s, len);
    return t->slots[slot] ? t->slots[slot] - 1 : UINT32_MAX;
}

uint32_t hta_strtab_intern(hta_strtab *t, const char *s, size_t len)
{
    if (len > UINT32_MAX - 1)
        return UINT32_MAX;
    if ((t->count + 1) * 2 > t->n_slots && grow_slots(t))
        return UINT32_MAX;
    uint32_t slot = find_slot(t, s, len);
    if (t->slots[slot])
        return t->slots[slot] - 1;
    if (t->count == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 64;
        char **strings = realloc(t->strings, cap * sizeof *strings);
        if (!strings)
            return UINT32_MAX;
        t->strings = strings;
        uint32_t *lengths = realloc(t->lengths, cap * sizeof *lengths);
        if (!lengths)
            return UINT32_MAX;
        t->lengths = lengths;
        t->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return UINT32_MAX;
    memcpy(copy, s, len);
    copy[len] = '\0';
    uint32_t id = t->count++;
    t->strings[id] = copy;
    t->lengths[id] = (uint32_t)len;
    t->slots[slot] = id + 1;
    return id;
}
