/* table.c: the public accessors of result tables and table specs
 * (hta/table.h) over the run's own hta_table and hta_table_spec: a handle
 * is the table or spec itself, so reading one copies nothing.  The list of
 * specs is schema/table_list.c's, whose functions are the public ones. */
#include "hta/table.h"

#include <stdlib.h>

#include "table/table.h"

void hta_tableset_destroy(hta_tableset *set)
{
    if (!set)
        return;
    hta_tableset_free(set);
    free(set);
}

size_t hta_tableset_count(const hta_tableset *set)
{
    return set->n_tables;
}

const hta_table *hta_tableset_at(const hta_tableset *set, size_t i)
{
    return i < set->n_tables ? set->tables[i] : NULL;
}

const hta_table *hta_tableset_get(const hta_tableset *set, const char *name)
{
    return hta_tableset_find(set, name);
}

const char *hta_table_name(const hta_table *t)
{
    return t->name;
}

size_t hta_table_row_count(const hta_table *t)
{
    return t->n_rows;
}

size_t hta_table_column_count(const hta_table *t)
{
    return t->n_columns;
}

const char *hta_table_column_name(const hta_table *t, size_t col)
{
    return t->columns[col].name;
}

hta_column_type hta_table_column_type(const hta_table *t, size_t col)
{
    return t->columns[col].type;
}

long hta_table_column_index(const hta_table *t, const char *name)
{
    return hta_table_column(t, name);
}

int64_t hta_table_i64(const hta_table *t, size_t row, size_t col)
{
    return hta_table_row(t, row)[col].i;
}

double hta_table_f64(const hta_table *t, size_t row, size_t col)
{
    return hta_table_row(t, row)[col].f;
}

const char *hta_table_str(const hta_table *t, size_t row, size_t col)
{
    return hta_table_row(t, row)[col].s;
}

/* The cells of column col, one per row, through copy_cell. */
static int copy_column(const hta_table *t, size_t col, hta_column_type type,
                       void (*copy_cell)(const hta_cell *cell, void *out, size_t row),
                       void *out)
{
    if (col >= t->n_columns || t->columns[col].type != type)
        return -1;
    for (size_t r = 0; r < t->n_rows; r++)
        copy_cell(&hta_table_row(t, r)[col], out, r);
    return 0;
}

static void copy_i64(const hta_cell *cell, void *out, size_t row)
{
    ((int64_t *)out)[row] = cell->i;
}

static void copy_f64(const hta_cell *cell, void *out, size_t row)
{
    ((double *)out)[row] = cell->f;
}

static void copy_str(const hta_cell *cell, void *out, size_t row)
{
    ((const char **)out)[row] = cell->s;
}

int hta_table_copy_i64(const hta_table *t, size_t col, int64_t *out)
{
    return copy_column(t, col, HTA_COL_I64, copy_i64, out);
}

int hta_table_copy_f64(const hta_table *t, size_t col, double *out)
{
    return copy_column(t, col, HTA_COL_F64, copy_f64, out);
}

int hta_table_copy_str(const hta_table *t, size_t col, const char **out)
{
    return copy_column(t, col, HTA_COL_STR, copy_str, out);
}

const char *hta_table_spec_name(const hta_table_spec *spec)
{
    return spec->name;
}

size_t hta_table_spec_column_count(const hta_table_spec *spec)
{
    return spec->columns ? spec->n_columns : 0;
}

const char *hta_table_spec_column_name(const hta_table_spec *spec, size_t col)
{
    return spec->columns[col].name;
}

hta_column_type hta_table_spec_column_type(const hta_table_spec *spec, size_t col)
{
    return spec->columns[col].type;
}

int hta_table_spec_is_written(const hta_table_spec *spec)
{
    return !(spec->flags & (HTA_TABLE_SCRATCH | HTA_TABLE_BINNED));
}
