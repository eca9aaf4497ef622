/*
 * hta-tracegen -- deterministic synthetic PyTorch profiler (Kineto) traces.
 *
 * Writes one Chrome-trace JSON file per rank (DIR/rank-<r>.json[.gz]) that
 * looks like what torch.profiler exports for a DDP training job on A100s:
 * ProfilerStep annotations, cpu_ops with Input Dims, cudaLaunchKernel /
 * cudaMemcpyAsync runtime events, ac2g flow pairs, GPU kernels, memcpys,
 * memsets, NCCL all-reduce kernels and Kineto's trailing metadata.
 *
 * DESIGN
 *  - Everything random comes from a counter-based hash RNG: splitmix64 over
 *    (seed, tag, rank, step, index...).  Rank-independent quantities (the
 *    "base schedule") are keyed with rank = NO_RANK, so every rank - and
 *    every separate invocation that writes a different slice of ranks - can
 *    recompute any other rank's arrival times without simulating it.
 *  - The only cross-rank state is a table max_phase_dur[step][collective]
 *    (W hash evaluations per entry), built once per process.  Rank files are
 *    written one after the other with O(1) memory besides that table.
 *  - Output goes through a large buffer.  Each event type is a "template"
 *    written once in pretty Kineto layout with $d (integer), $s (raw string)
 *    and $f (fixed-point, 6 decimals) holes; --compact derives its templates
 *    by stripping all whitespace outside JSON strings, so both layouts come
 *    from the same source and cannot drift apart.  Integers are formatted by
 *    hand (two digits per step) because printf per field is the bottleneck.
 *  - The number of steps for --size-mb is found by formatting a sample of
 *    steps of rank 0 into a byte-counting sink (ids offset to mid-run, so
 *    their digit counts are representative).  It depends only on the
 *    arguments and the world size, so files generated in pieces agree.
 *
 * TIMING MODEL (all times integer microseconds)
 *  One training step = NUM_COLLECTIVES (3) compute phases, each followed by
 *  one NCCL all-reduce (a DDP gradient bucket) on stream 20.  Phase 0 is the
 *  forward pass of a 3-layer MLP + loss + backward of layer 2, phase 1 is
 *  the backward of layer 1, phase 2 the backward of layer 0.
 *
 *    w_i(s)    per-op weight, uniform in the op's [lo, hi]  (rank-independent)
 *    B(s,k)    = 10 * sum of w_i(s) over the GPU ops of phase k
 *    D_r(s,k)  = llround(B(s,k) * f_r * (1 + 0.005 * (2u - 1)))
 *              f_r = straggler factor of rank r (1.0 unless --straggler),
 *              u = hash(seed, r, s, k) in [0,1): per-rank jitter <= +-0.5%
 *    M(s,k)    = max over ALL ranks 0..W-1 of D_r(s,k)
 *    C(s,k)    = llround(671 * (0.9 + 0.2u)), u rank-independent
 *    S(0)      = T0 = 1683564901000000 + hash(seed) % 500000
 *    P(s,0)    = S(s) + L(s), L(s) = lead_base + [0,50]   (data loading,
 *                H2D copies, CPU launching phase 0; lead_base is derived
 *                from the CPU cost bounds, ~1 ms)
 *    A_r(s,k)  = P(s,k) + D_r(s,k)          arrival of rank r
 *    E(s,k)    = P(s,k) + M(s,k) + C(s,k)   collective end, same on all ranks
 *    P(s,k+1)  = E(s,k) + [2,6]
 *    DtoH copy of the loss: ts = E(s,2) + [2,6], dur [1,2]
 *    S(s+1)    = end of that copy + [50,150]
 *
 *  The compute kernels of phase k exactly tile [P(s,k), A_r(s,k)] on stream
 *  7 (slots proportional to w_i, 1-2 us gaps, the last kernel ends at
 *  A_r).  The NCCL kernel of collective k on rank r starts at A_r(s,k) and
 *  ends at E(s,k): its duration is C(s,k) + (M(s,k) - D_r(s,k)), i.e. the
 *  pure transfer time plus the wait for the slowest rank.  Consequences a
 *  test can assert by construction:
 *    - every rank has the same number of steps and 3 * steps NCCL kernels;
 *      the n-th NCCL kernel of every rank ends at the same timestamp;
 *    - without --straggler, waits are < ~1% of the phase durations;
 *    - with --straggler R:F, F >= 1.02 (strictly: F * 0.995 > 1.005 plus
 *      rounding; B(s,k) >= 2180), rank R arrives last at every collective:
 *      its NCCL kernels start last and last exactly C(s,k) (within
 *      [604, 738] us), while rank q waits
 *      D_R - D_q = B(s,k) * (F(1+j_R) - (1+j_q)) ~= (F - 1) * B(s,k),
 *      so the total wait of q ~= (F - 1) * (sum of q's compute phases).
 *  All ranks' steps start at the same S(s) (ProfilerStep#100+s on the CPU).
 *  On about half of the collectives 1-3 small kernels run on stream 7 while
 *  the all-reduce is in flight (start A_r + 2, each <= 15% of C(s,k)), so
 *  compute/communication overlap is non-zero but never delays E(s,k).
 *
 *  CPU side: each GPU op is a cpu_op (+ inner cpu_op) wrapping a runtime
 *  call; the GPU item starts at max(launch end + [2,20], stream ready time).
 *  CPU costs are bounded so the CPU is always ahead of the GPU (the GPU
 *  schedule above is never delayed by the CPU); a violation would be a bug
 *  and aborts with "internal error".  That guarantee needs f_r in [0.5, 10].
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <zlib.h>

#include "tracegen_groups.h"
#include "tracegen_pipeline.h"
#include "tracegen_ops.h"
#include "tracegen_chains.h"
#include "tracegen_kernels.h"

/* ------------------------------------------------------------------------ */
/* Constants of the model                                                    */
/* ------------------------------------------------------------------------ */

enum { NUM_COLLECTIVES = 3 };
enum { STREAM_COMPUTE = 7, STREAM_COMM = 20, STREAM_COPY = 25 };
enum { CBID_MEMCPY = 41, CBID_MEMSET = 51, CBID_SYNC = 131, CBID_LAUNCH = 211 };

#define ORIGIN_US INT64_C(1683564901000000)
#define BASE_TIME_NS "1683560000000000000"
#define US_PER_WEIGHT 10
#define RANK_JITTER 0.005
#define COMM_BASE_US 671.0          /* 16781312 floats at ~100 GB/s */
#define BUCKET_NELEMS INT64_C(16781312) /* 4096*4096 weights + 4096 bias */
#define MIN_FACTOR 0.5
#define MAX_FACTOR 10.0
#define MAX_WORLD 1000000
#define MIN_STEPS 3
#define SAMPLE_STEPS 16
#define BYTES_PER_MB 1000000.0

/* CPU cost bounds (us).  They size the lead time before each step's first
 * GPU kernel, so the CPU provably launches every kernel before its slot. */
#define LAUNCH_JITTER_MIN 2
#define LAUNCH_JITTER_MAX 20
#define OP_PRE_MAX 4
#define NEST_MAX 3 /* gap between a parent and child begin / end */
#define LAUNCH_DUR_MIN 3
#define LAUNCH_DUR_MAX 9
#define PLAIN_OP_DUR_MAX 8
#define DATALOADER_MAX 90
#define HTOD_INPUT_BYTES INT64_C(16777216)
#define HTOD_LABEL_BYTES INT64_C(8192)
#define COPY_BW_MIN_MBPS 20000
#define COPY_BW_MAX_MBPS 24000
#define MEMSET_BYTES INT64_C(16777216)

#define OUT_BUF_SIZE (8u << 20)
#define EVENT_MAX 16384 /* upper bound on one formatted event */
#define NO_RANK UINT64_MAX

/* ------------------------------------------------------------------------ */
/* Small utilities                                                           */
/* ------------------------------------------------------------------------ */

typedef struct {
    const char *p;
    uint32_t n;
} tg_str;

static tg_str str_of(const char *s) { return (tg_str){s, (uint32_t)strlen(s)}; }

