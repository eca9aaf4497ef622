/* sqlite_open.c: a profiler's SQLite file opened to be read (see
 * parse/sqlite_open.h). */
#include "parse/sqlite_open.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void hta_sqlite_ready(void)
{
    /* A failure here (out of memory) recurs, and is reported, at the open. */
    (void)sqlite3_initialize();
}

int hta_sqlite_open_read(const char *path, sqlite3 **db, char *why, size_t cap,
                         int *corrupt_schema)
{
    *corrupt_schema = 0;
    *db = NULL;
    int immutable = access(path, W_OK) != 0;
    /* A path holding URI syntax is opened plainly (no immutable flag)
     * rather than escaped. */
    int plain = strpbrk(path, "?#%") != NULL;
    char *uri = plain ? NULL
                      : sqlite3_mprintf("file:%s?mode=ro%s", path, immutable ? "&immutable=1" : "");
    if (!plain && !uri) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    int rc = sqlite3_open_v2(plain ? path : uri, db,
                             SQLITE_OPEN_READONLY | (plain ? 0 : SQLITE_OPEN_URI), NULL);
    sqlite3_free(uri);
    if (rc != SQLITE_OK) {
        snprintf(why, cap, "%s", *db ? sqlite3_errmsg(*db) : "cannot open");
        return -1;
    }
    sqlite3_busy_timeout(*db, 0);
    if (sqlite3_exec(*db, "BEGIN; SELECT count(*) FROM sqlite_master;", NULL, NULL, NULL) ==
        SQLITE_OK)
        return 0;
    int code = sqlite3_errcode(*db);
    /* A corrupt file fails here when the schema table, read first, is
     * what is damaged. */
    *corrupt_schema = code == SQLITE_CORRUPT;
    snprintf(why, cap, "%s", code == SQLITE_BUSY || code == SQLITE_LOCKED
                                 ? "database is locked by another process"
                                 : sqlite3_errmsg(*db));
    return -1;
}

int hta_sqlite_table_exists(sqlite3 *db, const char *table)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') "
                               "AND name = ?", -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}
