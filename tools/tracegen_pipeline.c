/*
 * tracegen_pipeline.c -- hta-tracegen's pipeline-parallel layout
 * (hta-tracegen --pp P --microbatches M -o DIR): a 1F1B schedule whose
 * stages exchange activations and gradients with NCCL send/recv, with the
 * metadata PyTorch writes, and every pair's and step's answer beside it.
 *
 * DESIGN
 *  World W = P x D (--dp D, default 1).  Rank s x D + d is stage s of
 *  pipeline d, process group "1" + d ("pipeline_parallel", members d,
 *  d + D, ..., d + (P - 1) D).  Each step, stage s runs 1F1B over M
 *  microbatches: w = min(P - s - 1, M) forwards, then M - w pairs of a
 *  forward and a backward, then w backwards.  Forward i on stage s > 0
 *  first receives activation i from s - 1; backward i on s < P - 1 first
 *  receives gradient i from s + 1; after forward i a stage sends the
 *  activation to s + 1, after backward i the gradient to s - 1.
 *
 *  Rendezvous: a transfer starts at the later of its two posts and lasts
 *  T (--transfer-us, else bytes / 50 GB/s); both kernels run from their
 *  own post to that start + T.  A receive is posted when its stage reaches
 *  it (the previous computation's end), the computation needing it starts
 *  when it ends; a send is posted when its data is ready, after the
 *  previous send to the same peer ended (one stream per peer and
 *  direction), and never holds up the sender's computation.  So the
 *  schedule is a dependency graph without cycles, solved by sweeping the
 *  ranks and channels until every time is known.  Forward F = 1.5 ms and
 *  backward B = 3 ms on every stage; --slow-stage S:X multiplies stage S's.
 *  Every rank's step n starts at the same S_n and its ProfilerStep ends at
 *  E_n, the latest end of any kernel of the step in the job (a step ends
 *  synchronised); S_{n+1} = E_n + 200 us.  With T = 0 each stage's bubble
 *  (the step's time without computation) is (P - 1)(F + B) of
 *  (M + P - 1)(F + B), 1F1B's closed form.
 *
 *  Each kernel is launched 10 us before it starts, the CPU following
 *  the GPU; with --cpu-ahead the CPU launches a step's kernels as soon as
 *  it can, in program order, and the GPU orders them by stream waits
 *  (cudaEventRecord, cudaStreamWaitEvent and the "Stream Wait Event"
 *  record) as PyTorch does: a recv waits for the computation before it, a
 *  computation for its recv, a send for its computation; each rank's step
 *  then ends with its CPU waiting for its GPU (cudaDeviceSynchronize and
 *  its Context Sync record), 10 us after its own last kernel.
 *
 *  --coalesced: in the steady state a send and the next item's receive
 *  from the same peer go out as one batch (Megatron's
 *  send_forward_recv_backward, send_backward_recv_forward), posted
 *  together, one kernel ending when both transfers have; each op is a
 *  record_param_comms with its metadata ended before the kernel's launch.
 *
 *  --a2a-sendrecv: each step ends with an all-to-all over the world, as
 *  NCCL runs one: a SendRecv kernel (the name its sends and receives have)
 *  without metadata, launched by c10d::alltoall_base_ around a
 *  record_param_comms and an nccl:all_to_all annotation, on its own
 *  stream.  Each rank posts it 20 us after its last kernel of the step
 *  ends; all its kernels end A2A = 120 us after the last post, and the
 *  step's end with them.  Its truth: per rank and step, the wait (last
 *  post - own post) and whether the rank posted last.
 *
 *  Metadata on the kernels (default) or on record_param_comms joined by
 *  External id (--meta-on-cpu): Collective name send / recv, In and Out
 *  msg nelems, dtype BFloat16, the group's name, description and ranks,
 *  Dst Rank on a send and Src Rank on a receive (global), and Seq, the
 *  rank's count of point-to-point ops in the group (unless --no-seq).
 *
 *  The truth (DIR.truth.json, beside DIR): every pair (group, src, dst,
 *  index k = the k-th send from src to dst) with both kernels' times,
 *  late sender, late receiver and transfer; per rank and step the step
 *  time, computation, bubble and point-to-point wait (and the part of it
 *  computation does not overlap); per rank the late-sender wait it caused;
 *  with --a2a-sendrecv every rank's all-to-all of every step.
 *  Times in integer nanoseconds.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tracegen_common.h"
#include "tracegen_pipeline.h"

#define PL_ORIGIN_NS INT64_C(1700000000000000000)
#define PL_FORWARD_NS INT64_C(1500000)
#define PL_BACKWARD_NS INT64_C(3000000)
#define PL_STEP_GAP_NS INT64_C(200000)
#define PL_LAUNCH_LEAD_NS INT64_C(10000)
#define PL_NELEMS INT64_C(4194304) /* BFloat16 activation of one microbatch */
#define PL_STREAM_COMPUTE 7
#define PL_UNKNOWN INT64_MIN
#define PL_BATCH_OP_IDS INT64_C(1000000000) /* External ids of batched ops: no kernel's */
#define PL_WAIT_IDS INT64_C(2000000000) /* correlations of stream waits: no kernel's */
#define PL_CALL_NS INT64_C(1000)
#define PL_SYNC_TAIL_NS INT64_C(10000) /* --cpu-ahead: the step's end after its last kernel's */
#define PL_A2A_POST_NS INT64_C(20000)
#define PL_A2A_NS INT64_C(120000)

