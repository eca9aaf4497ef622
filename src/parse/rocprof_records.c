/* rocprof_records.c: rocprofv3's records into the trace model (see
 * parse/rocprof_records.h). */
#include "parse/rocprof_records.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/classify.h"
#include "model/comm_meta.h"
#include "parse/launcher_env.h"
#include "util/grow.h"

int hta_rp_push(rp_records *all, rp_kind kind, const rp_record *r)
{
    if (hta_grow_array((void **)&all->items[kind], &all->cap[kind], all->n[kind] + 1,
                       sizeof *all->items[kind]))
        return -1;
    all->items[kind][all->n[kind]++] = *r;
    return 0;
}

void hta_rp_free(rp_records *all)
{
    for (int k = 0; k < RP_N_KINDS; k++)
        free(all->items[k]);
    memset(all, 0, sizeof *all);
}

/* ---- names ------------------------------------------------------------ */

static const struct {
    const char *direction, *name;
} COPY_NAMES[] = {
    {"HOST_TO_DEVICE", "Memcpy HtoD (Host -> Device)"},
    {"DEVICE_TO_HOST", "Memcpy DtoH (Device -> Host)"},
    {"DEVICE_TO_DEVICE", "Memcpy DtoD (Device -> Device)"},
    {"HOST_TO_HOST", "Memcpy HtoH (Host -> Host)"},
};

void hta_rocprof_copy_name(const char *direction, char *out, size_t cap)
{
    const char *d = strncmp(direction, "MEMORY_COPY_", 12) == 0 ? direction + 12 : direction;
    for (size_t i = 0; i < sizeof COPY_NAMES / sizeof *COPY_NAMES; i++)
        if (strcmp(d, COPY_NAMES[i].direction) == 0) {
            snprintf(out, cap, "%s", COPY_NAMES[i].name);
            return;
        }
    snprintf(out, cap, "Memcpy %s", d);
}

int hta_rocprof_api_kind(const char *domain)
{
    if (strncmp(domain, "HIP_RUNTIME_API", 15) == 0)
        return RP_CALLS;
    if (strncmp(domain, "MARKER_CORE", 11) == 0)
        return RP_MARKERS;
    if (strncmp(domain, "RCCL_API", 8) == 0)   /* RCCL_API, RCCL_API_EXT */
        return RP_RCCL;
    return -1;
}

/* ---- RCCL calls' collectives ------------------------------------------ */

int hta_rp_take_arg(rp_record *r, const char *name, const char *value, hta_strtab *store)
{
    const char **text = strcmp(name, "comm") == 0       ? &r->comm
                        : strcmp(name, "datatype") == 0 ? &r->dtype
                                                        : NULL;
    if (text) {
        uint32_t id = hta_strtab_intern(store, value, strlen(value));
        if (id == UINT32_MAX)
            return -1;
        *text = hta_strtab_get(store, id);
        return 0;
    }
    int in = strcmp(name, "count") == 0 || strcmp(name, "sendcount") == 0;
    int out = strcmp(name, "count") == 0 || strcmp(name, "recvcount") == 0;
    char *end;
    long long v = in || out ? strtoll(value, &end, 10) : -1;
    if ((in || out) && (end == value || *end || v < 0))
        return 0;              /* not a count as RCCL prints it: absent */
    if (in)
        r->in_count = v;
    if (out)
        r->out_count = v;
    return 0;
}

/* Kineto's collective name of an RCCL call's, or NULL for calls that are
 * no collective (ncclGroupStart, ncclCommInitRank, ...). */
static const char *collective_of(const char *call)
{
    static const char *const names[][2] = {
        {"ncclAllReduce", "allreduce"},       {"ncclAllGather", "allgather"},
        {"ncclReduceScatter", "reduce_scatter"}, {"ncclBroadcast", "broadcast"},
        {"ncclReduce", "reduce"},             {"ncclAllToAll", "all_to_all"},
        {"ncclAllToAllv", "all_to_allv"},     {"ncclGather", "gather"},
        {"ncclScatter", "scatter"},           {"ncclSend", "send"},
        {"ncclRecv", "recv"},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(call, names[i][0]) == 0)
            return names[i][1];
    return NULL;
}

