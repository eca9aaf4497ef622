/* util/strtab.h: string interning.
 *
 * Traces repeat a few thousand distinct names millions of times, so events
 * store a 32-bit id and the text lives once in the table.  Ids are dense and
 * assigned in first-seen order, which keeps them deterministic for a file. */
#ifndef HTA_STRTAB_H
#define HTA_STRTAB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>



typedef struct hta_strtab {
    char **strings;     /* owned: strings[id], NUL-terminated */
    uint32_t *lengths;
    uint32_t count, cap;
    uint32_t *slots;    /* open addressing: id + 1, 0 = empty */
    uint32_t n_slots;   /* power of two */
} hta_strtab;

void hta_strtab_init(hta_strtab *t);
void hta_strtab_free(hta_strtab *t);

/* Returns the id of s[0..len), adding it if new; UINT32_MAX when out of memory. */
uint32_t hta_strtab_intern(hta_strtab *t, const char *s, size_t len);

/* Returns the id of s or UINT32_MAX when absent. */
uint32_t hta_strtab_find(const hta_strtab *t, const char *s, size_t len);

static inline const char *hta_strtab_get(const hta_strtab *t, uint32_t id)
{
    return t->strings[id];
}

/* A direct-mapped memo of recent ids in front of hta_strtab_intern, for
 * one stream of lookups into one table (an event's name or category):
 * the slot is picked from the length and three bytes, with no pass over
 * the text, and a hit is confirmed by comparing the stored string, so the
 * id is always the one hta_strtab_intern gives.  Most events repeat a
 * recent name, and a kernel name of a few hundred bytes is then compared
 * once instead of hashed and compared.  Zeroed = empty. */
#define HTA_STRTAB_MEMO_SLOTS 256u
typedef struct hta_strtab_memo {
    uint32_t id[HTA_STRTAB_MEMO_SLOTS]; /* id + 1, 0 = empty */
} hta_strtab_memo;

static inline uint32_t hta_strtab_intern_memo(hta_strtab *t, hta_strtab_memo *m, const char *s,
                                              size_t len)
{
    if (len == 0)
        return hta_strtab_intern(t, s, len);
    uint32_t slot = ((uint32_t)len * 7u + (unsigned char)s[0] +
                     (unsigned char)s[len >> 1] * 3u + (unsigned char)s[len - 1] * 5u) &
                    (HTA_STRTAB_MEMO_SLOTS - 1);
    uint32_t id = m->id[slot] - 1;
    if (m->id[slot] && t->lengths[id] == len && memcmp(t->strings[id], s, len) == 0)
        return id;
    id = hta_strtab_intern(t, s, len);
    if (id != UINT32_MAX)
        m->id[slot] = id + 1;
    return id;
}

#endif
