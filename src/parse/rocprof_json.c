/* rocprof_json.c: rocprofv3's JSON results (see parse/rocprof_json.h). */
#include "parse/rocprof_json.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/json_walk.h"
#include "parse/launcher_env.h"
#include "parse/rocprof_records.h"
#include "util/grow.h"
#include "util/strtab.h"

#define TOOL_KEY "rocprofiler-sdk-tool"
#define MAX_AGENTS 64

/* A record as the file gives it: names are resolved once every member
 * has been read. */
typedef struct raw_record {
    int64_t start, end, correlation, kind, operation, kernel_id, agent, queue, stream, bytes;
    rp_kind as;
    rp_record args;            /* an RCCL call's arguments (comm, dtype, counts) */
} raw_record;

typedef struct symbol {
    int64_t id;
    uint32_t name;             /* in json_reader.symbol_names */
} symbol;

typedef struct gpu_agent {
    int64_t handle, index;
    char product[96];
} gpu_agent;

typedef struct json_reader {
    const char *path;
    hta_error *err;
    int saw_tool;
    raw_record *records;
    size_t n_records, cap_records;
    symbol *symbols;
    size_t n_symbols, cap_symbols;
    hta_strtab symbol_names;
    gpu_agent agents[MAX_AGENTS];
    size_t n_agents;
    cJSON *strings;            /* owned: the first process's strings member */
    int64_t rank, world_size;
    char host[64];
    /* Listing the GPUs with work: only the agents and the dispatches'
     * agent handles (distinct, in handles) are read, and the walk stops
     * (listed) after the dispatches. */
    int listing, listed;
    int64_t handles[MAX_AGENTS];
    size_t n_handles;
} json_reader;

/* ---- the sniff ------------------------------------------------------- */

int hta_is_rocprof_json(const char *path)
{
    hta_source *src;
    hta_error ignored;
    char head[128];
    if (hta_source_open(path, HTA_INFLATER_ZLIB, &src, &ignored))
        return 0;
    long n = hta_source_read(src, head, sizeof head - 1, &ignored);
    hta_source_close(src);
    if (n <= 0)
        return 0;
    head[n] = '\0';
    const char *p = head + strspn(head, " \t\r\n");
    if (*p++ != '{')
        return 0;
    p += strspn(p, " \t\r\n");
    return strncmp(p, "\"" TOOL_KEY "\"", strlen(TOOL_KEY) + 2) == 0;
}

/* ---- members read whole (small) -------------------------------------- */

static cJSON *read_small_member(lexer *lx)
{
    hta_buf json = {0};
    int complete;
    cJSON *root = NULL;
    if (hta_json_capture_value(lx, &json, &complete) == 0 && complete && json.data)
        root = cJSON_ParseWithLength(json.data, json.len);
    hta_buf_free(&json);
    return root;
}

static int64_t integer_at(const cJSON *object, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(object, key);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 9e18
               ? (int64_t)v->valuedouble : -1;
}

/* Joins a JSON array of strings with spaces into out. */
static void join_strings(const cJSON *array, hta_buf *out)
{
    const cJSON *item;
    cJSON_ArrayForEach(item, array)
        if (cJSON_IsString(item) && (hta_buf_append(out, item->valuestring,
                                                    strlen(item->valuestring)) ||
                                     hta_buf_putc(out, ' ')))
            return;
}

/* A config's path as configured (raw_output_path/raw_output_file) and as
 * expanded (output_path/output_file): the rank its placeholders give. */
static int64_t rank_of_config(const cJSON *config)
{
    const char *keys[4] = {"raw_output_path", "raw_output_file", "output_path", "output_file"};
    const char *v[4];
    for (int i = 0; i < 4; i++) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(config, keys[i]);
        v[i] = cJSON_IsString(item) ? item->valuestring : "";
    }
    char raw[4096], expanded[4096];
    snprintf(raw, sizeof raw, "%s/%s", v[0], v[1]);
    snprintf(expanded, sizeof expanded, "%s/%s", v[2], v[3]);
    return hta_rocprof_rank_from_path(raw, expanded);
}

