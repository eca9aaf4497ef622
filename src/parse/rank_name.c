/* rank_name.c: the rank number written in a trace's file name. */

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
