/*
 * tracegen_ddp.c -- hta-tracegen's default job shape: a DDP training job
 * with stragglers.
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
 *  - Events are written through templates (tracegen_writer.h) in the
 *    layouts of tracegen_ddp_templates.c.
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
#define _POSIX_C_SOURCE 200809L

#include "tracegen_ddp.h"
#include "tracegen_nodes.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "tracegen_common.h"
#include "tracegen_ddp_templates.h"
#include "tracegen_kernels.h"
#include "tracegen_writer.h"

/* ------------------------------------------------------------------------ */
/* Constants of the model                                                    */
/* ------------------------------------------------------------------------ */

enum { NUM_COLLECTIVES = 3 };
enum { STREAM_COMPUTE = 7, STREAM_COMM = 20, STREAM_COPY = 25 };
enum { CBID_MEMCPY = 41, CBID_MEMSET = 51, CBID_SYNC = 131, CBID_LAUNCH = 211 };

#define ORIGIN_US INT64_C(1683564901000000)
#define US_PER_WEIGHT 10
#define RANK_JITTER 0.005
#define COMM_BASE_US 671.0          /* 16781312 floats at ~100 GB/s */
#define BUCKET_NELEMS INT64_C(16781312) /* 4096*4096 weights + 4096 bias */
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

#define NO_RANK UINT64_MAX
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

/* Chained splitmix64: a pure function of its inputs, so any value can be
 * recomputed anywhere (another rank, another process) without shared state. */
static uint64_t rng_hash(uint64_t seed, uint64_t tag, uint64_t rank, uint64_t step, uint64_t a,
                         uint64_t b)
{
    uint64_t h = tg_mix64(seed ^ UINT64_C(0x5bd1e9955bd1e995));
    h = tg_mix64(h ^ tag);
    h = tg_mix64(h ^ rank);
    h = tg_mix64(h ^ step);
    h = tg_mix64(h ^ a);
    return tg_mix64(h ^ b);
}

static int64_t hash_range(uint64_t h, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(h % (uint64_t)(hi - lo + 1));
}

static double hash_unit(uint64_t h) { return (double)(h >> 11) * 0x1.0p-53; }

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
    tg_ddp_options opt;
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
    d->dims = tg_json_layout(c->opt.compact, dims ? dims : "[]", d->dims_buf, sizeof d->dims_buf);
    d->types =
        tg_json_layout(c->opt.compact, types ? types : "[]", d->types_buf, sizeof d->types_buf);
}