static void apply_metadata(json_reader *r, const cJSON *m)
{
    const cJSON *host = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(m, "node"), "hostname");
    if (cJSON_IsString(host) && strlen(host->valuestring) < sizeof r->host)
        strcpy(r->host, host->valuestring);
    hta_buf command = {0};
    join_strings(cJSON_GetObjectItemCaseSensitive(m, "command"), &command);
    int64_t rank = command.data ? hta_env_rank(command.data) : -1;
    r->world_size = command.data ? hta_env_world_size(command.data) : -1;
    hta_buf_free(&command);
    r->rank = rank >= 0 ? rank : rank_of_config(cJSON_GetObjectItemCaseSensitive(m, "config"));
}

/* GPU agents (type 2): their handle, index among the GPUs and product. */
static void apply_agents(json_reader *r, const cJSON *agents)
{
    const cJSON *a;
    cJSON_ArrayForEach(a, agents)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(a, "id");
        if (integer_at(a, "type") != 2 || r->n_agents == MAX_AGENTS)
            continue;
        gpu_agent *g = &r->agents[r->n_agents++];
        g->handle = integer_at(id, "handle");
        g->index = integer_at(a, "logical_node_type_id");
        const cJSON *product = cJSON_GetObjectItemCaseSensitive(a, "product_name");
        snprintf(g->product, sizeof g->product, "%s",
                 cJSON_IsString(product) ? product->valuestring : "");
    }
}

/* ---- members streamed ------------------------------------------------ */

/* Where a number sits in a record: the object it is in. */
typedef enum { IN_RECORD, IN_CORRELATION, IN_DISPATCH, IN_AGENT, IN_QUEUE, IN_STREAM,
               IN_DESTINATION, IN_OTHER } place;

static place child_place(const lexer *lx, place parent)
{
    if (parent == IN_RECORD || parent == IN_DISPATCH) {
        if (key_is(lx, "agent_id"))
            return IN_AGENT;
        if (key_is(lx, "queue_id"))
            return IN_QUEUE;
    }
    if (parent != IN_RECORD)
        return IN_OTHER;
    if (key_is(lx, "correlation_id"))
        return IN_CORRELATION;
    if (key_is(lx, "dispatch_info"))
        return IN_DISPATCH;
    if (key_is(lx, "stream_id"))
        return IN_STREAM;
    return key_is(lx, "dst_agent_id") ? IN_DESTINATION : IN_OTHER;
}

/* The field a number under `key` in `where` fills, or NULL. */
static int64_t *field_of(const lexer *lx, place where, raw_record *rec)
{
    switch (where) {
    case IN_RECORD:
        return key_is(lx, "start_timestamp") ? &rec->start
               : key_is(lx, "end_timestamp") ? &rec->end
               : key_is(lx, "kind")          ? &rec->kind
               : key_is(lx, "operation")     ? &rec->operation
               : key_is(lx, "bytes")         ? &rec->bytes
                                             : NULL;
    case IN_CORRELATION: return key_is(lx, "internal") ? &rec->correlation : NULL;
    case IN_DISPATCH: return key_is(lx, "kernel_id") ? &rec->kernel_id : NULL;
    case IN_AGENT:
    case IN_DESTINATION: return key_is(lx, "handle") ? &rec->agent : NULL;
    case IN_QUEUE: return key_is(lx, "handle") ? &rec->queue : NULL;
    case IN_STREAM: return key_is(lx, "handle") ? &rec->stream : NULL;
    default: return NULL;
    }
}

static int read_integer(lexer *lx, int64_t *out)
{
    number n;
    lx_peek_token(lx);
    if (lx_read_number(lx, 0, &n))
        return -1;
    if (!n.integer_ok || n.fractional)
        return lx_error(lx, "expected a whole number");
    *out = n.integer;
    return 0;
}

/* An RCCL call's args: [{"name": ..., "value": ...}, ...], the values
 * as RCCL prints them. */
