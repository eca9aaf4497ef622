/* model/profiler_steps.h: a rank's ProfilerStep#N ranges on the CPU, and
 * the step whose CPU range launched a GPU event (HTA's rule for its
 * last-step filter: GPU work belongs to the step that launched it). */
#ifndef HTA_PROFILER_STEPS_H
#define HTA_PROFILER_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "model/rank_view.h"

typedef struct hta_profiler_step {
    int64_t number;            /* N of ProfilerStep#N */
    int64_t start_ns, end_ns;
} hta_profiler_step;

typedef struct hta_profiler_steps {
    hta_profiler_step *steps;  /* owned, by start */
    size_t n;
} hta_profiler_steps;

/* The trace's ProfilerStep#N CPU events, one range per N (the union of
 * its events' ranges): 0, or -1 when out of memory. */
int hta_profiler_steps_find(hta_profiler_steps *s, const hta_trace *trace);
void hta_profiler_steps_free(hta_profiler_steps *s);
/* Index of the step whose CPU range holds ts, or -1.  *cursor (0 at
 * first) keeps where the last lookup ended: lookups in time order then
 * cost a comparison or two instead of a binary search. */
long hta_profiler_step_at(const hta_profiler_steps *s, int64_t ts, size_t *cursor);
/* Index of the step that launched gpu (its launch by correlation), or -1;
 * *cursor as for hta_profiler_step_at. */
long hta_profiler_step_of(const hta_profiler_steps *s, const hta_rank_view *view,
                          const hta_event *gpu, size_t *cursor);

#endif
