/* collective_diff.c: /diff/collectives (see diff/collective_diff.h).
 *
 * The compared columns are taken from the files rather than listed here:
 * whatever numeric columns the collectives summary holds (count, bytes,
 * transfer percentiles, bus bandwidth, skew, wait) are compared alike, so
 * a column added to the summary later is compared with no change here. */
#include "diff/collective_diff.h"

#include "crossrank/exchange/collective_groups.h"

#include "diff/row_join.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_KEYS HTA_DIFF_COLLECTIVES_STATUS
static const int KEY_COLUMNS[N_KEYS] = {HTA_COLLECTIVE_SUMMARY_GROUP_DESC,
                                        HTA_COLLECTIVE_SUMMARY_COLLECTIVE,
                                        HTA_COLLECTIVE_SUMMARY_DTYPE,
                                        HTA_COLLECTIVE_SUMMARY_BUCKET_MAX_BYTES};

static const char *key_name(int k)
{
    return hta_collective_summary_table.columns[KEY_COLUMNS[k]].name;
}

/* A numeric column both summaries have. */
typedef struct compared {
    long base, new_;
    hta_column_type type;
} compared;

typedef struct join_ctx {
    long key_b[N_KEYS], key_n[N_KEYS];
    compared *cols;
    size_t n_cols;
    hta_table *out;
} join_ctx;

static int is_key(const char *name)
{
    for (int k = 0; k < N_KEYS; k++)
        if (strcmp(name, key_name(k)) == 0)
            return 1;
    return 0;
}

static double as_double(const hta_cell *row, long column, hta_column_type type)
{
    if (!row)
        return NAN;
    return type == HTA_COL_I64 ? (double)row[column].i : row[column].f;
}

static void put_side(hta_row_builder *row, const hta_cell *cells, const compared *c, long column)
{
    if (c->type == HTA_COL_I64)
        hta_row_put_i64(row, cells ? cells[column].i : 0);
    else
        hta_row_put_f64(row, cells ? cells[column].f : NAN);
}

static int join_collective(const hta_cell *b, const hta_cell *n, void *ctx)
{
    join_ctx *j = ctx;
    const hta_cell *any = b ? b : n;
    const long *key = b ? j->key_b : j->key_n;
    hta_row_builder row = hta_table_add_row(j->out);
    for (int k = 0; k < N_KEYS; k++) {
        if (j->out->columns[k].type == HTA_COL_I64)
            hta_row_put_i64(&row, any[key[k]].i);
        else
            hta_row_put_str(&row, any[key[k]].s);
    }
    hta_row_put_str(&row, b && n ? "both" : b ? "only_in_base" : "only_in_new");
    for (size_t c = 0; c < j->n_cols; c++) {
        const compared *col = &j->cols[c];
        put_side(&row, b, col, col->base);
        put_side(&row, n, col, col->new_);
        hta_row_put_f64(&row, hta_ratio(as_double(b, col->base, col->type),
                                        as_double(n, col->new_, col->type)));
    }
    return hta_row_done(&row);
}

/* Its columns are planned from the two files' /collective_summary. */
const hta_table_spec hta_diff_collectives_table = {"diff/collectives", NULL, 0, 0};

#define RATIO_FORM "%s_ratio"

long hta_diff_collectives_ratio(const hta_table *t, int k)
{
    char name[128];
    snprintf(name, sizeof name, RATIO_FORM, hta_collective_summary_table.columns[k].name);
    return hta_table_column(t, name);
}

/* The output's columns: the keys, status, then base_X, new_X, X_ratio for
 * each compared column.  Names are built into names (3 per column). */
static int plan_columns(const hta_table *tb, const hta_table *tn, join_ctx *j,
                        hta_column **spec_out, size_t *n_spec, char ***names_out)
{
    size_t cap = N_KEYS + 1 + 3 * tb->n_columns;
    hta_column *spec = calloc(cap, sizeof *spec);
    char **names = calloc(3 * tb->n_columns + 1, sizeof *names);
    j->cols = calloc(tb->n_columns + 1, sizeof *j->cols);
    *spec_out = spec;
    *names_out = names;
    if (!spec || !names || !j->cols)
        return -1;
    size_t n = 0, n_names = 0;
    for (int k = 0; k < N_KEYS; k++) {
        j->key_b[k] = hta_table_column(tb, key_name(k));
        j->key_n[k] = hta_table_column(tn, key_name(k));
        if (j->key_b[k] < 0 || j->key_n[k] < 0)
            return -2;
        spec[n++] = (hta_column){key_name(k), tb->columns[j->key_b[k]].type};
    }
    spec[n++] = (hta_column){"status", HTA_COL_STR};
    for (size_t c = 0; c < tb->n_columns; c++) {
        const hta_column *col = &tb->columns[c];
        long in_new = hta_table_column(tn, col->name);
        if (is_key(col->name) || col->type == HTA_COL_STR || in_new < 0 ||
            tn->columns[in_new].type != col->type)
            continue;
        j->cols[j->n_cols++] = (compared){(long)c, in_new, col->type};
        static const char *const forms[3] = {"base_%s", "new_%s", RATIO_FORM};
        for (int f = 0; f < 3; f++) {
            size_t len = strlen(col->name) + 8;
            if (!(names[n_names] = malloc(len)))
                return -1;
            snprintf(names[n_names], len, forms[f], col->name);
            spec[n++] = (hta_column){names[n_names++], f == 2 ? HTA_COL_F64 : col->type};
        }
    }
    *n_spec = n;
    return 0;
}

int hta_diff_collectives(const hta_diff_input *base, const hta_diff_input *new_,
                         hta_tableset *out, hta_error *err)
{
    const hta_table *tb = hta_diff_table(base, &hta_collective_summary_table);
    const hta_table *tn = hta_diff_table(new_, &hta_collective_summary_table);
    if (!tb || !tn)
        return 0;
    join_ctx j = {0};
    hta_column *spec = NULL;
    char **names = NULL;
    size_t n_spec = 0;
    int plan = plan_columns(tb, tn, &j, &spec, &n_spec, &names);
    int rc = plan == -2 ? hta_fail(err, "/collective_summary lacks a key column (%s, %s, %s, %s)",
                                   key_name(0), key_name(1), key_name(2), key_name(3))
             : plan      ? hta_fail(err, "out of memory")
                         : 0;
    hta_table_spec planned = {hta_diff_collectives_table.name, spec, n_spec, 0};
    if (rc == 0 && !(j.out = hta_tableset_table(out, &planned)))
        rc = hta_fail(err, "out of memory");
    err->text[0] = rc ? err->text[0] : '\0';
    const char *const keys[N_KEYS] = {key_name(0), key_name(1), key_name(2), key_name(3)};
    if (rc == 0 && hta_join_rows(tb, tn, keys, N_KEYS, join_collective, &j, err))
        rc = err->text[0] ? -1 : hta_fail(err, "out of memory");
    for (size_t i = 0; names && names[i]; i++)
        free(names[i]);
    free(names);
    free(spec);
    free(j.cols);
    return rc;
}
