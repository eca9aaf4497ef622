/* test_op_flops.c: the FLOP and byte conventions of model/op_flops.c, one
 * closed form per op family (docs/definitions.md, Op performance), and
 * the peak table and --gpu-spec reader of model/gpu_peaks.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "model/gpu_peaks.h"
#include "model/op_flops.h"
#include "unit.h"

#define BF16_2 "[\"c10::BFloat16\", \"c10::BFloat16\"]"

static hta_op_work work(const char *name, const char *dims, const char *types,
                        const char *concrete)
{
    return hta_op_work_of(name, dims, types, concrete);
}

/* 2MNK, not HTA #124's 2(K-1)MN; bytes (MK + KN + MN) x element size. */
static void test_gemm_is_2mnk(void)
{
    hta_op_work w = work("aten::mm", "[[64, 128], [128, 256]]", BF16_2, "[\"\", \"\"]");
    CHECK(w.kind == HTA_OP_GEMM && w.sized, "mm sized");
    CHECK(w.flops == 2.0 * 64 * 256 * 128, "mm flops %g", w.flops);
    CHECK(w.flops != 2.0 * 127 * 64 * 256, "not 2(K-1)MN");
    CHECK(w.bytes == (64.0 * 128 + 128 * 256 + 64 * 256) * 2, "mm bytes %g", w.bytes);
    CHECK(w.dtype == HTA_DTYPE_BF16, "mm dtype bf16");

    w = work("aten::addmm", "[[256], [64, 128], [128, 256], [], []]",
             "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]",
             "[\"\", \"\", \"\", \"1\", \"1\"]");
    CHECK(w.flops == 2.0 * 64 * 256 * 128 + 64 * 256, "addmm adds MN for the bias: %g", w.flops);
    CHECK(w.bytes == (64.0 * 128 + 128 * 256 + 64 * 256 + 256) * 2, "addmm bytes %g", w.bytes);

    w = work("aten::bmm", "[[4, 64, 128], [4, 128, 256]]", "[\"float\", \"float\"]", "");
    CHECK(w.flops == 4 * 2.0 * 64 * 256 * 128, "bmm is batch x 2MNK: %g", w.flops);
    CHECK(w.bytes == 4 * (64.0 * 128 + 128 * 256 + 64 * 256) * 4, "bmm bytes %g", w.bytes);
    CHECK(w.dtype == HTA_DTYPE_FP32, "bmm dtype fp32");

    w = work("aten::baddbmm", "[[4, 64, 256], [4, 64, 128], [4, 128, 256], [], []]",
             "[\"c10::Half\", \"c10::Half\", \"c10::Half\", \"Scalar\", \"Scalar\"]", "");
    CHECK(w.flops == 4 * (2.0 * 64 * 256 * 128 + 64 * 256), "baddbmm %g", w.flops);
    CHECK(w.dtype == HTA_DTYPE_FP16, "baddbmm dtype fp16");

    w = work("aten::linear", "[[2, 32, 128], [256, 128], [256]]",
             "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]", "");
    CHECK(w.flops == 2.0 * 64 * 256 * 128 + 64 * 256, "linear: M over the leading dims %g",
          w.flops);
    w = work("aten::matmul", "[[2, 32, 128], [128, 256]]", BF16_2, "");
    CHECK(w.flops == 2.0 * 64 * 256 * 128, "matmul %g", w.flops);
    w = work("aten::matmul", "[[3, 32, 128], [3, 128, 256]]", BF16_2, "");
    CHECK(w.flops == 3 * 2.0 * 32 * 256 * 128, "batched matmul %g", w.flops);
}

