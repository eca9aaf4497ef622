/* hdf5_in_place.c: the per-rank tables that stay where they were computed.
 *
 * Tables that the root does not need for the cross-rank statistics, and
 * whose strings come from small fixed vocabularies, are never gathered:
 * once the root has written its own tables (hdf5_writer.c), every process
 * opens the file through MPI-IO and writes its own rows of these tables
 * collectively.  The root's memory and the gather then stay small however
 * many rows the ranks have (--detail writes every launch of every rank),
 * and the writing is spread over the processes.
 *
 * Rows land in rank order, as in every other table, although a process's
 * ranks are not contiguous (files are assigned by size, and ranks are only
 * known after parsing).  Three collectives settle the layout: an
 * all-gather of the table schemas (a process may lack a table), an
 * all-reduce of each string column's widest value, and an all-reduce of the
 * rows every rank contributes to every table.  Ranks in order then give
 * each rank's first row; a process selects its ranks' row blocks as one
 * hyperslab union and writes its rows, already sorted by rank, with one
 * collective H5Dwrite per table.
 *
 * "collectives" (one row per collective instance), "a2a" (one per
 * all-to-all instance) and "p2p" (one per send/recv pair) are not per
 * rank: each
 * process holds the instances it matched (crossrank/collective_exchange.c),
 * a contiguous stretch of the table in instance order, so its rows go
 * after those of the processes before it (an exclusive scan of the row
 * counts) and the root never holds them all.
 *
 * Strings are fixed-length, NUL-padded to the column's widest value:
 * parallel HDF5 cannot write variable-length data, which is why tables of
 * free text (kernel names, file paths, errors) stay with the root. */
#define _GNU_SOURCE /* fallocate */
#include "output/hdf5_in_place.h"

#include "numerics/bounds.h"
#include "util/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static int any_failed(int failed)
{
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return failed;
}

/* Every in-place table any process has, with the same columns and in the
 * same order on every process (each merges the same buffers in the same
 * order), but without rows. */
static int agree_on_tables(const hta_tableset *mine, hta_tableset *schema, hta_error *err)
{
    hta_tableset empty = {0};
    hta_buf packed = {0};
    int failed = 0;
    for (size_t i = 0; i < mine->n_tables && !failed; i++) {
        const hta_table *t = mine->tables[i];
        hta_table_spec spec = hta_table_spec_of(t);
        failed = !hta_tableset_table(&empty, &spec);
    }
    failed = failed || hta_tableset_pack(&empty, &packed) || packed.len > INT_MAX;
    hta_tableset_free(&empty);
    int n_processes;
    MPI_Comm_size(MPI_COMM_WORLD, &n_processes);
    int *lens = calloc((size_t)n_processes, sizeof *lens);
    int *offsets = calloc((size_t)n_processes, sizeof *offsets);
    char *all = NULL;
    failed = any_failed(failed || !lens || !offsets);
    if (!failed) {
        int len = (int)packed.len;
        MPI_Allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, MPI_COMM_WORLD);
        long long total = 0;
        for (int p = 0; p < n_processes; p++) {
            offsets[p] = (int)total;
            total += lens[p];
        }
        all = total <= INT_MAX ? malloc(total ? (size_t)total : 1) : NULL;
        failed = any_failed(!all);
    }
    if (!failed)
        MPI_Allgatherv(packed.data, (int)packed.len, MPI_BYTE, all, lens, offsets, MPI_BYTE,
                       MPI_COMM_WORLD);
    for (int p = 0; !failed && p < n_processes; p++)
        failed = hta_tableset_merge(schema, all + offsets[p], (size_t)lens[p], err) != 0;
    hta_buf_free(&packed);
    free(lens);
    free(offsets);
    free(all);
    return any_failed(failed) ? hta_fail(err, "cannot agree on the per-rank tables") : 0;
}

/* The file declares its strings UTF-8, as the root's tables do: a copy
 * kind is the start of a trace's event name and may hold any bytes. */
