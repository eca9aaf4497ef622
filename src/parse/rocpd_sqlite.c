/* rocpd_sqlite.c: a rocpd database (see parse/rocpd_sqlite.h). */
#include "parse/rocpd_sqlite.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parse/input_reader.h"
#include "parse/launcher_env.h"
#include "parse/rocprof_records.h"
#include "parse/sqlite_open.h"
#include "util/grow.h"
#include "util/strtab.h"

#define DISPATCH_TABLE "rocpd_kernel_dispatch"
#define MAX_SETS 64
#define SUFFIX_MAX 96
/* A device of the n-th table set: its agent's row id, apart per set. */
#define SET_STRIDE 1000000LL

/* An RCCL call's arguments (rocpd_arg rows), by its event. */
typedef struct rccl_args {
    int64_t event;
    rp_record args;
} rccl_args;

typedef struct rocpd_reader {
    const char *path;
    hta_error *err;
    sqlite3 *db;
    char version[16];          /* rocpd_metadata's schema_version, for errors */
    char suffixes[MAX_SETS][SUFFIX_MAX];
    size_t n_sets;
    hta_strtab names;          /* the records' names, owned */
    rp_records records;
    int64_t rank, world_size;
    char host[64];
    rccl_args *args;           /* owned: the set's RCCL calls' arguments, by event */
    size_t n_args, cap_args;
} rocpd_reader;

static int fail(rocpd_reader *r, const char *table, const char *what)
{
    return hta_fail(r->err, "%s: rocpd database (schema %s): %s%s%s", r->path, r->version,
                    table ? table : "", table ? ": " : "", what);
}

/* ---- the table sets ------------------------------------------------- */

