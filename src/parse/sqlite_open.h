/* parse/sqlite_open.h: a profiler's SQLite file opened to be read.
 *
 * Read-only, immutable when this process cannot write the file (then no
 * writer it could race with is expected, and SQLite skips locking), with
 * one read transaction for every table the reader then reads: a locked
 * database fails here, at once.  Shared by the Nsight Systems and rocpd
 * readers. */
#ifndef HTA_SQLITE_OPEN_H
#define HTA_SQLITE_OPEN_H

#include <sqlite3.h>
#include <stddef.h>

/* Opens path into *db (closed by the caller with sqlite3_close, whatever
 * the outcome).  On failure returns -1 with why (room for cap) saying
 * what, and *corrupt_schema 1 when the schema table itself is damaged. */
int hta_sqlite_open_read(const char *path, sqlite3 **db, char *why, size_t cap,
                         int *corrupt_schema);

/* Readies SQLite on the calling thread.  SQLite reads the environment (its
 * temporary folder) once, when first used; glibc's getenv is not safe
 * against a setenv on another thread, which MPI_Init makes, so a thread
 * that may read SQLite files while MPI starts up is begun after this. */
void hta_sqlite_ready(void);

/* 1 when table (or a view of that name) exists, 0 when not, -1 on a
 * database error. */
int hta_sqlite_table_exists(sqlite3 *db, const char *table);

#endif