/* Streams: send to the next stage, receive from the previous, send to the
 * previous, receive from the next; batches with the next, with the
 * previous. */
enum { ST_SEND_NEXT = 21, ST_RECV_PREV = 22, ST_SEND_PREV = 23, ST_RECV_NEXT = 24,
       ST_BATCH_NEXT = 25, ST_BATCH_PREV = 26, ST_A2A = 27 };

typedef enum { K_FORWARD, K_BACKWARD, K_SEND, K_RECV, K_A2A } kernel_kind;

/* A kernel of a rank, times filled in as the sweep finds them. */
typedef struct kernel {
    int64_t start, end;
    kernel_kind kind;
    int peer, stream, step;
    int64_t seq, wait;         /* wait: late sender on a receive, late receiver on a send,
                                  the last post's lateness at an all-to-all */
    size_t batch_with;         /* 1 + the other op's kernel in its batch, 0 alone */
} kernel;

typedef struct rank_kernels {
    kernel *k;
    size_t n, cap;
} rank_kernels;

/* One direction between two neighbouring stages of a pipeline, for one
 * step: per microbatch the send's readiness and post, the receive's post,
 * the transfer's end, and the kernels they belong to. */
typedef struct channel {
    int src, dst;
    int64_t *ready, *send_post, *recv_post, *end;
    size_t *send_kernel, *recv_kernel;
    int next;                  /* first microbatch not yet resolved */
} channel;

typedef struct item {
    kernel_kind kind;          /* K_FORWARD or K_BACKWARD */
    int mb;
} item;

typedef struct pipeline_gen {
    int pp, dp, world, microbatches, steps, no_seq, meta_on_cpu, slow_stage, coalesced, a2a;
    int cpu_ahead;             /* launches ahead, ordered on the GPU by stream waits */
    double slow_factor;
    int64_t transfer_ns;
    const char *dir;
    item **schedule;           /* [pp][2 M] */
    rank_kernels *kernels;     /* [world] */
    int64_t *seq;              /* [world] */
    int *pc;                   /* [world] next item this step */
    size_t *batch_send;        /* [world] 1 + the send kernel the next recv joins, 0 none */
    channel **batch_channel;   /* [world] that send's channel ... */
    int *batch_mb;             /* [world] ... and microbatch */
    int64_t *clock;            /* [world] end of the last computation */
    channel *channels;         /* [dp][2 (pp - 1)]: forward s -> s+1 at 2s, backward at 2s+1 */
    int64_t *step_start, *step_end; /* [steps] */
} pipeline_gen;

static int rank_of(const pipeline_gen *g, int stage, int d)
{
    return stage * g->dp + d;
}

static int stage_of(const pipeline_gen *g, int rank)
{
    return rank / g->dp;
}

static void build_schedule(pipeline_gen *g)
{
    g->schedule = tg_calloc((size_t)g->pp, sizeof *g->schedule);
    for (int s = 0; s < g->pp; s++) {
        item *it = g->schedule[s] = tg_calloc(2 * (size_t)g->microbatches, sizeof *it);
        int m = g->microbatches, w = g->pp - s - 1 < m ? g->pp - s - 1 : m, n = 0;
        for (int i = 0; i < w; i++)
            it[n++] = (item){K_FORWARD, i};
        for (int i = 0; i < m - w; i++) {
            it[n++] = (item){K_FORWARD, w + i};
            it[n++] = (item){K_BACKWARD, i};
        }
        for (int i = m - w; i < m; i++)
            it[n++] = (item){K_BACKWARD, i};
    }
}

static size_t add_kernel(pipeline_gen *g, int rank, kernel k)
{
    rank_kernels *r = &g->kernels[rank];
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 256;
        r->k = realloc(r->k, r->cap * sizeof *r->k);
        if (!r->k)
            tg_fail("out of memory", NULL);
    }
    r->k[r->n] = k;
    return r->n++;
}

/* The channel carrying microbatches from stage `from` to its neighbour
 * `to` in pipeline d. */
static channel *channel_of(pipeline_gen *g, int d, int from, int to)
{
    int edge = from < to ? from : to;
    return &g->channels[(size_t)d * 2 * (size_t)(g->pp - 1) + 2 * (size_t)edge + (from > to)];
}

static void reset_channels(pipeline_gen *g)
{
    size_t m = (size_t)g->microbatches;
    for (int d = 0; d < g->dp; d++)
        for (int s = 0; s + 1 < g->pp; s++)
            for (int dir = 0; dir < 2; dir++) {
                int from = dir ? s + 1 : s, to = dir ? s : s + 1;
                channel *c = channel_of(g, d, from, to);
                if (!c->ready) {
                    c->ready = tg_calloc(4 * m, sizeof *c->ready);
                    c->send_kernel = tg_calloc(2 * m, sizeof *c->send_kernel);
                    c->send_post = c->ready + m;
                    c->recv_post = c->ready + 2 * m;
                    c->end = c->ready + 3 * m;
                    c->recv_kernel = c->send_kernel + m;
                }
                c->src = rank_of(g, from, d);
                c->dst = rank_of(g, to, d);
                c->next = 0;
                for (size_t i = 0; i < 4 * m; i++)
                    c->ready[i] = PL_UNKNOWN;
            }
}

