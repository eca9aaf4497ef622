/*
 * tracegen_graphs.c -- hta-tracegen's CUDA graph replays
 * (hta-tracegen --graphs G:N [--graph-drop K] [--graph-short K[:R]]
 * [--graph-sync] -o DIR [--ranks R] [--steps S]): every step replays G
 * graphs of N kernels each, as torch.compile's "reduce-overhead" mode and
 * vLLM's decoding do, with the truth written beside the traces.
 *
 * DESIGN
 *  Integer microseconds, one CPU thread, one stream.  Step s (1..S, then
 *  an S+1-th that the step filter drops) of every rank starts at
 *  b = ORIGIN + (s - 1) T.  Graph g (0..G-1) is launched by a
 *  cudaGraphLaunch at c = b + 10 + g P (10 us), inside the 14 us
 *  cpu_op graph<g>::replay from c - 2 (as torch.compile's compiled
 *  function encloses its replay); its N kernels
 *  graph<g>_kernel<j> share the call's correlation, as Kineto records a
 *  replay, and run one after the other on stream 7 at c + 20 + j 45 for
 *  40 us.  So a replay's GPU span is 45 N - 5 us and its busy time 40 N.
 *  With --graph-drop K every K-th launch of a rank (counted from 1 over
 *  all its steps) has no GPU event: the profiler did not record the
 *  replay, as Kineto and ROCm do; --graph-drop K:R drops on rank R only.
 *  With --graph-short K (K >= 2, N >= 2) every K-th recorded replay of a
 *  rank lacks its kernel N/2: the profiler recorded it short; K:R on rank
 *  R only.
 *  With --graph-sync every step ends its launches with a
 *  cudaDeviceSynchronize from the last call's end to the last replay's
 *  end + 5 us, and its Context Sync record, so that the replays' kernels
 *  hold up the CPU: the critical path runs through them.  The step also
 *  begins with one ordinary launch (cudaLaunchKernel at b + 2 for 5 us,
 *  kernel step_prologue at b + 4 for 5 us), without which HTA's critical
 *  path, having no queue length to read, cannot run.
 *
 *  The truth (DIR.graphs_truth.json): per rank the launches, recorded
 *  replays, short replays and kernels of the kept steps, and per graph
 *  its first kernel, span_us and busy_us.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracegen_common.h"
#include "tracegen_graphs.h"

#define GR_ORIGIN_US 1000000
#define GR_STREAM 7
#define GR_KERNEL_US 40
#define GR_KERNEL_STEP_US 45
#define GR_MAX_GRAPHS 16
#define GR_MAX_KERNELS 64
#define GR_MAX_RANKS 32
#define GR_MAX_STEPS 50

typedef struct {
    int64_t graphs, kernels, drop;
    int64_t drop_rank;         /* -1: every rank drops */
    int64_t shorten;           /* 0: no replay recorded short */
    int64_t short_rank;        /* -1: every rank shortens */
    bool sync;
} gr_shape;

#define GR_CONTEXT_STREAM 4294967295u /* Kineto's stream of a Context Sync */

static int64_t launch_period(const gr_shape *g)
{
    return 20 + GR_KERNEL_STEP_US * g->kernels + 50;
}

static int64_t step_period(const gr_shape *g)
{
    return 100 + g->graphs * launch_period(g);
}

/* Rank r's trace; its launches, recorded replays, kernels and short
 * replays of the kept steps into counts. */
static void write_rank(const char *dir, const gr_shape *g, int64_t r, int64_t world,
                       int64_t steps, int64_t counts[4])
{
    char path[4096], name[64];
    FILE *f = tg_rank_trace_open(dir, r, world, path);
    bool first = true;
    int64_t corr = 1, launch = 0, replays = 0;
    for (int64_t s = 1; s <= steps + 1; s++) {
        int64_t b = GR_ORIGIN_US + (s - 1) * step_period(g);
        snprintf(name, sizeof name, "ProfilerStep#%" PRId64, s);
        tg_complete_event(f, &first, "user_annotation", name, b, step_period(g) - 10, -1, -1);
        if (g->sync) {
            tg_complete_event(f, &first, "cuda_runtime", "cudaLaunchKernel", b + 2, 5, corr, -1);
            tg_complete_event(f, &first, "kernel", "step_prologue", b + 4, 5, corr++, GR_STREAM);
        }
        for (int64_t k = 0; k < g->graphs; k++, corr++) {
            int64_t c = b + 10 + k * launch_period(g);
            bool drops = g->drop > 0 && (g->drop_rank < 0 || g->drop_rank == r);
            bool recorded = !drops || ++launch % g->drop != 0;
            snprintf(name, sizeof name, "graph%" PRId64 "::replay", k);
            tg_complete_event(f, &first, "cpu_op", name, c - 2, 14, -1, -1);
            bool shortens = g->shorten > 0 && (g->short_rank < 0 || g->short_rank == r);
            bool shortened = recorded && shortens && ++replays % g->shorten == 0;
            tg_complete_event(f, &first, "cuda_runtime", "cudaGraphLaunch", c, 10, corr, -1);
            for (int64_t j = 0; recorded && j < g->kernels; j++) {
                if (shortened && j == g->kernels / 2)
                    continue;
                snprintf(name, sizeof name, "graph%" PRId64 "_kernel%" PRId64, k, j);
                tg_complete_event(f, &first, "kernel", name, c + 20 + j * GR_KERNEL_STEP_US,
                                  GR_KERNEL_US, corr, GR_STREAM);
            }
            if (s <= steps) {
                counts[0]++;
                counts[1] += recorded;
                counts[2] += recorded ? g->kernels - shortened : 0;
                counts[3] += shortened;
            }
        }
        if (g->sync) {
            int64_t from = b + 10 + (g->graphs - 1) * launch_period(g) + 10;
            int64_t until = from + 10 + GR_KERNEL_STEP_US * g->kernels;
            tg_complete_event(f, &first, "cuda_runtime", "cudaDeviceSynchronize", from,
                              until - from, corr, -1);
            tg_complete_event(f, &first, "cuda_sync", "Context Sync", from, until - from, corr++,
                              GR_CONTEXT_STREAM);
        }
    }
    tg_rank_trace_close(f, path);
}

