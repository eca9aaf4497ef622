/* table_stash.c: one trace's tables after another in one buffer (see
 * hta/table_stash.h).
 *
 * Per trace: u64 packed length, u64 deflated length, then the packed
 * tables deflated.  Deflating at zlib's fastest level costs about 1% of a
 * trace's time and keeps 45-65% of the bytes (the timeline's packed
 * segments, which dominate, compress least); the lengths mark where the
 * next trace begins, because hta_tableset_merge reads one packed set. */
#include "hta/table_stash.h"

#include <string.h>
#include <zlib.h>

typedef struct entry_header {
    uint64_t packed_len, deflated_len;
} entry_header;

/* Appends the header and data deflated to out; scratch holds the deflated
 * bytes first, so that out grows only by what it keeps. */
static int append_deflated(hta_buf *out, hta_buf *scratch, const char *data, size_t len)
{
    uLongf n = compressBound(len);
    if (hta_buf_reserve(scratch, n) ||
        compress2((Bytef *)scratch->data, &n, (const Bytef *)data, len, Z_BEST_SPEED) != Z_OK)
        return -1;
    entry_header h = {len, n};
    return hta_buf_append(out, &h, sizeof h) || hta_buf_append(out, scratch->data, n) ? -1 : 0;
}

int hta_table_stash_add(hta_table_stash *stash, const hta_tableset *set)
{
    size_t at = stash->packed.len;
    hta_buf packed = {0}, deflated = {0};
    int rc = hta_tableset_pack(set, &packed) ||
             append_deflated(&stash->packed, &deflated, packed.data, packed.len);
    if (rc)
        stash->packed.len = at;
    hta_buf_free(&packed);
    hta_buf_free(&deflated);
    return rc ? -1 : 0;
}

/* Inflates the entry at *at into packed and advances past it. */
static int take_entry(const hta_buf *stash, size_t *at, hta_buf *packed)
{
    entry_header h;
    memcpy(&h, stash->data + *at, sizeof h);
    *at += sizeof h;
    uLongf n = h.packed_len;
    packed->len = 0;
    if (hta_buf_reserve(packed, h.packed_len) ||
        uncompress((Bytef *)packed->data, &n, (const Bytef *)stash->data + *at,
                   h.deflated_len) != Z_OK || n != h.packed_len)
        return -1;
    packed->len = n;
    *at += h.deflated_len;
    return 0;
}

int hta_table_stash_unpack(const hta_table_stash *stash, hta_tableset *out, hta_error *err)
{
    hta_buf packed = {0};
    int rc = 0;
    for (size_t at = 0; rc == 0 && at < stash->packed.len;) {
        rc = take_entry(&stash->packed, &at, &packed)
                 ? hta_fail(err, "out of memory unpacking the result tables")
                 : hta_tableset_merge(out, packed.data, packed.len, err);
    }
    hta_buf_free(&packed);
    return rc;
}

void hta_table_stash_free(hta_table_stash *stash)
{
    hta_buf_free(&stash->packed);
}
