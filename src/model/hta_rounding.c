/* hta_rounding.c: HTA's rounding of fractional timestamps (see
 * hta_round_like_hta in model/hta_rounding.h).  HTA applies it whenever the ts
 * column is floating point, because pytorch/pytorch#122425 made events
 * overlap by fractions of a microsecond; hta-mpi keeps nanoseconds by
 * default and does this only to reproduce HTA exactly.  Shrinking every
 * event widens every gap, so HTA reports more idle time than there was. */
#include "model/hta_rounding.h"

#include <math.h>

/* The float64 HTA holds for a microsecond value: whole part exact, one
 * rounding for the fraction, as Python's float() of the JSON text. */
static double as_hta_double(int64_t ns)
{
    return (double)(ns / 1000) + (double)(ns % 1000) / 1000.0;
}

void hta_round_like_hta(hta_trace *t)
{
    if (!t->fractional_ts)
        return;
    for (size_t i = 0; i < t->n_events; i++) {
        hta_event *e = &t->events[i];
        /* Same float64 arithmetic as HTA: at 1.7e15 us a double resolves
         * only 0.25 us, and HTA's ceil/floor see those rounded values. */
        double ts = as_hta_double(e->ts_ns);
        int64_t start = (int64_t)ceil(ts) * 1000;
        int64_t end = (int64_t)floor(ts + as_hta_double(e->dur_ns)) * 1000;
        e->ts_ns = start;
        e->dur_ns = end - start; /* negative for sub-microsecond events, as in HTA */
    }
}
