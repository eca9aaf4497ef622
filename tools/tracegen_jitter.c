/*
 * tracegen_jitter.c -- hta-tracegen's step-time jitter layout
 * (hta-tracegen --jitter-data-loading-truth | --jitter-compute-truth -o DIR
 * [--ranks N] [--steps S]): steps whose time varies through one component
 * only, with the truth written beside the traces.
 *
 * DESIGN
 *  Integer microseconds, one CPU thread, one stream.  Step s (1..S, then
 *  an S+1-th that the step filter drops) starts at b, where the previous
 *  step ended (ProfilerStep#s, [b, b + T)); every rank has the same steps,
 *  so no rank waits for another:
 *   - enumerate(DataLoader)#...__next__ at b+10, L us long;
 *   - at c = b+20+L, three cudaLaunchKernel (5 us each, at c, c+20,
 *     c+40) launch gemm_a, which runs [c+10, c+10+A), gemm_b right after
 *     it (B us) and the all-reduce kernel right after that (C us): the GPU
 *     never idles inside the step;
 *   - cudaDeviceSynchronize from c+50 returns 20 us after the all-reduce
 *     ends, and the step ends 10 us later.
 *  So T = L + A + B + C + 70.  One of L (--jitter-data-loading-truth) or
 *  A (--jitter-compute-truth) is its base plus J(s), a hash of the step in
 *  [0, 800) us; everything else is constant.  All the variance of T is
 *  then the data loading's, or the compute's.
 *
 *  The truth (DIR.jitter_truth.json): per rank, per kept step, step_time_us,
 *  data_loading_us and compute_us.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tracegen_common.h"
#include "tracegen_jitter.h"

#define JT_ORIGIN_US 1000000
#define JT_STREAM 7
#define JT_MAX_RANKS 64
#define JT_MAX_STEPS 200
#define JT_LOADING_US 1000
#define JT_GEMM_A_US 2000
#define JT_GEMM_B_US 1500
#define JT_ALLREDUCE_US 800
#define JT_SPREAD_US 800

/* The jitter of step s, the same on every rank: [0, JT_SPREAD_US). */
static int64_t jitter(int64_t s)
{
    return (int64_t)(tg_mix64((uint64_t)s * 7919u) % JT_SPREAD_US);
}

typedef struct {
    int64_t loading, gemm_a, time;
} jt_step;

/* Writes step s from b; returns its parts. */
static jt_step write_step(tg_rank_writer *k, int64_t s, int64_t b, bool in_loading)
{
    jt_step t = {JT_LOADING_US + (in_loading ? jitter(s) : 0),
                 JT_GEMM_A_US + (in_loading ? 0 : jitter(s)), 0};
    int64_t c = b + 20 + t.loading, a_end = c + 10 + t.gemm_a;
    int64_t b_end = a_end + JT_GEMM_B_US, ar_end = b_end + JT_ALLREDUCE_US;
    t.time = ar_end + 30 - b;
    char name[48];
    snprintf(name, sizeof name, "ProfilerStep#%" PRId64, s);
    tg_rank_put(k, "user_annotation", name, b, t.time, -1, -1);
    tg_rank_put(k, "cpu_op", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                b + 10, t.loading, -1, -1);
    tg_rank_put_kernel(k, "gemm_a", c, c + 10, t.gemm_a, JT_STREAM);
    tg_rank_put_kernel(k, "gemm_b", c + 20, a_end, JT_GEMM_B_US, JT_STREAM);
    tg_rank_put_kernel(k, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", c + 40, b_end,
                       JT_ALLREDUCE_US, JT_STREAM);
    tg_rank_put(k, "cuda_runtime", "cudaDeviceSynchronize", c + 50, ar_end + 20 - (c + 50), -1,
                -1);
    return t;
}

/* ctx: whether the jitter is in the data loading (else in gemm_a). */
static void write_rank(tg_rank_writer *k, FILE *truth, int64_t r, const tg_truth_job *job,
                       const void *ctx)
{
    (void)r;
    bool in_loading = *(const bool *)ctx;
    fputs("{\n", truth);
    int64_t b = JT_ORIGIN_US;
    for (int64_t s = 1; s <= job->steps + 1; s++) {
        jt_step t = write_step(k, s, b, in_loading);
        b += t.time;
        if (s <= job->steps)
            fprintf(truth, "    \"%" PRId64 "\": {\"step_time_us\": %" PRId64
                    ", \"data_loading_us\": %" PRId64 ", \"compute_us\": %" PRId64 "}%s\n",
                    s, t.time, t.loading, t.gemm_a + JT_GEMM_B_US, s == job->steps ? "" : ",");
    }
    fputs("  }", truth);
}

int tracegen_jitter_main(int argc, char **argv)
{
    bool in_loading = false;
    const char *flag = "--jitter-compute-truth";
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--jitter-data-loading-truth")) {
            in_loading = true;
            flag = argv[i];
        }
    tg_truth_job job = {.ranks = 2, .steps = 20};
    tg_truth_job_parse(&job, argc, argv, flag, JT_MAX_RANKS, JT_MAX_STEPS);
    tg_truth_run(&job, ".jitter_truth.json", write_rank, &in_loading);
    return 0;
}
