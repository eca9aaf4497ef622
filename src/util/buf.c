/* buf.c: growable byte buffer (see util/buf.h). */
#include "util/buf.h"
#include "util/large_alloc.h"

#include <stdlib.h>
#include <string.h>

void hta_buf_free(hta_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

int hta_buf_reserve(hta_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *data = hta_large_realloc(b->data, cap);
    if (!data)
        return -1;
    b->data = data;
    b->cap = cap;
    return 0;
}

int hta_buf_append(hta_buf *b, const void *data, size_t len)
{
    if (hta_buf_reserve(b, len))
        return -1;
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

int hta_buf_putc(hta_buf *b, char c)
{
    if (b->len + 2 > b->cap && hta_buf_reserve(b, 1))
        return -1;
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
    return 0;
}

int hta_buf_put_u32(hta_buf *b, uint32_t v)
{
    return hta_buf_append(b, &v, sizeof v);
}

int hta_buf_put_u64(hta_buf *b, uint64_t v)
{
    return hta_buf_append(b, &v, sizeof v);
}