static int64_t compute_ns(const pipeline_gen *g, int stage, kernel_kind kind)
{
    int64_t base = kind == K_FORWARD ? PL_FORWARD_NS : PL_BACKWARD_NS;
    return stage == g->slow_stage ? (int64_t)((double)base * g->slow_factor) : base;
}

/* Runs rank's schedule as far as its receives allow; whether it moved. */
static bool advance_rank(pipeline_gen *g, int rank, int step)
{
    int s = stage_of(g, rank), d = rank % g->dp, n = 2 * g->microbatches;
    bool moved = false;
    while (g->pc[rank] < n) {
        item it = g->schedule[s][g->pc[rank]];
        int64_t start = g->clock[rank];
        bool forward = it.kind == K_FORWARD;
        int from = forward ? s - 1 : s + 1;
        if (from >= 0 && from < g->pp) {
            channel *in = channel_of(g, d, from, s);
            size_t with = g->batch_send[rank];
            if (in->recv_post[it.mb] == PL_UNKNOWN) {
                in->recv_post[it.mb] = start;
                int stream = with ? (forward ? ST_BATCH_PREV : ST_BATCH_NEXT)
                                  : (forward ? ST_RECV_PREV : ST_RECV_NEXT);
                in->recv_kernel[it.mb] = add_kernel(
                    g, rank, (kernel){start, PL_UNKNOWN, K_RECV, in->src, stream, step,
                                      g->seq[rank]++, 0, with});
                if (with)
                    g->kernels[rank].k[with - 1].batch_with = 1 + in->recv_kernel[it.mb];
                moved = true;
            }
            if (in->end[it.mb] == PL_UNKNOWN)
                return moved;
            start = in->end[it.mb];
            if (with) {
                /* A batch's kernel ends when both its transfers have. */
                const channel *out = g->batch_channel[rank];
                int64_t sent = out->end[g->batch_mb[rank]];
                if (sent == PL_UNKNOWN)
                    return moved;
                start = sent > start ? sent : start;
                g->kernels[rank].k[with - 1].end = start;
                g->kernels[rank].k[in->recv_kernel[it.mb]].end = start;
                g->batch_send[rank] = 0;
            }
        }
        int64_t end = start + compute_ns(g, s, it.kind);
        add_kernel(g, rank, (kernel){start, end, it.kind, -1, PL_STREAM_COMPUTE, step, -1, 0, 0});
        g->clock[rank] = end;
        int to = forward ? s + 1 : s - 1;
        if (to >= 0 && to < g->pp) {
            channel *out = channel_of(g, d, s, to);
            out->ready[it.mb] = end;
            /* --coalesced: a send and the next item's recv from the same
             * peer go out in one batch, posted together now (Megatron's
             * send_forward_recv_backward and send_backward_recv_forward). */
            int next = g->pc[rank] + 1 < n ? g->pc[rank] + 1 : -1;
            item following = next >= 0 ? g->schedule[s][next] : (item){K_FORWARD, -1};
            int source = following.kind == K_FORWARD ? s - 1 : s + 1;
            int batch = g->coalesced && next >= 0 && source == to;
            int stream = batch ? (forward ? ST_BATCH_NEXT : ST_BATCH_PREV)
                               : (forward ? ST_SEND_NEXT : ST_SEND_PREV);
            out->send_kernel[it.mb] = add_kernel(
                g, rank, (kernel){batch ? end : PL_UNKNOWN, PL_UNKNOWN, K_SEND, out->dst, stream,
                                  step, g->seq[rank]++, 0, 0});
            if (batch) {
                out->send_post[it.mb] = end;
                g->batch_send[rank] = 1 + out->send_kernel[it.mb];
                g->batch_channel[rank] = out;
                g->batch_mb[rank] = it.mb;
            }
        }
        g->pc[rank]++;
        moved = true;
    }
    return moved;
}

/* Posts the channel's sends and ends its transfers as far as known. */
static bool resolve_channel(pipeline_gen *g, channel *c)
{
    bool moved = false;
    while (c->next < g->microbatches) {
        int i = c->next;
        if (c->send_post[i] == PL_UNKNOWN) {
            if (c->ready[i] == PL_UNKNOWN || (i > 0 && c->end[i - 1] == PL_UNKNOWN))
                break;
            int64_t after = i > 0 ? c->end[i - 1] : PL_UNKNOWN;
            c->send_post[i] = c->ready[i] > after ? c->ready[i] : after;
            g->kernels[c->src].k[c->send_kernel[i]].start = c->send_post[i];
            moved = true;
        }
        if (c->recv_post[i] == PL_UNKNOWN)
            break;
        int64_t sp = c->send_post[i], rp = c->recv_post[i];
        c->end[i] = (sp > rp ? sp : rp) + g->transfer_ns;
        kernel *send = &g->kernels[c->src].k[c->send_kernel[i]];
        kernel *recv = &g->kernels[c->dst].k[c->recv_kernel[i]];
        send->end = recv->end = c->end[i];
        send->wait = rp > sp ? rp - sp : 0;
        recv->wait = sp > rp ? sp - rp : 0;
        c->next++;
        moved = true;
    }
    return moved;
}

