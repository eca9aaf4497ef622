/* table/table.h: result tables, the one currency between the stages.
 *
 * Every analysis appends rows to named tables; tables travel to the root as
 * packed bytes (self-describing: name, columns, rows), are merged by name,
 * and the HDF5 writer turns each into a compound dataset.  A cell is 8
 * bytes (int64, double or an owned UTF-8 string pointer), so a table's
 * row-major cell array is directly an HDF5 compound buffer.  Adding an
 * analysis therefore needs no gather or output code of its own.
 *
 * Convention: when a table's first column is named "rank" it holds the
 * trace's file index until the root has resolved ranks (see run/ranks.c). */
#ifndef HTA_TABLE_H
#define HTA_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "hta/table.h" /* hta_column_type, and the handles' names */
#include "util/buf.h"
#include "util/error.h"

typedef struct hta_column {
    const char *name;
    hta_column_type type;
} hta_column;

typedef union hta_cell {
    int64_t i;
    double f;
    char *s;                   /* owned by the table */
} hta_cell;

typedef struct hta_table {
    char *name;                /* owned, without the leading '/' */
    hta_column *columns;       /* owned, names owned */
    size_t n_columns;
    hta_cell *cells;           /* owned, row-major */
    size_t n_rows, cap_rows;
} hta_table;

typedef struct hta_tableset {
    hta_table **tables;        /* owned */
    size_t n_tables;
} hta_tableset;

/* Appending a row: hta_table_add_row then one hta_row_put_* per column in
 * order.  The row builder remembers the position. */
typedef struct hta_row_builder {
    hta_table *table;
    hta_cell *cells;
    size_t next;
    int failed;
} hta_row_builder;

void hta_tableset_free(hta_tableset *set);
/* Finds the table or creates it with the given columns; NULL when out of
 * memory or when an existing table has other columns. */
hta_table *hta_tableset_find_or_create(hta_tableset *set, const char *name,
                              const hta_column *columns, size_t n_columns);
hta_table *hta_tableset_find(const hta_tableset *set, const char *name);
/* hta_tableset_find_or_create with a static column array's own length. */
#define HTA_TABLE(set, name, columns) \
    hta_tableset_find_or_create((set), (name), (columns), sizeof(columns) / sizeof((columns)[0]))
/* Frees and removes the named table, if present. */
void hta_tableset_remove(hta_tableset *set, const char *name);

hta_row_builder hta_table_add_row(hta_table *table);
void hta_row_put_i64(hta_row_builder *row, int64_t v);
void hta_row_put_f64(hta_row_builder *row, double v);
void hta_row_put_str(hta_row_builder *row, const char *s);
/* 0 when every put succeeded and matched the column types, else -1. */
int hta_row_done(hta_row_builder *row);

hta_cell *hta_table_row(const hta_table *table, size_t i);
long hta_table_column(const hta_table *table, const char *name);

/* Stable sort of rows by the int64 first column. */
int hta_table_sort_by_first_column(hta_table *table);
/* Index of the row whose int64 first column is key in a table sorted by
 * that column (the first such row), or -1. */
long hta_table_find_sorted(const hta_table *table, int64_t key);
/* Keeps only rows for which keep(row, ctx) is true. */
void hta_table_filter(hta_table *table, int (*keep)(const hta_cell *row, void *ctx), void *ctx);

/* Moves every row of from to the end of the same-named table of into
 * (created as needed), table by table in from's order, and empties from.
 * -1 when out of memory or when columns differ; from then keeps what was
 * not moved. */
int hta_tableset_move_rows(hta_tableset *into, hta_tableset *from);

/* Serialises every table to out; hta_tableset_merge appends the rows of a
 * packed buffer to set, creating tables as needed. */
int hta_tableset_pack(const hta_tableset *set, hta_buf *out);
int hta_tableset_merge(hta_tableset *set, const char *data, size_t len, hta_error *err);

#endif
