/* type_unions.c: the merged intervals of each kernel type of a rank, and
 * of all of them (see hta_type_unions in model/type_unions.h).
 *
 * The types partition the GPU events, so n_gpu slots hold every type's
 * list back to back: each event's interval is copied into its type's
 * slice, which is then merged in place and shrinks to its union (already in
 * order: the view's events are sorted by start, then end).  The union of
 * all events is the union of those lists, measured as they are merged in
 * order, never stored.  The lists then move to storage of their exact
 * size. */
#include "model/type_unions.h"

#include "util/large_alloc.h"

#include <stdlib.h>
#include <string.h>

static int precedes(const hta_interval *a, const hta_interval *b)
{
    return a->start != b->start ? a->start < b->start : a->end < b->end;
}

/* Adds the next interval, in (start, end) order, to the running union of
 * all, merging as hta_intervals_union does. */
typedef struct running_union {
    hta_interval current;
    size_t n;                  /* intervals added */
    int64_t length;            /* of the merged intervals before current */
    int64_t first_start;
} running_union;

static void add_to_union(running_union *r, hta_interval iv)
{
    if (r->n++ == 0) {
        r->current = iv;
        r->first_start = iv.start;
    } else if (hta_interval_merge(&r->current, iv)) {
        r->length += r->current.end - r->current.start;
        r->current = iv;
    }
}

/* The union of all types: the per-type lists merged in (start, end) order
 * (their union is the union of every event) into a running union, so that
 * it is never stored. */
static void measure_union_of_all(hta_type_unions *u)
{
    size_t next[HTA_KT_OTHER + 1] = {0};
    running_union all = {{0, 0}, 0, 0, 0};
    for (;;) {
        int best = -1;
        for (int type = 0; type <= HTA_KT_OTHER; type++)
            if (next[type] < u->n[type] &&
                (best < 0 || precedes(&u->of[type][next[type]], &u->of[best][next[best]])))
                best = type;
        if (best < 0)
            break;
        add_to_union(&all, u->of[best][next[best]++]);
    }
    u->all_start = all.first_start;
    u->all_end = all.current.end;
    u->all_length = all.n ? all.length + all.current.end - all.current.start : 0;
}

/* Moves the lists into storage of their exact size: merged, they are
 * usually a fraction of the slot per event reserved.  -1 when out of
 * memory. */
static int compact(hta_type_unions *u)
{
    size_t total = 0;
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
    free(u->storage);
    u->storage = fitted;
    return 0;
}

/* Each event's interval goes to its type's slice in one pass over the
 * events (after one that sizes the slices), rather than one pass a type:
 * reading the events through the view's pointers is most of the cost. */
int hta_type_unions_build(hta_type_unions *u, const hta_event *const *gpu, size_t n_gpu)
{
    *u = (hta_type_unions){0};
    u->storage = hta_large_malloc((n_gpu + 1) * sizeof *u->storage);
    if (!u->storage)
        return -1;
    for (size_t i = 0; i < n_gpu; i++)
        u->n[gpu[i]->kernel_type]++;
    hta_interval *slice[HTA_KT_OTHER + 1], *slot = u->storage;
    for (int type = 0; type <= HTA_KT_OTHER; type++) {
        slice[type] = slot;
        slot += u->n[type];
        u->n[type] = 0;
    }
    for (size_t i = 0; i < n_gpu; i++) {
        int type = gpu[i]->kernel_type;
        slice[type][u->n[type]++] = (hta_interval){gpu[i]->ts_ns, hta_event_end(gpu[i])};
    }
    for (int type = 0; type <= HTA_KT_OTHER; type++) {
        u->of[type] = slice[type];
        u->n[type] = hta_intervals_union(slice[type], u->n[type]);
    }
    measure_union_of_all(u);
    return compact(u);
}

void hta_type_unions_free(hta_type_unions *u)
{
    free(u->storage);
    *u = (hta_type_unions){0};
}