static int read_args(lexer *lx, json_reader *r, raw_record *rec)
{
    int more = lx_open(lx, '[', ']', "expected an array of args");
    while (more > 0) {
        hta_buf name = {0}, value = {0};
        int rc = 0, in = lx_open(lx, '{', '}', "expected an arg object");
        while (rc == 0 && in > 0) {
            rc = lx_read_key(lx);
            hta_buf *text = rc            ? NULL
                            : key_is(lx, "name")  ? &name
                            : key_is(lx, "value") ? &value
                                                  : NULL;
            if (rc == 0)
                rc = text && lx_peek_token(lx) == '"' ? lx_read_string(lx, text)
                                                      : lx_skip_value(lx);
            in = rc ? -1 : lx_next_member(lx, '}');
        }
        if (in == 0 && name.len && value.len && hta_buf_putc(&name, '\0') == 0 &&
            hta_buf_putc(&value, '\0') == 0 &&
            hta_rp_take_arg(&rec->args, name.data, value.data, &r->symbol_names))
            in = hta_fail(r->err, "%s: out of memory", r->path);
        hta_buf_free(&name);
        hta_buf_free(&value);
        if (in < 0)
            return -1;
        more = lx_next_member(lx, ']');
    }
    return more;
}

/* The members of a record's object at `where`, recursively. */
static int read_record_object(lexer *lx, json_reader *r, place where, raw_record *rec)
{
    int more = lx_open(lx, '{', '}', "expected a record object");
    while (more > 0) {
        if (lx_read_key(lx))
            return -1;
        /* The key is read in place: settle what it names before the
         * value's first byte, which may refill the buffer. */
        place inner = child_place(lx, where);
        int64_t *field = field_of(lx, where, rec);
        int args = where == IN_RECORD && rec->as == RP_RCCL && key_is(lx, "args");
        int c = lx_peek_token(lx);
        int rc = c == '{' && inner != IN_OTHER ? read_record_object(lx, r, inner, rec)
                 : c != '{' && c != '"' && field ? read_integer(lx, field)
                 : c == '[' && args              ? read_args(lx, r, rec)
                                                 : lx_skip_value(lx);
        if (rc)
            return -1;
        more = lx_next_member(lx, '}');
    }
    return more;
}

static int push_record(json_reader *r, const raw_record *rec)
{
    if (hta_grow_array((void **)&r->records, &r->cap_records, r->n_records + 1,
                       sizeof *r->records))
        return hta_fail(r->err, "%s: out of memory", r->path);
    r->records[r->n_records++] = *rec;
    return 0;
}

/* Notes a dispatch's agent handle among the distinct ones. */
static void note_handle(json_reader *r, int64_t handle)
{
    for (size_t i = 0; i < r->n_handles; i++)
        if (r->handles[i] == handle)
            return;
    if (r->n_handles < MAX_AGENTS)
        r->handles[r->n_handles++] = handle;
}

static int read_records(lexer *lx, json_reader *r, rp_kind as)
{
    int more = lx_open(lx, '[', ']', "expected an array of records");
    while (more > 0) {
        raw_record rec = {.correlation = HTA_NO_CORRELATION, .kind = -1, .operation = -1,
                          .kernel_id = -1, .agent = -1, .queue = -1, .stream = -1,
                          .bytes = -1, .start = -1, .end = -1, .as = as,
                          .args = {.in_count = -1, .out_count = -1}};
        if (read_record_object(lx, r, IN_RECORD, &rec))
            return -1;
        if (r->listing && rec.agent >= 0)
            note_handle(r, rec.agent);
        else if (!r->listing && push_record(r, &rec))
            return -1;
        more = lx_next_member(lx, ']');
    }
    return more;
}

/* The buffer_records arrays this reader carries; the others are skipped. */
static int record_kind(const lexer *lx)
{
    return key_is(lx, "kernel_dispatch") ? RP_KERNELS
           : key_is(lx, "memory_copy")   ? RP_COPIES
           : key_is(lx, "hip_api")       ? RP_CALLS
           : key_is(lx, "marker_api")    ? RP_MARKERS
           : key_is(lx, "rccl_api")      ? RP_RCCL
                                         : -1;
}

static int read_buffer_records(lexer *lx, json_reader *r)
{
    int more = lx_open(lx, '{', '}', "expected an object of buffer records");
    while (more > 0) {
        if (lx_read_key(lx))
            return -1;
        int kind = record_kind(lx);
        if (r->listing && kind != RP_KERNELS)
            kind = -1;
        if (kind >= 0 ? read_records(lx, r, (rp_kind)kind) : lx_skip_value(lx))
            return -1;
        r->listed = r->listing && kind == RP_KERNELS;
        more = r->listed ? 0 : lx_next_member(lx, '}');
    }
    return more;
}

