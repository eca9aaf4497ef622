/* data_loading.c: the CPU time a rank spends fetching its next batch.
 *
 * PyTorch's profiler records each batch fetch as a CPU op named
 * "enumerate(DataLoader)#<iterator>.__next__".  Their total duration per
 * rank becomes the metric "data_loading_us" (in /rank_metrics, so in the
 * outlier search), which the straggler verdict gives as the reason when a
 * rank that arrives late at collectives also loads data longer than its
 * peers.  Ranks without such ops get no metric.  Names are tested once
 * each, not once per event. */
#include "analysis/data_loading.h"

#include "analysis/metrics.h"

#include <stdlib.h>
#include <string.h>

#define DATA_LOADER_PREFIX "enumerate(DataLoader)"

unsigned char *hta_data_loader_names(const hta_trace *t, size_t *found)
{
    unsigned char *is_loader = calloc(t->names.count ? t->names.count : 1, 1);
    size_t prefix = strlen(DATA_LOADER_PREFIX);
    *found = 0;
    for (uint32_t id = 0; is_loader && id < t->names.count; id++) {
        is_loader[id] = strncmp(hta_strtab_get(&t->names, id), DATA_LOADER_PREFIX, prefix) == 0;
        *found += is_loader[id];
    }
    return is_loader;
}

int hta_data_loading(const hta_rank_view *v, hta_tableset *out, hta_error *err)
{
    const hta_trace *t = v->trace;
    size_t found;
    unsigned char *is_loader = hta_data_loader_names(t, &found);
    if (!is_loader)
        return hta_fail(err, "out of memory measuring data loading");
    int64_t total = 0;
    for (size_t i = 0; found && i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        if (!hta_event_is_gpu(e) && is_loader[e->name])
            total += e->dur_ns;
    }
    free(is_loader);
    if (found &&
        hta_emit_metric(out, v->rank_key, HTA_METRIC_DATA_LOADING_US, NULL, hta_ns_to_us(total)))
        return hta_fail(err, "out of memory measuring data loading");
    return 0;
}