/* PyTorch's name of an RCCL dtype, written as ncclDataType_t's value or
 * its enumerator; other texts as written. */
static const char *dtype_of(const char *dtype)
{
    static const struct {
        const char *names[2], *torch;
    } types[] = {
        {{"ncclInt8", "ncclChar"}, "Char"},     {{"ncclUint8", NULL}, "Byte"},
        {{"ncclInt32", "ncclInt"}, "Int"},      {{"ncclUint32", NULL}, "UInt32"},
        {{"ncclInt64", NULL}, "Long"},          {{"ncclUint64", NULL}, "UInt64"},
        {{"ncclFloat16", "ncclHalf"}, "Half"},  {{"ncclFloat32", "ncclFloat"}, "Float"},
        {{"ncclFloat64", "ncclDouble"}, "Double"}, {{"ncclBfloat16", NULL}, "BFloat16"},
        {{"ncclFloat8e4m3", NULL}, "Float8_e4m3fn"}, {{"ncclFloat8e5m2", NULL}, "Float8_e5m2"},
    };
    char *end;
    long code = strtol(dtype, &end, 10);
    size_t n = sizeof types / sizeof *types;
    if (end != dtype && !*end)
        return code >= 0 && (size_t)code < n ? types[code].torch : dtype;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 2; k++)
            if (types[i].names[k] && strcmp(dtype, types[i].names[k]) == 0)
                return types[i].torch;
    return dtype;
}

/* A communicator and when the rank first called into it. */
typedef struct communicator {
    const char *handle;
    int64_t first;
} communicator;

static int compare_first_call(const void *a, const void *b)
{
    const communicator *x = a, *y = b;
    if (x->first != y->first)
        return (x->first > y->first) - (x->first < y->first);
    return strcmp(x->handle, y->handle);
}

/* The rank's communicators, in the order of their first calls (owned;
 * NULL with *n = 0 when none, or out of memory: *failed). */
static communicator *communicators(const rp_records *all, size_t *n, int *failed)
{
    communicator *c = NULL;
    size_t cap = 0;
    *n = 0;
    for (size_t i = 0; i < all->n[RP_RCCL]; i++) {
        const rp_record *r = &all->items[RP_RCCL][i];
        size_t k = 0;
        while (r->comm && k < *n && strcmp(c[k].handle, r->comm) != 0)
            k++;
        if (!r->comm)
            continue;
        if (k < *n) {
            c[k].first = r->start < c[k].first ? r->start : c[k].first;
            continue;
        }
        if (hta_grow_array((void **)&c, &cap, *n + 1, sizeof *c)) {
            *failed = 1;
            free(c);
            *n = 0;
            return NULL;
        }
        c[(*n)++] = (communicator){r->comm, r->start};
    }
    if (*n > 1)
        qsort(c, *n, sizeof *c, compare_first_call);
    return c;
}

/* The group name of communicator handle: "rccl" and its order. */
static void group_name(const communicator *c, size_t n, const char *handle, char *out,
                       size_t cap)
{
    size_t k = 0;
    while (k < n && strcmp(c[k].handle, handle) != 0)
        k++;
    snprintf(out, cap, "rccl%zu", k);
}

/* The metadata of RCCL call r, the trace's event `event`: 0, or -1 when
 * out of memory. */
static int add_collective(hta_comm_set *set, const rp_record *r, size_t event,
                          const communicator *c, size_t n_comms)
{
    const char *collective = collective_of(r->name);
    if (!collective || !r->comm)
        return 0;
    char group[32];
    group_name(c, n_comms, r->comm, group, sizeof group);
    const char *dtype = r->dtype ? dtype_of(r->dtype) : NULL;
    hta_comm_meta m = {.event = event, .external_id = -1, .in_nelems = r->in_count,
                       .out_nelems = r->out_count, .group_size = -1, .seq = -1, .peer = -1,
                       .collective = hta_strtab_intern(&set->strings, collective,
                                                       strlen(collective)),
                       .dtype = dtype ? hta_strtab_intern(&set->strings, dtype, strlen(dtype))
                                      : HTA_COMM_NO_STRING,
                       .pg_name = hta_strtab_intern(&set->strings, group, strlen(group)),
                       .pg_desc = HTA_COMM_NO_STRING, .pg_ranks = HTA_COMM_NO_STRING,
                       .in_split = HTA_COMM_NO_STRING, .out_split = HTA_COMM_NO_STRING};
    if (m.collective == UINT32_MAX || m.pg_name == UINT32_MAX ||
        (dtype && m.dtype == UINT32_MAX))
        return -1;
    return hta_comm_set_push(set, &m);
}

