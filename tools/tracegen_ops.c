/*
 * tracegen_ops.c -- hta-tracegen's ops / annotations / GPU gaps / memory
 * layout (hta-tracegen --ops-truth -o DIR [--ranks N] [--steps S]): Kineto
 * traces whose /ops, /annotations, /gpu_gaps, /sync_calls and /memory are
 * known by construction, with the answer written beside them.
 *
 * DESIGN
 *  Integer microseconds throughout, so every expected value is exact.
 *  Step s of rank r starts at b (ProfilerStep#s on the CPU, thread 1):
 *   - cpu_op model.forward [b, b+400) holds aten::linear [b+10, b+110)
 *     and [b+120, b+220) and aten::relu [b+230, b+280), each launching one
 *     kernel (at +10); the kernels run back to back from b+100 on stream 7
 *     (linear DL = 100 + 10 r us, relu DR = 40 + 5 r), inside the GPU
 *     annotation "forward" holding the shorter "linear_block" over the two
 *     linear kernels: linear_block gets 2 DL of kernel time, forward DR.
 *   - then four GPU gaps of G_i = 2000 + 100 r + 10 i + s us (i = 1..4),
 *     each closed by a 50 us kernel and each with one cause (HTA-mpi's
 *     rules, docs/definitions.md): 1 sync (cudaDeviceSynchronize on even
 *     steps, cudaStreamSynchronize on odd ones, from 50 us before the gap
 *     to 50 us before its end), 2 dataloader (an enumerate(DataLoader)
 *     range inside the gap), 3 cpu_op (aten::slow_cpu covers most of the
 *     gap, then aten::mm launches the kernel), 4 launch_delay (aten::add
 *     launches it 15 us before the gap ends).
 *   - the next step starts 50 us after the last kernel's start, so the gap
 *     between steps is 100 us: below the default threshold of 1 ms.
 *  Memory: per step on GPU 0 an allocation of X_s = (s + 1) (r + 1) MiB at
 *  b+15 (Total Allocated = B + X_s, B = (r + 1) GiB, Total Reserved
 *  2 (B + X_s)) and its free at b+300; one CPU sample (device -1) per trace.
 *
 *  The truth (DIR.ops_truth.json, beside DIR so that DIR holds only traces):
 *  per rank, the /kernel_sequences patterns under four option sets; per op
 *  name calls, gpu_events, gpu_busy_sum_us, cpu_time_us and the mean
 *  op-to-launch and launch-to-kernel delays; per annotation count, sum_us,
 *  gpu_events, gpu_event_time_us, cpu_count (and cpu_sum_us of the CPU-only
 *  DataLoader range); every gap with step, start, duration, cause, launch
 *  delay, sync call and the CPU event overlapping it most; per sync API
 *  count, total, max and GPU idle time; per device the memory samples,
 *  allocations, frees, peaks with their times and the last allocated value.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracegen_common.h"
#include "tracegen_ops.h"

#define OPS_ORIGIN_US 1000000
#define OPS_STREAM 7
#define OPS_KERNEL_TAIL 50
#define OPS_MAX_STEPS 1000

enum { OP_FORWARD, OP_LINEAR, OP_RELU, OP_SLOW, OP_MM, OP_ADD, OP_COUNT };
static const char *const OP_NAMES[OP_COUNT] = {"model.forward", "aten::linear", "aten::relu",
                                               "aten::slow_cpu", "aten::mm", "aten::add"};
static const char *const SYNC_APIS[2] = {"cudaDeviceSynchronize", "cudaStreamSynchronize"};
static const char *const CAUSES[4] = {"sync", "dataloader", "cpu_op", "launch_delay"};
static const char DATALOADER[] = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";

typedef struct {
    int64_t calls, gpu_events, gpu_busy, cpu_time, op_to_launch, launch_to_kernel;
} ops_op_truth;

typedef struct {
    int64_t step, start, duration, launch_delay, cpu_overlap;
    int cause;
    const char *cpu_event;
} ops_gap_truth;

typedef struct {
    int64_t count, total, max, idle;
} ops_sync_truth;

/* One rank's trace being written and the answer it must give. */
typedef struct {
    FILE *f;
    bool first_event;
    int64_t next_corr;
    ops_op_truth op[OP_COUNT];
    int64_t linear_block_sum, forward_sum, linear_block_kernels, forward_kernels;
    int64_t dataloader_sum;
    ops_gap_truth *gaps;
    int64_t n_gaps;
    ops_sync_truth sync[2];
    int64_t mem_peak_alloc, mem_peak_alloc_at, mem_peak_res, mem_peak_res_at, mem_last;
} ops_rank;

