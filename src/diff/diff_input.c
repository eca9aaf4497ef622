/* diff_input.c: loading one side of a diff (see hta/diff_input.h). */
#include "hta/diff_input.h"

#include <stdlib.h>
#include <string.h>

static const char *const TABLES[] = {
    "ranks", "kernels", "rank_metrics", "temporal_breakdown", "overlap_breakdown",
    "activity_categories", "collective_summary",
};

static int compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The ranks of /ranks whose trace was analysed: "ok" or "no_gpu_events". */
static int list_ranks(hta_diff_input *in, hta_error *err)
{
    const hta_table *t = hta_diff_table(in, "ranks");
    long rank = t ? hta_table_column(t, "rank") : -1;
    long status = t ? hta_table_column(t, "status") : -1;
    if (rank < 0 || status < 0 || t->columns[rank].type != HTA_COL_I64 ||
        t->columns[status].type != HTA_COL_STR)
        return hta_fail(err, "%s: not an hta-mpi results file (/ranks has no rank and status)",
                        in->file.path);
    in->ranks = malloc((t->n_rows ? t->n_rows : 1) * sizeof *in->ranks);
    if (!in->ranks)
        return hta_fail(err, "out of memory");
    for (size_t r = 0; r < t->n_rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        if (strcmp(row[status].s, "failed") != 0)
            in->ranks[in->n_ranks++] = row[rank].i;
    }
    qsort(in->ranks, in->n_ranks, sizeof *in->ranks, compare_i64);
    return 0;
}

/* On failure nothing stays open or allocated. */
int hta_diff_input_load(const char *path, hta_diff_input *in, hta_error *err)
{
    memset(in, 0, sizeof *in);
    if (hta_results_open(path, &in->file, err))
        return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof TABLES / sizeof *TABLES; i++)
        rc = hta_results_read_table(&in->file, TABLES[i], &in->tables, err);
    if (rc == 0)
        rc = list_ranks(in, err);
    if (rc)
        hta_diff_input_free(in);
    return rc;
}

void hta_diff_input_free(hta_diff_input *in)
{
    hta_results_close(&in->file);
    hta_tableset_free(&in->tables);
    free(in->ranks);
    in->ranks = NULL;
    in->n_ranks = 0;
}

const hta_table *hta_diff_table(const hta_diff_input *in, const char *name)
{
    return hta_tableset_find(&in->tables, name);
}

int hta_diff_input_has_rank(const hta_diff_input *in, int64_t rank)
{
    return in->n_ranks &&
           bsearch(&rank, in->ranks, in->n_ranks, sizeof *in->ranks, compare_i64) != NULL;
}
