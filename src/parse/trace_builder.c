/* trace_builder.c: records from SQLite or CSV into the trace model (see
 * parse/trace_builder.h). */
#include "parse/trace_builder.h"

#include "model/classify.h"
#include "model/event_bounds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hta_trace_builder_init(hta_trace_builder *b, hta_trace *t, const char *step_regex)
{
    memset(b, 0, sizeof *b);
    b->trace = t;
    if (!step_regex)
        return 0;
    if (regcomp(&b->step_regex, step_regex, REG_EXTENDED | REG_NOSUB))
        return -1;
    b->has_step_regex = 1;
    return 0;
}

void hta_trace_builder_free(hta_trace_builder *b)
{
    free(b->kernel_types);
    if (b->has_step_regex)
        regfree(&b->step_regex);
    memset(b, 0, sizeof *b);
}

uint32_t hta_trace_builder_annotation(hta_trace_builder *b, const char *s, size_t len)
{
    if (b->has_step_regex && memchr(s, '\0', len) == NULL) {
        char *text = strndup(s, len);
        if (!text)
            return UINT32_MAX;
        int step = regexec(&b->step_regex, text, 0, NULL, 0) == 0;
        free(text);
        if (step) {
            char name[40];
            int n = snprintf(name, sizeof name, "ProfilerStep#%llu",
                             (unsigned long long)++b->n_steps);
            return hta_strtab_intern(&b->trace->names, name, (size_t)n);
        }
    }
    return hta_strtab_intern(&b->trace->names, s, len);
}

uint32_t hta_trace_builder_name(hta_trace_builder *b, const char *s, size_t len)
{
    return hta_strtab_intern(&b->trace->names, s, len);
}

uint32_t hta_trace_builder_category(hta_trace_builder *b, const char *cat)
{
    uint32_t id = hta_strtab_intern(&b->trace->categories, cat, strlen(cat));
    return id > UINT16_MAX ? UINT32_MAX : id;
}

static int kernel_type_of(hta_trace_builder *b, uint32_t name)
{
    if (name >= b->n_kernel_types) {
        size_t n = (size_t)name + 1 + b->n_kernel_types / 2;
        uint8_t *grown = realloc(b->kernel_types, n);
        if (!grown)
            return -1;
        memset(grown + b->n_kernel_types, 0, n - b->n_kernel_types);
        b->kernel_types = grown;
        b->n_kernel_types = n;
    }
    if (!b->kernel_types[name])
        b->kernel_types[name] =
            (uint8_t)(1 + hta_classify_kernel(hta_strtab_get(&b->trace->names, name)));
    return b->kernel_types[name] - 1;
}

int hta_trace_builder_add(hta_trace_builder *b, uint32_t name, uint32_t cat, const hta_record *r)
{
    hta_trace *t = b->trace;
    if (!hta_span_ends_analysable(r->ts_ns, r->end_ns)) {
        t->skipped_events++;
        return 0;
    }
    if (name == UINT32_MAX || cat == UINT32_MAX)
        return -1;
    hta_event *e = hta_trace_push_event(t);
    if (!e)
        return -1;
    e->ts_ns = r->ts_ns;
    e->dur_ns = r->end_ns - r->ts_ns;
    e->name = name;
    e->cat = (uint16_t)cat;
    if (r->ts_ns % 1000)
        t->fractional_ts = 1;
    if (r->is_gpu) {
        int type = kernel_type_of(b, name);
        if (type < 0)
            return -1;
        e->flags |= HTA_EVENT_GPU;
        e->stream = (uint32_t)r->stream;
        e->kernel_type = (uint8_t)type;
    }
    int narrow = r->correlation >= HTA_NO_CORRELATION && r->correlation <= INT32_MAX;
    e->correlation = narrow ? (int32_t)r->correlation : HTA_NO_CORRELATION;
    uint8_t flags = (uint8_t)((r->has_copy ? HTA_EVENT_HAS_COPY : 0) |
                              (narrow ? 0 : HTA_EVENT_WIDE_CORRELATION));
    if (!flags)
        return 0;
    /* GB/s is bytes per nanosecond, as Kineto computes it. */
    double bandwidth = r->has_copy && e->dur_ns > 0 ? (double)r->bytes / (double)e->dur_ns : NAN;
    hta_event_extra extra = {.correlation = r->correlation, .bandwidth_gbps = bandwidth,
                             .bytes = r->has_copy ? r->bytes : -1};
    return hta_trace_push_extra(t, extra, flags);
}

