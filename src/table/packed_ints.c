/* packed_ints.c: see table/packed_ints.h. */
#include "table/packed_ints.h"

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

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

static uint64_t magnitude(int64_t v)
{
    return v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
}

uint64_t hta_series_factor(uint64_t factor, uint64_t v)
{
    return factor == 1 ? 1 : gcd(factor, v);
}

/* 1 when every value is 0, so that dividing by it is always defined. */
int hta_pack_series_start(hta_buf *out, uint64_t *factor)
{
    *factor = *factor ? *factor : 1;
    return hta_pack_u64(out, *factor);
}

int hta_pack_series_value(hta_buf *out, uint64_t v, uint64_t factor)
{
    return hta_pack_u64(out, v / factor);
}

/* The series helpers take either unsigned values u or signed values s
 * (the other NULL). */

static uint64_t common_factor(const uint64_t *u, const int64_t *s, size_t n)
{
    uint64_t g = 0;
    for (size_t i = 0; i < n && g != 1; i++)
        g = hta_series_factor(g, u ? u[i] : magnitude(s[i]));
    return g;
}

/* Value i divided by factor; signed ones zigzagged, computed on the
 * magnitude so that even INT64_MIN does not overflow. */
static uint64_t scaled_code(const uint64_t *u, const int64_t *s, size_t i, uint64_t factor)
{
    if (u)
        return u[i] / factor;
    uint64_t q = magnitude(s[i]) / factor;
    return s[i] < 0 ? 2 * q - 1 : 2 * q;
}

static int pack_series(hta_buf *out, const uint64_t *u, const int64_t *s, size_t n)
{
    if (n == 0)
        return 0;
    uint64_t factor = common_factor(u, s, n);
    int rc = hta_pack_series_start(out, &factor);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = hta_pack_u64(out, scaled_code(u, s, i, factor));
    return rc;
}

int hta_pack_series(hta_buf *out, const uint64_t *v, size_t n)
{
    return pack_series(out, v, NULL, n);
}

int hta_pack_signed_series(hta_buf *out, const int64_t *v, size_t n)
{
    return pack_series(out, NULL, v, n);
}

void hta_series_open(hta_series *s, const char *packed)
{
    s->next = packed;
    if (!hta_unpack_u64(&s->next, &s->factor))
        s->factor = 0;
}

int hta_series_next(hta_series *s, uint64_t *v)
{
    uint64_t q;
    if (!hta_unpack_u64(&s->next, &q))
        return 0;
    *v = q * s->factor;
    return 1;
}

int hta_series_next_signed(hta_series *s, int64_t *v)
{
    uint64_t z;
    if (!hta_unpack_u64(&s->next, &z))
        return 0;
    uint64_t m = (z & 1 ? z / 2 + 1 : z / 2) * s->factor;
    *v = (int64_t)(z & 1 ? 0 - m : m);
    return 1;
}
