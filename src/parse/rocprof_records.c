/* rocprof_records.c: rocprofv3's records into the trace model (see
 * parse/rocprof_records.h). */
#include "parse/rocprof_records.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/classify.h"
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
    if (strcmp(domain, "RCCL_API") == 0)
        return RP_RCCL;
    return -1;
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

/* The process of agent `device`'s dispatches and copies, or -1. */
static int64_t process_of(const rp_records *all, int64_t device)
{
    for (int k = RP_KERNELS; k <= RP_COPIES; k++)
        for (size_t i = 0; i < all->n[k]; i++)
            if (all->items[k][i].agent == device)
                return all->items[k][i].process;
    return -1;
}

static int add_records(const rp_records *all, rp_kind kind, const char *cat, int is_gpu,
                       const hta_builder_options *how, int64_t process, hta_trace_builder *b)
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
        if (hta_trace_builder_add(b, name, cat_id, &rec))
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

int hta_rocprof_emit(const rp_records *all, const char *path, const hta_builder_options *how,
                     hta_trace_builder *b, hta_error *notes, hta_error *err)
{
    int64_t process = how->one_device ? process_of(all, how->device) : -1;
    hta_trace_builder_begin_gpu_table(b);
    int rc = add_records(all, RP_KERNELS, "kernel", 1, how, process, b);
    hta_trace_builder_begin_gpu_table(b);
    rc = rc ? rc : add_records(all, RP_COPIES, "gpu_memcpy", 1, how, process, b);
    rc = rc ? rc : hta_trace_builder_merge_gpu_tables(b);
    rc = rc ? rc : add_records(all, RP_CALLS, "cuda_runtime", 0, how, process, b);
    rc = rc ? rc : add_records(all, RP_RCCL, "cpu_op", 0, how, process, b);
    rc = rc ? rc : add_records(all, RP_MARKERS, "user_annotation", 0, how, process, b);
    if (rc)
        return hta_fail(err, "%s: out of memory", path);
    if (!all->n[RP_CALLS])
        hta_notes_add(notes, "no HIP runtime calls (rocprofv3 --hip-runtime-trace): launch "
                             "statistics, queue length and launch pipelining are empty");
    if (has_communication(b->trace))
        hta_notes_add(notes, "no collective metadata: collectives are matched across ranks by "
                             "their order on each stream");
    hta_trace_builder_device_note(b, notes);
    return 0;
}
