/* table_stash.c: one trace's tables after another, in memory or in a
 * temporary file, with an index in memory (see table/table_stash.h).
 *
 * Deflating, even at zlib's fastest level, is a small share of a large
 * trace's time but a visible one of a small trace's, whose tens of
 * kilobytes of rows never decide a peak (with many small traces the peak
 * comes after the last one, when the tables are unpacked anyway).  So only
 * tables from DEFLATE_FROM bytes on (traces of a hundred megabytes or
 * more) are deflated.  Entries are unpacked one by one because
 * hta_tableset_merge reads one packed set; those on disk are read into one
 * buffer that each next entry reuses. */
#include "table/table_stash.h"

#include "util/grow.h"

#include <stdlib.h>
#include <zlib.h>

#define DEFLATE_FROM (256 << 10)

static size_t stored_len(const hta_stash_entry *e)
{
    return e->deflated_len ? e->deflated_len : e->packed_len;
}

static int reserve_entry(hta_table_stash *stash)
{
    return hta_grow_array((void **)&stash->entries, &stash->cap_entries, stash->n_entries + 1,
                          sizeof *stash->entries);
}

/* Puts the entry's bytes in memory while the budget allows, else in the
 * file, and in memory after all when the file cannot take them. */
static int keep(hta_table_stash *stash, hta_stash_entry *e, const char *data, size_t len)
{
    if (stash->memory.len + len > HTA_STASH_MEMORY_BYTES &&
        hta_spill_file_append(&stash->file, data, len, &e->at) == 0) {
        e->in_file = 1;
        return 0;
    }
    e->at = stash->memory.len;
    return hta_buf_append(&stash->memory, data, len);
}

int hta_table_stash_add(hta_table_stash *stash, const hta_tableset *set)
{
    hta_buf packed = {0}, deflated = {0};
    int rc = reserve_entry(stash) || hta_tableset_pack(set, &packed);
    hta_stash_entry e = {.packed_len = packed.len};
    if (rc == 0 && packed.len >= DEFLATE_FROM) {
        uLongf n = compressBound(packed.len);
        rc = hta_buf_reserve(&deflated, n) ||
             compress2((Bytef *)deflated.data, &n, (const Bytef *)packed.data, packed.len,
                       Z_BEST_SPEED) != Z_OK;
        e.deflated_len = n;
    }
    if (rc == 0)
        rc = keep(stash, &e, e.deflated_len ? deflated.data : packed.data, stored_len(&e));
    if (rc == 0)
        stash->entries[stash->n_entries++] = e;
    hta_buf_free(&packed);
    hta_buf_free(&deflated);
    return rc ? -1 : 0;
}

/* Points *tables at the entry's packed tables: read from the file into
 * `read` when on disk, inflated into `inflated` when deflated. */
static int entry_tables(const hta_table_stash *stash, const hta_stash_entry *e, hta_buf *read,
                        hta_buf *inflated, const char **tables, hta_error *err)
{
    if (e->in_file && hta_spill_file_read(&stash->file, e->at, stored_len(e), read, err))
        return -1;
    const char *bytes = e->in_file ? read->data : stash->memory.data + e->at;
    *tables = bytes;
    if (e->deflated_len == 0)
        return 0;
    uLongf n = e->packed_len;
    inflated->len = 0;
    if (hta_buf_reserve(inflated, e->packed_len))
        return hta_fail(err, "out of memory unpacking the result tables");
    if (uncompress((Bytef *)inflated->data, &n, (const Bytef *)bytes, e->deflated_len) != Z_OK ||
        n != e->packed_len)
        return hta_fail(err, "cannot inflate the kept result tables");
    *tables = inflated->data;
    return 0;
}

int hta_table_stash_unpack(const hta_table_stash *stash, hta_tableset *out, hta_error *err)
{
    hta_buf read = {0}, inflated = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < stash->n_entries; i++) {
        const char *tables;
        rc = entry_tables(stash, &stash->entries[i], &read, &inflated, &tables, err) ||
             hta_tableset_merge(out, tables, stash->entries[i].packed_len, err);
    }
    hta_buf_free(&read);
    hta_buf_free(&inflated);
    return rc ? -1 : 0;
}

void hta_table_stash_free(hta_table_stash *stash)
{
    hta_buf_free(&stash->memory);
    hta_spill_file_close(&stash->file);
    free(stash->entries);
    *stash = (hta_table_stash){0};
}
