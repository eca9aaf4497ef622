/* timeline.c: the rank's compute/communicate/overlap activity as time
 * segments, the raw material of the rank x time-bin timeline.
 *
 * The bins span the global range over all ranks, which is only known after
 * every process has parsed its traces, so this analysis cannot bin.  It
 * leaves three merged interval lists (COMPUTATION union, COMMUNICATION
 * union, their intersection) and the GPU extent in the process-local table
 * "_timeline_segments", one row per layer; run/timeline_bins.c bins them
 * once the range is agreed and drops the segments before anything is
 * gathered.  They stay until the process's last trace is analysed, so they
 * are packed as a series (hta/packed_ints.h) after the first start: for
 * each segment the gap since the previous end and the length, a few bytes
 * each instead of a 32-byte row (2.5 per segment on whole-microsecond
 * traces), which keeps a process's memory nearly flat in the number of
 * traces it analyses. */
#include "hta/analysis.h"
#include "hta/large_alloc.h"
#include "hta/packed_ints.h"
#include "hta/timeline.h"

#include <stdlib.h>

static const hta_column SEGMENT_COLUMNS[] = {
    {"rank", HTA_COL_I64}, {"layer", HTA_COL_I64},
    {"first_ns", HTA_COL_I64}, {"last_ns", HTA_COL_I64}, {"segments", HTA_COL_STR},
};

/* Gaps and lengths of the non-empty segments into values (room for 2n);
 * their number, 0 when every segment is empty. */
static size_t layer_values(const hta_interval *iv, size_t n, uint64_t *values,
                           int64_t *first, int64_t *last)
{
    size_t k = 0;
    int64_t end = 0;
    for (size_t i = 0; i < n; i++) {
        if (iv[i].end <= iv[i].start)
            continue;
        if (k == 0)
            *first = end = iv[i].start;
        values[k++] = (uint64_t)(iv[i].start - end);
        values[k++] = (uint64_t)(iv[i].end - iv[i].start);
        *last = end = iv[i].end;
    }
    return k;
}

static int pack_layer(hta_buf *packed, uint64_t *values, const hta_interval *iv, size_t n,
                      int64_t *first, int64_t *last)
{
    size_t k = layer_values(iv, n, values, first, last);
    packed->len = 0; /* and stays 0, no row, when every segment is empty */
    return hta_pack_series(packed, values, k);
}

static int emit_layer(hta_table *t, hta_buf *packed, uint64_t *values, int64_t rank_key,
                      int layer, const hta_interval *iv, size_t n)
{
    int64_t first = 0, last = 0;
    if (pack_layer(packed, values, iv, n, &first, &last))
        return -1;
    if (packed->len == 0)
        return 0;
    hta_row row = hta_table_add_row(t);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_i64(&row, layer);
    hta_row_put_i64(&row, first);
    hta_row_put_i64(&row, last);
    hta_row_put_str(&row, packed->data);
    return hta_row_done(&row);
}

int hta_timeline_segments(const hta_rank_view *v, const hta_options *opt,
                          hta_tableset *out, hta_error *err)
{
    (void)opt;
    if (v->n_gpu == 0)
        return 0;
    const hta_type_unions *u = &v->unions;
    size_t n_comp = u->n[HTA_KT_COMPUTATION], n_comm = u->n[HTA_KT_COMMUNICATION];
    /* The intersection has at most n_comp + n_comm segments, as many as
     * any layer. */
    hta_interval *both = hta_large_malloc((n_comp + n_comm + 1) * sizeof *both);
    uint64_t *values = hta_large_malloc(2 * (n_comp + n_comm + 1) * sizeof *values);
    hta_table *t = HTA_TABLE(out, HTA_TIMELINE_SEGMENTS, SEGMENT_COLUMNS);
    hta_buf packed = {0};
    int rc = both && values && t ? 0 : -1;
    if (rc == 0) {
        size_t n_both = hta_intervals_intersection(u->of[HTA_KT_COMPUTATION], n_comp,
                                                   u->of[HTA_KT_COMMUNICATION], n_comm, both);
        /* The extent layer marks the rank's GPU span even when it holds
         * only MEMORY or OTHER kernels. */
        hta_interval extent = {u->all_start, u->all_end};
        rc = emit_layer(t, &packed, values, v->rank_key, HTA_LAYER_COMPUTE,
                        u->of[HTA_KT_COMPUTATION], n_comp) ||
             emit_layer(t, &packed, values, v->rank_key, HTA_LAYER_COMMUNICATE,
                        u->of[HTA_KT_COMMUNICATION], n_comm) ||
             emit_layer(t, &packed, values, v->rank_key, HTA_LAYER_OVERLAP, both, n_both) ||
             emit_layer(t, &packed, values, v->rank_key, HTA_LAYER_EXTENT, &extent, 1);
    }
    hta_buf_free(&packed);
    free(values);
    free(both);
    return rc ? hta_fail(err, "out of memory in the timeline") : 0;
}
