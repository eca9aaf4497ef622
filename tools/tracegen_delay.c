/*
 * tracegen_delay.c -- hta-tracegen's delay-cost layout (hta-tracegen
 * --delay-truth -o DIR [--ranks N] [--steps S] [--delay-us X]
 * [--delay-in data-loading]): one rank delayed once (by X us, default
 * 1000; 0: the same job without it; in its gemm, or with --delay-in
 * data-loading in a DataLoader range before the gemm's launch),
 * before the first collective of a step, with a second collective
 * downstream through which its delay propagates; the truth written beside
 * the traces.
 *
 * DESIGN
 *  A discrete-event simulation in integer microseconds.  N = 2D ranks
 *  (N even, >= 4): tensor-parallel pairs {2i, 2i+1} (process group "1+i")
 *  and two data-parallel groups, the even and the odd ranks (groups
 *  "1+D", "2+D").  Step s (1..S, then an S+1-th that the step filter
 *  drops) starts at b on every rank (ProfilerStep#s, [b, b + T)):
 *   - gemm launched at b+10, runs [b+20, b+20+G+x), x = DELAY_US on rank
 *     DELAY_RANK in step DELAY_STEP, else 0;
 *   - the pair's all-reduce, launched at b+30, starts when the gemm ends
 *     and ends C1 after the pair's later start;
 *   - the data-parallel all-reduce, launched at b+50, starts when the
 *     pair's ends and ends C2 after the group's latest start;
 *   - cudaDeviceSynchronize from b+60 returns 20 after it, the step ends
 *     10 later.  Every rank's step ends together, so the next starts
 *     together.
 *  Without the delay every start ties: nobody waits.  With it, in the
 *  delayed step: the partner q waits x at the pair's all-reduce (the
 *  delayed rank r's direct cost x); r arrives last by x at its
 *  data-parallel all-reduce, where D-1 ranks wait x (direct, r waited
 *  nothing before); q arrives last by x at the other, where D-1 ranks
 *  wait x, and q had waited x before: propagated, charged to r.  So r's
 *  direct cost is D x, its propagated cost (D-1) x, in all (N-1) x, and
 *  every other (rank, step) costs nothing.
 *
 *  The truth (DIR.delay_truth.json): per rank, the steps that cost
 *  something, with direct_us and propagated_us.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tracegen_common.h"
#include "tracegen_delay.h"

#define DL_ORIGIN_US 1000000
#define DL_STREAM 7
#define DL_MAX_RANKS 64
#define DL_MAX_STEPS 50
#define DL_GEMM_US 3000
#define DL_PAIR_US 500
#define DL_DP_US 700
#define DL_DELAY_US 1000 /* the default of --delay-us */
#define DL_DELAY_RANK 2
#define DL_DELAY_STEP 2

/* The gemm's extra time on rank r in step s, the delay being x. */
static int64_t delay_of(int64_t r, int64_t s, int64_t x)
{
    return r == DL_DELAY_RANK && s == DL_DELAY_STEP ? x : 0;
}

/* An all-reduce of group gid (members text) from start to end, launched
 * at launch. */
static void put_allreduce(tg_rank_writer *k, int64_t launch, int64_t start, int64_t end, int gid,
                          int size, const char *desc, const char *members, int64_t seq)
{
    int64_t corr = k->next_corr++;
    tg_rank_put(k, "cuda_runtime", "cudaLaunchKernel", launch, 5, corr, -1);
    tg_json_event(
        k->f, &k->first,
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_f32_"
        "RING_LL(ncclDevKernelArgsStorage<4096ul>)\",\"pid\":0,\"tid\":%d,\"ts\":%" PRId64
        ",\"dur\":%" PRId64 ",\"args\":{\"stream\":%d,\"device\":0,\"correlation\":%" PRId64
        ",\"Collective name\":\"allreduce\",\"In msg nelems\":1048576,"
        "\"Out msg nelems\":1048576,\"Group size\":%d,\"dtype\":\"Float\","
        "\"In split size\":\"[]\",\"Out split size\":\"[]\","
        "\"Process Group Name\":\"%d\",\"Process Group Description\":\"%s\","
        "\"Process Group Ranks\":\"%s\",\"Seq\":%" PRId64 "}}",
        DL_STREAM, start, end - start, DL_STREAM, corr, size, 1 + gid, desc, members, seq);
}

/* "[a, b, ...]": the ranks from first to < n by stride. */
static void members_of(char *text, size_t room, int64_t first, int64_t n, int64_t stride)
{
    size_t at = (size_t)snprintf(text, room, "[");
    for (int64_t m = first; m < n && at < room; m += stride)
        at += (size_t)snprintf(text + at, room - at, "%s%" PRId64, m == first ? "" : ", ", m);
    if (at < room)
        snprintf(text + at, room - at, "]");
}

