/*
 * tracegen_groups.c -- hta-tracegen's tensor x data parallel layout
 * (hta-tracegen --tp T --dp D): ranks in several process groups, with the
 * collective metadata PyTorch writes, and the answer written beside them.
 *
 * DESIGN
 *  World W = T x D.  Rank r is position r % T of tensor-parallel group
 *  r / T (ranks r - r % T .. + T - 1, process group name "1" + r / T,
 *  description "tensor_parallel") and position r / T of data-parallel group
 *  r % T (ranks r % T, r % T + T, ..., name "1" + D + r % T, description
 *  "data_parallel").  Each rank runs each group's kernels on its own stream
 *  number (they differ between ranks, as in real jobs).
 *
 *  One step: for each of L layers, a compute kernel then an all-reduce of
 *  the layer's activations in the TP group (BFloat16); then an all-gather
 *  in the TP group (input n, output n x T), and in the DP group a
 *  reduce-scatter (input m x D, output m) and an all-reduce of a gradient
 *  bucket (Float), each preceded by a compute kernel.  Op i of the program
 *  is the same on every rank, only its group differs, so every group's
 *  i-th instance depends on its members' clocks alone and the job is
 *  simulated op by op with no deadlock possible:
 *    arrival a_r = clock_r + compute_r(i)       (kernel start)
 *    end         = max over members of a + transfer(i)
 *  every member's kernel runs from its arrival to the common end, and the
 *  rank's clock moves to end + gap.  compute_r(i) = base(i) x factor_r +
 *  jitter(r, i) + r ns, so no two arrivals tie.  --slow R:F multiplies rank
 *  R's compute before the TP collectives only: R arrives last in its TP
 *  group, while at the DP collectives its whole TP group is late together.
 *  --slow-cause says why R is late: compute (its kernels take F x as long;
 *  the default), launch (its kernels take as long as everyone's, but each
 *  is launched late, the GPU idle for the compute time it would have lost),
 *  data (each step's data loading, a CPU op of 2 ms before the first
 *  kernel on every rank, takes F x 2 ms on R).  Every kernel has its
 *  cudaLaunchKernel: a compute kernel's 50 us before the previous compute
 *  kernel ends (the CPU runs ahead), or 10 us before it starts when the CPU
 *  delays it (data loading, a late launch): then, and only then, the GPU
 *  waits for the CPU; a collective's right after the compute kernel's
 *  before it.  Around that launch, as ProcessGroupNCCL does, the NCCL
 *  stream waits for the compute stream, and after it the compute stream
 *  for the NCCL stream (the work's wait()): cudaEventRecord,
 *  cudaStreamWaitEvent and the GPU's "Stream Wait Event" record (the
 *  cuda_sync shape of real traces), so that the compute after a
 *  collective depends on it in the critical path's graph.  Each step ends
 *  with the CPU waiting for the GPU (cudaDeviceSynchronize and its Context
 *  Sync, until the step's last collective ends), which is why the step
 *  ends when its last collective does.  With --cpu-ahead the CPU does not
 *  follow the GPU: it launches each kernel as soon as it is done with the
 *  calls before (unless it delays it), so that the GPU's own dependencies
 *  (the stream waits, the step's synchronisation) are all that orders the
 *  kernels, as when the CPU is far ahead.
 *
 *  Metadata on the kernels' args (default) or only on the launching
 *  record_param_comms op, joined by External id (--meta-on-cpu); Seq, the
 *  per-group sequence number, unless --no-seq.  With --profiler-steps,
 *  each rank's step s is ProfilerStep#s, from its clock when the step
 *  begins (its data loading) to its clock after the step's last op, then
 *  an empty ProfilerStep#S+1 that the last-step filter drops, so that
 *  every simulated step is kept; without it no step is written.
 *
 *  The ground truth (DIR.truth.json (beside DIR, so that DIR holds only
 *  traces)): every instance with its group, seq, collective, dtype, bytes,
 *  ranks, first and last arriving rank, arrival skew, transfer time, busbw
 *  and total wait, and per rank its total wait, the wait it caused (the
 *  others' wait at instances it arrived last at) and the count of last
 *  arrivals.  Times in us.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tracegen_groups.h"

#include "tracegen_common.h"

enum { STREAM_COMPUTE = 7, OP_MAX = 64 };

#define ORIGIN_NS INT64_C(1700000000000000000)

typedef enum { G_TP, G_DP } group_kind;

typedef struct op {
    group_kind group;
    const char *collective, *dtype;
    int elem_size;
    int64_t in_nelems, out_nelems;
    int64_t compute_ns;        /* base compute before the op */
    int64_t transfer_ns;
    int slowed;                /* --slow applies to this op's compute */
} op;