static void die(const char *msg, const char *detail)
{
    if (detail)
        fprintf(stderr, "hta-tracegen: %s%s\n", msg, detail);
    else
        fprintf(stderr, "hta-tracegen: %s\n", msg);
    exit(2);
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        die("out of memory", NULL);
    return p;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ------------------------------------------------------------------------ */
/* Counter-based RNG                                                         */
/* ------------------------------------------------------------------------ */

enum tg_rng_tag {
    TAG_ORIGIN = 1,
    TAG_WEIGHT,
    TAG_RANK_JITTER,
    TAG_COMM,
    TAG_PHASE_GAP,
    TAG_KERNEL_GAP,
    TAG_LEAD,
    TAG_TAIL,
    TAG_DTOH,
    TAG_MEMSET_STEP,
    TAG_OVERLAP,
    TAG_CPU
};

static uint64_t mix64(uint64_t z)
{
    z += UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Chained splitmix64: a pure function of its inputs, so any value can be
 * recomputed anywhere (another rank, another process) without shared state. */
static uint64_t rng_hash(uint64_t seed, uint64_t tag, uint64_t rank, uint64_t step, uint64_t a,
                         uint64_t b)
{
    uint64_t h = mix64(seed ^ UINT64_C(0x5bd1e9955bd1e995));
    h = mix64(h ^ tag);
    h = mix64(h ^ rank);
    h = mix64(h ^ step);
    h = mix64(h ^ a);
    return mix64(h ^ b);
}

static int64_t hash_range(uint64_t h, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(h % (uint64_t)(hi - lo + 1));
}

static double hash_unit(uint64_t h) { return (double)(h >> 11) * 0x1.0p-53; }

/* ------------------------------------------------------------------------ */
/* Output writer                                                             */
/* ------------------------------------------------------------------------ */

typedef enum { SINK_DISCARD, SINK_FILE, SINK_GZIP } tg_sink_kind;

typedef struct {
    tg_sink_kind kind;
    FILE *fp;
    gzFile gz;
    char *buf;
    size_t len;
    uint64_t total;  /* bytes handed to the sink (uncompressed) */
    uint64_t events; /* events in traceEvents, to place separators */
    bool failed;
} tg_writer;

static void writer_flush(tg_writer *w)
{
    if (w->len == 0)
        return;
    if (!w->failed) {
        if (w->kind == SINK_FILE)
            w->failed = fwrite(w->buf, 1, w->len, w->fp) != w->len;
        else if (w->kind == SINK_GZIP)
            w->failed = gzwrite(w->gz, w->buf, (unsigned)w->len) != (int)w->len;
    }
    w->total += w->len;
    w->len = 0;
}

static void writer_reset(tg_writer *w, tg_sink_kind kind)
{
    w->kind = kind;
    w->fp = NULL;
    w->gz = NULL;
    w->len = 0;
    w->total = 0;
    w->events = 0;
    w->failed = false;
}

static bool writer_open_file(tg_writer *w, const char *path, bool gzip)
{
    writer_reset(w, gzip ? SINK_GZIP : SINK_FILE);
    if (gzip) {
        w->gz = gzopen(path, "wb6");
        if (!w->gz)
            return false;
        gzbuffer(w->gz, 1u << 20);
        return true;
    }
    w->fp = fopen(path, "wb");
    if (!w->fp)
        return false;
    setvbuf(w->fp, NULL, _IONBF, 0); /* we already buffer 8 MB ourselves */
    return true;
}

/* Returns false if anything failed since open. */
static bool writer_close(tg_writer *w)
{
    writer_flush(w);
    bool ok = !w->failed;
    if (w->kind == SINK_FILE && w->fp)
        ok = (fclose(w->fp) == 0) && ok;
    if (w->kind == SINK_GZIP && w->gz)
        ok = (gzclose(w->gz) == Z_OK) && ok;
    w->fp = NULL;
    w->gz = NULL;
    return ok;
}

static const char DIGIT_PAIRS[] = "00010203040506070809"
                                  "10111213141516171819"
                                  "20212223242526272829"
                                  "30313233343536373839"
                                  "40414243444546474849"
                                  "50515253545556575859"
                                  "60616263646566676869"
                                  "70717273747576777879"
                                  "80818283848586878889"
                                  "90919293949596979899";

static char *format_u64(char *p, uint64_t v)
{
    char tmp[24];
    char *q = tmp + sizeof tmp;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        q -= 2;
        memcpy(q, DIGIT_PAIRS + 2 * r, 2);
    }
    if (v >= 10) {
        q -= 2;
        memcpy(q, DIGIT_PAIRS + 2 * v, 2);
    } else {
        *--q = (char)('0' + v);
    }
    size_t n = (size_t)(tmp + sizeof tmp - q);
    memcpy(p, q, n);
    return p + n;
}

static char *format_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return format_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return format_u64(p, (uint64_t)v);
}

/* v is in millionths; prints like printf("%.6f", v / 1e6). */
static char *format_fixed6(char *p, int64_t v)
{
    p = format_u64(p, (uint64_t)(v / 1000000));
    *p++ = '.';
    int64_t frac = v % 1000000;
    for (int i = 5; i >= 0; i--) {
        p[i] = (char)('0' + frac % 10);
        frac /= 10;
    }
    return p + 6;
}

/* ------------------------------------------------------------------------ */
/* Event templates                                                           */
/* ------------------------------------------------------------------------ */

typedef enum { SEG_END, SEG_INT, SEG_STR, SEG_FIX6 } tg_seg_kind;

typedef struct {
    const char *lit;
    uint32_t len;
    uint8_t kind;
} tg_seg;

enum { MAX_SEGS = 32, TEMPLATE_TEXT_MAX = 2048 };

typedef struct {
    char text[TEMPLATE_TEXT_MAX];
    tg_seg seg[MAX_SEGS];
} tg_template;

typedef struct {
    int64_t i;
    const char *s;
    uint32_t n;
} tg_arg;

#define AI(v) ((tg_arg){.i = (int64_t)(v)})
#define AS(str) ((tg_arg){.s = (str).p, .n = (str).n})
#define ALIT(lit) ((tg_arg){.s = (lit), .n = (uint32_t)(sizeof(lit) - 1)})

typedef enum {
    TPL_HEADER,
    TPL_TRAILER,
    TPL_SEPARATOR,
    TPL_ANNOTATION,
    TPL_CPU_OP,
    TPL_COMM_OP,
    TPL_RUNTIME,
    TPL_FLOW_START,
    TPL_FLOW_FINISH,
    TPL_KERNEL,
    TPL_NCCL_KERNEL,
    TPL_MEMORY,
    TPL_META_STR,
    TPL_META_INT,
    TPL_TRACE_SPAN,
    TPL_ITERATION_START,
    TPL_WINDOW_END,
    TPL_COUNT
} tg_template_id;

/* Pretty (Kineto) layout; holes: $d integer, $s verbatim string, $f fixed6. */
static const char *const TEMPLATE_SOURCE[TPL_COUNT] = {
    [TPL_HEADER] =
        "{\n"
        "  \"schemaVersion\": 1,\n"
        "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": $d, \"world_size\": $d},\n"
        "  \"deviceProperties\": [\n"
        "    {\n"
        "      \"id\": 0, \"name\": \"NVIDIA A100-SXM4-80GB\", \"totalGlobalMem\": 85051572224,\n"
        "      \"computeMajor\": 8, \"computeMinor\": 0,\n"
        "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
        "      \"regsPerBlock\": 65536, \"regsPerMultiprocessor\": 65536, \"warpSize\": 32,\n"
        "      \"sharedMemPerBlock\": 49152, \"sharedMemPerMultiprocessor\": 167936,\n"
        "      \"numSms\": 108, \"sharedMemPerBlockOptin\": 166912\n"
        "    }\n"
        "  ],\n"
        "  \"traceEvents\": [\n",
    [TPL_TRAILER] =
        "\n"
        "  ],\n"
        "  \"displayTimeUnit\": \"ms\",\n"
        "  \"baseTimeNanoseconds\": " BASE_TIME_NS "\n"
        "}\n",
    [TPL_SEPARATOR] = ",\n",
    [TPL_ANNOTATION] =
        "  {\n"
        "    \"ph\": \"X\", \"cat\": \"$s\", \"name\": \"$s\", \"pid\": $d, \"tid\": $d,\n"
        "    \"ts\": $d, \"dur\": $d,\n"
        "    \"args\": {\n"
        "      \"External id\": $d\n"
        "    }\n"
        "  }",
    [TPL_CPU_OP] =
        "  {\n"
        "    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"$s\", \"pid\": $d, \"tid\": $d,\n"
        "    \"ts\": $d, \"dur\": $d,\n"
        "    \"args\": {\n"
        "      \"External id\": $d,\"Sequence number\": $d, \"Fwd thread id\": 0, "
        "\"Input Dims\": $s, \"Input type\": $s\n"
        "    }\n"
        "  }",
    [TPL_COMM_OP] =
        "  {\n"
        "    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"$s\", \"pid\": $d, \"tid\": $d,\n"
        "    \"ts\": $d, \"dur\": $d,\n"
        "    \"args\": {\n"
        "      \"External id\": $d,\"Sequence number\": $d, \"Fwd thread id\": 0, "
        "\"Collective name\": \"allreduce\", \"In msg nelems\": $d, \"Out msg nelems\": $d, "
        "\"Group size\": $d, \"dtype\": \"Float\", \"Process Group Name\": \"0\", "
        "\"Process Group Description\": \"default_pg\", \"Process Group Ranks\": \"$s\", "
        "\"Input Dims\": $s, \"Input type\": $s\n"
        "    }\n"
        "  }",
    [TPL_RUNTIME] =
        "  {\n"
        "    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"$s\", \"pid\": $d, \"tid\": $d,\n"
        "    \"ts\": $d, \"dur\": $d,\n"
        "    \"args\": {\n"
        "      \"External id\": $d,\n"
        "      \"cbid\": $d, \"correlation\": $d\n"
        "    }\n"
        "  }",
    [TPL_FLOW_START] =
        "  {\n"
        "    \"ph\": \"s\", \"id\": $d, \"pid\": $d, \"tid\": $d, \"ts\": $d,\n"
        "    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n"
        "  }",
    [TPL_FLOW_FINISH] =
        "  {\n"
        "    \"ph\": \"f\", \"id\": $d, \"pid\": 0, \"tid\": $d, \"ts\": $d,\n"
        "    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n"
        "  }",
    [TPL_KERNEL] =
        "  {\n"
        "    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"$s\", \"pid\": 0, \"tid\": $d,\n"
        "    \"ts\": $d, \"dur\": $d,\n"
        "    \"args\": {\n"
        "      \"queued\": 0, \"device\": 0, \"context\": 1,\n"
        "      \"stream\": $d, \"correlation\": $d, \"registers per thread\": $d,\n"
        "      \"shared memory\": $d, \"blocks per SM\": $s,\n"
        "      \"warps per SM\": $s,\n"
        "      \"grid\": $s, \"block\": $s,\n"
        "      \"est. achieved occupancy %\": $d\n"
        "    }\n"
        "  }",
    [TPL_NCCL_KERNEL] =
        "  {\n"
        "    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"$s\", \"pid\": 0, \"tid\": $d,\n"
        "    \"ts\": $d, \"dur\": $d,\n"
        "    \"args\": {\n"
        "      \"queued\": 0, \"device\": 0, \"context\": 1,\n"
        "      \"stream\": $d, \"correlation\": $d, \"registers per thread\": $d,\n"
        "      \"shared memory\": $d, \"blocks per SM\": $s,\n"
        "      \"warps per SM\": $s,\n"
        "      \"grid\": $s, \"block\": $s,\n"
        "      \"est. achieved occupancy %\": $d,\n"
        "      \"Collective name\": \"allreduce\", \"In msg nelems\": $d, \"Out msg nelems\": $d, "
        "\"Group size\": $d, \"dtype\": \"Float\", \"Process Group Name\": \"0\", "
        "\"Process Group Description\": \"default_pg\", \"Process Group Ranks\": \"$s\"\n"
        "    }\n"
        "  }",
    [TPL_MEMORY] =
        "  {\n"
        "    \"ph\": \"X\", \"cat\": \"$s\", \"name\": \"$s\", \"pid\": 0, \"tid\": $d,\n"
        "    \"ts\": $d, \"dur\": $d,\n"
        "    \"args\": {\n"
        "      \"device\": 0, \"context\": 1,\n"
        "      \"stream\": $d, \"correlation\": $d,\n"
        "      \"bytes\": $d, \"memory bandwidth (GB/s)\": $f\n"
        "    }\n"
        "  }",
    [TPL_META_STR] =
        "  {\n"
        "    \"name\": \"$s\", \"ph\": \"M\", \"ts\": $d, \"pid\": $d, \"tid\": $d,\n"
        "    \"args\": {\n"
        "      \"$s\": \"$s\"\n"
        "    }\n"
        "  }",
    [TPL_META_INT] =
        "  {\n"
        "    \"name\": \"$s\", \"ph\": \"M\", \"ts\": $d, \"pid\": $d, \"tid\": $d,\n"
        "    \"args\": {\n"
        "      \"$s\": $d\n"
        "    }\n"
        "  }",
    [TPL_TRACE_SPAN] =
        "  {\n"
        "    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": $d, \"dur\": $d,\n"
        "    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n"
        "    \"name\": \"PyTorch Profiler (0)\",\n"
        "    \"args\": {\n"
        "      \"Op count\": 0\n"
        "    }\n"
        "  }",
    [TPL_ITERATION_START] =
        "  {\n"
        "    \"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n"
        "    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": $d\n"
        "  }",
    [TPL_WINDOW_END] =
        "  {\n"
        "    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n"
        "    \"pid\": \"\", \"tid\": \"\", \"ts\": $d\n"
        "  }",
};