/* The step's closing all-to-all (--a2a-sendrecv); returns its end. */
static int64_t all_to_all(pipeline_gen *g, int step)
{
    int64_t *post = tg_calloc((size_t)g->world, sizeof *post), last = INT64_MIN;
    for (int r = 0; r < g->world; r++) {
        int64_t own_end = g->step_start[step];
        for (size_t i = 0; i < g->kernels[r].n; i++)
            if (g->kernels[r].k[i].step == step && g->kernels[r].k[i].end > own_end)
                own_end = g->kernels[r].k[i].end;
        post[r] = own_end + PL_A2A_POST_NS;
        last = post[r] > last ? post[r] : last;
    }
    for (int r = 0; r < g->world; r++)
        add_kernel(g, r, (kernel){.start = post[r], .end = last + PL_A2A_NS, .kind = K_A2A,
                                  .peer = -1, .stream = ST_A2A, .step = step,
                                  .wait = last - post[r]});
    free(post);
    return last + PL_A2A_NS;
}

static void simulate_step(pipeline_gen *g, int step, int64_t start)
{
    reset_channels(g);
    for (int r = 0; r < g->world; r++) {
        g->pc[r] = 0;
        g->clock[r] = start;
    }
    size_t n_channels = (size_t)g->dp * 2 * (size_t)(g->pp - 1);
    for (;;) {
        bool moved = false, done = true;
        for (int r = 0; r < g->world; r++) {
            moved |= advance_rank(g, r, step);
            done &= g->pc[r] == 2 * g->microbatches;
        }
        for (size_t c = 0; c < n_channels; c++) {
            moved |= resolve_channel(g, &g->channels[c]);
            done &= g->channels[c].next == g->microbatches;
        }
        if (done)
            break;
        if (!moved)
            tg_fail("internal error: the pipeline schedule deadlocked", NULL);
    }
    int64_t end = start;
    for (int r = 0; r < g->world; r++)
        for (size_t i = 0; i < g->kernels[r].n; i++)
            if (g->kernels[r].k[i].step == step && g->kernels[r].k[i].end > end)
                end = g->kernels[r].k[i].end;
    g->step_start[step] = start;
    g->step_end[step] = end;
    if (g->a2a)
        g->step_end[step] = all_to_all(g, step);
}

/* ---- writing ---------------------------------------------------------- */

