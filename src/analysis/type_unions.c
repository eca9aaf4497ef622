/* type_unions.c: the merged intervals of each kernel type of a rank, and
 * of all of them (see hta_type_unions in hta/analysis.h).
 *
 * The types partition the GPU events, so the first n_gpu slots hold every
 * type's list back to back: each type's events are copied into its own
 * slice, which is then merged in place and shrinks to its union (already
 * in order: the view's events are sorted by start, then end).  The union
 * of all events is the union of those lists, merged in order into the
 * slots after.  The lists then move to storage of their exact size. */
#include "hta/analysis.h"
#include "hta/large_alloc.h"

#include <stdlib.h>
#include <string.h>

static int precedes(const hta_interval *a, const hta_interval *b)
{
    return a->start != b->start ? a->start < b->start : a->end < b->end;
}

/* Merges the sorted per-type lists into out, keeping (start, end) order so
 * that their union needs no sort; returns the count. */
static size_t merge_sorted_lists(const hta_type_unions *u, hta_interval *out)
{
    size_t next[HTA_KT_OTHER + 1] = {0}, n = 0;
    for (;;) {
        int best = -1;
        for (int type = 0; type <= HTA_KT_OTHER; type++)
            if (next[type] < u->n[type] &&
                (best < 0 || precedes(&u->of[type][next[type]], &u->of[best][next[best]])))
                best = type;
        if (best < 0)
            return n;
        out[n++] = u->of[best][next[best]++];
    }
}

/* Moves the lists into storage of their exact size: merged, they are
 * usually a fraction of the two slots per event reserved.  -1 when out of
 * memory. */
static int compact(hta_type_unions *u)
{
    size_t total = u->n_all;
    for (int type = 0; type <= HTA_KT_OTHER; type++)
        total += u->n[type];
    hta_interval *fitted = hta_large_malloc((total + 1) * sizeof *fitted), *slot = fitted;
    if (!fitted)
        return -1;
    for (int type = 0; type <= HTA_KT_OTHER; type++) {
        memcpy(slot, u->of[type], u->n[type] * sizeof *slot);
        u->of[type] = slot;
        slot += u->n[type];
    }
    memcpy(slot, u->all, u->n_all * sizeof *slot);
    u->all = slot;
    free(u->storage);
    u->storage = fitted;
    return 0;
}

int hta_type_unions_build(hta_type_unions *u, const hta_event *const *gpu, size_t n_gpu)
{
    *u = (hta_type_unions){0};
    u->storage = hta_large_malloc((2 * n_gpu + 1) * sizeof *u->storage);
    if (!u->storage)
        return -1;
    hta_interval *slot = u->storage;
    for (int type = 0; type <= HTA_KT_OTHER; type++) {
        size_t n = 0;
        for (size_t i = 0; i < n_gpu; i++)
            if (gpu[i]->kernel_type == type)
                slot[n++] = (hta_interval){gpu[i]->ts_ns, hta_event_end(gpu[i])};
        u->of[type] = slot;
        u->n[type] = hta_intervals_union(slot, n);
        slot += n;
    }
    hta_interval *all = u->storage + n_gpu;
    size_t n_all = merge_sorted_lists(u, all);
    u->all = all;
    u->n_all = hta_intervals_union(all, n_all);
    return compact(u);
}

void hta_type_unions_free(hta_type_unions *u)
{
    free(u->storage);
    *u = (hta_type_unions){0};
}