typedef enum { CAUSE_COMPUTE, CAUSE_LAUNCH, CAUSE_DATA } slow_cause;

#define DATA_LOADING_NS INT64_C(2000000)
#define AFTER_COLLECTIVE_NS INT64_C(5000) /* a rank goes on this long after a collective (+ r ns) */
#define LAUNCH_LEAD_NS INT64_C(10000)
#define LAUNCH_DUR_NS INT64_C(4000)
#define CPU_AHEAD_NS INT64_C(50000)
#define SYNC_CALL_NS INT64_C(2000)
#define COLLECTIVE_CALLS_NS INT64_C(20000) /* a collective's CPU calls, all told */

typedef struct gen {
    int tp, dp, world, steps, layers, no_seq, meta_on_cpu, profiler_steps;
    int cpu_ahead;             /* launches as early as the CPU can, not 50 us ahead */
    slow_cause cause;
    int slow_rank;
    double slow_factor;
    uint64_t seed;
    const char *dir;
    op ops[OP_MAX];
    int n_ops;
    int64_t *clock;            /* [world] ns */
    int64_t *step_start;       /* [world] the clock when the step began */
    int64_t *compute_end;      /* [world] end of the last compute kernel, 0 before */
    int64_t *compute_launch;   /* [world] its launch */
    int64_t *calls_end;        /* [world] end of the last collective's CPU calls */
    int64_t *wait, *caused;    /* [world] ns */
    int64_t *last_count;       /* [world] */
    int64_t *seq;              /* [number of groups] */
    FILE **out;                /* [world] */
    int64_t *next_id;          /* [world] External id / correlation counters */
    int *first_event;          /* [world] */
    FILE *truth;
    int first_instance;
} gen;

/* Members of the group of kind k that rank belongs to, ascending. */
static int members(const gen *g, group_kind k, int rank, int *out)
{
    int n = 0;
    if (k == G_TP)
        for (int i = 0; i < g->tp; i++)
            out[n++] = rank - rank % g->tp + i;
    else
        for (int i = 0; i < g->dp; i++)
            out[n++] = rank % g->tp + i * g->tp;
    return n;
}

static void ranks_text(const int *m, int n, char *out, size_t size)
{
    size_t len = (size_t)snprintf(out, size, "[");
    for (int i = 0; i < n && len < size; i++)
        len += (size_t)snprintf(out + len, size - len, "%s%d", i ? ", " : "", m[i]);
    if (len < size)
        snprintf(out + len, size - len, "]");
}

static void build_program(gen *g)
{
    /* Message sizes of a 7B-parameter model's layer at sequence 4096. */
    int64_t act = INT64_C(4096) * 4096;           /* BFloat16 activations */
    int64_t shard = INT64_C(1) << 22;             /* all-gather input */
    int64_t grads = INT64_C(25) << 20;            /* gradient bucket */
    for (int l = 0; l < g->layers; l++)
        g->ops[g->n_ops++] = (op){G_TP, "allreduce", "BFloat16", 2, act, act,
                                  1200000 + 100000 * l, 180000, 1};
    g->ops[g->n_ops++] = (op){G_TP, "allgather", "BFloat16", 2, shard, shard * g->tp,
                              300000, 90000, 1};
    g->ops[g->n_ops++] = (op){G_DP, "reduce_scatter", "Float", 4, grads * g->dp, grads, 400000,
                              350000, 0};
    g->ops[g->n_ops++] = (op){G_DP, "allreduce", "Float", 4, grads, grads, 200000, 600000, 0};
}