static void put_ns(FILE *f, int64_t ns)
{
    fprintf(f, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
}

static void group_ranks(const pipeline_gen *g, int d, char *out, size_t size)
{
    size_t len = (size_t)snprintf(out, size, "[");
    for (int s = 0; s < g->pp && len < size; s++)
        len += (size_t)snprintf(out + len, size - len, "%s%d", s ? ", " : "", rank_of(g, s, d));
    if (len < size)
        snprintf(out + len, size - len, "]");
}

static void put_metadata(FILE *f, const pipeline_gen *g, int rank, const kernel *k)
{
    int d = rank % g->dp;
    char ranks[65536];
    group_ranks(g, d, ranks, sizeof ranks);
    bool send = k->kind == K_SEND;
    fprintf(f, "\"Collective name\": \"%s\", \"In msg nelems\": %" PRId64
               ", \"Out msg nelems\": %" PRId64 ", \"Group size\": %d, \"dtype\": \"BFloat16\", "
               "\"In split size\": \"[]\", \"Out split size\": \"[]\", "
               "\"Process Group Name\": \"%d\", \"Process Group Description\": "
               "\"pipeline_parallel\", \"Process Group Ranks\": \"%s\", \"Rank\": %d, "
               "\"%s\": %d",
            send ? "send" : "recv", PL_NELEMS, PL_NELEMS, g->pp, 1 + d, ranks,
            stage_of(g, k->peer), send ? "Dst Rank" : "Src Rank", k->peer);
    if (!g->no_seq)
        fprintf(f, ", \"Seq\": %" PRId64, k->seq);
}

/* A record_param_comms op with k's metadata, from ts. */
static void put_comms_op(FILE *f, bool *first, const pipeline_gen *g, int rank, const kernel *k,
                         int64_t ts, int64_t id)
{
    tg_json_event(f, first, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": "
                            "\"record_param_comms\", \"pid\": 100, \"tid\": 100, \"ts\": ");
    put_ns(f, ts);
    fprintf(f, ", \"dur\": 0.500, \"args\": {\"External id\": %" PRId64 ", ", id);
    put_metadata(f, g, rank, k);
    fputs("}}", f);
}

/* A CPU op or annotation on the launching thread, without metadata. */
static void put_launcher(FILE *f, bool *first, const char *cat, const char *name, int64_t ts,
                         int64_t dur)
{
    tg_json_event(f, first, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", "
                            "\"pid\": 100, \"tid\": 100, \"ts\": ", cat, name);
    put_ns(f, ts);
    fputs(", \"dur\": ", f);
    put_ns(f, dur);
    fputs("}", f);
}

/* One kernel and its launch; a batch's two ops (--coalesced) are
 * recorded as PyTorch records a batch_isend_irecv: one record_param_comms
 * per op, both ended before the one kernel's launch, which carries no
 * metadata of its own. */
static void put_kernel(FILE *f, bool *first, const pipeline_gen *g, int rank, const kernel *k,
                       int64_t id, int64_t launch)
{
    bool comm = k->kind == K_SEND || k->kind == K_RECV, a2a = k->kind == K_A2A;
    const kernel *partner = k->batch_with ? &g->kernels[rank].k[k->batch_with - 1] : NULL;
    if (partner && partner < k)
        return; /* written with the batch's first op */
    if (k->kind == K_A2A) {
        put_launcher(f, first, "cpu_op", "c10d::alltoall_base_", launch - 3000, 5000);
        put_launcher(f, first, "cpu_op", "record_param_comms", launch - 2000, 3500);
        put_launcher(f, first, "user_annotation", "nccl:all_to_all", launch - 1000, 2200);
    } else if (partner) {
        put_comms_op(f, first, g, rank, k, launch - 3000, PL_BATCH_OP_IDS + 2 * id);
        put_comms_op(f, first, g, rank, partner, launch - 2000, PL_BATCH_OP_IDS + 2 * id + 1);
    } else if (comm && g->meta_on_cpu) {
        put_comms_op(f, first, g, rank, k, launch, id);
    }
    tg_json_event(f, first, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
                            "\"cudaLaunchKernel\", \"pid\": 100, \"tid\": 100, \"ts\": ");
    put_ns(f, launch);
    fprintf(f, ", \"dur\": 1.000, \"args\": {\"correlation\": %" PRId64 "}}", id);
    const char *name = !comm && !a2a ? (k->kind == K_FORWARD ? "ampere_bf16_s16816gemm_fwd"
                                                             : "ampere_bf16_s16816gemm_bwd")
                                     : "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
    tg_json_event(f, first, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, "
                            "\"tid\": %d, \"ts\": ", name, k->stream);
    put_ns(f, k->start);
    fputs(", \"dur\": ", f);
    put_ns(f, k->end - k->start);
    fprintf(f, ", \"args\": {\"stream\": %d, \"correlation\": %" PRId64, k->stream, id);
    if (comm) {
        fprintf(f, ", \"External id\": %" PRId64, id);
        if (!g->meta_on_cpu && !partner) {
            fputs(", ", f);
            put_metadata(f, g, rank, k);
        }
    }
    fputs("}}", f);
}

/* A CPU call of the rank's thread. */
static void put_call(FILE *f, bool *first, const char *name, int64_t ts, int64_t correlation)
{
    tg_json_event(f, first, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", "
                            "\"pid\": 100, \"tid\": 100, \"ts\": ", name);
    put_ns(f, ts);
    fprintf(f, ", \"dur\": 1.000, \"args\": {\"correlation\": %" PRId64 "}}", correlation);
}

/* Stream to waiting for the last kernel launched on from, as PyTorch asks
 * for it at ts: cudaEventRecord on from, cudaStreamWaitEvent on to and
 * the GPU's "Stream Wait Event" record (Kineto's cuda_sync shape); the
 * time the calls end. */
static int64_t put_stream_wait(FILE *f, bool *first, int from, int to, int64_t ts, int64_t *id)
{
    int64_t record = (*id)++, wait = (*id)++;
    put_call(f, first, "cudaEventRecord", ts, record);
    put_call(f, first, "cudaStreamWaitEvent", ts + PL_CALL_NS, wait);
    tg_json_event(f, first, "{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": "
                            "\"Stream Wait Event\", \"pid\": 0, \"tid\": %d, \"ts\": ", to);
    put_ns(f, ts + PL_CALL_NS);
    fprintf(f, ", \"dur\": 1.000, \"args\": {\"cuda_sync_kind\": \"Stream Wait Event\", "
               "\"wait_on_stream\": %d, \"wait_on_cuda_event_record_corr_id\": %" PRId64
               ", \"stream\": %d, \"correlation\": %" PRId64 ", \"device\": 0, "
               "\"context\": 1}}",
            from, record, to, wait);
    return ts + 2 * PL_CALL_NS;
}

/* With --cpu-ahead, the stream kernel i waits for before it starts: a
 * recv for the computation before it, a computation for its recv, a send
 * for its computation (the kernel before it of the same step); -1 none. */
static int awaited_stream(const rank_kernels *r, size_t i)
{
    const kernel *k = &r->k[i], *prev = i > 0 ? &r->k[i - 1] : NULL;
    bool compute = k->kind == K_FORWARD || k->kind == K_BACKWARD;
    if (!prev || prev->step != k->step)
        return -1;
    if (k->kind == K_RECV) {
        for (size_t j = i; j-- > 0 && r->k[j].step == k->step;)
            if (r->k[j].kind == K_FORWARD || r->k[j].kind == K_BACKWARD)
                return r->k[j].stream;
        return -1;
    }
    if (compute)
        return prev->kind == K_RECV ? prev->stream : -1;
    return prev->stream;
}

/* The end of the rank's step n: the job's (every rank's ProfilerStep
 * ends with the step's last kernel), or with --cpu-ahead when the rank's
 * CPU is done waiting for its own last kernel. */
static int64_t rank_step_end(const pipeline_gen *g, int rank, int n)
{
    if (!g->cpu_ahead)
        return g->step_end[n];
    int64_t end = g->step_start[n];
    const rank_kernels *r = &g->kernels[rank];
    for (size_t i = 0; i < r->n; i++)
        if (r->k[i].step == n && r->k[i].end > end)
            end = r->k[i].end;
    return end + PL_SYNC_TAIL_NS;
}

/* The CPU waiting for the GPU at the end of the rank's step n from cpu
 * (--cpu-ahead): cudaDeviceSynchronize and its Context Sync record. */
static void put_step_sync(FILE *f, bool *first, const pipeline_gen *g, int rank, int n,
                          int64_t cpu, int64_t *id)
{
    int64_t until = rank_step_end(g, rank, n) - PL_SYNC_TAIL_NS / 2, corr = (*id)++;
    tg_json_event(f, first, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
                            "\"cudaDeviceSynchronize\", \"pid\": 100, \"tid\": 100, \"ts\": ");
    put_ns(f, cpu);
    fputs(", \"dur\": ", f);
    put_ns(f, until - cpu);
    fprintf(f, ", \"args\": {\"correlation\": %" PRId64 "}}", corr);
    tg_json_event(f, first, "{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Context Sync\", "
                            "\"pid\": 0, \"tid\": -1, \"ts\": ");
    put_ns(f, cpu + PL_CALL_NS);
    fputs(", \"dur\": ", f);
    put_ns(f, until - cpu - PL_CALL_NS);
    fprintf(f, ", \"args\": {\"cuda_sync_kind\": \"Context Sync\", \"stream\": -1, "
               "\"correlation\": %" PRId64 ", \"device\": 0, \"context\": 1}}", corr);
}

/* The rank's kernels, each launched 10 us before it starts (the CPU
 * following the GPU), or with --cpu-ahead as soon as the CPU is done
 * with the calls before, after the stream waits its dependencies take,
 * each step ending with the CPU waiting for the GPU. */
static void put_kernels(FILE *f, bool *first, const pipeline_gen *g, int rank)
{
    const rank_kernels *r = &g->kernels[rank];
    int64_t cpu = 0, wait_id = PL_WAIT_IDS;
    for (size_t i = 0; i < r->n; i++) {
        const kernel *k = &r->k[i];
        int64_t launch = k->start - PL_LAUNCH_LEAD_NS;
        if (g->cpu_ahead) {
            if (i > 0 && r->k[i - 1].step != k->step)
                put_step_sync(f, first, g, rank, r->k[i - 1].step, cpu, &wait_id);
            if (i == 0 || r->k[i - 1].step != k->step)
                cpu = g->step_start[k->step];
            int from = awaited_stream(r, i);
            if (from >= 0)
                cpu = put_stream_wait(f, first, from, k->stream, cpu, &wait_id);
            launch = cpu < k->start ? cpu : k->start;
            cpu = launch + 2 * PL_CALL_NS;
        }
        if (launch < g->step_start[k->step])
            launch = g->step_start[k->step];
        put_kernel(f, first, g, rank, k, 1000 + (int64_t)i, launch);
    }
    if (g->cpu_ahead && r->n)
        put_step_sync(f, first, g, rank, r->k[r->n - 1].step, cpu, &wait_id);
}

static void write_rank(const pipeline_gen *g, int rank)
{
    char path[4096], ranks[65536];
    snprintf(path, sizeof path, "%s/rank-%d.json", g->dir, rank);
    FILE *f = fopen(path, "w");
    if (!f)
        tg_fail("cannot write ", path);
    fprintf(f, "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, "
               "\"world_size\": %d, \"pg_count\": %d, \"pg_config\": [",
            rank, g->world, g->dp);
    for (int d = 0; d < g->dp; d++) {
        group_ranks(g, d, ranks, sizeof ranks);
        fprintf(f, "%s{\"pg_name\": \"%d\", \"pg_desc\": \"pipeline_parallel\", "
                   "\"backend_config\": \"cuda:nccl\", \"ranks\": %s}",
                d ? ", " : "", 1 + d, ranks);
    }
    fputs("]}, \"traceEvents\": [", f);
    bool first = true;
    for (int n = 0; n < g->steps; n++) {
        tg_json_event(f, &first, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": "
                                 "\"ProfilerStep#%d\", \"pid\": 100, \"tid\": 100, \"ts\": ", n);
        put_ns(f, g->step_start[n]);
        fputs(", \"dur\": ", f);
        put_ns(f, rank_step_end(g, rank, n) - g->step_start[n]);
        fputs("}", f);
    }
    put_kernels(f, &first, g, rank);
    fputs("\n]}\n", f);
    if (fclose(f))
        tg_fail("cannot write ", path);
}

/* ---- the truth -------------------------------------------------------- */

/* A rank's computation kernels in start order (they never overlap). */
typedef struct spans {
    int64_t *start, *end;
    size_t n;
} spans;

static spans compute_spans(const rank_kernels *r)
{
    spans c = {tg_calloc(r->n, sizeof *c.start), tg_calloc(r->n, sizeof *c.end), 0};
    for (size_t i = 0; i < r->n; i++)
        if (r->k[i].kind == K_FORWARD || r->k[i].kind == K_BACKWARD) {
            c.start[c.n] = r->k[i].start;
            c.end[c.n++] = r->k[i].end;
        }
    return c;
}

/* How long computation runs during [start, end). */
static int64_t compute_overlap(const spans *c, int64_t start, int64_t end)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->end[mid] <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t total = 0;
    for (size_t i = lo; i < c->n && c->start[i] < end; i++) {
        int64_t a = c->start[i] > start ? c->start[i] : start;
        int64_t b = c->end[i] < end ? c->end[i] : end;
        total += b - a;
    }
    return total;
}