static void test_unsized_ops_are_counted_not_guessed(void)
{
    hta_op_work w = work("aten::mm", "", "", "");
    CHECK(w.kind == HTA_OP_GEMM && !w.sized && w.flops == 0, "mm without Input Dims: unsized");
    w = work("aten::mm", "[[64, 128], [64, 256]]", BF16_2, "");
    CHECK(!w.sized, "mm with mismatched K: unsized");
    w = work("aten::mm", "[[64, 128], [128, 256]]", "[\"c10::Weird\", \"c10::Weird\"]", "");
    CHECK(!w.sized, "unknown element type: unsized");
    w = work("aten::_scaled_mm", "[[64, 128], [128, 256]]", BF16_2, "");
    CHECK(w.kind == HTA_OP_GEMM && !w.sized, "_scaled_mm: a GEMM without a layout");
    w = work("aten::matmul", "[[128], [128, 256]]", BF16_2, "");
    CHECK(!w.sized, "vector matmul: unsized");
    CHECK(hta_op_kind_of("aten::add") == HTA_OP_OTHER, "add is no GEMM");
    CHECK(hta_op_kind_of("record_param_comms") == HTA_OP_OTHER, "comms is no GEMM");
    CHECK(hta_op_kind_of("## forward ##") == HTA_OP_OTHER, "annotation is no op");
}

/* 2 x prod(weight dims but the first) x prod(output dims); the output
 * shape from stride, padding, dilation. */
static void test_convolution(void)
{
    /* A ResNet layer of the MI300X trace: 3x3, stride 2, padding 1. */
    const char *dims = "[[10, 256, 14, 14], [512, 256, 3, 3], [], [], [], [], [], [], []]";
    const char *types = "[\"c10::BFloat16\", \"c10::BFloat16\", \"\", \"ScalarList\", "
                        "\"ScalarList\", \"ScalarList\", \"Scalar\", \"ScalarList\", \"Scalar\"]";
    double flops = 2.0 * 256 * 3 * 3 * (10 * 512 * 7 * 7);
    double bytes = (10.0 * 256 * 14 * 14 + 512 * 256 * 9 + 10 * 512 * 7 * 7) * 2;
    hta_op_work w = work("aten::convolution", dims, types,
                         "[\"\", \"\", \"\", \"[2, 2]\", \"[1, 1]\", \"[1, 1]\", \"False\", "
                         "\"[0, 0]\", \"1\"]");
    CHECK(w.kind == HTA_OP_CONV && w.sized, "convolution sized");
    CHECK(w.flops == flops, "convolution flops %g, want %g", w.flops, flops);
    CHECK(w.bytes == bytes, "convolution bytes %g, want %g", w.bytes, bytes);
    /* miopen_convolution lists padding before stride. */
    w = work("aten::miopen_convolution", dims, types,
             "[\"\", \"\", \"\", \"[1, 1]\", \"[2, 2]\", \"[1, 1]\", \"1\", \"False\", "
             "\"False\"]");
    CHECK(w.flops == flops, "miopen_convolution flops %g", w.flops);

    /* Depthwise: groups are in the weight's second dim. */
    w = work("aten::conv2d", "[[1, 64, 8, 8], [64, 1, 3, 3], [64], [], [], [], []]",
             "[\"float\", \"float\", \"float\"]",
             "[\"\", \"\", \"\", \"[1, 1]\", \"[1, 1]\", \"[1, 1]\", \"64\"]");
    CHECK(w.flops == 2.0 * 9 * 64 * 64 + 64 * 64, "depthwise with bias %g", w.flops);
    /* Stride 2 without padding: (9 - 2 - 1) / 2 + 1 = 4. */
    w = work("aten::conv2d", "[[1, 3, 9, 9], [4, 3, 3, 3], [], [], [], [], []]",
             "[\"float\", \"float\"]", "[\"\", \"\", \"\", \"[2]\", \"[0]\", \"[1]\", \"1\"]");
    CHECK(w.flops == 2.0 * 27 * (4 * 4 * 4), "strided %g", w.flops);

    /* Backward: each of the input's and the weight's gradients costs the
     * forward's FLOPs (output_mask says which are computed). */
    const char *bdims = "[[10, 512, 7, 7], [10, 512, 7, 7], [512, 512, 3, 3], [], [], [], [], "
                        "[], [], [], []]";
    const char *btypes = "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]";
    double fwd = 2.0 * 512 * 9 * (10 * 512 * 49);
    w = work("aten::convolution_backward", bdims, btypes,
             "[\"\", \"\", \"\", \"[0]\", \"[1, 1]\", \"[1, 1]\", \"[1, 1]\", \"False\", "
             "\"[0, 0]\", \"1\", \"[True, True, False]\"]");
    CHECK(w.sized && w.flops == 2 * fwd, "backward: both gradients %g, want %g", w.flops, 2 * fwd);
    w = work("aten::convolution_backward", bdims, btypes,
             "[\"\", \"\", \"\", \"[0]\", \"[1, 1]\", \"[1, 1]\", \"[1, 1]\", \"False\", "
             "\"[0, 0]\", \"1\", \"[False, True, False]\"]");
    CHECK(w.flops == fwd, "backward: weight gradient only %g", w.flops);
    w = work("aten::conv2d", dims, types, "[\"\", \"\", \"\", \"[2, 2]\", \"[1, 1]\"]");
    CHECK(w.flops == flops, "absent dilation and groups: PyTorch's defaults: %g", w.flops);
    w = work("aten::convolution", dims, types, "[\"\", \"\", \"\", \"[2, 2]\", \"[1, 1]\"]");
    CHECK(!w.sized, "transposed not recorded: unsized");
    w = work("aten::conv2d", "[[1, 3, 9, 9], [4, 3, 3, 3], [], [], [], [], []]",
             "[\"float\", \"float\"]", "[\"\", \"\", \"\", \"[1, 1]\", \"same\", \"[1]\", \"1\"]");
    CHECK(!w.sized, "padding='same' is not sized");
}

