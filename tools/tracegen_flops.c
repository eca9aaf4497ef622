/*
 * tracegen_flops.c -- hta-tracegen's op performance layout
 * (hta-tracegen --flops-truth -o DIR [--ranks N] [--steps S]
 * [--slow-rank R:F] [--device NAME]): GEMM, convolution and attention ops
 * whose FLOPs, bytes and kernel times make every rate of /op_perf a
 * closed form (tests/test_op_perf.py holds them).
 *
 * DESIGN
 *  Each step (ProfilerStep#s, 1 ms apart) runs the ops of SHAPES in order,
 *  100 us apart on thread 1, each a cpu_op of 50 us launching one kernel
 *  (10 us after the op starts, stream 7) of the shape's duration, times F
 *  on rank R (--slow-rank: the same work on a slower GPU).  The shapes
 *  give round FLOP counts: a 1000^3 bf16 mm is 2e9 FLOPs, in 4 us 500
 *  TFLOPS.  Besides the sized ops: aten::linear wraps the addmm and
 *  launches nothing itself (no row: its work is the addmm's), and
 *  aten::_scaled_mm launches a kernel but has no layout (an unsized call).
 *  deviceProperties names NAME (default "NVIDIA H100 80GB HBM3"; an
 *  empty NAME leaves deviceProperties out).  Times are whole nanoseconds,
 *  written in microseconds with three decimals as Kineto does.
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
#include "tracegen_flops.h"

#define FL_ORIGIN_NS INT64_C(1000000000)
#define FL_STEP_NS INT64_C(1000000)
#define FL_OP_GAP_NS INT64_C(100000)
#define FL_OP_NS INT64_C(50000)
#define FL_STREAM 7
#define FL_MAX_STEPS 1000

typedef struct fl_shape {
    const char *name, *dims, *types, *concrete;
    int64_t kernel_ns;         /* on a rank at full speed */
    const char *wrapper;       /* a cpu_op around it without GPU work, or NULL */
} fl_shape;

/* The start of an Input type list of three bf16 tensors. */
#define BF16_3 "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\""

static const fl_shape SHAPES[] = {
    /* 2 x 1000^3 = 2e9 FLOPs in 4 us: 500 TFLOPS. */
    {"aten::mm", "[[1000, 1000], [1000, 1000]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]",
     "[\"\", \"\"]", 4000, NULL},
    /* A matrix times a vector: 2e6 FLOPs, (1e6 + 1e3 + 1e3) x 2 bytes in
     * 1.002 us: 2 TB/s, memory-bound. */
    {"aten::mm", "[[1000, 1000], [1000, 1]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]",
     "[\"\", \"\"]", 1002, NULL},
    /* 2e9 + 1e6 (the bias) in 4.002 us: 500 TFLOPS. */
    {"aten::addmm", "[[1000], [1000, 1000], [1000, 1000], [], []]",
     BF16_3 ", \"Scalar\", \"Scalar\"]", "[\"\", \"\", \"\", \"1\", \"1\"]", 4002, "aten::linear"},
    /* 8 x 2 x 500 x 250 x 1000 = 2e9 fp32 FLOPs in 40 us: 50 TFLOPS. */
    {"aten::bmm", "[[8, 500, 1000], [8, 1000, 250]]", "[\"float\", \"float\"]", "[\"\", \"\"]",
     40000, NULL},
    /* 3x3, stride 2, padding 1: 40 -> 20; 2 x 100 x 9 x (10 x 200 x 20 x 20)
     * = 1.44e9 fp16 FLOPs in 5.76 us: 250 TFLOPS. */
    {"aten::cudnn_convolution", "[[10, 100, 40, 40], [200, 100, 3, 3], [], [], [], [], [], []]",
     "[\"c10::Half\", \"c10::Half\", \"ScalarList\", \"ScalarList\", \"ScalarList\", "
     "\"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\"]",
     "[\"\", \"\", \"[1, 1]\", \"[2, 2]\", \"[1, 1]\", \"1\", \"False\", \"False\", \"True\"]",
     5760, NULL},
    /* B 2, H 8, N 1000, d 125, causal: (2 x 8 x 4 x 1000^2 x 125) / 2 =
     * 4e9 FLOPs in 8 us: 500 TFLOPS. */
    {"aten::_scaled_dot_product_flash_attention",
     "[[2, 8, 1000, 125], [2, 8, 1000, 125], [2, 8, 1000, 125], [], [], [], []]",
     BF16_3 ", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\"]",
     "[\"\", \"\", \"\", \"0.\", \"True\", \"False\", \"\"]", 8000, NULL},
    /* No layout for it: an unsized call. */
    {"aten::_scaled_mm", "[[1000, 1000], [1000, 1000]]",
     "[\"c10::Float8_e4m3fn\", \"c10::Float8_e4m3fn\"]", "[\"\", \"\"]", 3000, NULL},
};
#define N_SHAPES (sizeof SHAPES / sizeof SHAPES[0])

typedef struct fl_rank {
    FILE *f;
    bool first;
    int64_t corr;
    double factor;
} fl_rank;

static void put_time(FILE *f, const char *key, int64_t ns)
{
    fprintf(f, "\"%s\": %" PRId64 ".%03" PRId64, key, ns / 1000, ns % 1000);
}

