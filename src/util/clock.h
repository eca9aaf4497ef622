/* util/clock.h: the one clock for durations and deadlines. */
#ifndef HTA_CLOCK_H
#define HTA_CLOCK_H

/* CLOCK_MONOTONIC in seconds: immune to wall-clock changes mid-run. */
double hta_monotonic_seconds(void);

#endif