/* One kernel symbol: its id and its name (formatted, else demangled, else
 * as the code object has it). */
static int read_symbol(lexer *lx, json_reader *r)
{
    static const char *const names[] = {"formatted_kernel_name", "demangled_kernel_name",
                                        "kernel_name"};
    hta_buf text[3] = {{0}};
    int64_t id = -1;
    int rc = 0, more = lx_open(lx, '{', '}', "expected a kernel symbol object");
    while (rc == 0 && more > 0) {
        rc = lx_read_key(lx);
        int which = -1;
        for (int k = 0; k < 3 && rc == 0; k++)
            which = key_is(lx, names[k]) ? k : which;
        if (rc == 0 && key_is(lx, "kernel_id"))
            rc = read_integer(lx, &id);
        else if (rc == 0 && which >= 0 && lx_peek_token(lx) == '"')
            rc = lx_read_string(lx, &text[which]);
        else if (rc == 0)
            rc = lx_skip_value(lx);
        more = rc ? -1 : lx_next_member(lx, '}');
    }
    int k = 0;
    while (k < 2 && !text[k].len)
        k++;
    if (more == 0 && id >= 0) {
        uint32_t name = hta_strtab_intern(&r->symbol_names, text[k].data ? text[k].data : "",
                                          text[k].len);
        if (name == UINT32_MAX ||
            hta_grow_array((void **)&r->symbols, &r->cap_symbols, r->n_symbols + 1,
                           sizeof *r->symbols))
            more = hta_fail(r->err, "%s: out of memory", r->path);
        else
            r->symbols[r->n_symbols++] = (symbol){id, name};
    }
    for (k = 0; k < 3; k++)
        hta_buf_free(&text[k]);
    return more < 0 ? -1 : 0;
}

static int read_symbols(lexer *lx, json_reader *r)
{
    int more = lx_open(lx, '[', ']', "expected an array of kernel symbols");
    while (more > 0) {
        if (read_symbol(lx, r))
            return -1;
        more = lx_next_member(lx, ']');
    }
    return more;
}

/* A member read whole and handed to apply (metadata, agents), or kept
 * (strings, the first process's). */
static int read_whole(lexer *lx, json_reader *r, void (*apply)(json_reader *, const cJSON *))
{
    cJSON *root = read_small_member(lx);
    if (lx->failed)
        return -1;
    if (apply) {
        if (root)
            apply(r, root);
        cJSON_Delete(root);
    } else if (!r->strings)
        r->strings = root;
    else
        cJSON_Delete(root);
    return 0;
}

static int read_process(lexer *lx, json_reader *r)
{
    int more = lx_open(lx, '{', '}', "expected a process object");
    while (more > 0) {
        if (lx_read_key(lx))
            return -1;
        int rc = r->listing && !key_is(lx, "agents") && !key_is(lx, "buffer_records")
                     ? lx_skip_value(lx)
                 : key_is(lx, "metadata")       ? read_whole(lx, r, apply_metadata)
                 : key_is(lx, "agents")         ? read_whole(lx, r, apply_agents)
                 : key_is(lx, "strings")        ? read_whole(lx, r, NULL)
                 : key_is(lx, "kernel_symbols") ? read_symbols(lx, r)
                 : key_is(lx, "buffer_records") ? read_buffer_records(lx, r)
                                                : lx_skip_value(lx);
        if (rc)
            return -1;
        more = r->listed ? 0 : lx_next_member(lx, '}');
    }
    return more;
}

static int read_processes(lexer *lx, json_reader *r)
{
    int more = lx_open(lx, '[', ']', "expected an array of processes");
    while (more > 0) {
        if (read_process(lx, r))
            return -1;
        more = r->listed ? 0 : lx_next_member(lx, ']');
    }
    return more;
}

static int walk_document(lexer *lx, void *ctx)
{
    json_reader *r = ctx;
    int more = lx_open(lx, '{', '}', "expected an object");
    while (more > 0) {
        if (lx_read_key(lx))
            return -1;
        int tool = key_is(lx, TOOL_KEY);
        r->saw_tool |= tool;
        if (tool ? read_processes(lx, r) : lx_skip_value(lx))
            return -1;
        more = r->listed ? 0 : lx_next_member(lx, '}');
    }
    if (more < 0)
        return -1;
    if (r->listed)
        return 0;
    if (lx_peek_token(lx) != LX_EOF)
        return lx_error_eof(lx, "data after the document");
    return 0;
}

