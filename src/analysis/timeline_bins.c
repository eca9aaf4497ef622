/* timeline_bins.c: exact binning of timeline segments (see analysis/timeline_bins.h).
 *
 * Bin edges are start + k * (end - start) / bins computed in integer
 * nanoseconds, so every process derives the same edges; a segment adds its
 * clipped length to each bin it touches. */
#include "analysis/timeline_bins.h"

#include "analysis/timeline.h"

#include <stdlib.h>

#include "table/packed_ints.h"

static const hta_column TIMELINE_COLUMNS[HTA_TIMELINE_N_COLUMNS] = {
    [HTA_TIMELINE_RANK] = {"rank", HTA_COL_I64},
    [HTA_TIMELINE_BIN] = {"bin", HTA_COL_I64},
    [HTA_TIMELINE_COMPUTE_US] = {"compute_us", HTA_COL_F64},
    [HTA_TIMELINE_COMMUNICATE_US] = {"communicate_us", HTA_COL_F64},
    [HTA_TIMELINE_OVERLAP_US] = {"overlap_us", HTA_COL_F64},
    [HTA_TIMELINE_EMPTY_US] = {"empty_us", HTA_COL_F64},
};
const hta_table_spec hta_timeline_table = {
    "timeline", TIMELINE_COLUMNS, HTA_TIMELINE_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED | HTA_TABLE_BINNED};

int hta_timeline_local_range(const hta_tableset *set, int64_t *start, int64_t *end)
{
    const hta_table *t = hta_tableset_find(set, hta_timeline_segments_table.name);
    int found = 0;
    for (size_t r = 0; t && r < t->n_rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        if (!found || row[HTA_SEGMENTS_FIRST_NS].i < *start)
            *start = row[HTA_SEGMENTS_FIRST_NS].i;
        if (!found || row[HTA_SEGMENTS_LAST_NS].i > *end)
            *end = row[HTA_SEGMENTS_LAST_NS].i;
        found = 1;
    }
    return found;
}

static int64_t bin_edge(int64_t start, int64_t end, int bins, int k)
{
    /* 128-bit product: spans of hours in ns times thousands of bins. */
    return start + (int64_t)((__int128)(end - start) * k / bins);
}

/* Adds [lo, hi) to the layer totals (ns) of every bin it overlaps. */
static void add_segment(int64_t *totals, int bins, int64_t start, int64_t end,
                        int layer, int64_t lo, int64_t hi)
{
    if (hi <= lo || end <= start)
        return;
    int k = (int)((__int128)(lo - start) * bins / (end - start));
    for (k = k < 0 ? 0 : k; k < bins; k++) {
        int64_t b0 = bin_edge(start, end, bins, k), b1 = bin_edge(start, end, bins, k + 1);
        if (b0 >= hi)
            break;
        int64_t a = lo > b0 ? lo : b0, b = hi < b1 ? hi : b1;
        if (b > a)
            totals[(size_t)k * 4 + (size_t)layer] += b - a;
    }
}

static int emit_rank(hta_table *out, int64_t rank, const int64_t *totals, int bins,
                     int64_t start, int64_t end)
{
    for (int k = 0; k < bins; k++) {
        const int64_t *t = &totals[(size_t)k * 4];
        int64_t width = bin_edge(start, end, bins, k + 1) - bin_edge(start, end, bins, k);
        int64_t overlap = t[HTA_LAYER_OVERLAP];
        int64_t compute = t[HTA_LAYER_COMPUTE] - overlap;
        int64_t communicate = t[HTA_LAYER_COMMUNICATE] - overlap;
        hta_row_builder row = hta_table_add_row(out);
        hta_row_put_i64(&row, rank);
        hta_row_put_i64(&row, k);
        hta_row_put_f64(&row, hta_ns_to_us(compute));
        hta_row_put_f64(&row, hta_ns_to_us(communicate));
        hta_row_put_f64(&row, hta_ns_to_us(overlap));
        hta_row_put_f64(&row, hta_ns_to_us(width - compute - communicate - overlap));
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

/* Adds every segment of one packed layer (see analysis/timeline.c). */
static void add_layer(int64_t *totals, int bins, int64_t start, int64_t end, int layer,
                      int64_t first, const char *packed)
{
    int64_t at = first;
    uint64_t gap, length;
    hta_series series;
    hta_series_open(&series, packed);
    while (hta_series_next(&series, &gap) && hta_series_next(&series, &length)) {
        int64_t lo = at + (int64_t)gap;
        at = lo + (int64_t)length;
        add_segment(totals, bins, start, end, layer, lo, at);
    }
}

/* Segments of one rank are contiguous rows (one analysis call each). */
int hta_timeline_bin(hta_tableset *set, int bins, int64_t start, int64_t end,
                     hta_error *err)
{
    const hta_table *seg = hta_tableset_find(set, hta_timeline_segments_table.name);
    hta_table *out = hta_tableset_table(set, &hta_timeline_table);
    int64_t *totals = calloc((size_t)bins * 4, sizeof *totals);
    int rc = out && totals ? 0 : -1;
    for (size_t r = 0; seg && rc == 0 && r < seg->n_rows;) {
        int64_t rank = hta_table_row(seg, r)[HTA_SEGMENTS_RANK].i;
        for (; r < seg->n_rows && hta_table_row(seg, r)[HTA_SEGMENTS_RANK].i == rank; r++) {
            const hta_cell *row = hta_table_row(seg, r);
            int layer = (int)row[HTA_SEGMENTS_LAYER].i;
            if (layer != HTA_LAYER_EXTENT)
                add_layer(totals, bins, start, end, layer, row[HTA_SEGMENTS_FIRST_NS].i,
                          row[HTA_SEGMENTS_SEGMENTS].s);
        }
        rc = emit_rank(out, rank, totals, bins, start, end);
        for (size_t i = 0; i < (size_t)bins * 4; i++)
            totals[i] = 0;
    }
    free(totals);
    hta_tableset_remove(set, hta_timeline_segments_table.name);
    return rc ? hta_fail(err, "out of memory while binning the timeline") : 0;
}
