/*
 * tracegen_chains.c -- hta-tracegen's critical-path layout
 * (hta-tracegen --critical-path-truth -o DIR [--ranks N] [--steps S]):
 * Kineto traces whose every step has a critical path known by
 * construction, with the answer written beside them.
 *
 * DESIGN
 *  Integer microseconds, one CPU thread, one stream, so that every
 *  expected value is exact.  Step s (1..S, then an S+1-th that the step
 *  filter drops, as HTA does) of rank r starts at b = ORIGIN + (s - 1) T
 *  (ProfilerStep#s, [b, b + T - 10)) and is one of three chains, by
 *  (r + s) mod 3:
 *   - data loading: an enumerate(DataLoader) range of L = 30000 + 1000 r +
 *     100 s at b+10, then aten::mm of M = 2000 + 10 s launching one 50 us
 *     kernel.  Path: the loader, a zero-weight dependency, the op:
 *     data_loading L, cpu_bound M.
 *   - a sync after the step's kernel: aten::mm [b+10, b+40) launches
 *     (cudaLaunchKernel at b+15) a kernel of K = 20000 + 500 r + 50 s at
 *     b+40; cudaDeviceSynchronize from b+50 until the kernel's end (its
 *     Context Sync), then aten::add of 20 us.  Path: mm's 5 us before the
 *     launch, launch -> kernel 25, the kernel, the sync, aten::add:
 *     gpu_compute_bound K, gpu_kernel_launch_overhead 25, cpu_bound 25.
 *   - launch bound: N = 100 + r + s rounds of a 5 us cudaLaunchKernel, its
 *     1 us kernel 40 us after the launch's start, and cudaStreamSynchronize
 *     until the kernel's end (its Stream Sync), every 45 us.  Path: per
 *     round launch -> kernel 40 and the kernel 1:
 *     gpu_kernel_launch_overhead 40 N, gpu_compute_bound N.
 *
 *  The truth (DIR.critical_path_truth.json, beside DIR so that DIR holds
 *  only traces): per rank and step, bound_by, path_us and the microseconds
 *  of each of HTA's six causes.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracegen_chains.h"
#include "tracegen_common.h"

#define CH_ORIGIN_US 1000000
#define CH_STEP_US 100000
#define CH_STREAM 7
#define CH_NO_STREAM 4294967295u
#define CH_MAX_RANKS 32        /* keeps the longest chain inside its step */
#define CH_MAX_STEPS 50

enum { B_CPU, B_DATA, B_COMPUTE, B_COMM, B_KK, B_LAUNCH, B_COUNT };
static const char *const BOUNDS[B_COUNT] = {
    "cpu_bound", "data_loading", "gpu_compute_bound", "gpu_communication_bound",
    "gpu_kernel_kernel_overhead", "gpu_kernel_launch_overhead"};
static const char DATALOADER[] = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";

/* A step's expected path: microseconds per cause. */
typedef struct {
    int64_t us[B_COUNT];
} ch_truth;

/* A CPU event; corr < 0: none. */
static void cpu(tg_rank_writer *k, const char *cat, const char *name, int64_t ts, int64_t dur,
                int64_t corr)
{
    char args[48] = "";
    if (corr >= 0)
        snprintf(args, sizeof args, "\"correlation\":%" PRId64, corr);
    tg_json_event(k->f, &k->first,
                  "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":100,\"tid\":1,"
                  "\"ts\":%" PRId64 ",\"dur\":%" PRId64 ",\"args\":{%s}}",
                  cat, name, ts, dur, args);
}

static void kernel(tg_rank_writer *k, const char *name, int64_t ts, int64_t dur, int64_t corr)
{
    tg_json_event(k->f, &k->first,
                  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":%d,"
                  "\"ts\":%" PRId64 ",\"dur\":%" PRId64 ",\"args\":{\"stream\":%d,"
                  "\"correlation\":%" PRId64 ",\"device\":0}}",
                  name, CH_STREAM, ts, dur, CH_STREAM, corr);
}

static void sync_event(tg_rank_writer *k, const char *name, int64_t ts, int64_t dur, int64_t corr,
                       uint32_t stream)
{
    tg_json_event(k->f, &k->first,
                  "{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"%s\",\"pid\":0,"
                  "\"tid\":%" PRIu32 ",\"ts\":%" PRId64 ",\"dur\":%" PRId64
                  ",\"args\":{\"stream\":%" PRIu32 ",\"correlation\":%" PRId64
                  ",\"device\":0,\"cuda_sync_kind\":\"%s\"}}",
                  name, stream, ts, dur, stream, corr, name);
}