static void cpu_event(ops_rank *k, const char *cat, const char *name, int64_t ts, int64_t dur)
{
    tg_json_event(k->f, &k->first_event,
                  "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%" PRId64
                  ",\"dur\":%" PRId64 ",\"args\":{}}",
                  cat, name, ts, dur);
}

static void op_call(ops_rank *k, int op, int64_t ts, int64_t dur)
{
    cpu_event(k, "cpu_op", OP_NAMES[op], ts, dur);
    k->op[op].calls++;
    k->op[op].cpu_time += dur;
}

/* A cudaLaunchKernel of 5 us at launch_ts and its kernel; returns its end. */
static int64_t launch_kernel(ops_rank *k, const char *name, int64_t launch_ts, int64_t ts,
                             int64_t dur)
{
    int64_t corr = k->next_corr++;
    tg_json_event(k->f, &k->first_event,
                  "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
                  "\"tid\":1,\"ts\":%" PRId64 ",\"dur\":5,\"args\":{\"correlation\":%" PRId64 "}}",
                  launch_ts, corr);
    tg_json_event(
        k->f, &k->first_event,
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":%d,\"ts\":%" PRId64
        ",\"dur\":%" PRId64 ",\"args\":{\"stream\":%d,\"correlation\":%" PRId64 ",\"device\":0}}",
        name, OPS_STREAM, ts, dur, OPS_STREAM, corr);
    return ts + dur;
}

static void gpu_annotation(ops_rank *k, const char *name, int64_t ts, int64_t dur)
{
    tg_json_event(
        k->f, &k->first_event,
        "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"%s\",\"pid\":0,\"tid\":%d,"
        "\"ts\":%" PRId64 ",\"dur\":%" PRId64 ",\"args\":{}}",
        name, OPS_STREAM, ts, dur);
}

static void memory_sample(ops_rank *k, int64_t ts, int64_t allocated, int64_t reserved,
                          int64_t bytes, int device, int device_type)
{
    tg_json_event(k->f, &k->first_event,
                  "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"[memory]\","
                  "\"pid\":1,\"tid\":1,\"ts\":%" PRId64 ",\"args\":{\"Total Reserved\":%" PRId64
                  ",\"Total Allocated\":%" PRId64 ",\"Bytes\":%" PRId64 ",\"Addr\":%" PRId64
                  ",\"Device Id\":%d,\"Device Type\":%d}}",
                  ts, reserved, allocated, bytes, 0x7f0000000000 + allocated, device, device_type);
}

/* A call of op launching one kernel of its own; returns the kernel's end. */
static int64_t op_launch(ops_rank *k, int op, int64_t op_ts, int64_t op_dur, const char *kernel,
                         int64_t launch_ts, int64_t ts, int64_t dur)
{
    op_call(k, op, op_ts, op_dur);
    k->op[op].gpu_events++;
    k->op[op].gpu_busy += dur;
    k->op[op].op_to_launch += launch_ts - op_ts;
    k->op[op].launch_to_kernel += ts - launch_ts;
    return launch_kernel(k, kernel, launch_ts, ts, dur);
}

static int64_t write_forward(ops_rank *k, int64_t r, int64_t b)
{
    int64_t dl = 100 + 10 * r, dr = 40 + 5 * r;
    op_call(k, OP_FORWARD, b, 400);
    int64_t t = op_launch(k, OP_LINEAR, b + 10, 100, "gemm_linear", b + 20, b + 100, dl);
    t = op_launch(k, OP_LINEAR, b + 120, 100, "gemm_linear", b + 130, t, dl);
    t = op_launch(k, OP_RELU, b + 230, 50, "relu_kernel", b + 240, t, dr);
    gpu_annotation(k, "forward", b + 100, 2 * dl + dr);
    gpu_annotation(k, "linear_block", b + 100, 2 * dl);
    k->forward_sum += 2 * dl + dr;
    k->linear_block_sum += 2 * dl;
    k->forward_kernels++;
    k->linear_block_kernels += 2;
    return t;
}