/* Copies src to dst dropping whitespace outside JSON strings (--compact). */
static size_t strip_json_whitespace(char *dst, size_t cap, const char *src)
{
    size_t n = 0;
    bool in_string = false;
    for (const char *p = src; *p; p++) {
        char ch = *p;
        if (!in_string && (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r'))
            continue;
        if (ch == '"')
            in_string = !in_string;
        if (n + 1 >= cap)
            die("internal error: JSON fragment too long", NULL);
        dst[n++] = ch;
    }
    dst[n] = '\0';
    return n;
}

/* Pretty strings are static literals; compact ones are stripped into buf. */
static tg_str json_layout(bool compact, const char *pretty, char *buf, size_t cap)
{
    if (!compact)
        return str_of(pretty);
    uint32_t n = (uint32_t)strip_json_whitespace(buf, cap, pretty);
    return (tg_str){buf, n};
}

static void compile_template(tg_template *t, const char *src, bool compact)
{
    if (compact) {
        strip_json_whitespace(t->text, sizeof t->text, src);
    } else {
        if (strlen(src) >= sizeof t->text)
            die("internal error: template too long", NULL);
        strcpy(t->text, src);
    }
    const char *p = t->text, *lit = p;
    int n = 0;
    for (;;) {
        if (n >= MAX_SEGS)
            die("internal error: template has too many holes", NULL);
        if (*p == '\0') {
            t->seg[n] = (tg_seg){lit, (uint32_t)(p - lit), SEG_END};
            return;
        }
        if (p[0] == '$' && (p[1] == 'd' || p[1] == 's' || p[1] == 'f')) {
            uint8_t kind = p[1] == 'd' ? SEG_INT : p[1] == 's' ? SEG_STR : SEG_FIX6;
            t->seg[n++] = (tg_seg){lit, (uint32_t)(p - lit), kind};
            p += 2;
            lit = p;
            continue;
        }
        p++;
    }
}

/* Appends one filled template; the caller guarantees EVENT_MAX free bytes. */
static void write_template(tg_writer *w, const tg_template *t, const tg_arg *args)
{
    char *p = w->buf + w->len;
    for (const tg_seg *sg = t->seg;; sg++) {
        memcpy(p, sg->lit, sg->len);
        p += sg->len;
        switch (sg->kind) {
        case SEG_END:
            w->len = (size_t)(p - w->buf);
            return;
        case SEG_INT:
            p = format_i64(p, args->i);
            break;
        case SEG_STR:
            memcpy(p, args->s, args->n);
            p += args->n;
            break;
        case SEG_FIX6:
            p = format_fixed6(p, args->i);
            break;
        }
        args++;
    }
}

/* ------------------------------------------------------------------------ */
/* Kernel and program tables (the kernels: tracegen_kernels.h)                */
/* ------------------------------------------------------------------------ */

typedef struct {
    tg_str name, blocks_per_sm, warps_per_sm, grid, block;
    int regs, smem, occupancy;
    char grid_buf[32], block_buf[32];
} tg_kernel;

typedef enum { GPU_NONE, GPU_KERNEL, GPU_MEMSET } tg_gpu_kind;

typedef struct {
    tg_str name, dims, types;
    char dims_buf[160], types_buf[160];
} tg_cpu_op;

/* One operator of the model program, repeated identically every step. */
typedef struct {
    int phase;     /* compute phase (gradient bucket) it belongs to */
    tg_gpu_kind gpu;   /* what it runs on stream 7 */
    tg_kernel_id kernel;
    int wlo, whi;  /* relative GPU duration weight range */
    bool memset_steps_only;
    tg_cpu_op outer, inner; /* inner.name.n == 0: launched by outer itself */
} tg_op;

enum { MAX_OPS = 64 };

/* ------------------------------------------------------------------------ */
/* Context                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
    /* options */
    const char *outdir;
    int64_t ranks, first_rank, world;
    double size_mb;
    bool gzip, compact;
    uint64_t seed;
    int64_t steps_opt; /* 0: derive from size_mb */
    double *factor;    /* [world] straggler factor per rank */
    const char *slow_match, *rename_match, *rename_to; /* --kernel-factor, --rename-kernel */
    double slow_factor;
    double kernel_factor[K_COUNT]; /* weight factor of each compute kernel */

    /* derived */
    int64_t steps;
    int64_t *max_phase_dur; /* [steps * NUM_COLLECTIVES], NULL while sizing */
    int64_t origin;
    int64_t lead_base;
    tg_template tpl[TPL_COUNT];
    tg_kernel kernels[K_COUNT];
    tg_op ops[MAX_OPS];
    int nops;
    tg_op overlap_ops[2];
    tg_cpu_op nccl_outer, nccl_inner;
    tg_cpu_op copy_to[2], copy_to_copy[2], copy_copy[2];
    tg_cpu_op item, local_scalar, dl_empty, dl_stack;
    char ranks_buf[96];
    tg_str group_ranks;
    tg_writer out;
} tg_ctx;

/* Per-rank generation state; everything else is recomputed from hashes. */
typedef struct {
    int64_t rank, pid, step;
    int64_t next_id;  /* External id / correlation counter */
    int64_t next_seq; /* Sequence number counter */
    int64_t cpu_t;    /* CPU thread's clock */
    int64_t copy_stream_end;
    uint64_t cpu_key, cpu_draws; /* per-(rank, step) CPU jitter stream */
} tg_rank_state;

/* Rank-independent and rank-specific timing of one step (see header). */
typedef struct {
    int64_t start, next_start, lead;
    bool memset_step;
    uint16_t weight[MAX_OPS];
    int gpu_ops[NUM_COLLECTIVES];
    int64_t total_weight[NUM_COLLECTIVES];
    int64_t base_dur[NUM_COLLECTIVES];  /* B(s,k) */
    int64_t comm_dur[NUM_COLLECTIVES];  /* C(s,k) */
    int64_t phase_gap[NUM_COLLECTIVES];
    int overlap_n[NUM_COLLECTIVES];
    int64_t dtoh_gap, dtoh_dur, tail;
    /* rank-specific */
    int64_t phase_start[NUM_COLLECTIVES]; /* P(s,k) */
    int64_t phase_dur[NUM_COLLECTIVES];   /* D_r(s,k) */
    int64_t comm_end[NUM_COLLECTIVES];    /* E(s,k) */
    int64_t dtoh_start;
} tg_step_plan;

/* ------------------------------------------------------------------------ */
/* Building the tables                                                       */
/* ------------------------------------------------------------------------ */

static void init_cpu_op(const tg_ctx *c, tg_cpu_op *d, const char *name, const char *dims,
                        const char *types)
{
    d->name = name ? str_of(name) : (tg_str){"", 0};
    d->dims = json_layout(c->compact, dims ? dims : "[]", d->dims_buf, sizeof d->dims_buf);
    d->types = json_layout(c->compact, types ? types : "[]", d->types_buf, sizeof d->types_buf);
}

static void init_kernels(tg_ctx *c)
{
    for (int k = 0; k < K_COUNT; k++) {
        const tg_kernel_source *src = &KERNEL_SOURCE[k];
        tg_kernel *kr = &c->kernels[k];
        kr->name = str_of(src->name);
        c->kernel_factor[k] = c->slow_match && strstr(src->name, c->slow_match) ? c->slow_factor : 1.0;
        if (c->rename_match && strstr(src->name, c->rename_match))
            kr->name = str_of(c->rename_to);
        kr->blocks_per_sm = str_of(src->blocks_per_sm);
        kr->warps_per_sm = str_of(src->warps_per_sm);
        kr->grid = json_layout(c->compact, src->grid, kr->grid_buf, sizeof kr->grid_buf);
        kr->block = json_layout(c->compact, src->block, kr->block_buf, sizeof kr->block_buf);
        kr->regs = src->regs;
        kr->smem = src->smem;
        kr->occupancy = src->occupancy;
    }
}

static tg_op *add_op(tg_ctx *c, int phase, tg_gpu_kind gpu, tg_kernel_id kernel, int wlo, int whi,
                      const char *outer, const char *odims, const char *otypes, const char *inner,
                      const char *idims, const char *itypes)
{
    if (c->nops >= MAX_OPS)
        die("internal error: too many ops", NULL);
    tg_op *op = &c->ops[c->nops++];
    op->phase = phase;
    op->gpu = gpu;
    op->kernel = kernel;
    op->wlo = wlo;
    op->whi = whi;
    op->memset_steps_only = false;
    init_cpu_op(c, &op->outer, outer, odims, otypes);
    init_cpu_op(c, &op->inner, inner, idims, itypes);
    return op;
}

#define AUTOGRAD(name) "autograd::engine::evaluate_function: " name

static void add_linear_backward(tg_ctx *c, int phase, bool needs_input_grad)
{
    add_op(c, phase, GPU_KERNEL, K_THRESHOLD, 3, 4, AUTOGRAD("ReluBackward0"), NULL, NULL,
           "aten::threshold_backward", "[[1024, 4096], [1024, 4096], []]",
           "[\"float\", \"float\", \"Scalar\"]");
    add_op(c, phase, GPU_NONE, 0, 0, 0, "aten::t", "[[4096, 4096]]", "[\"float\"]", NULL, NULL,
           NULL);
    if (needs_input_grad)
        add_op(c, phase, GPU_KERNEL, K_SGEMM_NN, 190, 230, AUTOGRAD("AddmmBackward0"), NULL, NULL,
               "aten::mm", "[[1024, 4096], [4096, 4096]]", "[\"float\", \"float\"]");
    add_op(c, phase, GPU_KERNEL, K_CUTLASS_GEMM, 200, 240, AUTOGRAD("AddmmBackward0"), NULL, NULL,
           "aten::mm", "[[4096, 1024], [1024, 4096]]", "[\"float\", \"float\"]");
    add_op(c, phase, GPU_KERNEL, K_REDUCE_SUM, 4, 6, AUTOGRAD("AddmmBackward0"), NULL, NULL,
           "aten::sum", "[[1024, 4096], [], [], []]", "[\"float\", \"\", \"Scalar\", \"\"]");
    add_op(c, phase, GPU_NONE, 0, 0, 0, "aten::view", "[[4096], []]", "[\"float\", \"\"]", NULL,
           NULL, NULL);
    add_op(c, phase, GPU_KERNEL, K_ADD, 10, 12, AUTOGRAD("torch::autograd::AccumulateGrad"), NULL,
           NULL, "aten::add_", "[[4096, 4096], [4096, 4096], []]",
           "[\"float\", \"float\", \"Scalar\"]");
    add_op(c, phase, GPU_KERNEL, K_ADD, 1, 1, AUTOGRAD("torch::autograd::AccumulateGrad"), NULL,
           NULL, "aten::add_", "[[4096], [4096], []]", "[\"float\", \"float\", \"Scalar\"]");
}

/* A 3-layer MLP (batch 1024, hidden 4096) trained with DDP, 3 buckets. */
static void build_program(tg_ctx *c)
{
    c->nops = 0;
    tg_op *zeros = add_op(c, 0, GPU_MEMSET, 0, 1, 2, "aten::zeros", "[[], [], [], [], []]",
                           "[\"\", \"Scalar\", \"\", \"Device\", \"\"]", "aten::zero_",
                           "[[4194304]]", "[\"float\"]");
    zeros->memset_steps_only = true;
    for (int layer = 0; layer < 3; layer++) {
        add_op(c, 0, GPU_NONE, 0, 0, 0, "aten::t", "[[4096, 4096]]", "[\"float\"]", NULL, NULL,
               NULL);
        add_op(c, 0, GPU_KERNEL, K_SGEMM_TN, 190, 230, "aten::linear",
               "[[1024, 4096], [4096, 4096], [4096]]", "[\"float\", \"float\", \"float\"]",
               "aten::addmm", "[[4096], [1024, 4096], [4096, 4096], [], []]",
               "[\"float\", \"float\", \"float\", \"Scalar\", \"Scalar\"]");
        add_op(c, 0, GPU_KERNEL, K_RELU, 2, 3, "aten::relu", "[[1024, 4096]]", "[\"float\"]",
               "aten::clamp_min", "[[1024, 4096], []]", "[\"float\", \"Scalar\"]");
    }
    add_op(c, 0, GPU_KERNEL, K_LOG_SOFTMAX, 3, 5, "aten::log_softmax", "[[1024, 4096], [], []]",
           "[\"float\", \"Scalar\", \"\"]", "aten::_log_softmax", "[[1024, 4096], [], []]",
           "[\"float\", \"Scalar\", \"Scalar\"]");
    add_op(c, 0, GPU_KERNEL, K_NLL, 1, 2, "aten::nll_loss_nd",
           "[[1024, 4096], [1024], [], [], []]",
           "[\"float\", \"long int\", \"\", \"Scalar\", \"Scalar\"]", "aten::nll_loss_forward",
           "[[1024, 4096], [1024], [], [], []]",
           "[\"float\", \"long int\", \"\", \"Scalar\", \"Scalar\"]");
    add_op(c, 0, GPU_KERNEL, K_FILL, 1, 1, "aten::ones_like", "[[], [], [], [], [], []]",
           "[\"float\", \"\", \"\", \"\", \"\", \"\"]", "aten::fill_", "[[], []]",
           "[\"float\", \"Scalar\"]");
    add_op(c, 0, GPU_KERNEL, K_NLL_BWD, 1, 2, AUTOGRAD("NllLossBackward0"), NULL, NULL,
           "aten::nll_loss_backward", "[[], [1024, 4096], [1024], [], [], [], []]",
           "[\"float\", \"float\", \"long int\", \"\", \"Scalar\", \"Scalar\", \"float\"]");
    add_op(c, 0, GPU_KERNEL, K_LOG_SOFTMAX_BWD, 3, 5, AUTOGRAD("LogSoftmaxBackward0"), NULL, NULL,
           "aten::_log_softmax_backward_data", "[[1024, 4096], [1024, 4096], [], []]",
           "[\"float\", \"float\", \"Scalar\", \"Scalar\"]");
    add_linear_backward(c, 0, true);  /* layer 2 -> bucket 0 */
    add_linear_backward(c, 1, true);  /* layer 1 -> bucket 1 */
    add_linear_backward(c, 2, false); /* layer 0 -> bucket 2 */

    /* Kernels that overlap an in-flight all-reduce (gradient scaling). */
    tg_op *ov = &c->overlap_ops[0];
    *ov = (tg_op){.phase = -1, .gpu = GPU_KERNEL, .kernel = K_MUL};
    init_cpu_op(c, &ov->outer, "aten::mul_", "[[4096, 4096], []]", "[\"float\", \"Scalar\"]");
    init_cpu_op(c, &ov->inner, NULL, NULL, NULL);
    ov = &c->overlap_ops[1];
    *ov = (tg_op){.phase = -1, .gpu = GPU_KERNEL, .kernel = K_FOREACH_ADD};
    init_cpu_op(c, &ov->outer, "aten::_foreach_add_", "[[], []]", "[\"TensorList\", \"TensorList\"]");
    init_cpu_op(c, &ov->inner, NULL, NULL, NULL);

    init_cpu_op(c, &c->nccl_outer, "nccl:all_reduce", "[[16781312]]", "[\"float\"]");
    init_cpu_op(c, &c->nccl_inner, "record_param_comms", "[[16781312]]", "[\"float\"]");
    init_cpu_op(c, &c->copy_to[0], "aten::to", "[[1024, 4096], [], [], [], [], []]",
                "[\"float\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\", \"\"]");
    init_cpu_op(c, &c->copy_to_copy[0], "aten::_to_copy", "[[1024, 4096], [], [], [], [], [], []]",
                "[\"float\", \"Scalar\", \"\", \"Device\", \"\", \"Scalar\", \"\"]");
    init_cpu_op(c, &c->copy_copy[0], "aten::copy_", "[[1024, 4096], [1024, 4096], []]",
                "[\"float\", \"float\", \"Scalar\"]");
    init_cpu_op(c, &c->copy_to[1], "aten::to", "[[1024], [], [], [], [], []]",
                "[\"long int\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\", \"\"]");
    init_cpu_op(c, &c->copy_to_copy[1], "aten::_to_copy", "[[1024], [], [], [], [], [], []]",
                "[\"long int\", \"Scalar\", \"\", \"Device\", \"\", \"Scalar\", \"\"]");
    init_cpu_op(c, &c->copy_copy[1], "aten::copy_", "[[1024], [1024], []]",
                "[\"long int\", \"long int\", \"Scalar\"]");
    init_cpu_op(c, &c->item, "aten::item", "[[]]", "[\"float\"]");
    init_cpu_op(c, &c->local_scalar, "aten::_local_scalar_dense", "[[]]", "[\"float\"]");
    init_cpu_op(c, &c->dl_empty, "aten::empty", "[[], [], [], [], [], []]",
                "[\"\", \"Scalar\", \"\", \"\", \"\", \"\"]");
    init_cpu_op(c, &c->dl_stack, "aten::stack", "[[], []]", "[\"TensorList\", \"Scalar\"]");
}

/* Upper bounds of CPU time spent per op; see cpu_op_times(). */
static int64_t op_cpu_max(const tg_op *op)
{
    if (op->gpu == GPU_NONE)
        return OP_PRE_MAX + PLAIN_OP_DUR_MAX;
    return OP_PRE_MAX + 2 * NEST_MAX + LAUNCH_DUR_MAX + 2 * NEST_MAX;
}

static int64_t copy_cpu_max(void) { return OP_PRE_MAX + 4 * NEST_MAX + LAUNCH_DUR_MAX + 2 * NEST_MAX; }

static int64_t preamble_cpu_max(void) { return OP_PRE_MAX + DATALOADER_MAX + 2 * copy_cpu_max(); }

/* Lead time from step start to the first compute kernel: long enough for the
 * CPU to load data, issue the H2D copies and launch all of phase 0, and for
 * the copies to finish, so the phase-0 GPU schedule never waits on the CPU. */
static void derive_lead_base(tg_ctx *c)
{
    int64_t phase0_cpu = 0;
    for (int i = 0; i < c->nops; i++)
        if (c->ops[i].phase == 0)
            phase0_cpu += op_cpu_max(&c->ops[i]);
    int64_t htod_max = (HTOD_INPUT_BYTES + COPY_BW_MIN_MBPS - 1) / COPY_BW_MIN_MBPS + 1 +
                       (HTOD_LABEL_BYTES + COPY_BW_MIN_MBPS - 1) / COPY_BW_MIN_MBPS;
    int64_t cpu_bound = preamble_cpu_max() + phase0_cpu + LAUNCH_JITTER_MAX;
    int64_t copy_bound = preamble_cpu_max() + LAUNCH_JITTER_MAX + htod_max;
    c->lead_base = max64(cpu_bound, copy_bound) + 10;
}

static void init_group_ranks(tg_ctx *c)
{
    char *p = c->ranks_buf;
    size_t cap = sizeof c->ranks_buf;
    int n;
    if (c->world <= 16) {
        n = snprintf(p, cap, "[");
        for (int64_t r = 0; r < c->world; r++)
            n += snprintf(p + n, cap - (size_t)n, r ? ", %" PRId64 : "%" PRId64, r);
        n += snprintf(p + n, cap - (size_t)n, "]");
    } else {
        n = snprintf(p, cap, "[0, ..., %" PRId64 "]", c->world - 1);
    }
    c->group_ranks = (tg_str){p, (uint32_t)n};
}

/* ------------------------------------------------------------------------ */
/* Schedule                                                                  */
/* ------------------------------------------------------------------------ */

static int64_t shared_range(const tg_ctx *c, enum tg_rng_tag tag, int64_t step, uint64_t a, int64_t lo,
                            int64_t hi)
{
    return hash_range(rng_hash(c->seed, tag, NO_RANK, (uint64_t)step, a, 0), lo, hi);
}

/* D_r(s,k): the rank's compute time before collective k. */
static int64_t rank_phase_duration(const tg_ctx *c, int64_t rank, int64_t step, int k, int64_t base)
{
    double u = hash_unit(rng_hash(c->seed, TAG_RANK_JITTER, (uint64_t)rank, (uint64_t)step,
                                  (uint64_t)k, 0));
    double d = (double)base * c->factor[rank] * (1.0 + RANK_JITTER * (2.0 * u - 1.0));
    return (int64_t)llround(d);
}

/* M(s,k): latest arrival over ALL ranks, not only the ones written now. */
static int64_t max_phase_duration(const tg_ctx *c, int64_t step, int k, int64_t base)
{
    if (c->max_phase_dur)
        return c->max_phase_dur[step * NUM_COLLECTIVES + k];
    int64_t m = 0;
    for (int64_t r = 0; r < c->world; r++)
        m = max64(m, rank_phase_duration(c, r, step, k, base));
    return m;
}

/* The rank-independent part of a step's schedule. */
static void plan_shared(const tg_ctx *c, int64_t s, tg_step_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->memset_step = shared_range(c, TAG_MEMSET_STEP, s, 0, 0, 3) == 0;
    for (int i = 0; i < c->nops; i++) {
        const tg_op *op = &c->ops[i];
        if (op->gpu == GPU_NONE || (op->memset_steps_only && !pl->memset_step))
            continue;
        int64_t w = shared_range(c, TAG_WEIGHT, s, (uint64_t)i, op->wlo, op->whi);
        double f = op->gpu == GPU_KERNEL ? c->kernel_factor[op->kernel] : 1.0;
        pl->weight[i] = (uint16_t)max64(1, llround((double)w * f));
        pl->total_weight[op->phase] += pl->weight[i];
        pl->gpu_ops[op->phase]++;
    }
    for (int k = 0; k < NUM_COLLECTIVES; k++) {
        pl->base_dur[k] = US_PER_WEIGHT * pl->total_weight[k];
        double u = hash_unit(rng_hash(c->seed, TAG_COMM, NO_RANK, (uint64_t)s, (uint64_t)k, 0));
        pl->comm_dur[k] = (int64_t)llround(COMM_BASE_US * (0.9 + 0.2 * u));
        pl->phase_gap[k] = shared_range(c, TAG_PHASE_GAP, s, (uint64_t)k, 2, 6);
        bool overlap = shared_range(c, TAG_OVERLAP, s, (uint64_t)k, 0, 1) == 0;
        pl->overlap_n[k] = overlap ? (int)shared_range(c, TAG_OVERLAP, s, (uint64_t)k + 100, 1, 3) : 0;
    }
    pl->lead = c->lead_base + shared_range(c, TAG_LEAD, s, 0, 0, 50);
    pl->dtoh_gap = shared_range(c, TAG_DTOH, s, 0, 2, 6);
    pl->dtoh_dur = shared_range(c, TAG_DTOH, s, 1, 1, 2);
    pl->tail = shared_range(c, TAG_TAIL, s, 0, 50, 150);
}

static void plan_step(const tg_ctx *c, int64_t rank, int64_t s, int64_t start, tg_step_plan *pl)
{
    plan_shared(c, s, pl);
    pl->start = start;
    int64_t p = start + pl->lead;
    for (int k = 0; k < NUM_COLLECTIVES; k++) {
        pl->phase_start[k] = p;
        pl->phase_dur[k] = rank_phase_duration(c, rank, s, k, pl->base_dur[k]);
        int64_t m = max_phase_duration(c, s, k, pl->base_dur[k]);
        pl->comm_end[k] = p + m + pl->comm_dur[k];
        p = pl->comm_end[k] + pl->phase_gap[k];
    }
    pl->dtoh_start = pl->comm_end[NUM_COLLECTIVES - 1] + pl->dtoh_gap;
    pl->next_start = pl->dtoh_start + pl->dtoh_dur + pl->tail;
}

static void build_max_table(tg_ctx *c)
{
    int64_t *table = xcalloc((size_t)c->steps * NUM_COLLECTIVES, sizeof *table);
    tg_step_plan pl;
    for (int64_t s = 0; s < c->steps; s++) {
        plan_shared(c, s, &pl);
        for (int k = 0; k < NUM_COLLECTIVES; k++)
            table[s * NUM_COLLECTIVES + k] = max_phase_duration(c, s, k, pl.base_dur[k]);
    }
    c->max_phase_dur = table;
}

/* ------------------------------------------------------------------------ */
/* Event emission                                                            */
/* ------------------------------------------------------------------------ */

static void emit(tg_ctx *c, tg_template_id id, const tg_arg *args)
{
    tg_writer *w = &c->out;
    if (OUT_BUF_SIZE - w->len < EVENT_MAX)
        writer_flush(w);
    if (w->events++ > 0)
        write_template(w, &c->tpl[TPL_SEPARATOR], NULL);
    write_template(w, &c->tpl[id], args);
}

static int64_t cpu_range(tg_rank_state *st, int64_t lo, int64_t hi)
{
    st->cpu_draws++;
    return hash_range(mix64(st->cpu_key + st->cpu_draws * UINT64_C(0x9e3779b97f4a7c15)), lo, hi);
}

static int64_t new_id(tg_rank_state *st) { return st->next_id++; }

static void emit_annotation(tg_ctx *c, const tg_rank_state *st, const char *cat, tg_str name, int64_t ts,
                            int64_t dur, int64_t ext)
{
    emit(c, TPL_ANNOTATION,
         (tg_arg[]){AS(str_of(cat)), AS(name), AI(st->pid), AI(st->pid), AI(ts), AI(dur), AI(ext)});
}

static void emit_cpu_op(tg_ctx *c, tg_rank_state *st, const tg_cpu_op *d, int64_t ts, int64_t end,
                        int64_t ext)
{
    emit(c, TPL_CPU_OP,
         (tg_arg[]){AS(d->name), AI(st->pid), AI(st->pid), AI(ts), AI(end - ts), AI(ext),
                 AI(st->next_seq++), AS(d->dims), AS(d->types)});
}

/* Runtime call plus the ac2g flow pair that links it to its GPU item. */
static void emit_launch(tg_ctx *c, const tg_rank_state *st, const char *api, int cbid, int64_t ts,
                        int64_t end, int64_t corr, int64_t gpu_tid, int64_t gpu_ts)
{
    emit(c, TPL_RUNTIME,
         (tg_arg[]){AS(str_of(api)), AI(st->pid), AI(st->pid), AI(ts), AI(end - ts), AI(corr),
                 AI(cbid), AI(corr)});
    emit(c, TPL_FLOW_START, (tg_arg[]){AI(corr), AI(st->pid), AI(st->pid), AI(ts)});
    emit(c, TPL_FLOW_FINISH, (tg_arg[]){AI(corr), AI(gpu_tid), AI(gpu_ts)});
}

static void emit_kernel(tg_ctx *c, tg_kernel_id id, int64_t stream, int64_t ts, int64_t dur,
                        int64_t corr)
{
    const tg_kernel *k = &c->kernels[id];
    emit(c, TPL_KERNEL,
         (tg_arg[]){AS(k->name), AI(stream), AI(ts), AI(dur), AI(stream), AI(corr), AI(k->regs),
                 AI(k->smem), AS(k->blocks_per_sm), AS(k->warps_per_sm), AS(k->grid),
                 AS(k->block), AI(k->occupancy)});
}

static void emit_memory(tg_ctx *c, const char *cat, const char *name, int64_t stream, int64_t ts,
                        int64_t dur, int64_t corr, int64_t bytes)
{
    int64_t bw_micro = (bytes * 1000 + dur / 2) / dur; /* B/(dur*1000) GB/s, 6 decimals */
    emit(c, TPL_MEMORY,
         (tg_arg[]){AS(str_of(cat)), AS(str_of(name)), AI(stream), AI(ts), AI(dur), AI(stream),
                 AI(corr), AI(bytes), AI(bw_micro)});
}

static void fail_schedule(const tg_rank_state *st, const char *what)
{
    char detail[160];
    snprintf(detail, sizeof detail, "%s (rank %" PRId64 ", step %" PRId64 ")", what, st->rank,
             st->step);
    die("internal error: CPU fell behind the GPU schedule: ", detail);
}

/* Where a GPU item may run: not before `ready`; `exact` marks items of the
 * shared schedule, which must not be delayed by the CPU. */
typedef struct {
    int64_t ready, dur;
    bool exact;
} tg_gpu_slot;

static int64_t gpu_start(tg_rank_state *st, int64_t launch_end, tg_gpu_slot slot)
{
    int64_t start = max64(launch_end + cpu_range(st, LAUNCH_JITTER_MIN, LAUNCH_JITTER_MAX), slot.ready);
    if (slot.exact && start != slot.ready)
        fail_schedule(st, "kernel launch too late");
    return start;
}

static void emit_plain_op(tg_ctx *c, tg_rank_state *st, const tg_cpu_op *d)
{
    int64_t ts = st->cpu_t + cpu_range(st, 1, OP_PRE_MAX);
    int64_t end = ts + cpu_range(st, 2, PLAIN_OP_DUR_MAX);
    emit_cpu_op(c, st, d, ts, end, new_id(st));
    st->cpu_t = end;
}

/* cpu_op (+ inner cpu_op) -> cudaLaunchKernel/cudaMemsetAsync -> GPU item.
 * Returns the GPU end time. */
static int64_t launch_op(tg_ctx *c, tg_rank_state *st, const tg_op *op, tg_gpu_slot slot)
{
    bool has_inner = op->inner.name.n > 0;
    int64_t outer_ts = st->cpu_t + cpu_range(st, 1, OP_PRE_MAX);
    int64_t outer_id = new_id(st);
    int64_t inner_ts = has_inner ? outer_ts + cpu_range(st, 1, NEST_MAX) : outer_ts;
    int64_t inner_id = has_inner ? new_id(st) : outer_id;
    int64_t launch_ts = inner_ts + cpu_range(st, 1, NEST_MAX);
    int64_t launch_end = launch_ts + cpu_range(st, LAUNCH_DUR_MIN, LAUNCH_DUR_MAX);
    int64_t inner_end = launch_end + cpu_range(st, 1, NEST_MAX);
    int64_t outer_end = has_inner ? inner_end + cpu_range(st, 1, NEST_MAX) : inner_end;
    int64_t ts = gpu_start(st, launch_end, slot);
    int64_t dur = max64(1, slot.dur);

    emit_cpu_op(c, st, &op->outer, outer_ts, outer_end, outer_id);
    if (has_inner)
        emit_cpu_op(c, st, &op->inner, inner_ts, inner_end, inner_id);
    if (op->gpu == GPU_MEMSET) {
        emit_launch(c, st, "cudaMemsetAsync", CBID_MEMSET, launch_ts, launch_end, inner_id,
                    STREAM_COMPUTE, ts);
        emit_memory(c, "gpu_memset", "Memset (Device)", STREAM_COMPUTE, ts, dur, inner_id,
                    MEMSET_BYTES);
    } else {
        emit_launch(c, st, "cudaLaunchKernel", CBID_LAUNCH, launch_ts, launch_end, inner_id,
                    STREAM_COMPUTE, ts);
        emit_kernel(c, op->kernel, STREAM_COMPUTE, ts, dur, inner_id);
    }
    st->cpu_t = outer_end;
    return ts + dur;
}

/* DataLoader annotation and the two pinned host-to-device copies. */
static void write_preamble(tg_ctx *c, tg_rank_state *st)
{
    int64_t dl_ts = st->cpu_t + cpu_range(st, 1, OP_PRE_MAX);
    int64_t dl_end = dl_ts + cpu_range(st, 40, DATALOADER_MAX);
    emit_annotation(c, st, "user_annotation",
                    str_of("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"), dl_ts,
                    dl_end - dl_ts, new_id(st));
    int64_t t = dl_ts + cpu_range(st, 2, 5);
    int64_t e = t + cpu_range(st, 3, 8);
    emit_cpu_op(c, st, &c->dl_empty, t, e, new_id(st));
    t = e + cpu_range(st, 1, 3);
    e = t + cpu_range(st, 5, 15); /* <= dl_ts + 5 + 8 + 3 + 15 < dl_end */
    emit_cpu_op(c, st, &c->dl_stack, t, e, new_id(st));
    st->cpu_t = dl_end;

    static const int64_t bytes[2] = {HTOD_INPUT_BYTES, HTOD_LABEL_BYTES};
    for (int i = 0; i < 2; i++) {
        int64_t to_ts = st->cpu_t + cpu_range(st, 1, OP_PRE_MAX);
        int64_t to_copy_ts = to_ts + cpu_range(st, 1, NEST_MAX);
        int64_t copy_ts = to_copy_ts + cpu_range(st, 1, NEST_MAX);
        int64_t launch_ts = copy_ts + cpu_range(st, 1, NEST_MAX);
        int64_t launch_end = launch_ts + cpu_range(st, LAUNCH_DUR_MIN, LAUNCH_DUR_MAX);
        int64_t copy_end = launch_end + cpu_range(st, 1, NEST_MAX);
        int64_t to_copy_end = copy_end + cpu_range(st, 1, NEST_MAX);
        int64_t to_end = to_copy_end + cpu_range(st, 1, NEST_MAX);
        int64_t to_id = new_id(st), to_copy_id = new_id(st), copy_id = new_id(st);
        int64_t bw = cpu_range(st, COPY_BW_MIN_MBPS, COPY_BW_MAX_MBPS); /* bytes/us */
        tg_gpu_slot slot = {st->copy_stream_end + 1, (bytes[i] + bw - 1) / bw, false};
        int64_t ts = gpu_start(st, launch_end, slot);

        emit_cpu_op(c, st, &c->copy_to[i], to_ts, to_end, to_id);
        emit_cpu_op(c, st, &c->copy_to_copy[i], to_copy_ts, to_copy_end, to_copy_id);
        emit_cpu_op(c, st, &c->copy_copy[i], copy_ts, copy_end, copy_id);
        emit_launch(c, st, "cudaMemcpyAsync", CBID_MEMCPY, launch_ts, launch_end, copy_id,
                    STREAM_COPY, ts);
        emit_memory(c, "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", STREAM_COPY, ts, slot.dur,
                    copy_id, bytes[i]);
        st->copy_stream_end = ts + slot.dur;
        st->cpu_t = to_end;
    }
}

/* Compute kernels of phase k tile [P(s,k), P(s,k) + D_r(s,k)] exactly:
 * slot j starts at P + j + floor((D - n) * W_<j / W), which gives every
 * kernel >= 1 us and makes the last one end at the arrival time. */
static void write_compute_phase(tg_ctx *c, tg_rank_state *st, const tg_step_plan *pl, int k)
{
    int64_t p = pl->phase_start[k], d = pl->phase_dur[k];
    int64_t n = pl->gpu_ops[k], total = pl->total_weight[k];
    int64_t j = 0, cum = 0;
    for (int i = 0; i < c->nops; i++) {
        const tg_op *op = &c->ops[i];
        if (op->phase != k || (op->memset_steps_only && !pl->memset_step))
            continue;
        if (op->gpu == GPU_NONE) {
            emit_plain_op(c, st, &op->outer);
            continue;
        }
        int64_t slot_start = p + j + (d - n) * cum / total;
        cum += pl->weight[i];
        int64_t slot_end = p + j + 1 + (d - n) * cum / total;
        int64_t gap = 0;
        if (j < n - 1 && slot_end - slot_start >= 3)
            gap = shared_range(c, TAG_KERNEL_GAP, st->step, (uint64_t)i, 1, 2);
        launch_op(c, st, op, (tg_gpu_slot){slot_start, slot_end - slot_start - gap, true});
        j++;
    }
}

/* nccl:all_reduce -> record_param_comms -> cudaLaunchKernel -> NCCL kernel
 * from the rank's arrival A_r(s,k) to the common end E(s,k). */
static void write_collective(tg_ctx *c, tg_rank_state *st, const tg_step_plan *pl, int k)
{
    int64_t arrival = pl->phase_start[k] + pl->phase_dur[k];
    int64_t outer_ts = st->cpu_t + cpu_range(st, 1, OP_PRE_MAX);
    int64_t inner_ts = outer_ts + cpu_range(st, 1, NEST_MAX);
    int64_t launch_ts = inner_ts + cpu_range(st, 1, NEST_MAX);
    int64_t launch_end = launch_ts + cpu_range(st, LAUNCH_DUR_MIN, LAUNCH_DUR_MAX);
    int64_t inner_end = launch_end + cpu_range(st, 1, NEST_MAX);
    int64_t outer_end = inner_end + cpu_range(st, 1, NEST_MAX);
    int64_t outer_id = new_id(st), inner_id = new_id(st);
    int64_t ts = gpu_start(st, launch_end, (tg_gpu_slot){arrival, 0, true});
    int64_t dur = pl->comm_end[k] - ts;

    emit_cpu_op(c, st, &c->nccl_outer, outer_ts, outer_end, outer_id);
    emit(c, TPL_COMM_OP,
         (tg_arg[]){AS(c->nccl_inner.name), AI(st->pid), AI(st->pid), AI(inner_ts),
                 AI(inner_end - inner_ts), AI(inner_id), AI(st->next_seq++), AI(BUCKET_NELEMS),
                 AI(BUCKET_NELEMS), AI(c->world), AS(c->group_ranks), AS(c->nccl_inner.dims),
                 AS(c->nccl_inner.types)});
    emit_launch(c, st, "cudaLaunchKernel", CBID_LAUNCH, launch_ts, launch_end, inner_id,
                STREAM_COMM, ts);
    const tg_kernel *kr = &c->kernels[K_NCCL_ALLREDUCE];
    emit(c, TPL_NCCL_KERNEL,
         (tg_arg[]){AS(kr->name), AI(STREAM_COMM), AI(ts), AI(dur), AI(STREAM_COMM), AI(inner_id),
                 AI(kr->regs), AI(kr->smem), AS(kr->blocks_per_sm), AS(kr->warps_per_sm),
                 AS(kr->grid), AS(kr->block), AI(kr->occupancy), AI(BUCKET_NELEMS),
                 AI(BUCKET_NELEMS), AI(c->world), AS(c->group_ranks)});
    st->cpu_t = outer_end;
}

/* Small kernels on stream 7 while collective k is in flight.  Each lasts at
 * most 15% of C(s,k) and they start at A_r + 2, so they end before E(s,k)
 * and never delay the next phase. */
static void write_overlap(tg_ctx *c, tg_rank_state *st, const tg_step_plan *pl, int k)
{
    int64_t prev_end = pl->phase_start[k] + pl->phase_dur[k];
    int64_t cap = pl->comm_dur[k] * 15 / 100;
    for (int j = 0; j < pl->overlap_n[k]; j++) {
        uint64_t key = (uint64_t)(k * 8 + j);
        const tg_op *op = &c->overlap_ops[shared_range(c, TAG_OVERLAP, st->step, key + 200, 0, 1)];
        double q = 0.05 + 0.10 * hash_unit(rng_hash(c->seed, TAG_OVERLAP, NO_RANK,
                                                     (uint64_t)st->step, key + 300, 0));
        int64_t dur = (int64_t)llround((double)pl->comm_dur[k] * q * c->factor[st->rank]);
        dur = max64(1, min64(dur, cap));
        prev_end = launch_op(c, st, op, (tg_gpu_slot){prev_end + 2, dur, true});
    }
    if (prev_end > pl->comm_end[k])
        fail_schedule(st, "overlap kernels outlast the collective");
}

/* loss.item(): DtoH copy after the last collective, CPU blocks on it. */
static void write_loss_sync(tg_ctx *c, tg_rank_state *st, const tg_step_plan *pl)
{
    int64_t item_ts = st->cpu_t + cpu_range(st, 1, OP_PRE_MAX);
    int64_t local_ts = item_ts + cpu_range(st, 1, NEST_MAX);
    int64_t launch_ts = local_ts + cpu_range(st, 1, NEST_MAX);
    int64_t launch_end = launch_ts + cpu_range(st, LAUNCH_DUR_MIN, LAUNCH_DUR_MAX);
    int64_t item_id = new_id(st), local_id = new_id(st), sync_corr = new_id(st);
    int64_t ts = gpu_start(st, launch_end, (tg_gpu_slot){pl->dtoh_start, pl->dtoh_dur, true});
    int64_t sync_ts = launch_end + cpu_range(st, 1, 2);
    int64_t sync_end = ts + pl->dtoh_dur + cpu_range(st, 2, 4);
    int64_t local_end = sync_end + cpu_range(st, 1, 2);
    int64_t item_end = local_end + cpu_range(st, 1, 2);

    emit_cpu_op(c, st, &c->item, item_ts, item_end, item_id);
    emit_cpu_op(c, st, &c->local_scalar, local_ts, local_end, local_id);
    emit_launch(c, st, "cudaMemcpyAsync", CBID_MEMCPY, launch_ts, launch_end, local_id,
                STREAM_COPY, ts);
    emit_memory(c, "gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", STREAM_COPY, ts, pl->dtoh_dur,
                local_id, 4);
    emit(c, TPL_RUNTIME,
         (tg_arg[]){ALIT("cudaStreamSynchronize"), AI(st->pid), AI(st->pid), AI(sync_ts),
                 AI(sync_end - sync_ts), AI(local_id), AI(CBID_SYNC), AI(sync_corr)});
    st->copy_stream_end = ts + pl->dtoh_dur;
    st->cpu_t = item_end;

    /* optimizer.zero_grad(set_to_none=True): CPU only; fits in the tail. */
    int64_t zg_ts = st->cpu_t + cpu_range(st, 2, 5);
    int64_t zg_end = zg_ts + cpu_range(st, 8, 25);
    emit_annotation(c, st, "user_annotation", str_of("Optimizer.zero_grad#SGD.zero_grad"), zg_ts,
                    zg_end - zg_ts, new_id(st));
    st->cpu_t = zg_end;
    if (st->cpu_t > pl->next_start)
        fail_schedule(st, "step tail too short");
}

static void write_step(tg_ctx *c, tg_rank_state *st, const tg_step_plan *pl)
{
    st->cpu_key = rng_hash(c->seed, TAG_CPU, (uint64_t)st->rank, (uint64_t)st->step, 0, 0);
    st->cpu_draws = 0;
    char name[48];
    int n = snprintf(name, sizeof name, "ProfilerStep#%" PRId64, 100 + st->step);
    emit_annotation(c, st, "user_annotation", (tg_str){name, (uint32_t)n}, pl->start,
                    pl->next_start - pl->start, new_id(st));
    st->cpu_t = pl->start;
    write_preamble(c, st);
    if (st->copy_stream_end > pl->phase_start[0])
        fail_schedule(st, "input copies end after the first kernel");
    for (int k = 0; k < NUM_COLLECTIVES; k++) {
        write_compute_phase(c, st, pl, k);
        write_collective(c, st, pl, k);
        write_overlap(c, st, pl, k);
    }
    write_loss_sync(c, st, pl);
}

static void emit_meta_str(tg_ctx *c, const char *name, int64_t ts, int64_t pid, int64_t tid,
                          const char *key, tg_str value)
{
    emit(c, TPL_META_STR,
         (tg_arg[]){AS(str_of(name)), AI(ts), AI(pid), AI(tid), AS(str_of(key)), AS(value)});
}

static void emit_meta_int(tg_ctx *c, const char *name, int64_t ts, int64_t pid, int64_t tid,
                          const char *key, int64_t value)
{
    emit(c, TPL_META_INT,
         (tg_arg[]){AS(str_of(name)), AI(ts), AI(pid), AI(tid), AS(str_of(key)), AI(value)});
}

static void write_metadata(tg_ctx *c, const tg_rank_state *st, int64_t trace_start, int64_t trace_end)
{
    char buf[64];
    int64_t pid = st->pid;
    emit_meta_str(c, "process_name", trace_start, pid, 0, "name", str_of("python"));
    emit_meta_str(c, "process_labels", trace_start, pid, 0, "labels", str_of("CPU"));
    emit_meta_int(c, "process_sort_index", trace_start, pid, 0, "sort_index", pid);
    emit_meta_str(c, "process_name", trace_start, 0, 0, "name", str_of("python"));
    emit_meta_str(c, "process_labels", trace_start, 0, 0, "labels", str_of("GPU 0"));
    emit_meta_int(c, "process_sort_index", trace_start, 0, 0, "sort_index", 5000000);
    int n = snprintf(buf, sizeof buf, "thread %" PRId64 " (python)", pid);
    emit_meta_str(c, "thread_name", trace_start, pid, pid, "name", (tg_str){buf, (uint32_t)n});
    emit_meta_int(c, "thread_sort_index", trace_start, pid, pid, "sort_index", pid);
    static const int streams[3] = {STREAM_COMPUTE, STREAM_COMM, STREAM_COPY};
    for (int i = 0; i < 3; i++) {
        n = snprintf(buf, sizeof buf, "stream %d", streams[i]);
        emit_meta_str(c, "thread_name", trace_start, 0, streams[i], "name",
                      (tg_str){buf, (uint32_t)n});
        emit_meta_int(c, "thread_sort_index", trace_start, 0, streams[i], "sort_index",
                      streams[i]);
    }
    emit(c, TPL_TRACE_SPAN, (tg_arg[]){AI(trace_start), AI(trace_end - trace_start)});
    emit(c, TPL_ITERATION_START, (tg_arg[]){AI(trace_start)});
    emit(c, TPL_WINDOW_END, (tg_arg[]){AI(trace_end)});
}

/* Writes one complete rank trace into c->out.  id_offset only shifts the
 * External id / Sequence number counters (used when sizing).  Returns the
 * number of ids consumed. */
static int64_t write_trace(tg_ctx *c, int64_t rank, int64_t nsteps, int64_t id_offset)
{
    tg_rank_state st = {.rank = rank,
                    .pid = 4515 + rank,
                    .next_id = 1 + id_offset,
                    .next_seq = id_offset,
                    .copy_stream_end = 0};
    tg_writer *w = &c->out;
    write_template(w, &c->tpl[TPL_HEADER], (tg_arg[]){AI(rank), AI(c->world)});
    int64_t start = c->origin;
    tg_step_plan pl;
    for (int64_t s = 0; s < nsteps; s++) {
        st.step = s;
        plan_step(c, rank, s, start, &pl);
        write_step(c, &st, &pl);
        start = pl.next_start;
    }
    write_metadata(c, &st, c->origin - 50, start + 50);
    if (OUT_BUF_SIZE - w->len < EVENT_MAX)
        writer_flush(w);
    write_template(w, &c->tpl[TPL_TRAILER], NULL);
    return st.next_id - 1 - id_offset;
}

/* Bytes of rank 0's trace with `nsteps` steps, formatted but discarded. */
static double measure_trace(tg_ctx *c, int64_t nsteps, int64_t id_offset, int64_t *ids_used)
{
    writer_reset(&c->out, SINK_DISCARD);
    int64_t ids = write_trace(c, 0, nsteps, id_offset);
    writer_flush(&c->out);
    if (ids_used)
        *ids_used = ids;
    return (double)c->out.total;
}

/* Number of steps whose file size is closest to --size-mb.  Every step runs
 * the same op program, so bytes/step is nearly constant; only the growing
 * ids add digits, hence the second sample with ids offset to mid-run. */
static int64_t choose_steps(tg_ctx *c)
{
    if (c->steps_opt > 0)
        return c->steps_opt;
    double target = c->size_mb * BYTES_PER_MB;
    double fixed = measure_trace(c, 0, 0, NULL);
    int64_t ids = 0;
    double per_step = (measure_trace(c, SAMPLE_STEPS, 0, &ids) - fixed) / SAMPLE_STEPS;
    double k0 = (target - fixed) / per_step;
    int64_t mid_ids = k0 > 2 ? (int64_t)(k0 / 2) * (ids / SAMPLE_STEPS) : 0;
    per_step = (measure_trace(c, SAMPLE_STEPS, mid_ids, NULL) - fixed) / SAMPLE_STEPS;
    int64_t k = (int64_t)llround((target - fixed) / per_step);
    return max64(MIN_STEPS, k);
}

/* ------------------------------------------------------------------------ */
/* Command line and main                                                     */
/* ------------------------------------------------------------------------ */

static const char USAGE[] =
    "Usage: hta-tracegen -o DIR [options]\n"
    "\n"
    "Write deterministic synthetic PyTorch profiler (Kineto) traces of a DDP\n"
    "training job, one file per rank: DIR/rank-<r>.json (or .json.gz).\n"
    "\n"
    "Options:\n"
    "  -o, --output DIR         output directory (created if missing)\n"
    "  --ranks N                number of rank files to write (default 4)\n"
    "  --first-rank R           first rank to write (default 0); the world size is\n"
    "                           R + N, so traces written in pieces agree\n"
    "  --size-mb S              approximate uncompressed size of each file in MB\n"
    "                           (10^6 bytes; default 1; fractions allowed)\n"
    "  --steps K                number of profiler steps (overrides --size-mb;\n"
    "                           by default derived from --size-mb, at least 3)\n"
    "  --straggler RANK:FACTOR  multiply RANK's compute time by FACTOR (0.5..10);\n"
    "                           repeatable; give the same list to every piece\n"
    "  --kernel-factor TEXT:F   compute kernels whose name contains TEXT run F times\n"
    "                           as long (0.1..10; the phase grows with them)\n"
    "  --rename-kernel TEXT=NAME  kernels whose name contains TEXT are named NAME\n"
    "  --seed N                 random seed (default 1)\n"
    "  --gzip                   write gzip-compressed files\n"
    "  --compact                write JSON without any whitespace\n"
    "  --ops-truth              instead: traces of known ops, annotations, GPU gaps,\n"
    "                           sync calls and memory (only -o, --ranks, --steps),\n"
    "                           the answer in DIR.ops_truth.json\n"
    "  --critical-path-truth    instead: steps of known critical paths (a slow data\n"
    "                           loader, a sync after the step's kernel, tiny kernels\n"
    "                           each launched late; only -o, --ranks <= 32,\n"
    "                           --steps <= 50), the answer in\n"
    "                           DIR.critical_path_truth.json\n"
    "  -h, --help               show this help and exit\n"
    "\n"
    "Each step runs 3 compute phases, each followed by an NCCL all-reduce; a rank\n"
    "waits at every all-reduce for the slowest rank (see the source for the exact\n"
    "timing model).\n";

typedef struct {
    int64_t rank;
    double factor;
} tg_straggler;

enum { MAX_STRAGGLER_ARGS = 256 };

static bool parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return false;
    *out = v;
    return true;
}

