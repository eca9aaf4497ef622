/* rank_name.c: the rank number and the host written in a trace's file
 * name. */

#include "parse/rank_name.h"

#include <ctype.h>
#include <string.h>


int64_t hta_rank_from_file_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (const char *p = strstr(base, "rank"); p; p = strstr(p + 1, "rank")) {
        const char *q = p + 4;
        if (*q == '-' || *q == '_')
            q++;
        if (!isdigit((unsigned char)*q))
            continue;
        int64_t rank = 0;
        for (; isdigit((unsigned char)*q) && rank < (INT64_MAX - 9) / 10; q++)
            rank = rank * 10 + (*q - '0');
        return rank;
    }
    return -1;
}

static const char *const TRACE_SUFFIXES[] = {".pt.trace.json.gz", ".pt.trace.json"};

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* Whether [s, end) is one or more digits. */
static int all_digits(const char *s, const char *end)
{
    if (s >= end)
        return 0;
    for (; s < end; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

const char *hta_host_from_file_name(const char *path, size_t *len)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    size_t stem = 0;
    for (size_t i = 0; i < sizeof TRACE_SUFFIXES / sizeof *TRACE_SUFFIXES && !stem; i++)
        if (ends_with(base, n, TRACE_SUFFIXES[i]))
            stem = n - strlen(TRACE_SUFFIXES[i]);
    if (!stem)
        return NULL;
    const char *end = base + stem, *dot = end;
    while (dot > base && dot[-1] != '.')
        dot--;
    if (dot == base || !all_digits(dot, end))
        return NULL;
    const char *pid_end = dot - 1, *under = pid_end;
    while (under > base && under[-1] != '_')
        under--;
    if (under == base || !all_digits(under, pid_end) || under - 1 == base)
        return NULL;
    *len = (size_t)(under - 1 - base);
    return base;
}