/* The uuid suffixes of the dispatch tables, one per table set. */
static int find_sets(sqlite3 *db, char (*suffixes)[SUFFIX_MAX], size_t cap, size_t *n)
{
    sqlite3_stmt *s;
    *n = 0;
    if (sqlite3_prepare_v2(db, "SELECT substr(name, 22) FROM sqlite_master WHERE type = 'table' "
                               "AND name LIKE 'rocpd\\_kernel\\_dispatch%' ESCAPE '\\' "
                               "ORDER BY name", -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW && *n < cap) {
        const char *suffix = (const char *)sqlite3_column_text(s, 0);
        if (suffix && strlen(suffix) < SUFFIX_MAX && !strchr(suffix, '"'))
            strcpy(suffixes[(*n)++], suffix);
    }
    sqlite3_finalize(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* 1 when path has rocprofv3's database name ending. */
static int named_like_rocpd(const char *path)
{
    size_t n = strlen(path);
    return n >= 3 && strcmp(path + n - 3, ".db") == 0;
}

/* A database with rocpd tables; or, when its content cannot tell (not
 * SQLite, or damaged), one named as rocprofv3 names its databases, so
 * that its error names the form it was meant to be. */
int hta_is_rocpd(const char *path)
{
    if (!hta_starts_like_sqlite(path))
        return named_like_rocpd(path);
    sqlite3 *db;
    char why[128], suffixes[1][SUFFIX_MAX];
    int corrupt;
    size_t n = 0;
    int readable = hta_sqlite_open_read(path, &db, why, sizeof why, &corrupt) == 0 &&
                   find_sets(db, suffixes, 1, &n) == 0;
    sqlite3_close(db);
    return n > 0 || (!readable && named_like_rocpd(path));
}

/* The name of table `base` in table set `set` (room for 160). */
static void table_name(const rocpd_reader *r, size_t set, const char *base, char *out)
{
    snprintf(out, 160, "%s%s", base, r->suffixes[set]);
}

static void read_version(rocpd_reader *r)
{
    char table[160], sql[256];
    sqlite3_stmt *s;
    table_name(r, 0, "rocpd_metadata", table);
    snprintf(sql, sizeof sql, "SELECT value FROM \"%s\" WHERE tag = 'schema_version'", table);
    if (sqlite3_prepare_v2(r->db, sql, -1, &s, NULL) != SQLITE_OK)
        return;
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
        snprintf(r->version, sizeof r->version, "%s", sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
}

/* Fails naming the first of the tables set `set` lacks. */
static int require_tables(rocpd_reader *r, size_t set, const char *const *bases)
{
    for (; *bases; bases++) {
        char table[160];
        table_name(r, set, *bases, table);
        int exists = hta_sqlite_table_exists(r->db, table);
        if (exists <= 0)
            return fail(r, table, exists < 0 ? sqlite3_errmsg(r->db) : "no such table");
    }
    return 0;
}

/* ---- rows ----------------------------------------------------------- */

/* Column i as an integer; `absent` when NULL. */
static int64_t integer(sqlite3_stmt *s, int i, int64_t absent)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL ? absent : sqlite3_column_int64(s, i);
}

/* Column i's text interned in the reader's names; NULL with err set when
 * out of memory, "" for NULL. */
static const char *text(rocpd_reader *r, sqlite3_stmt *s, int i)
{
    const char *t = (const char *)sqlite3_column_text(s, i);
    uint32_t id =
        hta_strtab_intern(&r->names, t ? t : "", t ? (size_t)sqlite3_column_bytes(s, i) : 0);
    if (id == UINT32_MAX) {
        fail(r, NULL, "out of memory");
        return NULL;
    }
    return hta_strtab_get(&r->names, id);
}

/* Columns shared by every query: start, end, correlation, process. */
static rp_record record_of(sqlite3_stmt *s, size_t set)
{
    int64_t correlation = integer(s, 2, 0);
    int64_t process = integer(s, 3, -1);
    return (rp_record){.start = integer(s, 0, -1), .end = integer(s, 1, -1),
                       .correlation = correlation > 0 ? correlation : HTA_NO_CORRELATION,
                       .process = process >= 0 ? (int64_t)set * SET_STRIDE + process : -1,
                       .agent = -1, .stream = 0, .bytes = -1, .in_count = -1,
                       .out_count = -1};
}

typedef int (*row_fn)(rocpd_reader *r, sqlite3_stmt *s, size_t set);

static int each_row(rocpd_reader *r, const char *table, const char *sql, row_fn row, size_t set)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(r->db, sql, -1, &s, NULL) != SQLITE_OK)
        return fail(r, table, sqlite3_errmsg(r->db));
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        if (row(r, s, set)) {
            sqlite3_finalize(s);
            return -1;
        }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : fail(r, table, sqlite3_errmsg(r->db));
}

static int agent_row(rocpd_reader *r, sqlite3_stmt *s, size_t set, rp_kind kind, int name_column)
{
    rp_record rec = record_of(s, set);
    int64_t agent = integer(s, 4, -1), stream = integer(s, 5, -1);
    rec.agent = agent >= 0 ? (int64_t)set * SET_STRIDE + agent : -1;
    rec.stream = stream >= 0 ? stream : integer(s, 6, 0);
    if (kind == RP_COPIES) {
        char name[160];
        const char *direction = (const char *)sqlite3_column_text(s, name_column);
        hta_rocprof_copy_name(direction ? direction : "", name, sizeof name);
        uint32_t id = hta_strtab_intern(&r->names, name, strlen(name));
        rec.name = id == UINT32_MAX ? NULL : hta_strtab_get(&r->names, id);
        rec.bytes = integer(s, name_column + 1, -1);
    } else
        rec.name = text(r, s, name_column);
    if (!rec.name || hta_rp_push(&r->records, kind, &rec))
        return fail(r, NULL, "out of memory");
    return 0;
}

static int kernel_row(rocpd_reader *r, sqlite3_stmt *s, size_t set)
{
    return agent_row(r, s, set, RP_KERNELS, 7);
}

static int copy_row(rocpd_reader *r, sqlite3_stmt *s, size_t set)
{
    return agent_row(r, s, set, RP_COPIES, 7);
}

static int compare_events(const void *a, const void *b)
{
    int64_t x = ((const rccl_args *)a)->event, y = ((const rccl_args *)b)->event;
    return (x > y) - (x < y);
}

/* The arguments read for an RCCL call's event (ascending, distinct), or
 * NULL. */
static const rp_record *args_of(const rocpd_reader *r, int64_t event)
{
    rccl_args key = {.event = event};
    const rccl_args *found = r->n_args ? bsearch(&key, r->args, r->n_args, sizeof key,
                                                 compare_events)
                                       : NULL;
    return found ? &found->args : NULL;
}

/* A region is a call or a marker by its event's category; other domains
 * (HSA, ...) are not carried. */
static int region_row(rocpd_reader *r, sqlite3_stmt *s, size_t set)
{
    const char *category = (const char *)sqlite3_column_text(s, 5);
    int kind = category ? hta_rocprof_api_kind(category) : -1;
    if (kind < 0)
        return 0;
    rp_record rec = record_of(s, set);
    rec.name = text(r, s, 4);
    const rp_record *args = kind == RP_RCCL ? args_of(r, integer(s, 6, -1)) : NULL;
    if (args) {
        rec.comm = args->comm;
        rec.dtype = args->dtype;
        rec.in_count = args->in_count;
        rec.out_count = args->out_count;
    }
    if (!rec.name || hta_rp_push(&r->records, (rp_kind)kind, &rec))
        return fail(r, NULL, "out of memory");
    return 0;
}

/* ---- reading -------------------------------------------------------- */

/* A record's correlation: rocprofv3 writes the internal correlation id
 * (the one a dispatch shares with its launching call) as its event's
 * stack_id, the external one as correlation_id. */
#define CORRELATION "COALESCE(NULLIF(E.stack_id, 0), E.correlation_id)"

#define EXTDATA_NAME                                                                             \
    "CASE WHEN json_valid(S.extdata) THEN json_extract(S.extdata, '$.formatted_kernel_name') END"

static int read_kernels(rocpd_reader *r, size_t set)
{
    char k[160], e[160], sym[160], sql[1024];
    table_name(r, set, DISPATCH_TABLE, k);
    table_name(r, set, "rocpd_event", e);
    table_name(r, set, "rocpd_info_kernel_symbol", sym);
    snprintf(sql, sizeof sql,
             "SELECT K.\"start\", K.\"end\", " CORRELATION ", K.pid, K.agent_id, K.stream_id, "
             "K.queue_id, COALESCE(NULLIF(" EXTDATA_NAME ", ''), NULLIF(S.display_name, ''), "
             "S.kernel_name) FROM \"%s\" K LEFT JOIN \"%s\" E ON E.id = K.event_id "
             "LEFT JOIN \"%s\" S ON S.id = K.kernel_id ORDER BY K.id", k, e, sym);
    return each_row(r, k, sql, kernel_row, set);
}

/* Reads table `base` of set `set` with the query sql_format when the set
 * has it; the format's %1$s .. %4$s are that table and the set's event,
 * string and agent tables. */
static int read_optional(rocpd_reader *r, size_t set, const char *base, const char *sql_format,
                         row_fn row)
{
    char table[160], e[160], str[160], agent[160], sql[1024];
    table_name(r, set, base, table);
    table_name(r, set, "rocpd_event", e);
    table_name(r, set, "rocpd_string", str);
    table_name(r, set, "rocpd_info_agent", agent);
    int exists = hta_sqlite_table_exists(r->db, table);
    if (exists <= 0)
        return exists < 0 ? fail(r, table, sqlite3_errmsg(r->db)) : 0;
    snprintf(sql, sizeof sql, sql_format, table, e, str, agent);
    return each_row(r, table, sql, row, set);
}

static int read_copies(rocpd_reader *r, size_t set)
{
    return read_optional(
        r, set, "rocpd_memory_copy",
        "SELECT M.\"start\", M.\"end\", " CORRELATION ", M.pid, CASE WHEN D.type = 'GPU' "
        "THEN M.dst_agent_id ELSE M.src_agent_id END, M.stream_id, M.queue_id, N.string, "
        "M.size FROM \"%1$s\" M LEFT JOIN \"%2$s\" E ON E.id = M.event_id LEFT JOIN \"%3$s\" N "
        "ON N.id = M.name_id LEFT JOIN \"%4$s\" D ON D.id = M.dst_agent_id ORDER BY M.id",
        copy_row);
}

static int arg_row(rocpd_reader *r, sqlite3_stmt *s, size_t set)
{
    (void)set;
    int64_t event = integer(s, 0, -1);
    const char *name = (const char *)sqlite3_column_text(s, 1);
    const char *value = (const char *)sqlite3_column_text(s, 2);
    if (!r->n_args || r->args[r->n_args - 1].event != event) {
        if (hta_grow_array((void **)&r->args, &r->cap_args, r->n_args + 1, sizeof *r->args))
            return fail(r, NULL, "out of memory");
        r->args[r->n_args++] = (rccl_args){event, {.in_count = -1, .out_count = -1}};
    }
    if (name && value && hta_rp_take_arg(&r->args[r->n_args - 1].args, name, value, &r->names))
        return fail(r, NULL, "out of memory");
    return 0;
}

/* The arguments of the set's RCCL calls that describe their collectives. */
static int read_rccl_args(rocpd_reader *r, size_t set)
{
    r->n_args = 0;
    return read_optional(
        r, set, "rocpd_arg",
        "SELECT A.event_id, A.name, A.value FROM \"%1$s\" A JOIN \"%2$s\" E ON E.id = "
        "A.event_id JOIN \"%3$s\" C ON C.id = E.category_id WHERE C.string LIKE 'RCCL\\_API%%' "
        "ESCAPE '\\' AND A.name IN ('comm', 'datatype', 'count', 'sendcount', 'recvcount') "
        "ORDER BY A.event_id",
        arg_row);
}

static int read_regions(rocpd_reader *r, size_t set)
{
    return read_optional(
        r, set, "rocpd_region",
        "SELECT R.\"start\", R.\"end\", " CORRELATION ", R.pid, N.string, C.string, "
        "R.event_id FROM \"%1$s\" R LEFT JOIN \"%2$s\" E ON E.id = R.event_id LEFT JOIN \"%3$s\" N "
        "ON N.id = R.name_id LEFT JOIN \"%3$s\" C ON C.id = E.category_id ORDER BY R.id",
        region_row);
}

/* The launcher's rank and the host of process `process` (a set's process
 * row id, as in rp_record), from its recorded environment, else its
 * command line. */
static void read_process(rocpd_reader *r, int64_t process)
{
    size_t set = (size_t)(process / SET_STRIDE);
    char p[160], node[160], sql[1024];
    table_name(r, set, "rocpd_info_process", p);
    table_name(r, set, "rocpd_info_node", node);
    if (hta_sqlite_table_exists(r->db, p) != 1 || hta_sqlite_table_exists(r->db, node) != 1)
        return;
    snprintf(sql, sizeof sql,
             "SELECT CASE WHEN json_valid(P.environment) THEN (SELECT group_concat(key || '=' "
             "|| value, ';') FROM json_each(P.environment)) END, P.command, N.hostname "
             "FROM \"%s\" P LEFT JOIN \"%s\" N ON N.id = P.nid WHERE P.id = %lld",
             p, node, (long long)(process % SET_STRIDE));
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(r->db, sql, -1, &s, NULL) != SQLITE_OK)
        return;
    if (sqlite3_step(s) == SQLITE_ROW) {
        const char *env = (const char *)sqlite3_column_text(s, 0);
        const char *command = (const char *)sqlite3_column_text(s, 1);
        const char *host = (const char *)sqlite3_column_text(s, 2);
        r->rank = env ? hta_env_rank(env) : -1;
        r->world_size = env ? hta_env_world_size(env) : -1;
        if (r->rank < 0 && command) {
            r->rank = hta_env_rank(command);
            r->world_size = hta_env_world_size(command);
        }
        if (host && strlen(host) < sizeof r->host)
            strcpy(r->host, host);
    }
    sqlite3_finalize(s);
}