void hta_trace_builder_device(hta_trace_builder *b, int64_t device)
{
    for (size_t i = 0; i < b->n_devices; i++)
        if (b->devices[i] == device)
            return;
    if (b->n_devices < HTA_BUILDER_MAX_DEVICES)
        b->devices[b->n_devices++] = device;
}

void hta_notes_add(hta_error *notes, const char *text)
{
    size_t n = strlen(notes->text);
    snprintf(notes->text + n, sizeof notes->text - n, "%s%s", n ? "; " : "", text);
}

void hta_trace_builder_device_note(const hta_trace_builder *b, hta_error *notes)
{
    if (b->n_devices < 2)
        return;
    char note[HTA_ERROR_MAX];
    int n = snprintf(note, sizeof note, "%zu devices (", b->n_devices);
    for (size_t i = 0; i < b->n_devices && n > 0 && (size_t)n < sizeof note; i++)
        n += snprintf(note + n, sizeof note - (size_t)n, "%s%lld", i ? ", " : "",
                      (long long)b->devices[i]);
    if (n > 0 && (size_t)n < sizeof note)
        snprintf(note + n, sizeof note - (size_t)n,
                 ") in one file, analysed as one rank: streams are told apart by id only");
    hta_notes_add(notes, note);
}

void hta_trace_builder_begin_gpu_table(hta_trace_builder *b)
{
    if (b->n_blocks < HTA_BUILDER_MAX_BLOCKS)
        b->blocks[b->n_blocks++] = b->trace->n_events;
}

static int compare_extras(const void *x, const void *y)
{
    size_t a = ((const hta_event_extra *)x)->event, c = ((const hta_event_extra *)y)->event;
    return a < c ? -1 : a > c;
}

/* The merge order of events [0, n): new_of[old] = new index. */
static void merge_order(const hta_trace_builder *b, const hta_event *ev, size_t n,
                        size_t *new_of)
{
    size_t at[HTA_BUILDER_MAX_BLOCKS + 1], end[HTA_BUILDER_MAX_BLOCKS + 1];
    size_t k = b->n_blocks;
    for (size_t i = 0; i < k; i++) {
        at[i] = b->blocks[i];
        end[i] = i + 1 < k ? b->blocks[i + 1] : n;
    }
    for (size_t out = 0; out < n; out++) {
        size_t best = k;
        for (size_t i = 0; i < k; i++)
            if (at[i] < end[i] && (best == k || ev[at[i]].ts_ns < ev[at[best]].ts_ns))
                best = i;
        new_of[at[best]++] = out;
    }
}

/* Moves every event i to new_of[i], following the permutation's cycles
 * (new_of[i] becomes i once i's place is settled), so that no second event
 * array is needed. */
static void permute(hta_event *ev, size_t *new_of, size_t n)
{
    for (size_t start = 0; start < n; start++) {
        if (new_of[start] == start)
            continue;
        hta_event carried = ev[start];
        size_t to = new_of[start];
        new_of[start] = start;
        while (to != start) {
            hta_event displaced = ev[to];
            size_t next = new_of[to];
            ev[to] = carried;
            new_of[to] = to;
            carried = displaced;
            to = next;
        }
        ev[start] = carried;
    }
}

int hta_trace_builder_merge_gpu_tables(hta_trace_builder *b)
{
    hta_trace *t = b->trace;
    size_t n = t->n_events;
    if (b->n_blocks < 2 || n == 0)
        return 0;
    b->blocks[0] = 0;
    size_t *new_of = malloc(n * sizeof *new_of);
    if (!new_of)
        return -1;
    merge_order(b, t->events, n, new_of);
    for (size_t i = 0; i < t->n_extras; i++)
        t->extras[i].event = new_of[t->extras[i].event];
    if (t->n_extras) /* extras is NULL without any; qsort wants non-NULL */
        qsort(t->extras, t->n_extras, sizeof *t->extras, compare_extras);
    permute(t->events, new_of, n);
    free(new_of);
    b->n_blocks = 0;
    return 0;
}