static double busbw_factor(const op *o, int n)
{
    if (strcmp(o->collective, "allreduce") == 0)
        return 2.0 * (n - 1) / n;
    return (double)(n - 1) / n;
}

static int64_t bytes_of(const op *o)
{
    return (strcmp(o->collective, "allgather") == 0 ? o->out_nelems : o->in_nelems) * o->elem_size;
}

/* Kineto's microseconds with three decimals: exact nanoseconds. */
static void put_us(FILE *f, int64_t ns)
{
    fprintf(f, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
}

static void open_rank(gen *g, int r)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d.json", g->dir, r);
    FILE *f = g->out[r] = fopen(path, "w");
    if (!f)
        tg_fail("cannot write a rank file", NULL);
    fprintf(f, "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, "
               "\"world_size\": %d, \"pg_count\": %d, \"pg_config\": [",
            r, g->world, 1 + g->dp + g->tp);
    int m[4096];
    char text[65536];
    for (int id = 0; id < g->dp + g->tp; id++) {
        group_kind k = id < g->dp ? G_TP : G_DP;
        int any = k == G_TP ? id * g->tp : id - g->dp;
        ranks_text(m, members(g, k, any, m), text, sizeof text);
        fprintf(f, "%s{\"pg_name\": \"%d\", \"pg_desc\": \"%s\", \"backend_config\": "
                   "\"cuda:nccl\", \"ranks\": %s}",
                id ? ", " : "", 1 + id, k == G_TP ? "tensor_parallel" : "data_parallel", text);
    }
    fprintf(f, "]}, \"traceEvents\": [\n");
    g->first_event[r] = 1;
}

static void event_start(gen *g, int r)
{
    fputs(g->first_event[r] ? "" : ",\n", g->out[r]);
    g->first_event[r] = 0;
}

static void put_cpu(gen *g, int r, const char *cat, const char *name, int64_t start, int64_t dur,
                    int64_t correlation)
{
    event_start(g, r);
    FILE *f = g->out[r];
    fprintf(f, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 100, "
               "\"tid\": 100, \"ts\": ", cat, name);
    put_us(f, start);
    fputs(", \"dur\": ", f);
    put_us(f, dur);
    if (correlation >= 0)
        fprintf(f, ", \"args\": {\"correlation\": %" PRId64 "}}", correlation);
    else
        fputs("}", f);
}

static void put_launch(gen *g, int r, int64_t ts, int64_t correlation)
{
    put_cpu(g, r, "cuda_runtime", "cudaLaunchKernel", ts, LAUNCH_DUR_NS, correlation);
}

/* One stream waiting for another, as ProcessGroupNCCL asks for it from
 * ts: cudaEventRecord on from (after the kernel to wait for was
 * launched), cudaStreamWaitEvent on to, and the GPU's "Stream Wait Event"
 * record naming the recorded stream and the record's correlation (Kineto's
 * cuda_sync shape, on the waiting stream at the API call's time).  The
 * next kernel launched on to then starts only after from's kernel ends.
 * Returns the time the calls end. */
static int64_t put_stream_wait(gen *g, int r, int64_t ts, int from, int to)
{
    int64_t record = g->next_id[r]++, wait = g->next_id[r]++;
    put_cpu(g, r, "cuda_runtime", "cudaEventRecord", ts, SYNC_CALL_NS, record);
    ts += SYNC_CALL_NS + 1000;
    put_cpu(g, r, "cuda_runtime", "cudaStreamWaitEvent", ts, SYNC_CALL_NS, wait);
    event_start(g, r);
    FILE *f = g->out[r];
    fprintf(f, "{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Stream Wait Event\", "
               "\"pid\": 0, \"tid\": %d, \"ts\": ", to);
    put_us(f, ts + 1000);
    fputs(", \"dur\": ", f);
    put_us(f, SYNC_CALL_NS);
    fprintf(f, ", \"args\": {\"cuda_sync_kind\": \"Stream Wait Event\", \"wait_on_stream\": %d, "
               "\"wait_on_cuda_event_record_corr_id\": %" PRId64 ", \"stream\": %d, "
               "\"correlation\": %" PRId64 ", \"device\": 0, \"context\": 1}}",
            from, record, to, wait);
    return ts + SYNC_CALL_NS;
}

