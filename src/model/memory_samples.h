/* model/memory_samples.h: the allocator's [memory] instant events.
 *
 * With profile_memory=True, Kineto writes an instant event named
 * "[memory]" at every allocation and free, with the allocator's totals
 * after it.  They are not complete events, so they live beside the event
 * array, in file order, each in 40 bytes; a trace without them pays
 * nothing but the test of an instant event's name. */
#ifndef HTA_MEMORY_SAMPLES_H
#define HTA_MEMORY_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

typedef struct hta_memory_sample {
    int64_t ts_ns;
    int64_t total_allocated;   /* bytes; -1 when absent */
    int64_t total_reserved;    /* bytes; -1 when absent */
    int64_t bytes;             /* this allocation (> 0) or free (< 0) */
    int32_t device;            /* "Device Id", -1 when absent */
    int32_t device_type;       /* "Device Type" (0 CPU, 1 CUDA), -1 when absent */
} hta_memory_sample;

typedef struct hta_memory_samples {
    hta_memory_sample *of;     /* owned */
    size_t n, cap;
} hta_memory_samples;

void hta_memory_samples_free(hta_memory_samples *m);
/* 0, or -1 when out of memory. */
int hta_memory_samples_push(hta_memory_samples *m, hta_memory_sample s);
/* Appends from's samples to into's: 0, or -1 when out of memory. */
int hta_memory_samples_append(hta_memory_samples *into, const hta_memory_samples *from);

#endif