static void bad_value(const char *opt, const char *value)
{
    char detail[256];
    snprintf(detail, sizeof detail, "%s '%s'", opt, value);
    die("invalid value for ", detail);
}

/* --straggler RANK:FACTOR */
static tg_straggler parse_straggler(const char *value)
{
    const char *colon = strchr(value, ':');
    char rank_text[32];
    int64_t rank;
    double f;
    if (colon && (size_t)(colon - value) < sizeof rank_text) {
        memcpy(rank_text, value, (size_t)(colon - value));
        rank_text[colon - value] = '\0';
    }
    if (!colon || (size_t)(colon - value) >= sizeof rank_text)
        bad_value("--straggler", value);
    if (!parse_int(rank_text, 0, MAX_WORLD - 1, &rank) || !parse_double(colon + 1, &f) ||
        f < MIN_FACTOR || f > MAX_FACTOR) {
        char detail[160];
        snprintf(detail, sizeof detail, "'%.80s' (want RANK:FACTOR, FACTOR in 0.5..10)", value);
        die("invalid value for --straggler ", detail);
    }
    return (tg_straggler){rank, f};
}

enum {
    OPT_RANKS = 256,
    OPT_FIRST_RANK,
    OPT_SIZE_MB,
    OPT_STEPS,
    OPT_STRAGGLER,
    OPT_SEED,
    OPT_GZIP,
    OPT_COMPACT,
    OPT_KERNEL_FACTOR,
    OPT_RENAME_KERNEL,
};

