/* type_unions.c: the merged intervals of each kernel type of a rank (see
 * hta_type_unions in hta/analysis.h).
 *
 * The types partition the GPU events, so one buffer of n_gpu slots holds
 * every type's list back to back: each type's events are copied into its
 * own slice, which is then merged in place and shrinks to its union. */
#include "hta/analysis.h"

#include <stdlib.h>

int hta_type_unions_build(hta_type_unions *u, const hta_rank_view *v)
{
    *u = (hta_type_unions){0};
    u->storage = malloc((v->n_gpu ? v->n_gpu : 1) * sizeof *u->storage);
    if (!u->storage)
        return -1;
    hta_interval *slot = u->storage;
    for (int type = 0; type <= HTA_KT_OTHER; type++) {
        size_t n = 0;
        for (size_t i = 0; i < v->n_gpu; i++)
            if (v->gpu[i].kernel_type == type)
                slot[n++] = (hta_interval){v->gpu[i].ts_ns, hta_event_end(&v->gpu[i])};
        u->of[type] = slot;
        u->n[type] = hta_intervals_union(slot, n);
        slot += n;
    }
    return 0;
}

void hta_type_unions_free(hta_type_unions *u)
{
    free(u->storage);
    *u = (hta_type_unions){0};
}
