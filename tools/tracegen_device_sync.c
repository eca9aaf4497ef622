/*
 * tracegen_device_sync.c -- hta-tracegen's device-synchronize layout
 * (hta-tracegen --device-sync-truth -o DIR [--ranks N] [--steps S]): a job
 * that synchronises the device in every step, so that its synchronisation
 * records (cuda_sync, host waits drawn on the GPU's row) cover GPU idle
 * time, with the truth written beside the traces.
 *
 * DESIGN
 *  Integer microseconds, one CPU thread, one stream.  Step s (1..S, then
 *  an S+1-th that the step filter drops) of rank r starts at
 *  b = ORIGIN + (s - 1) T (ProfilerStep#s, [b, b + T - 10)):
 *   - cudaLaunchKernel at b+10 (5 us) launches gemm_fwd, which runs
 *     [b+20, b+20+F), F = 3000 + 100 r + 10 s;
 *   - cudaDeviceSynchronize from b+30 returns at R = b+20+F+W, W = 500 +
 *     50 s after the kernel ends (the host's wake-up: the GPU is idle);
 *     its Context Sync record spans the whole wait, [b+30, R);
 *   - cudaLaunchKernel at R (5 us) launches gemm_bwd, which runs
 *     [R+5, R+5+B), B = 2000 + 10 s.
 *  The step's GPU work is F + B; its GPU span (first start to last end of
 *  that work) holds W + 5 us of idle, of which the Context Sync record
 *  covers all but the last 5 (HTA's rule, the record a GPU event, leaves
 *  idle 5).  Between steps the GPU is idle from gemm_bwd's end to the next
 *  gemm_fwd's start.
 *
 *  The truth (DIR.device_sync_truth.json, beside DIR so that DIR holds
 *  only traces): per rank, per kept step gpu_busy_us, idle_us and
 *  hta_rule_idle_us, and the rank's GPU idle over the kept steps' work
 *  (gaps between consecutive work, within and between steps) and its
 *  work span.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tracegen_common.h"
#include "tracegen_device_sync.h"

#define DS_ORIGIN_US 1000000
#define DS_STEP_US 20000
#define DS_STREAM 7
#define DS_CONTEXT_STREAM 4294967295u /* Kineto's stream of a Context Sync */
#define DS_MAX_RANKS 32        /* keeps a step's work inside its step */
#define DS_MAX_STEPS 50

/* A step's GPU work: [fwd_start, fwd_end) and [bwd_start, bwd_end). */
typedef struct {
    int64_t fwd_start, fwd_end, wait_end, bwd_start, bwd_end;
} ds_step;

static ds_step write_step(tg_rank_writer *k, int64_t r, int64_t s, int64_t b)
{
    int64_t fwd = 3000 + 100 * r + 10 * s, wake = 500 + 50 * s, bwd = 2000 + 10 * s;
    ds_step t = {.fwd_start = b + 20, .fwd_end = b + 20 + fwd};
    t.wait_end = t.fwd_end + wake;
    t.bwd_start = t.wait_end + 5;
    t.bwd_end = t.bwd_start + bwd;
    char name[32];
    snprintf(name, sizeof name, "ProfilerStep#%" PRId64, s);
    tg_rank_put(k, "user_annotation", name, b, DS_STEP_US - 10, -1, -1);
    int64_t launch = k->next_corr++, sync = k->next_corr++, launch2 = k->next_corr++;
    tg_rank_put(k, "cuda_runtime", "cudaLaunchKernel", b + 10, 5, launch, -1);
    tg_rank_put(k, "kernel", "gemm_fwd", t.fwd_start, fwd, launch, DS_STREAM);
    int64_t wait = t.wait_end - (b + 30);
    tg_rank_put(k, "cuda_runtime", "cudaDeviceSynchronize", b + 30, wait, sync, -1);
    tg_rank_put(k, "cuda_sync", "Context Sync", b + 30, wait, sync, DS_CONTEXT_STREAM);
    tg_rank_put(k, "cuda_runtime", "cudaLaunchKernel", t.wait_end, 5, launch2, -1);
    tg_rank_put(k, "kernel", "gemm_bwd", t.bwd_start, bwd, launch2, DS_STREAM);
    return t;
}

static void write_rank(tg_rank_writer *k, FILE *truth, int64_t r, const tg_truth_job *job,
                       const void *ctx)
{
    (void)ctx;
    int64_t steps = job->steps;
    fputs("{\"steps\": {\n", truth);
    int64_t idle = 0, first = 0, previous_end = 0;
    for (int64_t s = 1; s <= steps + 1; s++) {
        ds_step t = write_step(k, r, s, DS_ORIGIN_US + (s - 1) * DS_STEP_US);
        if (s > steps)
            continue;
        int64_t inside = t.bwd_start - t.fwd_end;
        fprintf(truth, "    \"%" PRId64 "\": {\"gpu_busy_us\": %" PRId64 ", \"idle_us\": %" PRId64
                ", \"hta_rule_idle_us\": %" PRId64 "}%s\n", s,
                (t.fwd_end - t.fwd_start) + (t.bwd_end - t.bwd_start), inside,
                t.bwd_start - t.wait_end, s == steps ? "" : ",");
        idle += inside + (s > 1 ? t.fwd_start - previous_end : 0);
        first = s == 1 ? t.fwd_start : first;
        previous_end = t.bwd_end;
    }
    fprintf(truth, "  }, \"gpu_idle_us\": %" PRId64 ", \"work_span_us\": %" PRId64 "}", idle,
            previous_end - first);
}

int tracegen_device_sync_main(int argc, char **argv)
{
    tg_truth_job job = {.ranks = 2, .steps = 3};
    tg_truth_job_parse(&job, argc, argv, "--device-sync-truth", DS_MAX_RANKS, DS_MAX_STEPS);
    tg_truth_run(&job, ".device_sync_truth.json", write_rank, NULL);
    return 0;
}