static void write_event(fl_rank *k, const char *cat, const char *name, int pid, int tid,
                        int64_t ts, int64_t dur, const char *args)
{
    tg_json_event(k->f, &k->first, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", "
                  "\"pid\": %d, \"tid\": %d, ", cat, name, pid, tid);
    put_time(k->f, "ts", ts);
    fputs(", ", k->f);
    put_time(k->f, "dur", dur);
    fprintf(k->f, ", \"args\": {%s}}", args);
}

/* One call: the op (in its wrapper), its launch and its kernel. */
static void write_call(fl_rank *k, const fl_shape *s, int64_t at)
{
    char args[1024];
    int64_t corr = k->corr++;
    if (s->wrapper) {
        snprintf(args, sizeof args, "\"External id\": %" PRId64, corr + 100000);
        write_event(k, "cpu_op", s->wrapper, 1, 1, at - 1000, FL_OP_NS + 2000, args);
    }
    snprintf(args, sizeof args,
             "\"External id\": %" PRId64 ", \"Input Dims\": %s, \"Input type\": %s, "
             "\"Concrete Inputs\": %s", corr, s->dims, s->types, s->concrete);
    write_event(k, "cpu_op", s->name, 1, 1, at, FL_OP_NS, args);
    snprintf(args, sizeof args, "\"External id\": %" PRId64 ", \"correlation\": %" PRId64, corr,
             corr);
    write_event(k, "cuda_runtime", "cudaLaunchKernel", 1, 1, at + 1000, 2000, args);
    snprintf(args, sizeof args,
             "\"External id\": %" PRId64 ", \"correlation\": %" PRId64 ", \"stream\": %d, "
             "\"device\": 0", corr, corr, FL_STREAM);
    int64_t dur = (int64_t)((double)s->kernel_ns * k->factor + 0.5);
    write_event(k, "kernel", "gemm_or_conv_kernel", 0, FL_STREAM, at + 10000, dur, args);
}

static void write_rank(fl_rank *k, int64_t rank, int64_t world, int64_t steps,
                       const char *device)
{
    fprintf(k->f, "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", "
            "\"rank\": %" PRId64 ", \"world_size\": %" PRId64 "},\n", rank, world);
    if (*device)
        fprintf(k->f, "\"deviceProperties\": [{\"id\": 0, \"name\": \"%s\"}],\n", device);
    fputs("\"traceEvents\": [", k->f);
    for (int64_t s = 0; s < steps; s++) {
        int64_t base = FL_ORIGIN_NS + s * FL_STEP_NS;
        char name[64];
        snprintf(name, sizeof name, "ProfilerStep#%" PRId64, s);
        write_event(k, "user_annotation", name, 1, 1, base, FL_STEP_NS - 10000, "");
        for (size_t i = 0; i < N_SHAPES; i++)
            write_call(k, &SHAPES[i], base + 10000 + (int64_t)i * FL_OP_GAP_NS);
    }
    fputs("\n]}\n", k->f);
}

/* --slow-rank R:F */
static void parse_slow_rank(const char *v, int64_t *rank, double *factor)
{
    char *end;
    errno = 0;
    *rank = v ? strtoll(v, &end, 10) : -1;
    if (!v || errno || *end != ':' || *rank < 0)
        tg_fail("bad value for --slow-rank (want R:F): ", v ? v : "");
    *factor = strtod(end + 1, &end);
    if (*end || !(*factor >= 0.5 && *factor <= 10))
        tg_fail("bad value for --slow-rank (F in 0.5..10): ", v);
}

int tracegen_flops_main(int argc, char **argv)
{
    const char *dir = NULL, *device = "NVIDIA H100 80GB HBM3";
    int64_t world = 2, steps = 3, slow_rank = -1;
    double slow_factor = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--flops-truth"))
            continue;
        if (!strcmp(a, "-o") || !strcmp(a, "--output"))
            dir = v;
        else if (!strcmp(a, "--ranks"))
            world = tg_json_count(a, v, 4096);
        else if (!strcmp(a, "--steps"))
            steps = tg_json_count(a, v, FL_MAX_STEPS);
        else if (!strcmp(a, "--slow-rank"))
            parse_slow_rank(v, &slow_rank, &slow_factor);
        else if (!strcmp(a, "--device") && v)
            device = v;
        else
            tg_fail("--flops-truth takes only -o DIR, --ranks N, --steps S, --slow-rank R:F, "
                    "--device NAME: ", a);
        i++;
    }
    if (!dir)
        tg_fail("--flops-truth needs -o DIR", NULL);
    if (mkdir(dir, 0777) && errno != EEXIST)
        tg_fail("cannot create ", dir);
    for (int64_t r = 0; r < world; r++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/rank-%" PRId64 ".json", dir, r);
        fl_rank k = {.f = fopen(path, "w"), .first = true, .corr = 1,
                     .factor = r == slow_rank ? slow_factor : 1};
        if (!k.f)
            tg_fail("cannot write ", path);
        write_rank(&k, r, world, steps, device);
        if (fclose(k.f))
            tg_fail("write failed: ", path);
    }
    return 0;
}