/* A compute kernel from start, launched at launch_ts. */
static void put_compute(gen *g, int r, int64_t launch_ts, int64_t start, int64_t dur)
{
    int64_t id = g->next_id[r]++;
    put_launch(g, r, launch_ts, id);
    event_start(g, r);
    FILE *f = g->out[r];
    fprintf(f, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ampere_bf16_s16816gemm\", "
               "\"pid\": 0, \"tid\": %d, \"ts\": ", STREAM_COMPUTE);
    put_us(f, start);
    fputs(", \"dur\": ", f);
    put_us(f, dur);
    fprintf(f, ", \"args\": {\"stream\": %d, \"correlation\": %" PRId64 "}}", STREAM_COMPUTE, id);
}

static void put_metadata(FILE *f, const gen *g, const op *o, int gid, int n, const char *ranks,
                         int64_t seq)
{
    fprintf(f, "\"Collective name\": \"%s\", \"In msg nelems\": %" PRId64
               ", \"Out msg nelems\": %" PRId64 ", \"Group size\": %d, \"dtype\": \"%s\", "
               "\"In split size\": \"[]\", \"Out split size\": \"[]\", "
               "\"Process Group Name\": \"%d\", \"Process Group Description\": \"%s\", "
               "\"Process Group Ranks\": \"%s\"",
            o->collective, o->in_nelems, o->out_nelems, n, o->dtype, 1 + gid,
            o->group == G_TP ? "tensor_parallel" : "data_parallel", ranks);
    if (!g->no_seq)
        fprintf(f, ", \"Seq\": %" PRId64, seq);
}

static const char *kernel_name(const op *o)
{
    if (strcmp(o->collective, "allreduce") == 0)
        return o->elem_size == 2
                   ? "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
                   : "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    if (strcmp(o->collective, "allgather") == 0)
        return "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    return "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
}

static void put_collective(gen *g, int r, const op *o, int gid, int n, const char *ranks,
                           int64_t seq, int64_t start, int64_t end)
{
    FILE *f = g->out[r];
    int64_t id = g->next_id[r]++;
    int stream = o->group == G_TP ? 20 + 2 * (r % 5) : 40 + r % 3;
    /* Right after the compute kernel before it (the CPU runs ahead), the
     * op's CPU calls: the NCCL stream waiting for the compute stream, the
     * launch, then the compute stream waiting for the collective (the
     * work's wait()), inside record_param_comms. */
    int64_t op_start = g->compute_launch[r] + LAUNCH_DUR_NS + 1000;
    if (g->meta_on_cpu) {
        event_start(g, r);
        fputs("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", "
              "\"pid\": 100, \"tid\": 100, \"ts\": ", f);
        put_us(f, op_start);
        fputs(", \"dur\": ", f);
        put_us(f, COLLECTIVE_CALLS_NS);
        fprintf(f, ", \"args\": {\"External id\": %" PRId64 ", ", id);
        put_metadata(f, g, o, gid, n, ranks, seq);
        fputs("}}", f);
    }
    int64_t launch = put_stream_wait(g, r, op_start + 1000, STREAM_COMPUTE, stream) + 1000;
    put_launch(g, r, launch, id);
    event_start(g, r);
    fprintf(f, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d, "
               "\"ts\": ", kernel_name(o), stream);
    put_us(f, start);
    fputs(", \"dur\": ", f);
    put_us(f, end - start);
    fprintf(f,
            ", \"args\": {\"External id\": %" PRId64 ", \"stream\": %d, \"correlation\": %" PRId64,
            id, stream, id);
    if (!g->meta_on_cpu) {
        fputs(", ", f);
        put_metadata(f, g, o, gid, n, ranks, seq);
    }
    fputs("}}", f);
    put_stream_wait(g, r, launch + LAUNCH_DUR_NS + 1000, stream, STREAM_COMPUTE);
    g->calls_end[r] = op_start + COLLECTIVE_CALLS_NS;
}