/* The one process the trace's records come from, or -1 (none, several). */
static int64_t only_process(const rp_records *all, const hta_builder_options *how)
{
    int64_t found = -1;
    for (int k = RP_KERNELS; k <= RP_COPIES; k++)
        for (size_t i = 0; i < all->n[k]; i++) {
            const rp_record *rec = &all->items[k][i];
            if (how->one_device && rec->agent != how->device)
                continue;
            if (found >= 0 && rec->process != found)
                return -1;
            found = rec->process;
        }
    return found;
}

static int read_sets(rocpd_reader *r)
{
    static const char *const required[] = {DISPATCH_TABLE, "rocpd_event",
                                           "rocpd_info_kernel_symbol", "rocpd_string",
                                           "rocpd_info_agent", NULL};
    for (size_t set = 0; set < r->n_sets; set++)
        if (require_tables(r, set, required) || read_kernels(r, set) || read_copies(r, set) ||
            read_rccl_args(r, set) || read_regions(r, set))
            return -1;
    return 0;
}

static int open_sets(rocpd_reader *r)
{
    char why[256];
    int corrupt;
    struct stat st;
    if (stat(r->path, &st) == 0 && st.st_size == 0)
        return fail(r, NULL, "empty file");
    if (hta_sqlite_open_read(r->path, &r->db, why, sizeof why, &corrupt))
        return fail(r, corrupt ? "sqlite_master" : NULL, why);
    if (find_sets(r->db, r->suffixes, MAX_SETS, &r->n_sets))
        return fail(r, "sqlite_master", sqlite3_errmsg(r->db));
    if (r->n_sets == 0)
        return fail(r, DISPATCH_TABLE, "no such table (no kernel dispatches: profile with "
                                       "rocprofv3 --kernel-trace)");
    read_version(r);
    return 0;
}