/* A gap and the CPU event on thread 1 that overlaps it most. */
static void add_gap(ops_rank *k, int64_t step, int64_t start, int64_t dur, int cause,
                    int64_t launch_delay, const char *cpu_event, int64_t cpu_overlap)
{
    k->gaps[k->n_gaps++] =
        (ops_gap_truth){step, start, dur, launch_delay, cpu_overlap, cause, cpu_event};
}

/* The four gaps after the forward kernels ending at t; returns the end of
 * the last kernel. */
static int64_t write_gaps(ops_rank *k, int64_t r, int64_t s, int64_t b, int64_t t)
{
    int64_t g[5];
    for (int i = 1; i <= 4; i++)
        g[i] = 2000 + 100 * r + 10 * i + s;

    int api = (int)(s % 2);
    cpu_event(k, "cuda_runtime", SYNC_APIS[api], t - 50, g[1]);
    ops_sync_truth *sy = &k->sync[api];
    sy->count++;
    sy->total += g[1];
    sy->max = g[1] > sy->max ? g[1] : sy->max;
    sy->idle += g[1] - 50;
    add_gap(k, s, t, g[1], 0, 35, OP_NAMES[OP_FORWARD], b + 400 - t);
    t = launch_kernel(k, "sync_kernel", t + g[1] - 40, t + g[1], OPS_KERNEL_TAIL);

    cpu_event(k, "user_annotation", DATALOADER, t + 50, g[2] - 150);
    k->dataloader_sum += g[2] - 150;
    add_gap(k, s, t, g[2], 1, 45, DATALOADER, g[2] - 150);
    t = launch_kernel(k, "data_kernel", t + g[2] - 50, t + g[2], OPS_KERNEL_TAIL);

    op_call(k, OP_SLOW, t + 20, g[3] - 50);
    add_gap(k, s, t, g[3], 2, 15, OP_NAMES[OP_SLOW], g[3] - 50);
    t = op_launch(k, OP_MM, t + g[3] - 25, 20, "mm_kernel", t + g[3] - 20, t + g[3],
                  OPS_KERNEL_TAIL);

    add_gap(k, s, t, g[4], 3, 10, OP_NAMES[OP_ADD], 15);
    t = op_launch(k, OP_ADD, t + g[4] - 20, 15, "add_kernel", t + g[4] - 15, t + g[4],
                  OPS_KERNEL_TAIL);
    return t;
}

static void write_memory(ops_rank *k, int64_t r, int64_t s, int64_t b)
{
    int64_t base = (r + 1) << 30, x = (s + 1) * (r + 1) << 20;
    memory_sample(k, b + 15, base + x, 2 * (base + x), x, 0, 1);
    memory_sample(k, b + 300, base, 2 * (base + x), -x, 0, 1);
    if (base + x > k->mem_peak_alloc) {
        k->mem_peak_alloc = base + x;
        k->mem_peak_alloc_at = b + 15;
    }
    if (2 * (base + x) > k->mem_peak_res) {
        k->mem_peak_res = 2 * (base + x);
        k->mem_peak_res_at = b + 15;
    }
    k->mem_last = base;
}

static void write_rank_trace(ops_rank *k, int64_t r, int64_t world, int64_t steps)
{
    fprintf(k->f, "{\"distributedInfo\":{\"rank\":%" PRId64 ",\"world_size\":%" PRId64 "},"
                  "\"traceEvents\":[", r, world);
    int64_t b = OPS_ORIGIN_US + 7 * r;
    memory_sample(k, b + 1, 4096, 8192, 4096, -1, 0);
    for (int64_t s = 0; s < steps; s++) {
        int64_t t = write_forward(k, r, b);
        write_memory(k, r, s, b);
        int64_t last_start = write_gaps(k, r, s, b, t) - OPS_KERNEL_TAIL;
        int64_t next = last_start + 50;
        char name[48];
        snprintf(name, sizeof name, "ProfilerStep#%" PRId64, s);
        cpu_event(k, "user_annotation", name, b, next - b);
        b = next;
    }
    fputs("\n]}\n", k->f);
}

/* One /kernel_sequences pattern: `calls` roots of op, each with the kernels
 * named in `kernels` (its own and its children's, by start). */