/* ---- names, then the trace ------------------------------------------- */

static int compare_symbols(const void *a, const void *b)
{
    int64_t x = ((const symbol *)a)->id, y = ((const symbol *)b)->id;
    return (x > y) - (x < y);
}

static int compare_devices(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static const char *symbol_name(const json_reader *r, int64_t id)
{
    symbol key = {.id = id};
    const symbol *s = r->n_symbols ? bsearch(&key, r->symbols, r->n_symbols, sizeof key,
                                             compare_symbols)
                                   : NULL; /* symbols is NULL without any */
    return s ? hta_strtab_get(&r->symbol_names, s->name) : NULL;
}

/* strings.buffer_records[kind]: the domain's name and operations. */
static const cJSON *domain_of(const json_reader *r, int64_t kind)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(r->strings, "buffer_records");
    return kind >= 0 && kind < 1 << 16 ? cJSON_GetArrayItem(list, (int)kind) : NULL;
}

static const char *domain_name(const json_reader *r, int64_t kind)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(domain_of(r, kind), "kind");
    return cJSON_IsString(name) ? name->valuestring : NULL;
}

static const char *operation_name(const json_reader *r, const raw_record *rec)
{
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(domain_of(r, rec->kind), "operations");
    const cJSON *op = rec->operation >= 0 && rec->operation < 1 << 20
                          ? cJSON_GetArrayItem(ops, (int)rec->operation) : NULL;
    return cJSON_IsString(op) ? op->valuestring : NULL;
}

/* A marker's message: strings.marker_api's entry for its correlation. */
static const char *marker_message(const json_reader *r, int64_t correlation)
{
    const cJSON *entry;
    cJSON_ArrayForEach(entry, cJSON_GetObjectItemCaseSensitive(r->strings, "marker_api"))
    {
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(entry, "value");
        if (integer_at(entry, "key") == correlation && cJSON_IsString(value))
            return value->valuestring;
    }
    return NULL;
}

static const gpu_agent *agent_of(const json_reader *r, int64_t handle)
{
    for (size_t i = 0; i < r->n_agents; i++)
        if (r->agents[i].handle == handle)
            return &r->agents[i];
    return NULL;
}

/* A GPU's number: its index among the GPUs (as its device entry names
 * it), else its handle. */
static int64_t gpu_index(const json_reader *r, int64_t handle)
{
    const gpu_agent *agent = agent_of(r, handle);
    return agent && agent->index >= 0 ? agent->index : handle;
}

/* The record's name (stable until the reader is freed), or NULL with err
 * set. */
static const char *name_of(json_reader *r, const raw_record *rec)
{
    const char *name = NULL;
    if (rec->as == RP_KERNELS)
        name = symbol_name(r, rec->kernel_id);
    else if (rec->as == RP_MARKERS)
        name = marker_message(r, rec->correlation);
    if (!name && rec->as != RP_KERNELS)
        name = operation_name(r, rec);
    if (name && rec->as == RP_COPIES) {
        char copy[160];
        hta_rocprof_copy_name(name, copy, sizeof copy);
        uint32_t id = hta_strtab_intern(&r->symbol_names, copy, strlen(copy));
        if (id == UINT32_MAX) {
            hta_fail(r->err, "%s: out of memory", r->path);
            return NULL;
        }
        return hta_strtab_get(&r->symbol_names, id);
    }
    if (!name)
        hta_fail(r->err, "%s: a %s record names no %s (kind %lld, operation %lld, kernel %lld)",
                 r->path, rec->as == RP_KERNELS ? "kernel_dispatch" : "buffer",
                 rec->as == RP_KERNELS ? "kernel symbol" : "operation in strings",
                 (long long)rec->kind, (long long)rec->operation, (long long)rec->kernel_id);
    return name;
}

/* Marker records of kinds other than ranges (control, naming) are left
 * out. */
static int carried(const json_reader *r, const raw_record *rec)
{
    if (rec->as != RP_MARKERS)
        return 1;
    const char *domain = domain_name(r, rec->kind);
    return !domain || hta_rocprof_api_kind(domain) == RP_MARKERS;
}

