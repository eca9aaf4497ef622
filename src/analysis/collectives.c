/* collectives.c: the rank's side of the collective wait-state analysis
 * (crossrank/collective_wait.c matches them across ranks on the root).
 *
 * Every COMMUNICATION kernel (NCCL, RCCL, HCCL) becomes one row of the
 * process-local table "_collectives": its stream, its ordinal among the
 * COMMUNICATION kernels of that stream in start order, and its start and
 * end in nanoseconds.  (stream, ordinal) is the matching key: a
 * communicator issues its collectives in the same order on every rank and
 * NCCL runs one communicator's kernels on one stream, so the n-th kernel
 * on the stream is the n-th collective of that communicator.  The trace's
 * process-group names are not parsed, so ranks must use the same stream
 * number for a communicator (they do in the traces PyTorch writes for one
 * process group, and in hta-tracegen's).  The leading '_' keeps the table
 * out of the results file; it still travels to the root with the others. */
#include "hta/analysis.h"

#include <stdlib.h>

static const hta_column COLUMNS[] = {
    {"rank", HTA_COL_I64},
    {"stream", HTA_COL_I64},
    {"ordinal", HTA_COL_I64},
    {"start_ns", HTA_COL_I64},
    {"end_ns", HTA_COL_I64},
};

static int compare_stream_then_start(const void *a, const void *b)
{
    const hta_event *x = *(const hta_event *const *)a, *y = *(const hta_event *const *)b;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    /* The view is sorted by start; its addresses keep that order. */
    return (x > y) - (x < y);
}

static int put_collective(hta_table *t, int64_t rank_key, const hta_event *e, int64_t ordinal)
{
    hta_row row = hta_table_add_row(t);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_i64(&row, e->stream);
    hta_row_put_i64(&row, ordinal);
    hta_row_put_i64(&row, e->ts_ns);
    hta_row_put_i64(&row, hta_event_end(e));
    return hta_row_done(&row);
}

int hta_collectives(const hta_rank_view *v, const hta_options *opt, hta_tableset *out,
                    hta_error *err)
{
    (void)opt;
    size_t n = 0;
    for (size_t i = 0; i < v->n_gpu; i++)
        n += v->gpu[i].kernel_type == HTA_KT_COMMUNICATION;
    if (n == 0)
        return 0;
    const hta_event **comm = malloc(n * sizeof *comm);
    hta_table *t = HTA_TABLE(out, "_collectives", COLUMNS);
    int rc = comm && t ? 0 : -1;
    for (size_t i = 0, k = 0; rc == 0 && i < v->n_gpu; i++)
        if (v->gpu[i].kernel_type == HTA_KT_COMMUNICATION)
            comm[k++] = &v->gpu[i];
    if (rc == 0)
        qsort(comm, n, sizeof *comm, compare_stream_then_start);
    int64_t ordinal = 0;
    for (size_t k = 0; rc == 0 && k < n; k++) {
        ordinal = k > 0 && comm[k]->stream == comm[k - 1]->stream ? ordinal + 1 : 0;
        rc = put_collective(t, v->rank_key, comm[k], ordinal);
    }
    free(comm);
    return rc ? hta_fail(err, "out of memory listing collectives") : 0;
}
