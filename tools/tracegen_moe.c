/*
 * tracegen_moe.c -- hta-tracegen's expert-parallel layout
 * (hta-tracegen --moe -o DIR): mixture-of-experts layers whose tokens
 * travel by all_to_allv with a seeded routing matrix, and the answer
 * written beside the traces.
 *
 * DESIGN
 *  E ranks (--ep E, default 8) in one expert-parallel group ("1",
 *  "expert_parallel").  Each of S steps runs L layers; a layer is an
 *  attention kernel (500 us + rank ns), a dispatch all_to_allv, an expert
 *  kernel (50 ns per token received), and a combine all_to_allv that
 *  returns the tokens.  Rank i routes its T = 4096 tokens: weight of
 *  expert rank j = (F for the hot rank --hot R:F, default 3:3, else 1) x
 *  (1 + 0.25 u), u seeded per (step, layer, i, j); count_i[j] =
 *  floor(T w_j / sum w), the remainder kept on rank i.  A token is a row
 *  of 4096 BFloat16 values, so the split sizes PyTorch writes count rows:
 *  dispatch In split size = count_i, Out split size = (count_j[i])_j, and
 *  In / Out msg nelems = rows x 4096; combine the reverse.
 *
 *  An all-to-all starts on rank i at its arrival (its clock after the
 *  kernel before) and ends everywhere at the latest arrival + the largest
 *  bytes any rank sends or receives / 100 GB/s; the clock moves on to the
 *  end + 5 us.  The hot rank's expert kernel runs longest, so it arrives
 *  last at the combine.
 *
 *  --cpu-ahead: the job as PyTorch runs it, for the replay: every rank's
 *  step n starts at the same S_n, written as ProfilerStep#n; the CPU
 *  launches the step's kernels from S_n on, one every 2 us in program
 *  order, and the GPU runs them on one stream (the all-to-alls too), the
 *  first 10 us after S_n, each after the one before without a gap; the
 *  step ends with the CPU waiting for the GPU (cudaDeviceSynchronize and
 *  its Context Sync record) until 10 us after its last kernel, and
 *  S_{n+1} is 200 us after the last rank's end.  The routing is the same
 *  as without it, so --hot R:1 with the same seed is the job without the
 *  hot expert.
 *
 *  --split-mismatch: at the first dispatch, rank 1 expects one row more
 *  from rank 0 than rank 0 sends (Out split size and Out msg nelems), a
 *  mismatch the consistency check must count.
 *
 *  The truth (DIR.truth.json, beside DIR): the matrix (src, dst: bytes
 *  and instances), per instance its seq, collective, total bytes sent,
 *  wall time (latest end - earliest start) in ns, imbalance (max / mean
 *  bytes sent per rank), busiest rank and whether its splits disagree;
 *  per rank the bytes it sent and received.
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
#include "tracegen_moe.h"

#define MOE_ORIGIN_NS INT64_C(1700000000000000000)
#define MOE_TOKENS 4096
#define MOE_HIDDEN 4096
#define MOE_ELEM_BYTES 2
#define MOE_ATTENTION_NS INT64_C(500000)
#define MOE_NS_PER_TOKEN 50
#define MOE_BYTES_PER_NS 100 /* 100 GB/s */
#define MOE_GAP_NS INT64_C(5000)
#define MOE_MAX_RANKS 256
#define MOE_LAUNCH_STEP_NS INT64_C(2000) /* --cpu-ahead: one launch every 2 us */
#define MOE_LEAD_NS INT64_C(10000)       /* the step's first kernel after its start */
#define MOE_SYNC_TAIL_NS INT64_C(10000)  /* the CPU's wait ends after the last kernel */
#define MOE_STEP_GAP_NS INT64_C(200000)

typedef struct moe_gen {
    int ep, steps, layers, hot, mismatch, cpu_ahead;
    double hot_factor;
    uint64_t seed;
    const char *dir;
    FILE **out;
    bool *first;
    int64_t *clock, *next_id, *sent, *received;
    int64_t *cpu;                   /* --cpu-ahead: each rank's next launch */
    int64_t *matrix, *matrix_count; /* [ep][ep] */
    int64_t seq;
    FILE *truth;
    bool first_instance;
} moe_gen;

