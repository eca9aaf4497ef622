/* parse/trace_builder.h: appending records from a non-JSON source to a trace.
 *
 * The SQLite and CSV readers build the same trace the Kineto reader does:
 * the same categories and names, the same rule for records that cannot be
 * analysed (skipped and counted, docs/robustness.md), the same flags and
 * extras.  Kernel types are classified once per name. */
#ifndef HTA_TRACE_BUILDER_H
#define HTA_TRACE_BUILDER_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "model/trace.h"

#define HTA_BUILDER_MAX_DEVICES 64
#define HTA_BUILDER_MAX_BLOCKS 8

typedef struct hta_trace_builder {
    hta_trace *trace;          /* borrowed */
    uint8_t *kernel_types;     /* owned: per name id, hta_kernel_type + 1, 0 = not yet */
    size_t n_kernel_types;
    int64_t devices[HTA_BUILDER_MAX_DEVICES]; /* distinct GPU devices seen */
    size_t n_devices;
    size_t blocks[HTA_BUILDER_MAX_BLOCKS + 1]; /* first event of each GPU table */
    size_t n_blocks;
    regex_t step_regex;        /* with has_step_regex: annotations that are steps */
    int has_step_regex;
    uint64_t n_steps;
} hta_trace_builder;

/* How the SQLite and CSV readers read. */
typedef struct hta_builder_options {
    double timeout_seconds;    /* > 0: give up beyond it */
    const char *step_regex;    /* NULL, or a POSIX extended regex (--step-regex) */
    int one_device;            /* Nsight exports: read only `device` (and its processes) */
    long long device;
} hta_builder_options;

/* One record in the model's terms. */
typedef struct hta_record {
    int64_t ts_ns, end_ns;     /* as read; an input giving a duration: hta_span_end */
    int64_t correlation;       /* HTA_NO_CORRELATION when absent */
    int is_gpu;                /* has a stream: a GPU event */
    int64_t stream;
    int has_copy;              /* bytes are known: bandwidth = bytes / duration */
    int64_t bytes;
} hta_record;

/* -1 when step_regex (NULL: none) does not compile. */
int hta_trace_builder_init(hta_trace_builder *b, hta_trace *t, const char *step_regex);
void hta_trace_builder_free(hta_trace_builder *b);

/* Interned ids; UINT32_MAX when out of memory. */
uint32_t hta_trace_builder_name(hta_trace_builder *b, const char *s, size_t len);
uint32_t hta_trace_builder_category(hta_trace_builder *b, const char *cat);

/* The interned name of a user annotation: a range that step_regex matches
 * is a step, named "ProfilerStep#N" (N counting the steps from 1) as the
 * PyTorch profiler names them, so the step filter finds it.  UINT32_MAX
 * when out of memory. */
uint32_t hta_trace_builder_annotation(hta_trace_builder *b, const char *s, size_t len);

/* Appends the record, or counts it in skipped_events when its times are
 * out of the analysable bounds (model/event_bounds.h), whatever they are.
 * -1 when out of memory. */
int hta_trace_builder_add(hta_trace_builder *b, uint32_t name, uint32_t cat,
                          const hta_record *r);

/* GPU records come table by table (kernels, copies, sets, ...), each
 * table in its own order; Kineto writes them interleaved in about time
 * order, and HTA's queue and bandwidth series break ties by that order.
 * The readers read every GPU table first, calling begin_gpu_table before
 * each, then merge_gpu_tables once: the tables are merged by start time,
 * each keeping its own order, so the GPU records end up in the order
 * Kineto gives them whenever Kineto's is by start.  -1 when out of
 * memory. */
void hta_trace_builder_begin_gpu_table(hta_trace_builder *b);
int hta_trace_builder_merge_gpu_tables(hta_trace_builder *b);

/* Notes the device of a GPU record (the model has no device: every GPU
 * record of a trace counts as the rank's). */
void hta_trace_builder_device(hta_trace_builder *b, int64_t device);

/* Adds text to notes (one line, "; " between notes): what an input lacks
 * for some analysis, for /ranks.input_notes. */
void hta_notes_add(hta_error *notes, const char *text);

/* When records came from several devices, a note saying so. */
void hta_trace_builder_device_note(const hta_trace_builder *b, hta_error *notes);

#endif