/* One kernel launched from inside aten::mm; the chain: a long loader. */
static void data_loading_step(tg_rank_writer *k, int64_t r, int64_t s, int64_t b, ch_truth *t)
{
    int64_t load = 30000 + 1000 * r + 100 * s, mm = 2000 + 10 * s;
    cpu(k, "user_annotation", DATALOADER, b + 10, load, -1);
    int64_t at = b + 20 + load, c = k->next_corr++;
    cpu(k, "cpu_op", "aten::mm", at, mm, -1);
    cpu(k, "cuda_runtime", "cudaLaunchKernel", at + 100, 10, c);
    kernel(k, "gemm_kernel", at + 120, 50, c);
    t->us[B_DATA] = load;
    t->us[B_CPU] = mm;
}

/* One long kernel waited for by cudaDeviceSynchronize. */
static void synced_step(tg_rank_writer *k, int64_t r, int64_t s, int64_t b, ch_truth *t)
{
    int64_t dur = 20000 + 500 * r + 50 * s, c = k->next_corr++, c2 = k->next_corr++;
    cpu(k, "cpu_op", "aten::mm", b + 10, 30, -1);
    cpu(k, "cuda_runtime", "cudaLaunchKernel", b + 15, 10, c);
    kernel(k, "gemm_kernel", b + 40, dur, c);
    cpu(k, "cuda_runtime", "cudaDeviceSynchronize", b + 50, dur - 10, c2);
    sync_event(k, "Context Sync", b + 40 + dur - 5, 2, c2, CH_NO_STREAM);
    cpu(k, "cpu_op", "aten::add", b + 40 + dur + 100, 20, -1);
    t->us[B_COMPUTE] = dur;
    t->us[B_LAUNCH] = 25;
    t->us[B_CPU] = 5 + 20;
}

/* Rounds of a tiny kernel launched 40 us before it runs and waited for. */
static void launch_bound_step(tg_rank_writer *k, int64_t r, int64_t s, int64_t b, ch_truth *t)
{
    int64_t rounds = 100 + r + s, at = b + 10;
    for (int64_t i = 0; i < rounds; i++, at += 45) {
        int64_t c = k->next_corr++, c2 = k->next_corr++;
        cpu(k, "cuda_runtime", "cudaLaunchKernel", at, 5, c);
        kernel(k, "tiny_kernel", at + 40, 1, c);
        cpu(k, "cuda_runtime", "cudaStreamSynchronize", at + 6, 35, c2);
        sync_event(k, "Stream Sync", at + 40, 1, c2, CH_STREAM);
    }
    t->us[B_LAUNCH] = 40 * rounds;
    t->us[B_COMPUTE] = rounds;
}

static void write_truth_step(FILE *f, int64_t s, const ch_truth *t, bool last)
{
    int top = 0;
    int64_t path = 0;
    for (int b = 0; b < B_COUNT; b++) {
        path += t->us[b];
        top = t->us[b] > t->us[top] ? b : top;
    }
    fprintf(f, "    \"%" PRId64 "\": {\"bound_by\": \"%s\", \"path_us\": %" PRId64, s, BOUNDS[top],
            path);
    for (int b = 0; b < B_COUNT; b++)
        fprintf(f, ", \"%s_us\": %" PRId64, BOUNDS[b], t->us[b]);
    fprintf(f, "}%s\n", last ? "" : ",");
}

static void write_rank(tg_rank_writer *k, FILE *truth, int64_t r, const tg_truth_job *job,
                       const void *ctx)
{
    (void)ctx;
    fputs("{\n", truth);
    for (int64_t s = 1; s <= job->steps + 1; s++) {
        int64_t b = CH_ORIGIN_US + (s - 1) * CH_STEP_US;
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%" PRId64, s);
        cpu(k, "user_annotation", name, b, CH_STEP_US - 10, -1);
        ch_truth t = {{0}};
        int kind = (int)((r + s) % 3);
        if (kind == 0)
            data_loading_step(k, r, s, b, &t);
        else if (kind == 1)
            synced_step(k, r, s, b, &t);
        else
            launch_bound_step(k, r, s, b, &t);
        if (s <= job->steps)
            write_truth_step(truth, s, &t, s == job->steps);
    }
    fputs("  }", truth);
}

int tracegen_chains_main(int argc, char **argv)
{
    tg_truth_job job = {.ranks = 3, .steps = 3};
    tg_truth_job_parse(&job, argc, argv, "--critical-path-truth", CH_MAX_RANKS, CH_MAX_STEPS);
    tg_truth_run(&job, ".critical_path_truth.json", write_rank, NULL);
    return 0;
}