/* count[i * ep + j]: tokens rank i sends expert rank j. */
static void route(const moe_gen *g, int step, int layer, int64_t *count)
{
    for (int i = 0; i < g->ep; i++) {
        double w[MOE_MAX_RANKS], sum = 0;
        for (int j = 0; j < g->ep; j++) {
            uint64_t cell = (uint64_t)(((step * 64 + layer) * 256 + i) * 256 + j);
            uint64_t h = tg_mix64(g->seed ^ tg_mix64(cell));
            w[j] = (j == g->hot ? g->hot_factor : 1.0) * (1.0 + 0.25 * (double)(h % 1000) / 1000.0);
            sum += w[j];
        }
        int64_t given = 0;
        for (int j = 0; j < g->ep; j++) {
            count[i * g->ep + j] = (int64_t)((double)MOE_TOKENS * w[j] / sum);
            given += count[i * g->ep + j];
        }
        count[i * g->ep + i] += MOE_TOKENS - given;
    }
}

static void put_ns(FILE *f, int64_t ns)
{
    fprintf(f, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
}

static void put_list(FILE *f, const int64_t *v, int n, int64_t stride)
{
    fputc('[', f);
    for (int j = 0; j < n; j++)
        fprintf(f, "%s%" PRId64, j ? ", " : "", v[j * stride]);
    fputc(']', f);
}

/* The launch of rank r's next kernel, starting at start: 10 us before
 * it (the CPU following the GPU), or with --cpu-ahead 2 us after the
 * launch before.  Returns its correlation id. */
static int64_t put_launch(moe_gen *g, int r, int64_t start)
{
    int64_t id = g->next_id[r]++, at = start - 10000;
    if (g->cpu_ahead) {
        at = g->cpu[r];
        g->cpu[r] += MOE_LAUNCH_STEP_NS;
    }
    tg_json_event(g->out[r], &g->first[r], "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
                  "\"cudaLaunchKernel\", \"pid\": 100, \"tid\": 100, \"ts\": ");
    put_ns(g->out[r], at);
    fprintf(g->out[r], ", \"dur\": 1.000, \"args\": {\"correlation\": %" PRId64 "}}", id);
    return id;
}

static void put_compute(moe_gen *g, int r, const char *name, int64_t start, int64_t dur)
{
    int64_t id = put_launch(g, r, start);
    tg_json_event(g->out[r], &g->first[r], "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", "
                  "\"pid\": 0, \"tid\": 7, \"ts\": ", name);
    put_ns(g->out[r], start);
    fputs(", \"dur\": ", g->out[r]);
    put_ns(g->out[r], dur);
    fprintf(g->out[r], ", \"args\": {\"stream\": 7, \"correlation\": %" PRId64 "}}", id);
}

/* Rank r's all_to_allv kernel: send row i of count (or column, when
 * combining), with the split sizes as PyTorch writes them. */
static void put_a2a(moe_gen *g, int r, const int64_t *in, int64_t in_stride, const int64_t *out,
                    int64_t out_stride, int64_t out_extra, int64_t start, int64_t end)
{
    FILE *f = g->out[r];
    int64_t in_rows = 0, out_rows = out_extra, id = put_launch(g, r, start);
    int stream = g->cpu_ahead ? 7 : 20;
    for (int j = 0; j < g->ep; j++) {
        in_rows += in[j * in_stride];
        out_rows += out[j * out_stride];
    }
    tg_json_event(f, &g->first[r], "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
                  "\"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)\", \"pid\": 0, "
                  "\"tid\": %d, \"ts\": ", stream);
    put_ns(f, start);
    fputs(", \"dur\": ", f);
    put_ns(f, end - start);
    fprintf(f, ", \"args\": {\"stream\": %d, \"correlation\": %" PRId64
               ", \"External id\": %" PRId64
               ", \"Collective name\": \"all_to_allv\", \"In msg nelems\": %" PRId64
               ", \"Out msg nelems\": %" PRId64 ", \"Group size\": %d, \"dtype\": \"BFloat16\", "
               "\"In split size\": \"", stream, id, id, in_rows * MOE_HIDDEN, out_rows * MOE_HIDDEN,
            g->ep);
    put_list(f, in, g->ep, in_stride);
    fputs("\", \"Out split size\": \"", f);
    int64_t patched[MOE_MAX_RANKS];
    for (int j = 0; j < g->ep; j++)
        patched[j] = out[j * out_stride] + (j == 0 ? out_extra : 0);
    put_list(f, patched, g->ep, 1);
    fputs("\", \"Process Group Name\": \"1\", \"Process Group Description\": \"expert_parallel\", "
          "\"Process Group Ranks\": \"[", f);
    for (int j = 0; j < g->ep; j++)
        fprintf(f, "%s%d", j ? ", " : "", j);
    fprintf(f, "]\", \"Seq\": %" PRId64 "}}", g->seq);
}

/* One all-to-all: rank i sends send[i][j] rows to j (send[i * ep + j]
 * when dispatching, send[j * ep + i] when combining). */
static void run_a2a(moe_gen *g, const int64_t *count, bool combine, const int64_t *arrival)
{
    int e = g->ep;
    int64_t latest = INT64_MIN, earliest = INT64_MAX, most = 0, total = 0;
    int64_t busiest = -1, max_sent = -1;
    for (int i = 0; i < e; i++) {
        int64_t sent = 0, received = 0;
        for (int j = 0; j < e; j++) {
            int64_t s = combine ? count[j * e + i] : count[i * e + j];
            int64_t r = combine ? count[i * e + j] : count[j * e + i];
            sent += s * MOE_HIDDEN * MOE_ELEM_BYTES;
            received += r * MOE_HIDDEN * MOE_ELEM_BYTES;
            g->matrix[i * e + j] += s * MOE_HIDDEN * MOE_ELEM_BYTES;
            g->matrix_count[i * e + j]++;
        }
        int extra = g->mismatch && g->seq == 0 && i == 1;
        g->sent[i] += sent;
        g->received[i] += received + (extra ? MOE_HIDDEN * MOE_ELEM_BYTES : 0);
        total += sent;
        if (sent > max_sent)
            max_sent = sent, busiest = i;
        most = sent > most ? sent : most;
        most = received > most ? received : most;
        latest = arrival[i] > latest ? arrival[i] : latest;
        earliest = arrival[i] < earliest ? arrival[i] : earliest;
    }
    int64_t end = latest + most / MOE_BYTES_PER_NS;
    for (int i = 0; i < e; i++) {
        int extra = g->mismatch && g->seq == 0 && i == 1;
        if (combine)
            put_a2a(g, i, &count[i], e, &count[i * e], 1, 0, arrival[i], end);
        else
            put_a2a(g, i, &count[i * e], 1, &count[i], e, extra, arrival[i], end);
        g->clock[i] = end + (g->cpu_ahead ? 0 : MOE_GAP_NS);
    }
    tg_json_event(g->truth, &g->first_instance,
                  "{\"seq\": %" PRId64 ", \"collective\": \"all_to_allv\", \"bytes\": %" PRId64
                  ", \"wall_ns\": %" PRId64 ", \"imbalance\": %.17g, \"busiest_rank\": %" PRId64
                  ", \"busiest_bytes\": %" PRId64 ", \"split_mismatch\": %d}",
                  g->seq, total, end - earliest, (double)max_sent / ((double)total / e), busiest,
                  max_sent, g->mismatch && g->seq == 0);
    g->seq++;
}

/* --cpu-ahead: step n's ProfilerStep and its CPU calls start at the
 * same time on every rank, the first kernel 10 us later. */
static void start_step(moe_gen *g, int64_t *step_start)
{
    int64_t start = g->clock[0] + MOE_STEP_GAP_NS;
    for (int i = 1; i < g->ep; i++)
        start = g->clock[i] + MOE_STEP_GAP_NS > start ? g->clock[i] + MOE_STEP_GAP_NS : start;
    *step_start = start;
    for (int i = 0; i < g->ep; i++) {
        g->cpu[i] = start;
        g->clock[i] = start + MOE_LEAD_NS;
    }
}

/* --cpu-ahead: the CPU waiting for the GPU until 10 us after the step's
 * last kernel, and the step's ProfilerStep around it all. */
static void end_step(moe_gen *g, int step, int64_t step_start)
{
    for (int r = 0; r < g->ep; r++) {
        FILE *f = g->out[r];
        int64_t from = g->cpu[r], until = g->clock[r] + MOE_SYNC_TAIL_NS / 2;
        int64_t corr = g->next_id[r]++;
        tg_json_event(f, &g->first[r], "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
                      "\"cudaDeviceSynchronize\", \"pid\": 100, \"tid\": 100, \"ts\": ");
        put_ns(f, from);
        fputs(", \"dur\": ", f);
        put_ns(f, until - from);
        fprintf(f, ", \"args\": {\"correlation\": %" PRId64 "}}", corr);
        tg_json_event(f, &g->first[r], "{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": "
                      "\"Context Sync\", \"pid\": 0, \"tid\": -1, \"ts\": ");
        put_ns(f, from + 1000);
        fputs(", \"dur\": ", f);
        put_ns(f, until - from - 1000);
        fprintf(f, ", \"args\": {\"cuda_sync_kind\": \"Context Sync\", \"stream\": -1, "
                   "\"correlation\": %" PRId64 ", \"device\": 0, \"context\": 1}}", corr);
        tg_json_event(f, &g->first[r], "{\"ph\": \"X\", \"cat\": \"user_annotation\", "
                      "\"name\": \"ProfilerStep#%d\", \"pid\": 100, \"tid\": 100, \"ts\": ",
                      step);
        put_ns(f, step_start);
        fputs(", \"dur\": ", f);
        put_ns(f, g->clock[r] + MOE_SYNC_TAIL_NS - step_start);
        fputs("}", f);
        g->clock[r] += MOE_SYNC_TAIL_NS;
    }
}

static void simulate(moe_gen *g)
{
    int e = g->ep;
    int64_t count[MOE_MAX_RANKS * MOE_MAX_RANKS], arrival[MOE_MAX_RANKS], step_start = 0;
    for (int step = 0; step < g->steps; step++) {
        if (g->cpu_ahead)
            start_step(g, &step_start);
        for (int layer = 0; layer < g->layers; layer++) {
            route(g, step, layer, count);
            for (int i = 0; i < e; i++) {
                int64_t dur = MOE_ATTENTION_NS + i;
                put_compute(g, i, "attention_fwd_kernel", g->clock[i], dur);
                arrival[i] = g->clock[i] + dur;
            }
            run_a2a(g, count, false, arrival);
            for (int i = 0; i < e; i++) {
                int64_t tokens = 0;
                for (int j = 0; j < e; j++)
                    tokens += count[j * e + i];
                int64_t dur = tokens * MOE_NS_PER_TOKEN;
                put_compute(g, i, "expert_gemm_kernel", g->clock[i], dur);
                arrival[i] = g->clock[i] + dur;
            }
            run_a2a(g, count, true, arrival);
        }
        if (g->cpu_ahead)
            end_step(g, step, step_start);
    }
}

static void usage(void)
{
    fputs("usage: hta-tracegen --moe -o DIR [--ep E] [--steps N] [--layers L] [--hot RANK:FACTOR]\n"
          "                    [--split-mismatch] [--seed N] [--cpu-ahead]\n"
          "Expert-parallel job: E ranks exchanging tokens by all_to_allv with a seeded routing\n"
          "matrix, DIR.truth.json beside DIR.  --cpu-ahead: profiler steps, the CPU launching\n"
          "ahead and one stream per rank, as PyTorch runs it.\n",
          stderr);
    exit(2);
}

static void parse(moe_gen *g, int argc, char **argv)
{
    *g = (moe_gen){.ep = 8, .steps = 2, .layers = 2, .hot = 3, .hot_factor = 3.0, .seed = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--moe"))
            continue;
        if (!strcmp(a, "--split-mismatch"))
            g->mismatch = 1;
        else if (!strcmp(a, "--cpu-ahead"))
            g->cpu_ahead = 1;
        else if (!v)
            usage();
        else if (!strcmp(a, "--ep"))
            g->ep = (int)tg_json_count(a, v, MOE_MAX_RANKS), i++;
        else if (!strcmp(a, "--steps"))
            g->steps = (int)tg_json_count(a, v, 1000), i++;
        else if (!strcmp(a, "--layers"))
            g->layers = (int)tg_json_count(a, v, 64), i++;
        else if (!strcmp(a, "--seed"))
            g->seed = (uint64_t)tg_json_count(a, v, 1000000000), i++;
        else if (!strcmp(a, "-o"))
            g->dir = v, i++;
        else if (!strcmp(a, "--hot")) {
            if (!tg_index_factor(v, &g->hot, &g->hot_factor))
                usage();
            i++;
        } else
            usage();
    }
    if (!g->dir || g->ep < 2 || g->hot >= g->ep)
        usage();
}

int tracegen_moe_main(int argc, char **argv)
{
    moe_gen g;
    parse(&g, argc, argv);
    if (mkdir(g.dir, 0777) && errno != EEXIST)
        tg_fail("cannot create ", g.dir);
    size_t e = (size_t)g.ep;
    g.out = tg_calloc(e, sizeof *g.out);
    g.first = tg_calloc(e, sizeof *g.first);
    g.clock = tg_calloc(e, sizeof *g.clock);
    g.cpu = tg_calloc(e, sizeof *g.cpu);
    g.next_id = tg_calloc(e, sizeof *g.next_id);
    g.sent = tg_calloc(e, sizeof *g.sent);
    g.received = tg_calloc(e, sizeof *g.received);
    g.matrix = tg_calloc(e * e, sizeof *g.matrix);
    g.matrix_count = tg_calloc(e * e, sizeof *g.matrix_count);
    char path[4096];
    for (int r = 0; r < g.ep; r++) {
        snprintf(path, sizeof path, "%s/rank-%d.json", g.dir, r);
        if (!(g.out[r] = fopen(path, "w")))
            tg_fail("cannot write ", path);
        fprintf(g.out[r], "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", "
                          "\"rank\": %d, \"world_size\": %d}, \"traceEvents\": [", r, g.ep);
        g.first[r] = true;
        g.clock[r] = MOE_ORIGIN_NS;
        g.next_id[r] = 1000;
    }
    snprintf(path, sizeof path, "%s.truth.json", g.dir);
    if (!(g.truth = fopen(path, "w")))
        tg_fail("cannot write ", path);
    fputs("{\"instances\": [", g.truth);
    g.first_instance = true;
    simulate(&g);
    fputs("\n],\n\"matrix\": [", g.truth);
    bool first = true;
    for (int i = 0; i < g.ep; i++)
        for (int j = 0; j < g.ep; j++)
            tg_json_event(g.truth, &first,
                          "{\"group\": \"1\", \"src\": %d, \"dst\": %d, \"bytes\": %" PRId64
                          ", \"count\": %" PRId64 "}",
                          i, j, g.matrix[i * g.ep + j], g.matrix_count[i * g.ep + j]);
    fputs("\n],\n\"ranks\": [", g.truth);
    first = true;
    for (int r = 0; r < g.ep; r++) {
        tg_json_event(g.truth, &first, "{\"rank\": %d, \"sent_bytes\": %" PRId64
                      ", \"received_bytes\": %" PRId64 "}", r, g.sent[r], g.received[r]);
        fputs("\n]}\n", g.out[r]);
        if (fclose(g.out[r]))
            tg_fail("cannot write a rank file", NULL);
    }
    fputs("\n]}\n", g.truth);
    if (fclose(g.truth))
        tg_fail("cannot write the truth", NULL);
    free(g.out);
    free(g.first);
    free(g.clock);
    free(g.cpu);
    free(g.next_id);
    free(g.sent);
    free(g.received);
    free(g.matrix);
    free(g.matrix_count);
    return 0;
}
