/* stream_work.c: per-stream GPU work in HTA's order (see
 * model/stream_work.h).
 *
 * Events are grouped by stream keeping trace order (what HTA's boolean
 * selection of one stream keeps), then each stream is ordered by start
 * with numpy's quicksort permutation, so that events starting together
 * get the predecessor HTA gives them.  Both orders are stable radix sorts
 * (numpy's permutation differs from a stable one only among equal starts,
 * so it runs only for a stream that has some).  Memory decides the
 * shape: the grouping sorts the event pointers themselves, with one array of them as
 * scratch, and the start-order scratch is sized by the longest stream and
 * allocated only for a stream not already in start order. */
#include "model/stream_work.h"
#include "numerics/argsort.h"
#include "numerics/radix_sort.h"
#include "numerics/stats.h"
#include "util/large_alloc.h"

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

/* Scratch for ordering the events of one stream by start, allocated for
 * the longest stream when a stream first needs it. */
typedef struct work_order {
    size_t capacity;
    int64_t *keys;
    size_t *order;
    const hta_event **events;
} work_order;

static unsigned stream_byte(const hta_event *e, int shift)
{
    return (e->stream >> shift) & 255;
}

/* The work events into set->storage in stream, then trace order: a stable
 * LSD radix sort of the trace-order events by stream, one byte per pass,
 * skipping the bytes on which every stream agrees.  -1 when out of memory. */
static int collect_work(const hta_trace *t, const uint8_t *is_work, hta_stream_work_set *set,
                        size_t n)
{
    const hta_event **from = set->storage, **to;
    uint32_t differ = 0;
    for (size_t i = 0, k = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        if (hta_event_is_gpu(e) && is_work[e->cat]) {
            from[k++] = e;
            differ |= e->stream ^ from[0]->stream;
        }
    }
    if (differ == 0)
        return 0;
    const hta_event **scratch = to = hta_large_malloc(n * sizeof *to);
    if (!scratch)
        return -1;
    for (int shift = 0; shift < 32; shift += 8) {
        if (((differ >> shift) & 255) == 0)
            continue;
        size_t slot[257] = {0};
        for (size_t i = 0; i < n; i++)
            slot[stream_byte(from[i], shift) + 1]++;
        for (unsigned b = 0; b < 256; b++)
            slot[b + 1] += slot[b];
        for (size_t i = 0; i < n; i++)
            to[slot[stream_byte(from[i], shift)]++] = from[i];
        const hta_event **swap = from;
        from = to, to = swap;
    }
    if (from != set->storage)
        memcpy(set->storage, from, n * sizeof *from);
    free(scratch);
    return 0;
}

static int has_equal_neighbours(const int64_t *sorted, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (sorted[i] == sorted[i - 1])
            return 1;
    return 0;
}

static int starts_increase(const hta_event **events, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (events[i]->ts_ns <= events[i - 1]->ts_ns)
            return 0;
    return 1;
}

/* Reorders one stream's events by start as pandas' sort_values does.
 * Without equal starts every sort gives numpy's order, and a radix sort
 * is the cheapest; with them numpy's own algorithm decides.  A stream
 * already in start order (the usual case) needs neither.  -1 when out of
 * memory. */
static int order_by_start(const hta_event **events, size_t n, work_order *by)
{
    if (starts_increase(events, n))
        return 0;
    if (!by->keys && !(by->keys = hta_large_malloc(by->capacity * sizeof *by->keys)))
        return -1;
    if (!by->order && !(by->order = hta_large_malloc(by->capacity * sizeof *by->order)))
        return -1;
    if (!by->events && !(by->events = hta_large_malloc(by->capacity * sizeof *by->events)))
        return -1;
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

/* The number of streams of the grouped events, and the longest's length. */
static size_t count_streams(const hta_event **events, size_t n, size_t *longest)
{
    size_t streams = 0;
    *longest = 0;
    for (size_t begin = 0, end; begin < n; begin = end, streams++) {
        for (end = begin + 1; end < n && events[end]->stream == events[begin]->stream;)
            end++;
        *longest = end - begin > *longest ? end - begin : *longest;
    }
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
    size_t n = count_work(t, is_work);
    work_order by = {0};
    set->storage = hta_large_malloc((n ? n : 1) * sizeof *set->storage);
    int rc = set->storage ? collect_work(t, is_work, set, n) : -1;
    if (rc == 0 && !(set->streams = malloc((count_streams(set->storage, n, &by.capacity) + 1) *
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