static void sequence_pattern(FILE *f, bool first, int op, const char *kernels, int n_kernels,
                             int64_t calls, int64_t gpu_time, int64_t cpu_time)
{
    fprintf(f, "%s\n          \"%s|%s\": {\"op\": \"%s\", \"n_kernels\": %d, \"count\": %" PRId64
               ", \"gpu_time_us\": %" PRId64 ", \"cpu_time_us\": %" PRId64 "}",
            first ? "" : ",", OP_NAMES[op], kernels, OP_NAMES[op], n_kernels, calls, gpu_time,
            cpu_time);
}

/* /kernel_sequences under four option sets: by default only model.forward
 * has the 3 kernels a pattern needs; matching aten::(linear|mm|add) takes
 * the shallowest matches, mm and add, not the nested linear; --sequence-top
 * 1 keeps the first of two equally frequent patterns by name; matching
 * linear alone takes the nested op. */
static void write_sequence_truth(FILE *f, const ops_rank *k)
{
    const ops_op_truth *fw = &k->op[OP_FORWARD], *lin = &k->op[OP_LINEAR],
                       *relu = &k->op[OP_RELU], *mm = &k->op[OP_MM], *add = &k->op[OP_ADD];
    fputs("    \"kernel_sequences\": [\n      {\"args\": [], \"patterns\": {", f);
    sequence_pattern(f, true, OP_FORWARD, "gemm_linear|gemm_linear|relu_kernel", 3, fw->calls,
                     lin->gpu_busy + relu->gpu_busy, fw->cpu_time);
    fputs("}},\n      {\"args\": [\"--min-pattern-len\", \"1\", \"--sequence-op\", "
          "\"aten::(linear|mm|add)\"], \"patterns\": {", f);
    sequence_pattern(f, true, OP_MM, "mm_kernel", 1, mm->calls, mm->gpu_busy, mm->cpu_time);
    sequence_pattern(f, false, OP_ADD, "add_kernel", 1, add->calls, add->gpu_busy,
                     add->cpu_time);
    fputs("}},\n      {\"args\": [\"--min-pattern-len\", \"1\", \"--sequence-op\", "
          "\"aten::(linear|mm|add)\", \"--sequence-top\", \"1\"], \"patterns\": {", f);
    sequence_pattern(f, true, OP_ADD, "add_kernel", 1, add->calls, add->gpu_busy,
                     add->cpu_time);
    fputs("}},\n      {\"args\": [\"--min-pattern-len\", \"1\", \"--sequence-op\", "
          "\"linear\"], \"patterns\": {", f);
    sequence_pattern(f, true, OP_LINEAR, "gemm_linear", 1, lin->calls, lin->gpu_busy,
                     lin->cpu_time);
    fputs("}}],\n", f);
}