static int64_t compute_of(const gen *g, int r, int step, int i)
{
    const op *o = &g->ops[i];
    double factor =
        o->slowed && r == g->slow_rank && g->cause == CAUSE_COMPUTE ? g->slow_factor : 1.0;
    uint64_t h =
        tg_mix64(g->seed ^ tg_mix64((uint64_t)r * 1000003u + (uint64_t)step * 131u + (uint64_t)i));
    return (int64_t)((double)o->compute_ns * factor) + (int64_t)(h % 40000) + r;
}

/* The CPU time before a step's first kernel: longer on the slow rank
 * when its cause is data loading. */
static int64_t data_loading_of(const gen *g, int r)
{
    double factor = r == g->slow_rank && g->cause == CAUSE_DATA ? g->slow_factor : 1.0;
    return (int64_t)((double)DATA_LOADING_NS * factor) + r;
}

/* The GPU's wait for a late launch before op i's compute kernel: on the
 * slow rank, when its cause is the CPU launching late, as long as the
 * compute it would otherwise have lost. */
static int64_t host_delay(const gen *g, int r, int i)
{
    const op *o = &g->ops[i];
    if (!o->slowed || r != g->slow_rank || g->cause != CAUSE_LAUNCH)
        return 0;
    return (int64_t)((double)o->compute_ns * (g->slow_factor - 1.0));
}

/* One instance: the members' arrivals, kernels and the truth. */
static void run_instance(gen *g, int step, int i, const int *m, int n, int gid)
{
    const op *o = &g->ops[i];
    int64_t arrival[4096], latest = INT64_MIN, earliest = INT64_MAX, wait = 0;
    int first = m[0], last = m[0];
    for (int j = 0; j < n; j++) {
        int64_t c = compute_of(g, m[j], step, i), idle = host_delay(g, m[j], i);
        if (i == 0) {
            int64_t loading = data_loading_of(g, m[j]);
            put_cpu(g, m[j], "user_annotation",
                    "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", g->clock[m[j]],
                    loading, -1);
            idle += loading;
        }
        /* The CPU runs ahead: a kernel is launched while the collective
         * before it still runs, unless the CPU is what delays it. */
        int64_t start = g->clock[m[j]] + idle, previous = g->compute_end[m[j]];
        int64_t launch = idle || !previous ? start - LAUNCH_LEAD_NS
                         : g->cpu_ahead    ? g->calls_end[m[j]] + 1000
                                           : previous - CPU_AHEAD_NS;
        put_compute(g, m[j], launch, start, c);
        g->compute_end[m[j]] = start + c;
        g->compute_launch[m[j]] = launch;
        arrival[j] = g->clock[m[j]] + idle + c;
        if (arrival[j] > latest)
            latest = arrival[j], last = m[j];
        if (arrival[j] < earliest)
            earliest = arrival[j], first = m[j];
    }
    int64_t end = latest + o->transfer_ns, seq = g->seq[gid]++;
    char ranks[65536];
    ranks_text(m, n, ranks, sizeof ranks);
    for (int j = 0; j < n; j++) {
        put_collective(g, m[j], o, gid, n, ranks, seq, arrival[j], end);
        g->wait[m[j]] += latest - arrival[j];
        wait += latest - arrival[j];
        g->clock[m[j]] = end + AFTER_COLLECTIVE_NS + m[j];
    }
    g->caused[last] += wait;
    g->last_count[last]++;
    double busbw = (double)bytes_of(o) / (double)o->transfer_ns * busbw_factor(o, n);
    fprintf(g->truth,
            "%s\n  {\"group\": \"%d\", \"seq\": %" PRId64 ", \"collective\": \"%s\", "
            "\"dtype\": \"%s\", \"bytes\": %" PRId64 ", \"ranks\": \"%s\", \"first_rank\": %d, "
            "\"last_rank\": %d, \"arrival_skew_us\": %.3f, \"transfer_us\": %.3f, "
            "\"busbw_gbps\": %.9g, \"total_wait_us\": %.3f, \"start_us\": %.3f}",
            g->first_instance ? "" : ",", 1 + gid, seq, o->collective, o->dtype, bytes_of(o),
            ranks, first, last, (latest - earliest) / 1000.0, o->transfer_ns / 1000.0, busbw,
            wait / 1000.0, earliest / 1000.0);
    g->first_instance = 0;
}