/* ---- the rank in the output path -------------------------------------- */

/* The placeholder at t (%name%, %env{VAR}%, $ENV{VAR}, %q{VAR}%), its
 * length in *len (0: none); 1 when it names the rank. */
static int placeholder(const char *t, size_t *len)
{
    static const char *const forms[][2] = {{"%env{", "}%"}, {"$ENV{", "}"}, {"%q{", "}%"}};
    if (strncmp(t, "%rank%", 6) == 0) {
        *len = 6;
        return 1;
    }
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        size_t open = strlen(forms[i][0]);
        const char *close = strncmp(t, forms[i][0], open) == 0 ? strstr(t + open, forms[i][1])
                                                               : NULL;
        if (!close)
            continue;
        *len = (size_t)(close - t) + strlen(forms[i][1]);
        char probe[160];
        int n = snprintf(probe, sizeof probe, "%.*s=0", (int)(close - t - (long)open), t + open);
        return n > 0 && (size_t)n < sizeof probe && hta_env_rank(probe) == 0;
    }
    size_t n = t[0] == '%' ? strspn(t + 1, "abcdefghijklmnopqrstuvwxyz_") : 0;
    *len = n && t[n + 1] == '%' ? n + 2 : 0;   /* %hostname%, %pid%, ... */
    return 0;
}

/* The length of the literal text at t, up to the next placeholder. */
static size_t literal_length(const char *t)
{
    size_t n = 0, len;
    while (t[n] && (placeholder(t + n, &len), len == 0))
        n++;
    return n;
}

int64_t hta_rocprof_rank_from_path(const char *template_path, const char *expanded)
{
    const char *t = template_path, *e = expanded;
    int64_t rank = -1;
    while (*t) {
        size_t len, lit;
        int is_rank = placeholder(t, &len);
        if (len == 0) {
            if (*t++ != *e++)
                return -1;
            continue;
        }
        t += len;
        lit = literal_length(t);
        /* The placeholder's value runs to the next literal text. */
        const char *stop = e + strlen(e);
        if (lit) {
            char next[256];
            snprintf(next, sizeof next, "%.*s", (int)(lit < 255 ? lit : 255), t);
            stop = strstr(e, next);
            if (!stop)
                return -1;
        }
        if (is_rank && stop > e) {
            char *end;
            long long v = strtoll(e, &end, 10);
            if (end == stop && v >= 0 && *e >= '0' && *e <= '9')
                rank = v;
        }
        e = stop;
    }
    return *e ? -1 : rank;
}

/* ---- emission --------------------------------------------------------- */

int hta_rp_several_agents(const rp_records *all, int64_t process)
{
    int64_t first = -1;
    for (int k = RP_KERNELS; k <= RP_COPIES; k++)
        for (size_t i = 0; i < all->n[k]; i++) {
            const rp_record *rec = &all->items[k][i];
            if (rec->process != process || rec->agent < 0)
                continue;
            if (first >= 0 && rec->agent != first)
                return 1;
            first = rec->agent;
        }
    return 0;
}

/* The process of agent `device`'s dispatches and copies, or -1. */
static int64_t process_of(const rp_records *all, int64_t device)
{
    for (int k = RP_KERNELS; k <= RP_COPIES; k++)
        for (size_t i = 0; i < all->n[k]; i++)
            if (all->items[k][i].agent == device)
                return all->items[k][i].process;
    return -1;
}

/* The rank's communicators, for the RCCL calls' metadata. */
typedef struct comm_list {
    communicator *items;
    size_t n;
} comm_list;

