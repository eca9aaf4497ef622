/* nsys_sqlite.c: Nsight Systems SQLite export reader (see parse/nsys_sqlite.h).
 *
 * The export is opened read-only through libsqlite3.  When this process
 * cannot write the file nobody it could race with can either, so it is
 * opened `immutable` (no locks, no journal checks); otherwise the reads run
 * in one read transaction, which fails at once, naming the file, when a
 * writer holds the database locked.
 *
 * Schema: the tables and columns of NVIDIA's "SQLite Export Schema
 * Reference" for `nsys export --type sqlite`, in the forms its releases
 * have used (NVTX text inline or through textId, kernels with
 * demangledName or only shortName, ENUM tables present or not, the
 * metadata in META_DATA_EXPORT or, before schema 3, EXPORT_META_DATA,
 * which names the export's schema version quoted in every error).  Each
 * table's columns are checked before it is read, so an absent one is
 * named rather than failing inside a query.  Names are StringIds
 * references: each distinct id is looked up and interned once (a dense
 * cache by id), so a row costs a step of the statement and an array
 * lookup.  Enumerations (copy and memory kinds) come from the export's
 * ENUM_* tables when present and from Nsight's numbering otherwise.
 * Times are put on the UTC epoch clock the export's metadata gives
 * (parse/nsys_time_base.h), so that ranks exported apart compare.
 *
 * CUDA graphs.  CUPTI gives each GPU record of a graph replay the
 * correlation id of the call that launched the graph (CUPTI API reference,
 * CUpti_ActivityKernel11.correlationId: "identical to the correlation ID in
 * the driver or runtime API activity record that launched the kernel";
 * CUpti_ActivityGraphTrace2: "Each graph launch is assigned a unique
 * correlation ID"), so a replay maps to its cudaGraphLaunch through the
 * correlation, as in a Kineto trace.  The export adds the graph's and the
 * node's ids: graphNodeId on kernels, copies and sets ("REFERENCES
 * CUDA_GRAPH_NODE_EVENTS(graphNodeId)"; an export may leave it NULL, so
 * the mapping cannot rest on it), and on kernels graphId ("Kernel graph
 * ID.", SQLite Schema Reference of schema 3.28.1, Nsight Systems
 * 2026.4); CUPTI sets both to 0 on a record no graph launched.  graphId is
 * shared by every replay of a graph, so only (graphId, correlationId)
 * names a replay, and the correlation alone finds its launch.  The ids
 * serve what the tables cannot show: graph node records whose launch call
 * is not in the export, said in the notes.
 *
 * Replays traced whole (nsys --cuda-graph-trace=graph, Nsight's default)
 * have no node records: one CUPTI_ACTIVITY_KIND_GRAPH_TRACE row each, the
 * export's form of CUPTI's CUpti_ActivityGraphTrace2 (CUPTI API
 * reference: correlationId "identical to the correlation ID in the driver
 * API activity record that launched the graph", start and end in ns, "A
 * value of 0 for both the start and end timestamps indicates that
 * timestamp information could not be collected for the graph", deviceId,
 * graphId, contextId, streamId "where the graph is being launched"), in
 * the export the integer columns start, end, deviceId, contextId,
 * greenContextId, streamId, correlationId, globalPid, graphId and
 * graphExecId (as public readers of nsys 2024 exports declare the table;
 * NVIDIA's SQLite Schema Reference has no entry for it that we could
 * find, so only the columns CUPTI documents are read, graphId optional).
 * Such a row is read as one GPU event of category kernel,
 * named "CUDA graph <graphId>", on its stream with its launch's
 * correlation: the replay is then busy time, one kernel of its launch in
 * /graph_launches, the op's and the critical path's, as a replay recorded
 * node by node is, though its kernels stay unknown (the notes say so).  A
 * row without timestamps is no event: its launch counts as unrecorded. */
#include "parse/nsys_sqlite.h"

#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/grow.h"
#include "util/ranked.h"
#include "parse/launcher_env.h"
#include "parse/sqlite_open.h"
#include "numerics/bounds.h"
#include "parse/nsys_time_base.h"
#include "parse/trace_builder.h"

#define KERNEL_TABLE "CUPTI_ACTIVITY_KIND_KERNEL"
#define RUNTIME_TABLE "CUPTI_ACTIVITY_KIND_RUNTIME"
#define MEMCPY_TABLE "CUPTI_ACTIVITY_KIND_MEMCPY"
#define MEMSET_TABLE "CUPTI_ACTIVITY_KIND_MEMSET"
#define SYNC_TABLE "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"
#define NVTX_TABLE "NVTX_EVENTS"
#define GRAPH_TRACE_TABLE "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"
/* Rows between two looks at the clock. */
#define ROWS_PER_CLOCK_CHECK 65536
/* StringIds beyond this are looked up without the dense cache. */
#define MAX_CACHED_STRING_ID (1u << 26)
#define KIND_NAME_MAX 32
#define MAX_PROCESSES 64
/* A serialized GlobalId (globalTid) holds the process id in bits 24-47;
 * SQL for it, as a printf format (hence %%). */
#define PID_OF_GLOBAL_TID "((globalTid / 16777216) %% 16777216)"

/* A StringIds id's interned name (+1; 0 = not yet looked up). */
typedef struct string_cache {
    uint32_t *ids;
    size_t n;
} string_cache;

/* A runtime or driver call read but not yet added. */
typedef struct pending_call {
    hta_record rec;
    uint32_t name, cat;
} pending_call;

/* The correlations of the GPU records of CUDA graph nodes, one per record. */
typedef struct graph_records {
    int64_t *correlations;
    size_t n, cap;
    int64_t uncorrelated;      /* graph node records with no correlation */
    int64_t whole_replays;     /* GRAPH_TRACE_TABLE rows read as events */
    int64_t untimed_replays;   /* GRAPH_TRACE_TABLE rows without timestamps */
    int failed;                /* out of memory: no check */
} graph_records;

