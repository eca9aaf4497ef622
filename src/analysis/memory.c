/* memory.c: the allocator's peaks per device ("memory",
 * docs/definitions.md, Memory).
 *
 * From the [memory] instant events (model/memory_samples.h), per (device
 * type, device id): samples, allocations (Bytes > 0) and frees (Bytes <
 * 0), the largest Total Allocated and Total Reserved with the time each
 * was first reached, and the last Total Allocated.  The largest peaks over
 * the rank's GPU devices (device type other than 0, the CPU) go to
 * /rank_metrics, so that a rank holding much more memory than the others
 * (an unbalanced pipeline stage) is flagged.  Samples are not cut by the
 * step filter: a peak is a peak wherever it happens. */
#include "analysis/memory.h"

#include "analysis/metrics.h"

#include <math.h>
#include <stdlib.h>

static const hta_column COLUMNS[HTA_MEMORY_N_COLUMNS] = {
    [HTA_MEMORY_RANK] = {"rank", HTA_COL_I64},
    [HTA_MEMORY_DEVICE_TYPE] = {"device_type", HTA_COL_I64},
    [HTA_MEMORY_DEVICE] = {"device", HTA_COL_I64},
    [HTA_MEMORY_SAMPLES] = {"samples", HTA_COL_I64},
    [HTA_MEMORY_ALLOCATIONS] = {"allocations", HTA_COL_I64},
    [HTA_MEMORY_FREES] = {"frees", HTA_COL_I64},
    [HTA_MEMORY_PEAK_ALLOCATED_BYTES] = {"peak_allocated_bytes", HTA_COL_I64},
    [HTA_MEMORY_PEAK_ALLOCATED_AT_US] = {"peak_allocated_at_us", HTA_COL_F64},
    [HTA_MEMORY_PEAK_RESERVED_BYTES] = {"peak_reserved_bytes", HTA_COL_I64},
    [HTA_MEMORY_PEAK_RESERVED_AT_US] = {"peak_reserved_at_us", HTA_COL_F64},
    [HTA_MEMORY_LAST_ALLOCATED_BYTES] = {"last_allocated_bytes", HTA_COL_I64},
};
const hta_table_spec hta_memory_table = {
    "memory", COLUMNS, HTA_MEMORY_N_COLUMNS, HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

typedef struct device {
    int32_t type, id;
    int64_t samples, allocations, frees;
    int64_t peak_allocated, peak_allocated_ns, peak_reserved, peak_reserved_ns, last_allocated;
} device;

static int compare_devices(const void *a, const void *b)
{
    const device *x = a, *y = b;
    if (x->type != y->type)
        return x->type < y->type ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static device *device_of(device *d, size_t *n, const hta_memory_sample *s)
{
    for (size_t i = 0; i < *n; i++)
        if (d[i].type == s->device_type && d[i].id == s->device)
            return &d[i];
    d[*n] = (device){.type = s->device_type, .id = s->device, .peak_allocated = -1,
                     .peak_reserved = -1, .last_allocated = -1};
    return &d[(*n)++];
}

static void add_sample(device *d, const hta_memory_sample *s)
{
    d->samples++;
    d->allocations += s->bytes > 0;
    d->frees += s->bytes < 0;
    if (s->total_allocated > d->peak_allocated) {
        d->peak_allocated = s->total_allocated;
        d->peak_allocated_ns = s->ts_ns;
    }
    if (s->total_reserved > d->peak_reserved) {
        d->peak_reserved = s->total_reserved;
        d->peak_reserved_ns = s->ts_ns;
    }
    if (s->total_allocated >= 0)
        d->last_allocated = s->total_allocated;
}

static int put_row(hta_table *t, int64_t rank_key, const device *d)
{
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_i64(&row, d->type);
    hta_row_put_i64(&row, d->id);
    hta_row_put_i64(&row, d->samples);
    hta_row_put_i64(&row, d->allocations);
    hta_row_put_i64(&row, d->frees);
    hta_row_put_i64(&row, d->peak_allocated);
    hta_row_put_f64(&row, d->peak_allocated >= 0 ? hta_ns_to_us(d->peak_allocated_ns) : NAN);
    hta_row_put_i64(&row, d->peak_reserved);
    hta_row_put_f64(&row, d->peak_reserved >= 0 ? hta_ns_to_us(d->peak_reserved_ns) : NAN);
    hta_row_put_i64(&row, d->last_allocated);
    return hta_row_done(&row);
}

int hta_memory(const hta_rank_view *v, hta_tableset *out, hta_error *err)
{
    const hta_memory_samples *m = &v->trace->memory;
    hta_table *t = hta_tableset_table(out, &hta_memory_table);
    device *d = malloc((m->n ? m->n : 1) * sizeof *d);
    int rc = t && d ? 0 : -1;
    size_t n = 0;
    for (size_t i = 0; rc == 0 && i < m->n; i++)
        add_sample(device_of(d, &n, &m->of[i]), &m->of[i]);
    if (rc == 0)
        qsort(d, n, sizeof *d, compare_devices);
    int64_t allocated = -1, reserved = -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = put_row(t, v->rank_key, &d[i]);
        if (d[i].type != 0) {
            allocated = d[i].peak_allocated > allocated ? d[i].peak_allocated : allocated;
            reserved = d[i].peak_reserved > reserved ? d[i].peak_reserved : reserved;
        }
    }
    if (rc == 0 && allocated >= 0)
        rc = hta_emit_metric(out, v->rank_key, HTA_METRIC_MEMORY_PEAK_ALLOCATED_BYTES, NULL,
                             (double)allocated);
    if (rc == 0 && reserved >= 0)
        rc = hta_emit_metric(out, v->rank_key, HTA_METRIC_MEMORY_PEAK_RESERVED_BYTES, NULL,
                             (double)reserved);
    free(d);
    return rc ? hta_fail(err, "out of memory in the memory peaks") : 0;
}
