/* run/file_list.h: the trace files of a run, and their wire format.
 *
 * The root discovers the list (run/discover.h) and broadcasts it packed:
 * a u64 count, then per file its u64 size on disk, u32 path length and
 * the path's bytes (no terminator), in the host's byte order (every
 * process of a job runs the same binary on the same kind of machine). */
#ifndef HTA_FILE_LIST_H
#define HTA_FILE_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

typedef struct hta_file_list {
    char **paths;              /* owned, sorted */
    uint64_t *bytes;           /* owned, size on disk */
    size_t count;
} hta_file_list;

void hta_file_list_free(hta_file_list *list);

/* Appends the packed list to out; -1 when out of memory. */
int hta_file_list_pack(const hta_file_list *list, hta_buf *out);

/* Fills list (owned by the caller, freed with hta_file_list_free even on
 * failure) from len packed bytes; -1 when they are short or memory is. */
int hta_file_list_unpack(const char *p, size_t len, hta_file_list *list);

#endif
