/* diff_writer.c: the diff's HDF5 file (see diff/diff_writer.h).
 *
 * A diff is a few thousand rows, written by one process: the plain (sec2)
 * HDF5 driver straight to the temporary file is all it needs. */
#include "diff/diff_writer.h"

#include "output/schema_version.h"
#include "util/utf8.h"

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static hid_t utf8_string_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

static int write_table(hid_t file, const hta_table *t)
{
    char path[256];
    snprintf(path, sizeof path, "/%s", t->name);
    hid_t type = H5Tcreate(H5T_COMPOUND, t->n_columns * sizeof(hta_cell));
    hid_t str = utf8_string_type();
    for (size_t c = 0; c < t->n_columns; c++)
        H5Tinsert(type, t->columns[c].name, c * sizeof(hta_cell),
                  t->columns[c].type == HTA_COL_I64   ? H5T_NATIVE_INT64
                  : t->columns[c].type == HTA_COL_F64 ? H5T_NATIVE_DOUBLE
                                                      : str);
    hsize_t dims[1] = {t->n_rows};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t ds = H5Dcreate2(file, path, type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = ds < 0 ? -1 : 0;
    if (ds >= 0 && t->n_rows)
        rc = H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, t->cells);
    if (ds >= 0)
        H5Dclose(ds);
    H5Pclose(lcpl);
    H5Sclose(space);
    H5Tclose(str);
    H5Tclose(type);
    return rc < 0 ? -1 : 0;
}

static int put_string(hid_t obj, const char *name, const char *value)
{
    char *valid = hta_utf8_repair(value ? value : "");
    hid_t type = utf8_string_type(), space = H5Screate(H5S_SCALAR);
    hid_t attr = valid ? H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT) : -1;
    int rc = attr < 0 || H5Awrite(attr, type, &valid) < 0 ? -1 : 0;
    if (attr >= 0)
        H5Aclose(attr);
    H5Sclose(space);
    H5Tclose(type);
    free(valid);
    return rc;
}

static int put_number(hid_t obj, const char *name, hid_t type, const void *value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    int rc = attr < 0 || H5Awrite(attr, type, value) < 0 ? -1 : 0;
    if (attr >= 0)
        H5Aclose(attr);
    H5Sclose(space);
    return rc;
}

/* The attributes of one input, prefixed "base_" or "new_". */
static int put_input(hid_t file, const char *prefix, const hta_diff_input *in)
{
    static const char *const copied[] = {"command_line", "created_utc", "tool_version"};
    char name[64];
    int rc = 0;
    snprintf(name, sizeof name, "%s_path", prefix);
    rc |= put_string(file, name, in->file.path);
    snprintf(name, sizeof name, "%s_schema_version", prefix);
    rc |= put_number(file, name, H5T_NATIVE_INT64, &in->file.schema_version);
    for (size_t i = 0; i < sizeof copied / sizeof *copied; i++) {
        char *value = hta_results_attr_string(&in->file, copied[i]);
        snprintf(name, sizeof name, "%s_%s", prefix, copied[i]);
        rc |= put_string(file, name, value ? value : "");
        free(value);
    }
    return rc;
}

static int put_attributes(hid_t file, const hta_diff_input *base, const hta_diff_input *new_,
                          const hta_diff_provenance *p)
{
    char created[64];
    time_t now = time(NULL);
    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    int64_t version = HTA_SCHEMA_VERSION;
    int rc = 0;
    rc |= put_string(file, "file_kind", "diff");
    rc |= put_number(file, "schema_version", H5T_NATIVE_INT64, &version);
    rc |= put_string(file, "tool_version", p->tool_version);
    rc |= put_string(file, "created_utc", created);
    rc |= put_string(file, "command_line", p->command_line);
    rc |= put_number(file, "min_change", H5T_NATIVE_DOUBLE, &p->min_change);
    rc |= put_string(file, "time_unit", "us");
    rc |= put_input(file, "base", base);
    rc |= put_input(file, "new", new_);
    return rc;
}

static char *temporary_name(const char *output)
{
    size_t len = strlen(output) + 48;
    char *tmp = malloc(len);
    const char *slash = strrchr(output, '/');
    if (tmp)
        snprintf(tmp, len, "%.*s.%s.tmp.%ld", slash ? (int)(slash - output + 1) : 0, output,
                 slash ? slash + 1 : output, (long)getpid());
    return tmp;
}

int hta_diff_write(const char *output, const hta_tableset *tables, const hta_diff_input *base,
                   const hta_diff_input *new_, const hta_diff_provenance *p, hta_error *err)
{
    char *tmp = temporary_name(output);
    if (!tmp)
        return hta_fail(err, "out of memory");
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t file = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    int rc = file < 0 ? hta_fail(err, "%s: cannot create the diff file", output) : 0;
    if (rc == 0 && put_attributes(file, base, new_, p))
        rc = hta_fail(err, "%s: cannot write the diff file's attributes", output);
    for (size_t i = 0; rc == 0 && i < tables->n_tables; i++)
        if (write_table(file, tables->tables[i]))
            rc = hta_fail(err, "%s: cannot write /%s", output, tables->tables[i]->name);
    if (file >= 0 && H5Fclose(file) < 0 && rc == 0)
        rc = hta_fail(err, "%s: cannot finish the diff file (disk full?)", output);
    if (rc == 0 && rename(tmp, output) != 0)
        rc = hta_fail(err, "%s: cannot rename the finished diff file into place: %s", output,
                      strerror(errno));
    if (rc)
        unlink(tmp);
    free(tmp);
    return rc;
}
