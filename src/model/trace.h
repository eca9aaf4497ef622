/* model/trace.h: one rank's trace as compact event arrays.
 *
 * The reader keeps only complete events ("ph":"X" with "cat" and "dur") and
 * stores each in a fixed 32-byte record with integer nanosecond times, so
 * nanosecond-resolution traces lose nothing and the events take about a
 * thirtieth of the JSON (the largest share of a rank's memory).  What few
 * events carry beyond that record (a memory copy's bandwidth and bytes, a
 * correlation id outside 32 bits) lives in a side array of extras, sorted
 * by event index and found by binary search.
 *
 * A CPU event's record has two fields a GPU event needs and it does not,
 * and they carry the CPU side at no cost per event: `stream` holds its
 * context, an id in trace->cpu_contexts (pid, tid, Input Dims and Input
 * type, interned together: a trace has few distinct ones, see
 * model/cpu_context.h), and an event without a correlation (a cpu_op, an
 * annotation) keeps its External id in `correlation`, flagged
 * EXTERNAL_ID.  A runtime event keeps its correlation; its External id is
 * its enclosing op's. */
#ifndef HTA_TRACE_H
#define HTA_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "model/classify.h"
#include "model/comm_meta.h"
#include "model/memory_samples.h"
#include "util/strtab.h"

enum {
    HTA_EVENT_GPU = 1,         /* args.stream present and numeric */
    HTA_EVENT_HAS_COPY = 2,    /* its extra holds bandwidth and bytes */
    HTA_EVENT_WIDE_CORRELATION = 4, /* its extra holds the correlation */
    HTA_EVENT_EXTERNAL_ID = 8, /* CPU event: correlation holds its External id */
    HTA_EVENT_HAS_WAIT = 16,   /* its extra holds a cuda_sync event's wait args */
};

#define HTA_NO_CORRELATION (-1)
/* Joins a CPU context's fields: a byte JSON text never holds raw. */
#define HTA_CONTEXT_SEPARATOR '\x01'

typedef struct hta_event {
    int64_t ts_ns;
    int64_t dur_ns;
    int32_t correlation;       /* read it with hta_event_correlation */
    uint32_t stream;           /* GPU events; a CPU event's context (see above) */
    uint32_t name;             /* id in trace->names */
    uint16_t cat;              /* id in trace->categories */
    uint8_t flags;
    uint8_t kernel_type;       /* hta_kernel_type, GPU events only */
} hta_event;

/* The payload of an event flagged HAS_COPY, WIDE_CORRELATION or HAS_WAIT. */
typedef struct hta_event_extra {
    size_t event;              /* index in trace->events */
    int64_t correlation;       /* WIDE_CORRELATION */
    double bandwidth_gbps;     /* HAS_COPY: args["memory bandwidth (GB/s)"], NaN when absent */
    int64_t bytes;             /* HAS_COPY: args.bytes, -1 when absent */
    /* HAS_WAIT: args.wait_on_stream and wait_on_cuda_event_record_corr_id
     * (the cudaEventRecord a sync waits for), -1 when absent. */
    int64_t wait_on_stream, wait_record_correlation;
} hta_event_extra;

/* A CUPTI range-profiler event (cat "cuda_profiler_range"): one kernel's
 * run with its performance counters, which the event carries as numeric
 * args (read when "cat" comes before "args", as Kineto writes them). */
typedef struct hta_profiler_range {
    int64_t ts_ns, dur_ns;
    uint32_t name;             /* id in trace->names: the kernel */
    uint32_t first_counter;    /* its counters in trace->range_counters */
    uint32_t n_counters;
} hta_profiler_range;

typedef struct hta_range_counter {
    uint32_t counter;          /* id in trace->counter_names */
    double value;
} hta_range_counter;