/* ProfilerStep#number on every rank from its step_start to its clock,
 * or dur long from its clock when dur > 0. */
static void put_steps(gen *g, int number, int64_t dur)
{
    char name[32];
    snprintf(name, sizeof name, "ProfilerStep#%d", number);
    for (int r = 0; r < g->world; r++) {
        int64_t start = dur > 0 ? g->clock[r] : g->step_start[r];
        put_cpu(g, r, "user_annotation", name, start, dur > 0 ? dur : g->clock[r] - start, -1);
    }
}

/* The CPU's wait for the GPU at the end of each rank's step, from its
 * last CPU call to its last collective's end (its clock less the gap):
 * cudaDeviceSynchronize and its Context Sync record. */
static void put_step_syncs(gen *g)
{
    for (int r = 0; r < g->world; r++) {
        int64_t id = g->next_id[r]++, from = g->calls_end[r] + 1000;
        int64_t dur = g->clock[r] - AFTER_COLLECTIVE_NS - r + SYNC_CALL_NS / 2 - from;
        put_cpu(g, r, "cuda_runtime", "cudaDeviceSynchronize", from, dur, id);
        event_start(g, r);
        FILE *f = g->out[r];
        fputs("{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Context Sync\", "
              "\"pid\": 0, \"tid\": -1, \"ts\": ", f);
        put_us(f, from + 1000);
        fputs(", \"dur\": ", f);
        put_us(f, dur - 1000);
        fprintf(f, ", \"args\": {\"cuda_sync_kind\": \"Context Sync\", \"stream\": -1, "
                   "\"correlation\": %" PRId64 ", \"device\": 0, \"context\": 1}}", id);
    }
}

static void simulate(gen *g)
{
    int m[4096];
    for (int step = 0; step < g->steps; step++) {
        memcpy(g->step_start, g->clock, (size_t)g->world * sizeof *g->clock);
        for (int i = 0; i < g->n_ops; i++)
            for (int gid = 0; gid < g->dp + g->tp; gid++) {
                group_kind k = gid < g->dp ? G_TP : G_DP;
                if (k != g->ops[i].group)
                    continue;
                int any = k == G_TP ? gid * g->tp : gid - g->dp;
                run_instance(g, step, i, m, members(g, k, any, m), gid);
            }
        put_step_syncs(g);
        if (g->profiler_steps)
            put_steps(g, step + 1, 0);
    }
    if (g->profiler_steps)
        put_steps(g, g->steps + 1, LAUNCH_DUR_NS);
}

static void usage(void)
{
    fputs("usage: hta-tracegen --tp T --dp D -o DIR [--steps N] [--layers L]\n"
          "                    [--slow RANK:FACTOR] [--slow-cause compute|launch|data]\n"
          "                    [--no-seq] [--meta-on-cpu] [--profiler-steps] [--seed N]\n"
          "                    [--cpu-ahead]\n"
          "Tensor x data parallel job: T x D ranks (at most 4096), TP groups of T ranks and DP\n"
          "groups of D ranks, NCCL collective metadata, DIR.truth.json (beside DIR, so that DIR "
          "holds only traces).\n"
          "--profiler-steps writes each step as ProfilerStep#N; --cpu-ahead launches\n"
          "each kernel as soon as the CPU is done with the one before.\n",
          stderr);
    exit(2);
}

static long number_arg(const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        usage();
    return v;
}

