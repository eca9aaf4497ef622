/* tracegen_kernels.h: the GPU kernels hta-tracegen's traces launch, with
 * the names and launch attributes that torch.profiler records for them on
 * an A100 (tools/tracegen_ddp.c uses them; tracegen_kernels.c lists them). */
#ifndef HTA_TRACEGEN_KERNELS_H
#define HTA_TRACEGEN_KERNELS_H

typedef enum {
    K_SGEMM_TN,
    K_SGEMM_NN,
    K_CUTLASS_GEMM,
    K_RELU,
    K_THRESHOLD,
    K_ADD,
    K_REDUCE_SUM,
    K_LOG_SOFTMAX,
    K_LOG_SOFTMAX_BWD,
    K_NLL,
    K_NLL_BWD,
    K_FILL,
    K_MUL,
    K_FOREACH_ADD,
    K_NCCL_ALLREDUCE,
    K_COUNT
} tg_kernel_id;

/* A kernel's name and the args Kineto records with it, as text. */
typedef struct {
    const char *name;
    int regs, smem;
    const char *blocks_per_sm, *warps_per_sm, *grid, *block;
    int occupancy;
} tg_kernel_source;

extern const tg_kernel_source KERNEL_SOURCE[K_COUNT];

#endif