static int repair_strings(hta_tableset *mine)
{
    for (size_t i = 0; i < mine->n_tables; i++) {
        hta_table *t = mine->tables[i];
        for (size_t k = 0; k < t->n_rows * t->n_columns; k++) {
            char **s = &t->cells[k].s;
            if (t->columns[k % t->n_columns].type != HTA_COL_STR || hta_utf8_valid(*s))
                continue;
            char *valid = hta_utf8_repair(*s);
            if (!valid)
                return -1;
            free(*s);
            *s = valid;
        }
    }
    return 0;
}

/* The ranks that have rows anywhere, ascending: a rank's slot is its
 * position here. */
typedef struct rank_slots {
    const int64_t *ranks;
    size_t n;
} rank_slots;

static size_t rank_slot(const rank_slots *s, int64_t rank)
{
    return hta_lower_bound_i64(s->ranks, s->n, rank);
}

/* End of the run of rows of one rank that starts at row r (rows are sorted
 * by rank): a rank's rows are one block in the file. */
static size_t rank_run_end(const hta_table *t, size_t r)
{
    int64_t rank = hta_table_row(t, r)[0].i;
    size_t end = r + 1;
    while (end < t->n_rows && hta_table_row(t, end)[0].i == rank)
        end++;
    return end;
}

/* One agreed table: its HDF5 layout, its global row offsets by rank slot,
 * and this process's rows packed in that layout. */
typedef struct in_place_table {
    const hta_table *schema;   /* borrowed from the agreed set */
    const hta_table *rows;     /* borrowed from mine; NULL when none */
    size_t *widths;            /* owned: bytes of each column in a record */
    size_t record_bytes;
    int64_t *first_row;        /* owned: by rank slot, then the total */
    int by_rank;               /* else in process order, from my_first_row */
    int64_t my_first_row;
} in_place_table;

static size_t string_width(const hta_table *t, size_t c)
{
    size_t widest = 1;
    for (size_t r = 0; t && r < t->n_rows; r++) {
        size_t n = strlen(hta_table_row(t, r)[c].s);
        if (n > widest)
            widest = n;
    }
    return widest;
}

/* Everything the layout needs, allocated before any collective so that
 * running out of memory cannot leave another process waiting in one. */
static int alloc_layouts(in_place_table *tables, size_t n_tables, const rank_slots *slots)
{
    for (size_t i = 0; i < n_tables; i++) {
        tables[i].widths = calloc(tables[i].schema->n_columns + 1, sizeof *tables[i].widths);
        tables[i].first_row = calloc(slots->n + 1, sizeof *tables[i].first_row);
        if (!tables[i].widths || !tables[i].first_row)
            return -1;
    }
    return 0;
}

/* The widest value of every string column, over every process. */
static void agree_on_widths(in_place_table *tables, size_t n_tables)
{
    for (size_t i = 0; i < n_tables; i++) {
        in_place_table *it = &tables[i];
        size_t n_columns = it->schema->n_columns;
        for (size_t c = 0; c < n_columns; c++)
            it->widths[c] = it->schema->columns[c].type == HTA_COL_STR
                                ? string_width(it->rows, c) : sizeof(hta_cell);
        MPI_Allreduce(MPI_IN_PLACE, it->widths, (int)n_columns, MPI_UNSIGNED_LONG, MPI_MAX,
                      MPI_COMM_WORLD);
        it->record_bytes = 0;
        for (size_t c = 0; c < n_columns; c++)
            it->record_bytes += it->widths[c];
    }
}

/* A table in process order: this process's first row and the length
 * (first_row[n_slots]). */
