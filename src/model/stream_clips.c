/* stream_clips.c: GPU work clipped at the next record on its stream (see
 * model/stream_clips.h).
 *
 * One pass in start order keeps each stream's last record in a small
 * open-addressing table by stream; a record that starts before its
 * stream's last one ends clips it. */
#include "model/stream_clips.h"

#include "util/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct last_on_stream {
    uint32_t stream;
    int used;
    size_t pos;                /* the stream's last record so far */
} last_on_stream;

typedef struct stream_table {
    last_on_stream *slot;
    size_t cap, n;             /* cap: a power of two */
} stream_table;

static last_on_stream *find_slot(stream_table *t, uint32_t stream)
{
    size_t i = (stream * 2654435761u) & (t->cap - 1);
    while (t->slot[i].used && t->slot[i].stream != stream)
        i = (i + 1) & (t->cap - 1);
    return &t->slot[i];
}

static int grow_table(stream_table *t)
{
    stream_table bigger = {calloc(t->cap * 2, sizeof *t->slot), t->cap * 2, t->n};
    if (!bigger.slot)
        return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slot[i].used)
            *find_slot(&bigger, t->slot[i].stream) = t->slot[i];
    free(t->slot);
    *t = bigger;
    return 0;
}

static int add_clip(hta_stream_clips *c, size_t pos, int64_t end, int64_t cut)
{
    if (hta_grow_array((void **)&c->clip, &c->cap, c->n + 1, sizeof *c->clip))
        return -1;
    c->clip[c->n++] = (hta_stream_clip){pos, end};
    c->clipped_ns += cut;
    return 0;
}

/* Records are clipped in the order their successors come, not their own. */
static int by_position(const void *a, const void *b)
{
    size_t x = ((const hta_stream_clip *)a)->at, y = ((const hta_stream_clip *)b)->at;
    return (x > y) - (x < y);
}

int hta_stream_clips_build(hta_stream_clips *c, const hta_event *const *gpu, size_t n,
                           uint32_t wait_cat)
{
    memset(c, 0, sizeof *c);
    stream_table t = {calloc(64, sizeof *t.slot), 64, 0};
    int rc = t.slot ? 0 : -1, sorted = 1;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const hta_event *e = gpu[i];
        if (e->cat == wait_cat)
            continue;
        last_on_stream *last = find_slot(&t, e->stream);
        if (last->used) {
            const hta_event *prev = gpu[last->pos];
            if (hta_event_end(prev) > e->ts_ns) {
                sorted &= c->n == 0 || c->clip[c->n - 1].at < last->pos;
                rc = add_clip(c, last->pos, e->ts_ns, hta_event_end(prev) - e->ts_ns);
            }
        } else {
            *last = (last_on_stream){e->stream, 1, 0};
            if (++t.n * 2 > t.cap && grow_table(&t))
                rc = -1;
            last = find_slot(&t, e->stream);
        }
        last->pos = i;
    }
    free(t.slot);
    if (rc == 0 && !sorted)
        qsort(c->clip, c->n, sizeof *c->clip, by_position);
    if (rc)
        hta_stream_clips_free(c);
    return rc;
}

void hta_stream_clips_free(hta_stream_clips *c)
{
    free(c->clip);
    memset(c, 0, sizeof *c);
}

int64_t hta_stream_clips_end(const hta_stream_clips *c, size_t pos, const hta_event *e)
{
    hta_stream_clip key = {pos, 0};
    const hta_stream_clip *found =
        c->n ? bsearch(&key, c->clip, c->n, sizeof *c->clip, by_position) : NULL;
    return found ? found->end : hta_event_end(e);
}

void hta_stream_clips_note(const hta_stream_clips *c, hta_error *notes)
{
    if (c->n == 0)
        return;
    size_t len = strlen(notes->text);
    snprintf(notes->text + len, sizeof notes->text - len,
             "%s%zu GPU records ran past the next on their stream: clipped at its start, "
             "%.3f us cut off (not in the tables that reproduce HTA)",
             len ? "; " : "", c->n, (double)c->clipped_ns / 1000.0);
}
