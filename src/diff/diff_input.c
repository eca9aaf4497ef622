/* diff_input.c: loading one side of a diff (see diff/diff_input.h). */
#include "diff/diff_input.h"

#include <stdlib.h>
#include <string.h>

static const char *const TABLES[] = {
    "ranks", "kernels", "rank_metrics", "temporal_breakdown", "overlap_breakdown",
    "activity_categories", "collective_summary",
};

/* The columns each comparison relies on, with their types: a file whose
 * table lacks one is refused here, naming the file, rather than compared
 * on cells of the wrong type. */
typedef struct required {
    const char *table, *column;
    hta_column_type type;
} required;

static const required REQUIRED[] = {
    {"ranks", "rank", HTA_COL_I64},
    {"ranks", "status", HTA_COL_STR},
    {"kernels", "rank", HTA_COL_I64},
    {"kernels", "name", HTA_COL_STR},
    {"kernels", "kernel_type", HTA_COL_STR},
    {"kernels", "count", HTA_COL_I64},
    {"kernels", "sum_us", HTA_COL_F64},
    {"kernels", "max_us", HTA_COL_F64},
    {"rank_metrics", "rank", HTA_COL_I64},
    {"rank_metrics", "metric", HTA_COL_STR},
    {"rank_metrics", "value", HTA_COL_F64},
    {"activity_categories", "rank", HTA_COL_I64},
    {"activity_categories", "category", HTA_COL_STR},
    {"activity_categories", "count", HTA_COL_I64},
    {"activity_categories", "total_us", HTA_COL_F64},
    {"activity_categories", "top1_mean_us", HTA_COL_F64},
    {"activity_categories", "top5_mean_us", HTA_COL_F64},
    {"activity_categories", "top10_mean_us", HTA_COL_F64},
    {"activity_categories", "top1_share", HTA_COL_F64},
    {"activity_categories", "top5_share", HTA_COL_F64},
    {"activity_categories", "top10_share", HTA_COL_F64},
    {"collective_summary", "group_desc", HTA_COL_STR},
    {"collective_summary", "collective", HTA_COL_STR},
    {"collective_summary", "dtype", HTA_COL_STR},
    {"collective_summary", "bucket_max_bytes", HTA_COL_I64},
};

static const char *const TYPE_NAMES[] = {"integer", "float", "string"};

static int check_columns(const hta_diff_input *in, hta_error *err)
{
    for (size_t i = 0; i < sizeof REQUIRED / sizeof *REQUIRED; i++) {
        const required *r = &REQUIRED[i];
        const hta_table *t = hta_diff_table(in, r->table);
        long c = t ? hta_table_column(t, r->column) : 0;
        if (t && (c < 0 || t->columns[c].type != r->type))
            return hta_fail(err, "%s: /%s has no %s column %s (not a results file of schema %lld)",
                            in->file.path, r->table, TYPE_NAMES[r->type], r->column,
                            (long long)in->file.schema_version);
    }
    return 0;
}

static int compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The ranks of /ranks whose trace was analysed: "ok" or "no_gpu_events".
 * /ranks is there and has its columns (hta_results_open, check_columns). */
static int list_ranks(hta_diff_input *in, hta_error *err)
{
    const hta_table *t = hta_diff_table(in, "ranks");
    long rank = hta_table_column(t, "rank"), status = hta_table_column(t, "status");
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

const hta_table *hta_diff_table(const hta_diff_input *in, const char *name)
{
    return hta_tableset_find(&in->tables, name);
}

int hta_diff_input_has_rank(const hta_diff_input *in, int64_t rank)
{
    return in->n_ranks &&
           bsearch(&rank, in->ranks, in->n_ranks, sizeof *in->ranks, compare_i64) != NULL;
}