static void agree_on_process_rows(in_place_table *it, const rank_slots *slots)
{
    int64_t mine = it->rows ? (int64_t)it->rows->n_rows : 0, before = 0, total = 0;
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Exscan(&mine, &before, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    it->my_first_row = me == 0 ? 0 : before; /* undefined on process 0 */
    it->first_row[slots->n] = total;
}

/* Rows per rank slot summed over processes, then turned into each slot's
 * first row (first_row[n_slots] is the table's length). */
static void agree_on_rows(in_place_table *tables, size_t n_tables, const rank_slots *slots)
{
    for (size_t i = 0; i < n_tables; i++) {
        int64_t *counts = tables[i].first_row;
        const hta_table *rows = tables[i].rows;
        tables[i].by_rank = (tables[i].schema->flags & HTA_TABLE_PER_RANK) != 0;
        if (!tables[i].by_rank) {
            agree_on_process_rows(&tables[i], slots);
            continue;
        }
        for (size_t r = 0, end; rows && r < rows->n_rows; r = end) {
            end = rank_run_end(rows, r);
            counts[rank_slot(slots, hta_table_row(rows, r)[0].i)] += (int64_t)(end - r);
        }
        MPI_Allreduce(MPI_IN_PLACE, counts, (int)slots->n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        int64_t next = 0;
        for (size_t s = 0; s <= slots->n; s++) {
            int64_t n = s < slots->n ? counts[s] : 0;
            counts[s] = next;
            next += n;
        }
    }
}

/* Per-event tables (HTA_TABLE_PER_EVENT) run to millions of rows of repetitive
 * numbers: stored in chunks of up to DETAIL_CHUNK_ROWS rows, byte-shuffled
 * and deflated at a fast level (parallel HDF5 compresses collectively
 * written chunks).  Every other table is small and stays contiguous, as
 * does an empty one (a chunk holds at least one row, and may not exceed a
 * fixed-size dataset of 0 rows). */
#define DETAIL_CHUNK_ROWS 65536
#define DETAIL_DEFLATE_LEVEL 1
/* /collectives and /p2p (HTA_TABLE_DEFLATE_LARGE), one row per instance of
 * the job, likewise once it holds
 * enough bytes for the disk saved to outweigh the time deflating takes (a
 * large single trace's tens of thousands of instances are written as they
 * are), in chunks of a few megabytes whatever the width its fixed-length
 * strings give a row. */
#define INSTANCE_DEFLATE_MIN_BYTES (16u << 20)
#define INSTANCE_CHUNK_BYTES (4u << 20)

static hid_t dataset_creation(unsigned flags, hsize_t n_rows, size_t record_bytes)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    /* Every row is written, so filling the file first is wasted work. */
    H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
    hsize_t chunk_rows = DETAIL_CHUNK_ROWS;
    int compressed = (flags & HTA_TABLE_PER_EVENT) && n_rows > 0;
    if ((flags & HTA_TABLE_DEFLATE_LARGE) && n_rows * record_bytes >= INSTANCE_DEFLATE_MIN_BYTES) {
        compressed = 1;
        chunk_rows = INSTANCE_CHUNK_BYTES / record_bytes + 1;
        chunk_rows = chunk_rows < DETAIL_CHUNK_ROWS ? chunk_rows : DETAIL_CHUNK_ROWS;
    }
    if (!compressed)
        return dcpl;
    hsize_t chunk[1] = {n_rows < chunk_rows ? n_rows : chunk_rows};
    H5Pset_chunk(dcpl, 1, chunk);
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, DETAIL_DEFLATE_LEVEL);
    return dcpl;
}

static hid_t record_type(const in_place_table *it)
{
    hid_t type = H5Tcreate(H5T_COMPOUND, it->record_bytes);
    size_t offset = 0;
    for (size_t c = 0; c < it->schema->n_columns; c++) {
        const hta_column *col = &it->schema->columns[c];
        hid_t member = col->type == HTA_COL_I64 ? H5Tcopy(H5T_NATIVE_INT64)
                       : col->type == HTA_COL_F64 ? H5Tcopy(H5T_NATIVE_DOUBLE)
                                                  : H5Tcopy(H5T_C_S1);
        if (col->type == HTA_COL_STR) {
            H5Tset_size(member, it->widths[c]);
            H5Tset_strpad(member, H5T_STR_NULLPAD);
            H5Tset_cset(member, H5T_CSET_UTF8);
        }
        H5Tinsert(type, col->name, offset, member);
        H5Tclose(member);
        offset += it->widths[c];
    }
    return type;
}

