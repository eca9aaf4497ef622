/* type_unions.c: the merged intervals of each kernel type of a rank, and
 * of all of them (see hta_type_unions in hta/analysis.h).
 *
 * The types partition the GPU events, so the first n_gpu slots hold every
 * type's list back to back: each type's events are copied into its own
 * slice, which is then merged in place and shrinks to its union.  The
 * union of all events is the union of those lists, in the slots after. */
#include "hta/analysis.h"

#include <stdlib.h>
#include <string.h>

int hta_type_unions_build(hta_type_unions *u, const hta_event *gpu, size_t n_gpu)
{
    *u = (hta_type_unions){0};
    u->storage = malloc((2 * n_gpu + 1) * sizeof *u->storage);
    if (!u->storage)
        return -1;
    hta_interval *slot = u->storage;
    for (int type = 0; type <= HTA_KT_OTHER; type++) {
        size_t n = 0;
        for (size_t i = 0; i < n_gpu; i++)
            if (gpu[i].kernel_type == type)
                slot[n++] = (hta_interval){gpu[i].ts_ns, hta_event_end(&gpu[i])};
        u->of[type] = slot;
        u->n[type] = hta_intervals_union(slot, n);
        slot += n;
    }
    hta_interval *all = u->storage + n_gpu;
    size_t n_all = 0;
    for (int type = 0; type <= HTA_KT_OTHER; type++) {
        memcpy(all + n_all, u->of[type], u->n[type] * sizeof *all);
        n_all += u->n[type];
    }
    u->all = all;
    u->n_all = hta_intervals_union(all, n_all);
    return 0;
}

void hta_type_unions_free(hta_type_unions *u)
{
    free(u->storage);
    *u = (hta_type_unions){0};
}
