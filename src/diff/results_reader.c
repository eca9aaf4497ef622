/* results_reader.c: reading a results file back (see diff/results_reader.h).
 *
 * Tables are read one column at a time through a one-member compound
 * memory type, so a column's file type (int32 or int64, fixed or variable
 * length string) never has to match a layout decided here, and a table
 * another tool added columns to still reads.  HDF5's own error stack is
 * silenced: every failure becomes one line naming the file. */
#include "diff/results_reader.h"

#include "analysis/ranks_table.h"

#include "output/schema_version.h"

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char HDF5_SIGNATURE[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

/* Whether the file starts like an HDF5 file: tells a damaged or truncated
 * results file from a file of something else. */
static int has_hdf5_signature(const char *path)
{
    unsigned char head[8];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head && memcmp(head, HDF5_SIGNATURE, sizeof head) == 0;
}

static int read_schema_version(hid_t file, int64_t *out)
{
    if (H5Aexists(file, "schema_version") <= 0)
        return -1;
    hid_t attr = H5Aopen(file, "schema_version", H5P_DEFAULT);
    hid_t type = attr < 0 ? -1 : H5Aget_type(attr);
    int rc = type >= 0 && H5Tget_class(type) == H5T_INTEGER &&
                     H5Aread(attr, H5T_NATIVE_INT64, out) >= 0
                 ? 0
                 : -1;
    if (type >= 0)
        H5Tclose(type);
    if (attr >= 0)
        H5Aclose(attr);
    return rc;
}

static int check_results_file(hta_results_file *rf, hta_error *err)
{
    char *kind = hta_results_attr_string(rf, "file_kind");
    int is_diff = kind && strcmp(kind, "diff") == 0;
    free(kind);
    if (is_diff)
        return hta_fail(err, "%s: an hta-mpi diff file, not a results file", rf->path);
    if (read_schema_version(rf->file, &rf->schema_version))
        return hta_fail(err, "%s: not an hta-mpi results file (no schema_version attribute)",
                        rf->path);
    if (rf->schema_version < HTA_SCHEMA_OLDEST_READ || rf->schema_version > HTA_SCHEMA_VERSION)
        return hta_fail(err,
                        "%s: results schema version %lld, this hta-mpi reads versions %d and %d",
                        rf->path, (long long)rf->schema_version, HTA_SCHEMA_OLDEST_READ,
                        HTA_SCHEMA_VERSION);
    if (!hta_results_has(rf, hta_ranks_table.name))
        return hta_fail(err, "%s: not an hta-mpi results file (no /ranks table)", rf->path);
    return 0;
}

int hta_results_open(const char *path, hta_results_file *rf, hta_error *err)
{
    memset(rf, 0, sizeof *rf);
    rf->file = -1;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    FILE *probe = fopen(path, "rb");
    if (!probe)
        return hta_fail(err, "%s: cannot open: %s", path, strerror(errno));
    fclose(probe);
    if (!(rf->path = strdup(path)))
        return hta_fail(err, "out of memory");
    rf->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (rf->file < 0) {
        hta_fail(err, has_hdf5_signature(path)
                          ? "%s: damaged or truncated HDF5 file (HDF5 cannot open it)"
                          : "%s: not an HDF5 file, so not an hta-mpi results file",
                 path);
        hta_results_close(rf);
        return -1;
    }
    if (check_results_file(rf, err)) {
        hta_results_close(rf);
        return -1;
    }
    return 0;
}

void hta_results_close(hta_results_file *rf)
{
    if (rf->file >= 0)
        H5Fclose(rf->file);
    free(rf->path);
    rf->path = NULL;
    rf->file = -1;
}

int hta_results_has(const hta_results_file *rf, const char *name)
{
    if (H5Lexists(rf->file, name, H5P_DEFAULT) <= 0)
        return 0;
    hid_t obj = H5Oopen(rf->file, name, H5P_DEFAULT);
    int is_dataset = obj >= 0 && H5Iget_type(obj) == H5I_DATASET;
    if (obj >= 0)
        H5Oclose(obj);
    return is_dataset;
}

/* One column of a table in file order: its name (owned), its type here,
 * and its values, row by row. */
typedef struct column_data {
    char *name;
    hta_column_type type;
    hta_cell *values;          /* owned, strings owned */
} column_data;

static hid_t one_member(const char *name, hid_t member_type, size_t size)
{
    hid_t mem = H5Tcreate(H5T_COMPOUND, size);
    H5Tinsert(mem, name, 0, member_type);
    return mem;
}

static int read_numbers(hid_t ds, column_data *col, size_t n)
{
    hid_t native = col->type == HTA_COL_I64 ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
    hid_t mem = one_member(col->name, native, sizeof(hta_cell));
    herr_t rc = n ? H5Dread(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, col->values) : 0;
    H5Tclose(mem);
    return rc < 0 ? -1 : 0;
}

static int read_variable_strings(hid_t ds, column_data *col, size_t n)
{
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, H5T_VARIABLE);
    H5Tset_cset(str, H5T_CSET_UTF8);
    hid_t mem = one_member(col->name, str, sizeof(char *));
    char **raw = calloc(n ? n : 1, sizeof *raw);
    int rc = raw && (!n || H5Dread(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) >= 0) ? 0 : -1;
    for (size_t r = 0; rc == 0 && r < n; r++)
        if (!(col->values[r].s = strdup(raw[r] ? raw[r] : "")))
            rc = -1;
    if (raw && n) {
        hid_t space = H5Dget_space(ds);
        H5Dvlen_reclaim(mem, space, H5P_DEFAULT, raw);
        H5Sclose(space);
    }
    free(raw);
    H5Tclose(mem);
    H5Tclose(str);
    return rc;
}