/* This process's rows as packed records, in their (rank) order. */
static char *pack_records(const in_place_table *it)
{
    size_t n = it->rows ? it->rows->n_rows : 0;
    char *records = calloc(n ? n : 1, it->record_bytes);
    for (size_t r = 0; records && r < n; r++) {
        const hta_cell *row = hta_table_row(it->rows, r);
        char *out = records + r * it->record_bytes;
        for (size_t c = 0; c < it->schema->n_columns; c++) {
            if (it->schema->columns[c].type == HTA_COL_STR)
                memcpy(out, row[c].s, strlen(row[c].s)); /* calloc'd: NUL-padded */
            else
                memcpy(out, &row[c], sizeof row[c]);
            out += it->widths[c];
        }
    }
    return records;
}

/* The file rows of this process's rows: one block per run of its ranks. */
static int select_my_rows(hid_t space, const in_place_table *it, const rank_slots *slots)
{
    size_t n = it->rows ? it->rows->n_rows : 0;
    if (H5Sselect_none(space) < 0)
        return -1;
    if (!it->by_rank) {
        hsize_t start[1] = {(hsize_t)it->my_first_row}, count[1] = {n};
        return H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ? -1 : 0;
    }
    for (size_t r = 0, end; r < n; r = end) {
        end = rank_run_end(it->rows, r);
        int64_t rank = hta_table_row(it->rows, r)[0].i;
        hsize_t start[1] = {(hsize_t)it->first_row[rank_slot(slots, rank)]};
        hsize_t count[1] = {end - r};
        if (H5Sselect_hyperslab(space, H5S_SELECT_OR, start, NULL, count, NULL) < 0)
            return -1;
    }
    return 0;
}

static int write_table(hid_t file, const in_place_table *it, const rank_slots *slots)
{
    hsize_t total = (hsize_t)it->first_row[slots->n];
    size_t mine = it->rows ? it->rows->n_rows : 0;
    char path[512];
    snprintf(path, sizeof path, "/%s", it->schema->name);
    hid_t type = record_type(it);
    hid_t file_space = H5Screate_simple(1, &total, NULL);
    hsize_t mem_rows = mine ? mine : 1;
    hid_t mem_space = H5Screate_simple(1, &mem_rows, NULL);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t dcpl = dataset_creation(it->schema->flags, total, it->record_bytes);
    hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE);
    char *records = pack_records(it);
    int rc = records ? 0 : -1;
    hid_t ds = H5Dcreate2(file, path, type, file_space, lcpl, dcpl, H5P_DEFAULT);
    if (ds < 0)
        rc = -1;
    if (total > 0 && ds >= 0) {
        /* Collective: a process without rows, or without the memory to
         * pack them (the run then fails as a whole), still takes part. */
        int writes = records && mine > 0;
        if ((writes ? select_my_rows(file_space, it, slots) : H5Sselect_none(file_space)) < 0 ||
            (!writes && H5Sselect_none(mem_space) < 0))
            rc = -1;
        if (H5Dwrite(ds, type, mem_space, file_space, xfer, writes ? records : "") < 0)
            rc = -1;
    }
    free(records);
    if (ds >= 0)
        H5Dclose(ds);
    H5Pclose(xfer);
    H5Pclose(dcpl);
    H5Pclose(lcpl);
    H5Sclose(mem_space);
    H5Sclose(file_space);
    H5Tclose(type);
    return rc;
}

static int write_all_tables(const char *tmp_path, const in_place_table *tables,
                            size_t n_tables, const rank_slots *slots)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
    H5Pset_coll_metadata_write(fapl, 1);
    hid_t file = H5Fopen(tmp_path, H5F_ACC_RDWR, fapl);
    H5Pclose(fapl);
    if (file < 0)
        return -1;
    int rc = 0;
    /* Every process makes every collective call, so a failed table does
     * not stop the others (the run then fails as a whole). */
    for (size_t i = 0; i < n_tables; i++)
        rc |= write_table(file, &tables[i], slots);
    if (H5Fclose(file) < 0)
        rc = -1;
    return rc;
}

/* HDF5 1.10 cannot survive a failed write through MPI-IO: the file stays
 * half closed and the library crashes in MPI_Finalize.  So the root
 * reserves, before HDF5 writes anything, more disk than the tables can
 * take (their uncompressed size, plus room for metadata), and a full disk
 * or a file-size limit fails here, cleanly, instead.  The reservation does
 * not change the file's size, and release_space frees what was not used. */