typedef struct hta_trace {
    hta_event *events;         /* owned */
    size_t n_events, cap_events;
    hta_event_extra *extras;   /* owned, ascending by event */
    size_t n_extras, cap_extras;
    hta_strtab names;
    hta_strtab categories;
    /* A CPU event's pid, tid, Input Dims and Input type (JSON text as
     * written; empty when absent), joined by HTA_CONTEXT_SEPARATOR, by the
     * event's context id. */
    hta_strtab cpu_contexts;
    hta_memory_samples memory; /* [memory] instant events, file order */
    hta_profiler_range *ranges; /* owned, in trace order */
    size_t n_ranges, cap_ranges;
    hta_range_counter *range_counters; /* owned */
    size_t n_range_counters, cap_range_counters;
    hta_strtab counter_names;
    int64_t rank;              /* distributedInfo.rank, -1 when absent */
    int64_t world_size;        /* distributedInfo.world_size, -1 when absent */
    char device_name[96];      /* deviceProperties[0].name, "" when absent */
    char host[64];             /* the host an Nsight export recorded, "" when absent */
    uint64_t json_bytes;       /* uncompressed bytes read */
    uint64_t skipped_events;   /* "X" events not analysed: no cat, ts or dur, or
                                  out of bounds (docs/robustness.md) */
    int fractional_ts;         /* some ts was written with a fraction */
    hta_comm_set comm;         /* collective metadata (model/comm_meta.h) */
} hta_trace;

void hta_trace_init(hta_trace *t);
void hta_trace_free(hta_trace *t);

/* Makes room for `events` more events and `extras` more extras at once:
 * 0, or -1 when out of memory.  The reader sizes the event array from the
 * input, best effort, so that it is neither copied nor remapped while it
 * fills (pushing grows it as usual past that), on huge pages: faulting a
 * growing array in page by page is a large share of a parse's time.  The
 * split parse reserves the places
 * of a part's events and extras before it copies them. */
int hta_trace_reserve(hta_trace *t, size_t events, size_t extras);
/* Appends a zeroed event and returns it, or NULL when out of memory. */
hta_event *hta_trace_push_event(hta_trace *t);
/* Gives the event array's unused capacity back (growth by half leaves up
 * to a third of it unused; the step filter frees more), for the analyses
 * to use. */
void hta_trace_shrink(hta_trace *t);
/* Appends the extra of the last pushed event, which gets `flags`: 0, or
 * -1 when out of memory. */
int hta_trace_push_extra(hta_trace *t, hta_event_extra extra, uint8_t flags);
/* Appends a counter of the range being read: 0, or -1 when out of memory. */
int hta_trace_push_range_counter(hta_trace *t, const char *name, size_t len, double value);
/* Appends the range of the last pushed event, with the counters pushed
 * since first_counter: 0, or -1 when out of memory. */
int hta_trace_push_range(hta_trace *t, size_t first_counter);
/* Appends a range whose counters are in place (the split parse's merge). */
int hta_trace_add_range(hta_trace *t, hta_profiler_range range);
/* The extra of an event of t flagged HAS_COPY, WIDE_CORRELATION or HAS_WAIT. */
const hta_event_extra *hta_trace_extra(const hta_trace *t, const hta_event *e);

static inline int hta_event_is_gpu(const hta_event *e)
{
    return e->flags & HTA_EVENT_GPU;
}

/* HTA_NO_CORRELATION when absent. */
static inline int64_t hta_event_correlation(const hta_trace *t, const hta_event *e)
{
    if (e->flags & (HTA_EVENT_WIDE_CORRELATION | HTA_EVENT_EXTERNAL_ID))
        return e->flags & HTA_EVENT_EXTERNAL_ID ? HTA_NO_CORRELATION
                                                : hta_trace_extra(t, e)->correlation;
    return e->correlation;
}

/* A CPU event's External id, or -1 (absent, beyond 32 bits, or a runtime
 * event, whose External id is its enclosing op's). */
static inline int64_t hta_event_external_id(const hta_event *e)
{
    return e->flags & HTA_EVENT_EXTERNAL_ID ? e->correlation : -1;
}

/* A CPU event's context id in trace->cpu_contexts. */
static inline uint32_t hta_event_cpu_context(const hta_event *e)
{
    return e->stream;
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

/* Nanoseconds to the microseconds every output column uses. */
static inline double hta_ns_to_us(int64_t ns)
{
    return (double)ns / 1000.0;
}

#endif