static int to_records(json_reader *r, rp_records *all)
{
    if (r->n_symbols) /* symbols is NULL without any; qsort wants non-NULL */
        qsort(r->symbols, r->n_symbols, sizeof *r->symbols, compare_symbols);
    for (size_t i = 0; i < r->n_records; i++) {
        const raw_record *rec = &r->records[i];
        if (!carried(r, rec))
            continue;
        const char *name = name_of(r, rec);
        if (!name)
            return -1;
        rp_record out = {.start = rec->start, .end = rec->end, .correlation = rec->correlation,
                         .agent = gpu_index(r, rec->agent),
                         .process = -1, .stream = rec->stream >= 0 ? rec->stream : rec->queue,
                         .name = name, .bytes = rec->bytes, .comm = rec->args.comm,
                         .dtype = rec->args.dtype, .in_count = rec->args.in_count,
                         .out_count = rec->args.out_count};
        if (hta_rp_push(all, rec->as, &out))
            return hta_fail(r->err, "%s: out of memory", r->path);
    }
    return 0;
}

/* The product name of the first GPU with work (of how->device, when
 * one), for the peak tables. */
static void note_device(const json_reader *r, const hta_builder_options *how, hta_trace *t)
{
    for (size_t i = 0; i < r->n_records; i++) {
        const raw_record *rec = &r->records[i];
        const gpu_agent *agent = rec->as == RP_KERNELS ? agent_of(r, rec->agent) : NULL;
        if (how->one_device && gpu_index(r, rec->agent) != how->device)
            continue;
        if (agent && agent->product[0]) {
            snprintf(t->device_name, sizeof t->device_name, "%s", agent->product);
            return;
        }
    }
}

static int build_trace(json_reader *r, const hta_builder_options *how, hta_trace *out,
                       hta_error *notes)
{
    hta_trace_builder b;
    if (hta_trace_builder_init(&b, out, how->step_regex))
        return hta_fail(r->err, "%s: --step-regex does not compile", r->path);
    rp_records all = {0};
    int rc = to_records(r, &all) ? -1 : hta_rocprof_emit(&all, r->path, how, &b, notes, r->err);
    if (rc == 0) {
        /* The process's recorded rank is no rank of one of its GPUs. */
        int shared = how->one_device && hta_rp_several_agents(&all, -1);
        out->rank = shared ? -1 : r->rank;
        out->world_size = shared ? -1 : r->world_size;
        snprintf(out->host, sizeof out->host, "%s", r->host);
        note_device(r, how, out);
    }
    hta_rp_free(&all);
    hta_trace_builder_free(&b);
    return rc;
}

int hta_read_rocprof_json(const char *path, hta_inflater inflater, const hta_builder_options *how,
                          hta_trace *out, hta_error *notes, hta_error *err)
{
    json_reader r = {.path = path, .err = err, .rank = -1, .world_size = -1};
    hta_strtab_init(&r.symbol_names);
    notes->text[0] = '\0';
    hta_trace_init(out);
    int rc = hta_json_walk_file(path, inflater, how->timeout_seconds, walk_document, &r, err);
    if (rc == 0 && !r.saw_tool)
        rc = hta_fail(err, "%s: no \"" TOOL_KEY "\" member: not rocprofv3 JSON results", path);
    if (rc == 0)
        rc = build_trace(&r, how, out, notes);
    free(r.records);
    free(r.symbols);
    hta_strtab_free(&r.symbol_names);
    cJSON_Delete(r.strings);
    if (rc)
        hta_trace_free(out);
    return rc;
}

int hta_rocprof_json_devices(const char *path, long long *devices, size_t cap, size_t *n)
{
    json_reader r = {.path = path, .listing = 1};
    hta_error ignored;
    *n = 0;
    r.err = &ignored;
    int rc = hta_json_walk_file(path, HTA_INFLATER_AUTO, 0, walk_document, &r, &ignored);
    for (size_t i = 0; rc == 0 && i < r.n_handles && *n < cap; i++)
        devices[(*n)++] = gpu_index(&r, r.handles[i]);
    if (*n > 1)
        qsort(devices, *n, sizeof *devices, compare_devices);
    return rc ? -1 : 0;
}
