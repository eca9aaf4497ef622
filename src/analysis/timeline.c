/* timeline.c: the rank's compute/communicate/overlap activity as time
 * segments, the raw material of the rank x time-bin timeline.
 *
 * The bins span the global range over all ranks, which is only known after
 * every process has parsed its traces, so this analysis cannot bin.  It
 * leaves three merged interval lists (COMPUTATION union, COMMUNICATION
 * union, their intersection) and the GPU extent in the process-local table
 * "_timeline_segments", one row per layer; analysis/timeline_bins.c bins them
 * once the range is agreed and drops the segments before anything is
 * gathered.  They stay until the process's last trace is analysed, so they
 * are packed as a series (table/packed_ints.h) after the first start: for
 * each segment the gap since the previous end and the length, a few bytes
 * each instead of a 32-byte row (2.5 per segment on whole-microsecond
 * traces), which keeps a process's memory nearly flat in the number of
 * traces it analyses. */
#include "analysis/timeline.h"
#include "table/packed_ints.h"


static const hta_column SEGMENT_COLUMNS[HTA_SEGMENTS_N_COLUMNS] = {
    [HTA_SEGMENTS_RANK] = {"rank", HTA_COL_I64},
    [HTA_SEGMENTS_LAYER] = {"layer", HTA_COL_I64},
    [HTA_SEGMENTS_FIRST_NS] = {"first_ns", HTA_COL_I64},
    [HTA_SEGMENTS_LAST_NS] = {"last_ns", HTA_COL_I64},
    [HTA_SEGMENTS_SEGMENTS] = {"segments", HTA_COL_STR},
};
const hta_table_spec hta_timeline_segments_table = {
    "_timeline_segments", SEGMENT_COLUMNS, HTA_SEGMENTS_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_SCRATCH};

/* A layer's segments pass twice, first for the series' common factor, then
 * to be packed: no copy of a layer is made (copies of the gaps, lengths and
 * intersection would be megabytes at the peak of a large trace's
 * analyses).  Each non-empty segment adds the gap since the previous end
 * and its length. */
typedef struct layer_walk {
    hta_buf *packed;           /* NULL while finding the factor */
    uint64_t factor;
    int64_t first, end;        /* first start, latest end so far */
    size_t count;
    int failed;
} layer_walk;

static void visit_segment(void *ctx, int64_t start, int64_t end)
{
    layer_walk *w = ctx;
    if (end <= start)
        return;
    if (w->count++ == 0)
        w->first = w->end = start;
    uint64_t gap = (uint64_t)(start - w->end), length = (uint64_t)(end - start);
    w->end = end;
    if (!w->packed)
        w->factor = hta_series_factor(hta_series_factor(w->factor, gap), length);
    else
        w->failed |= hta_pack_series_value(w->packed, gap, w->factor) ||
                     hta_pack_series_value(w->packed, length, w->factor);
}

/* A layer: a merged list, or the intersection of two (b non-NULL). */
typedef struct layer {
    const hta_interval *a, *b;
    size_t na, nb;
} layer;

static void walk_layer(const layer *l, layer_walk *w)
{
    w->count = 0;
    if (l->b) {
        hta_intervals_walk_intersection(l->a, l->na, l->b, l->nb, visit_segment, w);
        return;
    }
    for (size_t i = 0; i < l->na; i++)
        visit_segment(w, l->a[i].start, l->a[i].end);
}

/* A row for the layer, none when every segment is empty. */
static int emit_layer(hta_table *t, hta_buf *packed, int64_t rank_key, int layer_id,
                      layer l)
{
    layer_walk w = {0};
    walk_layer(&l, &w);
    if (w.count == 0)
        return 0;
    packed->len = 0;
    if (hta_pack_series_start(packed, &w.factor))
        return -1;
    w.packed = packed;
    walk_layer(&l, &w);
    if (w.failed)
        return -1;
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_i64(&row, layer_id);
    hta_row_put_i64(&row, w.first);
    hta_row_put_i64(&row, w.end);
    hta_row_put_str(&row, packed->data);
    return hta_row_done(&row);
}

int hta_timeline_segments(const hta_rank_view *v, hta_tableset *out, hta_error *err)
{
    if (v->n_work == 0)
        return 0;
    size_t n_comp, n_comm;
    const hta_interval *comp = hta_rank_view_work_union(v, HTA_KT_COMPUTATION, &n_comp);
    const hta_interval *comm = hta_rank_view_work_union(v, HTA_KT_COMMUNICATION, &n_comm);
    /* The extent layer marks the span of the rank's GPU work even when it
     * holds only MEMORY or OTHER kernels; host waits (cuda_sync records,
     * OTHER kernels) are not work and extend it no further. */
    hta_interval extent = {v->work_start, v->work_end};
    hta_table *t = hta_tableset_table(out, &hta_timeline_segments_table);
    hta_buf packed = {0};
    int64_t rank = v->rank_key;
    int rc = !t ||
             emit_layer(t, &packed, rank, HTA_LAYER_COMPUTE, (layer){comp, NULL, n_comp, 0}) ||
             emit_layer(t, &packed, rank, HTA_LAYER_COMMUNICATE, (layer){comm, NULL, n_comm, 0}) ||
             emit_layer(t, &packed, rank, HTA_LAYER_OVERLAP, (layer){comp, comm, n_comp, n_comm}) ||
             emit_layer(t, &packed, rank, HTA_LAYER_EXTENT, (layer){&extent, NULL, 1, 0});
    hta_buf_free(&packed);
    return rc ? hta_fail(err, "out of memory in the timeline") : 0;
}
