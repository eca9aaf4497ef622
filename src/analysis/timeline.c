/* timeline.c: the rank's compute/communicate/overlap activity as time
 * segments, the raw material of the rank x time-bin timeline.
 *
 * The bins span the global range over all ranks, which is only known after
 * every process has parsed its traces, so this analysis cannot bin.  It
 * leaves three merged interval lists (COMPUTATION union, COMMUNICATION
 * union, their intersection) in the process-local table
 * "_timeline_segments"; run/timeline_bins.c bins them once the range is
 * agreed and drops the segments before anything is gathered. */
#include "hta/analysis.h"
#include "hta/timeline.h"

#include <stdlib.h>

static const hta_column SEGMENT_COLUMNS[] = {
    {"rank", HTA_COL_I64}, {"layer", HTA_COL_I64},
    {"start_ns", HTA_COL_I64}, {"end_ns", HTA_COL_I64},
};

static size_t merged_union_of_type(const hta_rank_view *v, int type, hta_interval *out)
{
    size_t n = 0;
    for (size_t i = 0; i < v->n_gpu; i++)
        if (v->gpu[i].kernel_type == type)
            out[n++] = (hta_interval){v->gpu[i].ts_ns, hta_event_end(&v->gpu[i])};
    return hta_intervals_union(out, n);
}

static int emit_layer(hta_table *t, int64_t rank_key, int layer, const hta_interval *iv,
                      size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (iv[i].end <= iv[i].start)
            continue;
        hta_row row = hta_table_add_row(t);
        hta_row_put_i64(&row, rank_key);
        hta_row_put_i64(&row, layer);
        hta_row_put_i64(&row, iv[i].start);
        hta_row_put_i64(&row, iv[i].end);
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

int hta_timeline_segments(const hta_rank_view *v, const hta_options *opt,
                          hta_tableset *out, hta_error *err)
{
    (void)opt;
    if (v->n_gpu == 0)
        return 0;
    hta_interval *comp = malloc(v->n_gpu * sizeof *comp);
    hta_interval *comm = malloc(v->n_gpu * sizeof *comm);
    hta_interval *both = malloc(2 * v->n_gpu * sizeof *both);
    hta_table *t = hta_tableset_table(out, HTA_TIMELINE_SEGMENTS, SEGMENT_COLUMNS, 4);
    int rc = comp && comm && both && t ? 0 : -1;
    if (rc == 0) {
        size_t n_comp = merged_union_of_type(v, HTA_KT_COMPUTATION, comp);
        size_t n_comm = merged_union_of_type(v, HTA_KT_COMMUNICATION, comm);
        size_t n_both = hta_intervals_intersection(comp, n_comp, comm, n_comm, both);
        /* The extent layer marks the rank's GPU span even when it holds
         * only MEMORY or OTHER kernels. */
        hta_interval extent = {v->gpu[0].ts_ns, v->gpu[0].ts_ns};
        for (size_t i = 0; i < v->n_gpu; i++)
            if (hta_event_end(&v->gpu[i]) > extent.end)
                extent.end = hta_event_end(&v->gpu[i]);
        rc = emit_layer(t, v->rank_key, HTA_LAYER_COMPUTE, comp, n_comp) ||
             emit_layer(t, v->rank_key, HTA_LAYER_COMMUNICATE, comm, n_comm) ||
             emit_layer(t, v->rank_key, HTA_LAYER_OVERLAP, both, n_both) ||
             emit_layer(t, v->rank_key, HTA_LAYER_EXTENT, &extent, 1);
    }
    free(comp);
    free(comm);
    free(both);
    return rc ? hta_fail(err, "out of memory in the timeline") : 0;
}