/* B x H x (2 N_q N_kv d_qk + 2 N_q N_kv d_v), halved when causal. */
static void test_attention_causal_halving(void)
{
    const char *dims = "[[2, 8, 1024, 64], [2, 8, 1024, 64], [2, 8, 1024, 64], [], [], [], []]";
    const char *types = "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]";
    double full = 2.0 * 8 * (2.0 * 1024 * 1024 * 64 + 2.0 * 1024 * 1024 * 64);
    hta_op_work w = work("aten::_scaled_dot_product_flash_attention", dims, types,
                         "[\"\", \"\", \"\", \"0.\", \"False\", \"False\", \"\"]");
    CHECK(w.kind == HTA_OP_ATTENTION && w.flops == full, "non-causal %g, want %g", w.flops, full);
    CHECK(w.bytes == 4 * 2.0 * 8 * 1024 * 64 * 2, "q, k, v read, o written: %g", w.bytes);
    w = work("aten::_scaled_dot_product_flash_attention", dims, types,
             "[\"\", \"\", \"\", \"0.\", \"True\", \"False\", \"\"]");
    CHECK(w.flops == full / 2, "causal halves (torch.utils.flop_counter does not): %g", w.flops);
    w = work("aten::_scaled_dot_product_flash_attention", dims, types, "");
    CHECK(!w.sized, "causal flag not recorded: unsized, not guessed");
    w = work("aten::_scaled_dot_product_flash_attention",
             "[[2, 8, 512, 64], [2, 8, 1024, 64], [2, 8, 1024, 64]]", types,
             "[\"\", \"\", \"\", \"0.\", \"True\", \"False\", \"\"]");
    CHECK(!w.sized, "causal with N_q != N_kv: unsized");
    /* _flash_attention_forward takes (B, N, H, d) and is_causal 9th. */
    w = work("aten::_flash_attention_forward",
             "[[2, 1024, 8, 64], [2, 1024, 8, 64], [2, 1024, 8, 64]]", types,
             "[\"\", \"\", \"\", \"\", \"\", \"1024\", \"1024\", \"0.\", \"True\"]");
    CHECK(w.flops == full / 2, "_flash_attention_forward %g", w.flops);
    /* xformers' kernels: (B, N, H, d), custom_mask_type 1 is causal. */
    w = work("aten::_efficient_attention_forward",
             "[[2, 1024, 8, 64], [2, 1024, 8, 64], [2, 1024, 8, 64], [], [], [], [], []]", types,
             "[\"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"0.\", \"1\", \"True\"]");
    CHECK(w.sized && w.flops == full / 2, "_efficient_attention_forward causal %g", w.flops);
    w = work("aten::_efficient_attention_forward",
             "[[2, 1024, 8, 64], [2, 1024, 8, 64], [2, 1024, 8, 64], [], [], [], [], []]", types,
             "[\"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"0.\", \"0\", \"True\"]");
    CHECK(w.flops == full, "_efficient_attention_forward mask type 0 %g", w.flops);
    w = work("aten::_scaled_dot_product_efficient_attention", dims, types,
             "[\"\", \"\", \"\", \"\", \"True\", \"0.\", \"False\"]");
    CHECK(w.flops == full, "efficient attention %g", w.flops);
    /* Flash backward: dV, dP, dQ, dK and QK^T again: 2.5x the forward. */
    w = work("aten::_scaled_dot_product_flash_attention_backward",
             "[[2, 8, 1024, 64], [2, 8, 1024, 64], [2, 8, 1024, 64], [2, 8, 1024, 64]]",
             "[\"c10::BFloat16\", \"c10::BFloat16\"]",
             "[\"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"0.\", \"False\"]");
    CHECK(w.flops == 2.5 * full, "flash backward %g, want %g", w.flops, 2.5 * full);
}