static void write_rank_truth(FILE *f, const ops_rank *k, int64_t r, bool last)
{
    fprintf(f, "  \"%" PRId64 "\": {\n    \"ops\": {", r);
    for (int o = 0; o < OP_COUNT; o++) {
        const ops_op_truth *op = &k->op[o];
        fprintf(f, "%s\n      \"%s\": {\"calls\": %" PRId64 ", \"gpu_events\": %" PRId64
                   ", \"gpu_busy_sum_us\": %" PRId64 ", \"cpu_time_us\": %" PRId64,
                o ? "," : "", OP_NAMES[o], op->calls, op->gpu_events, op->gpu_busy,
                op->cpu_time);
        if (op->gpu_events) /* one kernel per call with any */
            fprintf(f, ", \"op_to_launch_mean_us\": %.6f, \"launch_to_kernel_mean_us\": %.6f}",
                    (double)op->op_to_launch / (double)op->gpu_events,
                    (double)op->launch_to_kernel / (double)op->gpu_events);
        else
            fputs(", \"op_to_launch_mean_us\": null, \"launch_to_kernel_mean_us\": null}", f);
    }
    int64_t steps = k->n_gaps / 4;
    fprintf(f, "},\n    \"annotations\": {\n"
               "      \"forward\": {\"count\": %" PRId64 ", \"sum_us\": %" PRId64
               ", \"gpu_events\": %" PRId64 ", \"gpu_event_time_us\": %" PRId64
               ", \"cpu_count\": 0},\n"
               "      \"linear_block\": {\"count\": %" PRId64 ", \"sum_us\": %" PRId64
               ", \"gpu_events\": %" PRId64 ", \"gpu_event_time_us\": %" PRId64
               ", \"cpu_count\": 0},\n"
               "      \"%s\": {\"count\": 0, \"gpu_events\": 0, \"cpu_count\": %" PRId64
               ", \"cpu_sum_us\": %" PRId64 "}},\n",
            steps, k->forward_sum, k->forward_kernels, steps * (40 + 5 * r), steps,
            k->linear_block_sum, k->linear_block_kernels, k->linear_block_sum, DATALOADER, steps,
            k->dataloader_sum);
    write_sequence_truth(f, k);
    fputs("    \"gaps\": [", f);
    for (int64_t i = 0; i < k->n_gaps; i++) {
        const ops_gap_truth *g = &k->gaps[i];
        fprintf(f, "%s\n      {\"step\": %" PRId64 ", \"start_us\": %" PRId64
                   ", \"duration_us\": %" PRId64 ", \"cause\": \"%s\", \"launch_delay_us\": %"
                   PRId64 ", \"sync_call\": \"%s\", \"cpu_event\": \"%s\""
                   ", \"cpu_event_overlap_us\": %" PRId64 "}",
                i ? "," : "", g->step, g->start, g->duration, CAUSES[g->cause],
                g->launch_delay, g->cause == 0 ? SYNC_APIS[g->step % 2] : "", g->cpu_event,
                g->cpu_overlap);
    }
    fputs("],\n    \"sync_calls\": {", f);
    bool first = true;
    for (int a = 0; a < 2; a++) {
        const ops_sync_truth *sy = &k->sync[a];
        if (!sy->count)
            continue;
        fprintf(f, "%s\n      \"%s\": {\"count\": %" PRId64 ", \"total_us\": %" PRId64
                   ", \"max_us\": %" PRId64 ", \"gpu_idle_us\": %" PRId64 "}",
                first ? "" : ",", SYNC_APIS[a], sy->count, sy->total, sy->max, sy->idle);
        first = false;
    }
    fprintf(f, "},\n    \"memory\": [\n"
               "      {\"device_type\": 0, \"device\": -1, \"samples\": 1, \"allocations\": 1,"
               " \"frees\": 0, \"peak_allocated_bytes\": 4096, \"peak_allocated_at_us\": %" PRId64
               ", \"peak_reserved_bytes\": 8192, \"peak_reserved_at_us\": %" PRId64
               ", \"last_allocated_bytes\": 4096},\n"
               "      {\"device_type\": 1, \"device\": 0, \"samples\": %" PRId64
               ", \"allocations\": %" PRId64 ", \"frees\": %" PRId64
               ", \"peak_allocated_bytes\": %" PRId64 ", \"peak_allocated_at_us\": %" PRId64
               ", \"peak_reserved_bytes\": %" PRId64 ", \"peak_reserved_at_us\": %" PRId64
               ", \"last_allocated_bytes\": %" PRId64 "}]\n  }%s\n",
            OPS_ORIGIN_US + 7 * r + 1, OPS_ORIGIN_US + 7 * r + 1, 2 * steps, steps, steps,
            k->mem_peak_alloc, k->mem_peak_alloc_at, k->mem_peak_res, k->mem_peak_res_at,
            k->mem_last, last ? "" : ",");
}

int tracegen_ops_main(int argc, char **argv)
{
    tg_truth_job job = {.ranks = 2, .steps = 3};
    tg_truth_job_parse(&job, argc, argv, "--ops-truth", 4096, OPS_MAX_STEPS);
    char truth_path[4096], path[4096];
    FILE *truth = tg_truth_open(&job, ".ops_truth.json", truth_path);
    for (int64_t r = 0; r < job.ranks; r++) {
        ops_rank k = {.first_event = true, .next_corr = 1};
        k.gaps = calloc((size_t)(4 * job.steps), sizeof *k.gaps);
        snprintf(path, sizeof path, "%s/rank-%" PRId64 ".json", job.dir, r);
        k.f = fopen(path, "w");
        if (!k.f || !k.gaps)
            tg_fail("cannot write ", path);
        write_rank_trace(&k, r, job.ranks, job.steps);
        if (fclose(k.f))
            tg_fail("write failed: ", path);
        write_rank_truth(truth, &k, r, r + 1 == job.ranks);
        free(k.gaps);
    }
    tg_truth_close(truth, truth_path);
    return 0;
}
