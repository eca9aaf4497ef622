/* nsys_time_base.c: the clock an Nsight Systems export's times are on (see
 * parse/nsys_time_base.h).  Every look-up is one small query; a table or
 * row the export lacks reads as "not recorded". */
#include "parse/nsys_time_base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/stats.h"

int hta_nsys_metadata(sqlite3 *db, const char *name, char *out, size_t size)
{
    static const char *const TABLES[] = {"META_DATA_EXPORT", "EXPORT_META_DATA"};
    for (size_t i = 0; i < sizeof TABLES / sizeof *TABLES; i++) {
        char sql[96];
        sqlite3_stmt *s;
        snprintf(sql, sizeof sql, "SELECT value FROM %s WHERE name = ?", TABLES[i]);
        if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
            continue;
        sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
        int found = sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0);
        if (found)
            snprintf(out, size, "%s", (const char *)sqlite3_column_text(s, 0));
        sqlite3_finalize(s);
        if (found)
            return 1;
    }
    return 0;
}

/* A metadata value that is a whole number; 0 when absent or not one. */
static int metadata_integer(sqlite3 *db, const char *name, int64_t *out)
{
    char text[64], *end;
    if (!hta_nsys_metadata(db, name, text, sizeof text) || !*text)
        return 0;
    long long v = strtoll(text, &end, 10);
    if (*end)
        return 0;
    *out = (int64_t)v;
    return 1;
}

static int session_start(sqlite3 *db, int64_t *out)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME", -1, &s,
                           NULL) != SQLITE_OK)
        return 0;
    int found = sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) == SQLITE_INTEGER;
    if (found)
        *out = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return found && *out > 0;
}

/* a - b of values read from the file, held within int64_t. */
static int64_t difference(int64_t a, int64_t b)
{
    return hta_add_saturating(a, b == INT64_MIN ? INT64_MAX : -b);
}

hta_nsys_time_base hta_nsys_time_base_of(sqlite3 *db, int64_t first_kernel_ns)
{
    int64_t start, total_shift, shift = 0;
    if (!session_start(db, &start))
        return (hta_nsys_time_base){.add_ns = 0, .known = 0};
    if (metadata_integer(db, "EXPORT_CONFIG_TIME_SHIFT", &total_shift))
        return (hta_nsys_time_base){.add_ns = difference(start, total_shift), .known = 1};
    char normalize[16];
    if (hta_nsys_metadata(db, "EXPORT_PARAM_TIME_NORMALIZE", normalize, sizeof normalize)) {
        metadata_integer(db, "EXPORT_PARAM_TIME_SHIFT", &shift);
        int normalised = strcmp(normalize, "true") == 0;
        return (hta_nsys_time_base){.add_ns = difference(normalised ? 0 : start, shift),
                                    .known = 1};
    }
    return (hta_nsys_time_base){.add_ns = first_kernel_ns >= start ? 0 : start, .known = 1};
}

int64_t hta_nsys_shifted(const hta_nsys_time_base *base, int64_t t)
{
    return hta_add_saturating(t, base->add_ns);
}
