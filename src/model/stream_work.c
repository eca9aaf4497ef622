/* stream_work.c: per-stream GPU work in HTA's order (see
 * hta/stream_work.h).
 *
 * Events are grouped by stream keeping trace order (what HTA's boolean
 * selection of one stream keeps), then each stream is ordered by start
 * with numpy's quicksort permutation, so that events starting together
 * get the predecessor HTA gives them. */
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

/* Stream, then trace order: pointers into one array order like indices. */
static int compare_stream_then_position(const void *a, const void *b)
{
    const hta_event *x = *(const hta_event *const *)a, *y = *(const hta_event *const *)b;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    return (x > y) - (x < y);
}

/* The work events in stream, then trace order; -1 when out of memory. */
static long collect_work(const hta_trace *t, const hta_event **out)
{
    uint8_t *is_work = malloc(t->categories.count + 1);
    if (!is_work)
        return -1;
    for (uint32_t c = 0; c < t->categories.count; c++)
        is_work[c] = (uint8_t)is_work_category(hta_strtab_get(&t->categories, c));
    size_t n = 0;
    for (size_t i = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        if (hta_event_is_gpu(e) && is_work[e->cat])
            out[n++] = e;
    }
    free(is_work);
    qsort(out, n, sizeof *out, compare_stream_then_position);
    return (long)n;
}

/* Reorders one stream's events by start as pandas' sort_values does. */
static void order_by_start(const hta_event **events, size_t n, int64_t *keys,
                           size_t *order, const hta_event **scratch)
{
    for (size_t i = 0; i < n; i++) {
        keys[i] = events[i]->ts_ns;
        scratch[i] = events[i];
    }
    hta_argsort_like_numpy(keys, n, order);
    for (size_t i = 0; i < n; i++)
        events[i] = scratch[order[i]];
}

static size_t count_streams(const hta_event **events, size_t n)
{
    size_t streams = 0;
    for (size_t i = 0; i < n; i++)
        streams += i == 0 || events[i]->stream != events[i - 1]->stream;
    return streams;
}

/* Cuts the grouped events into streams, each ordered by start. */
static void split_streams(hta_stream_work_set *set, size_t n, int64_t *keys, size_t *order,
                          const hta_event **scratch)
{
    const hta_event **ev = set->storage;
    for (size_t begin = 0, end; begin < n; begin = end) {
        for (end = begin + 1; end < n && ev[end]->stream == ev[begin]->stream;)
            end++;
        order_by_start(ev + begin, end - begin, keys, order, scratch);
        set->streams[set->n_streams++] =
            (hta_stream_work){.stream = ev[begin]->stream, .events = ev + begin, .n = end - begin};
    }
}

int hta_stream_work_build(hta_stream_work_set *set, const hta_trace *t)
{
    memset(set, 0, sizeof *set);
    size_t cap = t->n_events ? t->n_events : 1;
    set->storage = malloc(cap * sizeof *set->storage);
    const hta_event **scratch = malloc(cap * sizeof *scratch);
    int64_t *keys = malloc(cap * sizeof *keys);
    size_t *order = malloc(cap * sizeof *order);
    long n = set->storage && scratch && keys && order ? collect_work(t, set->storage) : -1;
    if (n >= 0)
        set->streams = malloc((count_streams(set->storage, (size_t)n) + 1) * sizeof *set->streams);
    if (set->streams)
        split_streams(set, (size_t)n, keys, order, scratch);
    free(scratch);
    free(keys);
    free(order);
    if (!set->streams) {
        hta_stream_work_free(set);
        return -1;
    }
    return 0;
}

void hta_stream_work_free(hta_stream_work_set *set)
{
    free(set->streams);
    free(set->storage);
    memset(set, 0, sizeof *set);
}
