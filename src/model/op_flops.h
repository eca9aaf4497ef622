/* model/op_flops.h: the floating-point operations and memory traffic of
 * one call of a GEMM, convolution or attention op, from the arguments the
 * profiler records with it (docs/definitions.md, Op performance).
 *
 * The formulas are TraceLens's performance models: a GEMM does 2MNK (not
 * HTA #124's 2(K-1)MN) plus MN for a bias and moves (MK + KN + MN) elements
 * plus N for a bias; a convolution 2 x prod(weight dims but the first) x
 * prod(output dims) plus the output for a bias; attention B x H_q x
 * (2 N_q N_kv d_qk + 2 N_q N_kv d_v), halved when causal with N_q = N_kv.
 * The op's name picks the argument layout.  An op of these families whose
 * layout is unknown or whose arguments do not fit (absent, inconsistent,
 * a causal flag not recorded) is "unsized": its kind is known, its work is
 * not guessed. */
#ifndef HTA_OP_FLOPS_H
#define HTA_OP_FLOPS_H

typedef enum hta_op_kind {
    HTA_OP_OTHER,              /* not a GEMM, convolution or attention op */
    HTA_OP_GEMM,
    HTA_OP_CONV,
    HTA_OP_ATTENTION,
} hta_op_kind;

/* Element types with a peak of their own (model/gpu_peaks.h). */
typedef enum hta_dtype {
    HTA_DTYPE_UNKNOWN,
    HTA_DTYPE_FP8,
    HTA_DTYPE_BF16,
    HTA_DTYPE_FP16,
    HTA_DTYPE_TF32,            /* never read from a trace: a --gpu-spec key */
    HTA_DTYPE_FP32,
    HTA_DTYPE_FP64,
    HTA_DTYPE_INT8,
    HTA_N_DTYPES
} hta_dtype;

typedef struct hta_op_work {
    hta_op_kind kind;
    int sized;                 /* flops and bytes hold the call's work */
    double flops, bytes;
    hta_dtype dtype;           /* of the first matrix operand */
} hta_op_work;

/* The family of an op name: HTA_OP_OTHER for most ops.  Names of the
 * families that no layout here sizes (aten::_scaled_mm, a custom
 * attention) still get their kind, so that they are counted as unsized. */
hta_op_kind hta_op_kind_of(const char *name);

/* Whether the op's work depends on its Concrete Inputs (convolutions
 * and attention: strides, paddings, the causal flag), which the reader
 * then keeps with its context (model/cpu_context.h). */
int hta_op_needs_concrete_inputs(const char *name);

/* The work of one call from its Input Dims, Input type and Concrete
 * Inputs (JSON texts as recorded; "" when absent). */
hta_op_work hta_op_work_of(const char *name, const char *input_dims, const char *input_type,
                           const char *concrete_inputs);

/* The element type a profiler's Input type names ("c10::BFloat16",
 * "float", ...), and its size in bytes (0 when unknown). */
hta_dtype hta_dtype_of(const char *type_name, int *element_bytes);
/* "bf16", "fp32", ...; "" for unknown. */
const char *hta_dtype_name(hta_dtype d);

#endif
