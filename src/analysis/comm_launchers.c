/* comm_launchers.c: which op launched a communication kernel (see
 * analysis/comm_launchers.h).
 *
 * One pass over the rank's CPU events keeps those whose name says they
 * run communication (a few per collective), each as a label: its kind, its
 * time range and a key, the launching thread for ops and annotations on
 * the CPU, the stream for annotations drawn on the GPU.  Names are
 * classified once per distinct name; a record_param_comms is classified by
 * the collective its metadata names.  Sorted by (key, start, longer
 * first), the innermost label holding a time is the latest-starting one
 * that still runs then.  Nothing is built for a rank whose communication
 * kernels all carry metadata. */
#include "analysis/comm_launchers.h"

#include "model/cpu_context.h"

#include <stdlib.h>
#include <string.h>

typedef enum label_kind {
    LABEL_NONE,
    LABEL_COLLECTIVE,
    LABEL_P2P,
    LABEL_COALESCED,           /* a batch: point-to-point or collectives */
    LABEL_UNCLASSIFIED = 0xff, /* the name cache's "not looked at yet" */
} label_kind;

typedef struct hta_comm_label {
    int64_t key;               /* thread >= 0; an annotation's stream: -1 - stream */
    int64_t start, end;
    label_kind kind;
} hta_comm_label;

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int is_one_of(const char *s, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return 1;
    return 0;
}

/* PyTorch's ops and record_function annotations, and NCCL's NVTX ranges. */
static label_kind kind_of_name(const char *s)
{
    static const char *const p2p[] = {"nccl:send", "nccl:recv", "c10d::send", "c10d::recv_",
                                      "c10d::recv_any_source_", "ncclSend", "ncclRecv"};
    static const char *const nccl_collectives[] = {"ncclAllReduce", "ncclAllGather",
                                                   "ncclReduceScatter", "ncclBroadcast",
                                                   "ncclReduce", "ncclAllToAll"};
    if (is_one_of(s, p2p, sizeof p2p / sizeof *p2p) || strstr(s, "batch_isend_irecv"))
        return LABEL_P2P;
    if (starts_with(s, "nccl:coalesced"))
        return LABEL_COALESCED;
    if (starts_with(s, "c10d::") || starts_with(s, "nccl:") ||
        is_one_of(s, nccl_collectives, sizeof nccl_collectives / sizeof *nccl_collectives))
        return LABEL_COLLECTIVE;
    return LABEL_NONE;
}

/* A record_param_comms op by the collective its metadata names. */
static label_kind kind_of_collective(const char *collective)
{
    static const char *const p2p[] = {"send", "recv", "isend", "irecv"};
    if (!*collective)
        return LABEL_NONE;
    if (is_one_of(collective, p2p, sizeof p2p / sizeof *p2p))
        return LABEL_P2P;
    return strcmp(collective, "coalesced") == 0 ? LABEL_COALESCED : LABEL_COLLECTIVE;
}

static label_kind kind_of_event(const hta_trace *t, const hta_event *e, uint8_t *by_name)
{
    if (by_name[e->name] == LABEL_UNCLASSIFIED) {
        const char *name = hta_event_name(t, e);
        by_name[e->name] = strcmp(name, "record_param_comms") == 0 ? LABEL_NONE
                                                                   : kind_of_name(name);
    }
    if (by_name[e->name] != LABEL_NONE)
        return (label_kind)by_name[e->name];
    const hta_comm_meta *m = hta_comm_set_find(&t->comm, (size_t)(e - t->events));
    return m ? kind_of_collective(hta_comm_string(&t->comm, m->collective)) : LABEL_NONE;
}

static int compare_labels(const void *a, const void *b)
{
    const hta_comm_label *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (y->end > x->end) - (y->end < x->end);
}

/* Whether some communication kernel of the view carries no metadata of
 * its own: only then can its launch matter. */
static int needs_labels(const hta_rank_view *v)
{
    const hta_trace *t = v->trace;
    for (size_t c = 0; c < v->n_comm; c++) {
        const hta_event *e = v->gpu[v->comm_at[c]];
        const hta_comm_meta *m = hta_comm_set_find(&t->comm, (size_t)(e - t->events));
        if (!m || !hta_comm_has_metadata(m))
            return 1;
    }
    return 0;
}

static int64_t key_of(const hta_comm_launchers *l, const hta_event *e, uint32_t gpu_annotation)
{
    const hta_cpu_context *c = hta_cpu_context_of(l->contexts, e);
    if (e->cat != gpu_annotation)
        return (int64_t)c->thread;
    return c->tid >= 0 ? -1 - c->tid : INT64_MIN;
}

