/* hta/trace.h: one rank's trace as compact event arrays.
 *
 * The reader keeps only complete events ("ph":"X" with "cat" and "dur") and
 * stores each in a fixed 40-byte record with integer nanosecond times, so
 * nanosecond-resolution traces lose nothing and memory is a small fraction
 * of the JSON size.  Rare per-event payloads (memory-copy bandwidth, NCCL
 * process group) live in side arrays indexed by hta_event.aux. */
#ifndef HTA_TRACE_H
#define HTA_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "hta/strtab.h"

typedef enum hta_kernel_type {
    HTA_KT_COMPUTATION = 0,
    HTA_KT_COMMUNICATION = 1,
    HTA_KT_MEMORY = 2,
    HTA_KT_OTHER = 3,
} hta_kernel_type;

enum {
    HTA_EVENT_GPU = 1,         /* args.stream present and numeric */
    HTA_EVENT_HAS_COPY = 2,    /* aux indexes trace->copies */
};

#define HTA_NO_CORRELATION (-1)

typedef struct hta_event {
    int64_t ts_ns;
    int64_t dur_ns;
    int64_t correlation;       /* HTA_NO_CORRELATION when absent */
    uint32_t stream;           /* GPU events only */
    uint32_t name;             /* id in trace->names */
    uint32_t aux;              /* index into a side array, see flags */
    uint16_t cat;              /* id in trace->categories */
    uint8_t flags;
    uint8_t kernel_type;       /* hta_kernel_type, GPU events only */
} hta_event;

/* Memory copy/set payload: args["memory bandwidth (GB/s)"] and args.bytes. */
typedef struct hta_copy_info {
    double bandwidth_gbps;     /* NaN when absent */
    int64_t bytes;             /* -1 when absent */
} hta_copy_info;

typedef enum hta_rank_source {
    HTA_RANK_FROM_DISTRIBUTED_INFO = 0,
    HTA_RANK_FROM_FILE_NAME = 1,
    HTA_RANK_FALLBACK = 2,
} hta_rank_source;

typedef struct hta_trace {
    hta_event *events;         /* owned */
    size_t n_events, cap_events;
    hta_copy_info *copies;     /* owned */
    size_t n_copies, cap_copies;
    hta_strtab names;
    hta_strtab categories;
    int64_t rank;              /* distributedInfo.rank, -1 when absent */
    int64_t world_size;        /* distributedInfo.world_size, -1 when absent */
    uint64_t json_bytes;       /* uncompressed bytes read */
    uint64_t skipped_events;   /* "X" events not analysed: no cat, ts or dur, or
                                  out of bounds (docs/robustness.md) */
    int fractional_ts;         /* some ts was written with a fraction */
} hta_trace;

void hta_trace_init(hta_trace *t);
void hta_trace_free(hta_trace *t);

/* Makes room for n events at once, before the first is pushed; best
 * effort (pushing grows the array as usual past n or when this fails).
 * The reader sizes it from the input so that the array is neither copied
 * nor remapped while it fills, and backs it with huge pages: faulting a
 * growing array in page by page was a quarter of the parse time of a
 * 50 MB trace on this project's VMs. */
void hta_trace_reserve_events(hta_trace *t, size_t n);
/* Appends a zeroed event and returns it, or NULL when out of memory. */
hta_event *hta_trace_push_event(hta_trace *t);
/* Gives the event array's unused capacity back (growth by half leaves up
 * to a third of it unused; the step filter frees more), for the analyses
 * to use. */
void hta_trace_shrink(hta_trace *t);
/* Appends a copy record and returns its index, or -1 when out of memory. */
long hta_trace_push_copy(hta_trace *t, hta_copy_info info);

static inline int hta_event_is_gpu(const hta_event *e)
{
    return e->flags & HTA_EVENT_GPU;
}

static inline int64_t hta_event_end(const hta_event *e)
{
    return e->ts_ns + e->dur_ns;
}

static inline const char *hta_event_name(const hta_trace *t, const hta_event *e)
{
    return hta_strtab_get(&t->names, e->name);
}

static inline const char *hta_event_category(const hta_trace *t, const hta_event *e)
{
    return hta_strtab_get(&t->categories, e->cat);
}

/* Kernel type of a GPU event name (definitions section 3). */
hta_kernel_type hta_classify_kernel(const char *name);
const char *hta_kernel_type_name(hta_kernel_type type);

#endif