static void write_pairs(const pipeline_gen *g, FILE *t, int64_t *caused)
{
    /* The k-th send from src to dst with the k-th receive at dst from
     * src: both are the rank's kernels of that peer in start order. */
    bool first = true;
    for (int src = 0; src < g->world; src++) {
        const rank_kernels *rs = &g->kernels[src];
        for (int dir = -1; dir <= 1; dir += 2) {
            int dst_stage = stage_of(g, src) + dir;
            if (dst_stage < 0 || dst_stage >= g->pp)
                continue;
            int dst = rank_of(g, dst_stage, src % g->dp);
            const rank_kernels *rd = &g->kernels[dst];
            size_t j = 0;
            int64_t index = 0;
            for (size_t i = 0; i < rs->n; i++) {
                const kernel *s = &rs->k[i];
                if (s->kind != K_SEND || s->peer != dst)
                    continue;
                while (rd->k[j].kind != K_RECV || rd->k[j].peer != src)
                    j++;
                const kernel *r = &rd->k[j++];
                int64_t t0 = s->start > r->start ? s->start : r->start;
                int64_t done = s->end < r->end ? s->end : r->end;
                caused[src] += r->wait;
                tg_json_event(t, &first,
                              "{\"group\": \"%d\", \"src\": %d, \"dst\": %d, \"index\": %" PRId64
                              ", \"bytes\": %" PRId64 ", \"send_start_ns\": %" PRId64
                              ", \"send_end_ns\": %" PRId64 ", \"recv_start_ns\": %" PRId64
                              ", \"recv_end_ns\": %" PRId64 ", \"late_sender_ns\": %" PRId64
                              ", \"late_receiver_ns\": %" PRId64 ", \"transfer_ns\": %" PRId64
                              ", \"step\": %d}",
                              1 + src % g->dp, src, dst, index++, 2 * PL_NELEMS, s->start, s->end,
                              r->start, r->end, r->wait, s->wait, done - t0, s->step);
            }
        }
    }
}