int hta_read_rocpd(const char *path, const hta_builder_options *how, hta_trace *out,
                   hta_error *notes, hta_error *err)
{
    rocpd_reader r = {.path = path, .err = err, .rank = -1, .world_size = -1};
    strcpy(r.version, "unknown");
    hta_strtab_init(&r.names);
    notes->text[0] = '\0';
    hta_trace_init(out);
    hta_trace_builder b;
    int rc = hta_trace_builder_init(&b, out, how->step_regex)
                 ? hta_fail(err, "%s: --step-regex does not compile", path)
                 : open_sets(&r);
    rc = rc ? rc : read_sets(&r);
    int64_t process = rc ? -1 : only_process(&r.records, how);
    if (process >= 0)
        read_process(&r, process);
    if (how->one_device && process >= 0 && hta_rp_several_agents(&r.records, process))
        r.rank = r.world_size = -1;
    rc = rc ? rc : hta_rocprof_emit(&r.records, path, how, &b, notes, err);
    if (rc == 0) {
        out->rank = r.rank;
        out->world_size = r.world_size;
        snprintf(out->host, sizeof out->host, "%s", r.host);
    }
    hta_trace_builder_free(&b);
    hta_rp_free(&r.records);
    hta_strtab_free(&r.names);
    free(r.args);
    sqlite3_close(r.db);
    if (rc)
        hta_trace_free(out);
    return rc;
}

int hta_rocpd_devices(const char *path, long long *devices, size_t cap, size_t *n)
{
    rocpd_reader r = {.path = path};
    char why[256], sql[512], table[160];
    int corrupt, rc = -1;
    *n = 0;
    if (hta_sqlite_open_read(path, &r.db, why, sizeof why, &corrupt) == 0 &&
        find_sets(r.db, r.suffixes, MAX_SETS, &r.n_sets) == 0)
        rc = 0;
    for (size_t set = 0; rc == 0 && set < r.n_sets; set++) {
        sqlite3_stmt *s;
        table_name(&r, set, DISPATCH_TABLE, table);
        snprintf(sql, sizeof sql, "SELECT DISTINCT agent_id FROM \"%s\" ORDER BY agent_id",
                 table);
        if (sqlite3_prepare_v2(r.db, sql, -1, &s, NULL) != SQLITE_OK)
            break;             /* the read names the damage */
        while (sqlite3_step(s) == SQLITE_ROW && *n < cap)
            devices[(*n)++] = (long long)set * SET_STRIDE + sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
    }
    sqlite3_close(r.db);
    return rc;
}