static void parse(gen *g, int argc, char **argv)
{
    *g = (gen){.steps = 2, .layers = 4, .slow_rank = -1, .slow_factor = 1.0, .seed = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-seq"))
            g->no_seq = 1;
        else if (!strcmp(a, "--meta-on-cpu"))
            g->meta_on_cpu = 1;
        else if (!strcmp(a, "--profiler-steps"))
            g->profiler_steps = 1;
        else if (!strcmp(a, "--cpu-ahead"))
            g->cpu_ahead = 1;
        else if (!v)
            usage();
        else if (!strcmp(a, "--tp"))
            g->tp = (int)number_arg(v, 1, 4096), i++;
        else if (!strcmp(a, "--dp"))
            g->dp = (int)number_arg(v, 1, 4096), i++;
        else if (!strcmp(a, "--steps"))
            g->steps = (int)number_arg(v, 1, 1000), i++;
        else if (!strcmp(a, "--layers"))
            g->layers = (int)number_arg(v, 1, OP_MAX - 3), i++;
        else if (!strcmp(a, "--seed"))
            g->seed = (uint64_t)number_arg(v, 0, 1000000000), i++;
        else if (!strcmp(a, "-o"))
            g->dir = v, i++;
        else if (!strcmp(a, "--slow-cause")) {
            g->cause = !strcmp(v, "compute") ? CAUSE_COMPUTE
                       : !strcmp(v, "launch") ? CAUSE_LAUNCH
                       : !strcmp(v, "data")   ? CAUSE_DATA
                                              : (usage(), CAUSE_COMPUTE);
            i++;
        } else if (!strcmp(a, "--slow")) {
            if (!tg_index_factor(v, &g->slow_rank, &g->slow_factor))
                usage();
            i++;
        } else
            usage();
    }
    if (!g->tp || !g->dp || !g->dir)
        usage();
    g->world = g->tp * g->dp;
    if (g->slow_rank >= g->world || g->world > 4096)
        usage();
}

int tracegen_groups_main(int argc, char **argv)
{
    gen g;
    parse(&g, argc, argv);
    build_program(&g);
    if (mkdir(g.dir, 0777) && errno != EEXIST)
        tg_fail("cannot create the output directory", NULL);
    size_t w = (size_t)g.world;
    g.clock = tg_calloc(w, sizeof *g.clock);
    g.step_start = tg_calloc(w, sizeof *g.step_start);
    g.compute_end = tg_calloc(w, sizeof *g.compute_end);
    g.compute_launch = tg_calloc(w, sizeof *g.compute_launch);
    g.calls_end = tg_calloc(w, sizeof *g.calls_end);
    g.wait = tg_calloc(w, sizeof *g.wait);
    g.caused = tg_calloc(w, sizeof *g.caused);
    g.last_count = tg_calloc(w, sizeof *g.last_count);
    g.seq = tg_calloc((size_t)(g.tp + g.dp), sizeof *g.seq);
    g.out = tg_calloc(w, sizeof *g.out);
    g.next_id = tg_calloc(w, sizeof *g.next_id);
    g.first_event = tg_calloc(w, sizeof *g.first_event);
    for (int r = 0; r < g.world; r++) {
        g.clock[r] = ORIGIN_NS + 1000 * r;
        g.next_id[r] = 1000;
        open_rank(&g, r);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s.truth.json", g.dir);
    if (!(g.truth = fopen(path, "w")))
        tg_fail("cannot write the ground truth", NULL);
    fputs("{\"instances\": [", g.truth);
    g.first_instance = 1;
    simulate(&g);
    fputs("\n], \"ranks\": [", g.truth);
    for (int r = 0; r < g.world; r++) {
        fprintf(g.out[r], "\n]}\n");
        if (fclose(g.out[r]))
            tg_fail("cannot write a rank file", NULL);
        fprintf(g.truth,
                "%s\n  {\"rank\": %d, \"total_wait_us\": %.3f, \"caused_wait_us\": %.3f, "
                "\"arrived_last\": %" PRId64 "}",
                r ? "," : "", r, g.wait[r] / 1000.0, g.caused[r] / 1000.0, g.last_count[r]);
    }
    fputs("\n]}\n", g.truth);
    if (fclose(g.truth))
        tg_fail("cannot write the ground truth", NULL);
    free(g.clock);
    free(g.step_start);
    free(g.compute_end);
    free(g.compute_launch);
    free(g.calls_end);
    free(g.wait);
    free(g.caused);
    free(g.last_count);
    free(g.seq);
    free(g.out);
    free(g.next_id);
    free(g.first_event);
    return 0;
}
