/* util/buf.h: a growable byte buffer (owned data, explicit length). */
#ifndef HTA_BUF_H
#define HTA_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct hta_buf {
    char *data;   /* owned; NUL-terminated after hta_buf_append/putc */
    size_t len, cap;
} hta_buf;

void hta_buf_free(hta_buf *b);
/* Each returns 0, or -1 when out of memory (the buffer is unchanged). */
int hta_buf_reserve(hta_buf *b, size_t extra);
int hta_buf_append(hta_buf *b, const void *data, size_t len);
int hta_buf_putc(hta_buf *b, char c);
int hta_buf_put_u32(hta_buf *b, uint32_t v);
int hta_buf_put_u64(hta_buf *b, uint64_t v);

#endif
