/* written_trace/counter_tracks.h: the counter tracks a written trace
 * gets (private to written_trace/): each step's share of compute,
 * communication, overlap and idle time, the queue length per stream and
 * the memory bandwidth per copy name.
 *
 * The queue length is analysis/step_series' series (the rule shared with
 * /queue_length; see step_series.h for the critical path's own count),
 * sampled once per time: the value after all of a time's steps, which no
 * order of tied steps changes.  The bandwidth keeps the written trace's
 * own rule: per copy event name (HTA's memory_bw series is per copy
 * kind, the name's first 11 characters), a copy without a duration left
 * out rather than counted as 1 us, ends before starts at one time and no
 * clamp at zero; its tracks were published so, and moving them to HTA's
 * rule would change every written trace with copies. */
#ifndef HTA_COUNTER_TRACKS_H
#define HTA_COUNTER_TRACKS_H

#include <stddef.h>
#include <stdint.h>

#include "model/rank_view.h"
#include "written_trace/trace_sink.h"

typedef struct wt_step_share {
    int64_t start, end;
    double compute, communication, overlap, empty;
} wt_step_share;

typedef struct wt_shares {
    wt_step_share *items;
    size_t n, cap;
} wt_shares;

/* Adds the shares of the window [a, b) (nothing when it is empty): 0, or
 * -1 when out of memory. */
int wt_shares_add(wt_shares *s, const hta_rank_view *v, int64_t a, int64_t b);

void wt_put_shares(wt_sink *o, int *first, const wt_shares *s);

/* The queue length per stream, then the bandwidth per copy name; -1 when
 * out of memory. */
int wt_put_queue_lengths(wt_sink *o, int *first, const hta_rank_view *v);
int wt_put_bandwidths(wt_sink *o, int *first, const hta_rank_view *v);

#endif
