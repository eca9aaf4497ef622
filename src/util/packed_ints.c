/* packed_ints.c: see hta/packed_ints.h. */
#include "hta/packed_ints.h"

int hta_pack_u64(hta_buf *out, uint64_t v)
{
    char digits[12];
    int n = 0;
    digits[n++] = (char)(1 + v % 127);       /* final digit, 0x01-0x7F */
    for (uint64_t high = v / 127; high; high /= 128)
        digits[n++] = (char)(0x80 | (high % 128));
    while (n > 0)
        if (hta_buf_putc(out, digits[--n]))
            return -1;
    return 0;
}

int hta_unpack_u64(const char **p, uint64_t *v)
{
    const unsigned char *s = (const unsigned char *)*p;
    if (*s == 0)
        return 0;
    uint64_t high = 0;
    for (; *s & 0x80; s++)
        high = high * 128 + (*s & 0x7F);
    *v = high * 127 + (uint64_t)(*s - 1);
    *p = (const char *)s + 1;
    return 1;
}