static void init_kernels(tg_ctx *c)
{
    for (int k = 0; k < K_COUNT; k++) {
        const tg_kernel_source *src = &KERNEL_SOURCE[k];
        tg_kernel *kr = &c->kernels[k];
        kr->name = str_of(src->name);
        c->kernel_factor[k] =
            c->opt.slow_match && strstr(src->name, c->opt.slow_match) ? c->opt.slow_factor : 1.0;
        if (c->opt.rename_match && strstr(src->name, c->opt.rename_match))
            kr->name = str_of(c->opt.rename_to);
        kr->blocks_per_sm = str_of(src->blocks_per_sm);
        kr->warps_per_sm = str_of(src->warps_per_sm);
        kr->grid = tg_json_layout(c->opt.compact, src->grid, kr->grid_buf, sizeof kr->grid_buf);
        kr->block = tg_json_layout(c->opt.compact, src->block, kr->block_buf, sizeof kr->block_buf);
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
        tg_fail("internal error: too many ops", NULL);
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
    init_cpu_op(c, &ov->outer, "aten::_foreach_add_", "[[], []]",
                "[\"TensorList\", \"TensorList\"]");
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

static int64_t copy_cpu_max(void)
{
    return OP_PRE_MAX + 4 * NEST_MAX + LAUNCH_DUR_MAX + 2 * NEST_MAX;
}

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
    if (c->opt.world <= 16) {
        n = snprintf(p, cap, "[");
        for (int64_t r = 0; r < c->opt.world; r++)
            n += snprintf(p + n, cap - (size_t)n, r ? ", %" PRId64 : "%" PRId64, r);
        n += snprintf(p + n, cap - (size_t)n, "]");
    } else {
        n = snprintf(p, cap, "[0, ..., %" PRId64 "]", c->opt.world - 1);
    }
    c->group_ranks = (tg_str){p, (uint32_t)n};
}

/* ------------------------------------------------------------------------ */
/* Schedule                                                                  */
/* ------------------------------------------------------------------------ */

static int64_t shared_range(const tg_ctx *c, enum tg_rng_tag tag, int64_t step, uint64_t a,
                            int64_t lo, int64_t hi)
{
    return hash_range(rng_hash(c->opt.seed, tag, NO_RANK, (uint64_t)step, a, 0), lo, hi);
}

/* D_r(s,k): the rank's compute time before collective k. */
static int64_t rank_phase_duration(const tg_ctx *c, int64_t rank, int64_t step, int k, int64_t base)
{
    double u = hash_unit(rng_hash(c->opt.seed, TAG_RANK_JITTER, (uint64_t)rank, (uint64_t)step,
                                  (uint64_t)k, 0));
    double d = (double)base * c->opt.factor[rank] * (1.0 + RANK_JITTER * (2.0 * u - 1.0));
    return (int64_t)llround(d);
}

/* M(s,k): latest arrival over ALL ranks, not only the ones written now. */
static int64_t max_phase_duration(const tg_ctx *c, int64_t step, int k, int64_t base)
{
    if (c->max_phase_dur)
        return c->max_phase_dur[step * NUM_COLLECTIVES + k];
    int64_t m = 0;
    for (int64_t r = 0; r < c->opt.world; r++)
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
        double u = hash_unit(rng_hash(c->opt.seed, TAG_COMM, NO_RANK, (uint64_t)s, (uint64_t)k, 0));
        pl->comm_dur[k] = (int64_t)llround(COMM_BASE_US * (0.9 + 0.2 * u));
        pl->phase_gap[k] = shared_range(c, TAG_PHASE_GAP, s, (uint64_t)k, 2, 6);
        bool overlap = shared_range(c, TAG_OVERLAP, s, (uint64_t)k, 0, 1) == 0;
        pl->overlap_n[k] =
            overlap ? (int)shared_range(c, TAG_OVERLAP, s, (uint64_t)k + 100, 1, 3) : 0;
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
    int64_t *table = tg_calloc((size_t)c->steps * NUM_COLLECTIVES, sizeof *table);
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
    tg_writer_make_room(w);
    if (w->events++ > 0)
        tg_template_write(w, &c->tpl[TPL_SEPARATOR], NULL);
    tg_template_write(w, &c->tpl[id], args);
}

static int64_t cpu_range(tg_rank_state *st, int64_t lo, int64_t hi)
{
    st->cpu_draws++;
    return hash_range(tg_mix64(st->cpu_key + st->cpu_draws * UINT64_C(0x9e3779b97f4a7c15)), lo, hi);
}

static int64_t new_id(tg_rank_state *st) { return st->next_id++; }

static void emit_annotation(tg_ctx *c, const tg_rank_state *st, const char *cat, tg_str name,
                            int64_t ts, int64_t dur, int64_t ext)
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
    tg_fail("internal error: CPU fell behind the GPU schedule: ", detail);
}

/* Where a GPU item may run: not before `ready`; `exact` marks items of the
 * shared schedule, which must not be delayed by the CPU. */
typedef struct {
    int64_t ready, dur;
    bool exact;
} tg_gpu_slot;

static int64_t gpu_start(tg_rank_state *st, int64_t launch_end, tg_gpu_slot slot)
{
    int64_t start =
        max64(launch_end + cpu_range(st, LAUNCH_JITTER_MIN, LAUNCH_JITTER_MAX), slot.ready);
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
                 AI(BUCKET_NELEMS), AI(c->opt.world), AS(c->group_ranks), AS(c->nccl_inner.dims),
                 AS(c->nccl_inner.types)});
    emit_launch(c, st, "cudaLaunchKernel", CBID_LAUNCH, launch_ts, launch_end, inner_id,
                STREAM_COMM, ts);
    const tg_kernel *kr = &c->kernels[K_NCCL_ALLREDUCE];
    emit(c, TPL_NCCL_KERNEL,
         (tg_arg[]){AS(kr->name), AI(STREAM_COMM), AI(ts), AI(dur), AI(STREAM_COMM), AI(inner_id),
                 AI(kr->regs), AI(kr->smem), AS(kr->blocks_per_sm), AS(kr->warps_per_sm),
                 AS(kr->grid), AS(kr->block), AI(kr->occupancy), AI(BUCKET_NELEMS),
                 AI(BUCKET_NELEMS), AI(c->opt.world), AS(c->group_ranks)});
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
        double q = 0.05 + 0.10 * hash_unit(rng_hash(c->opt.seed, TAG_OVERLAP, NO_RANK,
                                                     (uint64_t)st->step, key + 300, 0));
        int64_t dur = (int64_t)llround((double)pl->comm_dur[k] * q * c->opt.factor[st->rank]);
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
    st->cpu_key = rng_hash(c->opt.seed, TAG_CPU, (uint64_t)st->rank, (uint64_t)st->step, 0, 0);
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

