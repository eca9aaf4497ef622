/* diff_input.c: loading one side of a diff (see diff/diff_input.h). */
#include "diff/diff_input.h"

#include "analysis/activity_categories.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/metrics.h"
#include "analysis/overlap_breakdown.h"
#include "analysis/ranks_table.h"
#include "analysis/temporal_breakdown.h"
#include "crossrank/exchange/collective_groups.h"
#include "util/ranked.h"

#include <stdlib.h>
#include <string.h>

static const hta_table_spec *const TABLES[] = {
    &hta_ranks_table,         &hta_kernels_table,           &hta_rank_metrics_table,
    &hta_temporal_breakdown_table, &hta_overlap_breakdown_table, &hta_activity_categories_table,
    &hta_collective_summary_table,
};

/* The columns each comparison relies on, with their types: a file whose
 * table lacks one is refused here, naming the file, rather than compared
 * on cells of the wrong type. */
typedef struct required {
    const hta_table_spec *table;
    int column;
} required;

static const required REQUIRED[] = {
    {&hta_ranks_table, HTA_RANKS_RANK},
    {&hta_ranks_table, HTA_RANKS_STATUS},
    {&hta_kernels_table, HTA_KERNELS_RANK},
    {&hta_kernels_table, HTA_KERNELS_NAME},
    {&hta_kernels_table, HTA_KERNELS_KERNEL_TYPE},
    {&hta_kernels_table, HTA_KERNELS_COUNT},
    {&hta_kernels_table, HTA_KERNELS_SUM_US},
    {&hta_kernels_table, HTA_KERNELS_MAX_US},
    {&hta_rank_metrics_table, HTA_RANK_METRICS_RANK},
    {&hta_rank_metrics_table, HTA_RANK_METRICS_METRIC},
    {&hta_rank_metrics_table, HTA_RANK_METRICS_VALUE},
    {&hta_activity_categories_table, HTA_ACTIVITY_CATEGORIES_RANK},
    {&hta_activity_categories_table, HTA_ACTIVITY_CATEGORIES_CATEGORY},
    {&hta_activity_categories_table, HTA_ACTIVITY_CATEGORIES_COUNT},
    {&hta_activity_categories_table, HTA_ACTIVITY_CATEGORIES_TOTAL_US},
    {&hta_activity_categories_table, HTA_ACTIVITY_CATEGORIES_TOP1_MEAN_US},
    {&hta_activity_categories_table, HTA_ACTIVITY_CATEGORIES_TOP5_MEAN_US},
    {&hta_activity_categories_table, HTA_ACTIVITY_CATEGORIES_TOP10_MEAN_US},
    {&hta_activity_categories_table, HTA_ACTIVITY_CATEGORIES_TOP1_SHARE},
    {&hta_activity_categories_table, HTA_ACTIVITY_CATEGORIES_TOP5_SHARE},
    {&hta_activity_categories_table, HTA_ACTIVITY_CATEGORIES_TOP10_SHARE},
    {&hta_collective_summary_table, HTA_COLLECTIVE_SUMMARY_GROUP_DESC},
    {&hta_collective_summary_table, HTA_COLLECTIVE_SUMMARY_COLLECTIVE},
    {&hta_collective_summary_table, HTA_COLLECTIVE_SUMMARY_DTYPE},
    {&hta_collective_summary_table, HTA_COLLECTIVE_SUMMARY_BUCKET_MAX_BYTES},
};

static const char *const TYPE_NAMES[] = {"integer", "float", "string"};

static int check_columns(const hta_diff_input *in, hta_error *err)
{
    for (size_t i = 0; i < sizeof REQUIRED / sizeof *REQUIRED; i++) {
        const required *r = &REQUIRED[i];
        const hta_column *want = &r->table->columns[r->column];
        const hta_table *t = hta_diff_table(in, r->table);
        long c = t ? hta_diff_column(t, r->table, r->column) : 0;
        if (t && (c < 0 || t->columns[c].type != want->type))
            return hta_fail(err, "%s: /%s has no %s column %s (not a results file of schema %lld)",
                            in->file.path, r->table->name, TYPE_NAMES[want->type], want->name,
                            (long long)in->file.schema_version);
    }
    return 0;
}

/* The ranks of /ranks whose trace was analysed: "ok" or "no_gpu_events".
 * /ranks is there and has its columns (hta_results_open, check_columns). */
static int list_ranks(hta_diff_input *in, hta_error *err)
{
    const hta_table *t = hta_diff_table(in, &hta_ranks_table);
    long rank = hta_diff_column(t, &hta_ranks_table, HTA_RANKS_RANK);
    long status = hta_diff_column(t, &hta_ranks_table, HTA_RANKS_STATUS);
    in->ranks = malloc((t->n_rows ? t->n_rows : 1) * sizeof *in->ranks);
    if (!in->ranks)
        return hta_fail(err, "out of memory");
    for (size_t r = 0; r < t->n_rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        if (hta_ranks_status_analysed(row[status].s))
            in->ranks[in->n_ranks++] = row[rank].i;
    }
    qsort(in->ranks, in->n_ranks, sizeof *in->ranks, hta_compare_i64);
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
        rc = hta_results_read_table(&in->file, TABLES[i]->name, &in->tables, err);
    if (rc == 0)
        rc = check_columns(in, err);
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

const hta_table *hta_diff_table(const hta_diff_input *in, const hta_table_spec *spec)
{
    return hta_tableset_find(&in->tables, spec->name);
}

long hta_diff_column(const hta_table *t, const hta_table_spec *spec, int k)
{
    return hta_table_column(t, spec->columns[k].name);
}

int hta_diff_input_has_rank(const hta_diff_input *in, int64_t rank)
{
    return in->n_ranks &&
           bsearch(&rank, in->ranks, in->n_ranks, sizeof *in->ranks, hta_compare_i64) != NULL;
}