typedef struct step_sums {
    int64_t compute, wait, exposed, receives;
} step_sums;

static void write_steps(const pipeline_gen *g, FILE *t)
{
    bool first = true;
    step_sums *sum = tg_calloc((size_t)g->steps, sizeof *sum);
    for (int rank = 0; rank < g->world; rank++) {
        const rank_kernels *r = &g->kernels[rank];
        spans c = compute_spans(r);
        memset(sum, 0, (size_t)g->steps * sizeof *sum);
        for (size_t i = 0; i < r->n; i++) {
            const kernel *k = &r->k[i];
            step_sums *s = &sum[k->step];
            if (k->kind == K_FORWARD || k->kind == K_BACKWARD) {
                s->compute += k->end - k->start;
                continue;
            }
            if (k->kind == K_A2A)
                continue;
            int64_t covered = compute_overlap(&c, k->start, k->end);
            s->wait += k->wait;
            s->exposed += k->wait > covered ? k->wait - covered : 0;
            s->receives += k->kind == K_RECV;
        }
        for (int n = 0; n < g->steps; n++) {
            int64_t time = rank_step_end(g, rank, n) - g->step_start[n];
            tg_json_event(t, &first,
                          "{\"rank\": %d, \"stage\": %d, \"step\": %d, \"step_time_ns\": %" PRId64
                          ", \"compute_ns\": %" PRId64 ", \"bubble_ns\": %" PRId64
                          ", \"p2p_wait_ns\": %" PRId64 ", \"exposed_p2p_wait_ns\": %" PRId64
                          ", \"receives\": %" PRId64 "}",
                          rank, stage_of(g, rank), n, time, sum[n].compute, time - sum[n].compute,
                          sum[n].wait, sum[n].exposed, sum[n].receives);
        }
        free(c.start);
        free(c.end);
    }
    free(sum);
}

static void write_all_to_alls(const pipeline_gen *g, FILE *t)
{
    bool first = true;
    for (int rank = 0; rank < g->world; rank++)
        for (size_t i = 0; i < g->kernels[rank].n; i++) {
            const kernel *k = &g->kernels[rank].k[i];
            if (k->kind == K_A2A)
                tg_json_event(t, &first,
                              "{\"rank\": %d, \"step\": %d, \"start_ns\": %" PRId64
                              ", \"end_ns\": %" PRId64 ", \"wait_ns\": %" PRId64
                              ", \"last\": %d}",
                              rank, k->step, k->start, k->end, k->wait, k->wait == 0);
        }
}

static void write_truth(const pipeline_gen *g)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.truth.json", g->dir);
    FILE *t = fopen(path, "w");
    if (!t)
        tg_fail("cannot write ", path);
    int64_t *caused = tg_calloc((size_t)g->world, sizeof *caused);
    fprintf(t, "{\"pp\": %d, \"dp\": %d, \"microbatches\": %d, \"transfer_ns\": %" PRId64
               ", \"forward_ns\": %" PRId64 ", \"backward_ns\": %" PRId64
               ", \"closed_form_bubble_fraction\": %.17g,\n\"pairs\": [",
            g->pp, g->dp, g->microbatches, g->transfer_ns, PL_FORWARD_NS, PL_BACKWARD_NS,
            (double)(g->pp - 1) / (double)(g->microbatches + g->pp - 1));
    write_pairs(g, t, caused);
    fputs("\n],\n\"steps\": [", t);
    write_steps(g, t);
    fputs("\n],\n\"all_to_alls\": [", t);
    write_all_to_alls(g, t);
    fputs("\n],\n\"ranks\": [", t);
    bool first = true;
    for (int r = 0; r < g->world; r++)
        tg_json_event(t, &first, "{\"rank\": %d, \"stage\": %d, \"caused_late_sender_ns\": %" PRId64
                                 "}", r, stage_of(g, r), caused[r]);
    fputs("\n]}\n", t);
    free(caused);
    if (fclose(t))
        tg_fail("cannot write ", path);
}