/* The delay: its length, and whether it is data loading (else compute). */
typedef struct delay {
    int64_t x;
    int loading;
} delay;

static const char DATALOADER[] = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";

/* The step of rank r from b; returns when it ends (the same on every rank). */
static int64_t write_step(tg_rank_writer *k, int64_t r, int64_t n, int64_t s, int64_t b,
                          const delay *dl)
{
    int64_t x = dl->x, d = n / 2, partner = r ^ 1;
    int64_t gemm_end = b + 20 + DL_GEMM_US + delay_of(r, s, x);
    int64_t pair_start = b + 20 + DL_GEMM_US + (delay_of(r, s, x) > delay_of(partner, s, x)
                                                     ? delay_of(r, s, x)
                                                     : delay_of(partner, s, x));
    int64_t pair_end = pair_start + DL_PAIR_US;
    int64_t late = DL_DELAY_STEP == s ? x : 0; /* every group's latest */
    int64_t dp_end = b + 20 + DL_GEMM_US + late + DL_PAIR_US + DL_DP_US;
    char name[48], pair[64], dp[8 * DL_MAX_RANKS];
    snprintf(name, sizeof name, "ProfilerStep#%" PRId64, s);
    tg_rank_put(k, "user_annotation", name, b, dp_end + 30 - b, -1, -1);
    int64_t loading = dl->loading ? delay_of(r, s, x) : 0;
    if (loading)
        tg_rank_put(k, "user_annotation", DATALOADER, b + 1, loading, -1, -1);
    tg_rank_put_kernel(k, "gemm", b + 10 + loading, b + 20 + loading,
                       gemm_end - (b + 20 + loading), DL_STREAM);
    members_of(pair, sizeof pair, r - r % 2, r - r % 2 + 2, 1);
    put_allreduce(k, b + 30 + loading, gemm_end, pair_end, (int)(r / 2), 2, "tensor_parallel",
                  pair, s);
    members_of(dp, sizeof dp, r % 2, n, 2);
    put_allreduce(k, b + 50 + loading, pair_end, dp_end, (int)(d + r % 2), (int)d,
                  "data_parallel", dp, s);
    tg_rank_put(k, "cuda_runtime", "cudaDeviceSynchronize", b + 60 + loading,
                dp_end + 20 - (b + 60 + loading), -1, -1);
    return dp_end + 30;
}

static void write_rank(tg_rank_writer *k, FILE *truth, int64_t r, const tg_truth_job *job,
                       const void *ctx)
{
    const delay *dl = ctx;
    int64_t x = dl->x, n = job->ranks, b = DL_ORIGIN_US;
    for (int64_t s = 1; s <= job->steps + 1; s++)
        b = write_step(k, r, n, s, b, dl);
    fputs("{", truth);
    if (r == DL_DELAY_RANK && DL_DELAY_STEP <= job->steps && x > 0)
        fprintf(truth, "\"%d\": {\"direct_us\": %" PRId64 ", \"propagated_us\": %" PRId64 "}",
                DL_DELAY_STEP, n / 2 * x, (n / 2 - 1) * x);
    fputs("}", truth);
}

/* Takes option (and its value) out of argv: the value, or NULL when
 * absent (the common options are parsed after). */
static const char *take_option(int *argc, char **argv, const char *option)
{
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], option))
            continue;
        const char *v = i + 1 < *argc ? argv[i + 1] : "";
        int gone = i + 1 < *argc ? 2 : 1;
        for (int j = i; j + gone <= *argc; j++)
            argv[j] = argv[j + gone];
        *argc -= gone;
        return v;
    }
    return NULL;
}

int tracegen_delay_main(int argc, char **argv)
{
    tg_truth_job job = {.ranks = 4, .steps = 3};
    delay dl = {DL_DELAY_US, 0};
    const char *x = take_option(&argc, argv, "--delay-us");
    const char *in = take_option(&argc, argv, "--delay-in");
    if (x)
        dl.x = !strcmp(x, "0") ? 0 : tg_json_count("--delay-us", x, 10000000);
    if (in && strcmp(in, "data-loading") && strcmp(in, "compute"))
        tg_fail("--delay-in takes compute or data-loading: ", in);
    dl.loading = in && !strcmp(in, "data-loading");
    tg_truth_job_parse(&job, argc, argv, "--delay-truth", DL_MAX_RANKS, DL_MAX_STEPS);
    if (job.ranks < 4 || job.ranks % 2)
        tg_fail("--delay-truth needs an even number of ranks, at least 4", "");
    tg_truth_run(&job, ".delay_truth.json", write_rank, &dl);
    return 0;
}
