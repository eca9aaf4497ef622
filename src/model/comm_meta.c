/* comm_meta.c: the collective metadata side array (see model/comm_meta.h). */
#include "model/comm_meta.h"
#include "util/grow.h"

#include <stdlib.h>
#include <string.h>

void hta_comm_set_init(hta_comm_set *s)
{
    memset(s, 0, sizeof *s);
    hta_strtab_init(&s->strings);
}

void hta_comm_set_free(hta_comm_set *s)
{
    free(s->items);
    free(s->groups);
    hta_strtab_free(&s->strings);
    memset(s, 0, sizeof *s);
}

int hta_comm_set_push(hta_comm_set *s, const hta_comm_meta *m)
{
    if (hta_grow_array((void **)&s->items, &s->cap, s->n + 1, sizeof *s->items))
        return -1;
    s->items[s->n++] = *m;
    return 0;
}

int hta_comm_set_push_group(hta_comm_set *s, const hta_pg_config *g)
{
    if (hta_grow_array((void **)&s->groups, &s->cap_groups, s->n_groups + 1, sizeof *s->groups))
        return -1;
    s->groups[s->n_groups++] = *g;
    return 0;
}

/* from's id re-interned in into; UINT32_MAX - 1 when out of memory.  Each
 * id is looked up once and remembered in seen (UINT32_MAX = not yet): a
 * part has tens of thousands of entries over a handful of strings.  The
 * first lookups come in the order they always did, so into's ids do too. */
static uint32_t reintern(hta_comm_set *into, const hta_comm_set *from, uint32_t id,
                         uint32_t *seen, int *failed)
{
    if (id == HTA_COMM_NO_STRING)
        return id;
    if (seen[id] != UINT32_MAX)
        return seen[id];
    const char *text = hta_strtab_get(&from->strings, id);
    uint32_t out = hta_strtab_intern(&into->strings, text, strlen(text));
    *failed |= out == UINT32_MAX;
    seen[id] = out;
    return out;
}

int hta_comm_set_append(hta_comm_set *into, const hta_comm_set *from, size_t event_offset)
{
    uint32_t *seen = malloc(((size_t)from->strings.count + 1) * sizeof *seen);
    if (!seen)
        return -1;
    memset(seen, 0xFF, ((size_t)from->strings.count + 1) * sizeof *seen);
    int failed = 0;
    for (size_t i = 0; !failed && i < from->n; i++) {
        hta_comm_meta m = from->items[i];
        m.event += event_offset;
        m.collective = reintern(into, from, m.collective, seen, &failed);
        m.dtype = reintern(into, from, m.dtype, seen, &failed);
        m.pg_name = reintern(into, from, m.pg_name, seen, &failed);
        m.pg_desc = reintern(into, from, m.pg_desc, seen, &failed);
        m.pg_ranks = reintern(into, from, m.pg_ranks, seen, &failed);
        m.in_split = reintern(into, from, m.in_split, seen, &failed);
        m.out_split = reintern(into, from, m.out_split, seen, &failed);
        failed |= hta_comm_set_push(into, &m);
    }
    for (size_t i = 0; !failed && i < from->n_groups; i++) {
        hta_pg_config g = {reintern(into, from, from->groups[i].name, seen, &failed),
                           reintern(into, from, from->groups[i].desc, seen, &failed),
                           reintern(into, from, from->groups[i].ranks, seen, &failed)};
        failed |= hta_comm_set_push_group(into, &g);
    }
    free(seen);
    return failed ? -1 : 0;
}

const hta_comm_meta *hta_comm_set_find(const hta_comm_set *s, size_t event)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->items[mid].event < event)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->items[lo].event == event ? &s->items[lo] : NULL;
}

const char *hta_comm_string(const hta_comm_set *s, uint32_t id)
{
    return id == HTA_COMM_NO_STRING ? "" : hta_strtab_get(&s->strings, id);
}

int hta_dtype_size(const char *dtype)
{
    static const struct {
        const char *name;
        int size;
    } sizes[] = {
        {"Float", 4}, {"Double", 8}, {"Half", 2}, {"BFloat16", 2}, {"Long", 8},
        {"Int", 4}, {"Short", 2}, {"Char", 1}, {"Byte", 1}, {"Bool", 1},
        {"ComplexFloat", 8}, {"ComplexDouble", 16}, {"ComplexHalf", 4},
        {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1}, {"Float8_e4m3fnuz", 1},
        {"Float8_e5m2fnuz", 1}, {"UInt16", 2}, {"UInt32", 4}, {"UInt64", 8},
        {"QInt8", 1}, {"QUInt8", 1}, {"QInt32", 4},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcmp(dtype, sizes[i].name) == 0)
            return sizes[i].size;
    return 0;
}