#define METADATA_BYTES_PER_TABLE (64u << 10)
#define METADATA_BYTES_PER_CHUNK (16u << 10)
#define METADATA_BYTES (1u << 20)

static uint64_t bytes_needed(const in_place_table *tables, size_t n_tables,
                             const rank_slots *slots)
{
    uint64_t total = METADATA_BYTES;
    for (size_t i = 0; i < n_tables; i++) {
        uint64_t rows = (uint64_t)tables[i].first_row[slots->n];
        total += rows * tables[i].record_bytes + METADATA_BYTES_PER_TABLE +
                 (rows / DETAIL_CHUNK_ROWS + 1) * METADATA_BYTES_PER_CHUNK;
    }
    return total;
}

/* Root: 0, or the errno that stops the write. */
static int reserve_space(const char *tmp_path, uint64_t bytes)
{
    int fd = open(tmp_path, O_RDWR);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int why = errno;
        if (fd >= 0)
            close(fd);
        return why;
    }
    struct rlimit limit;
    uint64_t end = (uint64_t)st.st_size + bytes;
    int why = 0;
    if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        end > (uint64_t)limit.rlim_cur)
        why = EFBIG;
    else if (fallocate(fd, FALLOC_FL_KEEP_SIZE, st.st_size, (off_t)bytes) != 0)
        why = errno == EOPNOTSUPP ? 0 : errno; /* no reservation possible: go on */
    close(fd);
    return why;
}

/* Root: the file's blocks past its end were reserved, not used. */
static void release_space(const char *tmp_path)
{
    int fd = open(tmp_path, O_RDWR);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0)
        (void)ftruncate(fd, st.st_size);
    if (fd >= 0)
        close(fd);
}

static int agree_on_space(const char *tmp_path, const char *output, uint64_t bytes,
                          hta_error *err)
{
    int me, why = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0)
        why = reserve_space(tmp_path, bytes);
    MPI_Bcast(&why, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return why ? hta_fail(err, "%s: cannot write the results file: %s", output, strerror(why))
               : 0;
}

static void free_tables(in_place_table *tables, size_t n_tables)
{
    for (size_t i = 0; tables && i < n_tables; i++) {
        free(tables[i].widths);
        free(tables[i].first_row);
    }
    free(tables);
}

/* Collective over MPI_COMM_WORLD. */
int hta_write_in_place_tables(const char *tmp_path, const char *output, hta_tableset *mine,
                              const int64_t *ranks, size_t n_ranks, hta_error *err)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hta_tableset schema = {0};
    rank_slots slots = {ranks, n_ranks};
    in_place_table *tables = NULL;
    int failed = agree_on_tables(mine, &schema, err);
    if (!failed) {
        tables = calloc(schema.n_tables ? schema.n_tables : 1, sizeof *tables);
        for (size_t i = 0; tables && i < schema.n_tables; i++) {
            tables[i].schema = schema.tables[i];
            tables[i].rows = hta_tableset_find(mine, schema.tables[i]->name);
        }
        failed = any_failed(!tables || repair_strings(mine) ||
                            alloc_layouts(tables, schema.n_tables, &slots));
        if (failed)
            hta_fail(err, "out of memory while laying out the per-rank tables");
    }
    if (!failed) {
        agree_on_widths(tables, schema.n_tables);
        agree_on_rows(tables, schema.n_tables, &slots);
        failed = agree_on_space(tmp_path, output,
                                bytes_needed(tables, schema.n_tables, &slots), err);
    }
    if (!failed) {
        failed = any_failed(write_all_tables(tmp_path, tables, schema.n_tables, &slots) != 0);
        if (failed)
            hta_fail(err, "%s: cannot write the per-rank tables", output);
        int me;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        if (me == 0)
            release_space(tmp_path);
    }
    free_tables(tables, schema.n_tables);
    hta_tableset_free(&schema);
    return failed ? -1 : 0;
}