/* An ENUM_* table's labels by id, Kineto's spelling. */
typedef struct kind_names {
    char (*names)[KIND_NAME_MAX];
    size_t n;
} kind_names;

typedef struct nsys_reader {
    const char *path;
    sqlite3 *db;
    char version[64];          /* EXPORT_SCHEMA_VERSION, or "unknown" */
    hta_trace_builder builder;
    sqlite3_stmt *string_lookup;
    string_cache kernel_names, api_names, nvtx_names;
    kind_names copy_kinds, memory_kinds, sync_kinds;
    double timeout_seconds, deadline;
    uint64_t rows;
    /* One GPU of several: its records, and its processes' CPU-side ones. */
    int one_device;
    long long device;
    long long pids[MAX_PROCESSES];    /* the processes whose CPU records are kept */
    size_t n_pids;
    long long active_pids[MAX_PROCESSES]; /* the processes of its GPU records */
    size_t n_active_pids;
    graph_records graphs;
    hta_nsys_time_base time_base; /* added to every time read */
    pending_call call;         /* the runtime table's last row (api_row) */
    int has_call;
    hta_error *err;
} nsys_reader;

static int fail(nsys_reader *r, const char *table, const char *what)
{
    return hta_fail(r->err, "%s: Nsight Systems export (schema %s): %s%s%s", r->path,
                    r->version, table ? table : "", table ? ": " : "", what);
}

static int fail_sqlite(nsys_reader *r, const char *table)
{
    return fail(r, table, sqlite3_errmsg(r->db));
}

static int out_of_time(nsys_reader *r, const char *table)
{
    if (++r->rows % ROWS_PER_CLOCK_CHECK || r->timeout_seconds <= 0 ||
        hta_monotonic_seconds() <= r->deadline)
        return 0;
    hta_fail(r->err, "%s: timed out after %g s (--timeout-per-trace) reading %s", r->path,
             r->timeout_seconds, table);
    return 1;
}

/* ---- schema ------------------------------------------------------------ */

static int table_exists(nsys_reader *r, const char *table)
{
    return hta_sqlite_table_exists(r->db, table);
}