static const struct option LONG_OPTIONS[] = {
    {"output", required_argument, NULL, 'o'},
    {"ranks", required_argument, NULL, OPT_RANKS},
    {"first-rank", required_argument, NULL, OPT_FIRST_RANK},
    {"size-mb", required_argument, NULL, OPT_SIZE_MB},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"straggler", required_argument, NULL, OPT_STRAGGLER},
    {"seed", required_argument, NULL, OPT_SEED},
    {"gzip", no_argument, NULL, OPT_GZIP},
    {"compact", no_argument, NULL, OPT_COMPACT},
    {"kernel-factor", required_argument, NULL, OPT_KERNEL_FACTOR},
    {"rename-kernel", required_argument, NULL, OPT_RENAME_KERNEL},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void parse_args(tg_ctx *c, int argc, char **argv)
{
    tg_straggler straggler[MAX_STRAGGLER_ARGS];
    int nstraggler = 0;
    c->ranks = 4;
    c->first_rank = 0;
    c->size_mb = 1.0;
    c->seed = 1;
    opterr = 0;                /* the messages are ours */
    for (;;) {
        int index = -1;
        int opt = getopt_long(argc, argv, ":o:h", LONG_OPTIONS, &index);
        if (opt == -1)
            break;
        const char *value = optarg;
        switch (opt) {
        case 'h':
            fputs(USAGE, stdout);
            exit(0);
        case OPT_GZIP:
            c->gzip = true;
            break;
        case OPT_COMPACT:
            c->compact = true;
            break;
        case 'o':
            if (!*value)
                bad_value(index < 0 ? "-o" : "--output", value);
            c->outdir = value;
            break;
        case OPT_RANKS:
            if (!parse_int(value, 1, MAX_WORLD, &c->ranks))
                bad_value("--ranks", value);
            break;
        case OPT_FIRST_RANK:
            if (!parse_int(value, 0, MAX_WORLD - 1, &c->first_rank))
                bad_value("--first-rank", value);
            break;
        case OPT_SIZE_MB:
            if (!parse_double(value, &c->size_mb) || c->size_mb <= 0 || c->size_mb > 1e6)
                bad_value("--size-mb", value);
            break;
        case OPT_SEED: {
            char *end;
            errno = 0;
            c->seed = strtoull(value, &end, 10);
            if (errno || end == value || *end || value[0] == '-')
                bad_value("--seed", value);
            break;
        }
        case OPT_STEPS:
            if (!parse_int(value, 1, 100000000, &c->steps_opt))
                bad_value("--steps", value);
            break;
        case OPT_KERNEL_FACTOR: {
            const char *colon = strrchr(value, ':');
            if (!colon || colon == value || !parse_double(colon + 1, &c->slow_factor) ||
                c->slow_factor < 0.1 || c->slow_factor > 10)
                bad_value("--kernel-factor", value);
            free((char *)c->slow_match);
            c->slow_match = strndup(value, (size_t)(colon - value));
            break;
        }
        case OPT_RENAME_KERNEL: {
            const char *eq = strchr(value, '=');
            if (!eq || eq == value || !eq[1] || strpbrk(eq + 1, "\"\\"))
                bad_value("--rename-kernel", value);
            free((char *)c->rename_match);
            c->rename_match = strndup(value, (size_t)(eq - value));
            c->rename_to = eq + 1;
            break;
        }
        case OPT_STRAGGLER:
            if (nstraggler >= MAX_STRAGGLER_ARGS)
                die("too many --straggler options", NULL);
            straggler[nstraggler++] = parse_straggler(value);
            break;
        case ':':
            die("missing value for ", argv[optind - 1]);
            break;
        default:
            die("unknown option: ", argv[optind - 1]);
        }
    }
    if (optind < argc)
        die("unknown option: ", argv[optind]);
    if (!c->outdir)
        die("missing -o DIR (see --help)", NULL);
    c->world = c->first_rank + c->ranks;
    if (c->world > MAX_WORLD)
        die("world size (first-rank + ranks) exceeds 1000000", NULL);
    c->factor = xcalloc((size_t)c->world, sizeof *c->factor);
    for (int64_t r = 0; r < c->world; r++)
        c->factor[r] = 1.0;
    for (int i = 0; i < nstraggler; i++) {
        if (straggler[i].rank >= c->world) {
            char detail[96];
            snprintf(detail, sizeof detail, "%" PRId64 " is outside the world size %" PRId64,
                     straggler[i].rank, c->world);
            die("straggler rank ", detail);
        }
        c->factor[straggler[i].rank] = straggler[i].factor;
    }
}

