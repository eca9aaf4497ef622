/* util/strtab.h: string interning.
 *
 * Traces repeat a few thousand distinct names millions of times, so events
 * store a 32-bit id and the text lives once in the table.  Ids are dense and
 * assigned in first-seen order, which keeps them deterministic for a file. */
#ifndef HTA_STRTAB_H
#define HTA_STRTAB_H

#include <stddef.h>
#include <stdint.h>



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

#endif