static void test_peaks(void)
{
    hta_gpu_peaks p;
    CHECK(hta_gpu_peaks_builtin("AMD Instinct MI300X", &p) == 0, "MI300X known");
    CHECK(p.tflops[HTA_DTYPE_BF16] == 1307.4 && p.memory_tbps == 5.3, "MI300X dense bf16");
    CHECK(hta_gpu_peaks_builtin("NVIDIA H100 80GB HBM3", &p) == 0 &&
              p.tflops[HTA_DTYPE_BF16] == 989.5 && p.memory_tbps == 3.35,
          "H100 SXM: dense, not the sparse 1979");
    CHECK(hta_gpu_peaks_builtin("NVIDIA H100 PCIe", &p) == 0 && p.tflops[HTA_DTYPE_BF16] == 756,
          "H100 PCIe before the SXM entry");
    CHECK(hta_gpu_peaks_builtin("NVIDIA A100-SXM4-80GB", &p) == 0 && p.memory_tbps == 2.039,
          "A100 SXM4 80GB");
    CHECK(isnan(p.tflops[HTA_DTYPE_FP8]), "A100 has no fp8");
    CHECK(hta_gpu_peaks_builtin("Tesla V100-SXM2-32GB", &p) == -1 &&
              isnan(p.tflops[HTA_DTYPE_BF16]) && isnan(p.memory_tbps),
          "unknown device: NaN peaks");

    char path[] = "/tmp/hta_gpu_spec_XXXXXX";
    int fd = mkstemp(path);
    const char *spec = "{\"name\": \"MI300X\", \"mem_bw_gbps\": 5300, \"max_achievable_tflops\": "
                       "{\"matrix_fp16\": 654, \"matrix_bf16\": 708, \"vector_fp32\": 81}}";
    CHECK(fd >= 0 && write(fd, spec, strlen(spec)) == (ssize_t)strlen(spec), "spec written");
    close(fd);
    hta_error err = {0};
    CHECK(hta_gpu_spec_read(path, &p, &err) == 0, "spec read: %s", err.text);
    CHECK(p.tflops[HTA_DTYPE_BF16] == 708 && p.tflops[HTA_DTYPE_FP16] == 654 &&
              p.memory_tbps == 5.3 && strcmp(p.name, "MI300X") == 0,
          "TraceLens's format: matrix rates and mem_bw_gbps");
    CHECK(isnan(p.tflops[HTA_DTYPE_FP32]), "vector rates are not matrix peaks");
    fd = open(path, O_WRONLY | O_TRUNC);
    CHECK(fd >= 0 && write(fd, "{oops", 5) == 5, "bad spec written");
    close(fd);
    CHECK(hta_gpu_spec_read(path, &p, &err) == -1 && strstr(err.text, path), "bad JSON: %s",
          err.text);
    unlink(path);
    CHECK(hta_gpu_spec_read(path, &p, &err) == -1 && strstr(err.text, path),
          "missing file named: %s", err.text);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    test_gemm_is_2mnk();
    test_unsized_ops_are_counted_not_guessed();
    test_convolution();
    test_attention_causal_halving();
    test_peaks();
    return unit_finish();
}
