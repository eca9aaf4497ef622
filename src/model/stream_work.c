/* stream_work.c: per-stream GPU work in HTA's order (see
 * hta/stream_work.h).
 *
 * Events are grouped by stream keeping trace order (what HTA's boolean
 * selection of one stream keeps), then each stream is ordered by start
 * with numpy's quicksort permutation, so that events starting together
 * get the predecessor HTA gives them.  Both orders are stable radix sorts
 * (numpy's permutation differs from a stable one only among equal starts,
 * so it runs only for a stream that has some); the buffers are sized by
 * the work events, not by the whole trace. */
#include "hta/large_alloc.h"
#include "hta/radix_sort.h"
#include "hta/stats.h"
#include "hta/stream_work.h"

#include <stdlib.h>
#include <string.h>

static int is_work_category(const char *cat)
{
    static const char *const names[] = {"kernel", "gpu_memcpy", "gpu_memset",
                                        "Kernel", "Memcpy", "Memset", NULL};
    for (const char *const *n = names; *n; n++)
        if (strcmp(cat, *n) == 0)
            return 1;
    return 0;
}

static size_t count_work(const hta_trace *t, const uint8_t *is_work)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_events; i++)
        n += hta_event_is_gpu(&t->events[i]) && is_work[t->events[i].cat];
    return n;
}

/* Scratch for ordering up to n_work events by a key. */
typedef struct work_order {
    int64_t *keys;
    size_t *order;
    const hta_event **events;
} work_order;

/* The work events into set->storage in stream, then trace order (a stable
 * sort by stream of the trace-order events); -1 when out of memory. */
static int collect_work(const hta_trace *t, const uint8_t *is_work, hta_stream_work_set *set,
                        size_t n, work_order *by)
{
    size_t k = 0;
    for (size_t i = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        if (hta_event_is_gpu(e) && is_work[e->cat]) {
            by->events[k] = e;
            by->keys[k++] = e->stream;
        }
    }
    if (hta_stable_argsort(by->keys, n, by->order))
        return -1;
    for (size_t i = 0; i < n; i++)
        set->storage[i] = by->events[by->order[i]];
    return 0;
}

static int has_equal_neighbours(const int64_t *sorted, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (sorted[i] == sorted[i - 1])
            return 1;
    return 0;
}

/* Reorders one stream's events by start as pandas' sort_values does.
 * Without equal starts every sort gives numpy's order, and a radix sort
 * is the cheapest; with them numpy's own algorithm decides.  -1 when out
 * of memory. */
static int order_by_start(const hta_event **events, size_t n, work_order *by)
{
    for (size_t i = 0; i < n; i++) {
        by->keys[i] = events[i]->ts_ns;
        by->events[i] = events[i];
    }
    if (hta_stable_argsort(by->keys, n, by->order))
        return -1;
    if (has_equal_neighbours(by->keys, n)) {
        for (size_t i = 0; i < n; i++) /* the radix sort sorted them */
            by->keys[i] = events[i]->ts_ns;
        if (hta_argsort_like_numpy(by->keys, n, by->order))
            return -1;
    }
    for (size_t i = 0; i < n; i++)
        events[i] = by->events[by->order[i]];
    return 0;
}

static size_t count_streams(const hta_event **events, size_t n)
{
    size_t streams = 0;
    for (size_t i = 0; i < n; i++)
        streams += i == 0 || events[i]->stream != events[i - 1]->stream;
    return streams;
}

/* Cuts the grouped events into streams, each ordered by start. */
static int split_streams(hta_stream_work_set *set, size_t n, work_order *by)
{
    const hta_event **ev = set->storage;
    for (size_t begin = 0, end; begin < n; begin = end) {
        for (end = begin + 1; end < n && ev[end]->stream == ev[begin]->stream;)
            end++;
        if (order_by_start(ev + begin, end - begin, by))
            return -1;
        set->streams[set->n_streams++] =
            (hta_stream_work){.stream = ev[begin]->stream, .events = ev + begin, .n = end - begin};
    }
    return 0;
}

/* Fills the set from the work events; -1 when out of memory. */
static int build(hta_stream_work_set *set, const hta_trace *t, const uint8_t *is_work)
{
    size_t n = count_work(t, is_work), cap = n ? n : 1;
    work_order by = {hta_large_calloc(cap, sizeof *by.keys), hta_large_malloc(cap * sizeof *by.order),
                     hta_large_malloc(cap * sizeof *by.events)};
    set->storage = hta_large_malloc(cap * sizeof *set->storage);
    int rc = by.keys && by.order && by.events && set->storage ? 0 : -1;
    if (rc == 0)
        rc = collect_work(t, is_work, set, n, &by);
    if (rc == 0 && !(set->streams = malloc((count_streams(set->storage, n) + 1) *
                                           sizeof *set->streams)))
        rc = -1;
    if (rc == 0)
        rc = split_streams(set, n, &by);
    free(by.keys);
    free(by.order);
    free(by.events);
    return rc;
}

int hta_stream_work_build(hta_stream_work_set *set, const hta_trace *t)
{
    memset(set, 0, sizeof *set);
    uint8_t *is_work = malloc(t->categories.count + 1);
    if (!is_work)
        return -1;
    for (uint32_t c = 0; c < t->categories.count; c++)
        is_work[c] = (uint8_t)is_work_category(hta_strtab_get(&t->categories, c));
    int rc = build(set, t, is_work);
    free(is_work);
    if (rc)
        hta_stream_work_free(set);
    return rc;
}

void hta_stream_work_free(hta_stream_work_set *set)
{
    free(set->streams);
    free(set->storage);
    memset(set, 0, sizeof *set);
}