static int read_fixed_strings(hid_t ds, column_data *col, hid_t file_member, size_t n)
{
    size_t width = H5Tget_size(file_member);
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, width);
    H5Tset_strpad(str, H5T_STR_NULLPAD);
    H5Tset_cset(str, H5Tget_cset(file_member)); /* HDF5 converts no character set */
    hid_t mem = one_member(col->name, str, width);
    char *raw = malloc(n * width + 1);
    int rc = raw && (!n || H5Dread(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) >= 0) ? 0 : -1;
    for (size_t r = 0; rc == 0 && r < n; r++)
        if (!(col->values[r].s = strndup(raw + r * width, width)))
            rc = -1;
    free(raw);
    H5Tclose(mem);
    H5Tclose(str);
    return rc;
}

static int read_column(hid_t ds, hid_t file_type, unsigned m, column_data *col, size_t n)
{
    hid_t member = H5Tget_member_type(file_type, m);
    int rc = -1;
    col->values = calloc(n ? n : 1, sizeof *col->values);
    if (!col->values)
        rc = -1;
    else if (col->type != HTA_COL_STR)
        rc = read_numbers(ds, col, n);
    else if (H5Tis_variable_str(member) > 0)
        rc = read_variable_strings(ds, col, n);
    else
        rc = read_fixed_strings(ds, col, member, n);
    H5Tclose(member);
    return rc;
}

static void free_columns(column_data *cols, size_t n_cols, size_t n_rows)
{
    for (size_t c = 0; c < n_cols; c++) {
        for (size_t r = 0; cols[c].type == HTA_COL_STR && cols[c].values && r < n_rows; r++)
            free(cols[c].values[r].s);
        free(cols[c].values);
        H5free_memory(cols[c].name);
    }
    free(cols);
}

/* The columns hta-mpi can hold: integers, floats and strings. */
static int column_type_of(H5T_class_t cls, hta_column_type *out)
{
    switch (cls) {
    case H5T_INTEGER: *out = HTA_COL_I64; return 0;
    case H5T_FLOAT: *out = HTA_COL_F64; return 0;
    case H5T_STRING: *out = HTA_COL_STR; return 0;
    default: return -1;
    }
}

static int fill_table(hta_tableset *set, const char *name, column_data *cols, size_t n_cols,
                      size_t n_rows)
{
    hta_column *spec = calloc(n_cols ? n_cols : 1, sizeof *spec);
    if (!spec)
        return -1;
    for (size_t c = 0; c < n_cols; c++)
        spec[c] = (hta_column){cols[c].name, cols[c].type};
    hta_table *t = hta_tableset_find_or_create(set, name, spec, n_cols);
    free(spec);
    for (size_t r = 0; t && r < n_rows; r++) {
        hta_row_builder row = hta_table_add_row(t);
        for (size_t c = 0; c < n_cols; c++) {
            if (cols[c].type == HTA_COL_I64)
                hta_row_put_i64(&row, cols[c].values[r].i);
            else if (cols[c].type == HTA_COL_F64)
                hta_row_put_f64(&row, cols[c].values[r].f);
            else
                hta_row_put_str(&row, cols[c].values[r].s);
        }
        if (hta_row_done(&row))
            return -1;
    }
    return t ? 0 : -1;
}

