/* profiler_steps.c: ProfilerStep#N ranges (see model/profiler_steps.h). */
#include "model/profiler_steps.h"

#include "numerics/bounds.h"
#include "util/grow.h"

#include <stdlib.h>
#include <string.h>

#define STEP_PREFIX "ProfilerStep#"

static int compare_start(const void *a, const void *b)
{
    const hta_profiler_step *x = a, *y = b;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static int compare_number(const void *a, const void *b)
{
    const hta_profiler_step *x = a, *y = b;
    return (x->number > y->number) - (x->number < y->number);
}

/* One range per step number: a trace may record ProfilerStep#N more than
 * once (on two threads, or nested), and exports keep one of them. */
static void merge_same_numbers(hta_profiler_steps *s)
{
    qsort(s->steps, s->n, sizeof *s->steps, compare_number);
    size_t out = 0;
    for (size_t i = 0; i < s->n; i++) {
        hta_profiler_step *last = out ? &s->steps[out - 1] : NULL;
        if (last && last->number == s->steps[i].number) {
            last->start_ns = s->steps[i].start_ns < last->start_ns ? s->steps[i].start_ns
                                                                   : last->start_ns;
            last->end_ns = s->steps[i].end_ns > last->end_ns ? s->steps[i].end_ns : last->end_ns;
        } else {
            s->steps[out++] = s->steps[i];
        }
    }
    s->n = out;
}

int hta_profiler_steps_find(hta_profiler_steps *s, const hta_trace *t)
{
    *s = (hta_profiler_steps){0};
    size_t prefix = strlen(STEP_PREFIX), cap = 0, any = 0;
    /* Names are tested once each, not once per event. */
    unsigned char *is_step = calloc(t->names.count ? t->names.count : 1, 1);
    if (!is_step)
        return -1;
    for (uint32_t id = 0; id < t->names.count; id++)
        any += is_step[id] = strncmp(hta_strtab_get(&t->names, id), STEP_PREFIX, prefix) == 0;
    for (size_t i = 0; any && i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        if (hta_event_is_gpu(e) || !is_step[e->name])
            continue;
        const char *name = hta_event_name(t, e);
        if (hta_grow_array((void **)&s->steps, &cap, s->n + 1, sizeof *s->steps)) {
            free(is_step);
            hta_profiler_steps_free(s);
            return -1;
        }
        s->steps[s->n++] = (hta_profiler_step){strtoll(name + prefix, NULL, 10), e->ts_ns,
                                               hta_event_end(e)};
    }
    free(is_step);
    if (s->n) {
        merge_same_numbers(s);
        qsort(s->steps, s->n, sizeof *s->steps, compare_start);
    }
    return 0;
}

void hta_profiler_steps_free(hta_profiler_steps *s)
{
    free(s->steps);
    *s = (hta_profiler_steps){0};
}

/* Whether lo is the number of steps starting at or before ts (the steps
 * are by start, so that number is the one lo for which this holds). */
static int is_upper_bound(const hta_profiler_steps *s, int64_t ts, size_t lo)
{
    return lo <= s->n && (lo == 0 || s->steps[lo - 1].start_ns <= ts) &&
           (lo == s->n || s->steps[lo].start_ns > ts);
}

long hta_profiler_step_at(const hta_profiler_steps *s, int64_t ts, size_t *cursor)
{
    size_t lo = *cursor;
    if (!is_upper_bound(s, ts, lo) && !is_upper_bound(s, ts, ++lo))
        lo = HTA_UPPER_BOUND(s->steps, s->n, start_ns, ts);
    *cursor = lo;
    return lo > 0 && ts < s->steps[lo - 1].end_ns ? (long)lo - 1 : -1;
}

long hta_profiler_step_of(const hta_profiler_steps *s, const hta_rank_view *view,
                          const hta_event *gpu, size_t *cursor)
{
    const hta_event *launch = s->n ? hta_rank_view_launch(view, gpu) : NULL;
    return launch ? hta_profiler_step_at(s, launch->ts_ns, cursor) : -1;
}
