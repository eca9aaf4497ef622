/* table_stash.c: one trace's tables after another in one buffer (see
 * hta/table_stash.h).
 *
 * Per trace: u64 packed length, u64 deflated length (0: stored as packed),
 * then the bytes.  zlib's fastest level runs at ~100 MB/s and keeps 28-64%
 * of the bytes (the timeline's packed segments, which dominate, compress
 * least): about 1% of a large trace's time, but 10% of a 1 MB trace's,
 * whose tens of kilobytes of rows never decide a peak (with many small traces
 * the peak comes after the last one, when the tables are unpacked anyway).
 * So only tables from DEFLATE_FROM bytes on (generated traces from about
 * 150 MB) are deflated.  The lengths mark where the next trace begins,
 * because hta_tableset_merge reads one packed set. */
#include "hta/table_stash.h"

#include <string.h>
#include <zlib.h>

#define DEFLATE_FROM (256 << 10)

typedef struct entry_header {
    uint64_t packed_len, deflated_len;
} entry_header;

/* Appends the header and data, deflated when large, to out; scratch holds
 * the deflated bytes first, so that out grows only by what it keeps. */
static int append_entry(hta_buf *out, hta_buf *scratch, const char *data, size_t len)
{
    entry_header h = {len, 0};
    uLongf n = compressBound(len);
    if (len >= DEFLATE_FROM) {
        if (hta_buf_reserve(scratch, n) ||
            compress2((Bytef *)scratch->data, &n, (const Bytef *)data, len, Z_BEST_SPEED) != Z_OK)
            return -1;
        h.deflated_len = n;
        data = scratch->data;
        len = n;
    }
    return hta_buf_append(out, &h, sizeof h) || hta_buf_append(out, data, len) ? -1 : 0;
}

int hta_table_stash_add(hta_table_stash *stash, const hta_tableset *set)
{
    size_t at = stash->packed.len;
    hta_buf packed = {0}, deflated = {0};
    int rc = hta_tableset_pack(set, &packed) ||
             append_entry(&stash->packed, &deflated, packed.data, packed.len);
    if (rc)
        stash->packed.len = at;
    hta_buf_free(&packed);
    hta_buf_free(&deflated);
    return rc ? -1 : 0;
}

/* Points *data at the packed tables of the entry at *at, inflated into
 * scratch when deflated, and advances past it. */
static int take_entry(const hta_buf *stash, size_t *at, hta_buf *scratch, const char **data,
                      size_t *len)
{
    entry_header h;
    memcpy(&h, stash->data + *at, sizeof h);
    const char *bytes = stash->data + *at + sizeof h;
    *at += sizeof h + (h.deflated_len ? h.deflated_len : h.packed_len);
    *data = bytes;
    *len = h.packed_len;
    if (h.deflated_len == 0)
        return 0;
    uLongf n = h.packed_len;
    scratch->len = 0;
    if (hta_buf_reserve(scratch, h.packed_len) ||
        uncompress((Bytef *)scratch->data, &n, (const Bytef *)bytes, h.deflated_len) != Z_OK ||
        n != h.packed_len)
        return -1;
    *data = scratch->data;
    return 0;
}

int hta_table_stash_unpack(const hta_table_stash *stash, hta_tableset *out, hta_error *err)
{
    hta_buf scratch = {0};
    int rc = 0;
    for (size_t at = 0; rc == 0 && at < stash->packed.len;) {
        const char *data;
        size_t len;
        rc = take_entry(&stash->packed, &at, &scratch, &data, &len)
                 ? hta_fail(err, "out of memory unpacking the result tables")
                 : hta_tableset_merge(out, data, len, err);
    }
    hta_buf_free(&scratch);
    return rc;
}

void hta_table_stash_free(hta_table_stash *stash)
{
    hta_buf_free(&stash->packed);
}