/* mkdir -p */
static void make_dirs(const char *path)
{
    size_t n = strlen(path);
    char *buf = xcalloc(n + 1, 1);
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char saved = buf[i];
        buf[i] = '\0';
        struct stat sb;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            goto fail;
        if (stat(buf, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            errno = ENOTDIR;
            goto fail;
        }
        buf[i] = saved;
    }
    free(buf);
    return;
fail: {
    char detail[512];
    snprintf(detail, sizeof detail, "'%s': %s", buf, strerror(errno));
    die("cannot create directory ", detail);
}
}

static void write_rank_file(tg_ctx *c, int64_t rank)
{
    size_t n = strlen(c->outdir) + 48;
    char *path = xcalloc(n, 1);
    snprintf(path, n, "%s/rank-%" PRId64 ".json%s", c->outdir, rank, c->gzip ? ".gz" : "");
    if (!writer_open_file(&c->out, path, c->gzip)) {
        char detail[600];
        snprintf(detail, sizeof detail, "'%s': %s", path, strerror(errno));
        die("cannot open ", detail);
    }
    write_trace(c, rank, c->steps, 0);
    if (!writer_close(&c->out)) {
        char detail[600];
        snprintf(detail, sizeof detail, "'%s'", path);
        die("write failed: ", detail);
    }
    free(path);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--tp"))
            return tracegen_groups_main(argc, argv);
        else if (!strcmp(argv[i], "--pp"))
            return tracegen_pipeline_main(argc, argv);
        else if (!strcmp(argv[i], "--ops-truth"))
            return tracegen_ops_main(argc, argv);
        else if (!strcmp(argv[i], "--critical-path-truth"))
            return tracegen_chains_main(argc, argv);
    tg_ctx *c = xcalloc(1, sizeof *c);
    parse_args(c, argc, argv);
    for (int t = 0; t < TPL_COUNT; t++)
        compile_template(&c->tpl[t], TEMPLATE_SOURCE[t], c->compact);
    init_kernels(c);
    build_program(c);
    derive_lead_base(c);
    init_group_ranks(c);
    c->origin = ORIGIN_US + (int64_t)(rng_hash(c->seed, TAG_ORIGIN, NO_RANK, 0, 0, 0) % 500000);
    c->out.buf = xcalloc(OUT_BUF_SIZE, 1);

    c->steps = choose_steps(c);
    build_max_table(c);
    make_dirs(c->outdir);
    for (int64_t r = c->first_rank; r < c->world; r++)
        write_rank_file(c, r);

    free(c->out.buf);
    free(c->max_phase_dur);
    free(c->factor);
    free((char *)c->slow_match);
    free((char *)c->rename_match);
    free(c);
    return 0;
}
