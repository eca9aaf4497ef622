/* counter_tracks.c: see written_trace/counter_tracks.h. */
#include "written_trace/counter_tracks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/step_series.h"
#include "model/interval.h"
#include "util/grow.h"

/* ---- shares per step --------------------------------------------------- */

/* Busy time of the merged list within [a, b). */
static int64_t within(const hta_interval *iv, size_t n, int64_t a, int64_t b)
{
    hta_interval w = {a, b};
    return hta_intervals_overlap(iv, n, &w, 1);
}

typedef struct window_sum {
    int64_t a, b, sum;
} window_sum;

static void add_clipped(void *ctx, int64_t start, int64_t end)
{
    window_sum *w = ctx;
    start = start > w->a ? start : w->a;
    end = end < w->b ? end : w->b;
    w->sum += end > start ? end - start : 0;
}

int wt_shares_add(wt_shares *s, const hta_rank_view *v, int64_t a, int64_t b)
{
    if (b <= a || hta_grow_array((void **)&s->items, &s->cap, s->n + 1, sizeof *s->items))
        return b <= a ? 0 : -1;
    const hta_type_unions *u = &v->unions;
    const hta_interval *comp = u->of[HTA_KT_COMPUTATION], *comm = u->of[HTA_KT_COMMUNICATION];
    size_t ncomp = u->n[HTA_KT_COMPUTATION], ncomm = u->n[HTA_KT_COMMUNICATION];
    window_sum both = {a, b, 0};
    hta_intervals_walk_intersection(comp, ncomp, comm, ncomm, add_clipped, &both);
    double span = (double)(b - a);
    double compute = (double)within(comp, ncomp, a, b),
           communication = (double)within(comm, ncomm, a, b);
    s->items[s->n++] = (wt_step_share){
        a, b, (compute - (double)both.sum) / span, (communication - (double)both.sum) / span,
        (double)both.sum / span, (span - compute - communication + (double)both.sum) / span};
    return 0;
}

void wt_put_shares(wt_sink *o, int *first, const wt_shares *sh)
{
    for (size_t i = 0; i < sh->n; i++) {
        const wt_step_share *s = &sh->items[i];
        char text[512];
        snprintf(text, sizeof text,
                 "{\"ph\":\"C\",\"cat\":\"hta_mpi\",\"name\":\"timeline share\",\"pid\":%d,"
                 "\"tid\":0,\"ts\":%.3f,\"args\":{\"compute\":%.6f,\"communication\":%.6f,"
                 "\"overlap\":%.6f,\"empty\":%.6f}}",
                 WT_ANALYSIS_PID, hta_ns_to_us(s->start), s->compute, s->communication, s->overlap,
                 s->empty);
        wt_put_event(o, first, text);
    }
}

/* ---- queue length ------------------------------------------------------ */

int wt_put_queue_lengths(wt_sink *o, int *first, const hta_rank_view *v)
{
    hta_step_series_set set;
    if (hta_queue_length_series(&set, v))
        return -1;
    char name[64];
    for (size_t s = 0; s < set.n_series; s++) {
        const hta_step_series *q = &set.series[s];
        snprintf(name, sizeof name, "queue length (stream %u)", q->stream);
        for (size_t i = 0; i < q->n; i++)
            if (i + 1 == q->n || q->points[i + 1].ts_ns != q->points[i].ts_ns)
                wt_put_counter(o, first, name, q->points[i].ts_ns, "queue length",
                               q->points[i].value);
    }
    hta_step_series_free(&set);
    return 0;
}

/* ---- memory bandwidth -------------------------------------------------- */

typedef struct change {
    uint32_t track;            /* stream or copy kind (name id) */
    int64_t ts;
    int order;                 /* increments before decrements at one time */
    double delta;
} change;

static int cmp_change(const void *a, const void *b)
{
    const change *x = a, *y = b;
    if (x->track != y->track)
        return x->track < y->track ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->order - y->order;
}

static const char *copy_label(const hta_rank_view *v, uint32_t name, char *buf, size_t cap)
{
    snprintf(buf, cap, "memory bandwidth (%s)", hta_strtab_get(&v->trace->names, name));
    return buf;
}

/* Emits a step function per track from its changes. */
static void put_track(wt_sink *o, int *first, change *ch, size_t n, const char *arg,
                      const hta_rank_view *v)
{
    qsort(ch, n, sizeof *ch, cmp_change);
    double value = 0;
    char name[512];
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || ch[i].track != ch[i - 1].track)
            value = 0;
        value += ch[i].delta;
        if (fabs(value) < 1e-9)
            value = 0;
        if (i + 1 < n && ch[i + 1].track == ch[i].track && ch[i + 1].ts == ch[i].ts)
            continue;          /* one sample per time */
        wt_put_counter(o, first, copy_label(v, ch[i].track, name, sizeof name), ch[i].ts, arg,
                       value);
    }
}

int wt_put_bandwidths(wt_sink *o, int *first, const hta_rank_view *v)
{
    change *ch = malloc((2 * v->n_gpu + 1) * sizeof *ch);
    if (!ch)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < v->n_gpu; i++) {
        const hta_event *g = v->gpu[i];
        if (!(g->flags & HTA_EVENT_HAS_COPY))
            continue;
        double bw = hta_trace_extra(v->trace, g)->bandwidth_gbps;
        if (isnan(bw) || g->dur_ns <= 0)
            continue;
        ch[n++] = (change){g->name, g->ts_ns, 1, bw};
        ch[n++] = (change){g->name, hta_event_end(g), 0, -bw};
    }
    put_track(o, first, ch, n, "GB/s", v);
    free(ch);
    return 0;
}