/* 1 when table has column, 0 when not, -1 on a database error. */
static int has_column(nsys_reader *r, const char *table, const char *column)
{
    char sql[160];
    sqlite3_stmt *s;
    snprintf(sql, sizeof sql, "SELECT 1 FROM pragma_table_info('%s') WHERE name = ?", table);
    if (sqlite3_prepare_v2(r->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(s, 1, column, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

/* Writes "SELECT c1, c2, ... FROM table tail" into sql.  A column
 * written "?name" is optional: NULL stands in when the table lacks it
 * (sqlite3_column_int64 reads that as 0); any other must be there, else
 * this fails naming it. */
static int build_select(nsys_reader *r, const char *table, const char *const *columns,
                        const char *tail, char *sql, size_t size)
{
    size_t n = (size_t)snprintf(sql, size, "SELECT ");
    for (const char *const *c = columns; *c && n < size; c++) {
        int optional = (*c)[0] == '?';
        const char *name = *c + optional;
        int has = has_column(r, table, name);
        if (has < 0)
            return fail_sqlite(r, table);
        if (!has && !optional) {
            char what[96];
            snprintf(what, sizeof what, "no column %s", name);
            return fail(r, table, what);
        }
        n += (size_t)snprintf(sql + n, size - n, "%s%s", c == columns ? "" : ", ",
                              has ? name : "NULL");
    }
    if (n < size)
        n += (size_t)snprintf(sql + n, size - n, " FROM %s %s", table, tail);
    return n < size ? 0 : fail(r, table, "query too long");
}

/* The schema version from whichever metadata table the export has. */
static void read_version(nsys_reader *r)
{
    if (!hta_nsys_metadata(r->db, "EXPORT_SCHEMA_VERSION", r->version, sizeof r->version))
        strcpy(r->version, "unknown");
}

/* The shift onto the UTC epoch clock (parse/nsys_time_base.h), told the
 * first kernel's stored start for exports that do not say. */
static void read_time_base(nsys_reader *r, hta_error *notes)
{
    int64_t first = 0;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(r->db, "SELECT start FROM " KERNEL_TABLE " LIMIT 1", -1, &s, NULL) ==
        SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW)
            first = sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
    }
    r->time_base = hta_nsys_time_base_of(r->db, first);
    if (!r->time_base.known)
        hta_notes_add(notes, "no TARGET_INFO_SESSION_START_TIME: times stay relative to the "
                             "export's session start, not comparable with other ranks'");
}

/* ---- names --------------------------------------------------------------- */

/* Removes the API version suffix Nsight appends ("cudaLaunchKernel_v7000"),
 * which Kineto's names do not have. */
static size_t api_name_length(const char *s, size_t len)
{
    size_t i = len;
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
        i--;
    if (i < len && i >= 2 && s[i - 1] == 'v' && s[i - 2] == '_')
        return i - 2;
    return len;
}

/* How a StringIds text becomes a name: as it is, without an API version
 * suffix, or as a user annotation (which --step-regex may make a step;
 * the cache then holds the first step's name, so NVTX texts are not
 * cached). */
typedef enum name_form { NAME_AS_IS, NAME_API, NAME_ANNOTATION } name_form;

/* The interned name of StringIds id, through the cache; UINT32_MAX when
 * out of memory or on a database error (r->err says which). */
static uint32_t string_name(nsys_reader *r, string_cache *cache, int64_t id, name_form form,
                            const char *table)
{
    int cached = id >= 0 && id < MAX_CACHED_STRING_ID &&
                 !(form == NAME_ANNOTATION && r->builder.has_step_regex);
    if (cached && (size_t)id < cache->n && cache->ids[id])
        return cache->ids[id] - 1;
    sqlite3_reset(r->string_lookup);
    sqlite3_bind_int64(r->string_lookup, 1, id);
    int rc = sqlite3_step(r->string_lookup);
    const char *text = "";
    size_t len = 0;
    if (rc == SQLITE_ROW && sqlite3_column_text(r->string_lookup, 0)) {
        text = (const char *)sqlite3_column_text(r->string_lookup, 0);
        len = (size_t)sqlite3_column_bytes(r->string_lookup, 0);
    } else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        fail_sqlite(r, "StringIds");
        return UINT32_MAX;
    }
    if (form == NAME_API)
        len = api_name_length(text, len);
    uint32_t name = form == NAME_ANNOTATION ? hta_trace_builder_annotation(&r->builder, text, len)
                                            : hta_trace_builder_name(&r->builder, text, len);
    if (name == UINT32_MAX) {
        fail(r, table, "out of memory");
        return UINT32_MAX;
    }
    if (cached) {
        if ((size_t)id >= cache->n) {
            size_t n = (size_t)id + 1 + cache->n / 2;
            uint32_t *grown = realloc(cache->ids, n * sizeof *grown);
            if (!grown)
                return name;   /* uncached: correct, only slower */
            memset(grown + cache->n, 0, (n - cache->n) * sizeof *grown);
            cache->ids = grown;
            cache->n = n;
        }
        cache->ids[id] = name + 1;
    }
    return name;
}

/* Kineto's spelling of the copy kinds, memory kinds and synchronisation
 * types, in Nsight's numbering (the ids of the ENUM_CUDA_MEMCPY_OPER,
 * ENUM_CUDA_MEM_KIND and ENUM_CUPTI_SYNC_TYPE tables of the 2024.5 and
 * 2024.6 exports; an export of 2022.2, which has no ENUM tables, records
 * pageable-to-device copies as srcKind 0, dstKind 2 in the same
 * numbering).  Copy and synchronisation kinds are numbered as CUPTI
 * numbers them; memory kinds are not (CUPTI puts Unknown first).  Kineto
 * never writes Unified Memory migrations: they keep Nsight's key, so
 * that each direction stays a kind of its own. */
static const char *const COPY_KINDS[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                         "AtoD", "DtoA", "DtoD", "HtoH", "PtoP",
                                         "UVM_HtoD", "UVM_DtoH", "UVM_DtoD", NULL};
static const char *const COPY_KIND_KEYS[] = {"UNKNOWN", "HTOD", "DTOH", "HTOA", "ATOH", "ATOA",
                                             "ATOD", "DTOA", "DTOD", "HTOH", "PTOP",
                                             "UVM_HTOD", "UVM_DTOH", "UVM_DTOD", NULL};
static const char *const MEMORY_KINDS[] = {"Pageable", "Pinned", "Device", "Array", "Managed",
                                           "Device Static", "Managed Static", "Unknown", NULL};
static const char *const MEMORY_KIND_KEYS[] = {"PAGEABLE", "PINNED", "DEVICE", "ARRAY",
                                               "MANAGED", "DEVICE_STATIC", "MANAGED_STATIC",
                                               "UNKNOWN", NULL};
static const char *const SYNC_KINDS[] = {"Unknown Sync", "Event Sync", "Stream Wait Event",
                                         "Stream Sync", "Context Sync", NULL};
static const char *const SYNC_KIND_KEYS[] = {"UNKNOWN", "EVENT_SYNCHRONIZE", "STREAM_WAIT_EVENT",
                                             "STREAM_SYNCHRONIZE", "CONTEXT_SYNCHRONIZE", NULL};

/* Kineto's spelling of an ENUM row: its name's suffix after `prefix` when
 * that is a known CUPTI key (the label's wording varies between versions),
 * else the label. */
static void enum_spelling(const char *name, const char *label, const char *prefix,
                          const char *const *keys, const char *const *spellings,
                          char out[KIND_NAME_MAX])
{
    const char *key = name ? strstr(name, prefix) : NULL;
    if (key) {
        key += strlen(prefix);
        for (size_t i = 0; keys[i]; i++)
            if (strcmp(key, keys[i]) == 0) {
                snprintf(out, KIND_NAME_MAX, "%s", spellings[i]);
                return;
            }
    }
    snprintf(out, KIND_NAME_MAX, "%s", label ? label : name ? name : "Unknown");
}

/* The kinds of an ENUM table, or Nsight's numbering when the export has
 * none. */
static int load_kinds(nsys_reader *r, const char *table, const char *prefix,
                      const char *const *keys, const char *const *spellings, kind_names *out)
{
    int exists = table_exists(r, table);
    if (exists < 0)
        return fail_sqlite(r, table);
    size_t n = 0;
    while (spellings[n])
        n++;
    sqlite3_stmt *s = NULL;
    if (exists) {
        char sql[160];
        snprintf(sql, sizeof sql, "SELECT id, name, label FROM %s WHERE id >= 0 AND id < 256",
                 table);
        if (sqlite3_prepare_v2(r->db, sql, -1, &s, NULL) != SQLITE_OK)
            return fail_sqlite(r, table);
        n = 256;
    }
    out->names = calloc(n, sizeof *out->names);
    if (!out->names) {
        sqlite3_finalize(s);
        return fail(r, table, "out of memory");
    }
    out->n = n;
    for (size_t i = 0; i < n; i++)
        snprintf(out->names[i], KIND_NAME_MAX, "%s", exists ? "Unknown" : spellings[i]);
    int rc = SQLITE_DONE;
    while (s && (rc = sqlite3_step(s)) == SQLITE_ROW)
        enum_spelling((const char *)sqlite3_column_text(s, 1),
                      (const char *)sqlite3_column_text(s, 2), prefix, keys, spellings,
                      out->names[sqlite3_column_int(s, 0)]);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : fail_sqlite(r, table);
}

static const char *kind_name(const kind_names *k, int64_t id)
{
    return id >= 0 && (size_t)id < k->n ? k->names[id] : "Unknown";
}

/* ---- tables -------------------------------------------------------------- */

/* The condition that keeps one device's rows of table: its deviceId, or
 * for CPU-side tables its processes (globalTid); "" for the whole file. */
static int scope_condition(nsys_reader *r, const char *table, char *out, size_t size)
{
    out[0] = '\0';
    if (!r->one_device)
        return 0;
    int device = has_column(r, table, "deviceId");
    int thread = has_column(r, table, "globalTid");
    if (device < 0 || thread < 0)
        return fail_sqlite(r, table);
    if (device) {
        snprintf(out, size, "deviceId = %lld", r->device);
    } else if (thread && r->n_pids) {
        size_t n = (size_t)snprintf(out, size, PID_OF_GLOBAL_TID " IN (");
        for (size_t i = 0; i < r->n_pids && n < size; i++)
            n += (size_t)snprintf(out + n, size - n, "%s%lld", i ? ", " : "", r->pids[i]);
        if (n < size)
            snprintf(out + n, size - n, ")");
    }
    return 0;
}

/* Steps through the rows of the columns of table (build_select) that meet
 * `where` ("" for all) and the reader's device scope, calling row() on
 * each. */
static int each_row(nsys_reader *r, const char *table, const char *const *columns,
                    const char *where, int (*row)(nsys_reader *r, sqlite3_stmt *s, uint32_t cat),
                    const char *cat)
{
    char sql[2048], scope[1024], tail[1200];
    sqlite3_stmt *s;
    if (scope_condition(r, table, scope, sizeof scope))
        return -1;
    snprintf(tail, sizeof tail, "%s%s%s%s", *where || *scope ? "WHERE " : "", where,
             *where && *scope ? " AND " : "", scope);
    if (build_select(r, table, columns, tail, sql, sizeof sql))
        return -1;
    if (sqlite3_prepare_v2(r->db, sql, -1, &s, NULL) != SQLITE_OK)
        return fail_sqlite(r, table);
    uint32_t cat_id = hta_trace_builder_category(&r->builder, cat);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (out_of_time(r, table) || row(r, s, cat_id)) {
            sqlite3_finalize(s);
            return -1;
        }
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : fail_sqlite(r, table);
}

static int add(nsys_reader *r, const char *table, uint32_t name, uint32_t cat,
               const hta_record *rec)
{
    if (name == UINT32_MAX)
        return -1;             /* string_name said why */
    if (hta_trace_builder_add(&r->builder, name, cat, rec))
        return fail(r, table, "out of memory");
    return 0;
}

/* The first columns of every GPU table; its own follow from GPU_COLUMNS. */
#define GPU_COLUMNS "start", "end", "streamId", "correlationId", "?globalPid"
enum { GPU_OWN_COLUMNS = 5 };

/* The process of a GPU record (globalPid's process bits): MPI_RANKS ranks
 * the trace by it, and reading one device the CPU-side tables keep the
 * processes that used the device, not every process with a context on it
 * (PyTorch often leaves one on device 0 in every process). */
static void note_process(nsys_reader *r, sqlite3_stmt *s)
{
    if (sqlite3_column_type(s, 4) == SQLITE_NULL)
        return;
    long long pid = (sqlite3_column_int64(s, 4) >> 24) & 0xFFFFFF;
    for (size_t i = 0; i < r->n_active_pids; i++)
        if (r->active_pids[i] == pid)
            return;
    if (r->n_active_pids < MAX_PROCESSES)
        r->active_pids[r->n_active_pids++] = pid;
}

/* A correlationId column's value: CUPTI numbers correlations from 1, and
 * 0 (or NULL) is a record no call launched, such as a Unified Memory
 * migration; such a record has none, so that no call with a 0 claims it
 * and the step filter judges it by its own start. */
static int64_t correlation_of(sqlite3_stmt *s, int column)
{
    int64_t c = sqlite3_column_int64(s, column);
    return c > 0 ? c : HTA_NO_CORRELATION;
}

/* A start or end column's time on the UTC epoch clock. */
static int64_t time_at(const nsys_reader *r, sqlite3_stmt *s, int column)
{
    return hta_nsys_shifted(&r->time_base, sqlite3_column_int64(s, column));
}

/* A GPU record from the GPU_COLUMNS. */
static hta_record gpu_record(nsys_reader *r, sqlite3_stmt *s)
{
    note_process(r, s);
    return (hta_record){.ts_ns = time_at(r, s, 0),
                        .end_ns = time_at(r, s, 1),
                        .is_gpu = 1,
                        .stream = sqlite3_column_int64(s, 2),
                        .correlation = correlation_of(s, 3)};
}

/* A record of a CUDA graph node: graphNodeId (or graphId, kernels of
 * newer exports) above 0, CUPTI's 0 and Nsight's NULL meaning that no
 * graph launched it.  Its correlation, which CUPTI makes the launch
 * call's, is kept for unlinked_graph_records; graph_column -1: the table
 * has no graphId. */
static void note_graph_node(nsys_reader *r, sqlite3_stmt *s, int node_column, int graph_column)
{
    graph_records *g = &r->graphs;
    if (sqlite3_column_int64(s, node_column) <= 0 &&
        (graph_column < 0 || sqlite3_column_int64(s, graph_column) <= 0))
        return;
    int64_t correlation = correlation_of(s, 3);
    if (correlation == HTA_NO_CORRELATION) {
        g->uncorrelated++;
        return;
    }
    if (!g->failed)
        g->failed = hta_grow_array((void **)&g->correlations, &g->cap, g->n + 1,
                                   sizeof *g->correlations) != 0;
    if (!g->failed)
        g->correlations[g->n++] = correlation;
}

/* Kernel names: the demangled name, as Kineto's, or the short name in an
 * export without it. */
static int kernel_row(nsys_reader *r, sqlite3_stmt *s, uint32_t cat)
{
    enum { DEMANGLED = GPU_OWN_COLUMNS, SHORT, DEVICE, GRAPH_NODE, GRAPH };
    hta_record rec = gpu_record(r, s);
    note_graph_node(r, s, GRAPH_NODE, GRAPH);
    int column = sqlite3_column_type(s, DEMANGLED) != SQLITE_NULL ? DEMANGLED : SHORT;
    if (sqlite3_column_type(s, column) == SQLITE_NULL)
        return fail(r, KERNEL_TABLE, "no column demangledName or shortName");
    hta_trace_builder_device(&r->builder, sqlite3_column_int64(s, DEVICE));
    uint32_t name = string_name(r, &r->kernel_names, sqlite3_column_int64(s, column),
                                NAME_AS_IS, KERNEL_TABLE);
    return add(r, KERNEL_TABLE, name, cat, &rec);
}

static int read_kernels(nsys_reader *r)
{
    static const char *const columns[] = {GPU_COLUMNS, "?demangledName", "?shortName",
                                          "?deviceId", "?graphNodeId", "?graphId", NULL};
    return each_row(r, KERNEL_TABLE, columns, "", kernel_row, "kernel");
}

/* Runtime and driver calls share Nsight's table; Kineto files driver
 * calls (cu*, not cuda*) under their own category. */
static int add_call(nsys_reader *r, const pending_call *call)
{
    uint32_t cat = call->cat;
    if (call->name != UINT32_MAX) {
        const char *text = hta_strtab_get(&r->builder.trace->names, call->name);
        if (strncmp(text, "cu", 2) == 0 && strncmp(text, "cuda", 4) != 0)
            cat = hta_trace_builder_category(&r->builder, "cuda_driver");
    }
    return add(r, RUNTIME_TABLE, call->name, cat, &call->rec);
}

/* Whether a and b are one call stored twice: one correlation id, one
 * record within the other (Nsight 2022 writes a call with a backtrace as
 * an eventClass 67 record around the call's own record). */
static int same_call(const hta_record *a, const hta_record *b)
{
    return a->correlation == b->correlation && a->correlation != HTA_NO_CORRELATION &&
           ((a->ts_ns <= b->ts_ns && b->end_ns <= a->end_ns) ||
            (b->ts_ns <= a->ts_ns && a->end_ns <= b->end_ns));
}

/* Whether a holds b and is longer; no difference of times is formed, which
 * a corrupt export's could overflow. */
static int holds_longer(const hta_record *a, const hta_record *b)
{
    return a->ts_ns <= b->ts_ns && b->end_ns <= a->end_ns &&
           (a->ts_ns < b->ts_ns || b->end_ns < a->end_ns);
}

/* Each row waits in r->call until the next one shows whether both are one
 * call; the outer record is kept. */
static int api_row(nsys_reader *r, sqlite3_stmt *s, uint32_t cat)
{
    pending_call next = {
        .rec = {.ts_ns = time_at(r, s, 0), .end_ns = time_at(r, s, 1),
                .correlation = correlation_of(s, 2)},
        .cat = cat};
    next.name = string_name(r, &r->api_names, sqlite3_column_int64(s, 3), NAME_API,
                            RUNTIME_TABLE);
    if (next.name == UINT32_MAX)
        return -1;
    if (r->has_call && same_call(&r->call.rec, &next.rec)) {
        if (holds_longer(&next.rec, &r->call.rec))
            r->call = next;
        return 0;
    }
    int rc = r->has_call ? add_call(r, &r->call) : 0;
    r->call = next;
    r->has_call = 1;
    return rc;
}

static int read_runtime(nsys_reader *r)
{
    static const char *const columns[] = {"start", "end", "correlationId", "nameId", NULL};
    r->has_call = 0;
    if (each_row(r, RUNTIME_TABLE, columns, "", api_row, "cuda_runtime"))
        return -1;
    return r->has_call ? add_call(r, &r->call) : 0;
}

static int add_named(nsys_reader *r, const char *table, const char *text, uint32_t cat,
                     const hta_record *rec)
{
    return add(r, table, hta_trace_builder_name(&r->builder, text, strlen(text)), cat, rec);
}

/* Kineto's name of a copy, "Memcpy HtoD (Pinned -> Device)". */
static int memcpy_row(nsys_reader *r, sqlite3_stmt *s, uint32_t cat)
{
    enum { BYTES = GPU_OWN_COLUMNS, COPY_KIND, SRC_KIND, DST_KIND, GRAPH_NODE };
    hta_record rec = gpu_record(r, s);
    note_graph_node(r, s, GRAPH_NODE, -1);
    rec.has_copy = 1;
    rec.bytes = sqlite3_column_int64(s, BYTES);
    char name[3 * KIND_NAME_MAX + 32];
    snprintf(name, sizeof name, "Memcpy %s (%s -> %s)",
             kind_name(&r->copy_kinds, sqlite3_column_int64(s, COPY_KIND)),
             kind_name(&r->memory_kinds, sqlite3_column_int64(s, SRC_KIND)),
             kind_name(&r->memory_kinds, sqlite3_column_int64(s, DST_KIND)));
    return add_named(r, MEMCPY_TABLE, name, cat, &rec);
}

static int read_memcpy(nsys_reader *r)
{
    static const char *const columns[] = {GPU_COLUMNS, "bytes", "copyKind", "?srcKind",
                                          "?dstKind", "?graphNodeId", NULL};
    return each_row(r, MEMCPY_TABLE, columns, "", memcpy_row, "gpu_memcpy");
}

static int memset_row(nsys_reader *r, sqlite3_stmt *s, uint32_t cat)
{
    enum { BYTES = GPU_OWN_COLUMNS, MEMORY_KIND, GRAPH_NODE };
    hta_record rec = gpu_record(r, s);
    note_graph_node(r, s, GRAPH_NODE, -1);
    rec.has_copy = 1;
    rec.bytes = sqlite3_column_int64(s, BYTES);
    char name[KIND_NAME_MAX + 16];
    snprintf(name, sizeof name, "Memset (%s)",
             kind_name(&r->memory_kinds, sqlite3_column_int64(s, MEMORY_KIND)));
    return add_named(r, MEMSET_TABLE, name, cat, &rec);
}

static int read_memset(nsys_reader *r)
{
    static const char *const columns[] = {GPU_COLUMNS, "bytes", "?memKind", "?graphNodeId", NULL};
    return each_row(r, MEMSET_TABLE, columns, "", memset_row, "gpu_memset");
}

static int sync_row(nsys_reader *r, sqlite3_stmt *s, uint32_t cat)
{
    hta_record rec = gpu_record(r, s);
    return add_named(r, SYNC_TABLE,
                     kind_name(&r->sync_kinds, sqlite3_column_int64(s, GPU_OWN_COLUMNS)), cat,
                     &rec);
}

static int read_sync(nsys_reader *r)
{
    static const char *const columns[] = {GPU_COLUMNS, "syncType", NULL};
    return each_row(r, SYNC_TABLE, columns, "", sync_row, "cuda_sync");
}

/* A replay traced whole: one GPU event for the graph (see the top
 * comment); start = end = 0 is CUPTI's "timestamp information could not
 * be collected", no event, so its launch counts as unrecorded. */
static int graph_trace_row(nsys_reader *r, sqlite3_stmt *s, uint32_t cat)
{
    enum { DEVICE = GPU_OWN_COLUMNS, GRAPH };
    if (sqlite3_column_int64(s, 0) == 0 && sqlite3_column_int64(s, 1) == 0) {
        r->graphs.untimed_replays++;
        return 0;
    }
    r->graphs.whole_replays++;
    hta_record rec = gpu_record(r, s);
    /* INT_MAX: "the start is on the host" (a graph whose first node is a
     * host node), no device of the trace's. */
    if (sqlite3_column_int64(s, DEVICE) != INT_MAX)
        hta_trace_builder_device(&r->builder, sqlite3_column_int64(s, DEVICE));
    char name[48];
    snprintf(name, sizeof name, "CUDA graph %lld", (long long)sqlite3_column_int64(s, GRAPH));
    return add_named(r, GRAPH_TRACE_TABLE, name, cat, &rec);
}

static int read_graph_trace(nsys_reader *r)
{
    static const char *const columns[] = {GPU_COLUMNS, "?deviceId", "?graphId", NULL};
    return each_row(r, GRAPH_TRACE_TABLE, columns, "", graph_trace_row, "kernel");
}

/* NVTX ranges: text inline, or through StringIds (textId) in newer
 * exports; marks and unfinished ranges have no duration and are left. */
static int nvtx_row(nsys_reader *r, sqlite3_stmt *s, uint32_t cat)
{
    hta_record rec = {.ts_ns = time_at(r, s, 0), .end_ns = time_at(r, s, 1),
                      .correlation = HTA_NO_CORRELATION};
    uint32_t name;
    if (sqlite3_column_type(s, 2) != SQLITE_NULL) {
        const char *text = (const char *)sqlite3_column_text(s, 2);
        name = hta_trace_builder_annotation(&r->builder, text ? text : "",
                                            (size_t)sqlite3_column_bytes(s, 2));
    } else {
        name = string_name(r, &r->nvtx_names, sqlite3_column_int64(s, 3), NAME_ANNOTATION,
                           NVTX_TABLE);
    }
    return add(r, NVTX_TABLE, name, cat, &rec);
}

/* Range event types: 59 NvtxPushPopRange, 60 NvtxStartEndRange
 * (ENUM_NSYS_EVENT_TYPE). */
static int read_nvtx(nsys_reader *r)
{
    static const char *const columns[] = {"start", "end", "?text", "?textId", NULL};
    return each_row(r, NVTX_TABLE, columns, "eventType IN (59, 60) AND end IS NOT NULL",
                    nvtx_row, "user_annotation");
}

/* ---- rank -------------------------------------------------------------- */

/* The rank and world size of one recorded environment, its variables
 * separated by ';' or (nsys 2022) by NUL bytes, which end a C string: the
 * value is read by its length, with NULs made ';'. */
static void rank_of_environment(nsys_reader *r, sqlite3_stmt *s)
{
    const char *text = (const char *)sqlite3_column_text(s, 0);
    size_t len = (size_t)sqlite3_column_bytes(s, 0);
    char *env = text ? malloc(len + 1) : NULL;
    if (!env)
        return;
    for (size_t i = 0; i < len; i++)
        env[i] = text[i] ? text[i] : ';';
    env[len] = '\0';
    hta_trace *t = r->builder.trace;
    t->rank = hta_env_rank(env);
    t->world_size = hta_env_world_size(env);
    hta_env_host(env, t->host, sizeof t->host);
    free(env);
}

/* A statement over the values of one TARGET_INFO_SYSTEM_ENV property
 * (name and value inline, or as StringIds in other versions); 0 when the
 * export has none to read. */
static int system_env_values(nsys_reader *r, const char *property, sqlite3_stmt **s)
{
    static const char *const BY_TEXT =
        "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = ?";
    static const char *const BY_ID =
        "SELECT v.value FROM TARGET_INFO_SYSTEM_ENV e JOIN StringIds n ON n.id = e.nameId "
        "JOIN StringIds v ON v.id = e.valueId WHERE n.value = ?";
    if (table_exists(r, "TARGET_INFO_SYSTEM_ENV") != 1)
        return 0;
    const char *sql = has_column(r, "TARGET_INFO_SYSTEM_ENV", "value") == 1 ? BY_TEXT : BY_ID;
    if (sqlite3_prepare_v2(r->db, sql, -1, s, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(*s, 1, property, -1, SQLITE_STATIC);
    return 1;
}

/* The rank and world size from the environment Nsight Systems records for
 * the profiled process (property DeviceEnvironment), and the host
 * (HOSTNAME, for the nodes and their clocks).  Only the launcher's
 * variables and the host name are looked at: the environment may hold
 * secrets, and nothing else of it is kept. */
static void read_environment(nsys_reader *r)
{
    sqlite3_stmt *s;
    if (!system_env_values(r, "DeviceEnvironment", &s))
        return;
    while (r->builder.trace->rank < 0 && sqlite3_step(s) == SQLITE_ROW)
        rank_of_environment(r, s);
    sqlite3_finalize(s);
}

/* The host Nsight ran the process on (the Hostname property), over the
 * environment's HOSTNAME: a launcher such as srun passes the launching
 * node's HOSTNAME on to every rank, so it cannot tell the nodes apart. */
static void read_host(nsys_reader *r)
{
    sqlite3_stmt *s;
    if (!system_env_values(r, "Hostname", &s))
        return;
    hta_trace *t = r->builder.trace;
    const char *host = sqlite3_step(s) == SQLITE_ROW ? (const char *)sqlite3_column_text(s, 0)
                                                     : NULL;
    if (host && *host && strlen(host) < sizeof t->host)
        snprintf(t->host, sizeof t->host, "%s", host);
    sqlite3_finalize(s);
}

/* ---- one device of several ------------------------------------------------ */

#define CONTEXT_TABLE "TARGET_INFO_CUDA_CONTEXT_INFO"

/* Runs sql (one integer column) and appends each value to out[*n], up to
 * cap; -1 on a database error. */
static int integers(sqlite3 *db, const char *sql, long long *out, size_t cap, size_t *n)
{
    sqlite3_stmt *s;
    *n = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        if (*n < cap)
            out[(*n)++] = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* The processes with a context on r->device: whose CPU-side records the
 * device's rank keeps when its GPU records do not name their process. */
static int load_context_processes(nsys_reader *r)
{
    char sql[256];
    if (table_exists(r, CONTEXT_TABLE) != 1)
        return 0;
    snprintf(sql, sizeof sql, "SELECT DISTINCT processId FROM " CONTEXT_TABLE
             " WHERE deviceId = %lld ORDER BY processId", r->device);
    return integers(r->db, sql, r->pids, MAX_PROCESSES, &r->n_pids) ? fail_sqlite(r, CONTEXT_TABLE)
                                                                    : 0;
}

/* After the GPU tables: the processes that used the device when they name
 * them. */
static void settle_processes(nsys_reader *r)
{
    if (r->n_active_pids) {
        memcpy(r->pids, r->active_pids, r->n_active_pids * sizeof *r->pids);
        r->n_pids = r->n_active_pids;
    }
}

/* The rank MPI_RANKS (nsys --trace=mpi) gives the processes of the rank's
 * GPU records (r->pids; every process when the records do not name
 * theirs), when they all have one; else the trace keeps none.  A whole
 * export's processes of several ranks (--merge-devices) have none. */
static void rank_from_mpi(nsys_reader *r)
{
    if (table_exists(r, "MPI_RANKS") != 1)
        return;
    char sql[1200];
    size_t n = (size_t)snprintf(sql, sizeof sql, "SELECT DISTINCT rank FROM MPI_RANKS");
    if (r->n_pids)
        n += (size_t)snprintf(sql + n, sizeof sql - n, " WHERE " PID_OF_GLOBAL_TID " IN (");
    for (size_t i = 0; i < r->n_pids && n < sizeof sql; i++)
        n += (size_t)snprintf(sql + n, sizeof sql - n, "%s%lld", i ? ", " : "", r->pids[i]);
    if (r->n_pids && n < sizeof sql)
        snprintf(sql + n, sizeof sql - n, ")");
    long long ranks[2];
    size_t found;
    if (integers(r->db, sql, ranks, 2, &found) == 0 && found == 1 && ranks[0] >= 0)
        r->builder.trace->rank = ranks[0];
}

int hta_nsys_devices(const char *path, long long *devices, size_t cap, size_t *n)
{
    sqlite3 *db = NULL;
    *n = 0;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK ? 0 : -1;
    if (rc == 0)
        sqlite3_busy_timeout(db, 0);
    /* No context table (or not an export at all): one trace, and the
     * reader says what is wrong when it reads it. */
    if (rc == 0 && integers(db, "SELECT DISTINCT deviceId FROM " CONTEXT_TABLE
                                " ORDER BY deviceId", devices, cap, n))
        *n = 0;
    sqlite3_close(db);
    return rc;
}

/* ---- CUDA graphs ------------------------------------------------------------ */

/* The graph node records whose correlation names no CPU call of the
 * trace: their launch call is not in the export (the capture began during
 * the replay, or the call's API was not traced), so /graph_launches does
 * not count their replays. */
static int64_t unlinked_graph_records(nsys_reader *r)
{
    graph_records *g = &r->graphs;
    const hta_trace *t = r->builder.trace;
    unsigned char *linked = g->failed || !g->n ? NULL : calloc(g->n, 1);
    if (!linked)
        return g->uncorrelated;
    qsort(g->correlations, g->n, sizeof *g->correlations, hta_compare_i64);
    for (size_t i = 0; i < t->n_events; i++) {
        if (hta_event_is_gpu(&t->events[i]))
            continue;
        int64_t c = hta_event_correlation(t, &t->events[i]);
        for (size_t k = hta_lower_bound_i64(g->correlations, g->n, c);
             k < g->n && g->correlations[k] == c && !linked[k]; k++)
            linked[k] = 1;
    }
    int64_t unlinked = g->uncorrelated;
    for (size_t k = 0; k < g->n; k++)
        unlinked += !linked[k];
    free(linked);
    return unlinked;
}

/* What the export says of its CUDA graph replays that the tables cannot:
 * replays traced whole, and graph node records without their launch call
 * (with_calls: the export has the runtime table, else its own note says
 * the calls are missing). */
static void note_graphs(nsys_reader *r, int with_calls, hta_error *notes)
{
    char note[HTA_ERROR_MAX];
    int64_t unlinked = with_calls ? unlinked_graph_records(r) : 0;
    if (unlinked) {
        snprintf(note, sizeof note, "%lld GPU records of CUDA graph nodes have no launch call "
                 "in the export: their replays are not in /graph_launches", (long long)unlinked);
        hta_notes_add(notes, note);
    }
    if (r->graphs.whole_replays || r->graphs.untimed_replays) {
        int n = snprintf(note, sizeof note, "%lld CUDA graph replays traced as whole graphs "
                         "(nsys --cuda-graph-trace=graph): each is one GPU event \"CUDA graph "
                         "<graphId>\" and their kernels are not in the export; profile with "
                         "--cuda-graph-trace=node for node-level detail",
                         (long long)(r->graphs.whole_replays + r->graphs.untimed_replays));
        if (r->graphs.untimed_replays && n > 0 && (size_t)n < sizeof note)
            snprintf(note + n, sizeof note - (size_t)n, "; %lld of them have no timestamps "
                     "and count as unrecorded", (long long)r->graphs.untimed_replays);
        hta_notes_add(notes, note);
    }
}

/* ---- open and read --------------------------------------------------------- */

static int open_database(nsys_reader *r)
{
    char why[256];
    int corrupt;
    if (hta_sqlite_open_read(r->path, &r->db, why, sizeof why, &corrupt))
        return fail(r, corrupt ? "sqlite_master" : NULL, why);
    return 0;
}

static int load_enums(nsys_reader *r)
{
    return load_kinds(r, "ENUM_CUDA_MEMCPY_OPER", "MEMCPY_KIND_", COPY_KIND_KEYS, COPY_KINDS,
                      &r->copy_kinds) ||
           load_kinds(r, "ENUM_CUDA_MEM_KIND", "MEMORY_KIND_", MEMORY_KIND_KEYS, MEMORY_KINDS,
                      &r->memory_kinds) ||
           load_kinds(r, "ENUM_CUPTI_SYNC_TYPE", "TYPE_", SYNC_KIND_KEYS, SYNC_KINDS,
                      &r->sync_kinds);
}

/* Reads table with read() when it exists; an absent optional table is
 * noted in `notes` when an analysis needs it. */
static int read_optional(nsys_reader *r, const char *table, int (*read)(nsys_reader *),
                         hta_error *notes, const char *note)
{
    int exists = table_exists(r, table);
    if (exists < 0)
        return fail_sqlite(r, table);
    if (exists)
        return read(r);
    if (note)
        hta_notes_add(notes, note);
    return 0;
}

static int read_tables(nsys_reader *r, hta_error *notes)
{
    int kernels = table_exists(r, KERNEL_TABLE);
    if (kernels < 0)
        return fail_sqlite(r, KERNEL_TABLE);
    if (!kernels)
        return fail(r, KERNEL_TABLE, "no such table (the export has no CUDA kernels: "
                                     "profile with nsys --trace=cuda)");
    if (table_exists(r, "StringIds") != 1)
        return fail(r, "StringIds", "no such table");
    if (sqlite3_prepare_v2(r->db, "SELECT value FROM StringIds WHERE id = ?", -1,
                           &r->string_lookup, NULL) != SQLITE_OK)
        return fail_sqlite(r, "StringIds");
    if (load_enums(r))
        return -1;
    hta_trace_builder_begin_gpu_table(&r->builder);
    if (read_kernels(r))
        return -1;
    hta_trace_builder_begin_gpu_table(&r->builder);
    if (read_optional(r, MEMCPY_TABLE, read_memcpy, notes, NULL))
        return -1;
    hta_trace_builder_begin_gpu_table(&r->builder);
    if (read_optional(r, MEMSET_TABLE, read_memset, notes, NULL))
        return -1;
    hta_trace_builder_begin_gpu_table(&r->builder);
    if (read_optional(r, SYNC_TABLE, read_sync, notes, NULL))
        return -1;
    hta_trace_builder_begin_gpu_table(&r->builder);
    if (read_optional(r, GRAPH_TRACE_TABLE, read_graph_trace, notes, NULL))
        return -1;
    if (hta_trace_builder_merge_gpu_tables(&r->builder))
        return fail(r, NULL, "out of memory ordering the GPU records");
    settle_processes(r);
    rank_from_mpi(r);
    int calls = table_exists(r, RUNTIME_TABLE);
    if (calls < 0)
        return fail_sqlite(r, RUNTIME_TABLE);
    if (read_optional(r, RUNTIME_TABLE, read_runtime, notes,
                      "no " RUNTIME_TABLE ": launch statistics, queue length and launch "
                      "pipelining are empty") ||
        read_optional(r, NVTX_TABLE, read_nvtx, notes, NULL))
        return -1;
    note_graphs(r, calls, notes);
    return 0;
}

int hta_read_nsys_sqlite(const char *path, const hta_builder_options *how, hta_trace *out,
                         hta_error *notes, hta_error *err)
{
    nsys_reader r = {.path = path, .err = err, .timeout_seconds = how->timeout_seconds};
    strcpy(r.version, "unknown");
    if (how->timeout_seconds > 0)
        r.deadline = hta_monotonic_seconds() + how->timeout_seconds;
    notes->text[0] = '\0';
    hta_trace_init(out);
    r.one_device = how->one_device;
    r.device = how->device;
    int rc = hta_trace_builder_init(&r.builder, out, how->step_regex)
                 ? hta_fail(err, "%s: --step-regex does not compile", path)
                 : open_database(&r);
    if (rc == 0) {
        read_version(&r);
        read_time_base(&r, notes);
        rc = r.one_device ? load_context_processes(&r) : 0;
    }
    if (rc == 0)
        rc = read_tables(&r, notes);
    /* The recorded environment is one process's: no rank of a device's. */
    if (rc == 0 && !r.one_device && r.builder.trace->rank < 0)
        read_environment(&r);
    if (rc == 0)
        read_host(&r);
    if (rc == 0)
        hta_trace_builder_device_note(&r.builder, notes);
    sqlite3_finalize(r.string_lookup);
    sqlite3_close(r.db);
    hta_trace_builder_free(&r.builder);
    free(r.graphs.correlations);
    free(r.kernel_names.ids);
    free(r.api_names.ids);
    free(r.nvtx_names.ids);
    free(r.copy_kinds.names);
    free(r.memory_kinds.names);
    free(r.sync_kinds.names);
    if (rc) {
        hta_trace_free(out);
        return -1;
    }
    return 0;
}
