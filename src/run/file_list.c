/* file_list.c: the file list and its wire format (see run/file_list.h). */
#include "run/file_list.h"

#include <stdlib.h>
#include <string.h>

void hta_file_list_free(hta_file_list *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->paths[i]);
    free(list->paths);
    free(list->bytes);
    memset(list, 0, sizeof *list);
}

int hta_file_list_pack(const hta_file_list *list, hta_buf *out)
{
    if (hta_buf_put_u64(out, list->count))
        return -1;
    for (size_t i = 0; i < list->count; i++) {
        size_t len = strlen(list->paths[i]);
        if (hta_buf_put_u64(out, list->bytes[i]) || hta_buf_put_u32(out, (uint32_t)len) ||
            hta_buf_append(out, list->paths[i], len))
            return -1;
    }
    return 0;
}

int hta_file_list_unpack(const char *p, size_t len, hta_file_list *list)
{
    const char *end = p + len;
    uint64_t count;
    memset(list, 0, sizeof *list);
    if (len < sizeof count)
        return -1;
    memcpy(&count, p, sizeof count);
    p += sizeof count;
    list->paths = calloc(count ? count : 1, sizeof *list->paths);
    list->bytes = calloc(count ? count : 1, sizeof *list->bytes);
    if (!list->paths || !list->bytes)
        return -1;
    for (uint64_t i = 0; i < count; i++) {
        uint32_t n;
        if ((size_t)(end - p) < sizeof(uint64_t) + sizeof n)
            return -1;
        memcpy(&list->bytes[i], p, sizeof(uint64_t));
        memcpy(&n, p + sizeof(uint64_t), sizeof n);
        p += sizeof(uint64_t) + sizeof n;
        if ((size_t)(end - p) < n || !(list->paths[i] = strndup(p, n)))
            return -1;
        p += n;
        list->count = i + 1;
    }
    return 0;
}
