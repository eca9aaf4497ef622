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
    const hta_type_unions *u = &v->unions;
    size_t n_comp = u->n[HTA_KT_COMPUTATION], n_comm = u->n[HTA_KT_COMMUNICATION];
    hta_interval *both = malloc((n_comp + n_comm + 1) * sizeof *both);
    hta_table *t = HTA_TABLE(out, HTA_TIMELINE_SEGMENTS, SEGMENT_COLUMNS);
    int rc = both && t ? 0 : -1;
    if (rc == 0) {
        size_t n_both = hta_intervals_intersection(u->of[HTA_KT_COMPUTATION], n_comp,
                                                   u->of[HTA_KT_COMMUNICATION], n_comm, both);
        /* The extent layer marks the rank's GPU span even when it holds
         * only MEMORY or OTHER kernels. */
        hta_interval extent = {v->gpu_start, v->gpu_end};
        rc = emit_layer(t, v->rank_key, HTA_LAYER_COMPUTE, u->of[HTA_KT_COMPUTATION], n_comp) ||
             emit_layer(t, v->rank_key, HTA_LAYER_COMMUNICATE, u->of[HTA_KT_COMMUNICATION], n_comm) ||
             emit_layer(t, v->rank_key, HTA_LAYER_OVERLAP, both, n_both) ||
             emit_layer(t, v->rank_key, HTA_LAYER_EXTENT, &extent, 1);
    }
    free(both);
    return rc ? hta_fail(err, "out of memory in the timeline") : 0;
}
