/* model/stream_work.h: each stream's GPU work in the order HTA walks it.
 *
 * HTA's idle time breakdown takes, per stream, the GPU events of the
 * categories that occupy a stream (kernel, gpu_memcpy, gpu_memset, and the
 * legacy Kernel, Memcpy, Memset), in trace order, sorted by start with
 * pandas' unstable sort; each event's predecessor is the one before it in
 * that order.  The idle time breakdown and the launch pipelining both walk
 * events with their predecessor, so the order is built here, once. */
#ifndef HTA_STREAM_WORK_H
#define HTA_STREAM_WORK_H

#include <stddef.h>
#include <stdint.h>

#include "model/trace.h"

typedef struct hta_stream_work {
    uint32_t stream;
    const hta_event **events;  /* into the set's storage, HTA's order */
    size_t n;
} hta_stream_work;

typedef struct hta_stream_work_set {
    hta_stream_work *streams;  /* owned, ascending stream number */
    size_t n_streams;
    const hta_event **storage; /* owned */
} hta_stream_work_set;

/* -1 when out of memory. */
int hta_stream_work_build(hta_stream_work_set *set, const hta_trace *t);
void hta_stream_work_free(hta_stream_work_set *set);

#endif
