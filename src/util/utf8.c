/* utf8.c: UTF-8 validation and repair (see hta/utf8.h).
 *
 * The bounds on each continuation byte follow the Unicode standard's table
 * of well-formed sequences (3.9, table 3-7), which rules out overlong
 * forms, surrogates and code points above U+10FFFF byte by byte; the
 * first byte that breaks a sequence ends its maximal invalid prefix. */
#include "util/utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid sequence at s (1-4), or 0 when it is invalid; then
 * *invalid is the length of its maximal invalid prefix (at least 1).  A
 * NUL is never a continuation byte, so nothing past the end is read. */
static size_t sequence_length(const unsigned char *s, size_t *invalid)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    size_t continuations;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        continuations = 1;
    else if (c >= 0xE0 && c <= 0xEF) {
        continuations = 2;
        if (c == 0xE0)
            lo = 0xA0;         /* overlong below */
        else if (c == 0xED)
            hi = 0x9F;         /* surrogates above */
    } else if (c >= 0xF0 && c <= 0xF4) {
        continuations = 3;
        if (c == 0xF0)
            lo = 0x90;         /* overlong below */
        else if (c == 0xF4)
            hi = 0x8F;         /* beyond U+10FFFF above */
    } else {
        *invalid = 1;
        return 0;
    }
    for (size_t i = 1; i <= continuations; i++) {
        if (s[i] < lo || s[i] > hi) {
            *invalid = i;
            return 0;
        }
        lo = 0x80;
        hi = 0xBF;
    }
    return continuations + 1;
}

/* The length of s's leading ASCII run, 8 bytes at a time (names are
 * mostly ASCII: long kernel names would otherwise cost a call a byte). */
static size_t ascii_prefix(const char *s, size_t len)
{
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t word;
        memcpy(&word, s + i, sizeof word);
        if (word & UINT64_C(0x8080808080808080))
            break;
    }
    return i;
}

int hta_utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s + ascii_prefix(s, strlen(s));
    size_t invalid;
    while (*p) {
        size_t n = sequence_length(p, &invalid);
        if (n == 0)
            return 0;
        p += n;
    }
    return 1;
}

char *hta_utf8_repair(const char *s)
{
    static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */
    size_t len = strlen(s);
    /* At worst every byte is invalid and becomes three. */
    char *out = malloc(3 * len + 1), *q = out;
    if (!out)
        return NULL;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t invalid, n = sequence_length(p, &invalid);
        if (n) {
            memcpy(q, p, n);
            q += n;
            p += n;
        } else {
            memcpy(q, replacement, 3);
            q += 3;
            p += invalid;
        }
    }
    *q = '\0';
    return out;
}