/* --graphs G:N and --graph-drop K out of argv (the rest stays for
 * tg_truth_job_parse). */
static int take_shape(int argc, char **argv, gr_shape *g)
{
    int kept = 1;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--graphs") && v) {
            char *end;
            g->graphs = strtoll(v, &end, 10);
            g->kernels = *end == ':' ? strtoll(end + 1, &end, 10) : 0;
            if (*end || g->graphs < 1 || g->graphs > GR_MAX_GRAPHS || g->kernels < 1 ||
                g->kernels > GR_MAX_KERNELS)
                tg_fail("invalid value for --graphs (want G:N, G <= 16, N <= 64): ", v);
            i++;
        } else if (!strcmp(argv[i], "--graph-short") && v) {
            char *end;
            g->shorten = strtoll(v, &end, 10);
            g->short_rank = *end == ':' ? strtoll(end + 1, &end, 10) : -1;
            if (*end || g->shorten < 2 || (g->short_rank < 0 && strchr(v, ':')))
                tg_fail("invalid value for --graph-short (want K or K:RANK, K >= 2): ", v);
            i++;
        } else if (!strcmp(argv[i], "--graph-sync")) {
            g->sync = true;
        } else if (!strcmp(argv[i], "--graph-drop") && v) {
            char *end;
            g->drop = strtoll(v, &end, 10);
            g->drop_rank = *end == ':' ? strtoll(end + 1, &end, 10) : -1;
            if (*end || g->drop < 1 || (g->drop_rank < 0 && strchr(v, ':')))
                tg_fail("invalid value for --graph-drop (want K or K:RANK): ", v);
            i++;
        } else {
            argv[kept++] = argv[i];
        }
    }
    return kept;
}

int tracegen_graphs_main(int argc, char **argv)
{
    gr_shape g = {.drop_rank = -1, .short_rank = -1};
    argc = take_shape(argc, argv, &g);
    if (g.graphs == 0)
        tg_fail("--graphs needs G:N", NULL);
    if (g.shorten && g.kernels < 2)
        tg_fail("--graph-short needs N >= 2 kernels per graph", NULL);
    tg_truth_job job = {.ranks = 2, .steps = 3};
    tg_truth_job_parse(&job, argc, argv, "--graphs", GR_MAX_RANKS, GR_MAX_STEPS);
    char path[4096];
    FILE *truth = tg_truth_open(&job, ".graphs_truth.json", path);
    for (int64_t r = 0; r < job.ranks; r++) {
        int64_t counts[4] = {0, 0, 0, 0};
        write_rank(job.dir, &g, r, job.ranks, job.steps, counts);
        fprintf(truth, "  \"%" PRId64 "\": {\"launches\": %" PRId64 ", \"recorded\": %" PRId64
                ", \"kernels\": %" PRId64 ", \"short\": %" PRId64 "}%s\n", r, counts[0],
                counts[1], counts[2], counts[3], r + 1 == job.ranks ? "" : ",");
    }
    fprintf(truth, "}, \"graphs\": {\n");
    for (int64_t k = 0; k < g.graphs; k++)
        fprintf(truth, "  \"graph%" PRId64 "_kernel0\": {\"span_us\": %" PRId64
                ", \"busy_us\": %" PRId64 ", \"kernels\": %" PRId64 "}%s\n", k,
                GR_KERNEL_STEP_US * g.kernels - 5, GR_KERNEL_US * g.kernels, g.kernels,
                k + 1 == g.graphs ? "" : ",");
    tg_truth_close(truth, path);
    return 0;
}