static int add_records(const rp_records *all, rp_kind kind, const char *cat, int is_gpu,
                       const hta_builder_options *how, int64_t process, const comm_list *comms,
                       hta_trace_builder *b)
{
    uint32_t cat_id = hta_trace_builder_category(b, cat);
    for (size_t i = 0; i < all->n[kind]; i++) {
        const rp_record *r = &all->items[kind][i];
        if (how->one_device && (is_gpu ? r->agent != how->device : r->process != process))
            continue;
        size_t len = strlen(r->name);
        uint32_t name = kind == RP_MARKERS ? hta_trace_builder_annotation(b, r->name, len)
                                           : hta_trace_builder_name(b, r->name, len);
        hta_record rec = {.ts_ns = r->start, .end_ns = r->end, .correlation = r->correlation,
                          .is_gpu = is_gpu, .stream = r->stream,
                          .has_copy = kind == RP_COPIES && r->bytes >= 0, .bytes = r->bytes};
        if (is_gpu && r->agent >= 0)
            hta_trace_builder_device(b, r->agent);
        size_t before = b->trace->n_events;
        if (hta_trace_builder_add(b, name, cat_id, &rec))
            return -1;
        if (comms && b->trace->n_events > before &&
            add_collective(&b->trace->comm, r, before, comms->items, comms->n))
            return -1;
    }
    return 0;
}

static int has_communication(const hta_trace *t)
{
    for (size_t i = 0; i < t->n_events; i++)
        if (hta_event_is_gpu(&t->events[i]) &&
            t->events[i].kernel_type == HTA_KT_COMMUNICATION)
            return 1;
    return 0;
}

/* What the trace lacks to match its collectives by their metadata. */
static void note_matching(const rp_records *all, int shared, hta_trace_builder *b,
                          hta_error *notes)
{
    if (!has_communication(b->trace))
        return;
    if (shared && all->n[RP_RCCL])
        hta_notes_add(notes, "the RCCL calls of a process that drove several GPUs are not "
                             "told apart by GPU: collectives are matched across ranks by their "
                             "order on each stream");
    else if (b->trace->comm.n == 0)
        hta_notes_add(notes, "no collective metadata: collectives are matched across ranks by "
                             "their order on each stream");
    else if (!all->n[RP_CALLS])
        hta_notes_add(notes, "no HIP runtime calls to join the RCCL calls' collective metadata "
                             "to their kernels: collectives are matched across ranks by their "
                             "order on each stream");
}

int hta_rocprof_emit(const rp_records *all, const char *path, const hta_builder_options *how,
                     hta_trace_builder *b, hta_error *notes, hta_error *err)
{
    int64_t process = how->one_device ? process_of(all, how->device) : -1;
    int failed = 0;
    comm_list comms = {0};
    /* A process that drove several GPUs: its communicators are not told
     * apart by GPU, so each GPU's would be named apart from its peers'. */
    int shared = how->one_device && hta_rp_several_agents(all, process);
    comms.items = shared ? NULL : communicators(all, &comms.n, &failed);
    hta_trace_builder_begin_gpu_table(b);
    int rc = failed ? -1 : add_records(all, RP_KERNELS, "kernel", 1, how, process, NULL, b);
    hta_trace_builder_begin_gpu_table(b);
    rc = rc ? rc : add_records(all, RP_COPIES, "gpu_memcpy", 1, how, process, NULL, b);
    rc = rc ? rc : hta_trace_builder_merge_gpu_tables(b);
    rc = rc ? rc : add_records(all, RP_CALLS, "cuda_runtime", 0, how, process, NULL, b);
    rc = rc ? rc : add_records(all, RP_RCCL, "cpu_op", 0, how, process, shared ? NULL : &comms, b);
    rc = rc ? rc : add_records(all, RP_MARKERS, "user_annotation", 0, how, process, NULL, b);
    free(comms.items);
    if (rc)
        return hta_fail(err, "%s: out of memory", path);
    if (!all->n[RP_CALLS])
        hta_notes_add(notes, "no HIP runtime calls (rocprofv3 --hip-runtime-trace): launch "
                             "statistics, queue length and launch pipelining are empty");
    note_matching(all, shared, b, notes);
    hta_trace_builder_device_note(b, notes);
    return 0;
}