static void write_metadata(tg_ctx *c, const tg_rank_state *st, int64_t trace_start,
                           int64_t trace_end)
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
    tg_template_write(w, &c->tpl[TPL_HEADER], (tg_arg[]){AI(rank), AI(c->opt.world)});
    int64_t start = c->origin;
    tg_step_plan pl;
    for (int64_t s = 0; s < nsteps; s++) {
        st.step = s;
        plan_step(c, rank, s, start, &pl);
        write_step(c, &st, &pl);
        start = pl.next_start;
    }
    write_metadata(c, &st, c->origin - 50, start + 50);
    tg_writer_make_room(w);
    tg_template_write(w, &c->tpl[TPL_TRAILER], NULL);
    return st.next_id - 1 - id_offset;
}

/* Bytes of rank 0's trace with `nsteps` steps, formatted but discarded. */
static double measure_trace(tg_ctx *c, int64_t nsteps, int64_t id_offset, int64_t *ids_used)
{
    tg_writer_reset(&c->out, SINK_DISCARD);
    int64_t ids = write_trace(c, 0, nsteps, id_offset);
    tg_writer_flush(&c->out);
    if (ids_used)
        *ids_used = ids;
    return (double)c->out.total;
}

/* Number of steps whose file size is closest to --size-mb.  Every step runs
 * the same op program, so bytes/step is nearly constant; only the growing
 * ids add digits, hence the second sample with ids offset to mid-run. */
static int64_t choose_steps(tg_ctx *c)
{
    if (c->opt.steps_opt > 0)
        return c->opt.steps_opt;
    double target = c->opt.size_mb * BYTES_PER_MB;
    double fixed = measure_trace(c, 0, 0, NULL);
    int64_t ids = 0;
    double per_step = (measure_trace(c, SAMPLE_STEPS, 0, &ids) - fixed) / SAMPLE_STEPS;
    double k0 = (target - fixed) / per_step;
    int64_t mid_ids = k0 > 2 ? (int64_t)(k0 / 2) * (ids / SAMPLE_STEPS) : 0;
    per_step = (measure_trace(c, SAMPLE_STEPS, mid_ids, NULL) - fixed) / SAMPLE_STEPS;
    int64_t k = (int64_t)llround((target - fixed) / per_step);
    return max64(MIN_STEPS, k);
}

/* mkdir -p */
static void make_dirs(const char *path)
{
    size_t n = strlen(path);
    char *buf = tg_calloc(n + 1, 1);
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
    tg_fail("cannot create directory ", detail);
}
}

static void write_rank_file(tg_ctx *c, int64_t rank)
{
    size_t n = strlen(c->opt.outdir) + 96;
    char *path = tg_calloc(n, 1);
    tg_nodes_trace_path(path, n, c->opt.outdir, rank, c->opt.ranks_per_node, c->opt.gzip);
    if (!tg_writer_open_file(&c->out, path, c->opt.gzip)) {
        char detail[600];
        snprintf(detail, sizeof detail, "'%s': %s", path, strerror(errno));
        tg_fail("cannot open ", detail);
    }
    int64_t origin = c->origin;
    c->origin += c->opt.clock_offset_us[rank];
    write_trace(c, rank, c->steps, 0);
    c->origin = origin;
    if (!tg_writer_close(&c->out)) {
        char detail[600];
        snprintf(detail, sizeof detail, "'%s'", path);
        tg_fail("write failed: ", detail);
    }
    free(path);
}

void tracegen_ddp_write(const tg_ddp_options *opt)
{
    tg_ctx *c = tg_calloc(1, sizeof *c);
    c->opt = *opt;
    for (int t = 0; t < TPL_COUNT; t++)
        tg_template_compile(&c->tpl[t], TEMPLATE_SOURCE[t], c->opt.compact);
    init_kernels(c);
    build_program(c);
    derive_lead_base(c);
    init_group_ranks(c);
    c->origin = ORIGIN_US + (int64_t)(rng_hash(c->opt.seed, TAG_ORIGIN, NO_RANK, 0, 0, 0) % 500000);
    c->out.buf = tg_calloc(OUT_BUF_SIZE, 1);

    c->steps = choose_steps(c);
    build_max_table(c);
    make_dirs(c->opt.outdir);
    for (int64_t r = c->opt.first_rank; r < c->opt.world; r++)
        write_rank_file(c, r);

    free(c->out.buf);
    free(c->max_phase_dur);
    free(c);
}