static int read_compound(hid_t ds, const char *name, hta_tableset *set)
{
    hid_t type = H5Dget_type(ds), space = H5Dget_space(ds);
    int ok = H5Tget_class(type) == H5T_COMPOUND && H5Sget_simple_extent_ndims(space) == 1;
    hsize_t dims[1] = {0};
    if (ok)
        H5Sget_simple_extent_dims(space, dims, NULL);
    int n_members = ok ? H5Tget_nmembers(type) : 0;
    column_data *cols = calloc(n_members > 0 ? (size_t)n_members : 1, sizeof *cols);
    size_t n_cols = 0, n_rows = (size_t)dims[0];
    int rc = ok && cols ? 0 : -1;
    for (int m = 0; rc == 0 && m < n_members; m++) {
        hta_column_type t;
        if (column_type_of(H5Tget_member_class(type, (unsigned)m), &t))
            continue;
        column_data *col = &cols[n_cols++];
        col->name = H5Tget_member_name(type, (unsigned)m);
        col->type = t;
        rc = col->name ? read_column(ds, type, (unsigned)m, col, n_rows) : -1;
    }
    if (rc == 0)
        rc = fill_table(set, name, cols, n_cols, n_rows);
    if (cols)
        free_columns(cols, n_cols, n_rows);
    H5Sclose(space);
    H5Tclose(type);
    return rc;
}

int hta_results_read_table(const hta_results_file *rf, const char *name, hta_tableset *set,
                           hta_error *err)
{
    if (!hta_results_has(rf, name))
        return 0;
    hid_t ds = H5Dopen2(rf->file, name, H5P_DEFAULT);
    int rc = ds < 0 ? -1 : read_compound(ds, name, set);
    if (ds >= 0)
        H5Dclose(ds);
    if (rc)
        return hta_fail(err, "%s: cannot read /%s (damaged or truncated file, or not a table)",
                        rf->path, name);
    return 0;
}

static hid_t open_root_attr(const hta_results_file *rf, const char *name, H5T_class_t want)
{
    if (H5Aexists(rf->file, name) <= 0)
        return -1;
    hid_t attr = H5Aopen(rf->file, name, H5P_DEFAULT);
    hid_t type = attr < 0 ? -1 : H5Aget_type(attr);
    hid_t space = attr < 0 ? -1 : H5Aget_space(attr);
    int ok = type >= 0 && H5Tget_class(type) == want && space >= 0 &&
             H5Sget_simple_extent_type(space) == H5S_SCALAR;
    if (space >= 0)
        H5Sclose(space);
    if (type >= 0)
        H5Tclose(type);
    if (!ok && attr >= 0) {
        H5Aclose(attr);
        return -1;
    }
    return attr;
}

char *hta_results_attr_string(const hta_results_file *rf, const char *name)
{
    hid_t attr = open_root_attr(rf, name, H5T_STRING);
    if (attr < 0)
        return NULL;
    hid_t type = H5Aget_type(attr);
    char *out = NULL;
    if (H5Tis_variable_str(type) > 0) {
        hid_t mem = H5Tcopy(H5T_C_S1);
        H5Tset_size(mem, H5T_VARIABLE);
        H5Tset_cset(mem, H5T_CSET_UTF8);
        char *value = NULL;
        if (H5Aread(attr, mem, &value) >= 0 && value) {
            out = strdup(value);
            H5free_memory(value);
        }
        H5Tclose(mem);
    } else {
        size_t width = H5Tget_size(type);
        char *value = calloc(width + 1, 1);
        hid_t mem = H5Tcopy(type);
        if (value && H5Aread(attr, mem, value) >= 0)
            out = value;
        else
            free(value);
        H5Tclose(mem);
    }
    H5Tclose(type);
    H5Aclose(attr);
    return out;
}

int hta_results_attr_number(const hta_results_file *rf, const char *name, double *out)
{
    hid_t attr = open_root_attr(rf, name, H5T_INTEGER);
    if (attr < 0)
        attr = open_root_attr(rf, name, H5T_FLOAT);
    if (attr < 0)
        return -1;
    herr_t rc = H5Aread(attr, H5T_NATIVE_DOUBLE, out);
    H5Aclose(attr);
    return rc < 0 ? -1 : 0;
}
