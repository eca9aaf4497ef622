/* trace.c: hta_trace_read, any input through the run's own reader
 * (parse/read_input.h) into the event model, and its counts. */
#include "hta/trace.h"

#include <stdlib.h>

#include "settings/settings.h"
#include "parse/read_input.h"

hta_trace *hta_trace_read(const char *path, const hta_settings *s, hta_error *err)
{
    hta_settings defaults;
    const hta_settings *opt = hta_settings_or_defaults(s, &defaults);
    hta_read_options reading = {.timeout_seconds = opt->run.timeout_per_trace,
                                .inflater = (hta_inflater)opt->read.inflater,
                                .threads = opt->run.threads};
    hta_trace *t = malloc(sizeof *t);
    if (!t) {
        hta_fail(err, "%s: out of memory", path);
        return NULL;
    }
    hta_input_format used;
    hta_error notes;
    if (hta_read_input(path, (hta_input_format)opt->read.input_format, &reading,
                       opt->read.step_regex, t, &used, &notes, err)) {
        free(t);
        return NULL;
    }
    return t;
}

void hta_trace_destroy(hta_trace *t)
{
    if (!t)
        return;
    hta_trace_free(t);
    free(t);
}

size_t hta_trace_event_count(const hta_trace *t)
{
    return t->n_events;
}

size_t hta_trace_gpu_event_count(const hta_trace *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_events; i++)
        n += hta_event_is_gpu(&t->events[i]) != 0;
    return n;
}

uint64_t hta_trace_skipped_event_count(const hta_trace *t)
{
    return t->skipped_events;
}

int64_t hta_trace_rank(const hta_trace *t)
{
    return t->rank;
}

int64_t hta_trace_world_size(const hta_trace *t)
{
    return t->world_size;
}