/* ---- options ---------------------------------------------------------- */

static void usage(void)
{
    fputs("usage: hta-tracegen --pp P -o DIR [--dp D] [--microbatches M] [--steps N]\n"
          "                    [--slow-stage STAGE:FACTOR] [--transfer-us T] [--no-seq]\n"
          "                    [--meta-on-cpu] [--coalesced] [--cpu-ahead] [--a2a-sendrecv]\n"
          "Pipeline-parallel job: P x D ranks, D pipelines of P stages running 1F1B over M\n"
          "microbatches with NCCL send/recv (each step closed by an all-to-all run as a\n"
          "SendRecv kernel with --a2a-sendrecv), DIR.truth.json beside DIR.\n",
          stderr);
    exit(2);
}

static void parse(pipeline_gen *g, int argc, char **argv)
{
    *g = (pipeline_gen){.dp = 1, .microbatches = 4, .steps = 2, .slow_stage = -1,
                        .slow_factor = 1.0, .transfer_ns = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-seq"))
            g->no_seq = 1;
        else if (!strcmp(a, "--meta-on-cpu"))
            g->meta_on_cpu = 1;
        else if (!strcmp(a, "--coalesced"))
            g->coalesced = 1;
        else if (!strcmp(a, "--cpu-ahead"))
            g->cpu_ahead = 1;
        else if (!strcmp(a, "--a2a-sendrecv"))
            g->a2a = 1;
        else if (!v)
            usage();
        else if (!strcmp(a, "--pp"))
            g->pp = (int)tg_json_count(a, v, 4096), i++;
        else if (!strcmp(a, "--dp"))
            g->dp = (int)tg_json_count(a, v, 4096), i++;
        else if (!strcmp(a, "--microbatches"))
            g->microbatches = (int)tg_json_count(a, v, 100000), i++;
        else if (!strcmp(a, "--steps"))
            g->steps = (int)tg_json_count(a, v, 1000), i++;
        else if (!strcmp(a, "-o"))
            g->dir = v, i++;
        else if (!strcmp(a, "--transfer-us")) {
            char *end;
            double us = strtod(v, &end);
            if (*end || !(us >= 0 && us < 1e9))
                usage();
            g->transfer_ns = (int64_t)(us * 1000.0 + 0.5);
            i++;
        } else if (!strcmp(a, "--slow-stage")) {
            if (!tg_index_factor(v, &g->slow_stage, &g->slow_factor))
                usage();
            i++;
        } else
            usage();
    }
    if (g->pp < 2 || !g->dir || g->slow_stage >= g->pp || (int64_t)g->pp * g->dp > 65536 ||
        (g->cpu_ahead && g->coalesced))
        usage();
    g->world = g->pp * g->dp;
    if (g->transfer_ns < 0)
        g->transfer_ns = 2 * PL_NELEMS / 50; /* 50 GB/s */
}

int tracegen_pipeline_main(int argc, char **argv)
{
    pipeline_gen g;
    parse(&g, argc, argv);
    if (mkdir(g.dir, 0777) && errno != EEXIST)
        tg_fail("cannot create ", g.dir);
    build_schedule(&g);
    size_t w = (size_t)g.world;
    g.kernels = tg_calloc(w, sizeof *g.kernels);
    g.seq = tg_calloc(w, sizeof *g.seq);
    g.pc = tg_calloc(w, sizeof *g.pc);
    g.batch_send = tg_calloc(w, sizeof *g.batch_send);
    g.batch_channel = tg_calloc(w, sizeof *g.batch_channel);
    g.batch_mb = tg_calloc(w, sizeof *g.batch_mb);
    g.clock = tg_calloc(w, sizeof *g.clock);
    g.channels = tg_calloc((size_t)g.dp * 2 * (size_t)(g.pp - 1), sizeof *g.channels);
    g.step_start = tg_calloc((size_t)g.steps, sizeof *g.step_start);
    g.step_end = tg_calloc((size_t)g.steps, sizeof *g.step_end);
    int64_t start = PL_ORIGIN_NS;
    for (int n = 0; n < g.steps; n++) {
        simulate_step(&g, n, start);
        start = g.step_end[n] + PL_STEP_GAP_NS;
    }
    for (int r = 0; r < g.world; r++)
        write_rank(&g, r);
    write_truth(&g);
    for (int r = 0; r < g.world; r++)
        free(g.kernels[r].k);
    for (size_t c = 0; c < (size_t)g.dp * 2 * (size_t)(g.pp - 1); c++) {
        free(g.channels[c].ready);
        free(g.channels[c].send_kernel);
    }
    for (int s = 0; s < g.pp; s++)
        free(g.schedule[s]);
    free(g.schedule);
    free(g.kernels);
    free(g.seq);
    free(g.pc);
    free(g.batch_send);
    free(g.batch_channel);
    free(g.batch_mb);
    free(g.clock);
    free(g.channels);
    free(g.step_start);
    free(g.step_end);
    return 0;
}
