/* trace.c: growth of the per-rank event arrays (see model/trace.h). */
#include "model/trace.h"

#include <stdlib.h>
#include <string.h>

#include "util/large_alloc.h"
#include "util/grow.h"

/* Items in an array's first block; smaller reservations are left to it. */
#define FIRST_CAPACITY 4096

void hta_trace_init(hta_trace *t)
{
    memset(t, 0, sizeof *t);
    hta_strtab_init(&t->names);
    hta_strtab_init(&t->categories);
    hta_strtab_init(&t->cpu_contexts);
    hta_comm_set_init(&t->comm);
    hta_strtab_init(&t->counter_names);
    t->rank = -1;
    t->world_size = -1;
}

void hta_trace_free(hta_trace *t)
{
    free(t->events);
    free(t->extras);
    hta_strtab_free(&t->names);
    hta_strtab_free(&t->categories);
    hta_strtab_free(&t->cpu_contexts);
    free(t->ranges);
    free(t->range_counters);
    hta_strtab_free(&t->counter_names);
    hta_memory_samples_free(&t->memory);
    hta_comm_set_free(&t->comm);
    memset(t, 0, sizeof *t);
}

/* Makes the array hold at least `need` items, and a first block at
 * least; -1 when out of memory, the array then as it was. */
static int make_room(void **items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    need = need > FIRST_CAPACITY ? need : FIRST_CAPACITY;
    void *p = need > SIZE_MAX / size ? NULL
              : *items            ? hta_large_realloc(*items, need * size)
                                  : hta_large_reserve(need * size);
    if (!p)
        return -1;
    *items = p;
    *cap = need;
    return 0;
}

/* Grows by half rather than doubling: the event array is the one large
 * allocation per rank and doubling would waste up to 50% of peak memory. */
static int grow(void **items, size_t *cap, size_t size)
{
    return make_room(items, cap, *cap + (*cap / 2 ? *cap / 2 : 1), size);
}

int hta_trace_reserve(hta_trace *t, size_t events, size_t extras)
{
    if (events > SIZE_MAX - t->n_events || extras > SIZE_MAX - t->n_extras)
        return -1;
    return make_room((void **)&t->events, &t->cap_events, t->n_events + events,
                     sizeof *t->events) ||
                   make_room((void **)&t->extras, &t->cap_extras, t->n_extras + extras,
                             sizeof *t->extras)
               ? -1
               : 0;
}

hta_event *hta_trace_push_event(hta_trace *t)
{
    if (t->n_events == t->cap_events &&
        grow((void **)&t->events, &t->cap_events, sizeof *t->events))
        return NULL;
    hta_event *e = &t->events[t->n_events++];
    memset(e, 0, sizeof *e);
    return e;
}

void hta_trace_shrink(hta_trace *t)
{
    if (t->n_events == 0 || t->n_events == t->cap_events)
        return;
    hta_event *fitted = hta_large_realloc(t->events, t->n_events * sizeof *t->events);
    if (fitted) { /* else keep the larger block: nothing is lost */
        t->events = fitted;
        t->cap_events = t->n_events;
    }
}

int hta_trace_push_extra(hta_trace *t, hta_event_extra extra, uint8_t flags)
{
    if (t->n_events == 0 || (t->n_extras == t->cap_extras &&
                             grow((void **)&t->extras, &t->cap_extras, sizeof *t->extras)))
        return -1;
    extra.event = t->n_events - 1;
    t->extras[t->n_extras++] = extra;
    t->events[extra.event].flags |= flags;
    return 0;
}

const hta_event_extra *hta_trace_extra(const hta_trace *t, const hta_event *e)
{
    size_t event = (size_t)(e - t->events), lo = 0, hi = t->n_extras;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->extras[mid].event <= event)
            lo = mid;
        else
            hi = mid;
    }
    return &t->extras[lo];
}

int hta_trace_push_range_counter(hta_trace *t, const char *name, size_t len, double value)
{
    uint32_t id = hta_strtab_intern(&t->counter_names, name, len);
    if (id == UINT32_MAX || hta_grow_array((void **)&t->range_counters, &t->cap_range_counters,
                                       t->n_range_counters + 1, sizeof *t->range_counters))
        return -1;
    t->range_counters[t->n_range_counters++] = (hta_range_counter){id, value};
    return 0;
}

int hta_trace_add_range(hta_trace *t, hta_profiler_range range)
{
    if (hta_grow_array((void **)&t->ranges, &t->cap_ranges, t->n_ranges + 1, sizeof *t->ranges))
        return -1;
    t->ranges[t->n_ranges++] = range;
    return 0;
}

int hta_trace_push_range(hta_trace *t, size_t first_counter)
{
    if (t->n_events == 0)
        return -1;
    const hta_event *e = &t->events[t->n_events - 1];
    return hta_trace_add_range(t, (hta_profiler_range){e->ts_ns, e->dur_ns, e->name,
                                                       (uint32_t)first_counter,
                                                       (uint32_t)(t->n_range_counters -
                                                                  first_counter)});
}
