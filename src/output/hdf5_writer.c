/* hdf5_writer.c: the results file (docs/results-format.md).
 *
 * Every table becomes a 1-D compound dataset whose memory layout is the
 * table's own cell array (8 bytes per column; strings as variable-length
 * UTF-8), so no table is copied on the way out.  These are the root's
 * tables: the gathered ones and the cross-rank ones; the per-rank tables
 * that stay on their processes are added afterwards, collectively
 * (hdf5_in_place.c), because parallel HDF5 cannot write variable-length
 * strings.  The file is built in memory, then written under a temporary
 * name in the target directory, synced and renamed only once complete, so
 * a crash or a full disk never leaves a half file under the final name
 * (docs/robustness.md). */
#include "output/hdf5_writer.h"

#include "analysis/ranks_table.h"
#include "analysis/timeline_bins.h"
#include "output/results_file.h"
#include "output/schema_version.h"
#include "util/io_all.h"
#include "util/large_alloc.h"
#include "util/utf8.h"

#include <errno.h>
#include <fcntl.h>
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

static hid_t compound_type(const hta_table *t)
{
    hid_t type = H5Tcreate(H5T_COMPOUND, t->n_columns * sizeof(hta_cell));
    hid_t str = utf8_string_type();
    for (size_t c = 0; c < t->n_columns; c++) {
        hid_t member = t->columns[c].type == HTA_COL_I64 ? H5T_NATIVE_INT64
                       : t->columns[c].type == HTA_COL_F64 ? H5T_NATIVE_DOUBLE
                                                            : str;
        H5Tinsert(type, t->columns[c].name, c * sizeof(hta_cell), member);
    }
    H5Tclose(str);
    return type;
}

/* t's cells with every string valid UTF-8 (hta/utf8.h): NULL when none
 * needs repair (the common case costs one scan), else a copy whose
 * repaired strings free_repaired releases.  *failed on out of memory. */
static hta_cell *repaired_cells(const hta_table *t, int *failed)
{
    size_t n = t->n_rows * t->n_columns;
    hta_cell *copy = NULL;
    for (size_t i = 0; i < n && !*failed; i++) {
        const char *s = t->cells[i].s;
        if (t->columns[i % t->n_columns].type != HTA_COL_STR || hta_utf8_valid(s))
            continue;
        if (!copy) {
            if (!(copy = malloc(n * sizeof *copy))) {
                *failed = 1;
                break;
            }
            memcpy(copy, t->cells, n * sizeof *copy);
        }
        *failed = !(copy[i].s = hta_utf8_repair(s));
    }
    return copy;
}

static void free_repaired(const hta_table *t, hta_cell *copy)
{
    if (!copy)
        return;
    for (size_t i = 0; i < t->n_rows * t->n_columns; i++)
        if (t->columns[i % t->n_columns].type == HTA_COL_STR && copy[i].s != t->cells[i].s)
            free(copy[i].s);
    free(copy);
}

/* Every write that converts, as every table with strings does, zero-fills
 * HDF5's type-conversion and background buffers, 1 MB each by default, a
 * visible share of a small trace's run.  Buffers of the table's own
 * size change nothing for tables of a megabyte and more.  A converted row
 * takes at most 16 bytes a column (a variable-length string's file form). */
#define CONVERSION_BUFFER_MAX (1u << 20)

static hid_t table_sized_transfer(const hta_table *t)
{
    size_t row_bytes = 16 * t->n_columns;
    size_t bytes = t->n_rows * row_bytes;
    hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_buffer(xfer, bytes < CONVERSION_BUFFER_MAX ? bytes : CONVERSION_BUFFER_MAX, NULL,
                  NULL);
    return xfer;
}

