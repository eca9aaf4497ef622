/* hta/table.h: result tables, as the results file holds them.
 *
 * A table has a name ("kernels", "cross_rank/kernels": the results file's
 * dataset without the leading '/'), typed columns and rows; its layout and
 * meaning are docs/results-format.md's.  Cells are read one at a time or a
 * column at a time; strings are UTF-8 and belong to the table.  A table
 * belongs to its table set, or to the results file it was read from. */
#ifndef HTA_PUBLIC_TABLE_H
#define HTA_PUBLIC_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "hta/api.h"

typedef enum hta_column_type {
    HTA_COL_I64 = 0,
    HTA_COL_F64 = 1,
    HTA_COL_STR = 2,
} hta_column_type;

typedef struct hta_table hta_table;
typedef struct hta_tableset hta_tableset;

HTA_API void hta_tableset_destroy(hta_tableset *set);
HTA_API size_t hta_tableset_count(const hta_tableset *set);
HTA_API const hta_table *hta_tableset_at(const hta_tableset *set, size_t i);
/* The table of that name, or NULL. */
HTA_API const hta_table *hta_tableset_get(const hta_tableset *set, const char *name);

HTA_API const char *hta_table_name(const hta_table *t);
HTA_API size_t hta_table_row_count(const hta_table *t);
HTA_API size_t hta_table_column_count(const hta_table *t);
HTA_API const char *hta_table_column_name(const hta_table *t, size_t col);
HTA_API hta_column_type hta_table_column_type(const hta_table *t, size_t col);
/* The column's index, or -1 when the table has no such column. */
HTA_API long hta_table_column_index(const hta_table *t, const char *name);

/* One cell; row and col must be in range and col of that type. */
HTA_API int64_t hta_table_i64(const hta_table *t, size_t row, size_t col);
HTA_API double hta_table_f64(const hta_table *t, size_t row, size_t col);
HTA_API const char *hta_table_str(const hta_table *t, size_t row, size_t col);

/* A whole column into out[0 .. rows); -1 when col is not of that type.
 * The strings are the table's, valid while it lives. */
HTA_API int hta_table_copy_i64(const hta_table *t, size_t col, int64_t *out);
HTA_API int hta_table_copy_f64(const hta_table *t, size_t col, double *out);
HTA_API int hta_table_copy_str(const hta_table *t, size_t col, const char **out);

/* The table specs: every table hta-mpi makes, as its producer declares
 * it, in the order of docs/results-format.md, then the diff file's
 * ("diff/kernels", ...), then the scratch tables that pass between stages
 * and are never written.  A table of a table set has the columns of the
 * spec of its name. */
typedef struct hta_table_spec hta_table_spec;

HTA_API size_t hta_table_spec_count(void);
/* The i-th spec, or NULL when i >= hta_table_spec_count(). */
HTA_API const hta_table_spec *hta_table_spec_at(size_t i);
/* The spec named name ("kernels", without the leading '/'), or NULL. */
HTA_API const hta_table_spec *hta_table_spec_find(const char *name);

HTA_API const char *hta_table_spec_name(const hta_table_spec *spec);
/* 0 for a table whose columns are known only at run time (the CUPTI
 * counters': one column per counter of the trace). */
HTA_API size_t hta_table_spec_column_count(const hta_table_spec *spec);
HTA_API const char *hta_table_spec_column_name(const hta_table_spec *spec, size_t col);
HTA_API hta_column_type hta_table_spec_column_type(const hta_table_spec *spec, size_t col);
/* 1 when a file (results or diff) holds it as a table; 0 for a scratch
 * table and for the timeline, which the file holds as an array. */
HTA_API int hta_table_spec_is_written(const hta_table_spec *spec);

#endif
