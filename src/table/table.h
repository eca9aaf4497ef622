/* table/table.h: result tables, the one currency between the stages.
 *
 * Every analysis appends rows to named tables; tables travel to the root as
 * packed bytes (self-describing: name, columns, rows), are merged by name,
 * and the HDF5 writer turns each into a compound dataset.  A cell is 8
 * bytes (int64, double or an owned UTF-8 string pointer), so a table's
 * row-major cell array is directly an HDF5 compound buffer.  Adding an
 * analysis therefore needs no gather or output code of its own.
 *
 * Every table is declared once, by the file that produces it, as an
 * hta_table_spec: its name, its columns and how it travels (the flags).
 * The producer's header exports the spec and an enum of the column
 * indices, so that a consumer reads row[HTA_X_COLUMN] with no look-up by
 * name, and run/ and output/ route a table by its flags, which the table
 * keeps and its packed form carries. */
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

/* How a table travels and where it ends (hta_table_spec.flags). */
enum hta_table_flag {
    /* Made per trace: its first column, "rank", holds the trace's file
     * index until the root resolves ranks (run/ranks.c), which relabels
     * it, drops failed or unwanted ranks and sorts the rows by rank. */
    HTA_TABLE_PER_RANK = 1u << 0,
    /* Held by the root (gathered from every process, or built there) and
     * written by it. */
    HTA_TABLE_GATHERED = 1u << 1,
    /* Never gathered: every process writes its own rows into the file
     * (output/hdf5_in_place.c). */
    HTA_TABLE_IN_PLACE = 1u << 2,
    /* Passed between stages only, never written. */
    HTA_TABLE_SCRATCH = 1u << 3,
    /* Moved between the processes to match collectives by process group
     * (crossrank/collective_exchange.c) rather than gathered. */
    HTA_TABLE_EXCHANGED = 1u << 4,
    /* Written as the float64 array [rank][bin][layer] of /timeline rather
     * than as a compound table. */
    HTA_TABLE_BINNED = 1u << 5,
    /* One row per event (--detail): stored chunked and compressed. */
    HTA_TABLE_PER_EVENT = 1u << 6,
    /* One row per instance of the job: chunked and compressed once it
     * holds enough bytes (output/hdf5_in_place.c). */
    HTA_TABLE_DEFLATE_LARGE = 1u << 7,
};

/* A table as its producer declares it.  A table that is neither gathered,
 * written in place nor exchanged stays on the process that made it. */
typedef struct hta_table_spec {
    const char *name;          /* without the leading '/' */
    const hta_column *columns; /* NULL when they are known only at run time */
    size_t n_columns;
    unsigned flags;            /* enum hta_table_flag */
} hta_table_spec;

typedef union hta_cell {
    int64_t i;
    double f;
    char *s;                   /* owned by the table */
} hta_cell;

typedef struct hta_table {
    char *name;                /* owned, without the leading '/' */
    hta_column *columns;       /* owned, names owned */
    size_t n_columns;
    unsigned flags;            /* the spec's */
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
/* Finds the spec's table or creates it; NULL when out of memory or when
 * an existing table has other columns or flags. */
hta_table *hta_tableset_table(hta_tableset *set, const hta_table_spec *spec);
/* The same for a table known only at run time (read back from a file, or
 * with columns of its input's): no flags. */
hta_table *hta_tableset_find_or_create(hta_tableset *set, const char *name,
                              const hta_column *columns, size_t n_columns);
hta_table *hta_tableset_find(const hta_tableset *set, const char *name);
/* The spec a table was made from (borrowing its name and columns). */
hta_table_spec hta_table_spec_of(const hta_table *table);
/* Frees and removes the named table, if present. */
void hta_tableset_remove(hta_tableset *set, const char *name);
/* Moves the tables with any of flags from set to the end of into; -1 when
 * out of memory (set is then unchanged). */
int hta_tableset_take(hta_tableset *set, unsigned flags, hta_tableset *into);
/* The same for the tables with none of flags. */
int hta_tableset_take_others(hta_tableset *set, unsigned flags, hta_tableset *into);
/* Frees and removes the tables with none of flags. */
void hta_tableset_keep(hta_tableset *set, unsigned flags);

hta_row_builder hta_table_add_row(hta_table *table);
void hta_row_put_i64(hta_row_builder *row, int64_t v);
void hta_row_put_f64(hta_row_builder *row, double v);
void hta_row_put_str(hta_row_builder *row, const char *s);
/* 0 when every put succeeded and matched the column types, else -1. */
int hta_row_done(hta_row_builder *row);

hta_cell *hta_table_row(const hta_table *table, size_t i);
long hta_table_column(const hta_table *table, const char *name);

/* Appends a copy of from's row i to into (of the same columns); -1 when
 * out of memory or the columns differ. */
int hta_table_copy_row(hta_table *into, const hta_table *from, size_t i);

/* Stable sort of rows by the int64 first column. */
int hta_table_sort_by_first_column(hta_table *table);
/* Stable sort of rows by key(row, ctx), smallest first. */
int hta_table_sort_by_key(hta_table *table, int64_t (*key)(const hta_cell *row, void *ctx),
                          void *ctx);

/* Index of the row whose int64 first column is key in a table sorted by
 * that column (the first such row), or -1. */
long hta_table_find_sorted(const hta_table *table, int64_t key);
/* The first row of a table sorted by its int64 column whose value there
 * is at least key; n_rows when none is. */
size_t hta_table_lower_bound(const hta_table *table, size_t column, int64_t key);
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