static int write_table(hid_t file, const hta_table *t)
{
    if (t->n_columns == 0)
        return 0;
    char path[512];
    snprintf(path, sizeof path, "/%s", t->name);
    hsize_t dims[1] = {t->n_rows};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t type = compound_type(t);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    int repair_failed = 0;
    hta_cell *repaired = repaired_cells(t, &repair_failed);
    hid_t ds = repair_failed ? -1 : H5Dcreate2(file, path, type, space, lcpl, H5P_DEFAULT,
                                               H5P_DEFAULT);
    herr_t rc = ds < 0 ? -1 : 0;
    if (ds >= 0 && t->n_rows) {
        hid_t xfer = table_sized_transfer(t);
        rc = H5Dwrite(ds, type, H5S_ALL, H5S_ALL, xfer, repaired ? repaired : t->cells);
        H5Pclose(xfer);
    }
    free_repaired(t, repaired);
    if (ds >= 0)
        H5Dclose(ds);
    H5Pclose(lcpl);
    H5Tclose(type);
    H5Sclose(space);
    return rc < 0 ? -1 : 0;
}

static int put_attr_string(hid_t obj, const char *name, const char *value);
static int put_attr_strings(hid_t obj, const char *name, char *const *values, size_t n);

static int write_array(hid_t where, const char *name, hid_t type, int rank,
                       const hsize_t *dims, const void *data, hid_t *out)
{
    hid_t space = H5Screate_simple(rank, dims, NULL);
    hid_t ds = H5Dcreate2(where, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = ds < 0 ? -1 : 0;
    if (ds >= 0 && dims[0])
        rc = H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    H5Sclose(space);
    if (out && ds >= 0 && rc >= 0)
        *out = ds;
    else if (ds >= 0)
        H5Dclose(ds);
    return rc < 0 ? -1 : 0;
}

/* /timeline is a float64 array [rank][bin][category] rather than a table,
 * the shape a heatmap wants; /timeline_ranks names the rank of each row. */
static int write_timeline(hid_t file, const hta_table *t, const hta_run_info *info, int bins)
{
    size_t n_ranks = bins > 0 ? t->n_rows / (size_t)bins : 0;
    double *values = malloc((n_ranks * (size_t)bins * 4 + 1) * sizeof *values);
    int64_t *ranks = malloc((n_ranks + 1) * sizeof *ranks);
    double *edges = malloc(((size_t)bins + 1) * sizeof *edges);
    int rc = values && ranks && edges ? 0 : -1;
    for (size_t r = 0; rc == 0 && r < t->n_rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        for (int c = 0; c < 4; c++)
            values[r * 4 + (size_t)c] = row[HTA_TIMELINE_COMPUTE_US + c].f;
        if (row[HTA_TIMELINE_BIN].i == 0)
            ranks[r / (size_t)bins] = row[HTA_TIMELINE_RANK].i;
    }
    for (int k = 0; rc == 0 && k <= bins; k++) {
        int64_t span = info->timeline_end_ns - info->timeline_start_ns;
        edges[k] =
            (double)(info->timeline_start_ns + (int64_t)((__int128)span * k / bins)) / 1000.0;
    }
    hid_t ds = -1;
    hsize_t dims[3] = {n_ranks, (hsize_t)bins, 4};
    hsize_t rank_dims[1] = {n_ranks}, edge_dims[1] = {(hsize_t)bins + 1};
    if (rc == 0)
        rc = write_array(file, "/timeline", H5T_NATIVE_DOUBLE, 3, dims, values, &ds);
    if (rc == 0)
        rc = write_array(file, "/timeline_ranks", H5T_NATIVE_INT64, 1, rank_dims, ranks, NULL);
    if (rc == 0) {
        static char *const categories[] = {"compute", "communicate", "overlap", "empty"};
        hid_t space = H5Screate_simple(1, edge_dims, NULL);
        hid_t attr =
            H5Acreate2(ds, "bin_edges_us", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT);
        rc = attr < 0 || H5Awrite(attr, H5T_NATIVE_DOUBLE, edges) < 0 ? -1 : 0;
        if (attr >= 0)
            H5Aclose(attr);
        H5Sclose(space);
        if (rc == 0 && (put_attr_strings(ds, "categories", categories, 4) ||
                        put_attr_string(ds, "unit", "us")))
            rc = -1;
    }
    if (ds >= 0)
        H5Dclose(ds);
    free(values);
    free(ranks);
    free(edges);
    return rc;
}

/* Writes n strings, repaired to valid UTF-8 (paths and the command line
 * are whatever the system holds), as the attribute `name` of shape space. */
static int put_attr_text(hid_t obj, const char *name, hid_t space, const char *const *values,
                         size_t n)
{
    char **repaired = calloc(n ? n : 1, sizeof *repaired);
    int rc = repaired ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (!(repaired[i] = hta_utf8_repair(values[i])))
            rc = -1;
    hid_t type = utf8_string_type();
    hid_t attr = rc ? -1 : H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    if (attr < 0 || H5Awrite(attr, type, repaired) < 0)
        rc = -1;
    if (attr >= 0)
        H5Aclose(attr);
    H5Tclose(type);
    for (size_t i = 0; repaired && i < n; i++)
        free(repaired[i]);
    free(repaired);
    return rc;
}

static int put_attr_string(hid_t obj, const char *name, const char *value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    int rc = put_attr_text(obj, name, space, &value, 1);
    H5Sclose(space);
    return rc;
}

static int put_attr_strings(hid_t obj, const char *name, char *const *values, size_t n)
{
    hsize_t dims[1] = {n};
    hid_t space = H5Screate_simple(1, dims, NULL);
    int rc = put_attr_text(obj, name, space, (const char *const *)values, n);
    H5Sclose(space);
    return rc;
}

static int put_attr_number(hid_t obj, const char *name, hid_t type, const void *value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = attr < 0 ? -1 : H5Awrite(attr, type, value);
    if (attr >= 0)
        H5Aclose(attr);
    H5Sclose(space);
    return rc < 0 ? -1 : 0;
}

static int put_attr_i64(hid_t obj, const char *name, int64_t v)
{
    return put_attr_number(obj, name, H5T_NATIVE_INT64, &v);
}

static int put_attr_f64(hid_t obj, const char *name, double v)
{
    return put_attr_number(obj, name, H5T_NATIVE_DOUBLE, &v);
}

static void count_ranks(const hta_tableset *set, int64_t *n_ok, int64_t *n_failed)
{
    *n_ok = *n_failed = 0;
    const hta_table *ranks = hta_tableset_find(set, hta_ranks_table.name);
    for (size_t r = 0; ranks && r < ranks->n_rows; r++) {
        const char *status = hta_table_row(ranks, r)[HTA_RANKS_STATUS].s;
        *n_failed += strcmp(status, "failed") == 0;
        *n_ok += hta_ranks_status_analysed(status);
    }
}

/* Each option the settings list records, under its attribute name. */
static int write_setting_attributes(hid_t file, const hta_settings *opt)
{
    for (size_t i = 0; i < hta_n_settings; i++) {
        const char *name = hta_setting_list[i].attribute;
        if (!name)
            continue;
        hta_setting_value v = hta_settings_value(opt, i);
        int failed = v.type == HTA_VALUE_INT      ? put_attr_i64(file, name, v.i)
                     : v.type == HTA_VALUE_NUMBER ? put_attr_f64(file, name, v.number)
                                                  : put_attr_string(file, name, v.text);
        if (failed)
            return -1;
    }
    return 0;
}

static int write_root_attributes(hid_t file, const hta_tableset *set,
                                 const hta_settings *opt, const hta_run_info *info)
{
    char created[64];
    time_t now = time(NULL);
    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    int64_t n_ok, n_failed;
    count_ranks(set, &n_ok, &n_failed);
    const char *command_line = opt->output.command_line ? opt->output.command_line : "";
    /* The first failure stops the writing: the file is then discarded. */
    return put_attr_i64(file, "schema_version", HTA_SCHEMA_VERSION) ||
           put_attr_string(file, "tool_version", info->tool_version) ||
           put_attr_string(file, "created_utc", created) ||
           put_attr_string(file, "command_line", command_line) ||
           put_attr_strings(file, "trace_paths", info->trace_paths, info->n_traces) ||
           put_attr_string(file, "time_unit", "us") ||
           put_attr_i64(file, "n_ranks", n_ok + n_failed) ||
           put_attr_i64(file, "n_failed", n_failed) ||
           put_attr_i64(file, "n_processes", info->n_processes) ||
           put_attr_f64(file, "wall_seconds", info->wall_seconds) ||
           put_attr_f64(file, "gather_seconds", info->gather_seconds) ||
           put_attr_f64(file, "crossrank_seconds", info->crossrank_seconds)
               ? -1
               : write_setting_attributes(file, opt);
}

/* HDF5 before 2.0 clears the "open for writing" flags in a file image
 * without updating the superblock's checksum (HDFGroup/hdf5#5489), and the
 * 1.8 format's superblock (version 2 or 3) is checksummed, so the image
 * would not open.  The repair uses HDF5's own checksum, which the library
 * exports though its public headers do not declare it; on a fixed HDF5 it
 * rewrites the same value. */
uint32_t H5_checksum_metadata(const void *data, size_t len, uint32_t initval);

static void repair_superblock_checksum(unsigned char *image, size_t size)
{
    static const unsigned char signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    if (size < 12 || memcmp(image, signature, sizeof signature) != 0 || image[8] < 2)
        return;
    /* signature, version, sizes of offsets and lengths, flags; 4 addresses */
    size_t covered = 12 + 4 * (size_t)image[9];
    if (covered + 4 > size)
        return;
    uint32_t sum = H5_checksum_metadata(image, covered, 0);
    for (size_t i = 0; i < 4; i++)
        image[covered + i] = (unsigned char)(sum >> (8 * i));
}

/* Writes the finished in-memory file to fd.  Not synced here:
 * hta_results_file_publish syncs the whole file, the in-place tables included,
 * before the rename exposes it. */
static int save_image(hid_t file, int fd, const char *output, hta_error *err)
{
    if (H5Fflush(file, H5F_SCOPE_GLOBAL) < 0)
        return hta_fail(err, "%s: cannot finish the results file", output);
    ssize_t size = H5Fget_file_image(file, NULL, 0);
    unsigned char *image = size > 0 ? hta_large_malloc((size_t)size) : NULL;
    if (!image || H5Fget_file_image(file, image, (size_t)size) != size) {
        free(image);
        return hta_fail(err, "%s: out of memory for the results file", output);
    }
    repair_superblock_checksum(image, (size_t)size);
    int failed = hta_write_all(fd, image, (size_t)size, -1);
    int why = errno;
    free(image);
    return failed ? hta_fail(err, "%s: cannot write the results file: %s", output, strerror(why))
                  : 0;
}

/* The in-memory file grows by this step, zero-filled: an estimate of the
 * whole file (8 bytes a cell, strings with their heap overhead, and room
 * for metadata) lets it grow about once.  Small steps would copy the image
 * again at every step once the allocator serves it from the heap; one
 * large fixed step would zero-fill megabytes for a file of kilobytes (a
 * one-trace file is a few hundred kilobytes). */
#define STRING_OVERHEAD_BYTES 32
#define METADATA_ROOM_BYTES (128u << 10)

static size_t core_increment(const hta_tableset *set)
{
    size_t bytes = METADATA_ROOM_BYTES;
    for (size_t i = 0; i < set->n_tables; i++) {
        const hta_table *t = set->tables[i];
        bytes += t->n_rows * t->n_columns * sizeof(hta_cell);
        for (size_t c = 0; c < t->n_columns; c++)
            for (size_t r = 0; t->columns[c].type == HTA_COL_STR && r < t->n_rows; r++)
                bytes += strlen(hta_table_row(t, r)[c].s) + STRING_OVERHEAD_BYTES;
    }
    return bytes;
}

/* The in-memory file's own buffer, grown and zero-filled by the core
 * driver: on huge pages, as the analyses' arrays, because faulting in a
 * many-rank file 4 KB at a time is a large share of its write. */
static void *image_malloc(size_t size, H5FD_file_image_op_t op, void *udata)
{
    (void)op, (void)udata;
    return hta_large_malloc(size);
}

static void *image_memcpy(void *dest, const void *src, size_t size, H5FD_file_image_op_t op,
                          void *udata)
{
    (void)op, (void)udata;
    return memcpy(dest, src, size);
}

static void *image_realloc(void *block, size_t size, H5FD_file_image_op_t op, void *udata)
{
    (void)op, (void)udata;
    return hta_large_realloc(block, size);
}

static herr_t image_free(void *block, H5FD_file_image_op_t op, void *udata)
{
    (void)op, (void)udata;
    free(block);
    return 0;
}

/* Builds every table into an in-memory HDF5 file (the core driver, no
 * backing store) and saves it to fd.  HDF5 never writes to the disk
 * itself: when its writes fail on a full disk, the close that follows
 * fails too, and HDF5 1.10 then crashes at MPI_Finalize on the half-closed
 * file.  The 1.8 format stores large attributes densely: the original
 * format caps an object's attributes at 64 KiB, which trace_paths exceeds
 * beyond about 4000 traces.  The in-memory file takes the name of the
 * (empty) temporary: HDF5 first opens a name to see whether it is open
 * already, and the core driver would read a previous results file under
 * the final name whole into memory. */
static int build_and_save(const hta_tableset *set, const hta_settings *opt,
                          const hta_run_info *info, const char *tmp_path, int fd,
                          hta_error *err)
{
    const char *path = opt->output.path;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
    H5Pset_fapl_core(fapl, core_increment(set), 0);
    H5FD_file_image_callbacks_t on_huge_pages = {image_malloc, image_memcpy, image_realloc,
                                                 image_free, NULL, NULL, NULL};
    H5Pset_file_image_callbacks(fapl, &on_huge_pages);
    hid_t file = H5Fcreate(tmp_path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (file < 0)
        return hta_fail(err, "%s: cannot create the results file", path);
    int rc = write_root_attributes(file, set, opt, info)
                 ? hta_fail(err, "%s: cannot write the file attributes", path)
                 : 0;
    for (size_t i = 0; i < set->n_tables && rc == 0; i++) {
        const hta_table *t = set->tables[i];
        if (t->flags & HTA_TABLE_SCRATCH)
            continue;
        int failed = t->flags & HTA_TABLE_BINNED ? write_timeline(file, t, info, opt->analysis.bins)
                                                 : write_table(file, t);
        if (failed)
            rc = hta_fail(err, "%s: cannot build /%s (out of memory?)", path, t->name);
    }
    if (rc == 0)
        rc = save_image(file, fd, path, err);
    if (H5Fclose(file) < 0 && rc == 0)
        rc = hta_fail(err, "%s: cannot finish the results file", path);
    return rc;
}

/* The temporary is created first, so it is there for the whole writing
 * phase (and a directory that became unwritable fails before any work). */
int hta_write_root_tables(const hta_tableset *set, const hta_settings *opt,
                          const hta_run_info *info, char **tmp_path, hta_error *err)
{
    const char *path = opt->output.path;
    char *tmp = hta_results_file_temporary_name(path);
    *tmp_path = NULL;
    if (!tmp)
        return hta_fail(err, "out of memory");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) {
        hta_fail(err, "%s: cannot create the results file: %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    int rc = build_and_save(set, opt, info, tmp, fd, err);
    if (close(fd) && rc == 0)
        rc = hta_fail(err, "%s: cannot write the results file: %s", path, strerror(errno));
    if (rc) {
        unlink(tmp);
        free(tmp);
        return -1;
    }
    *tmp_path = tmp;
    return 0;
}