static int collect_labels(hta_comm_launchers *l, uint8_t *by_name)
{
    const hta_trace *t = l->view->trace;
    uint32_t gpu_annotation = hta_strtab_find(&t->categories, "gpu_user_annotation", 19);
    size_t cap = 0;
    for (size_t i = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        label_kind kind = hta_event_is_gpu(e) ? LABEL_NONE : kind_of_event(t, e, by_name);
        if (kind == LABEL_NONE)
            continue;
        if (l->n == cap) {
            cap = cap ? 2 * cap : 64;
            hta_comm_label *grown = realloc(l->labels, cap * sizeof *grown);
            if (!grown)
                return -1;
            l->labels = grown;
        }
        l->labels[l->n++] = (hta_comm_label){key_of(l, e, gpu_annotation), e->ts_ns,
                                             hta_event_end(e), kind};
    }
    if (l->n) /* labels is NULL without any; qsort wants non-NULL */
        qsort(l->labels, l->n, sizeof *l->labels, compare_labels);
    return 0;
}

int hta_comm_launchers_build(hta_comm_launchers *l, const hta_rank_view *view)
{
    *l = (hta_comm_launchers){.view = view};
    if (!needs_labels(view))
        return 0;
    const hta_trace *t = view->trace;
    l->contexts = malloc(sizeof *l->contexts);
    uint8_t *by_name = malloc(t->names.count ? t->names.count : 1);
    int rc = l->contexts && by_name && hta_cpu_contexts_build(l->contexts, t) == 0 ? 0 : -1;
    if (rc && l->contexts) {
        free(l->contexts);
        l->contexts = NULL;
    }
    if (rc == 0) {
        memset(by_name, LABEL_UNCLASSIFIED, t->names.count);
        rc = collect_labels(l, by_name);
    }
    free(by_name);
    if (rc)
        hta_comm_launchers_free(l);
    return rc;
}

void hta_comm_launchers_free(hta_comm_launchers *l)
{
    if (l->contexts) {
        hta_cpu_contexts_free(l->contexts);
        free(l->contexts);
    }
    free(l->labels);
    *l = (hta_comm_launchers){0};
}

/* How far back from the last label starting at or before a time the
 * search for one holding it goes: labels that ended in between are a
 * previous collective's few. */
#define LABEL_LOOKBACK 8

/* The innermost label of key running at ts, or NULL. */
static const hta_comm_label *label_at(const hta_comm_launchers *l, int64_t key, int64_t ts)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const hta_comm_label *m = &l->labels[mid];
        if (m->key < key || (m->key == key && m->start <= ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = 0; k < LABEL_LOOKBACK && lo > k; k++) {
        const hta_comm_label *c = &l->labels[lo - 1 - k];
        if (c->key != key)
            break;
        if (c->end >= ts)
            return c;
    }
    return NULL;
}

/* A coalesced batch runs its sends and recvs as SendRecv kernels, its
 * collectives as their own: here, beside the launch, the name may tell. */
static hta_comm_launch launch_of_batch(const hta_trace *t, const hta_event *gpu)
{
    const char *name = hta_event_name(t, gpu);
    return strstr(name, "SendRecv") || strstr(name, "Kernel_Send") || strstr(name, "Kernel_Recv")
               ? HTA_COMM_LAUNCH_P2P
               : HTA_COMM_LAUNCH_COLLECTIVE;
}

static hta_comm_launch launch_of_label(const hta_trace *t, const hta_event *gpu,
                                       const hta_comm_label *label)
{
    switch (label->kind) {
    case LABEL_COLLECTIVE: return HTA_COMM_LAUNCH_COLLECTIVE;
    case LABEL_P2P: return HTA_COMM_LAUNCH_P2P;
    default: return launch_of_batch(t, gpu);
    }
}

hta_comm_launch hta_comm_launch_of(const hta_comm_launchers *l, const hta_event *gpu)
{
    if (!l->n)
        return HTA_COMM_LAUNCH_UNKNOWN;
    const hta_trace *t = l->view->trace;
    const hta_event *launch = hta_rank_view_launch(l->view, gpu);
    const hta_comm_label *label =
        launch ? label_at(l, (int64_t)hta_cpu_context_of(l->contexts, launch)->thread,
                          launch->ts_ns)
               : NULL;
    if (!label)
        label = label_at(l, -1 - (int64_t)gpu->stream, gpu->ts_ns);
    return label ? launch_of_label(t, gpu, label) : HTA_COMM_LAUNCH_UNKNOWN;
}
